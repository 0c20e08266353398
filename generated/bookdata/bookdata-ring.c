/* W6.6 The numbers of chapter 6 */
/* bookdata-ring.c: the computed numbers and figure data of chapter 6;
   its measurements are recorded by make bench RECORD=1. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

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

int bookdata_ring(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "ring");
    const int h = 8, hkv = 4, d = 96;
    double sigma = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/ring-sigma.txt", dir);
    FILE *in = fopen(path, "r");
    if (!in || fscanf(in, "%lf", &sigma) != 1 || !(sigma > 0)) {
        fprintf(stderr, "bookdata: %s: no recorded kernel speed "
                "(make bench RECORD=1)\n", path);
        return 1;
    }
    fclose(in);
    bd_def(f, "ring-h", "%d", h);
    bd_def(f, "ring-hkv", "%d", hkv);
    bd_def(f, "ring-d", "%d", d);
    bd_def(f, "ring-bench-n", "4096");
    bd_def(f, "ring-bench-reps", "5");
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
    char e2[64];
    const double lse_typ = log(1000.0) + 2;
    bd_def(f, "ring-lse-typ", "%.1f", lse_typ);
    bd_sci(e2, sizeof e2, 0x1p-24 * (2 * lse_typ + 1), 2);
    bd_def(f, "ring-merge-bound", "%s", e2);
    fprintf(f, "\\input{\\datadir ring-measured-numbers.tex}\n");
    bd_close(f);
    return 0;
}
