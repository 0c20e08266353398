/* W8c.6 The entry points */
/* minimind-linear.c: y = x W^T for MiniMind's nn.Linear weights, fast
   (workshop W8c); every output the same sum whatever the threads */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "minimind.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MML_X86 1
#else
#define MML_X86 0
#endif
/* W8c.3 The register tile */
static void mml_one_c(float *y, int ldy, const float *x, const float *w,
                      int in)
{
    float s = 0;
    (void)ldy;
    for (int i = 0; i < in; i++)
        s += x[i] * w[i];
    *y = s;
}
/* W8c.6 The entry points */
#if MML_X86
/* W8c.3 The register tile */
__attribute__((target("avx512f"))) static inline float
mml_hsum512(__m512 v) /* lane l + lane l + 8, then l + 4, l + 2, l + 1 */
{
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(
        _mm512_castps_pd(v), 1));
    __m256 s8 = _mm256_add_ps(lo, hi);
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8),
                           _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
    return _mm_cvtss_f32(s1);
}
__attribute__((always_inline, target("avx512f,fma"))) static inline void
mml_tile512(float *y, int ldy, const float *x, const float *w, int in,
            const int MR, const int NR)
{
    __m512 acc[4][6];
    #pragma GCC unroll 4
    for (int a = 0; a < MR; a++)
    #pragma GCC unroll 6
        for (int b = 0; b < NR; b++)
            acc[a][b] = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= in; i += 16) {
        __m512 xv[4];
#pragma GCC unroll 4
        for (int a = 0; a < MR; a++)
            xv[a] = _mm512_loadu_ps(x + (size_t)a * in + i);
#pragma GCC unroll 6
        for (int b = 0; b < NR; b++) {
            __m512 wv = _mm512_loadu_ps(w + (size_t)b * in + i);
#pragma GCC unroll 4
            for (int a = 0; a < MR; a++)
                acc[a][b] = _mm512_fmadd_ps(xv[a], wv, acc[a][b]);
        }
    }
    if (i < in) {
        __mmask16 m = (__mmask16)((1u << (in - i)) - 1);
        __m512 xv[4];
    #pragma GCC unroll 4
        for (int a = 0; a < MR; a++)
            xv[a] = _mm512_maskz_loadu_ps(m, x + (size_t)a * in + i);
    #pragma GCC unroll 6
        for (int b = 0; b < NR; b++) {
            __m512 wv = _mm512_maskz_loadu_ps(m, w + (size_t)b * in + i);
    #pragma GCC unroll 4
            for (int a = 0; a < MR; a++)
                acc[a][b] = _mm512_fmadd_ps(xv[a], wv, acc[a][b]);
        }
    }
#pragma GCC unroll 4
    for (int a = 0; a < MR; a++)
#pragma GCC unroll 6
        for (int b = 0; b < NR; b++)
            y[(size_t)a * ldy + b] = mml_hsum512(acc[a][b]);
}
#define MML_ARGS float *y, int ldy, const float *x, const float *w, int in
#define MML_AVX512 __attribute__((target("avx512f,fma")))
#define MML_T512(MR, NR) MML_AVX512 static void mml_t512_##MR##x##NR(MML_ARGS)
MML_T512(4, 6) { mml_tile512(y, ldy, x, w, in, 4, 6); }
MML_T512(1, 6) { mml_tile512(y, ldy, x, w, in, 1, 6); }
MML_T512(4, 1) { mml_tile512(y, ldy, x, w, in, 4, 1); }
MML_T512(1, 1) { mml_tile512(y, ldy, x, w, in, 1, 1); }
__attribute__((target("avx2,fma"))) static inline float
mml_hsum256(__m256 v) /* lane l + lane l + 4, then l + 2, l + 1 */
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v),
                           _mm256_extractf128_ps(v, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
    return _mm_cvtss_f32(s1);
}
__attribute__((always_inline, target("avx2,fma"))) static inline void
mml_tile256(float *y, int ldy, const float *x, const float *w, int in,
            const int MR, const int NR)
{
    static const int ones[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
    __m256 acc[3][4], xv[3];
#pragma GCC unroll 3
    for (int a = 0; a < MR; a++)
#pragma GCC unroll 4
        for (int b = 0; b < NR; b++)
            acc[a][b] = _mm256_setzero_ps();
    for (int i = 0; i < in; i += 8) {
        int left = in - i < 8 ? in - i : 8; /* 8, or the last columns */
        __m256i m = _mm256_loadu_si256((const __m256i *)(ones + 8 - left));
#pragma GCC unroll 3
        for (int a = 0; a < MR; a++)
            xv[a] = _mm256_maskload_ps(x + (size_t)a * in + i, m);
#pragma GCC unroll 4
        for (int b = 0; b < NR; b++) {
            __m256 wv = _mm256_maskload_ps(w + (size_t)b * in + i, m);
#pragma GCC unroll 3
            for (int a = 0; a < MR; a++)
                acc[a][b] = _mm256_fmadd_ps(xv[a], wv, acc[a][b]);
        }
    }
#pragma GCC unroll 3
    for (int a = 0; a < MR; a++)
#pragma GCC unroll 4
        for (int b = 0; b < NR; b++)
            y[(size_t)a * ldy + b] = mml_hsum256(acc[a][b]);
}
#define MML_AVX2 __attribute__((target("avx2,fma")))
#define MML_T256(MR, NR) MML_AVX2 static void mml_t256_##MR##x##NR(MML_ARGS)
MML_T256(3, 4) { mml_tile256(y, ldy, x, w, in, 3, 4); }
MML_T256(1, 4) { mml_tile256(y, ldy, x, w, in, 1, 4); }
MML_T256(3, 1) { mml_tile256(y, ldy, x, w, in, 3, 1); }
MML_T256(1, 1) { mml_tile256(y, ldy, x, w, in, 1, 1); }
/* W8c.6 The entry points */
#endif
/* W8c.3 The register tile */
typedef void mml_tile(float *y, int ldy, const float *x, const float *w,
                      int in);
typedef struct mml_kernels {
    int mr, nr; /* the full tile: rows of x, rows of w */
    mml_tile *full, *row, *col, *one; /* mr x nr, 1 x nr, mr x 1, 1 x 1 */
} mml_kernels;
static mml_kernels mml_pick(rope_simd s)
{
#if MML_X86
    if (s == ROPE_SIMD_AVX512)
        return (mml_kernels){4, 6, mml_t512_4x6, mml_t512_1x6,
                             mml_t512_4x1, mml_t512_1x1};
    if (s == ROPE_SIMD_AVX2)
        return (mml_kernels){3, 4, mml_t256_3x4, mml_t256_1x4,
                             mml_t256_3x1, mml_t256_1x1};
#endif
    (void)s;
    return (mml_kernels){1, 1, mml_one_c, mml_one_c, mml_one_c, mml_one_c};
}
/* W8c.4 The split over outputs */
typedef struct mml_job {
    float *y;
    const float *x, *w;
    int rows, in, out, chunks;
    mml_kernels k;
} mml_job;
enum { MML_ROW_BLOCK = 64, MML_CHUNKS_PER_THREAD = 4 };
static void mml_chunk(const mml_job *J, int c)
{
    const mml_kernels *k = &J->k;
    int in = J->in, out = J->out, groups = (out + k->nr - 1) / k->nr;
    int o0 = (int)((long)groups * c / J->chunks) * k->nr;
    int o1 = (int)((long)groups * (c + 1) / J->chunks) * k->nr;
    o1 = o1 < out ? o1 : out;
    for (int r0 = 0; r0 < J->rows; r0 += MML_ROW_BLOCK) {
        int r1 = r0 + MML_ROW_BLOCK < J->rows ? r0 + MML_ROW_BLOCK
                                              : J->rows;
        for (int o = o0; o < o1; o += k->nr)
            if (o + k->nr <= o1)
                {
                    const float *w = J->w + (size_t)o * in;
                    int r = r0;
                    for (; r + k->mr <= r1; r += k->mr)
                        k->full(J->y + (size_t)r * out + o, out, J->x + (size_t)r * in, w,
                                in);
                    for (; r < r1; r++)
                        k->row(J->y + (size_t)r * out + o, out, J->x + (size_t)r * in, w,
                               in);
                }
            else
                for (int b = o; b < o1; b++) {
                    const float *w = J->w + (size_t)b * in;
                    int r = r0;
                    for (; r + k->mr <= r1; r += k->mr)
                        k->col(J->y + (size_t)r * out + b, out, J->x + (size_t)r * in, w,
                               in);
                    for (; r < r1; r++)
                        k->one(J->y + (size_t)r * out + b, out, J->x + (size_t)r * in, w,
                               in);
                }
    }
}
/* W8c.5 The pool */
enum { MML_MAX_THREADS = 64 };
#define MML_SPIN_NS 200000.0
static struct {
    pthread_mutex_t mu, busy; /* busy: one job at a time */
    pthread_cond_t go, done_cv;
    pthread_t th[MML_MAX_THREADS];
    int n, stop, sleepers; /* workers started, stopping, asleep */
    atomic_long gen; /* one more for each job */
    atomic_ullong claim; /* (gen mod 2^32) << 32 | the next chunk */
    atomic_int done; /* chunks finished */
    mml_job job; /* a copy of the caller's */
} mml_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
              .busy = PTHREAD_MUTEX_INITIALIZER,
              .go = PTHREAD_COND_INITIALIZER,
              .done_cv = PTHREAD_COND_INITIALIZER};
static pthread_once_t mml_once = PTHREAD_ONCE_INIT;
static double mml_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static void mml_pause(void)
{
#if MML_X86
    _mm_pause();
#endif
}
static void mml_spin_while_gen(long seen)
{
    double end = mml_now_ns() + MML_SPIN_NS;
    for (int i = 1; atomic_load(&mml_pool.gen) == seen; i++) {
        mml_pause();
        if (i % 64 == 0 && mml_now_ns() > end) return;
    }
}
static void mml_spin_while_undone(int chunks)
{
    double end = mml_now_ns() + MML_SPIN_NS;
    for (int i = 1; atomic_load(&mml_pool.done) < chunks; i++) {
        mml_pause();
        if (i % 64 == 0 && mml_now_ns() > end) return;
    }
}
static void mml_work(const mml_job *J, long g)
{
    unsigned long long tag = (unsigned long long)g & 0xffffffffu;
    for (;;) {
        unsigned long long w = atomic_load(&mml_pool.claim);
        do {
            if (w >> 32 != tag || (int)(w & 0xffffffffu) >= J->chunks)
                return;
        } while (!atomic_compare_exchange_weak(&mml_pool.claim, &w, w + 1));
        mml_chunk(J, (int)(w & 0xffffffffu));
        if (atomic_fetch_add(&mml_pool.done, 1) + 1 == J->chunks) {
            pthread_mutex_lock(&mml_pool.mu);
            pthread_cond_signal(&mml_pool.done_cv);
            pthread_mutex_unlock(&mml_pool.mu);
        }
    }
}
static void *mml_worker(void *arg)
{
    long seen = 0;
    (void)arg;
    for (;;) {
        mml_spin_while_gen(seen);
        pthread_mutex_lock(&mml_pool.mu);
        while (!mml_pool.stop && atomic_load(&mml_pool.gen) == seen) {
            mml_pool.sleepers++;
            pthread_cond_wait(&mml_pool.go, &mml_pool.mu);
            mml_pool.sleepers--;
        }
        if (mml_pool.stop) break;
        seen = atomic_load(&mml_pool.gen);
        mml_job J = mml_pool.job;
        pthread_mutex_unlock(&mml_pool.mu);
        mml_work(&J, seen);
    }
    pthread_mutex_unlock(&mml_pool.mu);
    return NULL;
}
static void mml_stop(void)
{
    pthread_mutex_lock(&mml_pool.mu);
    mml_pool.stop = 1;
    atomic_fetch_add(&mml_pool.gen, 1); /* ends the spins */
    pthread_cond_broadcast(&mml_pool.go);
    pthread_mutex_unlock(&mml_pool.mu);
    for (int i = 0; i < mml_pool.n; i++)
        pthread_join(mml_pool.th[i], NULL);
    mml_pool.n = 0;
}
static void mml_child(void)
{
    pthread_mutex_init(&mml_pool.mu, NULL);
    pthread_mutex_init(&mml_pool.busy, NULL);
    pthread_cond_init(&mml_pool.go, NULL);
    pthread_cond_init(&mml_pool.done_cv, NULL);
    mml_pool.n = mml_pool.sleepers = 0;
}
static void mml_setup(void)
{
    atexit(mml_stop);
    pthread_atfork(NULL, NULL, mml_child);
}
static void mml_run(mml_job *J, int n_threads)
{
    int groups = (J->out + J->k.nr - 1) / J->k.nr;
    if (n_threads > MML_MAX_THREADS) n_threads = MML_MAX_THREADS;
    J->chunks = 1;
    if (n_threads > 1 && groups > 1) {
        pthread_once(&mml_once, mml_setup);
        if (pthread_mutex_trylock(&mml_pool.busy) == 0) {
            long g;
            pthread_mutex_lock(&mml_pool.mu);
            while (!mml_pool.stop && mml_pool.n < n_threads - 1
                   && !pthread_create(&mml_pool.th[mml_pool.n], NULL, mml_worker, NULL))
                mml_pool.n++;
            J->chunks = MML_CHUNKS_PER_THREAD * n_threads;
            J->chunks = J->chunks < groups ? J->chunks : groups;
            mml_pool.job = *J;
            g = atomic_load(&mml_pool.gen) + 1;
            atomic_store(&mml_pool.done, 0);
            atomic_store(&mml_pool.claim, ((unsigned long long)g & 0xffffffffu) << 32);
            atomic_store(&mml_pool.gen, g);
            if (mml_pool.sleepers > 0) pthread_cond_broadcast(&mml_pool.go);
            pthread_mutex_unlock(&mml_pool.mu);
            mml_work(J, g);
            mml_spin_while_undone(J->chunks);
            pthread_mutex_lock(&mml_pool.mu);
            while (atomic_load(&mml_pool.done) < J->chunks)
                pthread_cond_wait(&mml_pool.done_cv, &mml_pool.mu);
            pthread_mutex_unlock(&mml_pool.mu);
            pthread_mutex_unlock(&mml_pool.busy);
            return;
        }
    }
    mml_chunk(J, 0);
}
/* W8c.6 The entry points */
void rope_minimind_linear_simd(float *y, const float *x, const float *w,
                               int rows, int in, int out, int n_threads,
                               rope_simd simd)
{
    if (rows < 1 || out < 1) return;
    mml_job J = {y, x, w, rows, in, out, 1,
                 mml_pick(rope_simd_resolve(simd))};
    mml_run(&J, n_threads);
}
void rope_minimind_linear(float *y, const float *x, const float *w,
                          int rows, int in, int out, int n_threads)
{
    rope_minimind_linear_simd(y, x, w, rows, in, out, n_threads,
                              ROPE_SIMD_AUTO);
}
