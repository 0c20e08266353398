/* W6.6 The numbers of chapter 6 */
/* record-ring.c: the measurements of chapter 6, for
   make bench RECORD=1 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bookdata.h"
#include "record.h"

static double ring_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int ring_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ring_kernel_speed(int h, int hkv, int d)
{
    const int n = 2048;
    rope_attention_params p;
    uint64_t st = 61;
    size_t nq = (size_t)n * h * d, nk = (size_t)n * hkv * d;
    float *q = malloc(sizeof(float) * nq), *o = malloc(sizeof(float) * nq);
    float *k = malloc(sizeof(float) * nk), *v = malloc(sizeof(float) * nk);
    double best = 1e30;
    if (!q || !o || !k || !v) exit(1);
    for (size_t i = 0; i < nq; i++) q[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) k[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) v[i] = (float)rope_uniform(&st) - 0.5f;
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = n; p.n_heads = h; p.n_kv_heads = hkv;
    p.head_dim = d; p.causal = 1;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = ring_now();
        if (rope_attention(o, q, k, v, &p)) exit(1);
        best = fmin(best, ring_now() - t0);
    }
    free(q); free(o); free(k); free(v);
    return 2.0 * n * n * d * h / best;
}
static void ring_popen(const char *env, int n_ranks, const char *args,
                       const char *word, char *line, size_t size)
{
    const char *prog = getenv(env);
    char cmd[1024];
    size_t used = 0;
    if (prog == NULL) {
        fprintf(stderr, "record: %s is not set (run make bench RECORD=1)\n",
                env);
        exit(1);
    }
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun "
             "--oversubscribe -np %d %s %s", n_ranks, prog, args);
    FILE *p = popen(cmd, "r");
    int found = 0;
    line[0] = '\0';
    while (p != NULL && size - used > 1
           && fgets(line + used, (int)(size - used), p) != NULL) {
        if (word == NULL) {
            used += strlen(line + used);
            found = 1;
        } else if (strncmp(line, word, strlen(word)) == 0) {
            found = 1;
            break;
        }
    }
    if (p == NULL || pclose(p) != 0 || !found) {
        fprintf(stderr, "record: '%s' failed\n", cmd);
        exit(1);
    }
}
static void ring_ms(char *buf, size_t n, double ms)
{
    snprintf(buf, n, ms >= 100 ? "%.0f" : ms >= 10 ? "%.1f"
             : ms >= 1 ? "%.2f" : "%.3f", ms);
}
static const int ring_lens[8] = {16, 32, 64, 128, 256, 512, 1024, 2048};

static void ring_block_time(int len, int causal, double t[3])
{
    enum { SAMPLES = 7 };
    rope_attention_params p;
    uint64_t st = 62;
    size_t nq = (size_t)len * 8 * 96, nk = (size_t)len * 4 * 96;
    float *q = malloc(sizeof(float) * nq), *o = malloc(sizeof(float) * nq);
    float *k = malloc(sizeof(float) * nk), *v = malloc(sizeof(float) * nk);
    float *lse = malloc(sizeof(float) * (size_t)len * 8);
    double s[SAMPLES];
    long calls = (1L << 22) / ((long)len * len);
    calls = calls < 1 ? 1 : calls;
    if (!q || !o || !k || !v || !lse) exit(1);
    for (size_t i = 0; i < nq; i++) q[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) k[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) v[i] = (float)rope_uniform(&st) - 0.5f;
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = len; p.n_heads = 8; p.n_kv_heads = 4;
    p.head_dim = 96; p.causal = causal; p.lse = lse;
    if (rope_attention(o, q, k, v, &p)) exit(1);
    for (int j = 0; j < SAMPLES; j++) {
        double t0 = ring_now();
        for (long c = 0; c < calls; c++)
            if (rope_attention(o, q, k, v, &p)) exit(1);
        s[j] = (ring_now() - t0) / calls;
    }
    qsort(s, SAMPLES, sizeof s[0], ring_cmp_d);
    t[0] = s[SAMPLES / 2]; t[1] = s[0]; t[2] = s[SAMPLES - 1];
    free(q); free(o); free(k); free(v); free(lse);
}

static double ring_merge_time(void)
{
    const size_t rows = 2048 * 8;
    double *o = calloc(rows * 96, sizeof(double));
    double *l = malloc(sizeof(double) * rows), best = 1e30;
    float *ob = calloc(rows * 96, sizeof(float));
    float *lb = calloc(rows, sizeof(float));
    if (!o || !l || !ob || !lb) exit(1);
    for (int j = 0; j < 7; j++) {
        for (size_t r = 0; r < rows; r++) l[r] = -INFINITY;
        double t0 = ring_now();
        rope_ring_merge(o, l, ob, lb, rows, 96);
        rope_ring_merge(o, l, ob, lb, rows, 96);
        best = fmin(best, (ring_now() - t0) / (2.0 * rows));
    }
    free(o); free(l); free(ob); free(lb);
    return best;
}
static double ring_rank_time(rope_ring_layout layout, int P, int rank,
                             long n, double blk[2][8], double merge_row)
{
    rope_ring_shard me, kv;
    double t = 0;
    rope_ring_shard_of(&me, layout, P, rank, n);
    for (int o = 0; o < P; o++) {
        rope_ring_shard_of(&kv, layout, P, o, n);
        for (int a = 0; a < me.n_chunks; a++)
            for (int b = 0; b < kv.n_chunks; b++) {
                int kind = rope_ring_block_kind(me.chunk[a], kv.chunk[b], 1);
                int i = 0;
                if (kind == ROPE_RING_SKIP)
                    continue;
                while (i < 8 && ring_lens[i] != me.len[a]) i++;
                if (i == 8 || me.len[a] != kv.len[b])
                    return NAN; /* a length the recorder did not time */
                t += blk[kind == ROPE_RING_FULL][i]
                     + (double)me.len[a] * 8 * merge_row;
            }
    }
    return t;
}

int record_ring(const char *dir)
{
    FILE *f = bd_open(dir, "ring-measured-numbers.tex");
    double sigma = ring_kernel_speed(8, 4, 96);
    FILE *sg = bd_open(dir, "ring-sigma.txt");
    fprintf(sg, "%.6g\n", sigma);
    bd_close(sg);
    fprintf(f, "%% measured by make bench RECORD=1 (record-ring.c)\n");
    bd_def(f, "ring-kernel-gflops", "%.1f", sigma / 1e9);
    bd_def(f, "ring-cores", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    char date[32], model[512] = "unknown", clean[512], ln[512];
    const char *commit = getenv("ROPE_RECORD_COMMIT");
    time_t now = time(NULL);
    FILE *ci = fopen("/proc/cpuinfo", "r");
    while (ci != NULL && fgets(ln, sizeof ln, ci) != NULL)
        if (strncmp(ln, "model name", 10) == 0 && strchr(ln, ':') != NULL) {
            const char *at = strchr(ln, ':') + 1;
            size_t j = 0;
            while (*at == ' ') at++;
            while (at[j] != '\0' && at[j] != '\n' && j + 1 < sizeof model) {
                model[j] = at[j];
                j++;
            }
            model[j] = '\0';
            break;
        }
    if (ci != NULL) fclose(ci);
    size_t nc = 0;
    for (size_t i = 0; model[i] != '\0'; i++)
        if (strchr("#$%&_{}~^\\", model[i]) == NULL) clean[nc++] = model[i];
    clean[nc] = '\0';
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    commit = commit != NULL ? commit : "unknown";
    double load = -1;
    FILE *la = fopen("/proc/loadavg", "r");
    if (la != NULL && fscanf(la, "%lf", &load) != 1) load = -1;
    if (la != NULL) fclose(la);
    FILE *pv = bd_open(dir, "ring-provenance.txt");
    fprintf(pv, "command make record-ring (or make bench RECORD=1)\ncommit %s\n"
            "date %s\ncpu %s\ncores %ld\nload %.2f\n", commit, date, model,
            sysconf(_SC_NPROCESSORS_ONLN), load);
    bd_close(pv);
    bd_def(f, "ring-date", "%s", date);
    bd_def(f, "ring-commit", "%s", commit);
    bd_def(f, "ring-cpu", "%s", clean);
    static const char *const lay[2] = {"contiguous", "zigzag"};
    static const long bn[5] = {4096, 4096, 1024, 256, 64};
    static const int bl[5] = {0, 1, 1, 1, 1};
    double ms[5][6];
    FILE *tm = bd_open(dir, "ring-measured.tex");
    FILE *raw = bd_open(dir, "ring-bench.dat");
    fprintf(raw, "layout n compute_ms wait_ms comm_ms total_ms pmax pmin\n");
    fprintf(tm, "\\begin{tabular}{lrrrrrrr}\\toprule\nlayout & $N$ & compute "
            "& wait & transfer & total & work ratio & hidden \\\\\n"
            "\\midrule\n");
    double rr[3][2][6], sp[2][3];
    for (int k = 0; k < 3 * 2 + 3; k++) {
        int l = k < 6 ? k % 2 : k - 4; /* rounds of the two layouts, then */
        double *v = k < 6 ? rr[k / 2][l] : ms[l]; /* the short rows */
        char args[128], line[512];
        snprintf(args, sizeof args, "bench --n %ld --layout %s --causal "
                 "--reps %d", bn[l], lay[bl[l]], bn[l] < 4096 ? 51 : 5);
        ring_popen("ROPE_RING", 2, args, "", line, sizeof line);
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5]) != 6)
            exit(1);
    }
    for (int l = 0; l < 2; l++)
        for (int j = 0; j < 6; j++) { /* the median of three rounds */
            double x[3] = {rr[0][l][j], rr[1][l][j], rr[2][l][j]};
            qsort(x, 3, sizeof x[0], ring_cmp_d);
            ms[l][j] = x[1];
        }
    for (int k = 0; k < 3; k++) {
        sp[0][k] = rr[k][0][3] / rr[k][1][3];
        sp[1][k] = rr[k][0][0] / rr[k][1][0];
    }
    qsort(sp[0], 3, sizeof sp[0][0], ring_cmp_d);
    qsort(sp[1], 3, sizeof sp[1][0], ring_cmp_d);
    for (int l = 0; l < 5; l++) {
        char c[4][32];
        for (int j = 0; j < 4; j++)
            ring_ms(c[j], sizeof c[j], ms[l][j]);
        fprintf(raw, "%s %ld %.6g %.6g %.6g %.6g %.0f %.0f\n", lay[bl[l]], bn[l],
                ms[l][0], ms[l][1], ms[l][2], ms[l][3], ms[l][4], ms[l][5]);
        fprintf(tm, "%s & %ld & %s & %s & %s & %s & %.2f & %.0f\\,\\%% \\\\\n",
                lay[bl[l]], bn[l], c[0], c[1], c[2], c[3], ms[l][4] / ms[l][5],
                100 * fmax(0, 1 - ms[l][1] / ms[l][2]));
    }
    fprintf(tm, "\\bottomrule\\end{tabular}\n");
    bd_close(tm);
    bd_close(raw);
    bd_def(f, "ring-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-zz-compute-ms", "%.1f", ms[1][0]);
    bd_def(f, "ring-cont-compute-ms", "%.1f", ms[0][0]);
    bd_def(f, "ring-zz-wait-ms", "%.2f", ms[1][1]);
    bd_def(f, "ring-step-compute-ms", "%.1f", ms[1][0] / 2);
    bd_def(f, "ring-step-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-overlap-pct", "%.0f",
           100 * fmax(0, 1 - ms[1][1] / ms[1][2]));
    bd_def(f, "ring-zz-speedup", "%.2f", sp[0][1]);
    bd_def(f, "ring-zz-speedup-lo", "%.2f", sp[0][0]);
    bd_def(f, "ring-zz-speedup-hi", "%.2f", sp[0][2]);
    bd_def(f, "ring-zz-compute-ratio", "%.2f", sp[1][1]);
    bd_def(f, "ring-zz-compute-ratio-lo", "%.2f", sp[1][0]);
    bd_def(f, "ring-zz-compute-ratio-hi", "%.2f", sp[1][2]);
    bd_def(f, "ring-pred-speedup", "%.2f", ms[0][4] / ms[1][4]);
    bd_def(f, "ring-cont-gflops", "%.1f", 4.0 * 96 * 8 * ms[0][4] / ms[0][0] / 1e6);
    bd_def(f, "ring-zz-gflops", "%.1f", 4.0 * 96 * 8 * ms[1][4] / ms[1][0] / 1e6);
    double frac = 0;
    for (int l = 1; l < 5; l++)
        frac = fmax(frac, ms[l][2] / (ms[l][0] / 2));
    bd_def(f, "ring-comm-frac-pct", "%.0f", 100 * frac);
    bd_def(f, "ring-small-n", "%ld", bn[4]);
    bd_def(f, "ring-small-c", "%ld", bn[4] / 2);
    bd_def(f, "ring-small-step-us", "%.0f", 1e3 * ms[4][0] / 2);
    bd_def(f, "ring-small-comm-us", "%.0f", 1e3 * ms[4][2]);
    bd_def(f, "ring-small-wait-us", "%.0f", 1e3 * ms[4][1]);
    bd_def(f, "ring-small-hidden-pct", "%.0f",
           100 * fmax(0, 1 - ms[4][1] / ms[4][2]));
    bd_def(f, "ring-small-total-us", "%.0f", 1e3 * ms[4][3]);
    double blk[2][8], merge_row = ring_merge_time();
    FILE *sh = bd_open(dir, "ring-shapes.dat");
    fprintf(sh, "c full full_lo full_hi diag diag_lo diag_hi\n");
    for (int i = 0; i < 8; i++) {
        double c = ring_lens[i], t[2][3], fl[2];
        fl[0] = 4.0 * 96 * 8 * 0.5 * c * (c + 1); /* diagonal */
        fl[1] = 4.0 * 96 * 8 * c * c; /* full */
        for (int kd = 0; kd < 2; kd++) {
            ring_block_time(ring_lens[i], kd == 0, t[kd]);
            blk[kd][i] = t[kd][0];
        }
        fprintf(sh, "%d %.4g %.4g %.4g %.4g %.4g %.4g\n", ring_lens[i],
                fl[1] / t[1][0] / 1e9, fl[1] / t[1][2] / 1e9,
                fl[1] / t[1][1] / 1e9, fl[0] / t[0][0] / 1e9,
                fl[0] / t[0][2] / 1e9, fl[0] / t[0][1] / 1e9);
        if (i == 0 || i >= 6) {
            char key[48];
            snprintf(key, sizeof key, "ring-rate-full-%d", ring_lens[i]);
            bd_def(f, key, "%.1f", fl[1] / t[1][0] / 1e9);
            snprintf(key, sizeof key, "ring-rate-diag-%d", ring_lens[i]);
            bd_def(f, key, "%.1f", fl[0] / t[0][0] / 1e9);
        }
    }
    bd_close(sh);
    bd_def(f, "ring-merge-ns", "%.1f", 1e9 * merge_row);
    double pred[2] = {0, 0};
    for (int l = 0; l < 2; l++)
        for (int r = 0; r < 2; r++)
            pred[l] = fmax(pred[l], ring_rank_time((rope_ring_layout)l, 2, r,
                                                   4096, blk, merge_row));
    if (!(pred[0] > 0 && pred[1] > 0)) exit(1);
    bd_def(f, "ring-pred-cont-ms", "%.1f", 1e3 * pred[0]);
    bd_def(f, "ring-pred-zz-ms", "%.1f", 1e3 * pred[1]);
    bd_def(f, "ring-pred-corrected", "%.2f", pred[0] / pred[1]);
    bd_def(f, "ring-pred-cont-over-pct", "%.0f", 100 * (ms[0][0] / (1e3 * pred[0]) - 1));
    bd_def(f, "ring-pred-zz-over-pct", "%.0f", 100 * (ms[1][0] / (1e3 * pred[1]) - 1));
    bd_def(f, "ring-merge-zz-ms", "%.1f", 1e3 * 5 * 1024 * 8 * merge_row);
    char pp[4096];
    double pb[11], pt[11], plo[11], phi[11], dev = 0, worst = 0;
    int m = 0;
    ring_popen("ROPE_RING", 2, "pingpong", NULL, pp, sizeof pp);
    FILE *pg = bd_open(dir, "ring-pingpong.dat");
    fprintf(pg, "bytes us us_lo us_hi model\n");
    for (char *ln = strtok(pp, "\n"); ln != NULL && m < 11;
         ln = strtok(NULL, "\n"))
        if (sscanf(ln, "%lf %lf %lf %lf", &pb[m], &pt[m], &plo[m],
                   &phi[m]) == 4)
            m++;
    if (m != 11 || !(pt[10] > pt[0])) exit(1);
    double alpha = 1e-6 * pt[0], beta = pb[10] / (1e-6 * (pt[10] - pt[0]));
    for (int i = 0; i < m; i++) {
        double model = 1e6 * (alpha + pb[i] / beta);
        if (pt[i] / model > dev) {
            dev = pt[i] / model;
            worst = pb[i];
        }
        fprintf(pg, "%.0f %.4g %.4g %.4g %.4g\n", pb[i], pt[i], plo[i], phi[i],
                model);
    }
    bd_close(pg);
    FILE *lk = bd_open(dir, "ring-link.txt");
    fprintf(lk, "%.6g %.6g\n", alpha, beta);
    bd_close(lk);
    bd_def(f, "ring-alpha-us", "%.2f", 1e6 * alpha);
    bd_def(f, "ring-alpha-lo-us", "%.2f", plo[0]);
    bd_def(f, "ring-alpha-hi-us", "%.2f", phi[0]);
    bd_def(f, "ring-beta-gbs", "%.1f", beta / 1e9);
    bd_def(f, "ring-pp-ratio", "%.1f", dev);
    bd_def(f, "ring-pp-worst-kib", "%.0f", worst / 1024);
    char line[512], e1[64];
    double ek, er;
    ring_popen("ROPE_RING_TEST", 3, "sweep", "max relative error", line,
               sizeof line);
    if (sscanf(line, "max relative error %lf against the kernel, %lf",
               &ek, &er) != 2)
        exit(1);
    bd_sci(e1, sizeof e1, fmax(fmax(ek, er), 1e-12), 2);
    bd_def(f, "ring-test-maxerr", "%s", e1);
    bd_close(f);
    return 0;
}
