/* bench-harness.c: timing, rows and the memory check of chapter 5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "bench-harness.h"

double bench_now(void)
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

double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
int bench_setup(const bench_row *r, rope_attention_params *p,
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
int bench_run(bench_row *r, double naive_budget,
              double *naive_rate)
{
    float *b[6] = {0};
    rope_attention_params p;
    rope_kv_cache c = {0};
    int e = bench_setup(r, &p, b);
    double tr[64], tn[64], sh[64];
    if (!e && r->rotated)
        e = rope_kv_cache_init(&c, 1, p.n_kv_heads, r->d, r->kv)
            || rope_kv_cache_append(&c, b[1], b[2], r->kv, &p);
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
            int rope = (i + k) % 2 == 0; /* alternate the order */
            double t = bench_now();
            p.freqs_cos = rope ? b[4] : NULL;
            p.freqs_sin = rope ? b[5] : NULL;
            e = r->rotated ? rope_attention_cached(b[3], b[0], &c, &p)
                           : rope_attention(b[3], b[0], b[1], b[2], &p);
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
    rope_kv_cache_free(&c);
    return e;
}
int bench_memory(double *peak_mib, double *data_mib,
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
