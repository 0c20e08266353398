/* W5c.2 The benchmark */
/* bench-harness.c: timing, rows and the memory check of chapter 5,
   and the bfloat16 error at a scale of the inputs (chapter W5b). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "bench-harness.h"

void bench_env(const char *name, const char *value)
{
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    rope_attention_env_reload();
}
double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bench_sleep_ns(long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
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
    p->kv_dtype = r->dtype;
    for (int i = 0; i < 6; i++) {
        buf[i] = malloc(sizeof(float) * len[i]);
        if (!buf[i]) return 1;
        for (size_t j = 0; i < 3 && j < len[i]; j++)
            buf[i][j] = (float)(2 * rope_uniform(&st) - 1);
    }
    return rope_precompute_freqs_cis(buf[4], buf[5], r->d, r->kv, 1e6,
                                     ROPE_PRECISION_FLOAT);
}
int bench_open(bench_case *k, bench_row *r, bench_attn_fn old)
{
    memset(k, 0, sizeof *k);
    k->r = r;
    k->old = old;
    int e = bench_setup(r, &k->p, k->b);
    if (!e && r->rotated && !old)
        e = rope_kv_cache_init(&k->c, 1, k->p.n_kv_heads, r->d, r->kv)
            || rope_kv_cache_append(&k->c, k->b[1], k->b[2], r->kv - 1,
                                    &k->p);
    r->gflop = (r->causal && r->n == r->kv ? 2.0 : 4.0) * r->n
               * (double)r->kv * r->d * 8 / 1e9;
    r->work_mib = rope_attention_workspace_bytes(&k->p) / 1048576.0;
    return e;
}
void bench_close(bench_case *k)
{
    for (int i = 0; i < 6; i++) free(k->b[i]);
    rope_kv_cache_free(&k->c);
}
int bench_step(bench_case *k, int rope, double *seconds)
{
    const bench_row *r = k->r;
    float **b = k->b;
    size_t last = (size_t)(r->kv - 1) * k->p.n_kv_heads * r->d;
    int e = 0, n = r->steps > 1 ? r->steps : 1;
    k->p.freqs_cos = rope ? b[4] : NULL;
    k->p.freqs_sin = rope ? b[5] : NULL;
    double t = bench_now();
    for (int s = 0; s < n && !e; s++) {
        if (k->old)
            e = k->old(b[3], b[0], b[1], b[2], &k->p);
        else if (r->rotated) {
            e = rope_kv_cache_append(&k->c, b[1] + last, b[2] + last, 1,
                                     &k->p);
            e = e ? e : rope_attention_cached(b[3], b[0], &k->c, &k->p);
        } else
            e = rope_attention(b[3], b[0], b[1], b[2], &k->p);
        if (!k->old && r->rotated && k->c.len == r->kv) k->c.len--;
    }
    *seconds = (bench_now() - t) / n;
    return e;
}
static int bench_warm(bench_case *k)
{
    double w = 0;
    int e = 0;
    k->r->steps = 1;
    for (int s = 0; s < 2 && !e; s++) e = bench_step(k, 1, &w);
    if (!e) k->r->steps = bench_steps_for(w);
    return e;
}
static void bench_summarise(bench_row *r, double *t, int n)
{
    r->med = bench_median(t, n); /* sorts t */
    r->min = t[0];
    r->max = t[n - 1];
}
int bench_run(bench_row *r, double naive_budget,
              double *naive_rate)
{
    bench_case k;
    double tr[64], tn[64], sh[64], pk[64];
    int e = bench_open(&k, r, NULL);
    r->naive = -1;
    r->rope_share = NAN;
    if (r->reps > 64) r->reps = 64;
    if (!e && naive_budget > 0
        && (*naive_rate <= 0 || r->gflop / *naive_rate < naive_budget)) {
        double t = bench_now();
        e = rope_attention_naive(k.b[3], k.b[0], k.b[1], k.b[2], &k.p);
        r->naive = bench_now() - t;
        *naive_rate = r->gflop / r->naive;
    }
    e = e ? e : bench_warm(&k);
    long a0 = rope_attention_allocations();
    for (int i = 0; !e && i < r->reps; i++) {
        for (int j = 0; j < 2 && !e; j++) {
            int rope = (i + j) % 2 == 0; /* alternate the order */
            e = bench_step(&k, rope, rope ? &tr[i] : &tn[i]);
        }
        sh[i] = (tr[i] - tn[i]) / tr[i];
        if (!r->rotated) {
            if (r->threads > 1) bench_sleep_ns(2 * ROPE_ATTENTION_SPIN_NS);
            pk[i] = rope_fma_peak(ROPE_SIMD_AUTO, r->threads, 0);
        }
    }
    r->allocs = rope_attention_allocations() - a0;
    if (!e) {
        r->peak = r->rotated ? NAN : bench_median(pk, r->reps);
        r->med_norope = bench_median(tn, r->reps);
        r->rope_share = bench_median(sh, r->reps);
        bench_summarise(r, tr, r->reps);
    }
    bench_close(&k);
    return e;
}
int bench_pair(bench_row *a, bench_row *b, bench_attn_fn old_b,
               int *code_b)
{
    bench_case ka, kb;
    double ta[64], tb[64];
    int n = a->reps < 64 ? a->reps : 64, e, eb;
    e = bench_open(&ka, a, NULL);
    eb = bench_open(&kb, b, old_b);
    e = e ? e : bench_warm(&ka);
    eb = e || eb ? eb : bench_warm(&kb);
    for (int i = 0; !e && !eb && i < n; i++)
        for (int j = 0; j < 2 && !e && !eb; j++) {
            if ((i + j) % 2 == 0) e = bench_step(&ka, 1, &ta[i]);
            else eb = bench_step(&kb, 1, &tb[i]);
        }
    if (!e && !eb) {
        bench_summarise(a, ta, n);
        bench_summarise(b, tb, n);
    }
    a->rope_share = b->rope_share = NAN;
    *code_b = eb;
    bench_close(&ka);
    bench_close(&kb);
    return e;
}
double bench_spread(const bench_row *r)
{
    return r->med > 0 ? (r->max - r->min) / r->med : INFINITY;
}
int bench_disturbed(const bench_row *r, double spread_max)
{
    return bench_spread(r) > spread_max
           || (!r->rotated && r->rope_share < -bench_spread(r));
}
int bench_steps_for(double seconds)
{
    if (!(seconds > 0)) return 1;
    double s = ceil(BENCH_SAMPLE_MIN / seconds);
    return s < 1 ? 1 : s > BENCH_STEPS_MAX ? BENCH_STEPS_MAX : (int)s;
}
int bench_keep(const bench_row *best, const bench_row *next)
{
    return !bench_disturbed(next, BENCH_SPREAD_MAX)
           || bench_spread(next) < bench_spread(best);
}
int bench_run_stable(bench_row *r, double naive_budget,
                     double *naive_rate, int tries)
{
    bench_row best = *r;
    int t = 1;
    for (;; t++) {
        bench_row next = *r;
        int e = bench_run(&next, t == 1 ? naive_budget : 0, naive_rate);
        if (e) return e;
        next.naive = t == 1 ? next.naive : best.naive;
        if (t == 1 || bench_keep(&best, &next)) best = next;
        if (!bench_disturbed(&best, BENCH_SPREAD_MAX) || t >= tries)
            break;
        fprintf(stderr, "bench:   disturbed (spread %.2f, RoPE share "
                "%.3f): attempt %d\n", bench_spread(&best),
                best.rope_share, t + 1);
    }
    best.tries = t;
    best.unstable = bench_disturbed(&best, BENCH_SPREAD_MAX);
    *r = best;
    return 0;
}
static double bench_pair_spread(const bench_row *a, const bench_row *b)
{
    return fmax(bench_spread(a), bench_spread(b));
}
int bench_pair_stable(bench_row *a, bench_row *b, bench_attn_fn old_b,
                      int *code_b, int tries)
{
    bench_row ba = *a, bb = *b;
    int t = 1;
    for (;; t++) {
        bench_row na = *a, nb = *b;
        int e = bench_pair(&na, &nb, old_b, code_b);
        if (e || *code_b) return e;
        if (t == 1 || bench_pair_spread(&na, &nb)
                      < bench_pair_spread(&ba, &bb)) {
            ba = na;
            bb = nb;
        }
        if (bench_pair_spread(&ba, &bb) <= BENCH_SPREAD_MAX || t >= tries)
            break;
        fprintf(stderr, "bench:   disturbed pair (spread %.2f): attempt "
                "%d\n", bench_pair_spread(&ba, &bb), t + 1);
    }
    ba.tries = bb.tries = t;
    ba.unstable = bench_disturbed(&ba, BENCH_SPREAD_MAX);
    bb.unstable = bench_disturbed(&bb, BENCH_SPREAD_MAX);
    *a = ba;
    *b = bb;
    return 0;
}
int bench_scales(double peak1, double peak2)
{
    return peak1 > 0 && peak2 >= BENCH_SCALING_GATE * peak1;
}
double bench_drift(double before, double after)
{
    return before > 0 ? fabs(after - before) / before : INFINITY;
}
bench_verdict bench_accept(double value, double target, int at_most)
{
    if (!isfinite(value)) return BENCH_NOT_MEASURED;
    return (at_most ? value <= target : value >= target) ? BENCH_MET
                                                        : BENCH_NOT_MET;
}
const char *bench_verdict_name(bench_verdict v)
{
    return v == BENCH_MET ? "met"
           : v == BENCH_NOT_MET ? "not met" : "not measured";
}
int bench_above_two_cores(const bench_row *one, const bench_row *two)
{
    return !(one->med / two->med <= BENCH_SCALING_MAX);
}
const char *bench_pair_doubt(const bench_row *one, const bench_row *two,
                             int gate)
{
    if (!gate) return "2-thread FMA loop below the gate";
    if (one->unstable || two->unstable) return "row unstable";
    if (bench_above_two_cores(one, two))
        return "above what two cores give: a row was disturbed";
    return NULL;
}
int bench_memory(double *peak_mib, double *before_mib,
                 double *data_mib, double *seconds)
{
    bench_row r = {.n = 32768, .kv = 32768, .d = 64, .threads = 2,
                   .causal = 1, .reps = 1};
    float *b[6] = {0};
    rope_attention_params p;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *before_mib = ru.ru_maxrss / 1024.0;
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
/* W5b.2 The code of the bfloat16 path */
double bench_bf16_old_claim(int d, long n, double z, double vmax)
{
    const double u = ldexp(1, -24), ub = ldexp(1, -8);
    double np = (double)n + (n + ROPE_ATTENTION_BK - 1) / ROPE_ATTENTION_BK;
    double gd = (d + 2) * u / (1 - (d + 2) * u);
    double eps = exp2(gd * (1 + ub) * (1 + ub) * z) * (1 + 4 * u)
                 * (1 + ub) - 1;
    double gn = np * u / (1 - np * u);
    return vmax * (2 * eps / (1 - eps) + 2 * gn / (1 - gn) + 3 * u);
}
static double bf16_norm(const float *x, int d)
{
    double s = 0;
    for (int t = 0; t < d; t++) s += (double)x[t] * x[t];
    return sqrt(s);
}
int bench_bf16_at_scale(double sigma, int n, int d, int h, int hkv,
                        rope_simd simd, double *e)
{
    uint64_t st = 20261204;
    rope_attention_params p;
    size_t nq = (size_t)n * h * d, nk = (size_t)n * hkv * d;
    float *b[7];
    size_t len[7] = {nq, nk, nk, nq, nq, nq, (size_t)n * d * 2};
    int bad = 0;
    for (int i = 0; i < 7; i++) bad |= !(b[i] = malloc(sizeof(float) * len[i]));
    if (bad) return 1;
    for (size_t i = 0; i < nq; i++) b[0][i] = (float)(sigma * rope_gaussian(&st));
    for (size_t i = 0; i < nk; i++) b[1][i] = (float)(sigma * rope_gaussian(&st));
    for (size_t i = 0; i < nk; i++) b[2][i] = (float)(2 * rope_uniform(&st) - 1);
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = n; p.n_heads = h; p.n_kv_heads = hkv;
    p.head_dim = d; p.causal = 1; p.table_len = n;
    p.freqs_cos = b[6]; p.freqs_sin = b[6] + (size_t)n * d;
    p.simd = simd;
    bad = rope_precompute_freqs_cis(b[6], b[6] + (size_t)n * d, d, n, 1e6,
                                    ROPE_PRECISION_FLOAT)
          || rope_attention_naive(b[3], b[0], b[1], b[2], &p);
    p.kv_dtype = ROPE_DTYPE_BF16;
    bad = bad || rope_attention_naive(b[4], b[0], b[1], b[2], &p)
          || rope_attention(b[5], b[0], b[1], b[2], &p);
    e[0] = e[1] = e[2] = e[3] = e[4] = 0;
    for (int a = 0; !bad && a < h; a++) {
        int g = a / (h / hkv);
        double kn = 0;
        for (int i = 0; i < n; i++) {
            kn = fmax(kn, bf16_norm(b[1] + ((size_t)i * hkv + g) * d, d));
            size_t at = ((size_t)i * h + a) * d;
            double qn = bf16_norm(b[0] + at, d), ef = 0, er = 0;
            for (int t = 0; t < d; t++) {
                ef = fmax(ef, fabs((double)b[5][at + t] - b[3][at + t]));
                er = fmax(er, fabs((double)b[5][at + t] - b[4][at + t]));
            }
            double z = 1.4426950408889634 / sqrt(d) * qn * kn;
            e[0] = fmax(e[0], z);
            e[1] = fmax(e[1], ef);
            double bound = rope_bf16_error_bound(d, i + 1, qn, kn, 1.0);
            e[2] = fmax(e[2], bound);
            e[3] = fmax(e[3], er);
            e[4] = fmax(e[4], ef / bound);
        }
    }
    for (int i = 0; i < 7; i++) free(b[i]);
    return bad;
}
