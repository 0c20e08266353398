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
static double ring_rate_at(const double *len, const double *rate, int m,
                           double x)
{
    if (x < len[0]) return NAN; /* shorter than any chunk timed */
    for (int i = 1; i < m; i++)
        if (x <= len[i]) {
            double u = log2(x / len[i - 1]) / log2(len[i] / len[i - 1]);
            return rate[i - 1] + u * (rate[i] - rate[i - 1]);
        }
    return rate[m - 1];
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
            fprintf(g, "\\node[right] at (%ld,%.1f) {\\small $p = %d$};\n",
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
    static const struct { const char *name; int L, dm, h, hkv, d; } mdl[2] = {
        {"MiniMind", 8, 768, 8, 4, 96}, {"Llama 3 8B", 32, 4096, 32, 8, 128}};
    const double n = 1048576.0;
    FILE *t = bd_open(dir, "ring-why.tex");
    fprintf(t, "\\begin{tabular}{lrrrrrr}\\toprule\nmodel & layers & "
            "$k,v$ & inputs & FLOPs & 1 core & 128 cores \\\\\n"
            "\\midrule\n");
    for (int i = 0; i < 2; i++) {
        double F = mdl[i].L * 2 * n * n * mdl[i].d * mdl[i].h;
        char kv[64], act[64], fl[64], t1[64], t128[64], key[48];
        ring_bytes(kv, sizeof kv, 2.0 * 2 * mdl[i].L * n * mdl[i].hkv * mdl[i].d);
        ring_bytes(act, sizeof act, 2.0 * mdl[i].L * n * mdl[i].dm);
        bd_sci(fl, sizeof fl, F, 2);
        ring_time(t1, sizeof t1, F / sigma);
        ring_time(t128, sizeof t128, F / (128 * sigma));
        fprintf(t, "%s & %d & %s & %s & %s & %s & %s \\\\\n", mdl[i].name,
                mdl[i].L, kv, act, fl, t1, t128);
        snprintf(key, sizeof key, "ring-why-kv-%d", i);
        bd_def(f, key, "%s", kv);
        snprintf(key, sizeof key, "ring-why-act-%d", i);
        bd_def(f, key, "%s", act);
        snprintf(key, sizeof key, "ring-why-t128-%d", i);
        bd_def(f, key, "%s", t128);
        snprintf(key, sizeof key, "ring-why-machines-%d", i);
        bd_def(f, key, "%.0f", ceil(F / (128 * sigma) / 60));
    }
    fprintf(t, "\\bottomrule\\end{tabular}\n");
    bd_close(t);
    {
        char a[64], b[64], e[64];
        double F1 = 2 * n * n * d * h;
        bd_sci(a, sizeof a, F1, 2);
        ring_bytes(b, sizeof b, 4 * n * (2.0 * h + 2.0 * hkv) * d);
        ring_time(e, sizeof e, F1 / sigma);
        bd_def(f, "ring-flops-1m", "%s", a);
        bd_def(f, "ring-mem-1m", "%s", b);
        bd_def(f, "ring-time-1m", "%s", e);
        ring_bytes(b, sizeof b, 4 * n * n * h);
        bd_def(f, "ring-scores-1m", "%s", b);
    }
    static const double gbit[3] = {25, 100, 400};
    rope_ring_model m[3], ma;
    for (int i = 0; i < 3; i++) {
        rope_ring_model mi = {1048576.0, h, hkv, d, sigma, gbit[i] * 1e9 / 8, 0};
        char key[32];
        m[i] = mi;
        snprintf(key, sizeof key, "ring-cmin-%.0f", gbit[i]);
        bd_def(f, key, "%ld", rope_ring_model_min_block(&m[i]));
    }
    ma = m[0];
    ma.latency_s = 10e-6;
    bd_def(f, "ring-pmax-25", "%.0f",
           floor(m[0].n / rope_ring_model_min_block(&m[0])));
    FILE *dat = bd_open(dir, "ring-model.dat");
    fprintf(dat, "P t25 t100 t400 tcomm25 tcomm100 tcomm400 t25a\n");
    for (long P = 8; P <= 262144; P *= 2) {
        double comm[3];
        fprintf(dat, "%ld", P);
        for (int i = 0; i < 3; i++)
            fprintf(dat, " %.6g", rope_ring_model_layer(&m[i], (int)P, NULL,
                                                        &comm[i]));
        fprintf(dat, " %.6g %.6g %.6g %.6g\n", comm[0], comm[1], comm[2],
                rope_ring_model_layer(&ma, (int)P, NULL, NULL));
        if (P == 8 || P == 1024) {
            char key[32], val[64];
            snprintf(key, sizeof key, "ring-t-%ld", P);
            ring_time(val, sizeof val,
                      rope_ring_model_layer(&m[0], (int)P, NULL, NULL));
            bd_def(f, key, "%s", val);
        }
    }
    bd_close(dat);
    double len[16], rate[16], alpha = 0, beta = 0;
    int nr = 0;
    char ln[256];
    snprintf(path, sizeof path, "%s/ring-shapes.dat", dir);
    FILE *sd = fopen(path, "r");
    while (sd != NULL && nr < 16 && fgets(ln, sizeof ln, sd) != NULL)
        if (sscanf(ln, "%lf %lf", &len[nr], &rate[nr]) == 2)
            nr++;
    if (sd != NULL) fclose(sd);
    snprintf(path, sizeof path, "%s/ring-link.txt", dir);
    FILE *lk = fopen(path, "r");
    if (nr < 2 || lk == NULL || fscanf(lk, "%lf %lf", &alpha, &beta) != 2) {
        fprintf(stderr, "bookdata: %s: no recorded block speeds or link "
                "(make record-ring)\n", dir);
        return 1;
    }
    fclose(lk);
    FILE *cm = bd_open(dir, "ring-cmin.tex");
    fprintf(cm, "\\begin{tabular}{lrrrrr}\\toprule\nlink & $T_{\\text{lat}}$ & "
            "$N_{c,\\min}$ & largest $P$ & step, $\\dot F$ & step, blocks alone \\\\\n"
            "\\midrule\n");
    for (int row = 0; row < 7; row++) {
        rope_ring_model mm = row == 0 ? m[0] : m[(row - 1) % 3];
        char name[32], al[48], st[32] = "--";
        if (row == 0) {
            mm.bytes_per_s = beta;
            mm.latency_s = alpha;
            snprintf(name, sizeof name, "shared memory");
            snprintf(al, sizeof al, "%.2f~$\\mu$s", 1e6 * alpha);
        } else {
            mm.latency_s = row > 3 ? 10e-6 : 0;
            snprintf(name, sizeof name, "%.0f~Gb/s", gbit[(row - 1) % 3]);
            snprintf(al, sizeof al, "%s", row > 3 ? "10~$\\mu$s, assumed" : "0");
        }
        long c = rope_ring_model_min_block(&mm);
        double flop = 2.0 * h * d * (double)c * c;
        double r = ring_rate_at(len, rate, nr, c / 2.0);
        /* a step below 10 us keeps one decimal, so that none reads 0 */
        double us = 1e6 * flop / sigma, usm = r > 0 ? 1e6 * flop / (1e9 * r) : 0;
        if (r > 0)
            snprintf(st, sizeof st, "%.*f~$\\mu$s", usm < 10 ? 1 : 0, usm);
        fprintf(cm, "%s & %s & %ld & %.0f & %.*f~$\\mu$s & %s \\\\\n", name, al,
                c, floor(1048576.0 / c), us < 10 ? 1 : 0, us, st);
        if (row == 1 || row == 4) {
            char key[48];
            snprintf(key, sizeof key, "ring-cmin-25-a%d", row == 4);
            bd_def(f, key, "%ld", c);
            snprintf(key, sizeof key, "ring-pmax-25-a%d", row == 4);
            bd_def(f, key, "%.0f", floor(1048576.0 / c));
            snprintf(key, sizeof key, "ring-step-25-a%d", row == 4);
            bd_def(f, key, "%.0f", 1e6 * flop / sigma);
            snprintf(key, sizeof key, "ring-stepm-25-a%d", row == 4);
            bd_def(f, key, "%.0f", 1e6 * flop / (1e9 * r));
            snprintf(key, sizeof key, "ring-rate-25-a%d", row == 4);
            bd_def(f, key, "%.0f", r);
            snprintf(key, sizeof key, "ring-half-25-a%d", row == 4);
            bd_def(f, key, "%.0f", c / 2.0);
        }
        if (row == 0)
            bd_def(f, "ring-cmin-shm", "%ld", c);
        if (row == 3 || row == 6) {
            char key[48];
            snprintf(key, sizeof key, "ring-cmin-400-a%d", row == 6);
            bd_def(f, key, "%ld", c);
        }
    }
    fprintf(cm, "\\bottomrule\\end{tabular}\n");
    bd_close(cm);
    FILE *dm = bd_open(dir, "ring-model-measured.dat");
    fprintf(dm, "P t25m\n");
    for (long P = 8; P <= 262144; P *= 2) {
        double c = 1048576.0 / P, r = ring_rate_at(len, rate, nr, c / 2);
        double comm = 8.0 * c * hkv * d / m[0].bytes_per_s;
        if (r > 0)
            fprintf(dm, "%ld %.6g\n", P,
                    P * fmax(2.0 * h * d * c * c / (1e9 * r), comm));
    }
    bd_close(dm);
    {
        double pb[32], pt[32];
        int np = 0;
        char pl[256];
        snprintf(path, sizeof path, "%s/ring-pingpong.dat", dir);
        FILE *pp = fopen(path, "r");
        while (pp != NULL && np < 32 && fgets(pl, sizeof pl, pp) != NULL)
            if (sscanf(pl, "%lf %lf", &pb[np], &pt[np]) == 2 && pb[np] > 0
                && pt[np] > 0)
                np++;
        if (pp != NULL) fclose(pp);
        if (np < 2) {
            fprintf(stderr, "bookdata: %s: no recorded ping-pong "
                    "(make record-ring)\n", path);
            return 1;
        }
        long cpp = 0;
        for (long c = 1; c <= 1048576 && cpp == 0; c++) {
            double bytes = 8.0 * (double)c * hkv * d, us = 0;
            if (bytes <= pb[0])
                us = pt[0];
            else {
                int i = 1;
                while (i < np - 1 && bytes > pb[i]) i++;
                double u = log(bytes / pb[i - 1]) / log(pb[i] / pb[i - 1]);
                us = exp(log(pt[i - 1]) + u * log(pt[i] / pt[i - 1]));
            }
            if (2.0 * h * d * (double)c * c / sigma * 1e6 >= us)
                cpp = c;
        }
        bd_def(f, "ring-cmin-shm-pp", "%ld", cpp);
        bd_def(f, "ring-pmax-shm-pp", "%.0f", floor(1048576.0 / cpp));
    }
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
