/* W5.1 The three files of the kernel */
/* attention-kernels.h: what the three files of the attention kernel
   share (internal: not installed, not exported from librope.so) */
#ifndef ROPE_ATTENTION_KERNELS_H
#define ROPE_ATTENTION_KERNELS_H
#include "attention.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define ATT_X86 1
#else
#define ATT_X86 0
#endif
#define ATT_HIDDEN __attribute__((visibility("hidden")))
/* 5.5 Tiling */
#define ATT_BK ROPE_ATTENTION_BK
#define ATT_ROWS ROPE_ATTENTION_ROWS
#define ATT_SPLIT_MAX ROPE_ATTENTION_SPLIT_MAX
#define ATT_IB ROPE_ATTENTION_ITEM_BLOCKS
#define ATT_MIB ((size_t)1 << 20)
/* 5.6 Fused RoPE and grouped heads */
#define ATT_VECTORIZE __attribute__((optimize("tree-vectorize")))
/* W5.1 The three files of the kernel */
#define T512 __attribute__((target("avx512f,avx512dq,fma")))
#define T256 __attribute__((target("avx2,fma")))
#define TBF16 __attribute__((target("avx512f,avx512bf16")))
#define ATT_INLINE __attribute__((always_inline)) inline
/* W5b.2 The code of the bfloat16 path */
#if defined(__linux__)
#define ATT_AMX 1
#else
#define ATT_AMX 0
#endif
#define TAMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16")))
typedef void (*att_s16_fn)(float *S, const uint16_t *Q,
                           const uint16_t *Kt, int M, int dp, float c);
typedef void (*att_pv16_fn)(float *U, const uint16_t *P,
                            const uint16_t *Vt, const float *alpha,
                            int M, int dp);
typedef void (*att_pair16_fn)(uint16_t *out, const float *even,
                              const float *odd, int n);
typedef float (*att_row16_fn)(uint16_t *out, const float *x, int n);
typedef struct {
    att_s16_fn s; att_pv16_fn pv; att_pair16_fn pair; att_row16_fn row;
    int wide; /* 1: the AVX2 emulation, float kernels on widened data */
} att_bf16_kernels;
/* 5.7 The micro-kernels */
typedef void (*att_s_fn)(float *S, const float *Q, const float *Kt,
                         int M, int dp);
typedef void (*att_sm_fn)(float *S, int M, const int *nvalid,
                          float *m, float *l, float *alpha);
typedef void (*att_pv_fn)(float *U, const float *P, const float *V,
                          const float *alpha, int M, int dp);
typedef void (*att_rot_fn)(float *restrict out,
                           const float *restrict x,
                           const float *restrict c,
                           const float *restrict s, int d,
                           rope_pairing pr);
typedef void (*att_st_fn)(float *S, const float *Q, const float *Kt,
                          const float *V, float *U, int M, int dp,
                          const int *nvalid, float *m, float *l,
                          float *alpha);
typedef void (*att_sw_fn)(float *S, const float *Q, const float *Kt,
                          int M, int dp, float c, int flush);
typedef void (*att_pvw_fn)(float *U, const float *P, const float *V,
                           const float *alpha, int M, int dp, int flush);
typedef struct {
    att_s_fn s; att_sm_fn sm; att_pv_fn pv; att_rot_fn rot;
    att_st_fn st; /* the three in one step, or NULL */
    att_sw_fn sw; att_pvw_fn pvw; /* AVX2: widened bfloat16, or NULL */
} att_kernels;
/* W5.3 The other micro-kernels */
typedef struct {
    int step, taylor, ib, rows, pack, reduce, six, prefetch, spin;
} att_tuning;
/* W5.5 The workspace of a call */
typedef struct att_job {
    const rope_attention_params *p;
    const float *q, *k, *v;
    float *out;
    int d, dp, rep, hb, nhb, ntk, bq, nqb, nib, M, nt;
    float qscale;
    att_kernels ker;
    int nsplit, tiles_per_split;
    float *part; /* decode partial states */
    const rope_kv_cache *cache; /* or NULL: pack k and v */
    int pass;
    long n_items;
    atomic_long next, done;
    atomic_int fail, bad;
    int bf16; /* kv_dtype is ROPE_DTYPE_BF16 */
    float qs16; /* the scale c, applied to bf16 scores */
    att_bf16_kernels k16;
    rope_kv_cache packed; /* the call's packed tiles, if it made them */
} att_job;
typedef struct {
    float *Q, *U, *S, *m, *l, *alpha, *tmp, *Kt, *Vt;
    int *nvalid;
    const float *kt, *vt; /* the tile in use: Kt, Vt or the cache's */
    int M, d; /* the shape it was made for */
    float *part; /* the caller's decode partial states */
    size_t part_n;
    /* W5b.2 The code of the bfloat16 path */
    uint16_t *Q16, *Kt16, *Vt16, *P16; /* bf16 operands */
    float *Kw, *Vw; /* the AVX2 emulation's widened tiles */
    int e16q[ATT_IB], e16k, e16v; /* their smallest exponents */
    /* W5.5 The workspace of a call */
    float *lsave;
    float *pack; size_t pack_n; int pack_d; /* packed tiles, their d */
} att_ws;
/* W5.1 The three files of the kernel */
ATT_HIDDEN void att_rotate_row(float *restrict out,
                               const float *restrict x,
                               const float *restrict c,
                               const float *restrict s, int d,
                               rope_pairing pr);
ATT_HIDDEN int att_check(const rope_attention_params *p);
ATT_HIDDEN void att_simd_kernels(rope_simd s, att_kernels *k);
ATT_HIDDEN const char *att_env_bf16(void);
ATT_HIDDEN extern att_tuning att_tune;
/* W5.6.1 The shape of a job, in a file of its own */
enum { ATT_TILE_SKIPPED, ATT_TILE_PARTIAL, ATT_TILE_FULL };
ATT_HIDDEN long att_last_key(const att_job *J, long i);
ATT_HIDDEN int att_tile_kind(const att_job *J, long q0, int nq, int t);
ATT_HIDDEN void att_item_blocks(const att_job *J, long it, int ib,
                                int *b0, int *b1);
ATT_HIDDEN void att_plan_shape(att_job *J, const rope_attention_params *p,
                               int ib);
/* W5b.2 The code of the bfloat16 path */
ATT_HIDDEN void att_plan_bf16(att_job *J, const rope_attention_params *p);
ATT_HIDDEN void att_round_q_bf16(att_job *J, att_ws *w, int nb);
ATT_HIDDEN void att_pack_tile_bf16(att_job *J, att_ws *w);
ATT_HIDDEN void att_tile_block_bf16(att_job *J, att_ws *w, size_t at,
                                    const int *nv);
ATT_HIDDEN int att_has_amx(void);
ATT_HIDDEN int att_has_avx512bf16(void);
#if ATT_X86 && ATT_AMX
ATT_HIDDEN TAMX void att_amx_config(int mr, int half);
#endif
/* W5.1 The three files of the kernel */
#if ATT_X86
#include <float.h>
/* W5.3 The other micro-kernels */
static T256 ATT_INLINE __m256 att_ftz256(__m256 x)
{
    const __m256 mag = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX));
    __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(x, mag),
                                _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ);
    return _mm256_andnot_ps(_mm256_and_ps(tiny, mag), x);
}
static T256 ATT_INLINE __m256 att_ftz_if256(__m256 x, const int flush)
{
    return flush ? att_ftz256(x) : x;
}
/* W5.1 The three files of the kernel */
#endif
#endif
