/* W5.1 The three files of the kernel */
/* attention-simd.c: the AVX-512 and AVX2 tile kernels of the
   attention kernel, their vector exponential, and the choice of a
   path at run time */
#define _POSIX_C_SOURCE 200809L
#include "attention-kernels.h"
#include "attention-tune.h"
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* W5.3 The other micro-kernels */
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
/* W5.1 The three files of the kernel */
#if ATT_X86
/* W5.3 The other micro-kernels */
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
/* W5b.2 The code of the bfloat16 path */
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
/* W5.1 The three files of the kernel */
#endif
/* W5.3 The other micro-kernels */
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
static struct {
    pthread_mutex_t mu;
    atomic_int ready;
    int simd_set; /* ROPE_SIMD named a path */
    rope_simd simd;
    char bf16[16]; /* ROPE_BF16, or "" */
} att_env = {.mu = PTHREAD_MUTEX_INITIALIZER};
static void att_env_read(void)
{
    if (atomic_load(&att_env.ready)) return;
    pthread_mutex_lock(&att_env.mu);
    if (!atomic_load(&att_env.ready)) {
        const char *b = getenv("ROPE_BF16");
        att_env.simd_set = !rope_simd_parse(getenv("ROPE_SIMD"),
                                            &att_env.simd);
        snprintf(att_env.bf16, sizeof att_env.bf16, "%s", b ? b : "");
        atomic_store(&att_env.ready, 1);
    }
    pthread_mutex_unlock(&att_env.mu);
}
ATT_HIDDEN const char *att_env_bf16(void)
{
    att_env_read();
    return att_env.bf16[0] ? att_env.bf16 : NULL;
}
ATT_HIDDEN void rope_attention_env_reload(void)
{
    pthread_mutex_lock(&att_env.mu);
    atomic_store(&att_env.ready, 0);
    pthread_mutex_unlock(&att_env.mu);
}
rope_simd rope_simd_resolve(rope_simd want)
{
    att_env_read();
    if (want == ROPE_SIMD_AUTO && att_env.simd_set) want = att_env.simd;
    if (want != ROPE_SIMD_AUTO && rope_simd_available(want))
        return want;
    if (rope_simd_available(ROPE_SIMD_AVX512)) return ROPE_SIMD_AVX512;
    if (rope_simd_available(ROPE_SIMD_AVX2)) return ROPE_SIMD_AVX2;
    return ROPE_SIMD_SCALAR;
}
ATT_HIDDEN void att_simd_kernels(rope_simd s, att_kernels *k)
{
#if ATT_X86
    if (s == ROPE_SIMD_AVX512)
        *k = (att_kernels){ s_tile_512, sm_tile_512, pv_tile_512,
                            att_rotate_row_512, st_tile_512, NULL, NULL };
    else if (s == ROPE_SIMD_AVX2)
        *k = (att_kernels){ s_tile_256, sm_tile_256, pv_tile_256,
                            att_rotate_row, st_tile_256, s_tile_wide256,
                            pv_tile_wide256 };
#else
    (void)s; (void)k;
#endif
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
