/* W5b.2 The code of the bfloat16 path */
/* attention-bf16.c: the bfloat16 path of the attention kernel:
   rounding, the portable and vector emulations of vdpbf16ps, the
   kernels that use it, the AMX kernels, and the choice between them */
#define _POSIX_C_SOURCE 200809L
#include "attention-kernels.h"
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
#if ATT_X86
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
    /* W5.3 The other micro-kernels */
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
/* W5b.2 The code of the bfloat16 path */
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
    /* W5.3 The other micro-kernels */
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
/* W5b.2 The code of the bfloat16 path */
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
#if ATT_AMX
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} att_tilecfg;
ATT_HIDDEN TAMX void att_amx_config(int mr, int half)
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
#endif
ATT_HIDDEN int att_has_amx(void)
{
#if ATT_X86 && ATT_AMX
    if (!rope_simd_available(ROPE_SIMD_AVX512)) return 0;
    pthread_once(&att_amx_once, att_amx_init);
    return att_amx_ok;
#else
    return 0;
#endif
}
ATT_HIDDEN int att_has_avx512bf16(void)
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
                                       att_env_bf16());
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
double rope_bf16_error_bound(int head_dim, long kv_len, double qnorm,
                             double knorm, double vmax)
{
    const double u = ldexp(1, -24), ub = ldexp(1, -8);
    const double tiny = ldexp(1, -126); /* smallest normal float */
    double d = head_dim, c = 1.4426950408889634 / sqrt(d);
    double n = (double)kv_len + (kv_len + ATT_BK - 1) / ATT_BK;
    double gd = (d + 2) * u / (1 - (d + 2) * u);
    double z = c * (1 + 4 * u) * (1 + 4 * u) * qnorm * knorm;
    double ds = z * (2 * ub + ub * ub + (1 + ub) * (1 + ub) * gd)
                + c * tiny * (d + sqrt(d) * (1 + ub) * (1 + 4 * u)
                                  * (qnorm + knorm));
    double dl = ds + 2 * u * (z + ds);
    double a = dl * log(2) + 4 * u / (1 - 4 * u) + ub / (1 - ub);
    double gn = n * u / (1 - n * u);
    return (1 + ub) * vmax * (2 * tanh(a / 2) + 2 * gn / (1 - gn)
                              + 3 * u)
           + ub * vmax + tiny * (1 + 2 * n * (1 + ub) * vmax);
}
ATT_HIDDEN void att_plan_bf16(att_job *J, const rope_attention_params *p)
{
    J->bf16 = p->kv_dtype == ROPE_DTYPE_BF16;
    if (!J->bf16) return;
    J->k16 = att_bf16_pick(rope_simd_resolve(p->simd), att_env_bf16());
    J->qs16 = J->qscale;
    J->qscale = 1.0f;
}
ATT_HIDDEN void att_round_q_bf16(att_job *J, att_ws *w, int nb)
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
ATT_HIDDEN void att_pack_tile_bf16(att_job *J, att_ws *w)
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
ATT_HIDDEN void att_tile_block_bf16(att_job *J, att_ws *w, size_t at,
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
        J->ker.sw(w->S, w->Q + at * dp, w->Kw, M, dp, J->qs16,
                  eq + w->e16k < 142);
        memcpy(w->lsave, w->l + at, sizeof(float) * M);
        J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
        ep = att_wide_p256(w->S, w->l + at, w->lsave, w->alpha, M);
        J->ker.pvw(w->U + at * dp, w->S, w->Vw, w->alpha, M, dp,
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
