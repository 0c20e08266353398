/* W5c.2 The benchmark */
/* bench-attention.c: make bench, the measurements of chapter 5. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench-harness.h"

static void bench_beside_recorded(const char *dir, const bench_row *pre,
                                  const bench_row *dec, double p1,
                                  double p2, int gate)
{
    char path[4096], line[512], cpu[256] = "", date[64] = "";
    char commit[64] = "";
    snprintf(path, sizeof path, "%s/provenance.txt", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "cpu ", 4))
            snprintf(cpu, sizeof cpu, "%.255s", line + 4);
        if (!strncmp(line, "date ", 5))
            snprintf(date, sizeof date, "%.63s", line + 5);
        if (!strncmp(line, "commit ", 7))
            snprintf(commit, sizeof commit, "%.63s", line + 7);
    }
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/attention-rows.tsv", dir);
    if (!(f = fopen(path, "r"))) {
        printf("\nrecorded: %s not found, nothing to compare\n", path);
        return;
    }
    printf("\nthis run beside the book's recorded run (%s, %s, commit %s)\n"
           "%-24s %10s %8s   %10s %8s\n", cpu, date, commit, "row",
           "GFLOP/s", "% peak", "recorded", "% peak");
    while (fgets(line, sizeof line, f)) {
        int n, kv, d, th;
        double g, pc;
        if (line[0] == '#' || sscanf(line, "%d %d %d %d %lf %lf", &n, &kv,
                                     &d, &th, &g, &pc) != 6)
            continue;
        const bench_row *r = NULL;
        for (int i = 0; i < 12 && !r; i++)
            if (pre[i].n == n && pre[i].kv == kv && pre[i].d == d
                && pre[i].threads == th) r = &pre[i];
        for (int i = 0; i < 4 && !r; i++)
            if (dec[i].n == n && dec[i].kv == kv && dec[i].d == d
                && dec[i].threads == th) r = &dec[i];
        if (!r) continue;
        char what[64], mine[16] = "--", theirs[16] = "--";
        snprintf(what, sizeof what, "n=%d kv=%d d=%d %d thr", n, kv, d, th);
        if (th == 1 || gate)
            snprintf(mine, sizeof mine, "%.0f",
                     100 * r->gflop / r->med / (th == 1 ? p1 : p2));
        if (pc >= 0) snprintf(theirs, sizeof theirs, "%.0f", pc);
        printf("%-24s %10.1f %8s   %10.1f %8s\n", what, r->gflop / r->med,
               mine, g, theirs);
    }
    fclose(f);
}
static double bench_t0;
static void bench_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench %6.1f s: ", bench_now() - bench_t0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
static int bench_cpu(char *model, size_t size)
{
    char line[4096];
    int bf16 = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(model, size, "unknown (no /proc/cpuinfo model name)");
    int named = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (!named && !strncmp(line, "model name", 10) && c) {
            snprintf(model, size, "%s", c + 2);
            model[strcspn(model, "\n")] = '\0';
            named = 1;
        }
        if (!strncmp(line, "flags", 5) && strstr(line, " avx512_bf16"))
            bf16 = 1;
    }
    if (f) fclose(f);
    return bf16;
}
static void bench_caches(void)
{
    printf("caches:");
    for (int i = 0; i < 8; i++) {
        char path[128], lv[16] = "", ty[32] = "", sz[32] = "";
        const char *what[3] = {"level", "type", "size"};
        char *out[3] = {lv, ty, sz};
        int ok = 1;
        for (int j = 0; j < 3 && ok; j++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/"
                     "cache/index%d/%s", i, what[j]);
            FILE *f = fopen(path, "r");
            ok = f && fscanf(f, "%31s", out[j]) == 1;
            if (f) fclose(f);
        }
        if (!ok) break;
        printf(" L%s%s %s", lv, !strcmp(ty, "Data") ? "d"
               : !strcmp(ty, "Instruction") ? "i" : "", sz);
    }
    printf("\n");
}
static const char *bench_bf16_unit(void)
{
    const char *k = rope_bf16_kernels(ROPE_SIMD_AUTO);
    return !strcmp(k, "amx") ? "AMX (tdpbf16ps)"
           : !strcmp(k, "vdpbf16ps") ? "vdpbf16ps"
           : !strcmp(k, "avx512f-emulation") ? "the AVX-512F emulation"
           : !strcmp(k, "avx2-emulation") ? "the AVX2 emulation"
                                          : "the portable emulation";
}
static void bench_peaks(double *p1, double *p2, const char *when)
{
    bench_progress("FMA peak %s the rows", when);
    *p1 = fmax(rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.5),
               rope_fma_peak(ROPE_SIMD_AUTO, 1, 0.5));
    *p2 = fmax(rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.5),
               rope_fma_peak(ROPE_SIMD_AUTO, 2, 0.5));
}
static int bench_load_first(const char *path, bench_attn_fn *fn,
                            char *why, size_t size)
{
    char skip[512];
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    void *s = h ? dlsym(h, "rope_attention") : NULL;
    if (s) {
        memcpy(fn, &s, sizeof *fn); /* object to function pointer */
        return 0;
    }
    snprintf(why, size, "%s", !path ? "no library named"
             : h ? "it has no rope_attention" : dlerror());
    snprintf(skip, sizeof skip, "%s.skipped", path ? path : "");
    FILE *f = path ? fopen(skip, "r") : NULL;
    if (f && fgets(why, (int)size, f)) why[strcspn(why, "\n")] = '\0';
    if (f) fclose(f);
    return 1;
}
static double bench_fresh(int d, int threads, const char *lib)
{
    int fd[2], st = 0;
    double t = -1;
    char ds[16], ts[16];
    snprintf(ds, sizeof ds, "%d", d);
    snprintf(ts, sizeof ts, "%d", threads);
    fflush(stdout);
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = {"bench-attention", "--fresh", ds, ts,
                        (char *)lib, NULL};
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = pid > 0 ? fdopen(fd[0], "r") : NULL;
    if (f && fscanf(f, "%lf", &t) != 1) t = -1;
    if (f) fclose(f); else close(fd[0]);
    if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)
                    || WEXITSTATUS(st)))
        t = -1;
    return t;
}
static int bench_fresh_child(int argc, char **argv)
{
    bench_attn_fn old = NULL;
    char why[256];
    if (argc > 4 && bench_load_first(argv[4], &old, why, sizeof why))
        return 1;
    bench_row r = {.n = 1, .kv = 4096, .d = atoi(argv[2]),
                   .threads = atoi(argv[3]), .causal = 1, .reps = 1,
                   .rotated = 1};
    bench_case k;
    double t = -1;
    int e = bench_open(&k, &r, old) || bench_step(&k, 1, &t);
    bench_close(&k);
    if (e) return 1;
    printf("%.9f\n", t);
    return 0;
}
static void bench_print(const bench_row *r, const bench_row *one,
                        double p1, double p2, int gate)
{
    int rel = r->threads == 1 || gate;
    printf("%5d %5d %3d %2d %9.2f %9.3f %9.3f %9.3f %7.1f ",
           r->n, r->kv, r->d, r->threads,
           r->naive > 0 ? 1e3 * r->naive : NAN, 1e3 * r->med,
           1e3 * r->min, 1e3 * r->max, r->gflop / r->med);
    if (rel)
        printf("%6.1f ", 100 * r->gflop / r->med
               / (r->threads == 1 ? p1 : p2));
    else
        printf("%6s ", "-");
    if (rel && !isnan(r->peak)) /* decode rows have no own peak */
        printf("%5.1f ", 100 * r->gflop / r->med / r->peak);
    else
        printf("%5s ", "-");
    if (rel)
        printf("%5.2f ", one->med / r->med);
    else
        printf("%5s ", "-");
    const char *note = !rel ? "  (2-thread FMA loop below the gate)"
        : r->threads > 1 && !r->rotated && bench_above_two_cores(one, r)
        ? "  (above what two cores give: the 1-thread row was disturbed)"
        : "";
    printf("%6.1f %5.1f %5d %d%s%s\n", 100 * r->rope_share,
           r->work_mib, r->steps, r->tries,
           r->unstable ? " UNSTABLE" : "", note);
}
static void bench_verdict_line(const char *what, double value,
                               const char *unit, double target,
                               int at_most, const char *reason)
{
    bench_verdict v = bench_accept(reason ? NAN : value, target, at_most);
    printf("  %-40s ", what);
    if (isnan(value)) printf("%8s%-2s", "-", "");
    else printf("%8.2f%-2s", value, unit);
    printf(" target %s %5.2f%-2s %s", at_most ? "<=" : ">=", target, unit,
           bench_verdict_name(v));
    if (v == BENCH_NOT_MEASURED)
        printf(" (%s)", reason ? reason : "not a finite number");
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--fresh"))
        return bench_fresh_child(argc, argv);
    if (argc > 3 || (argc >= 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: bench-attention [first-edition.so "
                "[recorded-dir]]  (make bench runs it with "
                "build/release/librope-1st.so book/data/measured)\n");
        return 2;
    }
    double peak1[2], peak2[2], share[2], mem, before, data, secs, rate = 0;
    double p1, p2;
    int gate;
    bench_attn_fn first = NULL;
    char why[256];
    static const int ns[3] = {256, 1024, 4096}, ds[2] = {64, 96};
    bench_row pre[12], dec[4], cur[2], old[2], f32[2], bf[2];
    int compared[2] = {0, 0}; /* first edition measured, per d */
    double fresh_cur[6], fresh_old[6]; /* median, min, max per d */
    int bf_code[2] = {0, 0};
    bench_t0 = bench_now();
    char model[256];
    int has_bf16 = bench_cpu(model, sizeof model);
    printf("cpu: %s\n", model);
    bench_caches();
    printf("simd path %s; AVX512_BF16 %s\n",
           rope_simd_name(rope_simd_resolve(ROPE_SIMD_AUTO)),
           has_bf16 ? "present" : "absent");
    bench_progress("n=32768 memory check (2 threads)");
    if (bench_memory(&mem, &before, &data, &secs)) return 1;
    printf("n=32768 d=64 8/2 causal, 2 threads: %.2f s, peak RSS %.1f "
           "MiB (%.1f before), q+k+v+out %.1f MiB, ratio %.3f "
           "(must be < 2)\n", secs, mem, before, data, mem / data);
    bench_peaks(&peak1[0], &peak2[0], "before");
    share[0] = rope_fma_load_share(ROPE_SIMD_AUTO, 0.3);
    printf("triad bandwidth %.1f GB/s\n", rope_triad_bandwidth(0.5));
    if (bench_load_first(argc > 1 ? argv[1] : NULL, &first, why,
                         sizeof why))
        printf("first edition: comparison skipped: %s\n", why);
    else
        printf("first edition: %s (commit 10606e8), loaded\n", argv[1]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            for (int th = 1; th <= 2; th++) {
                bench_row *r = &pre[4 * i + 2 * j + th - 1];
                *r = (bench_row){.n = ns[i], .kv = ns[i], .d = ds[j],
                                 .threads = th, .causal = 1,
                                 .reps = ns[i] <= 1024 ? BENCH_REPS
                                                       : BENCH_REPS_LONG};
                bench_progress("n=%d d=%d threads=%d", r->n, r->d, th);
                if (bench_run_stable(r, th == 1 ? BENCH_NAIVE_BUDGET : 0,
                                     &rate, BENCH_TRIES))
                    return 1;
                if (th == 2) r->naive = r[-1].naive;
            }
    for (int j = 0; j < 2; j++) {
        for (int th = 1; th <= 2; th++) {
            bench_row *r = &dec[2 * j + th - 1];
            *r = (bench_row){.n = 1, .kv = 4096, .d = ds[j], .threads = th,
                             .causal = 1, .reps = BENCH_REPS, .rotated = 1};
            bench_progress("decode kv=4096 d=%d threads=%d", r->d, th);
            if (bench_run_stable(r, th == 1 ? BENCH_NAIVE_BUDGET : 0, &rate,
                                 BENCH_TRIES))
                return 1;
            if (th == 2) r->naive = r[-1].naive;
        }
        cur[j] = old[j] = (bench_row){.n = 1, .kv = 4096, .d = ds[j],
                                      .threads = 1, .causal = 1,
                                      .reps = BENCH_REPS, .rotated = 1};
        if (first) {
            int code = 0;
            bench_progress("decode d=%d: this edition and the first, "
                           "interleaved", ds[j]);
            if (bench_pair_stable(&cur[j], &old[j], first, &code, BENCH_TRIES))
                return 1;
            if (code) {
                snprintf(why, sizeof why, "the first edition returned code %d",
                         code);
                printf("first edition: comparison stopped: %s\n", why);
                first = NULL;
            }
        }
        double tc[BENCH_FRESH], to[BENCH_FRESH];
        bench_progress("decode d=%d: %d fresh processes per edition", ds[j],
                       BENCH_FRESH);
        for (int i = 0; i < BENCH_FRESH; i++) {
            tc[i] = bench_fresh(ds[j], 1, NULL);
            to[i] = first ? bench_fresh(ds[j], 1, argv[1]) : NAN;
            if (tc[i] < 0 || to[i] < 0) return 1;
        }
        fresh_cur[3 * j] = bench_median(tc, BENCH_FRESH); /* sorts tc */
        fresh_cur[3 * j + 1] = tc[0];
        fresh_cur[3 * j + 2] = tc[BENCH_FRESH - 1];
        fresh_old[3 * j] = first ? bench_median(to, BENCH_FRESH) : NAN;
        compared[j] = first != NULL;
        fresh_old[3 * j + 1] = to[0];
        fresh_old[3 * j + 2] = to[BENCH_FRESH - 1];
    }
    for (int j = 0; j < 2; j++) {
        f32[j] = (bench_row){.n = 4096, .kv = 4096, .d = ds[j], .threads = 1,
                             .causal = 1, .reps = BENCH_REPS_LONG};
        bf[j] = f32[j];
        bf[j].dtype = ROPE_DTYPE_BF16;
        bench_progress("bf16 n=4096 d=%d against float32, interleaved",
                       ds[j]);
        if (bench_pair_stable(&f32[j], &bf[j], NULL, &bf_code[j],
                              BENCH_TRIES))
            return 1;
    }
    bench_peaks(&peak1[1], &peak2[1], "after");
    share[1] = rope_fma_load_share(ROPE_SIMD_AUTO, 0.3);
    p1 = fmax(peak1[0], peak1[1]);
    p2 = fmax(peak2[0], peak2[1]);
    gate = bench_scales(peak1[0], peak2[0]) && bench_scales(peak1[1], peak2[1]);
    printf("\nFMA peak, GFLOP/s  before  after  drift\n");
    for (int t = 0; t < 2; t++) {
        double dr = bench_drift(t ? peak2[0] : peak1[0],
                                t ? peak2[1] : peak1[1]);
        printf("  %d thread%s      %7.1f %6.1f %5.1f%%%s\n", t + 1,
               t ? "s" : " ", t ? peak2[0] : peak1[0],
               t ? peak2[1] : peak1[1], 100 * dr, dr > BENCH_DRIFT_MAX
               ? "  DRIFT: the machine changed during the run" : "");
    }
    printf("two-thread FMA loop scaled %.2fx before, %.2fx after: "
           "two-thread figures %s (gate %.1fx)\n", peak2[0] / peak1[0],
           peak2[1] / peak1[1], gate ? "printed" : "withheld",
           BENCH_SCALING_GATE);
    if (share[0] > 0)
        printf("with the score kernel's loads: %.1f%% of the FMA loop "
               "before, %.1f%% after\n", 100 * share[0], 100 * share[1]);
    printf("\n%5s %5s %3s %2s %9s %9s %9s %9s %7s %6s %5s %5s %6s %5s %5s "
           "%s\n", "n", "n_kv", "d", "th", "naive_ms", "med_ms", "min_ms",
           "max_ms", "GFLOP/s", "%peak", "%own", "x2th", "rope%", "MiB",
           "steps", "tries");
    for (int i = 0; i < 12; i++)
        bench_print(&pre[i], &pre[i - (i % 2)], p1, p2, gate);
    for (int i = 0; i < 4; i++)
        bench_print(&dec[i], &dec[i - (i % 2)], p1, p2, gate);
    printf("\ndecode step, n_kv=4096, 1 thread, median [min, max] (this "
           "edition appends one token per step)\n");
    for (int j = 0; j < 2; j++) {
        if (compared[j])
            printf("  d=%2d warm, interleaved: this %.3f ms [%.3f, %.3f], "
                   "first edition %.3f ms [%.3f, %.3f], ratio %.2fx, "
                   "steps %d/%d, tries %d%s\n", ds[j], 1e3 * cur[j].med,
                   1e3 * cur[j].min, 1e3 * cur[j].max, 1e3 * old[j].med,
                   1e3 * old[j].min, 1e3 * old[j].max,
                   old[j].med / cur[j].med, cur[j].steps, old[j].steps,
                   cur[j].tries,
                   cur[j].unstable || old[j].unstable ? " UNSTABLE" : "");
        const double *fc = &fresh_cur[3 * j], *fo = &fresh_old[3 * j];
        printf("  d=%2d fresh process, first step: this %.3f ms [%.3f, %.3f]",
               ds[j], 1e3 * fc[0], 1e3 * fc[1], 1e3 * fc[2]);
        if (compared[j])
            printf(", first edition %.3f ms [%.3f, %.3f], ratio %.2fx",
                   1e3 * fo[0], 1e3 * fo[1], 1e3 * fo[2], fo[0] / fc[0]);
        printf(" (%d processes each)\n", BENCH_FRESH);
    }
    printf("\nbf16 prefill, n=4096, 1 thread, interleaved with float32; "
           "products by %s\n", bench_bf16_unit());
    for (int j = 0; j < 2; j++) {
        if (bf_code[j])
            printf("  d=%2d bf16 path not available (code %d)\n", ds[j],
                   bf_code[j]);
        else
            printf("  d=%2d float32 %.1f ms [%.1f, %.1f], bf16 %.1f ms "
                   "[%.1f, %.1f], %.1f%% of the float32 FMA peak, speed "
                   "ratio %.2fx, tries %d%s\n", ds[j], 1e3 * f32[j].med,
                   1e3 * f32[j].min, 1e3 * f32[j].max, 1e3 * bf[j].med,
                   1e3 * bf[j].min, 1e3 * bf[j].max,
                   100 * bf[j].gflop / bf[j].med / p1,
                   f32[j].med / bf[j].med, bf[j].tries,
                   f32[j].unstable || bf[j].unstable ? " UNSTABLE" : "");
    }
    printf("\nacceptance (issue 14), medians of this run\n");
    if (share[0] > 0)
        printf("  (the score kernel's loads and FMAs alone ran at %.1f%% and "
               "%.1f%% of the\n   FMA loop's speed, before and after the "
               "rows)\n", 100 * share[0], 100 * share[1]);
    for (int k = 0; k < 8; k += 2) {
        const bench_row *r = &pre[4 + k], *r2 = &pre[5 + k];
        char what[64];
        snprintf(what, sizeof what, "1. prefill n=%d d=%d 1 thr %% own peak",
                 r->n, r->d);
        bench_verdict_line(what, 100 * r->gflop / r->med / r->peak, "%", 75, 0,
                           r->unstable ? "row unstable"
                           : gate && bench_above_two_cores(r, r2)
                           ? "slower than its 2-thread row allows: disturbed"
                           : NULL);
        printf("  %-40s %8.2f%%  (larger of the peaks before and after)\n",
               "   the same against the run's peak", 100 * r->gflop / r->med
               / p1);
        snprintf(what, sizeof what, "1. prefill n=%d d=%d 2 thr / 1 thr",
                 r->n, r->d);
        bench_verdict_line(what, r->med / r2->med, "x", 1.8, 0,
                           bench_pair_doubt(r, r2, gate));
    }
    for (int j = 0; j < 2; j++) {
        char what[64];
        const bench_row *a = &dec[2 * j], *b = &dec[2 * j + 1];
        snprintf(what, sizeof what, "2. decode d=%d 1 thr, first ed. / this",
                 ds[j]);
        bench_verdict_line(what, compared[j] ? old[j].med / cur[j].med : NAN,
                           "x", 2, 0, !compared[j] ? why
                           : cur[j].unstable || old[j].unstable
                           ? "row unstable" : NULL);
        snprintf(what, sizeof what, "2. decode d=%d 2 thr / 1 thr", ds[j]);
        bench_verdict_line(what, a->med / b->med, "x", 1.6, 0,
                           !gate ? "2-thread FMA loop below the gate"
                           : a->unstable || b->unstable ? "row unstable"
                                                        : NULL);
        snprintf(what, sizeof what, "2. decode d=%d allocations per step",
                 ds[j]);
        bench_verdict_line(what, (double)(a->allocs + b->allocs)
                           / (2.0 * ((double)a->reps * a->steps
                                     + (double)b->reps * b->steps)),
                           "", 0, 1, NULL);
    }
    for (int j = 0; j < 2; j++) {
        char what[64], reason[96];
        snprintf(what, sizeof what, "3. bf16 n=4096 d=%d speed / float32",
                 ds[j]);
        snprintf(reason, sizeof reason, "bf16 path not available (code %d)",
                 bf_code[j]);
        bench_verdict_line(what, bf_code[j] ? NAN : f32[j].med / bf[j].med,
                           "x", 1.5, 0, bf_code[j] ? reason
                           : !has_bf16 ? "no AVX512_BF16 on this CPU"
                           : f32[j].unstable || bf[j].unstable
                           ? "row unstable" : NULL);
    }
    printf("  3. bf16 error within the derived bound: checked by make test, "
           "not by make bench\n");
    if (argc > 2) bench_beside_recorded(argv[2], pre, dec, p1, p2, gate);
    return 0;
}
