/* bench-machine.c: the peak and bandwidth of the machine, and the
   rates and arithmetic of its bfloat16 instructions */
#define _POSIX_C_SOURCE 200809L
#include "attention-kernels.h"
#include "bench-machine.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double att_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
    return rope_bf16_round((float)ldexp(att_amx_rand(st) < 0.5 ? -m : m,
                                        e));
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
            double p = (double)rope_bf16_to_float(a[k]) * rope_bf16_to_float(b[k]);
            sum += p;
            mag += fabs(p);
        }
        float z = kind == 1 ? -(float)sum
                            : rope_bf16_to_float(att_amx_operand(&seed, emax));
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
            a[k] = rope_bf16_round(0x1p-13f);
            b[k] = rope_bf16_round(0x1p-12f);
        }
        break;
    case 1: /* one pair (2^-24, 2^-26) */
        a[0] = b[0] = rope_bf16_round(0x1p-12f);
        a[1] = b[1] = rope_bf16_round(0x1p-13f);
        break;
    case 2: /* one pair (1, 3 * 2^-25) */
        a[0] = b[0] = rope_bf16_round(1.0f);
        a[1] = rope_bf16_round(0x3p-13f);
        b[1] = rope_bf16_round(0x1p-12f);
        break;
    case 3: /* pairs (1, -1) and (2^-30, 0) */
        a[0] = b[0] = b[1] = rope_bf16_round(1.0f);
        a[1] = rope_bf16_round(-1.0f);
        a[2] = b[2] = rope_bf16_round(0x1p-15f);
        break;
    default:
        return 1;
    }
    float r = z;
    double s = 0, m = fabs(z);
    for (int k = 0; k < 32; k++) {
        double p = (double)rope_bf16_to_float(a[k]) * rope_bf16_to_float(b[k]);
        s += p;
        m += fabs(p);
    }
    if (rope_bf16_amx_dot(&r, a, b, 32)) return 1;
    *got = r;
    *want = z + s;
    *mag = m;
    return 0;
}
static TBF16 float att_dot_chains(long iters)
{
    __m512 a[24];
    __m512i x = _mm512_set1_epi32(0x3f803f80); /* (1, 1) */
    __m512i y = _mm512_set1_epi32(0x33803380); /* (2^-24, 2^-24) */
    for (int i = 0; i < 24; i++) a[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++)
            a[i] = _mm512_dpbf16_ps(a[i], (__m512bh)x, (__m512bh)y);
    for (int i = 1; i < 24; i++) a[0] = _mm512_add_ps(a[0], a[i]);
    return _mm512_reduce_add_ps(a[0]);
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
    float lane[8], sum = 0;
    for (int i = 1; i < 12; i++) a[0] = _mm256_add_ps(a[0], a[i]);
    _mm256_storeu_ps(lane, a[0]);
    for (int i = 0; i < 8; i++) sum += lane[i];
    return sum;
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
    float *a = malloc(sizeof(float) * n);
    float *b = malloc(sizeof(float) * n);
    float *c = malloc(sizeof(float) * n);
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
