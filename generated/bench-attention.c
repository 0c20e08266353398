/* bench-attention.c: make bench, the measurements of chapter 5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "rope.h"

typedef struct {
    int n, kv, d, threads;      /* seq_len, kv_len, head_dim */
    int causal, reps;
    double gflop;               /* (eq. flops), all heads */
    double naive;               /* seconds; < 0: skipped */
    double med, min, max;       /* tiled with RoPE, seconds */
    double med_norope;          /* tiled without RoPE */
    double rope_share;          /* median of the paired shares */
    double work_mib;            /* rope_attention_workspace_bytes */
    int rotated;                /* decode: a cache of rotated keys */
} bench_row;
static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
static int bench_setup(const bench_row *r, rope_attention_params *p,
                       float **buf)
{
    uint64_t st = 12345;
    size_t nq = (size_t)r->n * 8 * r->d, nk = (size_t)r->kv * 2 * r->d;
    size_t nt = (size_t)r->kv * r->d, len[6] = {nq, nk, nk, nq, nt, nt};
    rope_attention_defaults(p);
    p->seq_len = r->n; p->kv_len = r->kv; p->head_dim = r->d;
    p->causal = r->causal; p->n_threads = r->threads;
    p->keys_rotated = r->rotated;
    p->table_len = r->kv;
    for (int i = 0; i < 6; i++) {
        buf[i] = malloc(sizeof(float) * len[i]);
        if (!buf[i]) return 1;
        for (size_t j = 0; i < 3 && j < len[i]; j++)
            buf[i][j] = (float)(2 * rope_uniform(&st) - 1);
    }
    return rope_precompute_freqs_cis(buf[4], buf[5], r->d, r->kv, 1e6,
                                     ROPE_PRECISION_FLOAT);
}
enum {
    BENCH_REPS = 51,        /* make bench: n <= 1024 and decode */
    BENCH_REPS_LONG = 7,    /* make bench: n = 4096 */
    BOOK_REPS = 41,         /* the book: n <= 1024 */
    BOOK_REPS_LONG = 3,     /* the book: n = 4096 */
    BOOK_REPS_DECODE = 21   /* the book: decode */
};
#define BENCH_NAIVE_BUDGET 5.0   /* seconds */
#define BOOK_NAIVE_BUDGET 1.5
static int bench_run(bench_row *r, double naive_budget,
                     double *naive_rate)
{
    float *b[6] = {0};
    rope_attention_params p;
    int e = bench_setup(r, &p, b);
    double tr[64], tn[64], sh[64];
    r->gflop = (r->causal && r->n == r->kv ? 2.0 : 4.0) * r->n
               * (double)r->kv * r->d * 8 / 1e9;
    r->work_mib = rope_attention_workspace_bytes(&p) / 1048576.0;
    r->naive = -1;
    if (r->reps > 64) r->reps = 64;
    if (!e && naive_budget > 0
        && (*naive_rate <= 0 || r->gflop / *naive_rate < naive_budget)) {
        double t = bench_now();
        e = rope_attention_naive(b[3], b[0], b[1], b[2], &p);
        r->naive = bench_now() - t;
        *naive_rate = r->gflop / r->naive;
    }
    for (int i = 0; !e && i < r->reps; i++) {
        for (int k = 0; k < 2 && !e; k++) {
            int rope = (i + k) % 2 == 0;      /* alternate the order */
            double t = bench_now();
            p.freqs_cos = rope ? b[4] : NULL;
            p.freqs_sin = rope ? b[5] : NULL;
            e = rope_attention(b[3], b[0], b[1], b[2], &p);
            *(rope ? &tr[i] : &tn[i]) = bench_now() - t;
        }
        sh[i] = (tr[i] - tn[i]) / tr[i];
    }
    if (!e) {
        r->med_norope = bench_median(tn, r->reps);
        r->med = bench_median(tr, r->reps);
        r->rope_share = bench_median(sh, r->reps);
        r->min = tr[0];
        r->max = tr[r->reps - 1];
    }
    for (int i = 0; i < 6; i++) free(b[i]);
    return e;
}
static int bench_memory(double *peak_mib, double *data_mib,
                        double *seconds)
{
    bench_row r = {.n = 32768, .kv = 32768, .d = 64, .threads = 2,
                   .causal = 1, .reps = 1};
    float *b[6] = {0};
    rope_attention_params p;
    struct rusage ru;
    int e = bench_setup(&r, &p, b);
    double t = bench_now();
    p.freqs_cos = b[4]; p.freqs_sin = b[5];
    e = e ? e : rope_attention(b[3], b[0], b[1], b[2], &p);
    *seconds = bench_now() - t;
    getrusage(RUSAGE_SELF, &ru);
    *peak_mib = ru.ru_maxrss / 1024.0;
    *data_mib = sizeof(float) * 2.0 * 32768 * (8 + 2) * 64 / 1048576;
    for (int i = 0; i < 6; i++) free(b[i]);
    return e;
}

int main(void)
{
    double peak1, peak2, mem, data, secs, rate = 0;
    fprintf(stderr, "bench: measuring the FMA peak and the bandwidth\n");
    peak1 = fmax(rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.5),
                 rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.5));
    peak2 = fmax(rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.5),
                 rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.5));
    printf("simd path %s; FMA peak %.1f GFLOP/s (1 thread), %.1f "
           "(2 threads); triad %.1f GB/s\n",
           rope_simd_name(rope_simd_resolve(ROPE_SIMD_AUTO)), peak1,
           peak2, rope_triad_bandwidth(0.5));
    fprintf(stderr, "bench: n=32768 memory check (2 threads)\n");
    if (bench_memory(&mem, &data, &secs)) return 1;
    printf("n=32768 d=64 8/2 causal, 2 threads: %.2f s, peak RSS %.1f "
           "MiB, q+k+v+out %.1f MiB, ratio %.3f (must be < 2)\n",
           secs, mem, data, mem / data);
    printf("\n%5s %3s %2s %9s %9s %9s %9s %7s %6s %6s %5s %6s %7s\n",
           "n", "d", "th", "naive_ms", "tiled_ms", "min_ms",
           "max_ms", "GFLOP/s", "%peak", "xnaive", "x2th", "rope%",
           "MiB");
    static const int ns[3] = {256, 1024, 4096}, ds[2] = {64, 96};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            double one = 0, naive = -1;
            for (int th = 1; th <= 2; th++) {
                bench_row r = {.n = ns[i], .kv = ns[i], .d = ds[j],
                               .threads = th, .causal = 1,
                               .reps = ns[i] <= 1024 ? BENCH_REPS
                                                     : BENCH_REPS_LONG};
                fprintf(stderr, "bench: n=%d d=%d threads=%d\n",
                        r.n, r.d, th);
                if (bench_run(&r, th == 1 ? BENCH_NAIVE_BUDGET : 0,
                              &rate))
                    return 1;
                if (th == 1) { one = r.med; naive = r.naive; }
                printf("%5d %3d %2d %9.2f %9.3f %9.3f %9.3f %7.1f %6.1f %6.1f "
                       "%5.2f %6.1f %7.1f\n",
                       r.n, r.d, r.threads, naive > 0 ? 1e3 * naive : NAN,
                       1e3 * r.med, 1e3 * r.min, 1e3 * r.max, r.gflop / r.med,
                       100 * r.gflop / r.med / (r.threads == 1 ? peak1 : peak2),
                       naive > 0 ? naive / r.med : NAN, one / r.med,
                       100 * r.rope_share, r.work_mib);
            }
        }
    for (int j = 0; j < 2; j++) {
        double one = 0, naive = -1;
        for (int th = 1; th <= 2; th++) {
            bench_row r = {.n = 1, .kv = 4096, .d = ds[j], .threads = th,
                           .causal = 1, .reps = BENCH_REPS,
                           .rotated = 1};
            fprintf(stderr, "bench: decode kv=4096 d=%d threads=%d\n",
                    r.d, th);
            if (bench_run(&r, th == 1 ? BENCH_NAIVE_BUDGET : 0, &rate))
                return 1;
            if (th == 1) { one = r.med; naive = r.naive; }
            printf("decode ");
            printf("%5d %3d %2d %9.2f %9.3f %9.3f %9.3f %7.1f %6.1f %6.1f "
                   "%5.2f %6.1f %7.1f\n",
                   r.n, r.d, r.threads, naive > 0 ? 1e3 * naive : NAN,
                   1e3 * r.med, 1e3 * r.min, 1e3 * r.max, r.gflop / r.med,
                   100 * r.gflop / r.med / (r.threads == 1 ? peak1 : peak2),
                   naive > 0 ? naive / r.med : NAN, one / r.med,
                   100 * r.rope_share, r.work_mib);
        }
    }
    return 0;
}
