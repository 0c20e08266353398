/* W5c.3 The numbers of chapter 5 */
/* bookdata-attention.c: the computed numbers of chapter 5; its
   measurements are recorded by make bench RECORD=1. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"
#include "bench-harness.h"

int bookdata_attention(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "attention");
    /* W5b.2 The code of the bfloat16 path */
    {
        enum { SN = 256, SD = 64, SH = 8, SKV = 2 };
        static const double sig[4] = {0.5, 1, 2, 3};
        FILE *t = bd_open(dir, "bf16-scales.tex");
        fputs("\\begin{tabular}{rrrrrr}\\toprule\n$\\sigma$ & $\\max Z_i$ & "
              "error & bound & error, rounded & old bound\\\\\\midrule\n", t);
        bd_def(f, "bf16s-n", "%d", SN);
        for (int s = 0; s < 4; s++) {
            double e[5];
            if (bench_bf16_at_scale(sig[s], SN, SD, SH, SKV, ROPE_SIMD_SCALAR, e))
                return 1;
            char z[32], b[32];
            snprintf(z, sizeof z, "%.1f", e[0]);
            if (s == 3) bd_def(f, "bf16s-z-3", "%.0f", e[0]);
            if (s == 3) bd_def(f, "bf16s-err-3", "%.3f", e[1]);
            if (s == 1) bd_def(f, "bf16s-err-1", "%.3f", e[1]);
            snprintf(b, sizeof b, "%.3f", e[2]);
            fprintf(t, "%g & %s & %.4f & %s & %.4f & %.4f\\\\\n", sig[s], z,
                    e[1], b, e[3], bench_bf16_old_claim(SD, SN, e[0], 1.0));
        }
        fputs("\\bottomrule\n\\end{tabular}\n", t);
        bd_close(t);
    }
    /* W5c.3 The numbers of chapter 5 */
    double wmax = 0;
    int pack_was = rope_attention_tune(ROPE_TUNE_PACK, 0);
    for (int rep = 1; rep <= ROPE_ATTENTION_ROWS; rep++) {
        rope_attention_params wp = {
            .batch = 1, .seq_len = 4096, .kv_len = 4096, .n_heads = rep,
            .n_kv_heads = 1, .head_dim = ROPE_ATTENTION_MAX_HEAD_DIM,
            .causal = 1, .n_threads = 1
        };
        wmax = fmax(wmax, (double)rope_attention_workspace_bytes(&wp));
    }
    rope_attention_params wb = {
        .batch = 1, .seq_len = 4096, .kv_len = 4096, .n_heads = 8,
        .n_kv_heads = 2, .head_dim = 64, .causal = 1, .n_threads = 1
    };
    bd_def(f, "attention-max-head-dim", "%d", ROPE_ATTENTION_MAX_HEAD_DIM);
    bd_def(f, "attention-pack-mib", "%d", ROPE_ATTENTION_PACK_MIB);
    bd_def(f, "attention-item-blocks", "%d", ROPE_ATTENTION_ITEM_BLOCKS);
    bd_def(f, "attention-ws-max-kib", "%.0f", ceil(wmax / 1024));
    bd_def(f, "attention-ws-min-threads", "%.0f",
           floor(ROPE_ATTENTION_WS_MIB * 1048576.0 / wmax));
    double nfit = floor(ROPE_ATTENTION_WS_MIB * 1048576.0 / wmax);
    if (nfit == 1)
        bd_def(f, "attention-ws-fit", "%s", "one workspace fits");
    else
        bd_def(f, "attention-ws-fit", "%.0f workspaces fit", nfit);
    bd_def(f, "attention-ws-kib-64", "%.0f",
           ceil(rope_attention_workspace_bytes(&wb) / 1024.0));
    bd_def(f, "attention-old-pack-gib", "%.0f",
           2.0 * 1048576 * ROPE_ATTENTION_BK * 16 * 4 / 1073741824.0);
    bd_def(f, "attention-old-pack-input-mib", "%.0f", 1048576 * 4 / 1048576.0);
    rope_attention_tune(ROPE_TUNE_PACK, pack_was);
    bd_def(f, "attention-pack-max-n", "%ld", (long)ROPE_ATTENTION_BK
           * (ROPE_ATTENTION_PACK_MIB * 1048576L
              / (2L * 2 * 64 * ROPE_ATTENTION_BK * (long)sizeof(float))));
    long bq = (ROPE_ATTENTION_ROWS + 3) / 4, nblocks = 4096 / bq;
    long ntiles = 4096 / ROPE_ATTENTION_BK;
    for (int one = 0; one < 2; one++) {
        long g = one ? 1 : ROPE_ATTENTION_ITEM_BLOCKS, packs = 0;
        for (long b1 = nblocks; b1 > 0; b1 -= g)
            packs += (bq * b1 - 1) / ROPE_ATTENTION_BK + 1;
        bd_def(f, one ? "attention-packs-per-tile-one"
                      : "attention-packs-per-tile", "%.0f",
               (double)packs / ntiles);
    }
    {
        const double D = 768, hq = 8, hk = 4, hd = 96, F = 2432;
        double w = 2 * D * hq * hd + 2 * D * hk * hd + 3 * D * F;
        double attn = 2.0 * 768 * 768 * hd * hq, rest = 2.0 * w * 768;
        bd_def(f, "attention-mm-share-768", "%.0f",
               100 * attn / (attn + rest));
        bd_def(f, "attention-mm-cross", "%.0f", w / (hd * hq));
        long per_tile = 2L * 4 * 96 * ROPE_ATTENTION_BK * (long)sizeof(float);
        bd_def(f, "attention-mm-pack-max-n", "%ld", (long)ROPE_ATTENTION_BK
               * (ROPE_ATTENTION_PACK_MIB * 1048576L / per_tile));
        long bq2 = (ROPE_ATTENTION_ROWS + 1) / 2, nb = 32768 / bq2;
        bd_def(f, "attention-mm-packs-32768", "%ld",
               (nb + ROPE_ATTENTION_ITEM_BLOCKS - 1)
               / ROPE_ATTENTION_ITEM_BLOCKS);
    }
    bd_def(f, "attention-score-gib", "%.0f",
           4.0 * 32768 * 32768 * 8 / 1073741824.0);
    bd_def(f, "attention-bk", "%d", ROPE_ATTENTION_BK);
    bd_def(f, "attention-rows", "%d", ROPE_ATTENTION_ROWS);
    bd_def(f, "attention-split-max", "%d", ROPE_ATTENTION_SPLIT_MAX);
    bd_def(f, "attention-tile-kib-64", "%d", 4 * ROPE_ATTENTION_BK * 64
                                             / 1024);
    bd_def(f, "attention-tile-kib-96", "%d", 4 * ROPE_ATTENTION_BK * 96
                                             / 1024);
    bd_def(f, "attention-block-kib-64", "%d", 4 * ROPE_ATTENTION_ROWS
           * (2 * 64 + ROPE_ATTENTION_BK) / 1024);
    bd_def(f, "attention-intensity", "%d", ROPE_ATTENTION_ROWS / 2);
    bd_def(f, "attention-bench-reps", "%d", BENCH_REPS);
    bd_def(f, "attention-bench-reps-long", "%d", BENCH_REPS_LONG);
    bd_def(f, "attention-book-reps", "%d", BOOK_REPS);
    bd_def(f, "attention-book-reps-long", "%d", BOOK_REPS_LONG);
    bd_def(f, "attention-book-reps-decode", "%d", BOOK_REPS_DECODE);
    bd_def(f, "attention-tune-pairs", "%d", BOOK_TUNE_PAIRS);
    bd_def(f, "attention-tune-pairs-long", "%d", BOOK_TUNE_PAIRS_LONG);
    bd_def(f, "attention-scaling-max", "%.1f", BENCH_SCALING_MAX);
    bd_def(f, "attention-bench-budget", "%g", BENCH_NAIVE_BUDGET);
    bd_def(f, "attention-book-budget", "%g", BOOK_NAIVE_BUDGET);
    int bq8by2 = (ROPE_ATTENTION_ROWS + 3) / 4; /* B_q for r = 4 */
    int nqb4096 = (4096 + bq8by2 - 1) / bq8by2; /* row blocks per head */
    bd_def(f, "attention-blocks-4096", "%d", 2 * nqb4096);
    bd_def(f, "attention-items-4096", "%d", 2 * ((nqb4096
           + ROPE_ATTENTION_ITEM_BLOCKS - 1) / ROPE_ATTENTION_ITEM_BLOCKS));
    double taylor = pow(0.5 * log(2.0), 8) / 40320 * sqrt(2.0);
    taylor *= sqrt(2.0); /* relative to 2^f >= 2^-1/2 */
    double pb = rope_exp2_poly_bound();
    bd_def(f, "attention-exp2-poly", "%.1f\\times 10^{%d}",
           pb / pow(10, floor(log10(pb))), (int)floor(log10(pb)));
    bd_def(f, "attention-exp2-taylor-rel", "%.1f\\times 10^{%d}",
           taylor / pow(10, floor(log10(taylor))),
           (int)floor(log10(taylor)));
    enum { EX_KEYS = 12, EX_TILE = 3 };
    static const double ex_s[EX_KEYS] = {0.4, 1.1, 0.2, 1.6, 2.5, 0.9,
                                         1.8, 0.7, 2.2, 3.4, 1.3, 2.9};
    FILE *es = bd_open(dir, "attention-online-scores.dat");
    FILE *et = bd_open(dir, "attention-online-state.dat");
    fputs("j s\n", es);
    fputs("t edge m old new l alpha\n", et);
    double m_t = -INFINITY, l_t = 0, direct = 0, ex_alpha[4];
    for (int ti = 0; ti < EX_KEYS / EX_TILE; ti++) {
        double mx = m_t, sum = 0;
        for (int c = 0; c < EX_TILE; c++) {
            int j = ti * EX_TILE + c;
            mx = fmax(mx, ex_s[j]);
            fprintf(es, "%d %.2f\n", j, ex_s[j]);
            direct += exp(ex_s[j]);
        }
        for (int c = 0; c < EX_TILE; c++)
            sum += exp(ex_s[ti * EX_TILE + c] - mx);
        double alpha = exp(m_t - mx);
        fprintf(et, "%d %.1f %.4f %.4f %.4f %.4f %.2f\n", ti + 1,
                ti * EX_TILE - 0.5, mx, alpha * l_t, sum, alpha * l_t + sum,
                alpha);
        ex_alpha[ti] = alpha;
        l_t = alpha * l_t + sum;
        m_t = mx;
    }
    fprintf(et, "%d %.1f %.4f 0 0 %.4f 1\n", EX_KEYS / EX_TILE + 1,
            EX_KEYS - 0.5, m_t, l_t);
    bd_close(es);
    bd_close(et);
    bd_def(f, "attention-online-lse", "%.4f", m_t + log(l_t));
    bd_def(f, "attention-online-direct", "%.4f", log(direct));
    bd_def(f, "attention-online-alpha2", "%.2f", ex_alpha[1]);
    bd_def(f, "attention-online-alpha4", "%.2f", ex_alpha[3]);
    bd_def(f, "attention-online-tiles", "%d", EX_KEYS / EX_TILE);
    bd_def(f, "attention-online-tile", "%d", EX_TILE);
    enum { MK_N = 3, MK_KV = 7, MK_D = 8 };
    float mk_q[MK_N * MK_D] = {0}, mk_k[MK_KV * MK_D] = {0};
    float mk_v[MK_KV * MK_D] = {0}, mk_o[MK_N * MK_D];
    for (int j = 0; j < MK_KV; j++) mk_v[j * MK_D + j] = 1;
    rope_attention_params mk;
    rope_attention_defaults(&mk);
    mk.seq_len = MK_N; mk.kv_len = MK_KV; mk.head_dim = MK_D;
    mk.n_heads = mk.n_kv_heads = 1; mk.causal = 1;
    if (rope_attention(mk_o, mk_q, mk_k, mk_v, &mk)) return 1;
    FILE *em = bd_open(dir, "attention-mask.dat");
    fputs("i j w\n", em);
    for (int i = 0; i < MK_N; i++)
        for (int j = 0; j < MK_KV; j++)
            fprintf(em, "%d %d %.4f\n", i, j, mk_o[i * MK_D + j]);
    bd_close(em);
    bd_def(f, "attention-mask-n", "%d", MK_N);
    bd_def(f, "attention-mask-nkv", "%d", MK_KV);
    bd_def(f, "attention-mask-shift", "%d", MK_KV - MK_N);
    int ex_ntk = 16, ex_per = (ex_ntk + ROPE_ATTENTION_SPLIT_MAX - 1)
                             / ROPE_ATTENTION_SPLIT_MAX;
    if (ex_per < 4) ex_per = 4;
    bd_def(f, "attention-split-ex-tiles", "%d", ex_ntk);
    bd_def(f, "attention-split-ex-keys", "%d", ex_ntk * ROPE_ATTENTION_BK);
    bd_def(f, "attention-split-ex-per", "%d", ex_per);
    bd_def(f, "attention-split-ex-ranges", "%d",
           (ex_ntk + ex_per - 1) / ex_per);
    {
        char path[4096], line[512];
        struct { int n, d; double g, pc; } rw[16];
        int nrow = 0;
        snprintf(path, sizeof path, "%s/attention-rows.tsv", dir);
        FILE *rt = fopen(path, "r");
        if (!rt) {
            fprintf(stderr, "bookdata: %s: cannot read the recorded rows\n", path);
            return 1;
        }
        while (nrow < 16 && fgets(line, sizeof line, rt)) {
            int n, kv, d, th;
            double g, pc;
            if (line[0] == '#' || sscanf(line, "%d %d %d %d %lf %lf", &n, &kv,
                                         &d, &th, &g, &pc) != 6
                || th != 1 || n != kv)
                continue;
            rw[nrow].n = n; rw[nrow].d = d; rw[nrow].g = g; rw[nrow].pc = pc;
            nrow++;
        }
        fclose(rt);
        double lo = INFINITY, hi = -INFINITY, short_hi = -INFINITY;
        for (int r = 0; r < nrow; r++)
            if (rw[r].pc >= 0) {
                if (rw[r].n >= 1024) {
                    lo = fmin(lo, rw[r].pc);
                    hi = fmax(hi, rw[r].pc);
                } else
                    short_hi = fmax(short_hi, rw[r].pc);
            }
        if (!isfinite(lo) || !isfinite(short_hi)) {
            fprintf(stderr, "bookdata: %s: no one-thread prefill rows\n", path);
            return 1;
        }
        bd_def(f, "attention-low-pct", "%.0f", lo);
        bd_def(f, "attention-high-pct", "%.0f", hi);
        bd_def(f, "attention-short-pct", "%.0f", short_hi);
        {
            enum { NN = 3 };
            static const int ns[NN] = {256, 1024, 4096};
            double glo[NN][2], ghi[NN][2], gmed[NN][2];
            int have = 0;
            for (int r = 0; r < nrow; r++)
                for (int a = 0; a < NN; a++)
                    if (rw[r].n == ns[a] && (rw[r].d == 64 || rw[r].d == 96))
                        gmed[a][rw[r].d == 96] = rw[r].g;
            snprintf(path, sizeof path, "%s/attention-bench.tex", dir);
            FILE *bt = fopen(path, "r");
            while (bt && fgets(line, sizeof line, bt)) {
                int n, kv, d, th;
                char naive[32];
                double t, tmin, tmax;
                /* N & N_kv & d & thr. & naive & tiled & [min, max] & ... */
                if (sscanf(line, "%d & %d & %d & %d & %31s & %lf%*[^&]& [%lf, %lf]",
                           &n, &kv, &d, &th, naive, &t, &tmin, &tmax) != 8
                    || th != 1 || n != kv || tmin <= 0)
                    continue;
                for (int a = 0; a < NN; a++)
                    if (n == ns[a] && (d == 64 || d == 96)) {
                        int w = d == 96;
                        glo[a][w] = gmed[a][w] * t / tmax;
                        ghi[a][w] = gmed[a][w] * t / tmin;
                        have++;
                    }
            }
            if (bt) fclose(bt);
            if (have != 2 * NN) {
                fprintf(stderr, "bookdata: %s: expected %d one-thread prefill "
                        "rows, read %d\n", path, 2 * NN, have);
                return 1;
            }
            bd_def(f, "attention-gflops-4096-96", "%.0f", gmed[NN - 1][1]);
            char dlist[128] = "", nl[2][128] = {"", ""};
            int dn = 0, nn[2] = {0, 0};
            for (int a = 0; a < NN; a++)
                if (glo[a][1] > ghi[a][0]) {
                    size_t used = strlen(dlist);
                    snprintf(dlist + used, sizeof dlist - used, "%s$N = %d$",
                             dn ? " and " : "", ns[a]);
                    dn++;
                }
            for (int w = 0; w < 2; w++)
                for (int a = 0; a + 1 < NN; a++)
                    if (glo[a + 1][w] > ghi[a][w]) {
                        size_t used = strlen(nl[w]);
                        snprintf(nl[w] + used, sizeof nl[w] - used, "%s%d to %d",
                                 nn[w] ? ", " : "", ns[a], ns[a + 1]);
                        nn[w]++;
                    }
            bd_def(f, "attention-trend-ranges",
                   "Against the rows' ranges, the speed rises with $N$ %s%s%s%s "
                   "for $d = 64$ and %s%s%s for $d = 96$; it rises with $d$ %s%s.",
                   nn[0] ? "from " : "", nn[0] ? nl[0] : "at no step", "", "",
                   nn[1] ? "from " : "", nn[1] ? nl[1] : "at no step", "",
                   dn ? "at " : "at no length: the two widths' ranges overlap",
                   dn ? dlist : "");
        }
    }
    fprintf(f, "\\input{\\datadir provenance.tex}\n"
            "\\input{\\datadir attention-measured.tex}\n"
            "\\input{\\datadir decode-provenance.tex}\n"
            "\\input{\\datadir decode-measured.tex}\n");
    bd_close(f);
    return 0;
}
