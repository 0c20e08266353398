/* bench-harness.h: the benchmark harness of chapter 5, shared by
   make bench and the book-data writer. */
#ifndef ROPE_BENCH_HARNESS_H
#define ROPE_BENCH_HARNESS_H
#include "rope.h"

typedef struct {
    int n, kv, d, threads; /* seq_len, kv_len, head_dim */
    int causal, reps;
    double gflop; /* (eq. flops), all heads */
    double naive; /* seconds; < 0: skipped */
    double med, min, max; /* tiled with RoPE, seconds */
    double med_norope; /* tiled without RoPE */
    double rope_share; /* median of the paired shares */
    double work_mib; /* rope_attention_workspace_bytes */
    int rotated; /* decode: a cache of rotated keys */
} bench_row;
enum {
    BENCH_REPS = 51, /* make bench: n <= 1024 and decode */
    BENCH_REPS_LONG = 7, /* make bench: n = 4096 */
    BOOK_REPS = 41, /* the book: n <= 1024 */
    BOOK_REPS_LONG = 3, /* the book: n = 4096 */
    BOOK_REPS_DECODE = 21 /* the book: decode */
};
#define BENCH_NAIVE_BUDGET 5.0 /* seconds */
#define BOOK_NAIVE_BUDGET 1.5
#define BOOK_NOISE_SPREAD 0.5 /* [min, max] wider: noise */
double bench_now(void);
double bench_median(double *t, int n);
int bench_setup(const bench_row *r, rope_attention_params *p,
                float **buf);
int bench_run(bench_row *r, double naive_budget, double *naive_rate);
int bench_memory(double *peak_mib, double *data_mib, double *seconds);
#endif
