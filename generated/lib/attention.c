/* 5.2 The interface */
/* attention.c: tiled, multithreaded attention with fused RoPE */
#define _POSIX_C_SOURCE 200809L
#include "rope.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define ATT_X86 1
#else
#define ATT_X86 0
#endif
/* 5.5 Tiling */
#define ATT_BK ROPE_ATTENTION_BK
#define ATT_ROWS ROPE_ATTENTION_ROWS
#define ATT_SPLIT_MAX ROPE_ATTENTION_SPLIT_MAX
#define ATT_IB ROPE_ATTENTION_ITEM_BLOCKS
#define ATT_MIB ((size_t)1 << 20)
/* W5.1 The other micro-kernels */
#define ATT_LN2 0.693147180559945309
static const float att_exp2_c[7] = {
    1.0f, 0x1.62e42cp-1f, 0x1.ebfd58p-3f, 0x1.c68912p-5f,
    0x1.3d0b92p-7f, 0x1.46d64ep-10f, 0x1.c54174p-13f
};
static const float att_exp2_t[8] = {
    1.0f, (float)ATT_LN2,
    (float)(ATT_LN2 * ATT_LN2 / 2),
    (float)(ATT_LN2 * ATT_LN2 * ATT_LN2 / 6),
    (float)(ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2 / 24),
    (float)(ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2 / 120),
    (float)(ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2
            * ATT_LN2 / 720),
    (float)(ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2 * ATT_LN2
            * ATT_LN2 * ATT_LN2 / 5040)
};
typedef struct {
    int step, taylor, ib, rows, pack, reduce, six, prefetch, spin;
} att_tuning;
static att_tuning att_tune = { 1, 0, ATT_IB, 1, 1, 1, 1, 1, 1 };
/* 5.3 The reference */
/* rotate x [1, len, heads, d] in place from table row pos0 */
static int att_rotate_tensor(float *x, int len, int heads, int d,
                             long pos0, const rope_attention_params *p)
{
    size_t bytes = sizeof(float) * (size_t)len * heads * d;
    float *twin = malloc(bytes);
    if (!twin) return ROPE_ATTENTION_ENOMEM;
    memcpy(twin, x, bytes);
    rope_apply_rotary_pos_emb(x, twin, p->freqs_cos, p->freqs_sin,
                              1, len, heads, heads, d, pos0,
                              p->pairing);
    free(twin);
    return 0;
}
/* 5.6 Fused RoPE and grouped heads */
#define ATT_VECTORIZE __attribute__((optimize("tree-vectorize")))
static ATT_VECTORIZE void att_rotate_row(
    float *restrict out, const float *restrict x,
    const float *restrict c, const float *restrict s, int d,
    rope_pairing pr)
{
    int h = d / 2;
    if (pr == ROPE_PAIRING_HALF) {
        for (int i = 0; i < h; i++)
            out[i] = x[i] * c[i] + (-x[i + h]) * s[i];
        for (int i = 0; i < h; i++)
            out[i + h] = x[i + h] * c[i + h] + x[i] * s[i + h];
    } else {
        for (int i = 0; i < h; i++) {
            float x0 = x[2 * i], x1 = x[2 * i + 1];
            out[2 * i] = x0 * c[i] + (-x1) * s[i];
            out[2 * i + 1] = x1 * c[i] + x0 * s[i];
        }
    }
}
int rope_repeat_kv(float *out, const float *x, int batch, int seq_len,
                   int n_kv_heads, int head_dim, int n_rep)
{
    if (!out || !x || batch < 1 || seq_len < 1 || n_kv_heads < 1
        || head_dim < 1 || n_rep < 1)
        return 1;
    size_t rows = (size_t)batch * seq_len * n_kv_heads;
    size_t len = sizeof(float) * head_dim;
    /* row t is (b, j, g); copy c goes to head g * n_rep + c */
    for (size_t t = 0; t < rows; t++)
        for (int c = 0; c < n_rep; c++)
            memcpy(out + (t * n_rep + c) * head_dim,
                   x + t * head_dim, len);
    return 0;
}
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
typedef struct {
    att_s_fn s; att_sm_fn sm; att_pv_fn pv; att_rot_fn rot;
    att_st_fn st; /* the three in one step, or NULL */
} att_kernels;
/* W5.2 The bfloat16 path */
static uint16_t att_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float att_bf16_f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
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
/* W5.3 Defaults and checks of a call */
void rope_attention_defaults(rope_attention_params *p)
{
    memset(p, 0, sizeof *p);
    p->batch = 1;
    p->seq_len = p->kv_len = 1;
    p->n_heads = 8;
    p->n_kv_heads = 2;
    p->head_dim = 96;
    p->causal = 1;
    p->pairing = ROPE_PAIRING_HALF;
    p->n_threads = 1;
    p->simd = ROPE_SIMD_AUTO;
}
static int att_check(const rope_attention_params *p)
{
    if (p->batch < 1 || p->seq_len < 1 || p->kv_len < 1
        || p->n_heads < 1 || p->n_kv_heads < 1 || p->head_dim < 1
        || p->head_dim > ROPE_ATTENTION_MAX_HEAD_DIM)
        return 1;
    if (p->n_heads % p->n_kv_heads) return 2;
    if (p->seq_len > p->kv_len) return 3;
    if (p->start_pos < 0) return 4;
    if (p->freqs_cos) {
        if (!p->freqs_sin || p->head_dim % 2) return 5;
        if (p->table_len < p->start_pos + p->kv_len) return 6;
    }
    if (p->kv_dtype != ROPE_DTYPE_F32 && p->kv_dtype != ROPE_DTYPE_BF16)
        return 1;
    return 0;
}
/* W5.7 The key/value cache */
static void att_cache_tile(const rope_kv_cache *c, int t, long bg,
                           const float **kt, const float **vt)
{
    size_t tile = (size_t)c->dp * ROPE_ATTENTION_BK;
    const float *at = c->tiles
        + ((size_t)t * c->batch * c->n_kv_heads + bg) * 2 * tile;
    *kt = at;
    *vt = at + tile;
}
/* 5.3 The reference */
int rope_attention_naive(float *out, const float *q, const float *k,
                         const float *v,
                         const rope_attention_params *p)
{
    int e = att_check(p);
    if (e) return e;
    /* W5.2 The bfloat16 path */
    float *v16 = NULL;
    if (p->kv_dtype == ROPE_DTYPE_BF16) {
        size_t vn = (size_t)p->batch * p->kv_len * p->n_kv_heads
                    * p->head_dim;
        if (!(v16 = malloc(sizeof(float) * vn))) return ROPE_ATTENTION_ENOMEM;
        for (size_t i = 0; i < vn; i++) v16[i] = att_bf16_f(att_bf16(v[i]));
        v = v16;
    }
    /* 5.3 The reference */
    int n = p->seq_len, nk = p->kv_len, H = p->n_heads;
    int Hk = p->n_kv_heads, d = p->head_dim, rep = H / Hk;
    size_t qn = (size_t)n * H * d, kn = (size_t)nk * Hk * d;
    float *qr = malloc(sizeof(float) * qn);
    float *kr = malloc(sizeof(float) * kn);
    double *sc = malloc(sizeof(double) * (size_t)n * nk);
    double *acc = malloc(sizeof(double) * d);
    int bad = 0; /* an output or lse that is not finite */
    if (!qr || !kr || !sc || !acc) e = ROPE_ATTENTION_ENOMEM;
    for (int b = 0; !e && b < p->batch; b++) {
        memcpy(qr, q + (size_t)b * qn, sizeof(float) * qn);
        memcpy(kr, k + (size_t)b * kn, sizeof(float) * kn);
        if (p->freqs_cos) {
            if (!p->keys_rotated)
                e = att_rotate_tensor(kr, nk, Hk, d, p->start_pos, p);
            if (!e)
                e = att_rotate_tensor(qr, n, H, d,
                                      p->start_pos + nk - n, p);
            if (e) break;
        }
        /* W5.2 The bfloat16 path */
        if (p->kv_dtype == ROPE_DTYPE_BF16) {
            for (size_t i = 0; i < qn; i++) qr[i] = att_bf16_f(att_bf16(qr[i]));
            for (size_t i = 0; i < kn; i++) kr[i] = att_bf16_f(att_bf16(kr[i]));
        }
        /* 5.3 The reference */
        for (int h = 0; h < H; h++) {
            int g = h / rep;
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= (p->causal ? nk - n + i : nk - 1); j++) {
                    const float *qi = qr + ((size_t)i * H + h) * d;
                    const float *kj = kr + ((size_t)j * Hk + g) * d;
                    double s = 0;
                    for (int t = 0; t < d; t++) s += (double)qi[t] * kj[t];
                    sc[(size_t)i * nk + j] = s / sqrt((double)d);
                }
            for (int i = 0; i < n; i++) {
                const double *row = sc + (size_t)i * nk;
                int last = p->causal ? nk - n + i : nk - 1;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= last; j++) mx = row[j] > mx ? row[j] : mx;
                for (int t = 0; t < d; t++) acc[t] = 0;
                for (int j = 0; j <= last; j++) {
                    double w = exp(row[j] - mx);
                    const float *vj = v + (((size_t)b * nk + j) * Hk + g) * d;
                    sum += w;
                    for (int t = 0; t < d; t++) acc[t] += w * vj[t];
                }
                float *o = out + (((size_t)b * n + i) * H + h) * d;
                for (int t = 0; t < d; t++) o[t] = (float)(acc[t] / sum);
                for (int t = 0; t < d; t++) bad |= !isfinite(o[t]);
                float lse = (float)(mx + log(sum));
                bad |= !isfinite(lse);
                if (p->lse) p->lse[((size_t)b * n + i) * H + h] = lse;
            }
        }
    }
    free(qr); free(kr); free(sc); free(acc); free(v16);
    return e ? e : bad ? ROPE_ATTENTION_ENONFINITE : 0;
}
/* 5.7 The micro-kernels */
static void s_tile_scalar(float *S, const float *Q, const float *Kt,
                          int M, int dp)
{
    for (int r = 0; r < M; r++) {
        float acc[ATT_BK] = {0};
        for (int i = 0; i < dp; i++) {
            float a = Q[(size_t)r * dp + i];
            const float *kr = Kt + (size_t)i * ATT_BK;
            for (int c = 0; c < ATT_BK; c++) acc[c] += a * kr[c];
        }
        memcpy(S + (size_t)r * ATT_BK, acc, sizeof acc);
    }
}
static void sm_tile_scalar(float *S, int M, const int *nvalid,
                           float *m, float *l, float *alpha)
{
    for (int r = 0; r < M; r++) {
        float *x = S + (size_t)r * ATT_BK;
        int nv = nvalid ? nvalid[r] : ATT_BK;
        float mx = -INFINITY, sum = 0;
        for (int c = 0; c < nv; c++) mx = x[c] > mx ? x[c] : mx;
        float mn = m[r] > mx ? m[r] : mx;
        if (mn == -INFINITY) {
            alpha[r] = 1;
            memset(x, 0, sizeof(float) * ATT_BK);
            continue;
        }
        for (int c = 0; c < ATT_BK; c++) {
            x[c] = c < nv ? exp2f(x[c] - mn) : 0.0f;
            sum += x[c];
        }
        alpha[r] = exp2f(m[r] - mn);
        l[r] = l[r] * alpha[r] + sum;
        m[r] = mn;
    }
}
static void pv_tile_scalar(float *U, const float *P, const float *V,
                           const float *alpha, int M, int dp)
{
    for (int r = 0; r < M; r++) {
        float *u = U + (size_t)r * dp;
        for (int i = 0; i < dp; i++) u[i] *= alpha[r];
        for (int c = 0; c < ATT_BK; c++) {
            float w = P[(size_t)r * ATT_BK + c];
            const float *vr = V + (size_t)c * dp;
            for (int i = 0; i < dp; i++) u[i] += w * vr[i];
        }
    }
}
/* W5.2 The bfloat16 path */
static float att_dp_step(float z, float a, float b)
{
    if (fabsf(z) < FLT_MIN) z = copysignf(0.0f, z); /* read as zero */
    if (fabsf(a) < FLT_MIN) a = copysignf(0.0f, a);
    if (fabsf(b) < FLT_MIN) b = copysignf(0.0f, b);
    float r = fmaf(a, b, z);
    return fabsf(r) < FLT_MIN ? copysignf(0.0f, r) : r;
}
static void s16_tile_scalar(float *S, const uint16_t *Q,
                            const uint16_t *Kt, int M, int dp, float c)
{
    for (int r = 0; r < M; r++)
        for (int j = 0; j < ATT_BK; j++) {
            float z = 0;
            for (int p = 0; p < dp / 2; p++) {
                const uint16_t *k = Kt + ((size_t)p * ATT_BK + j) * 2;
                const uint16_t *q = Q + (size_t)r * dp + 2 * p;
                z = att_dp_step(z, att_bf16_f(k[1]), att_bf16_f(q[1]));
                z = att_dp_step(z, att_bf16_f(k[0]), att_bf16_f(q[0]));
            }
            S[(size_t)r * ATT_BK + j] = z * c;
        }
}
static void pv16_tile_scalar(float *U, const uint16_t *P,
                             const uint16_t *Vt, const float *alpha,
                             int M, int dp)
{
    for (int r = 0; r < M; r++)
        for (int i = 0; i < dp; i++) {
            float z = U[(size_t)r * dp + i] * alpha[r];
            for (int q = 0; q < ATT_BK / 2; q++) {
                const uint16_t *v = Vt + ((size_t)q * dp + i) * 2;
                const uint16_t *w = P + (size_t)r * ATT_BK + 2 * q;
                z = att_dp_step(z, att_bf16_f(v[1]), att_bf16_f(w[1]));
                z = att_dp_step(z, att_bf16_f(v[0]), att_bf16_f(w[0]));
            }
            U[(size_t)r * dp + i] = z;
        }
}
static void pair16_scalar(uint16_t *out, const float *even,
                          const float *odd, int n)
{
    for (int i = 0; i < n; i++) {
        out[2 * i] = att_bf16(even[i]);
        out[2 * i + 1] = att_bf16(odd[i]);
    }
}
static float row16_scalar(uint16_t *out, const float *x, int n)
{
    float lane[16] = {0}, sum = 0;
    for (int i = 0; i < n; i++) {
        out[i] = att_bf16(x[i]);
        lane[i % 16] += att_bf16_f(out[i]);
    }
    for (int i = 0; i < 16; i++) sum += lane[i];
    return sum;
}
/* 5.2 The interface */
#if ATT_X86
/* W5.1 The other micro-kernels */
#define T512 __attribute__((target("avx512f,avx512dq,fma")))
#define ATT_INLINE __attribute__((always_inline)) inline
static T512 ATT_INLINE void s_rows_512(float *S, const float *Q,
                                       const float *Kt, int r, int dp,
                                       const int R, const int NC)
{
    __m512 acc[6][4];
    #pragma GCC unroll 6
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 4
        for (int c = 0; c < NC; c++) acc[a][c] = _mm512_setzero_ps();
    const float *q = Q + (size_t)r * dp;
#pragma GCC unroll 2
    for (int i = 0; i < dp; i++) {
        const float *kr = Kt + (size_t)i * ATT_BK;
        __m512 k[4];
#pragma GCC unroll 4
        for (int c = 0; c < NC; c++) k[c] = _mm512_load_ps(kr + 16 * c);
#pragma GCC unroll 6
        for (int a = 0; a < R; a++) {
            __m512 b = _mm512_set1_ps(q[(size_t)a * dp + i]);
#pragma GCC unroll 4
            for (int c = 0; c < NC; c++)
                acc[a][c] = _mm512_fmadd_ps(b, k[c], acc[a][c]);
        }
    }
    #pragma GCC unroll 6
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 4
        for (int c = 0; c < NC; c++)
            _mm512_store_ps(S + (size_t)(r + a) * ATT_BK + 16 * c,
                            acc[a][c]);
}
static T512 ATT_INLINE void s_cols_512(float *S, const float *Q,
                                       const float *Kt, int M, int dp,
                                       const int NC)
{
    int r = 0;
    if (att_tune.six)
        for (; r + 6 <= M; r += 6) s_rows_512(S, Q, Kt, r, dp, 6, NC);
    for (; r + 4 <= M; r += 4) s_rows_512(S, Q, Kt, r, dp, 4, NC);
    for (; r < M; r += 2) s_rows_512(S, Q, Kt, r, dp, 2, NC);
}
static T512 void s_tile_512(float *S, const float *Q, const float *Kt,
                            int M, int dp)
{
    s_cols_512(S, Q, Kt, M, dp, 4);
}
#define ATT_EXP_ROUNDED 16
static T512 ATT_INLINE __m512 exp2_poly_512(__mmask16 k, __m512 x,
                                            const float *c, const int how)
{
    const int deg = how % ATT_EXP_ROUNDED;
    __m512 f, e = x;
    if (how >= ATT_EXP_ROUNDED) {
        x = _mm512_max_ps(x, _mm512_set1_ps(-150.0f));
        e = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT
                                        | _MM_FROUND_NO_EXC);
        f = _mm512_sub_ps(x, e);
    } else {
        f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
    __m512 p = _mm512_set1_ps(c[deg]);
#pragma GCC unroll 7
    for (int j = deg - 1; j >= 0; j--)
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c[j]));
    return _mm512_maskz_scalef_ps(k, p, e);
}
static T512 ATT_INLINE __m512 exp2_512(__m512 x)
{
    return exp2_poly_512(0xFFFF, x, att_exp2_c, 6);
}
static T512 void att_rotate_row_512(float *restrict out,
                                    const float *restrict x,
                                    const float *restrict c,
                                    const float *restrict s, int d,
                                    rope_pairing pr)
{
    int h = d / 2;
    if (pr != ROPE_PAIRING_HALF || h % 16) {
        att_rotate_row(out, x, c, s, d, pr);
        return;
    }
    for (int i = 0; i < h; i += 16) {
        __m512 x0 = _mm512_loadu_ps(x + i);
        __m512 x1 = _mm512_loadu_ps(x + i + h);
        __m512 n1 = _mm512_castsi512_ps(_mm512_xor_si512(
            _mm512_castps_si512(x1), _mm512_set1_epi32(INT32_MIN)));
        _mm512_storeu_ps(out + i, _mm512_add_ps(
            _mm512_mul_ps(x0, _mm512_loadu_ps(c + i)),
            _mm512_mul_ps(n1, _mm512_loadu_ps(s + i))));
        _mm512_storeu_ps(out + i + h, _mm512_add_ps(
            _mm512_mul_ps(x1, _mm512_loadu_ps(c + i + h)),
            _mm512_mul_ps(x0, _mm512_loadu_ps(s + i + h))));
    }
}
#define ATT_SLOT(a) (4 * ((a) % 4) + (a) / 4)
static T512 ATT_INLINE __m512 att_fold16(const __m512 *x, int add)
{
#define ATT_OP(a, b) (add ? _mm512_add_ps(a, b) : _mm512_max_ps(a, b))
    __m512 s[8], t[4], u[2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        s[i] = ATT_OP(_mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0x44),
                      _mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0xEE));
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        t[i] = ATT_OP(_mm512_shuffle_f32x4(s[2 * i], s[2 * i + 1], 0x88),
                      _mm512_shuffle_f32x4(s[2 * i], s[2 * i + 1], 0xDD));
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++)
        u[i] = ATT_OP(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0x44),
                      _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0xEE));
    return ATT_OP(_mm512_shuffle_ps(u[0], u[1], 0x88),
                  _mm512_shuffle_ps(u[0], u[1], 0xDD));
#undef ATT_OP
}
static T512 ATT_INLINE int sm_rows16_nc_512(float *S, const int *nv,
                                            float *m, float *l,
                                            float *alpha, const int NC,
                                            const float *ec, const int deg)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 part[16];
    __mmask16 k[16][4];
    #pragma GCC unroll 16
    for (int a = 0; a < 16; a++) {
        const float *x = S + (size_t)a * ATT_BK;
        uint64_t bits = ~(uint64_t)0;
        if (nv && nv[a] < ATT_BK)
            bits = nv[a] <= 0 ? 0 : ((uint64_t)1 << nv[a]) - 1;
        __m512 mx = ninf;
    #pragma GCC unroll 4
        for (int c = 0; c < NC; c++) {
            k[a][c] = (__mmask16)(bits >> (16 * c));
            mx = _mm512_max_ps(mx, nv ? _mm512_mask_load_ps(ninf, k[a][c],
                                                            x + 16 * c)
                                      : _mm512_load_ps(x + 16 * c));
        }
        part[ATT_SLOT(a)] = mx;
    }
    __m512 mo = _mm512_loadu_ps(m);
    __m512 mn = _mm512_max_ps(mo, att_fold16(part, 0));
    if (_mm512_cmp_ps_mask(mn, ninf, _CMP_NEQ_OQ) != 0xFFFF) return 0;
    __m512 al = exp2_poly_512(0xFFFF, _mm512_sub_ps(mo, mn), ec, deg);
    _mm512_storeu_ps(alpha, al);
    #pragma GCC unroll 16
    for (int a = 0; a < 16; a++) {
        float *x = S + (size_t)a * ATT_BK;
        __m512 vm = _mm512_permutexvar_ps(_mm512_set1_epi32(a), mn);
        __m512 sum = _mm512_setzero_ps();
    #pragma GCC unroll 4
        for (int c = 0; c < NC; c++) {
            __m512 e = exp2_poly_512(nv ? k[a][c] : 0xFFFF,
                                     _mm512_sub_ps(_mm512_load_ps(x + 16 * c),
                                                   vm), ec, deg);
            _mm512_store_ps(x + 16 * c, e);
            sum = _mm512_add_ps(sum, e);
        }
        part[ATT_SLOT(a)] = sum;
    }
    __m512 lo = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(l), al),
                              att_fold16(part, 1));
    _mm512_storeu_ps(l, lo);
    _mm512_storeu_ps(m, mn);
    return 1;
}
static T512 ATT_INLINE int sm_rows16_512(float *S, const int *nv,
                                         float *m, float *l,
                                         float *alpha, int nc,
                                         const float *ec, const int deg)
{
    switch (nc) {
    case 1: return sm_rows16_nc_512(S, nv, m, l, alpha, 1, ec, deg);
    case 2: return sm_rows16_nc_512(S, nv, m, l, alpha, 2, ec, deg);
    case 3: return sm_rows16_nc_512(S, nv, m, l, alpha, 3, ec, deg);
    default: return sm_rows16_nc_512(S, nv, m, l, alpha, 4, ec, deg);
    }
}
static T512 ATT_INLINE void sm_cols_512(float *S, int M,
                                        const int *nvalid, float *m,
                                        float *l, float *alpha, int nc,
                                        const int deg)
{
    const float *ec = deg % ATT_EXP_ROUNDED == 6 ? att_exp2_c : att_exp2_t;
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    for (int r0 = 0; r0 < M; r0 += 16) {
        int nr = M - r0 < 16 ? M - r0 : 16;
        __mmask16 rows = (__mmask16)((1u << nr) - 1);
        __m512 part[16];
        float mnv[16];
        if (nr == 16 && att_tune.rows
            && sm_rows16_512(S + (size_t)r0 * ATT_BK,
                             nvalid ? nvalid + r0 : NULL, m + r0,
                             l + r0, alpha + r0, nc, ec, deg))
            continue;
        for (int a = 0; a < 16; a++) {
            int r = r0 + a;
            uint64_t bits = ~(uint64_t)0;
            __mmask16 k[4];
            __m512 v[4];
            part[ATT_SLOT(a)] = ninf;
            if (a >= nr) continue;
            float *x = S + (size_t)r * ATT_BK;
            if (nvalid && nvalid[r] < ATT_BK)
                bits = nvalid[r] <= 0 ? 0 : ((uint64_t)1 << nvalid[r]) - 1;
            #pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                k[c] = (__mmask16)(bits >> (16 * c));
                v[c] = _mm512_mask_load_ps(ninf, k[c], x + 16 * c);
            }
            part[ATT_SLOT(a)] = _mm512_max_ps(_mm512_max_ps(v[0], v[1]),
                                              _mm512_max_ps(v[2], v[3]));
        }
        __m512 mo = _mm512_mask_loadu_ps(ninf, rows, m + r0);
        __m512 mn = _mm512_max_ps(mo, att_fold16(part, 0));
        __mmask16 live = _mm512_cmp_ps_mask(mn, ninf, _CMP_NEQ_OQ);
        __m512 al = _mm512_mask_blend_ps(
            live, _mm512_set1_ps(1.0f),
            exp2_poly_512(0xFFFF, _mm512_sub_ps(mo, mn), ec, deg));
        _mm512_mask_storeu_ps(alpha + r0, rows, al);
        _mm512_storeu_ps(mnv, mn);
        for (int a = 0; a < 16; a++) {
            int r = r0 + a;
            uint64_t bits = ~(uint64_t)0;
            __mmask16 k[4];
            __m512 v[4], sum = _mm512_setzero_ps();
            float *x = a < nr ? S + (size_t)r * ATT_BK : NULL;
            if (x && mnv[a] == -INFINITY)
                memset(x, 0, sizeof(float) * ATT_BK);
            if (x && mnv[a] != -INFINITY) {
                if (nvalid && nvalid[r] < ATT_BK)
                    bits = nvalid[r] <= 0 ? 0 : ((uint64_t)1 << nvalid[r]) - 1;
                #pragma GCC unroll 4
                for (int c = 0; c < 4; c++) {
                    k[c] = (__mmask16)(bits >> (16 * c));
                    v[c] = _mm512_mask_load_ps(ninf, k[c], x + 16 * c);
                }
                __m512 vm = _mm512_set1_ps(mnv[a]);
        #pragma GCC unroll 4
                for (int c = 0; c < 4; c++) {
                    if (c >= nc) break;
                    __m512 e = exp2_poly_512(k[c], _mm512_sub_ps(v[c], vm), ec,
                                             deg);
                    _mm512_store_ps(x + 16 * c, e);
                    sum = _mm512_add_ps(sum, e);
                }
            }
            part[ATT_SLOT(a)] = sum;
        }
        __m512 lo = _mm512_maskz_loadu_ps(rows, l + r0);
        lo = _mm512_add_ps(_mm512_mul_ps(lo, al), att_fold16(part, 1));
        _mm512_mask_storeu_ps(l + r0, rows, lo);
        _mm512_mask_storeu_ps(m + r0, rows, mn);
    }
}
static T512 void sm_tile_512(float *S, int M, const int *nvalid,
                             float *m, float *l, float *alpha)
{
    sm_cols_512(S, M, nvalid, m, l, alpha, 4, 6);
}
static T512 ATT_INLINE void pv_block_512(
    float *U, const float *P, const float *V, const float *alpha,
    int dp, int r, int c0, const int R, const int NV, int nk)
{
    __m512 acc[6][6];
    #pragma GCC unroll 6
    for (int a = 0; a < R; a++) {
        __m512 al = _mm512_set1_ps(alpha[r + a]);
        float *u = U + (size_t)(r + a) * dp + c0;
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            acc[a][c] = _mm512_mul_ps(al, _mm512_load_ps(u + 16 * c));
    }
#pragma GCC unroll 2
    for (int kk = 0; kk < nk; kk++) {
        const float *vr = V + (size_t)kk * dp + c0;
        __m512 vv[6];
#pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            vv[c] = _mm512_load_ps(vr + 16 * c);
#pragma GCC unroll 6
        for (int a = 0; a < R; a++) {
            __m512 w = _mm512_set1_ps(P[(size_t)(r + a) * ATT_BK + kk]);
#pragma GCC unroll 6
            for (int c = 0; c < NV; c++)
                acc[a][c] = _mm512_fmadd_ps(w, vv[c], acc[a][c]);
        }
    }
    #pragma GCC unroll 6
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            _mm512_store_ps(U + (size_t)(r + a) * dp + c0 + 16 * c,
                            acc[a][c]);
}
static T512 ATT_INLINE void pv_rows_512(
    float *U, const float *P, const float *V, const float *alpha,
    int dp, int r, int c0, int R, const int NV, int nk)
{
    if (R == 6)
        pv_block_512(U, P, V, alpha, dp, r, c0, 6, NV < 4 ? NV : 4, nk);
    else if (R == 4)
        pv_block_512(U, P, V, alpha, dp, r, c0, 4, NV, nk);
    else
        pv_block_512(U, P, V, alpha, dp, r, c0, 2, NV, nk);
}
static T512 ATT_INLINE void pv_keys_512(float *U, const float *P,
                                        const float *V,
                                        const float *alpha, int M, int dp,
                                        int nk)
{
#define ATT_PV_ROWS(w, left) \
    (att_tune.six && (w) <= 4 && (left) >= 6 ? 6 : (left) >= 4 ? 4 : 2)
#define ATT_PV(NV) pv_rows_512(U, P, V, alpha, dp, r, c0, R, NV, nk)
    for (int c0 = 0, nv = dp / 16; nv > 0;) {
        int w = nv <= 6 ? nv : nv == 8 ? 4 : nv - 6 >= 2 ? 6 : 4;
        for (int r = 0, R; r < M; r += R) {
            R = ATT_PV_ROWS(w, M - r);
            switch (w) {
            case 1: ATT_PV(1); break;
            case 2: ATT_PV(2); break;
            case 3: ATT_PV(3); break;
            case 4: ATT_PV(4); break;
            case 5: ATT_PV(5); break;
            default: ATT_PV(6);
            }
        }
        c0 += 16 * w;
        nv -= w;
    }
#undef ATT_PV
#undef ATT_PV_ROWS
}
static T512 void pv_tile_512(float *U, const float *P, const float *V,
                             const float *alpha, int M, int dp)
{
    pv_keys_512(U, P, V, alpha, M, dp, ATT_BK);
}
static int att_seen_vectors(const int *nvalid, int M)
{
    int mx = 0;
    if (!nvalid) return ATT_BK / 16;
    for (int r = 0; r < M; r++) mx = nvalid[r] > mx ? nvalid[r] : mx;
    return mx < 16 ? 1 : (mx + 15) / 16;
}
static T512 void st_tile_512(float *S, const float *Q, const float *Kt,
                             const float *V, float *U, int M, int dp,
                             const int *nvalid, float *m, float *l,
                             float *alpha)
{
    int nc = att_seen_vectors(nvalid, M);
    switch (nc) {
    case 1: s_cols_512(S, Q, Kt, M, dp, 1); break;
    case 2: s_cols_512(S, Q, Kt, M, dp, 2); break;
    case 3: s_cols_512(S, Q, Kt, M, dp, 3); break;
    default: s_cols_512(S, Q, Kt, M, dp, 4);
    }
    if (att_tune.taylor) sm_cols_512(S, M, nvalid, m, l, alpha, nc, 7);
    else if (!att_tune.reduce)
        sm_cols_512(S, M, nvalid, m, l, alpha, nc, 6 + ATT_EXP_ROUNDED);
    else sm_cols_512(S, M, nvalid, m, l, alpha, nc, 6);
    pv_keys_512(U, S, V, alpha, M, dp, 16 * nc);
}
static T512 void att_exp2_16(float *y, const float *x)
{
    _mm512_storeu_ps(y, exp2_512(_mm512_loadu_ps(x)));
}
/* W5.2 The bfloat16 path */
#define TBF16 __attribute__((target("avx512f,avx512bf16")))
#define ATT_DOT_NATIVE(z, a, b) \
    ((z) = _mm512_dpbf16_ps((z), (__m512bh)(a), (__m512bh)(b)))
#define ATT_DOT(z, a, b) ATT_DOT_NATIVE(z, a, b)
#define ATT_DAZ(x) (x)
static TBF16 ATT_INLINE void pv16_block_bf16(
    float *U, const uint16_t *P, const uint16_t *V, const float *alpha,
    int dp, int r, int c0, const int R, const int NV)
{
    __m512 acc[4][6];
    #pragma GCC unroll 4
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            acc[a][c] = ATT_DAZ(_mm512_mul_ps(_mm512_set1_ps(alpha[r + a]),
                _mm512_load_ps(U + (size_t)(r + a) * dp + c0 + 16 * c)));
    for (int q = 0; q < ATT_BK / 2; q++) {
        const uint16_t *vr = V + (size_t)q * 2 * dp + 2 * c0;
        __m512i vv[6];
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            vv[c] = _mm512_load_si512((const void *)(vr + 32 * c));
    #pragma GCC unroll 4
        for (int a = 0; a < R; a++) {
            uint32_t pr;
            memcpy(&pr, P + (size_t)(r + a) * ATT_BK + 2 * q, sizeof pr);
            __m512i w = _mm512_set1_epi32((int)pr);
    #pragma GCC unroll 6
            for (int c = 0; c < NV; c++) ATT_DOT(acc[a][c], vv[c], w);
        }
    }
    #pragma GCC unroll 4
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            _mm512_store_ps(U + (size_t)(r + a) * dp + c0 + 16 * c, acc[a][c]);
}
static TBF16 void s16_tile_bf16(float *S, const uint16_t *Q,
                                const uint16_t *Kt, int M, int dp,
                                float sc)
{
    for (int r = 0; r < M; r += 4) {
        __m512 acc[4][4];
    #pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++) acc[a][c] = _mm512_setzero_ps();
        for (int p = 0; p < dp / 2; p++) {
            const uint16_t *kr = Kt + (size_t)p * 2 * ATT_BK;
            __m512i k[4];
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                k[c] = _mm512_load_si512((const void *)(kr + 32 * c));
    #pragma GCC unroll 4
            for (int a = 0; a < 4; a++) {
                uint32_t pr;
                memcpy(&pr, Q + (size_t)(r + a) * dp + 2 * p, sizeof pr);
                __m512i b = _mm512_set1_epi32((int)pr);
    #pragma GCC unroll 4
                for (int c = 0; c < 4; c++) ATT_DOT(acc[a][c], k[c], b);
            }
        }
    #pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                _mm512_store_ps(S + (size_t)(r + a) * ATT_BK + 16 * c,
                    _mm512_mul_ps(acc[a][c], _mm512_set1_ps(sc)));
    }
}
static TBF16 void pv16_tile_bf16(float *U, const uint16_t *P,
                                 const uint16_t *V, const float *alpha,
                                 int M, int dp)
{
#define ATT_PV_ROWS(w, left) 4
#define ATT_PV(NV) pv16_block_bf16(U, P, V, alpha, dp, r, c0, 4, NV)
    /* W5.1 The other micro-kernels */
    for (int c0 = 0, nv = dp / 16; nv > 0;) {
        int w = nv <= 6 ? nv : nv == 8 ? 4 : nv - 6 >= 2 ? 6 : 4;
        for (int r = 0, R; r < M; r += R) {
            R = ATT_PV_ROWS(w, M - r);
            switch (w) {
            case 1: ATT_PV(1); break;
            case 2: ATT_PV(2); break;
            case 3: ATT_PV(3); break;
            case 4: ATT_PV(4); break;
            case 5: ATT_PV(5); break;
            default: ATT_PV(6);
            }
        }
        c0 += 16 * w;
        nv -= w;
    }
/* W5.2 The bfloat16 path */
#undef ATT_PV
#undef ATT_PV_ROWS
}
#undef ATT_DOT
#undef ATT_DAZ
static T512 ATT_INLINE __m512 att_ftz512(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(x),
                                        _mm512_set1_ps(FLT_MIN),
                                        _CMP_LT_OQ);
    return _mm512_castsi512_ps(_mm512_mask_and_epi32(u, tiny, u,
        _mm512_set1_epi32(INT32_MIN)));
}
static T512 ATT_INLINE __m512 att_dot_emul(__m512 z, __m512i a,
                                           __m512i b)
{
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    z = att_ftz512(_mm512_fmadd_ps(
        _mm512_castsi512_ps(_mm512_and_si512(a, hi)),
        _mm512_castsi512_ps(_mm512_and_si512(b, hi)), z));
    return att_ftz512(_mm512_fmadd_ps(
        _mm512_castsi512_ps(_mm512_slli_epi32(a, 16)),
        _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)), z));
}
#define ATT_DOT(z, a, b) ((z) = att_dot_emul((z), (a), (b)))
#define ATT_DAZ(x) att_ftz512(x)
static T512 ATT_INLINE void pv16_block_emul(
    float *U, const uint16_t *P, const uint16_t *V, const float *alpha,
    int dp, int r, int c0, const int R, const int NV)
{
    __m512 acc[4][6];
    #pragma GCC unroll 4
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            acc[a][c] = ATT_DAZ(_mm512_mul_ps(_mm512_set1_ps(alpha[r + a]),
                _mm512_load_ps(U + (size_t)(r + a) * dp + c0 + 16 * c)));
    for (int q = 0; q < ATT_BK / 2; q++) {
        const uint16_t *vr = V + (size_t)q * 2 * dp + 2 * c0;
        __m512i vv[6];
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            vv[c] = _mm512_load_si512((const void *)(vr + 32 * c));
    #pragma GCC unroll 4
        for (int a = 0; a < R; a++) {
            uint32_t pr;
            memcpy(&pr, P + (size_t)(r + a) * ATT_BK + 2 * q, sizeof pr);
            __m512i w = _mm512_set1_epi32((int)pr);
    #pragma GCC unroll 6
            for (int c = 0; c < NV; c++) ATT_DOT(acc[a][c], vv[c], w);
        }
    }
    #pragma GCC unroll 4
    for (int a = 0; a < R; a++)
    #pragma GCC unroll 6
        for (int c = 0; c < NV; c++)
            _mm512_store_ps(U + (size_t)(r + a) * dp + c0 + 16 * c, acc[a][c]);
}
static T512 void s16_tile_emul(float *S, const uint16_t *Q,
                               const uint16_t *Kt, int M, int dp,
                               float sc)
{
    for (int r = 0; r < M; r += 4) {
        __m512 acc[4][4];
    #pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++) acc[a][c] = _mm512_setzero_ps();
        for (int p = 0; p < dp / 2; p++) {
            const uint16_t *kr = Kt + (size_t)p * 2 * ATT_BK;
            __m512i k[4];
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                k[c] = _mm512_load_si512((const void *)(kr + 32 * c));
    #pragma GCC unroll 4
            for (int a = 0; a < 4; a++) {
                uint32_t pr;
                memcpy(&pr, Q + (size_t)(r + a) * dp + 2 * p, sizeof pr);
                __m512i b = _mm512_set1_epi32((int)pr);
    #pragma GCC unroll 4
                for (int c = 0; c < 4; c++) ATT_DOT(acc[a][c], k[c], b);
            }
        }
    #pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
    #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                _mm512_store_ps(S + (size_t)(r + a) * ATT_BK + 16 * c,
                    _mm512_mul_ps(acc[a][c], _mm512_set1_ps(sc)));
    }
}
static T512 void pv16_tile_emul(float *U, const uint16_t *P,
                                const uint16_t *V, const float *alpha,
                                int M, int dp)
{
#define ATT_PV_ROWS(w, left) 4
#define ATT_PV(NV) pv16_block_emul(U, P, V, alpha, dp, r, c0, 4, NV)
    /* W5.1 The other micro-kernels */
    for (int c0 = 0, nv = dp / 16; nv > 0;) {
        int w = nv <= 6 ? nv : nv == 8 ? 4 : nv - 6 >= 2 ? 6 : 4;
        for (int r = 0, R; r < M; r += R) {
            R = ATT_PV_ROWS(w, M - r);
            switch (w) {
            case 1: ATT_PV(1); break;
            case 2: ATT_PV(2); break;
            case 3: ATT_PV(3); break;
            case 4: ATT_PV(4); break;
            case 5: ATT_PV(5); break;
            default: ATT_PV(6);
            }
        }
        c0 += 16 * w;
        nv -= w;
    }
/* W5.2 The bfloat16 path */
#undef ATT_PV
#undef ATT_PV_ROWS
}
#undef ATT_DOT
#undef ATT_DAZ
static T512 ATT_INLINE __m512i att_bf16_512(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __m512i e = _mm512_and_si512(u, _mm512_set1_epi32(0x7f800000));
    __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16),
                                   _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, lsb),
                                 _mm512_set1_epi32(0x7fff));
    r = _mm512_mask_or_epi32(r, _mm512_cmpgt_epi32_mask(a,
            _mm512_set1_epi32(0x7f800000)), u, _mm512_set1_epi32(0x400000));
    r = _mm512_mask_and_epi32(r, _mm512_cmpeq_epi32_mask(e,
            _mm512_setzero_si512()), u, _mm512_set1_epi32(INT32_MIN));
    return _mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u));
}
static T512 void pair16_512(uint16_t *out, const float *even,
                            const float *odd, int n)
{
    for (int i = 0; i < n; i += 16) {
        __m512i e = att_bf16_512(_mm512_loadu_ps(even + i));
        __m512i o = att_bf16_512(_mm512_loadu_ps(odd + i));
        _mm512_storeu_si512((void *)(out + 2 * i),
                            _mm512_or_si512(o, _mm512_srli_epi32(e, 16)));
    }
}
static T512 float row16_512(uint16_t *out, const float *x, int n)
{
    __m512 acc = _mm512_setzero_ps();
    float lane[16], sum = 0;
    for (int i = 0; i < n; i += 16) {
        __m512i r = att_bf16_512(_mm512_loadu_ps(x + i));
        acc = _mm512_add_ps(acc, _mm512_castsi512_ps(r));
        _mm256_storeu_si256((__m256i *)(out + i),
            _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
    }
    _mm512_storeu_ps(lane, acc);
    for (int i = 0; i < 16; i++) sum += lane[i];
    return sum;
}
#if defined(__linux__)
#define ATT_AMX 1
#else
#define ATT_AMX 0
#endif
#if ATT_AMX
#define TAMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16")))
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} att_tilecfg;
static TAMX void att_amx_config(int mr, int half)
{
    att_tilecfg c __attribute__((aligned(64)));
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 8; t++) {
        c.rows[t] = (uint8_t)(t < 6 ? mr : 16); /* C, C, C, C, A, A; B, B */
        c.colsb[t] = 64;
    }
    if (half) { c.colsb[5] = 32; c.rows[7] = 8; }
    _tile_loadconfig(&c);
}
#endif
#if ATT_AMX
#define ATT_S_STEP(A, B0, B1, a, kt) do { \
        _tile_loadd(A, a, qs); \
        _tile_loadd(B0, kt, 256); _tile_dpbf16ps(0, A, B0); \
        _tile_loadd(B1, (kt) + 32, 256); _tile_dpbf16ps(1, A, B1); \
        _tile_loadd(B0, (kt) + 64, 256); _tile_dpbf16ps(2, A, B0); \
        _tile_loadd(B1, (kt) + 96, 256); _tile_dpbf16ps(3, A, B1); \
    } while (0)
static TAMX void s16_tile_amx(float *S, const uint16_t *Q,
                              const uint16_t *Kt, int M, int dp, float c)
{
    int full = dp / 32, half = dp % 32 != 0;
    long qs = 2L * dp;
    __m512 vc = _mm512_set1_ps(c);
    for (int r0 = 0; r0 < M; r0 += 16) {
        int mr = M - r0 < 16 ? M - r0 : 16;
        if (r0 == 0 || mr < 16) att_amx_config(mr, half);
        const uint16_t *q = Q + (size_t)r0 * dp;
        float *s = S + (size_t)r0 * ATT_BK;
        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
        for (int k = 0; k < full; k++) {
            if (half) ATT_S_STEP(4, 6, 6, q + 32 * k, Kt + 2048 * k);
            else ATT_S_STEP(4, 6, 7, q + 32 * k, Kt + 2048 * k);
        }
        if (half) ATT_S_STEP(5, 7, 7, q + 32 * full, Kt + 2048 * full);
        _tile_stored(0, s, 256); _tile_stored(1, s + 16, 256);
        _tile_stored(2, s + 32, 256); _tile_stored(3, s + 48, 256);
    }
    _tile_release();
    for (int i = 0; i < M * ATT_BK; i += 16)
        _mm512_store_ps(S + i, _mm512_mul_ps(_mm512_load_ps(S + i), vc));
}
#undef ATT_S_STEP
#endif
#if ATT_AMX
#define ATT_PV_COL(C, c) do { \
        _tile_loadd(C, u + (c), us); \
        _tile_loadd(6, Vt + 2 * (c), us); _tile_dpbf16ps(C, 4, 6); \
        _tile_loadd(7, Vt + 32L * dp + 2 * (c), us); \
        _tile_dpbf16ps(C, 5, 7); \
        _tile_stored(C, u + (c), us); \
    } while (0)
static TAMX void att_pv_amx(float *U, const uint16_t *P,
                            const uint16_t *Vt, const float *alpha,
                            int M, int dp, float *l)
{
    long us = 4L * dp;
    uint16_t ones[16 * 32] __attribute__((aligned(64)));
    float z[16 * 16] __attribute__((aligned(64)));
    for (int i = 0; i < 16 * 32; i += 32)
        _mm512_store_si512((void *)(ones + i), _mm512_set1_epi16(0x3f80));
    for (int r = 0; r < M; r++) {
        __m512 a = _mm512_set1_ps(alpha[r]);
        if (alpha[r] == 1.0f) continue; /* the product would be exact */
        for (int i = 0; i < dp; i += 16)
            _mm512_store_ps(U + (size_t)r * dp + i, _mm512_mul_ps(a,
                _mm512_load_ps(U + (size_t)r * dp + i)));
    }
    for (int r0 = 0; r0 < M; r0 += 16) {
        int mr = M - r0 < 16 ? M - r0 : 16, c = 0;
        if (r0 == 0 || mr < 16) att_amx_config(mr, 0);
        float *u = U + (size_t)r0 * dp;
        _tile_loadd(4, P + (size_t)r0 * ATT_BK, 2 * ATT_BK);
        _tile_loadd(5, P + (size_t)r0 * ATT_BK + 32, 2 * ATT_BK);
        if (l) {
            memset(z, 0, sizeof z);
            for (int r = 0; r < mr; r++) z[16 * r] = l[r0 + r] * alpha[r0 + r];
            _tile_loadd(0, z, 64);
            _tile_loadd(6, ones, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(0, 5, 6);
            _tile_stored(0, z, 64);
            for (int r = 0; r < mr; r++) l[r0 + r] = z[16 * r];
        }
        for (; c + 64 <= dp; c += 64) {
            ATT_PV_COL(0, c); ATT_PV_COL(1, c + 16);
            ATT_PV_COL(2, c + 32); ATT_PV_COL(3, c + 48);
        }
        if (c < dp) ATT_PV_COL(0, c);
        if (c + 16 < dp) ATT_PV_COL(1, c + 16);
        if (c + 32 < dp) ATT_PV_COL(2, c + 32);
    }
    _tile_release();
}
#undef ATT_PV_COL
static TAMX void pv16_tile_amx(float *U, const uint16_t *P,
                               const uint16_t *Vt, const float *alpha,
                               int M, int dp)
{
    att_pv_amx(U, P, Vt, alpha, M, dp, NULL);
}
#endif
#if ATT_AMX
#include <cpuid.h>
#include <sys/syscall.h>
long syscall(long number, ...);
static int att_amx_ok;
static pthread_once_t att_amx_once = PTHREAD_ONCE_INIT;
static void att_amx_init(void)
{
    unsigned a, b, c, d, lo, hi;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    if (!(d >> 22 & 1) || !(d >> 24 & 1)) return;
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) return;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    att_amx_ok = (lo >> 17 & 3) == 3;
}
#endif
#if ATT_AMX
static TAMX void att_amx_dot1(float *z, const uint16_t *a,
                              const uint16_t *b, int n)
{
    att_tilecfg c __attribute__((aligned(64)));
    memset(&c, 0, sizeof c);
    c.palette = 1;
    c.rows[0] = 1; /* C: 1 x 1 */
    c.colsb[0] = 4;
    c.rows[1] = 1; /* A: 1 x n */
    c.colsb[1] = (uint16_t)(2 * n);
    c.rows[2] = (uint8_t)(n / 2); /* B: n/2 pairs */
    c.colsb[2] = 4;
    _tile_loadconfig(&c);
    _tile_loadd(0, z, 4);
    _tile_loadd(1, a, 2 * n);
    _tile_loadd(2, b, 4);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, z, 4);
    _tile_release();
}
#endif
static uint32_t att_daz_pair(uint32_t w)
{
    if (!(w & 0x7f800000u)) w &= 0x8000ffffu;
    if (!(w & 0x7f80u)) w &= 0xffff8000u;
    return w;
}
static TBF16 float att_dot1_bf16(float z, uint32_t a, uint32_t b)
{
    __m512 r = _mm512_dpbf16_ps(_mm512_set1_ps(z),
        (__m512bh)_mm512_set1_epi32((int)a),
        (__m512bh)_mm512_set1_epi32((int)b));
    return _mm512_cvtss_f32(r);
}
static T512 float att_dot1_emul(float z, uint32_t a, uint32_t b)
{
    a = att_daz_pair(a);
    b = att_daz_pair(b);
    __m512 r = att_dot_emul(att_ftz512(_mm512_set1_ps(z)),
                            _mm512_set1_epi32((int)a),
                            _mm512_set1_epi32((int)b));
    return _mm512_cvtss_f32(r);
}
static TBF16 uint16_t att_bf16_cvt_native(float x)
{
    __m256bh h = _mm512_cvtneps_pbh(_mm512_set1_ps(x));
    return (uint16_t)_mm_extract_epi16(
        _mm256_castsi256_si128((__m256i)h), 0);
}
static TBF16 float att_dot_chains(long iters)
{
    __m512 a[24];
    __m512i x = _mm512_set1_epi32(0x3f803f80); /* (1, 1) */
    __m512i y = _mm512_set1_epi32(0x33803380); /* (2^-24, 2^-24) */
    for (int i = 0; i < 24; i++) a[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) ATT_DOT_NATIVE(a[i], x, y);
    for (int i = 1; i < 24; i++) a[0] = _mm512_add_ps(a[0], a[i]);
    return _mm512_reduce_add_ps(a[0]);
}
#if ATT_AMX
static TAMX float att_amx_chains(long iters)
{
    static const uint16_t one[16 * 32] __attribute__((aligned(64)));
    float out[16 * 16] __attribute__((aligned(64)));
    att_amx_config(16, 0);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    _tile_loadd(4, one, 64);
    _tile_loadd(6, one, 64);
    for (long it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 6);
        _tile_dpbf16ps(2, 4, 6); _tile_dpbf16ps(3, 4, 6);
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}
#endif
/* W5.1 The other micro-kernels */
#define T256 __attribute__((target("avx2,fma")))
static T256 ATT_INLINE __m256 exp2_256(__m256 x)
{
    x = _mm256_max_ps(x, _mm256_set1_ps(-127.0f));
    __m256 n = _mm256_round_ps(
        x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m256 f = _mm256_sub_ps(x, n);
    __m256 p = _mm256_set1_ps(att_exp2_c[6]);
#pragma GCC unroll 6
    for (int k = 5; k >= 0; k--)
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(att_exp2_c[k]));
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n),
                                 _mm256_set1_epi32(127));
    e = _mm256_slli_epi32(e, 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
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
static T256 ATT_INLINE void s_block_256(float *S, const float *Q,
                                        const float *Kt, int dp, int r,
                                        int nk, const int R,
                                        const int flush)
{
    for (int c0 = 0; c0 < nk; c0 += 16) {
        __m256 acc[6][2];
#pragma GCC unroll 6
        for (int a = 0; a < R; a++)
            acc[a][0] = acc[a][1] = _mm256_setzero_ps();
        const float *q = Q + (size_t)r * dp;
        for (int i = 0; i < dp; i++) {
            const float *kr = Kt + (size_t)i * ATT_BK + c0;
            __m256 k0 = _mm256_load_ps(kr);
            __m256 k1 = _mm256_load_ps(kr + 8);
#pragma GCC unroll 6
            for (int a = 0; a < R; a++) {
                __m256 b = _mm256_broadcast_ss(q + a * dp + i);
                acc[a][0] = att_ftz_if256(
                    _mm256_fmadd_ps(b, k0, acc[a][0]), flush);
                acc[a][1] = att_ftz_if256(
                    _mm256_fmadd_ps(b, k1, acc[a][1]), flush);
            }
        }
#pragma GCC unroll 6
        for (int a = 0; a < R; a++) {
            float *s = S + (size_t)(r + a) * ATT_BK + c0;
            _mm256_store_ps(s, acc[a][0]);
            _mm256_store_ps(s + 8, acc[a][1]);
        }
    }
}

static T256 ATT_INLINE void s_tile_256_f(float *S, const float *Q,
                                         const float *Kt, int M, int dp,
                                         int nk, const int flush)
{
    int r = 0;
    if (att_tune.six)
        for (; r + 6 <= M; r += 6)
            s_block_256(S, Q, Kt, dp, r, nk, 6, flush);
    for (; r + 4 <= M; r += 4) s_block_256(S, Q, Kt, dp, r, nk, 4, flush);
    for (; r < M; r += 2) s_block_256(S, Q, Kt, dp, r, nk, 2, flush);
}
static T256 void s_tile_256(float *S, const float *Q, const float *Kt,
                            int M, int dp)
{
    s_tile_256_f(S, Q, Kt, M, dp, ATT_BK, 0);
}
static T256 ATT_INLINE float hmax_256(__m256 v)
{
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v),
                          _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

static T256 ATT_INLINE float hsum_256(__m256 v)
{
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v),
                          _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    a = _mm_add_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}
static T256 void sm_tile_256(float *S, int M, const int *nvalid,
                             float *m, float *l, float *alpha)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int G = att_tune.rows ? 8 : 1;
    for (int r0 = 0; r0 < M; r0 += G) {
        int g = M - r0 < G ? M - r0 : G;
        float mo[8] = {0}, mn[8] = {0}, al[8];
        for (int a = 0; a < g; a++) {
            float *x = S + (size_t)(r0 + a) * ATT_BK;
            int nv = nvalid ? nvalid[r0 + a] : ATT_BK;
            __m256 m8 = ninf;
            if (nv >= ATT_BK) {
            #pragma GCC unroll 8
                for (int c = 0; c < 8; c++)
                    m8 = _mm256_max_ps(m8, _mm256_load_ps(x + 8 * c));
            } else {
            #pragma GCC unroll 8
                for (int c = 0; c < 8; c++) {
                    __m256i lim = _mm256_set1_epi32(nv - 8 * c);
                    __m256 k = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lim, lane));
                    __m256 v = _mm256_blendv_ps(ninf, _mm256_load_ps(x + 8 * c), k);
                    _mm256_store_ps(x + 8 * c, v);
                    m8 = _mm256_max_ps(m8, v);
                }
            }
            float mx = hmax_256(m8);
            mo[a] = m[r0 + a];
            mn[a] = mo[a] > mx ? mo[a] : mx;
        }
        __m256 vn = _mm256_loadu_ps(mn);
        __m256 ev = exp2_256(_mm256_sub_ps(_mm256_loadu_ps(mo), vn));
        ev = _mm256_blendv_ps(ev, _mm256_set1_ps(1.0f),
                              _mm256_cmp_ps(vn, ninf, _CMP_EQ_OQ));
        _mm256_storeu_ps(al, ev);
        memcpy(alpha + r0, al, sizeof(float) * g);
        for (int a = 0; a < g; a++) {
            float *x = S + (size_t)(r0 + a) * ATT_BK;
            if (mn[a] == -INFINITY) {
                memset(x, 0, sizeof(float) * ATT_BK);
                continue;
            }
            __m256 vm = _mm256_set1_ps(mn[a]), sum = _mm256_setzero_ps();
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                __m256 e = exp2_256(
                    _mm256_sub_ps(_mm256_load_ps(x + 8 * c), vm));
                _mm256_store_ps(x + 8 * c, e);
                sum = _mm256_add_ps(sum, e);
            }
            l[r0 + a] = l[r0 + a] * al[a] + hsum_256(sum);
            m[r0 + a] = mn[a];
        }
    }
}
static T256 ATT_INLINE void pv_block_256(
    float *U, const float *P, const float *V, const float *alpha,
    int dp, int r, int c0, int nk, const int R, const int flush)
{
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int a = 0; a < R; a++) {
        __m256 al = _mm256_set1_ps(alpha[r + a]);
        const float *u = U + (size_t)(r + a) * dp + c0;
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++)
            acc[a][c] = att_ftz_if256(
                _mm256_mul_ps(al, _mm256_load_ps(u + 8 * c)), flush);
    }
    for (int kk = 0; kk < nk; kk++) {
        const float *vr = V + (size_t)kk * dp + c0;
        __m256 vv[2];
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) vv[c] = _mm256_load_ps(vr + 8 * c);
#pragma GCC unroll 6
        for (int a = 0; a < R; a++) {
            __m256 w = _mm256_broadcast_ss(P + (r + a) * ATT_BK + kk);
#pragma GCC unroll 2
            for (int c = 0; c < 2; c++)
                acc[a][c] = att_ftz_if256(
                    _mm256_fmadd_ps(w, vv[c], acc[a][c]), flush);
        }
    }
#pragma GCC unroll 6
    for (int a = 0; a < R; a++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++)
            _mm256_store_ps(U + (size_t)(r + a) * dp + c0 + 8 * c,
                            acc[a][c]);
}
static T256 ATT_INLINE void pv_tile_256_f(float *U, const float *P,
    const float *V, const float *alpha, int M, int dp, int nk,
    const int flush)
{
    for (int c0 = 0; c0 < dp; c0 += 16) {
        int r = 0;
        if (att_tune.six)
            for (; r + 6 <= M; r += 6)
                pv_block_256(U, P, V, alpha, dp, r, c0, nk, 6, flush);
        for (; r + 4 <= M; r += 4)
            pv_block_256(U, P, V, alpha, dp, r, c0, nk, 4, flush);
        for (; r < M; r += 2)
            pv_block_256(U, P, V, alpha, dp, r, c0, nk, 2, flush);
    }
}
static T256 void pv_tile_256(float *U, const float *P, const float *V,
                             const float *alpha, int M, int dp)
{
    pv_tile_256_f(U, P, V, alpha, M, dp, ATT_BK, 0);
}
static T256 void st_tile_256(float *S, const float *Q, const float *Kt,
                             const float *V, float *U, int M, int dp,
                             const int *nvalid, float *m, float *l,
                             float *alpha)
{
    int nk = 16 * att_seen_vectors(nvalid, M);
    s_tile_256_f(S, Q, Kt, M, dp, nk, 0);
    sm_tile_256(S, M, nvalid, m, l, alpha);
    pv_tile_256_f(U, S, V, alpha, M, dp, nk, 0);
}
static T256 void att_exp2_8(float *y, const float *x)
{
    _mm256_storeu_ps(y, exp2_256(_mm256_loadu_ps(x)));
}
/* W5.2 The bfloat16 path */
static T256 float att_dot1_emul256(float z, uint32_t a, uint32_t b)
{
    const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
    __m256i va = _mm256_set1_epi32((int)att_daz_pair(a));
    __m256i vb = _mm256_set1_epi32((int)att_daz_pair(b));
    __m256 r = att_ftz256(_mm256_fmadd_ps(
        _mm256_castsi256_ps(_mm256_and_si256(va, hi)),
        _mm256_castsi256_ps(_mm256_and_si256(vb, hi)),
        att_ftz256(_mm256_set1_ps(z))));
    r = att_ftz256(_mm256_fmadd_ps(
        _mm256_castsi256_ps(_mm256_slli_epi32(va, 16)),
        _mm256_castsi256_ps(_mm256_slli_epi32(vb, 16)), r));
    return _mm256_cvtss_f32(r);
}
static T256 ATT_INLINE __m256i att_bf16_256(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i e = _mm256_and_si256(u, _mm256_set1_epi32(0x7f800000));
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16),
                                   _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, lsb),
                                 _mm256_set1_epi32(0x7fff));
    __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
    __m256i sub = _mm256_cmpeq_epi32(e, _mm256_setzero_si256());
    r = _mm256_blendv_epi8(r, _mm256_or_si256(
            u, _mm256_set1_epi32(0x400000)), nan);
    r = _mm256_blendv_epi8(r, _mm256_and_si256(
            u, _mm256_set1_epi32(INT32_MIN)), sub);
    return _mm256_and_si256(r, _mm256_set1_epi32((int)0xffff0000u));
}
static T256 ATT_INLINE __m256 att_bf16f_256(__m256 x)
{
    return _mm256_castsi256_ps(att_bf16_256(x));
}
static T256 ATT_INLINE __m256i att_emin256(__m256i m, __m256 r)
{
    __m256i a = _mm256_and_si256(_mm256_castps_si256(r),
                                 _mm256_set1_epi32(INT32_MAX));
    return _mm256_min_epu32(m, _mm256_sub_epi32(a, _mm256_set1_epi32(1)));
}
static T256 int att_emin_exp256(__m256i m)
{
    uint32_t lane[8], lo = UINT32_MAX;
    _mm256_storeu_si256((__m256i *)lane, m);
    for (int i = 0; i < 8; i++) lo = lane[i] < lo ? lane[i] : lo;
    return lo == UINT32_MAX ? 255 : (int)((lo + 1) >> 23);
}
static T256 int att_wide_rows256(float *out, const float *in, int pairs,
                                 int n)
{
    __m256i m = _mm256_set1_epi32(-1);
    for (int p = 0; p < pairs; p++) {
        const float *e = in + (size_t)2 * p * n, *o = e + n;
        float *d0 = out + (size_t)2 * p * n, *d1 = d0 + n;
        for (int i = 0; i < n; i += 8) {
            __m256 re = att_bf16f_256(_mm256_loadu_ps(e + i));
            __m256 ro = att_bf16f_256(_mm256_loadu_ps(o + i));
            m = att_emin256(att_emin256(m, re), ro);
            _mm256_storeu_ps(d0 + i, ro);
            _mm256_storeu_ps(d1 + i, re);
        }
    }
    return att_emin_exp256(m);
}
static T256 int att_wide_q256(float *Q, size_t n)
{
    __m256i m = _mm256_set1_epi32(-1);
    for (size_t i = 0; i < n; i += 8) {
        __m256 r = att_bf16f_256(_mm256_loadu_ps(Q + i));
        m = att_emin256(m, r);
        _mm256_storeu_ps(Q + i, _mm256_permute_ps(r, 0xB1));
    }
    return att_emin_exp256(m);
}
static T256 int att_wide_p256(float *S, float *l, const float *lsave,
                              const float *alpha, int M)
{
    __m256i m = _mm256_set1_epi32(-1);
    for (int r = 0; r < M; r++) {
        float *x = S + (size_t)r * ATT_BK, lane[16], sum = 0;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (int i = 0; i < ATT_BK; i += 16) {
            __m256 r0 = att_bf16f_256(_mm256_loadu_ps(x + i));
            __m256 r1 = att_bf16f_256(_mm256_loadu_ps(x + i + 8));
            acc0 = _mm256_add_ps(acc0, r0);
            acc1 = _mm256_add_ps(acc1, r1);
            m = att_emin256(att_emin256(m, r0), r1);
            _mm256_storeu_ps(x + i, _mm256_permute_ps(r0, 0xB1));
            _mm256_storeu_ps(x + i + 8, _mm256_permute_ps(r1, 0xB1));
        }
        _mm256_storeu_ps(lane, acc0);
        _mm256_storeu_ps(lane + 8, acc1);
        for (int i = 0; i < 16; i++) sum += lane[i];
        l[r] = lsave[r] * alpha[r] + sum;
    }
    return att_emin_exp256(m);
}
static T256 void s_tile_wide256(float *S, const float *Q, const float *Kt,
                                int M, int dp, float sc, int flush)
{
    if (flush) s_tile_256_f(S, Q, Kt, M, dp, ATT_BK, 1);
    else s_tile_256_f(S, Q, Kt, M, dp, ATT_BK, 0);
    for (int i = 0; i < M * ATT_BK; i += 8)
        _mm256_store_ps(S + i, _mm256_mul_ps(_mm256_load_ps(S + i),
                                             _mm256_set1_ps(sc)));
}
static T256 void pv_tile_wide256(float *U, const float *P, const float *V,
                                 const float *alpha, int M, int dp,
                                 int flush)
{
    const __m256 mag = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX));
    __m256 small = _mm256_setzero_ps();
    for (int r = 0; r < M && !flush; r++)
        for (int i = 0; i < dp; i += 8) {
            __m256 x = _mm256_mul_ps(_mm256_set1_ps(alpha[r]),
                                     _mm256_load_ps(U + (size_t)r * dp + i));
            small = _mm256_or_ps(small, _mm256_and_ps(
                _mm256_cmp_ps(_mm256_and_ps(x, mag),
                              _mm256_set1_ps(0x1p-102f), _CMP_LT_OQ),
                _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NEQ_OQ)));
        }
    if (flush || _mm256_movemask_ps(small))
        pv_tile_256_f(U, P, V, alpha, M, dp, ATT_BK, 1);
    else
        pv_tile_256_f(U, P, V, alpha, M, dp, ATT_BK, 0);
}
/* 5.2 The interface */
#endif
/* W5.1 The other micro-kernels */
static double att_poly_abs(int j, double f) /* bound on |p^(j)| */
{
    double b = 0;
    for (int k = j; k <= 6; k++) {
        double t = fabs((double)att_exp2_c[k]) * pow(fabs(f), k - j);
        for (int i = 0; i < j; i++) t *= k - i;
        b += t;
    }
    return b;
}
double rope_exp2_poly_bound(void)
{
    const double L = 0.693147180559945309, h = ldexp(1, -16);
    double e2 = att_poly_abs(2, 1.0) + 2 * L * att_poly_abs(1, 1.0)
                + L * L * att_poly_abs(0, 1.0);
    double emax = 0, dmax = 0;
    for (long i = 0; i <= 65536; i++) {
        double f = i * h, p = 0, dp = 0;
        for (int k = 6; k >= 0; k--) {
            dp = dp * f + p;
            p = p * f + att_exp2_c[k];
        }
        double e = p * exp2(-f) - 1, de = (dp - p * L) * exp2(-f);
        emax = fabs(e) > emax ? fabs(e) : emax;
        dmax = fabs(de) > dmax ? fabs(de) : dmax;
    }
    return emax + h / 2 * (dmax + h / 2 * e2);
}
int rope_attention_tune(int knob, int value)
{
    int *sw = knob == ROPE_TUNE_STEP ? &att_tune.step
            : knob == ROPE_TUNE_TAYLOR ? &att_tune.taylor
            : knob == ROPE_TUNE_ITEM_BLOCKS ? &att_tune.ib
            : knob == ROPE_TUNE_ROWS ? &att_tune.rows
            : knob == ROPE_TUNE_PACK ? &att_tune.pack
            : knob == ROPE_TUNE_REDUCE ? &att_tune.reduce
            : knob == ROPE_TUNE_SIX ? &att_tune.six
            : knob == ROPE_TUNE_PREFETCH ? &att_tune.prefetch
            : knob == ROPE_TUNE_SPIN ? &att_tune.spin : NULL;
    int hi = knob == ROPE_TUNE_ITEM_BLOCKS ? ATT_IB : 1;
    int lo = knob == ROPE_TUNE_ITEM_BLOCKS ? 1 : 0;
    if (!sw || value < lo || value > hi) return -1;
    int old = *sw;
    *sw = value;
    return old;
}
static ATT_VECTORIZE void att_scale_q(float *restrict x, float c, int d)
{
    for (int i = 0; i < d; i++) x[i] *= c;
}
static void att_prefetch_read(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) __builtin_prefetch(x + i, 0);
}
static void att_prefetch_write(float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) __builtin_prefetch(x + i, 1);
}
int rope_simd_available(rope_simd s)
{
    switch (s) {
    case ROPE_SIMD_SCALAR: return 1;
#if ATT_X86
    case ROPE_SIMD_AVX2:
        return __builtin_cpu_supports("avx2")
               && __builtin_cpu_supports("fma");
    case ROPE_SIMD_AVX512:
        return __builtin_cpu_supports("avx512f")
               && __builtin_cpu_supports("avx512dq")
               && __builtin_cpu_supports("fma");
#endif
    default: return 0;
    }
}
static const char *const att_simd_names[] = {
    "auto", "scalar", "avx2", "avx512"
};

const char *rope_simd_name(rope_simd s)
{
    return s >= ROPE_SIMD_AUTO && s <= ROPE_SIMD_AVX512
           ? att_simd_names[s] : "?";
}

int rope_simd_parse(const char *name, rope_simd *out)
{
    for (int i = 0; i <= ROPE_SIMD_AVX512; i++)
        if (name && !strcmp(name, att_simd_names[i])) {
            *out = (rope_simd)i;
            return 0;
        }
    return 1;
}
rope_simd rope_simd_resolve(rope_simd want)
{
    if (want == ROPE_SIMD_AUTO) {
        rope_simd env;
        if (!rope_simd_parse(getenv("ROPE_SIMD"), &env)) want = env;
    }
    if (want != ROPE_SIMD_AUTO && rope_simd_available(want))
        return want;
    if (rope_simd_available(ROPE_SIMD_AVX512)) return ROPE_SIMD_AVX512;
    if (rope_simd_available(ROPE_SIMD_AVX2)) return ROPE_SIMD_AVX2;
    return ROPE_SIMD_SCALAR;
}
static att_kernels att_pick(rope_simd s)
{
    att_kernels k = { s_tile_scalar, sm_tile_scalar, pv_tile_scalar,
                      att_rotate_row, NULL };
#if ATT_X86
    if (s == ROPE_SIMD_AVX512)
        k = (att_kernels){ s_tile_512, sm_tile_512, pv_tile_512,
                           att_rotate_row_512, st_tile_512 };
    else if (s == ROPE_SIMD_AVX2)
        k = (att_kernels){ s_tile_256, sm_tile_256, pv_tile_256,
                           att_rotate_row, st_tile_256 };
#else
    (void)s;
#endif
    if (!att_tune.step) k.st = NULL;
    return k;
}
void rope_exp2_vec(float *y, const float *x, int n, rope_simd s)
{
    s = rope_simd_resolve(s);
    for (int i = 0; i < n; i++) {
        float t[16] = {0}, r[16];
        t[0] = x[i];
#if ATT_X86
        if (s == ROPE_SIMD_AVX512) att_exp2_16(r, t);
        else if (s == ROPE_SIMD_AVX2) att_exp2_8(r, t);
        else
#endif
            r[0] = exp2f(t[0]);
        y[i] = r[0];
    }
}
/* W5.2 The bfloat16 path */
static int att_has_amx(void)
{
#if ATT_X86 && ATT_AMX
    if (!rope_simd_available(ROPE_SIMD_AVX512)) return 0;
    pthread_once(&att_amx_once, att_amx_init);
    return att_amx_ok;
#else
    return 0;
#endif
}
static int att_has_avx512bf16(void)
{
#if ATT_X86
    return rope_simd_available(ROPE_SIMD_AVX512)
           && __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}
static att_bf16_kernels att_bf16_pick(rope_simd s, const char *force)
{
    att_bf16_kernels k = { s16_tile_scalar, pv16_tile_scalar,
                           pair16_scalar, row16_scalar, 0 };
    int emul = force && !strcmp(force, "emulate");
    int dpbf = force && !strcmp(force, "dpbf16");
    if (force && !strcmp(force, "scalar")) return k;
#if ATT_X86
    if (s == ROPE_SIMD_AVX2 && !emul) k.wide = 1;
    if (s == ROPE_SIMD_AVX512 || emul) {
        if (!rope_simd_available(ROPE_SIMD_AVX512)) return k;
        k = (att_bf16_kernels){ s16_tile_emul, pv16_tile_emul,
                                pair16_512, row16_512, 0 };
        if (!emul && att_has_avx512bf16()) {
            k.s = s16_tile_bf16;
            k.pv = pv16_tile_bf16;
        }
#if ATT_AMX
        if (!emul && !dpbf && att_has_amx() && att_has_avx512bf16()) {
            k.s = s16_tile_amx;
            k.pv = pv16_tile_amx;
        }
#endif
    }
#else
    (void)s; (void)emul;
#endif
    (void)dpbf;
    return k;
}
const char *rope_bf16_kernels(rope_simd s)
{
    att_bf16_kernels k = att_bf16_pick(rope_simd_resolve(s),
                                       getenv("ROPE_BF16"));
#if ATT_X86 && ATT_AMX
    if (k.s == s16_tile_amx) return "amx";
#endif
#if ATT_X86
    if (k.s == s16_tile_bf16) return "vdpbf16ps";
    if (k.s == s16_tile_emul) return "avx512f-emulation";
    if (k.wide) return "avx2-emulation";
#endif
    return "portable-emulation";
}
int rope_bf16_native(rope_simd s)
{
    return !strcmp(rope_bf16_kernels(s), "vdpbf16ps");
}
uint16_t rope_bf16_round(float x) { return att_bf16(x); }
float rope_bf16_to_float(uint16_t h) { return att_bf16_f(h); }
int rope_bf16_amx(rope_simd s)
{
    return !strcmp(rope_bf16_kernels(s), "amx");
}
int rope_bf16_amx_dot(float *z, const uint16_t *a, const uint16_t *b,
                      int n)
{
    if (n < 2 || n > 32 || n % 2 || !att_has_amx()) return 1;
#if ATT_X86 && ATT_AMX
    att_amx_dot1(z, a, b, n);
#else
    (void)z; (void)a; (void)b;
#endif
    return 0;
}
static double att_amx_rand(uint64_t *st)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*st >> 11) * 0x1p-53;
}
static uint16_t att_amx_operand(uint64_t *st, int emax)
{
    double m = 1 + att_amx_rand(st);
    int e = (int)(att_amx_rand(st) * (2 * emax + 1)) - emax;
    return att_bf16((float)ldexp(att_amx_rand(st) < 0.5 ? -m : m, e));
}
double rope_bf16_amx_error(long lanes, uint64_t seed)
{
    double worst = 0;
    if (!att_has_amx()) return -1;
    for (long i = 0; i < lanes; i++) {
        uint16_t a[32], b[32];
        int n = i % 2 ? 16 : 32, kind = (int)(i % 3), emax = kind == 2 ? 30 : 12;
        double sum = 0, mag = 0;
        for (int k = 0; k < n; k++) {
            a[k] = att_amx_operand(&seed, emax / 2);
            b[k] = att_amx_operand(&seed, emax / 2);
            double p = (double)att_bf16_f(a[k]) * att_bf16_f(b[k]);
            sum += p;
            mag += fabs(p);
        }
        float z = kind == 1 ? -(float)sum
                            : att_bf16_f(att_amx_operand(&seed, emax));
        float r = z;
        rope_bf16_amx_dot(&r, a, b, n);
        double e = fabs((double)r - ((double)z + sum));
        worst = fmax(worst, e / (ldexp(1, -24) * (fabs(z) + mag)));
    }
    return worst;
}
int rope_bf16_amx_probe(int which, double *got, double *want,
                        double *mag)
{
    uint16_t a[32] = {0}, b[32] = {0};
    float z = which == 2 ? -1.0f : which == 3 ? 0.0f : 1.0f;
    switch (which) {
    case 0: /* sixteen products 2^-25 */
        for (int k = 0; k < 32; k += 2) {
            a[k] = att_bf16(0x1p-13f);
            b[k] = att_bf16(0x1p-12f);
        }
        break;
    case 1: /* one pair (2^-24, 2^-26) */
        a[0] = b[0] = att_bf16(0x1p-12f);
        a[1] = b[1] = att_bf16(0x1p-13f);
        break;
    case 2: /* one pair (1, 3 * 2^-25) */
        a[0] = b[0] = att_bf16(1.0f);
        a[1] = att_bf16(0x3p-13f);
        b[1] = att_bf16(0x1p-12f);
        break;
    case 3: /* pairs (1, -1) and (2^-30, 0) */
        a[0] = b[0] = b[1] = att_bf16(1.0f);
        a[1] = att_bf16(-1.0f);
        a[2] = b[2] = att_bf16(0x1p-15f);
        break;
    default:
        return 1;
    }
    float r = z;
    double s = 0, m = fabs(z);
    for (int k = 0; k < 32; k++) {
        double p = (double)att_bf16_f(a[k]) * att_bf16_f(b[k]);
        s += p;
        m += fabs(p);
    }
    if (rope_bf16_amx_dot(&r, a, b, 32)) return 1;
    *got = r;
    *want = z + s;
    *mag = m;
    return 0;
}
int rope_bf16_round_native(uint16_t *out, const float *x, int n)
{
#if ATT_X86
    if (!att_has_avx512bf16()) return 1;
    for (int i = 0; i < n; i++) out[i] = att_bf16_cvt_native(x[i]);
    return 0;
#else
    (void)out; (void)x; (void)n;
    return 1;
#endif
}
int rope_bf16_dot(float *z, const uint32_t *a, const uint32_t *b,
                  int n, int how)
{
    if (how == 0) {
        for (int i = 0; i < n; i++) {
            float t = att_dp_step(z[i], att_bf16_f((uint16_t)(a[i] >> 16)),
                                  att_bf16_f((uint16_t)(b[i] >> 16)));
            z[i] = att_dp_step(t, att_bf16_f((uint16_t)a[i]),
                               att_bf16_f((uint16_t)b[i]));
        }
        return 0;
    }
#if ATT_X86
    if (how == 1 && rope_simd_available(ROPE_SIMD_AVX512)) {
        for (int i = 0; i < n; i++) z[i] = att_dot1_emul(z[i], a[i], b[i]);
        return 0;
    }
    if (how == 3 && rope_simd_available(ROPE_SIMD_AVX2)) {
        for (int i = 0; i < n; i++)
            z[i] = att_dot1_emul256(z[i], a[i], b[i]);
        return 0;
    }
    if (how == 2 && att_has_avx512bf16()) {
        for (int i = 0; i < n; i++) z[i] = att_dot1_bf16(z[i], a[i], b[i]);
        return 0;
    }
#endif
    return 1;
}
#if ATT_X86
static double att_best_rate(float (*chains)(long), long iters,
                            double flops, double seconds)
{
    struct timespec t0, t1;
    double best = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        struct timespec a;
        clock_gettime(CLOCK_MONOTONIC, &a);
        float r = chains(iters);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (double)(t1.tv_sec - a.tv_sec)
                   + 1e-9 * (double)(t1.tv_nsec - a.tv_nsec);
        double g = flops * (double)iters / t / 1e9;
        best = g > best && r == r ? g : best;
    } while ((double)(t1.tv_sec - t0.tv_sec)
             + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) < seconds);
    return best;
}
#endif
double rope_bf16_dot_peak(double seconds)
{
#if ATT_X86
    if (!att_has_avx512bf16()) return 0;
    return att_best_rate(att_dot_chains, 1000000, 2.0 * 32 * 24, seconds);
#else
    (void)seconds;
    return 0;
#endif
}
double rope_bf16_amx_peak(double seconds)
{
#if ATT_X86 && ATT_AMX
    if (!att_has_amx()) return 0;
    return att_best_rate(att_amx_chains, 100000, 2.0 * 16 * 16 * 32 * 4,
                         seconds);
#else
    (void)seconds;
    return 0;
#endif
}
double rope_bf16_error_bound(int head_dim, long kv_len, double qk,
                             double vmax)
{
    const double u = ldexp(1, -24), ub = ldexp(1, -8);
    double d = head_dim, n = (double)kv_len + (kv_len + ATT_BK - 1) / ATT_BK;
    double gd = (d + 2) * u / (1 - (d + 2) * u);
    double ds = gd * d * qk * 1.4426950408889634 / sqrt(d);
    double eps = exp2(ds) * (1 + 4 * u) * (1 + ub) - 1;
    double gn = n * u / (1 - n * u);
    return vmax * (2 * eps / (1 - eps) + 2 * gn / (1 - gn) + 3 * u);
}
/* 5.8 The driver, threads and load balance */
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
    /* W5.2 The bfloat16 path */
    uint16_t *Q16, *Kt16, *Vt16, *P16; /* bf16 operands */
    float *Kw, *Vw; /* the AVX2 emulation's widened tiles */
    int e16q[ATT_IB], e16k, e16v; /* their smallest exponents */
    /* 5.8 The driver, threads and load balance */
    float *lsave;
    float *pack; size_t pack_n; int pack_d; /* packed tiles, their d */
} att_ws;
/* W5.4 The workspace of a call */
static atomic_long att_nallocs;
static void *att_alloc(size_t bytes)
{
    void *ptr = NULL;
    bytes = (bytes + 63) / 64 * 64;
    atomic_fetch_add(&att_nallocs, 1);
    if (posix_memalign(&ptr, 64, bytes ? bytes : 64)) return NULL;
    return ptr;
}
long rope_attention_allocations(void)
{
    return atomic_load(&att_nallocs);
}
static int att_ws_init(att_ws *w, const att_job *J)
{
    size_t M = (size_t)J->M, dp = (size_t)J->dp;
    size_t tile = sizeof(float) * dp * ATT_BK, G = ATT_IB;
    w->Q = att_alloc(sizeof(float) * G * M * dp);
    w->U = att_alloc(sizeof(float) * G * M * dp);
    w->S = att_alloc(sizeof(float) * M * ATT_BK);
    w->m = att_alloc(sizeof(float) * G * M);
    w->l = att_alloc(sizeof(float) * G * M);
    w->alpha = att_alloc(sizeof(float) * M);
    w->tmp = att_alloc(sizeof(float) * dp);
    w->nvalid = att_alloc(sizeof(int) * M);
    w->Kt = att_alloc(tile);
    w->Vt = att_alloc(tile);
    if (w->Kt) memset(w->Kt, 0, tile); /* the padding stays zero */
    if (w->Vt) memset(w->Vt, 0, tile);
    /* W5.2 The bfloat16 path */
    w->Q16 = att_alloc(sizeof(uint16_t) * G * M * dp);
    w->Kt16 = att_alloc(sizeof(uint16_t) * dp * ATT_BK);
    w->Vt16 = att_alloc(sizeof(uint16_t) * dp * ATT_BK);
    w->P16 = att_alloc(sizeof(uint16_t) * M * ATT_BK);
    w->lsave = att_alloc(sizeof(float) * M);
    w->Kw = att_alloc(sizeof(float) * dp * ATT_BK);
    w->Vw = att_alloc(sizeof(float) * dp * ATT_BK);
    /* W5.4 The workspace of a call */
    return w->Q && w->U && w->S && w->m && w->l && w->alpha
           && w->tmp && w->nvalid && w->Kt && w->Vt
           && w->Q16 && w->Kt16 && w->Vt16 && w->P16 && w->lsave
           && w->Kw && w->Vw;
}

static void att_ws_free(att_ws *w)
{
    free(w->Q); free(w->U); free(w->S); free(w->m);
    free(w->l); free(w->alpha); free(w->tmp); free(w->nvalid);
    free(w->Kt); free(w->Vt);
    w->Q = w->U = w->S = w->m = w->l = w->alpha = w->tmp = NULL;
    w->Kt = w->Vt = NULL;
    w->nvalid = NULL;
    /* W5.2 The bfloat16 path */
    free(w->Q16); free(w->Kt16); free(w->Vt16); free(w->P16); free(w->lsave);
    free(w->Kw); free(w->Vw);
    w->Q16 = w->Kt16 = w->Vt16 = w->P16 = NULL;
    w->lsave = w->Kw = w->Vw = NULL;
    /* W5.4 The workspace of a call */
    w->M = w->d = 0;
}
static pthread_key_t att_ws_key;
static int att_ws_key_ok; /* 0 if no key could be made */
static pthread_once_t att_pool_once = PTHREAD_ONCE_INIT;
static void att_pool_setup(void);
static void att_ws_destroy(void *arg)
{
    att_ws *w = arg;
    att_ws_free(w);
    free(w->part);
    free(w->pack);
    free(w);
}
static att_ws *att_ws_get(const att_job *J)
{
    pthread_once(&att_pool_once, att_pool_setup);
    if (!att_ws_key_ok) return NULL; /* reported as out of memory */
    att_ws *w = pthread_getspecific(att_ws_key);
    if (w && w->Q && w->M == J->M && w->d == J->d) return w;
    if (!w) {
        if (!(w = att_alloc(sizeof *w))) return NULL;
        memset(w, 0, sizeof *w);
        if (pthread_setspecific(att_ws_key, w)) { free(w); return NULL; }
    }
    att_ws_free(w);
    if (!att_ws_init(w, J)) { att_ws_free(w); return NULL; }
    w->M = J->M; w->d = J->d;
    return w;
}
static float *att_part_get(const att_job *J, size_t n)
{
    att_ws *w = att_ws_get(J);
    if (!w) return NULL;
    if (w->part_n < n) {
        free(w->part);
        w->part = att_alloc(sizeof(float) * n);
        w->part_n = w->part ? n : 0;
    }
    return w->part;
}
static size_t att_ws_floats(const att_job *J)
{
    size_t M = (size_t)J->M, dp = (size_t)J->dp;
    /* W5.2 The bfloat16 path */
    size_t bf16 = (ATT_IB * M * dp + 2 * dp * ATT_BK + M * ATT_BK) / 2 + M
                  + 2 * dp * ATT_BK + 7 * 16;
    /* W5.4 The workspace of a call */
    return ATT_IB * M * (2 * dp + 2) + M * (ATT_BK + 2) + dp
           + 2 * ATT_BK * dp + 10 * 16 + bf16;
}
/* W5.2 The bfloat16 path */
static void att_plan_bf16(att_job *J, const rope_attention_params *p)
{
    J->bf16 = p->kv_dtype == ROPE_DTYPE_BF16;
    if (!J->bf16) return;
    J->k16 = att_bf16_pick(rope_simd_resolve(p->simd),
                           getenv("ROPE_BF16"));
    J->qs16 = J->qscale;
    J->qscale = 1.0f;
}
static void att_round_q_bf16(att_job *J, att_ws *w, int nb)
{
    size_t rows = (size_t)nb * J->M;
#if ATT_X86
    if (J->k16.wide) {
        for (int kb = 0; kb < nb; kb++)
            w->e16q[kb] = att_wide_q256(w->Q + (size_t)kb * J->M * J->dp,
                                        (size_t)J->M * J->dp);
        return;
    }
#endif
    for (size_t r = 0; r < rows; r++)
        J->k16.row(w->Q16 + r * J->dp, w->Q + r * J->dp, J->dp);
}
static void att_pack_tile_bf16(att_job *J, att_ws *w)
{
    int dp = J->dp;
#if ATT_X86
    if (J->k16.wide) {
        w->e16k = att_wide_rows256(w->Kw, w->kt, dp / 2, ATT_BK);
        w->e16v = att_wide_rows256(w->Vw, w->vt, ATT_BK / 2, dp);
        return;
    }
#endif
    for (int p = 0; p < dp / 2; p++)
        J->k16.pair(w->Kt16 + (size_t)p * 2 * ATT_BK,
                    w->kt + (size_t)2 * p * ATT_BK,
                    w->kt + (size_t)(2 * p + 1) * ATT_BK, ATT_BK);
    for (int q = 0; q < ATT_BK / 2; q++)
        J->k16.pair(w->Vt16 + (size_t)q * 2 * dp,
                    w->vt + (size_t)2 * q * dp,
                    w->vt + (size_t)(2 * q + 1) * dp, dp);
}
#if ATT_X86 && ATT_AMX
static void att_tile_block_amx(att_job *J, att_ws *w, size_t at,
                               const int *nv);
#endif
static void att_tile_block_bf16(att_job *J, att_ws *w, size_t at,
                                const int *nv)
{
    int M = J->M, dp = J->dp;
#if ATT_X86 && ATT_AMX
    if (J->k16.s == s16_tile_amx) {
        att_tile_block_amx(J, w, at, nv);
        return;
    }
#endif
#if ATT_X86
    if (J->k16.wide) {
        int ep, eq = w->e16q[at / (size_t)M];
        s_tile_wide256(w->S, w->Q + at * dp, w->Kw, M, dp, J->qs16,
                       eq + w->e16k < 142);
        memcpy(w->lsave, w->l + at, sizeof(float) * M);
        J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
        ep = att_wide_p256(w->S, w->l + at, w->lsave, w->alpha, M);
        pv_tile_wide256(w->U + at * dp, w->S, w->Vw, w->alpha, M, dp,
                        ep + w->e16v < 142);
        return;
    }
#endif
    J->k16.s(w->S, w->Q16 + at * dp, w->Kt16, M, dp, J->qs16);
    memcpy(w->lsave, w->l + at, sizeof(float) * M);
    J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
    for (int r = 0; r < M; r++) {
        float sum = J->k16.row(w->P16 + (size_t)r * ATT_BK,
                               w->S + (size_t)r * ATT_BK, ATT_BK);
        w->l[at + r] = w->lsave[r] * w->alpha[r] + sum;
    }
    J->k16.pv(w->U + at * dp, w->P16, w->Vt16, w->alpha, M, dp);
}
#if ATT_X86 && ATT_AMX
static TAMX void att_round_p_amx(uint16_t *P, const float *S, int M)
{
    for (int i = 0; i < M * ATT_BK; i += 32) {
        __m512bh h = _mm512_cvtne2ps_pbh(_mm512_load_ps(S + i + 16),
                                         _mm512_load_ps(S + i));
        _mm512_store_si512((void *)(P + i), (__m512i)h);
    }
}
static void att_tile_block_amx(att_job *J, att_ws *w, size_t at,
                               const int *nv)
{
    int M = J->M, dp = J->dp;
    s16_tile_amx(w->S, w->Q16 + at * dp, w->Kt16, M, dp, J->qs16);
    memcpy(w->lsave, w->l + at, sizeof(float) * M);
    J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
    att_round_p_amx(w->P16, w->S, M);
    memcpy(w->l + at, w->lsave, sizeof(float) * M);
    att_pv_amx(w->U + at * dp, w->P16, w->Vt16, w->alpha, M, dp,
               w->l + at);
}
#endif
/* 5.8 The driver, threads and load balance */
static void att_pack_tile(att_job *J, att_ws *w, long bg, int t,
                          float *Kt, float *Vt)
{
    const rope_attention_params *p = J->p;
    int d = J->d, dp = J->dp, nk = p->kv_len, Hk = p->n_kv_heads;
    long b = bg / Hk, g = bg % Hk, j0 = (long)t * ATT_BK;
    int nt = nk - j0 < ATT_BK ? (int)(nk - j0) : ATT_BK;
    for (int jj = 0; jj < nt; jj++) {
        size_t off = (((size_t)b * nk + j0 + jj) * Hk + g) * d;
        const float *kr = J->k + off;
        if (p->freqs_cos && !p->keys_rotated) {
            long pos = p->start_pos + j0 + jj;
            J->ker.rot(w->tmp, kr, p->freqs_cos + pos * d,
                       p->freqs_sin + pos * d, d, p->pairing);
            kr = w->tmp;
        }
        for (int i = 0; i < d; i++) Kt[(size_t)i * ATT_BK + jj] = kr[i];
        memcpy(Vt + (size_t)jj * dp, J->v + off, sizeof(float) * d);
    }
    for (int jj = nt; jj < ATT_BK; jj++) {
        for (int i = 0; i < d; i++) Kt[(size_t)i * ATT_BK + jj] = 0;
        memset(Vt + (size_t)jj * dp, 0, sizeof(float) * d);
    }
}
static int att_heads_in(const att_job *J, int h0)
{
    return J->rep - h0 < J->hb ? J->rep - h0 : J->hb;
}
static void att_load_q(att_job *J, att_ws *w, int kb, long bg, int h0,
                       int q0, int nq)
{
    const rope_attention_params *p = J->p;
    int d = J->d, dp = J->dp, H = p->n_heads, n = p->seq_len;
    long b = bg / p->n_kv_heads, g = bg % p->n_kv_heads;
    float *Q = w->Q + (size_t)kb * J->M * dp;
    int nh = att_heads_in(J, h0);
    for (int r = 0; r < J->M; r++)
        if (r % J->bq >= nq || r / J->bq >= nh)
            memset(Q + (size_t)r * dp, 0, sizeof(float) * dp);
    for (int il = 0; il < nq; il++) {
        /* W5.1 The other micro-kernels */
        if (att_tune.prefetch && il + 2 < nq) {
            long i2 = q0 + il + 2;
            att_prefetch_read(J->q + ((b * n + i2) * H + g * J->rep + h0) * d,
                              (size_t)nh * d);
            if (p->freqs_cos) {
                long pos2 = p->start_pos + p->kv_len - n + i2;
                att_prefetch_read(p->freqs_cos + pos2 * d, (size_t)d);
                att_prefetch_read(p->freqs_sin + pos2 * d, (size_t)d);
            }
        }
        /* 5.8 The driver, threads and load balance */
        for (int hl = 0; hl < nh; hl++) {
            long h = g * J->rep + h0 + hl, i = q0 + il;
            const float *x = J->q + ((b * n + i) * H + h) * d;
            float *dst = Q + (size_t)(hl * J->bq + il) * dp;
            memset(dst + d, 0, sizeof(float) * (dp - d));
            if (p->freqs_cos) {
                long pos = p->start_pos + p->kv_len - n + i;
                J->ker.rot(dst, x, p->freqs_cos + pos * d,
                           p->freqs_sin + pos * d, d, p->pairing);
            } else {
                memcpy(dst, x, sizeof(float) * d);
            }
            att_scale_q(dst, J->qscale, d);
        }
    }
}
static long att_last_key(const att_job *J, long i)
{
    const rope_attention_params *p = J->p;
    return p->causal ? (long)p->kv_len - p->seq_len + i
                     : (long)p->kv_len - 1;
}
static void att_tile_block(att_job *J, att_ws *w, int kb, int q0,
                           int nq, int t)
{
    int M = J->M, dp = J->dp;
    long j0 = (long)t * ATT_BK;
    long lo = att_last_key(J, q0), hi = att_last_key(J, q0 + nq - 1);
    size_t at = (size_t)kb * M;
    const int *nv = NULL;
    if (j0 > hi) return;
    if (j0 + ATT_BK - 1 > lo) {
        for (int r = 0; r < M; r++) {
            int il = r % J->bq;
            long L = il < nq ? att_last_key(J, q0 + il) : hi;
            long c = L - j0 + 1;
            w->nvalid[r] = (int)(c < 0 ? 0 : c > ATT_BK ? ATT_BK : c);
        }
        nv = w->nvalid;
    }
    if (J->bf16) { att_tile_block_bf16(J, w, at, nv); return; }
    if (J->ker.st) {
        J->ker.st(w->S, w->Q + at * dp, w->kt, w->vt, w->U + at * dp, M,
                  dp, nv, w->m + at, w->l + at, w->alpha);
        return;
    }
    J->ker.s(w->S, w->Q + at * dp, w->kt, M, dp);
    J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
    J->ker.pv(w->U + at * dp, w->S, w->vt, w->alpha, M, dp);
}
static void att_run_tiles(att_job *J, att_ws *w, long bg, int q0,
                          int nb, int t0, int t1)
{
    int M = J->M, dp = J->dp, n = J->p->seq_len, bq = J->bq;
    int q1 = q0 + nb * bq < n ? q0 + nb * bq : n; /* past the end */
    long hi = att_last_key(J, q1 - 1);
    memset(w->U, 0, sizeof(float) * nb * M * dp);
    for (int r = 0; r < nb * M; r++) { w->m[r] = -INFINITY; w->l[r] = 0; }
    if (J->bf16) att_round_q_bf16(J, w, nb);
    for (int t = t0; t < t1 && (long)t * ATT_BK <= hi; t++) {
        if (J->cache) {
            att_cache_tile(J->cache, t, bg, &w->kt, &w->vt);
        } else {
            att_pack_tile(J, w, bg, t, w->Kt, w->Vt);
            w->kt = w->Kt; w->vt = w->Vt;
        }
        if (J->bf16) att_pack_tile_bf16(J, w);
        for (int kb = 0; kb < nb; kb++) {
            int qk = q0 + kb * bq;
            att_tile_block(J, w, kb, qk, q1 - qk < bq ? q1 - qk : bq, t);
        }
    }
}
static float att_lse(float m, float l)
{
    return (float)(((double)m + log2((double)l)) * 0.6931471805599453);
}
static ATT_VECTORIZE int att_scale_row(float *restrict o,
                                       const float *restrict u,
                                       float inv, int d)
{
    int bad = 0;
    for (int c = 0; c < d; c++) {
        o[c] = u[c] * inv;
        bad |= !(fabsf(o[c]) < INFINITY);
    }
    return bad;
}
static void att_store(att_job *J, att_ws *w, int kb, long bg, int h0,
                      int q0, int nq)
{
    const rope_attention_params *p = J->p;
    int d = J->d, H = p->n_heads, n = p->seq_len, bad = 0;
    long b = bg / p->n_kv_heads, g = bg % p->n_kv_heads;
    size_t at = (size_t)kb * J->M;
    int nh = att_heads_in(J, h0);
    for (int il = 0; il < nq; il++) {
        /* W5.1 The other micro-kernels */
        if (att_tune.prefetch && il + 2 < nq)
            att_prefetch_write(J->out + ((b * n + q0 + il + 2) * H + g * J->rep
                                         + h0) * d, (size_t)nh * d);
        /* 5.8 The driver, threads and load balance */
        for (int hl = 0; hl < nh; hl++) {
            size_t r = at + (size_t)(hl * J->bq + il);
            long h = g * J->rep + h0 + hl;
            float *o = J->out + ((b * n + q0 + il) * H + h) * d;
            const float *u = w->U + r * J->dp;
            bad |= att_scale_row(o, u, 1.0f / w->l[r], d);
            bad |= !(fabsf(w->m[r]) < INFINITY && w->l[r] > 0
                     && w->l[r] < INFINITY);
            if (p->lse)
                p->lse[(b * n + q0 + il) * H + h] =
                    att_lse(w->m[r], w->l[r]);
        }
    }
    if (bad) atomic_store(&J->bad, 1);
}
static void att_store_partial(att_job *J, att_ws *w, long it);
/* W5.5 The packing pass */
static void att_run_pass(att_job *J, int pass, long n_items);
static size_t att_pack_floats(const att_job *J)
{
    const rope_attention_params *p = J->p;
    size_t cap = ROPE_ATTENTION_PACK_MIB * ATT_MIB / sizeof(float);
    size_t tile2 = (size_t)2 * J->dp * ATT_BK; /* K^T and V */
    size_t heads = (size_t)p->batch * (size_t)p->n_kv_heads;
    if (J->cache || J->nsplit > 1 || !att_tune.pack) return 0;
    if ((long)J->nhb * J->nib < 2) return 0; /* one item per tile */
    if (heads > cap / tile2 / (size_t)J->ntk) return 0;
    return heads * (size_t)J->ntk * tile2;
}
static float *att_pack_get(const att_job *J, size_t n)
{
    att_ws *w = att_ws_get(J);
    if (!w) return NULL;
    if (w->pack_n < n) {
        free(w->pack);
        w->pack = att_alloc(sizeof(float) * n);
        w->pack_n = w->pack ? n : 0;
        w->pack_d = 0;
    }
    if (w->pack && w->pack_d != J->d) {
        memset(w->pack, 0, sizeof(float) * w->pack_n);
        w->pack_d = J->d;
    }
    return w->pack;
}
static void att_pack_item(att_job *J, att_ws *w, long it)
{
    long per = (long)J->p->batch * J->p->n_kv_heads;
    float *kt = J->packed.tiles + (size_t)it * 2 * J->dp * ATT_BK;
    att_pack_tile(J, w, it % per, (int)(it / per), kt,
                  kt + (size_t)J->dp * ATT_BK);
}
static void att_prepack(att_job *J)
{
    const rope_attention_params *p = J->p;
    size_t n = att_pack_floats(J);
    float *t = n ? att_pack_get(J, n) : NULL;
    if (!t) return; /* the items pack their own tiles */
    J->packed = (rope_kv_cache){.batch = p->batch,
                                .n_kv_heads = p->n_kv_heads,
                                .head_dim = J->d, .dp = J->dp,
                                .len = p->kv_len,
                                .cap = (long)J->ntk * ATT_BK,
                                .tiles = t};
    att_run_pass(J, 3, (long)J->ntk * p->batch * p->n_kv_heads);
    J->cache = &J->packed;
}
/* 5.8 The driver, threads and load balance */
static void att_do_item(att_job *J, att_ws *w, long it)
{
    const rope_attention_params *p = J->p;
    long per = (long)p->batch * p->n_kv_heads, units = per * J->nhb;
    if (J->pass == 3) {
        att_pack_item(J, w, it);
    } else if (J->pass == 1) {
        long u = it % units;
        int G = att_tune.ib, b1 = J->nqb - (int)(it / units) * G;
        int b0 = b1 > G ? b1 - G : 0, h0 = (int)(u / per) * J->hb;
        for (int kb = 0; kb < b1 - b0; kb++) {
            int q0 = (b0 + kb) * J->bq;
            int nq = p->seq_len - q0 < J->bq ? p->seq_len - q0 : J->bq;
            att_load_q(J, w, kb, u % per, h0, q0, nq);
        }
        att_run_tiles(J, w, u % per, b0 * J->bq, b1 - b0, 0, J->ntk);
        for (int kb = 0; kb < b1 - b0; kb++) {
            int q0 = (b0 + kb) * J->bq;
            int nq = p->seq_len - q0 < J->bq ? p->seq_len - q0 : J->bq;
            att_store(J, w, kb, u % per, h0, q0, nq);
        }
    } else {
        long u = it / J->nsplit;
        int t0 = (int)(it % J->nsplit) * J->tiles_per_split;
        int t1 = t0 + J->tiles_per_split;
        t1 = t1 < J->ntk ? t1 : J->ntk;
        att_load_q(J, w, 0, u % per, (int)(u / per) * J->hb, 0,
                   p->seq_len);
        att_run_tiles(J, w, u % per, 0, 1, t0, t1);
        att_store_partial(J, w, it);
    }
}
static void *att_worker(void *arg)
{
    att_job *J = arg;
    const rope_attention_params *p = J->p;
    att_ws *w = att_ws_get(J);
    if (!w) {
        atomic_store(&J->fail, 1);
    } else {
        for (;;) {
            long it = atomic_fetch_add(&J->next, 1);
            if (it >= J->n_items || atomic_load(&J->fail)) break;
            att_do_item(J, w, it);
            long done = atomic_fetch_add(&J->done, 1) + 1;
            if (p->progress && J->pass != 3) /* not the packing */
                p->progress(p->progress_ctx, done, J->n_items);
        }
    }
    return NULL;
}
#define ATT_MAX_THREADS 256
/* W5.6 The thread pool */
#define ATT_SPIN_NS ROPE_ATTENTION_SPIN_NS
static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t go, idle;
    pthread_t th[ATT_MAX_THREADS];
    int id[ATT_MAX_THREADS];
    int n, want, stop, sleepers; /* threads, in this pass, asleep */
    long spin_ns; /* the poster's ATT_SPIN_NS, or 0 */
    atomic_int running; /* not done with this pass */
    atomic_long gen;
    att_job *job;
} att_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
              .busy = PTHREAD_MUTEX_INITIALIZER,
              .go = PTHREAD_COND_INITIALIZER,
              .idle = PTHREAD_COND_INITIALIZER};
static double att_now(void); /* the clock of the peak measurements */
static void att_spin_pause(void)
{
#if ATT_X86
    _mm_pause();
#endif
}
static int att_gen_moved(long seen)
{
    return atomic_load(&att_pool.gen) != seen;
}
static int att_all_done(long unused)
{
    (void)unused;
    return atomic_load(&att_pool.running) == 0;
}
static int att_spin(int (*ready)(long), long arg, long ns)
{
    double end = att_now() + 1e-9 * (double)ns;
    for (int i = 1;; i++) {
        if (ready(arg)) return 1;
        att_spin_pause();
        if (i % 64 == 0 && att_now() > end) return 0;
    }
}
static void *att_pool_main(void *arg)
{
    int id = *(const int *)arg;
    long seen = 0, spin = 0;
    for (;;) {
        if (spin > 0) att_spin(att_gen_moved, seen, spin);
        pthread_mutex_lock(&att_pool.mu);
        while (!att_pool.stop && atomic_load(&att_pool.gen) == seen) {
            att_pool.sleepers++;
            pthread_cond_wait(&att_pool.go, &att_pool.mu);
            att_pool.sleepers--;
        }
        if (att_pool.stop) break;
        seen = atomic_load(&att_pool.gen);
        spin = att_pool.spin_ns;
        if (id >= att_pool.want) {
            pthread_mutex_unlock(&att_pool.mu);
            continue;
        }
        att_job *J = att_pool.job;
        pthread_mutex_unlock(&att_pool.mu);
        att_worker(J);
        pthread_mutex_lock(&att_pool.mu);
        if (atomic_fetch_sub(&att_pool.running, 1) == 1)
            pthread_cond_signal(&att_pool.idle);
        pthread_mutex_unlock(&att_pool.mu);
    }
    pthread_mutex_unlock(&att_pool.mu);
    return NULL;
}
static void att_pool_stop(void)
{
    pthread_mutex_lock(&att_pool.mu);
    att_pool.stop = 1;
    atomic_fetch_add(&att_pool.gen, 1); /* ends the spins */
    pthread_cond_broadcast(&att_pool.go);
    pthread_mutex_unlock(&att_pool.mu);
    for (int i = 0; i < att_pool.n; i++) pthread_join(att_pool.th[i], NULL);
    att_pool.n = 0;
    att_ws *w = att_ws_key_ok ? pthread_getspecific(att_ws_key) : NULL;
    if (w) {
        att_ws_destroy(w);
        pthread_setspecific(att_ws_key, NULL);
    }
}
static void att_pool_child(void)
{
    pthread_mutex_init(&att_pool.mu, NULL);
    pthread_mutex_init(&att_pool.busy, NULL);
    pthread_cond_init(&att_pool.go, NULL);
    pthread_cond_init(&att_pool.idle, NULL);
    att_pool.n = att_pool.want = att_pool.sleepers = 0;
    atomic_store(&att_pool.running, 0);
}
static void att_pool_setup(void)
{
    att_ws_key_ok = !pthread_key_create(&att_ws_key, att_ws_destroy);
    atexit(att_pool_stop);
    pthread_atfork(NULL, NULL, att_pool_child);
}
static int att_pool_post(att_job *J, int h)
{
    if (h < 1) return 0;
    pthread_once(&att_pool_once, att_pool_setup);
    if (pthread_mutex_trylock(&att_pool.busy)) return 0;
    pthread_mutex_lock(&att_pool.mu);
    if (att_pool.stop) {
        pthread_mutex_unlock(&att_pool.mu);
        pthread_mutex_unlock(&att_pool.busy);
        return 0;
    }
    if (h > ATT_MAX_THREADS - 1) h = ATT_MAX_THREADS - 1;
    while (att_pool.n < h) {
        int i = att_pool.n;
        att_pool.id[i] = i;
        if (pthread_create(&att_pool.th[i], NULL, att_pool_main,
                           &att_pool.id[i])) break;
        att_pool.n++;
    }
    att_pool.job = J;
    att_pool.spin_ns = att_tune.spin ? ATT_SPIN_NS : 0;
    att_pool.want = h < att_pool.n ? h : att_pool.n;
    atomic_store(&att_pool.running, att_pool.want);
    atomic_fetch_add(&att_pool.gen, 1);
    if (att_pool.sleepers > 0) pthread_cond_broadcast(&att_pool.go);
    pthread_mutex_unlock(&att_pool.mu);
    return 1;
}
static void att_pool_wait(int posted)
{
    if (!posted) return;
    if (att_pool.spin_ns > 0) att_spin(att_all_done, 0, att_pool.spin_ns);
    pthread_mutex_lock(&att_pool.mu);
    while (atomic_load(&att_pool.running) > 0)
        pthread_cond_wait(&att_pool.idle, &att_pool.mu);
    pthread_mutex_unlock(&att_pool.mu);
    pthread_mutex_unlock(&att_pool.busy);
}
/* 5.8 The driver, threads and load balance */
static void att_run_pass(att_job *J, int pass, long n_items)
{
    int nt = J->nt;
    J->pass = pass;
    J->n_items = n_items;
    atomic_store(&J->next, 0);
    atomic_store(&J->done, 0);
    if (nt > n_items) nt = n_items > 0 ? (int)n_items : 1;
    int posted = att_pool_post(J, nt - 1);
    att_worker(J);
    att_pool_wait(posted);
}
/* 5.9 Decoding with split keys */
static void att_store_partial(att_job *J, att_ws *w, long it)
{
    size_t stride = (size_t)J->dp + 2;
    float *dst = J->part + (size_t)it * J->M * stride;
    for (int r = 0; r < J->M; r++, dst += stride) {
        dst[0] = w->m[r];
        dst[1] = w->l[r];
        memcpy(dst + 2, w->U + (size_t)r * J->dp,
               sizeof(float) * J->dp);
    }
}
static int att_merge_row(att_job *J, const float *ps, float *o,
                         float *lse)
{
    size_t stride = (size_t)J->dp + 2, sstr = J->M * stride;
    float mx = -INFINITY, L = 0;
    int bad = 0;
    for (int s = 0; s < J->nsplit; s++)
        mx = ps[s * sstr] > mx ? ps[s * sstr] : mx;
    for (int c = 0; c < J->d; c++) o[c] = 0;
    for (int s = 0; s < J->nsplit; s++) {
        const float *st = ps + s * sstr;
        if (st[0] == -INFINITY) continue;
        float wgt = exp2f(st[0] - mx);
        L += wgt * st[1];
        for (int c = 0; c < J->d; c++) o[c] += wgt * st[2 + c];
    }
    for (int c = 0; c < J->d; c++) {
        o[c] /= L;
        bad |= !isfinite(o[c]);
    }
    float lam = att_lse(mx, L);
    if (lse) *lse = lam;
    return bad | !isfinite(lam);
}
static void att_merge(att_job *J)
{
    const rope_attention_params *p = J->p;
    int n = p->seq_len, H = p->n_heads, Hk = p->n_kv_heads, bad = 0;
    long per = (long)p->batch * Hk;
    size_t stride = (size_t)J->dp + 2;
    for (long u = 0; u < per * J->nhb; u++) {
        long bg = u % per, h0 = (u / per) * J->hb;
        for (int hl = 0; hl < att_heads_in(J, (int)h0); hl++)
            for (int i = 0; i < n; i++) {
                long b = bg / Hk, h = (bg % Hk) * J->rep + h0 + hl;
                const float *ps = J->part + ((size_t)u * J->nsplit
                    * J->M + (size_t)hl * J->bq + i) * stride;
                float *lse = p->lse ? p->lse + (b * n + i) * H + h
                                    : NULL;
                bad |= att_merge_row(J, ps, J->out + ((b * n + i) * H
                                                      + h) * J->d, lse);
            }
    }
    if (bad) atomic_store(&J->bad, 1);
}
/* 5.10 Putting it together */
static void att_plan(att_job *J, const rope_attention_params *p);

static int att_call(float *out, const float *q, const float *k,
                    const float *v, const rope_kv_cache *c,
                    const rope_attention_params *p)
{
    int e = att_check(p);
    if (e) return e;
    att_job J;
    memset(&J, 0, sizeof J);
    J.q = q; J.k = k; J.v = v; J.out = out; J.cache = c;
    att_plan(&J, p);
    long units = (long)p->batch * p->n_kv_heads * J.nhb;
    if (J.nsplit > 1) {
        J.part = att_part_get(&J, (size_t)units * J.nsplit * J.M
                                      * (J.dp + 2));
        if (J.part) {
            att_run_pass(&J, 2, units * J.nsplit);
            if (!atomic_load(&J.fail)) att_merge(&J);
        } else {
            atomic_store(&J.fail, 1);
        }
    } else {
        att_prepack(&J); /* pack every tile once, if that pays */
        att_run_pass(&J, 1, units * J.nib);
    }
    if (atomic_load(&J.fail)) return ROPE_ATTENTION_ENOMEM;
    return atomic_load(&J.bad) ? ROPE_ATTENTION_ENONFINITE : 0;
}

int rope_attention(float *out, const float *q, const float *k,
                   const float *v, const rope_attention_params *p)
{
    return att_call(out, q, k, v, NULL, p);
}
static void att_plan(att_job *J, const rope_attention_params *p)
{
    J->p = p;
    J->d = p->head_dim;
    J->dp = (p->head_dim + 15) / 16 * 16;
    J->rep = p->n_heads / p->n_kv_heads;
    J->hb = J->rep < ATT_ROWS ? J->rep : ATT_ROWS;
    J->nhb = (J->rep + J->hb - 1) / J->hb;
    J->ntk = (p->kv_len + ATT_BK - 1) / ATT_BK;
    J->qscale = (float)(1.4426950408889634 / sqrt((double)J->d));
    J->ker = att_pick(rope_simd_resolve(p->simd));
    att_plan_bf16(J, p);
    J->bq = (ATT_ROWS + J->hb - 1) / J->hb;
    if (J->bq > p->seq_len) J->bq = p->seq_len;
    J->nqb = (p->seq_len + J->bq - 1) / J->bq;
    J->nib = (J->nqb + att_tune.ib - 1) / att_tune.ib;
    J->M = (J->hb * J->bq + 3) / 4 * 4;
    /* 5.9 Decoding with split keys */
    size_t units = (size_t)p->batch * p->n_kv_heads * J->nhb;
    size_t state = units * J->M * ((size_t)J->dp + 2) * sizeof(float);
    long fit = (long)(ROPE_ATTENTION_PART_MIB * ATT_MIB / state);
    J->tiles_per_split = (J->ntk + ATT_SPLIT_MAX - 1) / ATT_SPLIT_MAX;
    if (J->tiles_per_split < 4) J->tiles_per_split = 4;
    if (fit >= 2 && J->ntk > fit * J->tiles_per_split)
        J->tiles_per_split = (int)((J->ntk + fit - 1) / fit);
    J->nsplit = (J->ntk + J->tiles_per_split - 1) / J->tiles_per_split;
    if (fit < 2 || J->nqb > 1) J->nsplit = 0; /* a prefill */
    /* 5.10 Putting it together */
    size_t fits = ROPE_ATTENTION_WS_MIB * ATT_MIB
                  / (att_ws_floats(J) * sizeof(float));
    J->nt = p->n_threads < 1 ? 1 : p->n_threads;
    if (J->nt > ATT_MAX_THREADS) J->nt = ATT_MAX_THREADS;
    if ((size_t)J->nt > fits) J->nt = fits > 0 ? (int)fits : 1;
}
/* 5.11 A cache of rotated keys */
int rope_attention_cached(float *out, const float *q,
                          const rope_kv_cache *c,
                          const rope_attention_params *p)
{
    rope_attention_params pc = *p;
    if (!c || !c->tiles || c->len < 1 || c->len > INT_MAX) return 1;
    if (c->batch != p->batch || c->n_kv_heads != p->n_kv_heads
        || c->head_dim != p->head_dim) return 1;
    pc.kv_len = (int)c->len;
    pc.keys_rotated = 1;
    return att_call(out, q, NULL, NULL, c, &pc);
}
/* W5.4 The workspace of a call */
size_t rope_attention_workspace_bytes(const rope_attention_params *p)
{
    if (att_check(p)) return 0;
    att_job J;
    memset(&J, 0, sizeof J);
    att_plan(&J, p);
    long units = (long)p->batch * p->n_kv_heads * J.nhb;
    long items = J.nsplit > 1 ? units * J.nsplit : units * J.nib;
    size_t nt = (size_t)(J.nt < items ? J.nt : items);
    size_t fl = nt * att_ws_floats(&J) + att_pack_floats(&J);
    if (J.nsplit > 1)
        fl += (size_t)units * J.nsplit * J.M * ((size_t)J.dp + 2);
    return fl * sizeof(float);
}
/* W5.7 The key/value cache */
static int att_cache_grow(rope_kv_cache *c, long need)
{
    if (need <= c->cap) return 0;
    long cap = c->cap * 2 > need ? c->cap * 2 : need;
    cap = (cap + ATT_BK - 1) / ATT_BK * ATT_BK;
    size_t per = (size_t)c->batch * c->n_kv_heads * 2 * c->dp * ATT_BK;
    size_t old = (size_t)(c->cap / ATT_BK) * per;
    size_t all = (size_t)(cap / ATT_BK) * per;
    float *t = att_alloc(sizeof(float) * all);
    if (!t) return ROPE_ATTENTION_ENOMEM;
    if (old) memcpy(t, c->tiles, sizeof(float) * old);
    memset(t + old, 0, sizeof(float) * (all - old));
    free(c->tiles);
    c->tiles = t;
    c->cap = cap;
    return 0;
}
int rope_kv_cache_init(rope_kv_cache *c, int batch, int n_kv_heads,
                       int head_dim, long capacity)
{
    memset(c, 0, sizeof *c);
    if (batch < 1 || n_kv_heads < 1 || head_dim < 1 || capacity < 0
        || head_dim > ROPE_ATTENTION_MAX_HEAD_DIM) return 1;
    c->batch = batch;
    c->n_kv_heads = n_kv_heads;
    c->head_dim = head_dim;
    c->dp = (head_dim + 15) / 16 * 16;
    return att_cache_grow(c, capacity > 0 ? capacity : 1);
}
void rope_kv_cache_free(rope_kv_cache *c)
{
    free(c->tiles);
    c->tiles = NULL;
    c->len = c->cap = 0;
}
int rope_kv_cache_append(rope_kv_cache *c, const float *k,
                         const float *v, int n,
                         const rope_attention_params *p)
{
    int d = c->head_dim, dp = c->dp, Hk = c->n_kv_heads;
    if (n < 1 || !c->tiles || c->batch != p->batch
        || Hk != p->n_kv_heads || d != p->head_dim) return 1;
    if (p->start_pos < 0) return 4;
    if (p->freqs_cos && (!p->freqs_sin || d % 2)) return 5;
    if (p->freqs_cos && p->table_len < p->start_pos + c->len + n)
        return 6;
    int e = att_cache_grow(c, c->len + n);
    if (e) return e;
    att_kernels ker = att_pick(rope_simd_resolve(p->simd));
    _Alignas(64) float tmp[ROPE_ATTENTION_MAX_HEAD_DIM];
    for (long b = 0; b < c->batch; b++)
        for (int jj = 0; jj < n; jj++)
            for (int g = 0; g < Hk; g++) {
                long j = c->len + jj, col = j % ATT_BK;
                size_t off = (((size_t)b * n + jj) * Hk + g) * d;
                const float *kr = k + off;
                const float *kt, *vt;
                if (p->freqs_cos) {
                    long pos = p->start_pos + j;
                    ker.rot(tmp, kr, p->freqs_cos + pos * d, p->freqs_sin + pos * d,
                            d, p->pairing);
                    kr = tmp;
                }
                att_cache_tile(c, (int)(j / ATT_BK), b * Hk + g, &kt, &vt);
                float *K = (float *)kt, *V = (float *)vt; /* the cache's own array */
                for (int i = 0; i < d; i++) K[(size_t)i * ATT_BK + col] = kr[i];
                memcpy(V + (size_t)col * dp, v + off, sizeof(float) * d);
            }
    c->len += n;
    return 0;
}
/* W5.8 Measuring the machine */
static double att_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#if ATT_X86
static T512 float att_fma_chains_512(long iters, float seed)
{
    __m512 a[12], x = _mm512_set1_ps(0.999999f);
    __m512 y = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps(seed + i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
    for (int i = 1; i < 12; i++) a[0] = _mm512_add_ps(a[0], a[i]);
    return _mm512_reduce_add_ps(a[0]);
}
static T256 float att_fma_chains_256(long iters, float seed)
{
    __m256 a[12], x = _mm256_set1_ps(0.999999f);
    __m256 y = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps(seed + i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], x, y);
    for (int i = 1; i < 12; i++) a[0] = _mm256_add_ps(a[0], a[i]);
    return hsum_256(a[0]);
}
#endif
enum { ATT_FMA_CHAINS = 12, ATT_FMA_ROUND = 2000000 };
typedef struct { rope_simd s; long iters; float out; } att_fma_arg;

static void *att_fma_thread(void *arg)
{
    att_fma_arg *f = arg;
    f->out = 0;
#if ATT_X86
    if (f->s == ROPE_SIMD_AVX512)
        f->out = att_fma_chains_512(f->iters, 1.0f);
    else if (f->s == ROPE_SIMD_AVX2)
        f->out = att_fma_chains_256(f->iters, 1.0f);
#endif
    return NULL;
}
double rope_fma_peak(rope_simd s, int n_threads, double seconds)
{
    enum { MAXT = 64 };
    att_fma_arg fa[MAXT];
    pthread_t th[MAXT];
    double best = 0, end;
    s = rope_simd_resolve(s);
    if (s == ROPE_SIMD_SCALAR) return 0;
    n_threads = n_threads < 1 ? 1 : n_threads > MAXT ? MAXT : n_threads;
    end = att_now() + seconds;
    do {
        int started = 0;
        double t = att_now();
        for (int i = 0; i < n_threads; i++)
            fa[i] = (att_fma_arg){ s, ATT_FMA_ROUND, 0 };
        while (started < n_threads - 1
               && !pthread_create(&th[started], NULL, att_fma_thread,
                                  &fa[started + 1]))
            started++;
        att_fma_thread(&fa[0]);
        for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
        t = att_now() - t;
        double g = rope_fma_round_flops(s) * (started + 1) / t / 1e9;
        best = g > best && fa[0].out == fa[0].out ? g : best;
    } while (att_now() < end);
    return best;
}
double rope_fma_round_flops(rope_simd s)
{
    s = rope_simd_resolve(s);
    double lanes = s == ROPE_SIMD_AVX512 ? 16 : s == ROPE_SIMD_AVX2 ? 8 : 0;
    return 2.0 * ATT_FMA_CHAINS * lanes * ATT_FMA_ROUND;
}
#if ATT_X86
static T512 float att_fma_loads_512(long rounds, const float *kt,
                                    const float *q)
{
    __m512 acc[6][4], sum = _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int a = 0; a < 6; a++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) acc[a][c] = _mm512_setzero_ps();
    for (long r = 0; r < rounds; r++)
#pragma GCC unroll 2
        for (int i = 0; i < 64; i++) {
            __m512 k[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                k[c] = _mm512_load_ps(kt + 64 * i + 16 * c);
#pragma GCC unroll 6
            for (int a = 0; a < 6; a++) {
                __m512 b = _mm512_set1_ps(q[64 * a + i]);
#pragma GCC unroll 4
                for (int c = 0; c < 4; c++)
                    acc[a][c] = _mm512_fmadd_ps(b, k[c], acc[a][c]);
            }
        }
#pragma GCC unroll 6
    for (int a = 0; a < 6; a++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) sum = _mm512_add_ps(sum, acc[a][c]);
    return _mm512_reduce_add_ps(sum);
}
#endif
double rope_fma_load_share(rope_simd s, double seconds)
{
    enum { R = 3125, MAXP = 101 };
    double r[MAXP];
    int n = 0;
    (void)seconds; /* unused where there is no AVX-512 */
    if (rope_simd_resolve(s) != ROPE_SIMD_AVX512) return 0;
#if ATT_X86
    double end = att_now() + seconds;
    _Alignas(64) float kt[64 * 64], q[6 * 64];
    float (*volatile chains)(long, float) = att_fma_chains_512;
    float (*volatile loads)(long, const float *, const float *) =
        att_fma_loads_512;
    for (int i = 0; i < 64 * 64; i++) kt[i] = 1e-3f * (float)(i % 7 + 1);
    for (int i = 0; i < 6 * 64; i++) q[i] = 1e-3f * (float)(i % 5 + 1);
    do {
        double t0 = att_now();
        float x = chains(128L * R, 1.0f);
        double t1 = att_now();
        float y = loads(R, kt, q);
        double t2 = att_now();
        if (x == x && y == y) r[n++] = (t1 - t0) / (t2 - t1);
    } while (n < MAXP && att_now() < end);
#endif
    for (int i = 1; i < n; i++) /* insertion sort, then the median */
        for (int j = i; j > 0 && r[j - 1] > r[j]; j--) {
            double t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
        }
    return n ? (n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2])) : 0;
}
double rope_triad_bandwidth(double seconds)
{
    size_t n = (size_t)1 << 23;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE); /* bytes; <= 0: unknown */
    if (l3 > 0 && (size_t)l3 / 3 > n) n = (size_t)l3 / 3;
#endif
    float *a = att_alloc(sizeof(float) * n);
    float *b = att_alloc(sizeof(float) * n);
    float *c = att_alloc(sizeof(float) * n);
    double best = 0, end = att_now() + seconds;
    if (a && b && c) {
        for (size_t i = 0; i < n; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
        do {
            double t = att_now();
            for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
            t = att_now() - t;
            double bw = 12.0 * (double)n / t / 1e9;
            best = bw > best && a[n / 2] == 7.0f ? bw : best;
        } while (att_now() < end);
    }
    free(a); free(b); free(c);
    return best;
}
