/* W5c.3 The numbers of chapter 5 */
/* record-attention.c: the measurements of chapter 5, for
   make bench RECORD=1 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bookdata.h"
#include "bench-harness.h"
#include "record.h"

/* W5b.2 The code of the bfloat16 path */
static void att_book_pow2(char *out, size_t n, double s, double x)
{
    double d = x - s;
    int e = d != 0 ? ilogb(d) : 0;
    double m = ldexp(fabs(d), -e);
    char pw[48];
    if (m == 1) snprintf(pw, sizeof pw, "2^{%d}", e);
    else snprintf(pw, sizeof pw, "%g\\cdot 2^{%d}", m, e);
    if (d == 0) snprintf(out, n, "$%g$", s);
    else if (s == 0) snprintf(out, n, "$%s%s$", d < 0 ? "-" : "", pw);
    else snprintf(out, n, "$%g %s %s$", s, d < 0 ? "-" : "+", pw);
}
static int att_book_differ(double *share)
{
    bench_row r = {.n = 1000, .kv = 1000, .d = 64, .threads = 1,
                   .causal = 1, .reps = 1};
    float *b[6] = {0};
    rope_attention_params p;
    size_t n = (size_t)1000 * 8 * 64, diff = 0;
    float *o = malloc(sizeof(float) * n);
    if (!o || bench_setup(&r, &p, b)) return 1;
    p.freqs_cos = b[4]; p.freqs_sin = b[5];
    p.kv_dtype = ROPE_DTYPE_BF16;
    int e = rope_attention(o, b[0], b[1], b[2], &p);
    bench_env("ROPE_BF16", "dpbf16");
    e = e || rope_attention(b[3], b[0], b[1], b[2], &p);
    bench_env("ROPE_BF16", NULL);
    for (size_t i = 0; !e && i < n; i++) diff += o[i] != b[3][i];
    *share = (double)diff / (double)n;
    for (int i = 0; i < 6; i++) free(b[i]);
    free(o);
    return e;
}
static double att_book_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double att_book_median3(const double *x)
{
    double a = x[0], b = x[1], c = x[2];
    return fmax(fmin(a, b), fmin(fmax(a, b), c));
}
/* W5c.3 The numbers of chapter 5 */
static double att_book_pct(const bench_row *r, double p1, double p2)
{
    return 100 * r->gflop / r->med / (r->threads == 1 ? p1 : p2);
}
static void att_book_ms(char *buf, double ms)
{
    int dec = ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : 3;
    snprintf(buf, 32, "%.*f", dec, ms);
}
static double att_book_kernel_error(int n, int d, rope_simd s)
{
    bench_row r = {.n = n, .kv = n + 19, .d = d, .threads = 1,
                   .causal = 1, .reps = 1};
    float *b[6] = {0}, *ref = malloc(sizeof(float) * n * 8 * d);
    rope_attention_params p;
    double m = -1;
    if (ref && !bench_setup(&r, &p, b)) {
        p.freqs_cos = b[4]; p.freqs_sin = b[5];
        p.simd = s;
        if (!rope_attention_naive(ref, b[0], b[1], b[2], &p)
            && !rope_attention(b[3], b[0], b[1], b[2], &p))
        {
            m = 0;
            for (size_t i = 0; i < (size_t)n * 8 * d; i++)
                m = fmax(m, fabs((double)ref[i] - b[3][i]));
        }
    }
    for (int i = 0; i < 6; i++) free(b[i]);
    free(ref);
    return m;
}
static double att_book_exp2_error(void)
{
    enum { N = 126 * 1024 + 1 };
    static float x[N], y[N];
    double worst = 0;
    for (int i = 0; i < N; i++) x[i] = -(float)i / 1024.0f;
    rope_exp2_vec(y, x, N, ROPE_SIMD_AUTO);
    for (int i = 0; i < N; i++) {
        double t = exp2((double)x[i]);
        worst = fmax(worst, fabs(y[i] - t) / t);
    }
    return worst;
}
static void att_book_clean(char *out, size_t size, const char *in)
{
    size_t k = 0;
    for (; *in && k + 1 < size; in++) {
        int c = (unsigned char)*in;
        int ok = isalnum(c) || strchr(" ()-.,@/:+", c);
        if (!ok || c == '\n') c = ' ';
        if (c == ' ' && (k == 0 || out[k - 1] == ' ')) continue;
        out[k++] = (char)c;
    }
    while (k > 0 && out[k - 1] == ' ') k--;
    out[k] = '\0';
    if (k == 0) snprintf(out, size, "an unnamed processor");
}
static int att_book_noisy(const bench_row *r)
{
    return bench_spread(r) > BOOK_NOISE_SPREAD;
}

static int att_book_rope_noise(const bench_row *r)
{
    return r->rope_share < 0 || r->rope_share < bench_spread(r);
}
/* W5c.3.1 The decode sweep */
static long att_cache_bytes(int level)
{
    long b = level == 2 ? sysconf(_SC_LEVEL2_CACHE_SIZE)
                        : sysconf(_SC_LEVEL3_CACHE_SIZE);
    for (int i = 0; b <= 0 && i < 8; i++) {
        char path[128], buf[64];
        long lv = 0, sz = 0;
        const char *what[3] = {"level", "type", "size"};
        int ok = 1, instr = 0;
        for (int w = 0; w < 3 && ok; w++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/"
                     "cache/index%d/%s", i, what[w]);
            FILE *c = fopen(path, "r");
            ok = c && fgets(buf, sizeof buf, c);
            if (c) fclose(c);
            if (ok && w == 0) lv = atol(buf);
            if (ok && w == 1) instr = !strncmp(buf, "Instruction", 11);
            if (ok && w == 2)
                sz = atol(buf) * (strchr(buf, 'M') ? 1048576 : 1024);
        }
        if (ok && lv == level && !instr) b = sz;
    }
    return b > 0 ? b : 0;
}

/* W5c.3 The numbers of chapter 5 */
int record_attention(const char *dir)
{
    FILE *f = bd_open(dir, "attention-measured.tex");
    bench_row rows[16];
    double peak1, peak2, bw;
    int nrows = 0;
    fprintf(f, "%% measured by make bench RECORD=1 (record-attention.c)\n");
    double mem, before, data, secs;
    fprintf(stderr, "record: attention: n=32768 memory check\n");
    if (bench_memory(&mem, &before, &data, &secs)) return 1;
    bd_def(f, "attention-rss-before", "%.0f", before);
    bd_def(f, "attention-mem-peak", "%.0f", mem);
    bd_def(f, "attention-mem-data", "%.0f", data);
    bd_def(f, "attention-mem-ratio", "%.2f", mem / data);
    bd_def(f, "attention-mem-secs", "%.1f", secs);
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    peak1 = rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.3);
    peak2 = rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.3);
    bw = rope_triad_bandwidth(0.3);
    bd_def(f, "attention-bw", "%.0f", bw);
    bd_def(f, "attention-load-share", "%.0f",
           100 * rope_fma_load_share(ROPE_SIMD_AUTO, 0.3));
    bd_def(f, "attention-l1-kib", "%ld", l1 > 0 ? l1 / 1024 : 0);
    bd_def(f, "attention-l2-kib", "%ld", l2 > 0 ? l2 / 1024 : 0);
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    bd_def(f, "attention-l3-mib", "%ld", l3 > 0 ? l3 / 1048576 : 0);
    bd_def(f, "attention-simd", "%s",
           rope_simd_name(rope_simd_resolve(ROPE_SIMD_AUTO)));
    char cpu[128] = "an unnamed processor", line[1024];
    int vm = 0;
    FILE *ci = fopen("/proc/cpuinfo", "r");
    while (ci && fgets(line, sizeof line, ci)) {
        if (!strncmp(line, "model name", 10) && strchr(line, ':')
            && !strcmp(cpu, "an unnamed processor"))
            att_book_clean(cpu, sizeof cpu, strchr(line, ':') + 1);
        if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
            vm = 1;
    }
    if (ci) fclose(ci);
    bd_def(f, "attention-cpu", "%s", cpu);
    bd_def(f, "attention-machine-kind", "%s",
           vm ? "a virtual machine" : "a machine");
    bd_def(f, "attention-ncpu", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    static const int ns[4] = {256, 1024, 4096, 1}, ds[2] = {64, 96};
    double rate = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int th = 1; th <= 2; th++) {
                bench_row *r = &rows[nrows++];
                *r = (bench_row){.n = ns[i], .kv = i == 3 ? 4096 : ns[i],
                                 .d = ds[j], .threads = th, .causal = 1,
                                 .reps = i == 3 ? BOOK_REPS_DECODE
                                         : i < 2 ? BOOK_REPS
                                         : BOOK_REPS_LONG,
                                 .rotated = i == 3};
                fprintf(stderr, "record: attention: n=%d kv=%d d=%d "
                        "threads=%d\n", r->n, r->kv, r->d, th);
                if (bench_run(r, th == 1 ? BOOK_NAIVE_BUDGET : 0, &rate))
                    return 1;
                if (th == 2) r->naive = r[-1].naive;
            }
    fprintf(stderr, "record: attention: FMA peak again\n");
    double after1 = rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.3);
    double after2 = rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.3);
    double drift = fmax(bench_drift(peak1, after1), bench_drift(peak2, after2));
    bd_def(f, "attention-peak1-before", "%.0f", peak1);
    bd_def(f, "attention-peak2-before", "%.0f", peak2);
    bd_def(f, "attention-peak1-after", "%.0f", after1);
    bd_def(f, "attention-peak2-after", "%.0f", after2);
    bd_def(f, "attention-peak-drift", "%.0f", 100 * drift);
    bd_def(f, "attention-peak-drift-verdict", "%s", drift > BENCH_DRIFT_MAX
           ? "more than the benchmark's threshold, so the machine changed "
             "while the rows ran and their percentages are uncertain by as "
             "much"
           : "within the benchmark's threshold, so the machine offered the "
             "same arithmetic at the start and at the end of the rows");
    bd_def(f, "attention-drift-pct", "%.0f", 100 * BENCH_DRIFT_MAX);
    bd_def(f, "attention-spread-pct", "%.0f", 100 * BENCH_SPREAD_MAX);
    bd_def(f, "attention-sample-ms", "%.0f", 1e3 * BENCH_SAMPLE_MIN);
    bd_def(f, "attention-steps-max", "%d", BENCH_STEPS_MAX);
    bd_def(f, "attention-tries", "%d", BENCH_TRIES);
    bd_def(f, "attention-fresh", "%d", BENCH_FRESH);
    bd_def(f, "attention-gate", "%.1f", BENCH_SCALING_GATE);
    double ps = fmin(peak2 / peak1, after2 / after1);
    int gate = bench_scales(peak1, peak2) && bench_scales(after1, after2);
    peak1 = fmax(peak1, after1);
    peak2 = fmax(peak2, after2);
    bd_def(f, "attention-peak1", "%.0f", peak1);
    bd_def(f, "attention-round-ms", "%.1f",
           rope_fma_round_flops(ROPE_SIMD_AUTO) / peak1 / 1e6);
    bd_def(f, "attention-peak2", "%.0f", peak2);
    bd_def(f, "attention-peak-scaling", "%.2f", ps);
    bd_def(f, "attention-balance", "%.1f", peak1 / bw);
    double ridge = 64 / 4 / (peak1 / bw); /* the naive kernel's intensity */
    bd_def(f, "attention-naive-ridge", "%s", ridge > 1.1
           ? "That is above the balance" : ridge < 1 / 1.1
           ? "That is below the balance" : ridge >= 1
           ? "That is at the ridge, just above the balance"
           : "That is at the ridge, just below the balance");
    FILE *t = bd_open(dir, "attention-bench.tex");
    fputs("\\begin{tabular}{rrrrrrcrrrrrr}\n\\toprule\n"
          "$N$ & $N_{kv}$ & $d$ & thr. & naive & tiled & [min, max] & "
          "GFLOP/s & \\% peak & $\\times$naive & scaling & RoPE \\% & "
          "MiB \\\\\n & & & & ms & ms & ms & & & & & & \\\\\n"
          "\\midrule\n", t);
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        char nv[32] = "--", sp[32] = "--";
        if (r->naive > 0) {
            snprintf(nv, sizeof nv, "%.0f", 1e3 * r->naive);
            snprintf(sp, sizeof sp, "%.0f", r->naive / r->med);
        }
        const char *dag = "$^\\dagger$";
        char ms[3][32];
        att_book_ms(ms[0], 1e3 * r->med);
        att_book_ms(ms[1], 1e3 * r->min);
        att_book_ms(ms[2], 1e3 * r->max);
        char pc[32] = "--"; /* two threads: only where the gate is open */
        if (r->threads == 1 || gate)
            snprintf(pc, sizeof pc, "%.0f", att_book_pct(r, peak1, peak2));
        fprintf(t, "%d & %d & %d & %d & %s & %s%s & [%s, %s] & "
                "%.0f & %s & %s & %.2f & %.1f%s & %.1f \\\\\n",
                r->n, r->kv, r->d, r->threads, nv, ms[0],
                att_book_noisy(r) ? dag : "", ms[1], ms[2], r->gflop / r->med,
                pc,
                sp, r->threads == 2 ? r[-1].med / r->med : 1.0,
                100 * r->rope_share, att_book_rope_noise(r) ? dag : "",
                r->work_mib);
    }
    fputs("\\bottomrule\n\\end{tabular}\n", t);
    bd_close(t);
    FILE *tr = bd_open(dir, "attention-rows.tsv"); /* for make bench */
    fputs("# n kv d threads gflops pct-of-peak (-1: two threads, gate closed)\n",
          tr);
    for (int i = 0; i < nrows; i++)
        fprintf(tr, "%d %d %d %d %.2f %.1f\n", rows[i].n, rows[i].kv,
                rows[i].d, rows[i].threads, rows[i].gflop / rows[i].med,
                rows[i].threads == 1 || gate
                ? att_book_pct(&rows[i], peak1, peak2) : -1.0);
    bd_close(tr);
    FILE *g = bd_open(dir, "attention-gflops.dat");
    fputs("n d64t1 d64t2 d96t1 d96t2 peak1 peak2\n", g);
    for (int i = 0; i < 3; i++) {
        const bench_row *r = &rows[4 * i];
        fprintf(g, "%d %.2f %.2f %.2f %.2f %.2f %.2f\n", r[0].n,
                r[0].gflop / r[0].med, r[1].gflop / r[1].med,
                r[2].gflop / r[2].med, r[3].gflop / r[3].med, peak1, peak2);
    }
    bd_close(g);
    FILE *rf = bd_open(dir, "attention-roofline.dat");
    fputs("intensity roof\n", rf);
    for (double x = 0.125; x <= 256; x *= 1.25)
        fprintf(rf, "%.4g %.4g\n", x, bw * x < peak1 ? bw * x : peak1);
    bd_close(rf);
    FILE *pt = bd_open(dir, "attention-roofline-points.dat");
    fputs("intensity gflops label\n", pt);
    fprintf(pt, "%d %.3g naive\n", 64 / 4, rows[4].gflop / rows[4].naive);
    fprintf(pt, "%d %.3g tiled\n", ROPE_ATTENTION_ROWS / 2,
            rows[8].gflop / rows[8].med);
    bd_close(pt);
    double best = 0;
    for (int i = 4; i < 12; i += 2)
        best = fmax(best, att_book_pct(&rows[i], peak1, peak2));
    bd_def(f, "attention-best-pct", "%.0f", best);
    for (int j = 0; j < 2; j++) {
        const bench_row *a = &rows[4 + 2 * j], *b = &rows[8 + 2 * j];
        const bench_row *c = &rows[12 + 2 * j];
        char key[64];
        int d = ds[j];
        snprintf(key, sizeof key, "attention-pct-1024-%d", d);
        bd_def(f, key, "%.0f", att_book_pct(a, peak1, peak2));
        snprintf(key, sizeof key, "attention-pct-4096-%d", d);
        bd_def(f, key, "%.0f", att_book_pct(b, peak1, peak2));
        snprintf(key, sizeof key, "attention-speedup-1024-%d", d);
        bd_def(f, key, "%.0f", a->naive / a->med);
        snprintf(key, sizeof key, "attention-scaling-4096-%d", d);
        bd_def(f, key, "%.2f", b->med / b[1].med);
        snprintf(key, sizeof key, "attention-rope-1024-%d", d);
        bd_def(f, key, "%.1f", 100 * a->rope_share);
        snprintf(key, sizeof key, "attention-decode-us-%d", d);
        bd_def(f, key, "%.0f", 1e6 * c->med);
        snprintf(key, sizeof key, "attention-decode-gflops-%d", d);
        bd_def(f, key, "%.0f", c->gflop / c->med);
        snprintf(key, sizeof key, "attention-decode-scaling-%d", d);
        bd_def(f, key, "%.2f", c->med / c[1].med);
        snprintf(key, sizeof key, "attention-decode-noise-%d", d);
        bd_def(f, key, "%s", att_book_noisy(c)
               ? " (a median that this run marks as noise)" : "");
    }
    bd_def(f, "attention-noise-pct", "%.0f", 100 * BOOK_NOISE_SPREAD);
    bd_def(f, "attention-second-core-verdict", "%s",
           ps >= 1.8 ? "The FMA loop nearly doubled, so the second core "
                       "was free for most of the run."
           : ps >= 1.4 ? "The FMA loop did not double, so the second core "
                         "was partly busy with other work during the run."
           : "The FMA loop gained little from the second core, which was "
             "busy with other work during the run; no kernel could scale "
             "in it, and the two-thread rows say little about the kernel.");
    const bench_row *s64 = &rows[9], *s96 = &rows[11];
    double k64 = s64[-1].med / s64->med / ps, k96 = s96[-1].med / s96->med / ps;
    double ks = fmin(k64, k96), ks_hi = fmax(k64, k96);
    char verdict[512];
    if (att_book_noisy(s64) || att_book_noisy(s96))
        snprintf(verdict, sizeof verdict, "The two-thread rows at this "
                 "length are noise in this run (marked in the table): the "
                 "ratios describe the other work on the machine more than "
                 "the kernel.");
    else if (bench_above_two_cores(&s64[-1], s64)
             || bench_above_two_cores(&s96[-1], s96))
        snprintf(verdict, sizeof verdict, "A ratio above %.1f cannot come "
                 "from a second thread alone: the one-thread row it divides "
                 "was slowed by other work, and the ratio says nothing about "
                 "the kernel.", BENCH_SCALING_MAX);
    else if (ks >= 1.1)
        snprintf(verdict, sizeof verdict, "The kernel's ratios exceed the "
                 "loop's, which says only that the second core was freer "
                 "while the kernel ran than while the loop did: the two "
                 "measurements did not see the same machine.");
    else if (ks >= 0.9 && ks_hi < 1.1)
        snprintf(verdict, sizeof verdict, "Both of the kernel's ratios lie "
                 "within ten percent of the loop's: the kernel used what the "
                 "run had of the second core.");
    else if (ks >= 0.9)
        snprintf(verdict, sizeof verdict, "One of the kernel's ratios lies "
                 "within ten percent of the loop's and the other above it, "
                 "which says only that the second core was freer while that "
                 "row ran than while the loop did.");
    else
        snprintf(verdict, sizeof verdict, "The measured ratios fall %s "
                 "of the loop's: the two threads also compete for the "
                 "shared caches and memory, which the loop, running from "
                 "registers, does not, and with %d repetitions at this "
                 "length one disturbed run moves a median; \\texttt{make bench}, "
                 "with more, is the measurement to trust.",
                 ks >= 0.7 ? "short" : "well short", BOOK_REPS_LONG);
    bd_def(f, "attention-scaling-verdict", "%s", verdict);
    int rv[2];
    static const char *const one[] = {
        "noise (the runs with the rotation happened to be faster)",
        "within the noise of its row's [min, max] interval",
        "a small but measurable cost", "a noticeable cost"
    };
    static const char *const both[] = {
        "noise (the runs with the rotation happened to be faster)",
        "within the noise of their rows' [min, max] intervals",
        "small but measurable costs", "noticeable costs"
    };
    for (int j = 0; j < 2; j++) {
        const bench_row *a = &rows[4 + 2 * j];
        char key[64];
        rv[j] = a->rope_share < 0 ? 0 : att_book_rope_noise(a) ? 1
                : a->rope_share < 0.1 ? 2 : 3;
        snprintf(key, sizeof key, "attention-rope-verdict-%d", ds[j]);
        bd_def(f, key, "%s", one[rv[j]]);
    }
    if (rv[0] == rv[1])
        bd_def(f, "attention-rope-verdict", "Both shares are %s.", both[rv[0]]);
    else
        bd_def(f, "attention-rope-verdict", "The share of the narrower heads "
               "is %s, that of the wider ones %s.", one[rv[0]], one[rv[1]]);
    int up_d1 = att_book_pct(&rows[6], peak1, peak2)
                >= att_book_pct(&rows[4], peak1, peak2);
    int up_d = up_d1 && att_book_pct(&rows[10], peak1, peak2)
                        >= att_book_pct(&rows[8], peak1, peak2);
    const bench_row *dn = up_d1 ? &rows[8] : &rows[4];
    int up_n = att_book_pct(&rows[8], peak1, peak2)
               >= att_book_pct(&rows[4], peak1, peak2)
               && att_book_pct(&rows[10], peak1, peak2)
               >= att_book_pct(&rows[6], peak1, peak2);
    int trend_noisy = att_book_noisy(&rows[4]) || att_book_noisy(&rows[6])
                      || att_book_noisy(&rows[8]) || att_book_noisy(&rows[10]);
    char dmiss[256];
    snprintf(dmiss, sizeof dmiss, "In this run the rows follow the trend in "
             "$N$ but not the one in $d$ at $N = %d$ (%.1f GFLOP/s for "
             "$d = 96$ against %.1f for $d = 64$); ", dn->n,
             dn[2].gflop / dn[2].med, dn->gflop / dn->med);
    bd_def(f, "attention-trend-verdict", "%s%s%s", up_d && up_n
           ? "The one-thread rows of this run follow both trends "
             "(figure~\\ref{fig:attention-gflops})."
           : up_n ? dmiss : "",
           up_d && up_n ? ""
           : up_n ? "a single median on a shared machine moves by several "
                    "percent from one run to the next "
                    "(figure~\\ref{fig:attention-gflops})."
           : "In this run the rows do not follow the trend in $N$ "
             "(figure~\\ref{fig:attention-gflops}); a single median on a "
             "shared machine moves by several percent from one run to "
             "the next.",
           trend_noisy ? "  Some of these rows are marked as noise in the "
                         "table, so this run is weak evidence either way."
                       : "");
    double dsc = fmin(rows[12].med / rows[13].med,
                      rows[14].med / rows[15].med);
    int dec_noisy = att_book_noisy(&rows[12]) || att_book_noisy(&rows[13])
                    || att_book_noisy(&rows[14]) || att_book_noisy(&rows[15]);
    double c64 = 2.0 * 4096 * 2 * 64 * sizeof(float);
    int super64 = rows[12].med / rows[13].med > 2.0 && l2 > 0
                  && c64 > l2 && c64 / 2 <= l2;
    char super[320];
    snprintf(super, sizeof super, "For $d = 64$ two threads are more than "
             "twice as fast as one, a superlinear speed-up.  A likely cause, "
             "not measured here, is capacity: its cache of %.0f~MiB exceeds "
             "a core's level-2 cache of %.0f~MiB, but each thread's half "
             "fits in one.", c64 / 1048576, l2 / 1048576.0);
    bd_def(f, "attention-decode-verdict", "%s", dec_noisy
           ? "Some decode rows are noise in this run (marked in the "
             "table): a step this short is easily disturbed, and "
             "\\texttt{make bench}, with more repetitions, is the "
             "measurement to trust."
           : super64 ? super
           : dsc < 1.0
           ? "Two threads are slower than one here, although the threads "
             "come from the pool: waking a thread and waiting for it costs "
             "more than it saves on a step this short, or the second core "
             "was busy with other work."
           : dsc < 1.2
           ? "For so short a step the gain is small: the second core adds "
             "little bandwidth, or was busy with other work."
           : "Two threads help even for so short a step: the pool wakes "
             "its threads without creating them, and the second core "
             "reads its half of the cache with bandwidth of its own.");
    double maxerr = 0, exp_err = 0;
    for (int j = 0; j < 3; j++)
        for (int s = ROPE_SIMD_SCALAR; s <= ROPE_SIMD_AVX512; s++) {
            if (!rope_simd_available((rope_simd)s)) continue;
            double e = att_book_kernel_error(1000, 64 + 32 * j,
                                             (rope_simd)s);
            if (e < 0) return 1;
            maxerr = e > maxerr ? e : maxerr;
        }
    exp_err = att_book_exp2_error();
    bd_def(f, "attention-test-maxerr", "$%.1f\\times 10^{%d}$",
           maxerr / pow(10, floor(log10(maxerr))),
           (int)floor(log10(maxerr)));
    bd_def(f, "attention-exp2-relerr", "$%.1f\\times 10^{%d}$",
           exp_err / pow(10, floor(log10(exp_err))),
           (int)floor(log10(exp_err)));
    bd_def(f, "attention-exp2-ulps", "%.1f", exp_err / ldexp(1.0, -24));
    /* W5b.2 The code of the bfloat16 path */
    fprintf(stderr, "record: attention: bfloat16\n");
    {
        double fma1 = 0, dot1 = 0; /* alternately, the best of three */
        for (int k = 0; k < 3; k++) {
            fma1 = fmax(fma1, rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.1));
            dot1 = fmax(dot1, rope_bf16_dot_peak(0.1));
        }
        bd_def(f, "attention-bf16-native", "%s",
               rope_bf16_amx(ROPE_SIMD_AUTO)
               ? "on the AMX tiles (\\texttt{tdpbf16ps})"
               : rope_bf16_native(ROPE_SIMD_AUTO) ? "with \\texttt{vdpbf16ps}"
                                                  : "emulated");
        if (rope_bf16_amx(ROPE_SIMD_AUTO)) {
            double amx1 = 0, fmaa = 0, differ;
            static const double start[4] = {1, 1, 0, 0};
            for (int k = 0; k < 3; k++) {
                fmaa = fmax(fmaa, rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.1));
                amx1 = fmax(amx1, rope_bf16_amx_peak(0.1));
            }
            bd_def(f, "attention-amx-peak", "%.0f", amx1);
            bd_def(f, "attention-amx-peak-ratio", "%.0f", amx1 / fmaa);
            bd_def(f, "attention-amx-ulps", "%.1f",
                   rope_bf16_amx_error(60000, 99));
            for (int k = 0; k < 4; k++) {
                double got, want, mag;
                char name[64], val[96];
                if (rope_bf16_amx_probe(k, &got, &want, &mag)) return 1;
                att_book_pow2(val, sizeof val, start[k], got);
                snprintf(name, sizeof name, "attention-amx-probe-%d", k);
                bd_def(f, name, "%s", val);
            }
            if (att_book_differ(&differ)) return 1;
            bd_def(f, "attention-amx-differ", "%.0f\\%%", 100 * differ);
        } else {
            static const char *const names[] = {
                "attention-amx-peak", "attention-amx-peak-ratio",
                "attention-amx-ulps", "attention-amx-probe-0",
                "attention-amx-probe-1", "attention-amx-probe-2",
                "attention-amx-probe-3", "attention-amx-differ"};
            for (int k = 0; k < 8; k++) bd_def(f, names[k], "%s", "--");
        }
        const char *kn = rope_bf16_kernels(ROPE_SIMD_AUTO);
        bd_def(f, "attention-has-amx", "%d", !strcmp(kn, "amx"));
        bd_def(f, "attention-has-dpbf16", "%d", dot1 > 0
               && (!strcmp(kn, "amx") || !strcmp(kn, "vdpbf16ps")));
        bd_def(f, "attention-bf16-dot", "%.0f", dot1);
        bd_def(f, "attention-bf16-fma", "%.0f", fma1);
        bd_def(f, "attention-bf16-dot-ratio", "%.2f",
               fma1 > 0 ? dot1 / fma1 : 0.0);
        for (int j = 0; j < 2; j++) {
            bench_row r = {.n = 4096, .kv = 4096, .d = 64 + 32 * j, .threads = 1,
                           .causal = 1, .reps = 1};
            float *b[6] = {0};
            rope_attention_params p;
            double ratio[3], gf[3], gb[3];
            char name[64];
            if (bench_setup(&r, &p, b)) return 1;
            p.freqs_cos = b[4]; p.freqs_sin = b[5];
            int amx = rope_bf16_amx(ROPE_SIMD_AUTO);
            double rdp[3] = {0, 0, 0};
            for (int k = 0; k < 3; k++) {
                double t0 = att_book_now();
                p.kv_dtype = ROPE_DTYPE_F32;
                if (rope_attention(b[3], b[0], b[1], b[2], &p)) return 1;
                double t1 = att_book_now();
                p.kv_dtype = ROPE_DTYPE_BF16;
                if (rope_attention(b[3], b[0], b[1], b[2], &p)) return 1;
                double t2 = att_book_now(), fl = 2.0 * 4096.0 * 4096 * r.d * 8;
                ratio[k] = (t1 - t0) / (t2 - t1);
                gf[k] = fl / (t1 - t0) / 1e9;
                gb[k] = fl / (t2 - t1) / 1e9;
                if (amx) {
                    bench_env("ROPE_BF16", "dpbf16");
                    int e = rope_attention(b[3], b[0], b[1], b[2], &p);
                    bench_env("ROPE_BF16", NULL);
                    if (e) return 1;
                    rdp[k] = (t1 - t0) / (att_book_now() - t2);
                } else {
                    rdp[k] = ratio[k]; /* the default kernels are those */
                }
            }
            /* the ratio of the two speeds as printed, so that text and ratio agree */
            double sb = round(att_book_median3(gb)), sf = round(att_book_median3(gf));
            snprintf(name, sizeof name, "attention-bf16-ratio-%d", r.d);
            bd_def(f, name, "%.2f", sb / sf);
            snprintf(name, sizeof name, "attention-bf16-dpratio-%d", r.d);
            bd_def(f, name, "%.2f", amx ? att_book_median3(rdp) : sb / sf);
            snprintf(name, sizeof name, "attention-bf16-gflops-%d", r.d);
            bd_def(f, name, "%.0f", sb);
            snprintf(name, sizeof name, "attention-f32-gflops-%d", r.d);
            bd_def(f, name, "%.0f", sf);
            for (int i = 0; i < 6; i++) free(b[i]);
        }
    }
    fprintf(stderr, "record: attention: prefill refinements\n");
    {
        static const struct { int knob, off; const char *key; } sw[] = {
            {ROPE_TUNE_STEP, 0, "step"}, {ROPE_TUNE_TAYLOR, 1, "exp"},
            {ROPE_TUNE_ITEM_BLOCKS, 1, "items"},
            {ROPE_TUNE_ITEM_BLOCKS, 8, "items8"}, {ROPE_TUNE_ROWS, 0, "rows"},
            {ROPE_TUNE_PACK, 0, "pack"}, {ROPE_TUNE_REDUCE, 0, "reduce"},
            {ROPE_TUNE_SIX, 0, "six"}, {ROPE_TUNE_PREFETCH, 0, "prefetch"}
        };
        for (int j = 0; j < 2; j++) {
            bench_row r = {.n = j ? 4096 : 1024, .d = 64, .threads = 1,
                           .causal = 1, .reps = 1};
            r.kv = r.n;
            float *b[6] = {0};
            rope_attention_params p;
            if (bench_setup(&r, &p, b)) return 1;
            p.freqs_cos = b[4]; p.freqs_sin = b[5];
            for (int k = 0; k < (int)(sizeof sw / sizeof sw[0]); k++) {
                double ratio[BOOK_TUNE_PAIRS];
                char name[64];
                int pairs = r.n <= 1024 ? BOOK_TUNE_PAIRS : BOOK_TUNE_PAIRS_LONG;
                int on = rope_attention_tune(sw[k].knob, sw[k].off);
                for (int i = 0; i < pairs; i++) {
                    double t[2];
                    for (int h = 0; h < 2; h++) {
                        int use = (h + i) % 2; /* 0: without, 1: with */
                        rope_attention_tune(sw[k].knob, use ? on : sw[k].off);
                        double t0 = bench_cpu_now();
                        if (rope_attention(b[3], b[0], b[1], b[2], &p)) return 1;
                        t[use] = bench_cpu_now() - t0;
                    }
                    ratio[i] = t[0] / t[1];
                }
                rope_attention_tune(sw[k].knob, on);
                snprintf(name, sizeof name, "attention-tune-%s-%d", sw[k].key, r.n);
                bd_def(f, name, "%.0f", /* + 0.0: a rounded -0 prints as 0 */
                       round(100 * (bench_median(ratio, pairs) - 1)) + 0.0);
            }
            for (int i = 0; i < 6; i++) free(b[i]);
        }
    }
    fprintf(stderr, "record: attention: spinning pool\n");
    {
        bench_row one = {.n = 1, .kv = 4096, .d = 64, .threads = 1,
                         .causal = 1, .reps = 1, .rotated = 1};
        bench_row two = one;
        two.threads = 2;
        bench_case k1, k2;
        double ratio[BOOK_TUNE_PAIRS], t[2], w;
        int e = bench_open(&k1, &one, NULL) || bench_open(&k2, &two, NULL);
        int on = rope_attention_tune(ROPE_TUNE_SPIN, 1);
        e = e || bench_step(&k2, 1, &w);
        for (int i = 0; !e && i < BOOK_TUNE_PAIRS; i++) {
            for (int h = 0; h < 2 && !e; h++) {
                int use = (h + i) % 2; /* 0: without the spin, 1: with */
                rope_attention_tune(ROPE_TUNE_SPIN, use ? on : 0);
                e = bench_step(&k1, 1, &w) || bench_step(&k2, 1, &t[use]);
            }
            ratio[i] = t[0] / t[1];
        }
        rope_attention_tune(ROPE_TUNE_SPIN, on);
        bench_close(&k1);
        bench_close(&k2);
        if (e) return 1;
        bd_def(f, "attention-tune-spin-decode", "%.2f",
               bench_median(ratio, BOOK_TUNE_PAIRS));
    }
    /* W5c.3 The numbers of chapter 5 */
    bd_close(f);
    return 0;
}
/* W5c.3.1 The decode sweep */
enum { DECODE_SIZES = 10, DECODE_KV0 = 1024 };
int record_decode(const char *dir)
{
    bench_row r[DECODE_SIZES];
    double rate = 0, intensity = 2.0; /* FLOPs per byte of cache */
    long l2 = att_cache_bytes(2), l3 = att_cache_bytes(3);
    if (record_provenance(dir, record_commit, "decode")) return 1;
    double pk0 = rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.3);
    double bw0 = rope_triad_bandwidth(0.3);
    for (int i = 0; i < DECODE_SIZES; i++) {
        r[i] = (bench_row){.n = 1, .kv = DECODE_KV0 << i, .d = 64,
                           .threads = 1, .causal = 1,
                           .reps = BOOK_REPS_DECODE, .rotated = 1};
        fprintf(stderr, "record: decode: kv=%d\n", r[i].kv);
        if (bench_run_stable(&r[i], 0, &rate, BENCH_TRIES)) return 1;
    }
    double pk1 = rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.3);
    double bw1 = rope_triad_bandwidth(0.3);
    double pk = fmax(pk0, pk1), bw = fmax(bw0, bw1);
    FILE *t = bd_open(dir, "decode-sweep.dat");
    FILE *c = bd_open(dir, "decode-caches.dat");
    FILE *f = bd_open(dir, "decode-measured.tex");
    const double mem_factor = 1.5;
    int first_mem = -1;
    fprintf(t, "kv mib gflops lo hi gbs peak roof\n");
    for (int i = 0; i < DECODE_SIZES; i++) {
        double bytes = 2.0 * r[i].kv * 2 * r[i].d * sizeof(float);
        double g = r[i].gflop / r[i].med, gbs = bytes / r[i].med / 1e9;
        fprintf(t, "%d %.4g %.4g %.4g %.4g %.4g %.4g %.4g\n", r[i].kv,
                bytes / 1048576, g, r[i].gflop / r[i].max,
                r[i].gflop / r[i].min, gbs, pk, bw * intensity);
        if (first_mem < 0 && gbs <= mem_factor * bw) first_mem = i;
    }
    fprintf(c, "mib top label\n");
    if (l2 > 0) fprintf(c, "%.4g %.4g L2\n", l2 / 1048576.0, 1.05 * pk);
    if (l3 > 0) fprintf(c, "%.4g %.4g L3\n", l3 / 1048576.0, 1.05 * pk);
    fprintf(f, "%% measured by build/record DIR COMMIT decode\n");
    bd_def(f, "decode-kv-first", "%d", r[0].kv);
    bd_def(f, "decode-kv-last", "%d", r[DECODE_SIZES - 1].kv);
    bd_def(f, "decode-mib-first", "%.0f", r[0].kv * 1024.0 / 1048576);
    bd_def(f, "decode-mib-last", "%.0f",
           r[DECODE_SIZES - 1].kv * 1024.0 / 1048576);
    bd_def(f, "decode-mem-factor", "%.1f", mem_factor);
    bd_def(f, "decode-intensity", "%.0f", intensity);
    bd_def(f, "decode-peak", "%.0f", pk);
    bd_def(f, "decode-bw", "%.1f", bw);
    bd_def(f, "decode-roof", "%.0f", bw * intensity);
    bd_def(f, "decode-balance", "%.1f", pk / bw);
    bd_def(f, "decode-l2-mib", "%.0f", l2 / 1048576.0);
    bd_def(f, "decode-l3-mib", "%.0f", l3 / 1048576.0);
    static const int show[3] = {0, 2, DECODE_SIZES - 1};
    static const char *const tag[3] = {"small", "mid", "large"};
    for (int j = 0; j < 3; j++) {
        const bench_row *x = &r[show[j]];
        char key[64];
        double bytes = 2.0 * x->kv * 2 * x->d * sizeof(float);
        snprintf(key, sizeof key, "decode-%s-mib", tag[j]);
        bd_def(f, key, "%.0f", bytes / 1048576);
        snprintf(key, sizeof key, "decode-%s-gflops", tag[j]);
        bd_def(f, key, "%.0f", x->gflop / x->med);
        snprintf(key, sizeof key, "decode-%s-pct", tag[j]);
        bd_def(f, key, "%.0f", 100 * x->gflop / x->med / pk);
        snprintf(key, sizeof key, "decode-%s-gbs", tag[j]);
        bd_def(f, key, "%.0f", bytes / x->med / 1e9);
        snprintf(key, sizeof key, "decode-%s-ratio", tag[j]);
        bd_def(f, key, "%.1f", bytes / x->med / 1e9 / bw);
    }
    int noisy = 0;
    for (int i = 0; i < DECODE_SIZES; i++)
        noisy += bench_spread(&r[i]) > BOOK_NOISE_SPREAD;
    if (noisy)
        bd_def(f, "decode-noise", "In this recording %d of the %d sizes "
               "%s disturbed (%s [min, max] wider than %.0f\\,\\%% "
               "of the median), so the size at which the step turns "
               "memory-bound is uncertain by a step or two.", noisy,
               DECODE_SIZES, noisy == 1 ? "was" : "were",
               noisy == 1 ? "its" : "their", 100 * BOOK_NOISE_SPREAD);
    else
        bd_def(f, "decode-noise", "No size of this recording was disturbed "
               "(every [min, max] within %.0f\\,\\%% of the median).",
               100 * BOOK_NOISE_SPREAD);
    bd_def(f, "decode-table-verdict", "%s",
           2.0 * r[2].kv * 2 * 64 * 4 / r[2].med > mem_factor * bw * 1e9
           ? "So the table's decode rows, whose cache the processor's "
             "caches hold, are not memory-bound on this machine."
           : "By this test the table's decode rows were memory-bound in "
             "this run.");
    if (first_mem >= 0)
        bd_def(f, "decode-verdict", "On this machine the step turned "
               "memory-bound at a cache of %.0f~MiB (%d keys), which it "
               "read at %.1f~GB/s against a triad bandwidth of %.1f~GB/s "
               "(the smaller caches were read at more than %.1f times the "
               "triad's rate); the level-3 cache that the processor "
               "reports is %.0f~MiB, shared with its other cores.",
               2.0 * r[first_mem].kv * 2 * 64 * 4 / 1048576,
               r[first_mem].kv,
               2.0 * r[first_mem].kv * 2 * 64 * 4 / r[first_mem].med / 1e9,
               bw, mem_factor, l3 / 1048576.0);
    if (first_mem >= 0)
        bd_def(f, "decode-summary", "on the recording machine it turned "
               "memory-bound at a cache of %.0f~MiB, %s the %.0f~MiB of "
               "level-3 cache that the processor reports",
               2.0 * r[first_mem].kv * 2 * 64 * 4 / 1048576,
               2.0 * r[first_mem].kv * 2 * 64 * 4 < l3 ? "below" : "beyond",
               l3 / 1048576.0);
    else
        bd_def(f, "decode-summary", "on the recording machine no cache of "
               "the sweep, up to %.0f~MiB, made it memory-bound",
               r[DECODE_SIZES - 1].kv * 1024.0 / 1048576);
    if (first_mem < 0)
        bd_def(f, "decode-verdict", "No size of the sweep was memory-bound "
               "on this machine: every cache, up to %.0f~MiB, was read at "
               "more than %.1f times the triad bandwidth.",
               r[DECODE_SIZES - 1].kv * 1024.0 / 1048576, mem_factor);
    bd_close(t); bd_close(c); bd_close(f);
    return 0;
}
