/* W1.4 The numbers of chapter 1 */
/* bookdata-positions.c: the tables and numbers of chapter 1. */
#include <math.h>
#include "bookdata.h"

static void write_table(const char *dir, const char *name,
                        void (*print)(FILE *, int))
{
    FILE *f = bd_open(dir, name);
    print(f, 1);
    bd_close(f);
}

int bookdata_positions(const char *dir)
{
    write_table(dir, "positions-catdog.tex", table_print_catdog);
    write_table(dir, "positions-integer.tex", table_print_integer);
    write_table(dir, "positions-normalized.tex", table_print_normalized);
    FILE *f = bd_numbers_open(dir, "positions");
    double wx[12] = {2, 0, 0, 0, 0, 2, 0, 0, 1, 1, 0, 0};
    double id[16], wout[12], ws[3] = {2.0, 0.0, 1.0};
    for (int i = 0; i < 16; i++) id[i] = (i % 5 == 0);
    if (rope_tiny_attention(wx, 3, 4, 4, id, id, id, wout) != 0) return 1;
    rope_softmax_rows(ws, 1, 3);
    bd_def(f, "positions-worked-w1", "%.3f", ws[0]);
    bd_def(f, "positions-worked-w2", "%.3f", ws[1]);
    bd_def(f, "positions-worked-w3", "%.3f", ws[2]);
    bd_def(f, "positions-worked-out1", "%.3f", wout[0]);
    bd_def(f, "positions-worked-out2", "%.3f", wout[1]);
    double a[3 * ROPE_EX_DHEAD], b[3 * ROPE_EX_DHEAD], maxdiff = 0.0;
    if (rope_catdog(BOOK_SEED, a, b) != 0) return 1;
    for (int t = 0; t < 3; t++)
        for (int j = 0; j < ROPE_EX_DHEAD; j++) {
            double d = fabs(a[t * ROPE_EX_DHEAD + j]
                            - b[(2 - t) * ROPE_EX_DHEAD + j]);
            if (d > maxdiff) maxdiff = d;
        }
    bd_def(f, "positions-seed", "%d", BOOK_SEED);
    if (maxdiff == 0.0) bd_def(f, "positions-catdog-maxdiff", "$0$");
    else bd_def_sci(f, "positions-catdog-maxdiff", maxdiff, 2);
    for (int s = 0; s < 2; s++)
        for (int t = 0; t < 3; t++)
            for (int j = 0; j < ROPE_EX_DHEAD; j++) {
                char key[64];
                snprintf(key, sizeof key, "positions-fig-%d-%d-%d", s, t, j);
                bd_def(f, key, "$%.2f$",
                       (s ? b : a)[t * ROPE_EX_DHEAD + j]);
            }
    enum { D = CH1_DMODEL };
    double xa[D], xb[D];
    table_two_embeddings(xa, xb, D, CH1_SIGMA, BOOK_SEED);
    bd_def(f, "positions-dmodel", "%d", D);
    bd_def(f, "positions-sigma", "%.2f", CH1_SIGMA);
    bd_def(f, "positions-embnorm", "%.3f", CH1_SIGMA * sqrt((double)D));
    bd_def(f, "positions-norm-a", "%.3f", rope_norm(xa, D));
    bd_def(f, "positions-norm-b", "%.3f", rope_norm(xb, D));
    bd_def(f, "positions-sqrtd", "%.2f", sqrt((double)D));
    bd_def(f, "positions-ratio-one", "%.0f", sqrt((double)D) / rope_norm(xa, D));
    FILE *dat = bd_open(dir, "positions-integer-cos.dat");
    fputs("t gap\n", dat);
    for (double t = 1.0; t <= 10000.0; t *= 1.2)
        fprintf(dat, "%.6g %.9e\n", t,
                1.0 - table_cosine_at_position(xa, xb, D, t));
    bd_close(dat);
    double mean = 0.0, perp = 0.0;
    for (int j = 0; j < D; j++) mean += (xa[j] - xb[j]) / D;
    for (int j = 0; j < D; j++)
        perp += (xa[j] - xb[j] - mean) * (xa[j] - xb[j] - mean);
    bd_def_sci(f, "positions-sigma-sq", CH1_SIGMA * CH1_SIGMA, 2);
    bd_def_sci(f, "positions-gap-coef", perp / (2.0 * D), 2);
    bd_def_sci(f, "positions-gap-one",
               1.0 - table_cosine_at_position(xa, xb, D, 1.0), 2);
    bd_def_sci(f, "positions-gap-thousand",
               1.0 - table_cosine_at_position(xa, xb, D, 1000.0), 2);
    enum { DH = 96 };
    static double wk[D * DH];
    uint64_t st = BOOK_SEED + 1;
    double grad[3];
    static const double gt[3] = {0.0, 1.0, 1000.0};
    for (int i = 0; i < D * DH; i++) wk[i] = CH1_SIGMA * rope_gaussian(&st);
    for (int g = 0; g < 3; g++) {
        double qa[D], kb[DH];
        for (int j = 0; j < D; j++) qa[j] = xa[j] + gt[g];
        for (int c = 0; c < DH; c++) {
            kb[c] = 0.0;
            for (int j = 0; j < D; j++) kb[c] += (xb[j] + gt[g]) * wk[c * D + j];
        }
        grad[g] = rope_norm(qa, D) * rope_norm(kb, DH);
    }
    bd_def_sci(f, "positions-grad-one", grad[1] / grad[0], 2);
    bd_def_sci(f, "positions-grad-thousand", grad[2] / grad[0], 2);
    bd_def(f, "positions-grad-dhead", "%d", DH);
    bd_def(f, "positions-n-short", "%d", 5);
    bd_def(f, "positions-n-long", "%d", 1025);
    bd_def(f, "positions-step-short", "%.2f", rope_normalized_position(1, 5));
    bd_def(f, "positions-step-long", "%.6f",
           rope_normalized_position(1, 1025));
    bd_def(f, "positions-half-short", "%d", 2);
    bd_def(f, "positions-half-long", "%d", 512);
    bd_close(f);
    return 0;
}
