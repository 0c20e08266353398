/* W5c.2 The benchmark */
/* bench-harness.h: the benchmark harness of chapter 5, shared by
   make bench, the book-data writer and the tests. */
#ifndef ROPE_BENCH_HARNESS_H
#define ROPE_BENCH_HARNESS_H
#include "rope.h"
#include "attention-tune.h"
#include "bench-machine.h"

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
    int tries; /* attempts: 1, more if disturbed */
    int unstable; /* still disturbed after the last attempt */
    rope_dtype dtype; /* p.kv_dtype */
    long allocs; /* library allocations in the timed calls */
    double peak; /* FMA loop between the repetitions, GFLOP/s */
    int steps; /* calls per timed sample; 0 counts as 1 */
} bench_row;
typedef int (*bench_attn_fn)(float *out, const float *q, const float *k,
                             const float *v,
                             const rope_attention_params *p);
typedef struct {
    bench_row *r;
    float *b[6]; /* q, k, v, out, cos, sin */
    rope_attention_params p;
    rope_kv_cache c; /* decode rows of this library */
    bench_attn_fn old; /* or NULL */
} bench_case;
enum {
    BENCH_REPS = 51, /* make bench: n <= 1024 and decode */
    BENCH_REPS_LONG = 7, /* make bench: n = 4096 */
    BENCH_TRIES = 3, /* attempts at a disturbed row */
    BENCH_FRESH = 7, /* fresh processes per decode shape */
    BOOK_REPS = 41, /* the book: n <= 1024 */
    BOOK_REPS_LONG = 3, /* the book: n = 4096 */
    BOOK_REPS_DECODE = 21, /* the book: decode */
    BOOK_TUNE_PAIRS = 51, /* the book: effects, n <= 1024, and spin */
    BOOK_TUNE_PAIRS_LONG = 11 /* the book: effects, n = 4096 */
};
#define BENCH_NAIVE_BUDGET 5.0 /* seconds */
#define BOOK_NAIVE_BUDGET 1.5
#define BENCH_SPREAD_MAX 0.5 /* (max - min) / median above: disturbed */
#define BENCH_DRIFT_MAX 0.05 /* peak after vs before, flagged above */
#define BENCH_SCALING_GATE 1.8 /* two-thread FMA loop, at least */
#define BENCH_SCALING_MAX 2.1 /* two threads over one, at most */
#define BENCH_SAMPLE_MIN 2e-3 /* seconds: a timed sample, at least */
enum { BENCH_STEPS_MAX = 64 }; /* calls per timed sample, at most */
typedef enum {
    BENCH_MET, BENCH_NOT_MET, BENCH_NOT_MEASURED
} bench_verdict;
/* W5c.3 The numbers of chapter 5 */
#define BOOK_NOISE_SPREAD 0.5 /* [min, max] wider: noise */
/* W5c.2 The benchmark */
void bench_env(const char *name, const char *value);
double bench_now(void);
double bench_cpu_now(void);
void bench_sleep_ns(long ns);
double bench_median(double *t, int n);
int bench_setup(const bench_row *r, rope_attention_params *p,
                float **buf);
int bench_open(bench_case *k, bench_row *r, bench_attn_fn old);
int bench_step(bench_case *k, int rope, double *seconds);
void bench_close(bench_case *k);
int bench_run(bench_row *r, double naive_budget, double *naive_rate);
int bench_pair(bench_row *a, bench_row *b, bench_attn_fn old_b,
               int *code_b);
int bench_steps_for(double seconds);
double bench_spread(const bench_row *r);
int bench_disturbed(const bench_row *r, double spread_max);
int bench_keep(const bench_row *best, const bench_row *next);
int bench_run_stable(bench_row *r, double naive_budget,
                     double *naive_rate, int tries);
int bench_pair_stable(bench_row *a, bench_row *b, bench_attn_fn old_b,
                      int *code_b, int tries);
int bench_scales(double peak1, double peak2);
int bench_above_two_cores(const bench_row *one, const bench_row *two);
const char *bench_pair_doubt(const bench_row *one, const bench_row *two,
                             int gate);
double bench_drift(double before, double after);
bench_verdict bench_accept(double value, double target, int at_most);
const char *bench_verdict_name(bench_verdict v);
int bench_memory(double *peak_mib, double *before_mib, double *data_mib,
                 double *seconds);
double bench_bf16_old_claim(int d, long n, double z, double vmax);
int bench_bf16_at_scale(double sigma, int n, int d, int h, int hkv,
                        rope_simd simd, double *e);
#endif
