/* The frame of the workshop / Tables that the program and the book share */
/* tables.c: the tables that the rope program prints and the book
   shows, chapter by chapter. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "positions.h"
#include "sinusoidal.h"
#include "tables.h"

/* W1.3 The demonstrations */
static void row_end(FILE *out, int latex)
{
    fputs(latex ? " \\\\\n" : "\n", out);
}

void table_print_catdog(FILE *out, int latex)
{
    double a[3 * ROPE_EX_DHEAD], b[3 * ROPE_EX_DHEAD];
    static const int order_b[3] = {2, 1, 0};
    rope_catdog(BOOK_SEED, a, b);
    if (latex)
        fputs("\\begin{tabular}{llrrrr}\n\\toprule\nsentence & token"
              " & \\multicolumn{4}{c}{output row} \\\\\n\\midrule\n", out);
    for (int s = 0; s < 2; s++)
        for (int t = 0; t < 3; t++) {
            const double *row = (s ? b : a) + t * ROPE_EX_DHEAD;
            int tok = s ? order_b[t] : t;
            fprintf(out, latex ? "%s & %s" : "%-16s %-7s",
                    s ? "dog chases cat" : "cat chases dog",
                    rope_example_words[tok]);
            for (int j = 0; j < ROPE_EX_DHEAD; j++)
                fprintf(out, latex ? " & $%.6f$" : " %10.6f", row[j]);
            row_end(out, latex);
        }
    if (latex) fputs("\\bottomrule\n\\end{tabular}\n", out);
}
void table_two_embeddings(double *a, double *b, int d, double sigma,
                          uint64_t seed)
{
    uint64_t st = seed;
    for (int j = 0; j < d; j++) a[j] = sigma * rope_gaussian(&st);
    for (int j = 0; j < d; j++) b[j] = sigma * rope_gaussian(&st);
}

double table_cosine_at_position(const double *a, const double *b, int d,
                                double t)
{
    double dot = 0.0, na = 0.0, nb = 0.0;
    for (int j = 0; j < d; j++) {
        dot += (a[j] + t) * (b[j] + t);
        na += (a[j] + t) * (a[j] + t);
        nb += (b[j] + t) * (b[j] + t);
    }
    return dot / sqrt(na * nb);
}
static void print_sci_latex(FILE *out, double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.1e", x);
    char *e = strchr(buf, 'e');
    if (e == NULL) {
        fputs(buf, out);
        return;
    }
    *e = '\0';
    fprintf(out, "$%s\\times 10^{%d}$", buf, atoi(e + 1));
}
void table_print_integer(FILE *out, int latex)
{
    enum { D = CH1_DMODEL };
    static const double ts[] = {0, 1, 2, 10, 100, 1000, 10000};
    double a[D], b[D];
    table_two_embeddings(a, b, D, CH1_SIGMA, BOOK_SEED);
    double na = rope_norm(a, D);
    if (latex)
        fputs("\\begin{tabular}{rrrrr}\n\\toprule\n$t$ & "
              "$\\|t\\mathbf{1}\\|$ & ratio to $\\|x_{\\mathrm{cat}}\\|$ & "
              "$\\cos_t$ & $1-\\cos_t$ \\\\\n"
              "\\midrule\n", out);
    else
        fprintf(out, "%7s %10s %14s %11s %8s\n", "t", "|t*1|",
                "|t*1|/|x_cat|", "cos_t", "1-cos_t");
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        double pn = ts[i] * sqrt((double)D);
        double c = table_cosine_at_position(a, b, D, ts[i]);
        if (latex) {
            fprintf(out, "%.0f & %.2f & %.1f & %.6f & ",
                    ts[i], pn, pn / na, c);
            print_sci_latex(out, 1.0 - c);
        } else
            fprintf(out, "%7.0f %10.2f %14.1f %11.6f %8.1e",
                    ts[i], pn, pn / na, c, 1.0 - c);
        row_end(out, latex);
    }
    if (latex) fputs("\\bottomrule\n\\end{tabular}\n", out);
}
void table_print_normalized(FILE *out, int latex)
{
    static const int ns[] = {2, 4, 5, 16, 128, 1025, 32768};
    if (latex)
        fputs("\\begin{tabular}{rrr}\n\\toprule\nlength $N$ & step "
              "$1/(N-1)$ & position at $0.5$ \\\\\n\\midrule\n", out);
    else
        fprintf(out, "%7s %13s %16s\n", "n", "step", "position at 0.5");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int n = ns[i];
        double step = rope_normalized_position(1, n);
        fprintf(out, latex ? "%d & %.6f & %.1f" : "%7d %13.6f %16.1f",
                n, step, 0.5 * (n - 1));
        row_end(out, latex);
    }
    if (latex) fputs("\\bottomrule\n\\end{tabular}\n", out);
}
/* W2.6 The command line */
int table_print_pe_rows(FILE *out, const long *positions, size_t n,
                        int d_model, double base)
{
    int err = rope_pe_check(d_model, base);
    if (err != ROPE_PE_OK)
        return err;
    double *row = malloc((size_t)d_model * sizeof *row);
    if (row == NULL)
        return -1;
    for (size_t p = 0; p < n; p++) {
        rope_pe_row(row, positions[p], d_model, base);
        for (int j = 0; j < d_model; j++)
            fprintf(out, j == 0 ? "%.9e" : " %.9e", row[j]);
        fputc('\n', out);
    }
    free(row);
    return ROPE_PE_OK;
}
