/* 5.2 The interface */
/* attention.h: chapter 5: the tiled attention kernel */
#ifndef ROPE_ATTENTION_H
#define ROPE_ATTENTION_H
#include <stddef.h>
#include <stdint.h>
#include "rotary.h"
typedef enum {
    ROPE_SIMD_AUTO, /* best the CPU has, or $ROPE_SIMD */
    ROPE_SIMD_SCALAR, /* portable C */
    ROPE_SIMD_AVX2, /* AVX2 + FMA, 8 floats per vector */
    ROPE_SIMD_AVX512 /* AVX-512F, 16 floats per vector */
} rope_simd;

typedef enum {
    ROPE_DTYPE_F32, /* float32 throughout */
    ROPE_DTYPE_BF16 /* K, V (and Q) rounded to bfloat16 */
} rope_dtype;

typedef struct rope_attention_params {
    int batch, seq_len, kv_len; /* seq_len <= kv_len */
    int n_heads, n_kv_heads; /* n_heads % n_kv_heads == 0 */
    int head_dim;
    long start_pos; /* n_0: key j sits at n_0 + j */
    int causal; /* 1: MiniMind's mask */
    const float *freqs_cos; /* [table_len, head_dim] or NULL */
    const float *freqs_sin; /* (NULL: no RoPE) */
    long table_len; /* >= start_pos + kv_len */
    rope_pairing pairing;
    int keys_rotated; /* 1: k is a cache of rotated keys */
    int n_threads; /* < 1 means 1 */
    rope_simd simd;
    float *lse; /* out or NULL: [batch, seq_len, n_heads] */
    void (*progress)(void *ctx, long done, long total); /* or NULL */
    void *progress_ctx;
    rope_dtype kv_dtype; /* ROPE_DTYPE_F32 (0) or ROPE_DTYPE_BF16 */
} rope_attention_params;
enum {
    ROPE_ATTENTION_ENOMEM = 7, /* an allocation failed */
    ROPE_ATTENTION_ENONFINITE = 8 /* an output is inf or NaN */
};
/* 5.5 Tiling */
enum {
    ROPE_ATTENTION_BK = 64, /* keys per tile */
    ROPE_ATTENTION_ROWS = 64, /* rows (head, query) per block */
    ROPE_ATTENTION_SPLIT_MAX = 16, /* decode: most key ranges */
    ROPE_ATTENTION_ITEM_BLOCKS = 16, /* prefill: row blocks per item */
    ROPE_ATTENTION_MAX_HEAD_DIM = 1024, /* widest head it tiles */
    ROPE_ATTENTION_WS_MIB = 32, /* all threads' workspaces, at most */
    ROPE_ATTENTION_PART_MIB = 16 /* decode partial states, at most */
};
/* 5.11 A cache of rotated keys */
typedef struct rope_kv_cache {
    int batch, n_kv_heads, head_dim, dp; /* dp: head_dim padded to 16 */
    long len, cap; /* keys held and room for, per head */
    float *tiles; /* [cap / BK][batch * n_kv_heads][K^T, V][dp * BK] */
} rope_kv_cache;
/* 5.2 The interface */
void rope_attention_defaults(rope_attention_params *p);
int rope_attention_naive(float *out, const float *q, const float *k,
                         const float *v,
                         const rope_attention_params *p);
int rope_attention(float *out, const float *q, const float *k,
                   const float *v, const rope_attention_params *p);
size_t rope_attention_workspace_bytes(const rope_attention_params *p);
int rope_simd_available(rope_simd s);
rope_simd rope_simd_resolve(rope_simd want);
const char *rope_simd_name(rope_simd s);
int rope_simd_parse(const char *name, rope_simd *out);
void rope_exp2_vec(float *y, const float *x, int n, rope_simd s);
/* 5.6 Fused RoPE and grouped heads */
int rope_repeat_kv(float *out, const float *x, int batch, int seq_len,
                   int n_kv_heads, int head_dim, int n_rep);
/* 5.11 A cache of rotated keys */
int rope_kv_cache_init(rope_kv_cache *c, int batch, int n_kv_heads,
                       int head_dim, long capacity);
int rope_kv_cache_append(rope_kv_cache *c, const float *k,
                         const float *v, int n,
                         const rope_attention_params *p);
int rope_attention_cached(float *out, const float *q,
                          const rope_kv_cache *c,
                          const rope_attention_params *p);
void rope_kv_cache_free(rope_kv_cache *c);
long rope_attention_allocations(void);
/* W5.3 The other micro-kernels */
double rope_exp2_poly_bound(void); /* bound of eq. attention-exp2 */
/* W5.7 The packing pass */
enum { ROPE_ATTENTION_PACK_MIB = 32 }; /* packed tiles of a prefill */
/* W5.8 The thread pool */
#define ROPE_ATTENTION_SPIN_NS 1000000L /* pool threads spin, then sleep */
/* W5b.2 The code of the bfloat16 path */
const char *rope_bf16_kernels(rope_simd s);
int rope_bf16_native(rope_simd s);
uint16_t rope_bf16_round(float x);
float rope_bf16_to_float(uint16_t h);
int rope_bf16_round_native(uint16_t *out, const float *x, int n);
int rope_bf16_dot(float *z, const uint32_t *a, const uint32_t *b,
                  int n, int how);
int rope_bf16_amx(rope_simd s);
int rope_bf16_amx_dot(float *z, const uint16_t *a, const uint16_t *b,
                      int n);
double rope_bf16_error_bound(int head_dim, long kv_len, double qnorm,
                             double knorm, double vmax);
/* 5.2 The interface */
#endif
