/* W6.6 The numbers of chapter 6 */
/* bookdata-ring.c: the numbers and figure data of chapter 6. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bookdata.h"

static double ring_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
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
static void ring_bytes(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) { b /= 1024; u++; }
    snprintf(buf, n, "%.1f~%s", b, unit[u]);
}

static void ring_time(char *buf, size_t n, double s)
{
    if (s >= 86400) snprintf(buf, n, "%.1f~days", s / 86400);
    else if (s >= 3600) snprintf(buf, n, "%.1f~h", s / 3600);
    else if (s >= 60) snprintf(buf, n, "%.1f~min", s / 60);
    else if (s >= 1) snprintf(buf, n, "%.1f~s", s);
    else snprintf(buf, n, "%.0f~ms", 1e3 * s);
}
static void ring_grid(const char *dir, const char *name,
                      rope_ring_layout layout)
{
    static const char *const colour[4] = {"red", "blue", "green!60!black",
                                          "orange"};
    const int P = 4;
    const long n = 16;
    int K = rope_ring_n_chunks(layout, P);
    FILE *g = bd_open(dir, name);
    for (int r = 0; r < P; r++) {
        rope_ring_shard s;
        rope_ring_shard_of(&s, layout, P, r, n);
        for (int a = 0; a < s.n_chunks; a++) {
            long y0 = s.start[a], y1 = y0 + s.len[a];
            for (int b = 0; b < K; b++) {
                int kind = rope_ring_block_kind(s.chunk[a], b, 1);
                long x0 = rope_ring_chunk_start(n, K, b);
                long x1 = rope_ring_chunk_start(n, K, b + 1);
                if (kind != ROPE_RING_SKIP)
                    fprintf(g, "\\fill[%s!%d] (%ld,%ld) rectangle (%ld,%ld);\n",
                            colour[r], kind == ROPE_RING_FULL ? 60 : 20,
                            x0, y0, x1, y1);
            }
            fprintf(g, "\\node[right] at (%ld,%.1f) {\\small $r = %d$};\n",
                    n, 0.5 * (y0 + y1), r);
        }
    }
    for (int c = 1; c < K; c++) {
        long t = rope_ring_chunk_start(n, K, c);
        fprintf(g, "\\draw[black!50] (%ld,0) -- (%ld,%ld);\n", t, t, n);
        fprintf(g, "\\draw[black!50] (0,%ld) -- (%ld,%ld);\n", t, n, t);
    }
    fprintf(g, "\\draw (0,0) rectangle (%ld,%ld);\n", n, n);
    fprintf(g, "\\draw[thick] (0,0) -- (%ld,%ld);\n", n, n);
    fprintf(g, "\\node[below, align=center] at (%.1f,%ld) {\\small %s, pairs per "
            "rank\\\\ \\small", 0.5 * n, n,
            layout == ROPE_RING_ZIGZAG ? "zigzag" : "contiguous");
    for (int r = 0; r < P; r++)
        fprintf(g, "%s%.0f", r ? ", " : "",
                rope_ring_rank_pairs(layout, P, r, n, 1));
    fprintf(g, "};\n");
    bd_close(g);
}
static void ring_popen(const char *env, int n_ranks, const char *args,
                       const char *word, char *line, size_t size)
{
    const char *prog = getenv(env);
    char cmd[1024];
    if (prog == NULL) {
        fprintf(stderr, "bookdata: %s is not set (run make book)\n", env);
        exit(1);
    }
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun "
             "--oversubscribe -np %d %s %s", n_ranks, prog, args);
    FILE *p = popen(cmd, "r");
    int found = 0;
    while (p != NULL && fgets(line, (int)size, p) != NULL)
        if (strncmp(line, word, strlen(word)) == 0 || word[0] == '\0') {
            found = 1;
            break;
        }
    if (p == NULL || pclose(p) != 0 || !found) {
        fprintf(stderr, "bookdata: '%s' failed\n", cmd);
        exit(1);
    }
}

int bookdata_ring(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "ring");
    const int h = 8, hkv = 4, d = 96;
    double sigma = ring_kernel_speed(h, hkv, d);
    bd_def(f, "ring-h", "%d", h);
    bd_def(f, "ring-hkv", "%d", hkv);
    bd_def(f, "ring-d", "%d", d);
    bd_def(f, "ring-kernel-gflops", "%.1f", sigma / 1e9);
    bd_def(f, "ring-cores", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    FILE *t = bd_open(dir, "ring-why.tex");
    static const long lens[3] = {32768, 131072, 1048576};
    fprintf(t, "\\begin{tabular}{rrrrr}\\toprule\n$n$ & FLOPs & $q,k,v,o$ & "
            "scores & one core \\\\\n\\midrule\n");
    for (int i = 0; i < 3; i++) {
        double n = (double)lens[i], F = 2 * n * n * d * h;
        char a[64], b[64], c[64], e[64];
        bd_sci(a, sizeof a, F, 2);
        ring_bytes(b, sizeof b, 4 * n * (2.0 * h + 2.0 * hkv) * d);
        ring_bytes(c, sizeof c, 4 * n * n * h);
        ring_time(e, sizeof e, F / sigma);
        fprintf(t, "%ld & %s & %s & %s & %s \\\\\n", lens[i], a, b, c, e);
        if (i == 2) {
            bd_def(f, "ring-flops-1m", "%s", a);
            bd_def(f, "ring-mem-1m", "%s", b);
            bd_def(f, "ring-time-1m", "%s", e);
        }
    }
    fprintf(t, "\\bottomrule\\end{tabular}\n");
    bd_close(t);
    static const double gbit[3] = {25, 100, 400};
    rope_ring_model m[3];
    for (int i = 0; i < 3; i++) {
        rope_ring_model mi = {1048576.0, h, hkv, d, sigma, gbit[i] * 1e9 / 8};
        char key[32];
        m[i] = mi;
        snprintf(key, sizeof key, "ring-cmin-%.0f", gbit[i]);
        bd_def(f, key, "%ld", rope_ring_model_min_block(&m[i]));
    }
    bd_def(f, "ring-pmax-25", "%.0f",
           floor(m[0].n / rope_ring_model_min_block(&m[0])));
    FILE *dat = bd_open(dir, "ring-model.dat");
    fprintf(dat, "P t25 t100 t400 tcomm25 tcomm100 tcomm400\n");
    for (long P = 8; P <= 262144; P *= 2) {
        double comm[3];
        fprintf(dat, "%ld", P);
        for (int i = 0; i < 3; i++)
            fprintf(dat, " %.6g", rope_ring_model_layer(&m[i], (int)P, NULL,
                                                        &comm[i]));
        fprintf(dat, " %.6g %.6g %.6g\n", comm[0], comm[1], comm[2]);
        if (P == 8 || P == 1024) {
            char key[32], val[64];
            snprintf(key, sizeof key, "ring-t-%ld", P);
            ring_time(val, sizeof val,
                      rope_ring_model_layer(&m[0], (int)P, NULL, NULL));
            bd_def(f, key, "%s", val);
        }
    }
    bd_close(dat);
    ring_grid(dir, "ring-grid-contiguous.tex", ROPE_RING_CONTIGUOUS);
    ring_grid(dir, "ring-grid-zigzag.tex", ROPE_RING_ZIGZAG);
    bd_def(f, "ring-grid-n", "16");
    static const char *const lay[2] = {"contiguous", "zigzag"};
    double ms[2][6];
    FILE *tm = bd_open(dir, "ring-measured.tex");
    fprintf(tm, "\\begin{tabular}{lrrrrr}\\toprule\nlayout & compute & wait & "
            "communication & total & work ratio \\\\\n\\midrule\n");
    for (int l = 0; l < 2; l++) {
        char args[128], line[512];
        snprintf(args, sizeof args, "bench --n 4096 --layout %s --causal "
                 "--reps 5", lay[l]);
        ring_popen("ROPE_RING", 2, args, "", line, sizeof line);
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &ms[l][0], &ms[l][1],
                   &ms[l][2], &ms[l][3], &ms[l][4], &ms[l][5]) != 6)
            exit(1);
        fprintf(tm, "%s & %.1f & %.2f & %.2f & %.1f & %.2f \\\\\n", lay[l],
                ms[l][0], ms[l][1], ms[l][2], ms[l][3], ms[l][4] / ms[l][5]);
    }
    fprintf(tm, "\\bottomrule\\end{tabular}\n");
    bd_close(tm);
    bd_def(f, "ring-bench-n", "4096");
    bd_def(f, "ring-bench-reps", "5");
    bd_def(f, "ring-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-zz-compute-ms", "%.1f", ms[1][0]);
    bd_def(f, "ring-zz-wait-ms", "%.2f", ms[1][1]);
    bd_def(f, "ring-step-compute-ms", "%.1f", ms[1][0] / 2);
    bd_def(f, "ring-step-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-overlap-pct", "%.0f",
           100 * fmax(0, 1 - ms[1][1] / ms[1][2]));
    bd_def(f, "ring-zz-speedup", "%.2f", ms[0][3] / ms[1][3]);
    bd_def(f, "ring-pred-speedup", "%.2f", ms[0][4] / ms[1][4]);
    char line[512], e1[64], e2[64];
    double ek, er;
    ring_popen("ROPE_RING_TEST", 3, "sweep", "max relative error", line,
               sizeof line);
    if (sscanf(line, "max relative error %lf against the kernel, %lf",
               &ek, &er) != 2)
        exit(1);
    bd_sci(e1, sizeof e1, fmax(fmax(ek, er), 1e-12), 2);
    bd_def(f, "ring-test-maxerr", "%s", e1);
    const double lse_typ = log(1000.0) + 2;
    bd_def(f, "ring-lse-typ", "%.1f", lse_typ);
    bd_sci(e2, sizeof e2, 0x1p-24 * (2 * lse_typ + 1), 2);
    bd_def(f, "ring-merge-bound", "%s", e2);
    bd_close(f);
    return 0;
}
