/* bench-attention.c: make bench, the measurements of chapter 5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "bench-harness.h"

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
