/* 1.1.1 The interface */
/* positions.c: chapter 1, attention without positions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rope.h"

/* 1.1.2 Reproducible random numbers */
uint64_t rope_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rope_uniform(uint64_t *state)
{
    return (double)(rope_splitmix64(state) >> 11) * 0x1.0p-53;
}
double rope_gaussian(uint64_t *state)
{
    const double two_pi = 6.283185307179586;
    double u1 = 1.0 - rope_uniform(state);
    double u2 = rope_uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}
/* 1.1.3 The computation */
void rope_matmul(const double *a, const double *b, double *c,
                 int n, int k, int m)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double acc = 0.0;
            for (int l = 0; l < k; l++)
                acc += a[(size_t)i * k + l] * b[(size_t)l * m + j];
            c[(size_t)i * m + j] = acc;
        }
}
void rope_softmax_rows(double *s, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double *row = s + (size_t)i * cols, max = row[0], sum = 0.0;
        for (int j = 1; j < cols; j++)
            if (row[j] > max) max = row[j];
        for (int j = 0; j < cols; j++)
            sum += (row[j] = exp(row[j] - max));
        for (int j = 0; j < cols; j++)
            row[j] /= sum;
    }
}
int rope_tiny_attention(const double *x, int n, int d_model, int d,
                        const double *wq, const double *wk,
                        const double *wv, double *out)
{
    size_t nd = (size_t)n * d;
    double *q = malloc(3 * nd * sizeof *q);
    double *s = malloc((size_t)n * n * sizeof *s);
    if (q == NULL || s == NULL) {
        free(q); free(s);
        return -1;
    }
    double *k = q + nd, *v = k + nd;
    rope_matmul(x, wq, q, n, d_model, d);
    rope_matmul(x, wk, k, n, d_model, d);
    rope_matmul(x, wv, v, n, d_model, d);
    double scale = 1.0 / sqrt((double)d);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dot = 0.0;
            for (int l = 0; l < d; l++)
                dot += q[(size_t)i * d + l] * k[(size_t)j * d + l];
            s[(size_t)i * n + j] = dot * scale;
        }
    rope_softmax_rows(s, n, n);
    rope_matmul(s, v, out, n, n, d);
    free(q); free(s);
    return 0;
}
/* 1.3 Adding the integer position */
void rope_add_integer_positions(double *x, int n, int d)
{
    for (int t = 0; t < n; t++)
        for (int j = 0; j < d; j++)
            x[(size_t)t * d + j] += (double)t;
}
/* 1.4 Positions scaled to [0,1] */
double rope_normalized_position(int t, int n)
{
    return n > 1 ? (double)t / (double)(n - 1) : 0.0;
}

void rope_add_normalized_positions(double *x, int n, int d)
{
    for (int t = 0; t < n; t++) {
        double p = rope_normalized_position(t, n);
        for (int j = 0; j < d; j++)
            x[(size_t)t * d + j] += p;
    }
}
/* 1.3 Adding the integer position */
double rope_norm(const double *x, int d)
{
    double s = 0.0;
    for (int j = 0; j < d; j++) s += x[j] * x[j];
    return sqrt(s);
}

double rope_cosine(const double *a, const double *b, int d)
{
    double dot = 0.0;
    for (int j = 0; j < d; j++) dot += a[j] * b[j];
    return dot / (rope_norm(a, d) * rope_norm(b, d));
}
/* 1.2.1 Two sentences with the same words */
const char *const rope_example_words[ROPE_EX_VOCAB] = {
    "cat", "chases", "dog"
};

void rope_example_init(rope_example *ex, uint64_t seed)
{
    uint64_t st = seed;
    double wscale = 1.0 / sqrt((double)ROPE_EX_DMODEL);
    for (int i = 0; i < ROPE_EX_VOCAB * ROPE_EX_DMODEL; i++)
        ex->emb[i] = rope_gaussian(&st);
    for (int i = 0; i < ROPE_EX_DMODEL * ROPE_EX_DHEAD; i++) {
        ex->wq[i] = wscale * rope_gaussian(&st);
        ex->wk[i] = wscale * rope_gaussian(&st);
        ex->wv[i] = wscale * rope_gaussian(&st);
    }
}
void rope_embed(const rope_example *ex, const int *tokens, int n,
                double *x)
{
    for (int t = 0; t < n; t++)
        memcpy(x + (size_t)t * ROPE_EX_DMODEL,
               ex->emb + (size_t)tokens[t] * ROPE_EX_DMODEL,
               ROPE_EX_DMODEL * sizeof *x);
}

void rope_permute_rows(const double *x, const int *perm, int n, int d,
                       double *out)
{
    for (int i = 0; i < n; i++)
        memcpy(out + (size_t)i * d, x + (size_t)perm[i] * d,
               (size_t)d * sizeof *x);
}
/* 1.2.2 Running it */
int rope_catdog(uint64_t seed, double out_a[3 * ROPE_EX_DHEAD],
                double out_b[3 * ROPE_EX_DHEAD])
{
    static const int cat_chases_dog[3] = {0, 1, 2};
    static const int dog_chases_cat[3] = {2, 1, 0};
    rope_example ex;
    double x[3 * ROPE_EX_DMODEL];
    rope_example_init(&ex, seed);
    rope_embed(&ex, cat_chases_dog, 3, x);
    if (rope_tiny_attention(x, 3, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                            ex.wq, ex.wk, ex.wv, out_a) != 0)
        return -1;
    rope_embed(&ex, dog_chases_cat, 3, x);
    return rope_tiny_attention(x, 3, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                               ex.wq, ex.wk, ex.wv, out_b);
}
/* W1.2 The demonstrations */
static void row_end(FILE *out, int latex)
{
    fputs(latex ? " \\\\\n" : "\n", out);
}

void rope_print_catdog(FILE *out, int latex)
{
    double a[3 * ROPE_EX_DHEAD], b[3 * ROPE_EX_DHEAD];
    static const int order_b[3] = {2, 1, 0};
    rope_catdog(ROPE_BOOK_SEED, a, b);
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
void rope_two_embeddings(double *a, double *b, int d, double sigma,
                         uint64_t seed)
{
    uint64_t st = seed;
    for (int j = 0; j < d; j++) a[j] = sigma * rope_gaussian(&st);
    for (int j = 0; j < d; j++) b[j] = sigma * rope_gaussian(&st);
}

double rope_cosine_at_position(const double *a, const double *b, int d,
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
void rope_print_integer(FILE *out, int latex)
{
    enum { D = ROPE_CH1_DMODEL };
    static const double ts[] = {0, 1, 2, 10, 100, 1000, 10000};
    double a[D], b[D];
    rope_two_embeddings(a, b, D, ROPE_CH1_SIGMA, ROPE_BOOK_SEED);
    double na = rope_norm(a, D);
    if (latex)
        fputs("\\begin{tabular}{rrrrr}\n\\toprule\n$t$ & "
              "$\\|t\\mathbf{1}\\|$ & ratio to $\\|x_a\\|$ & "
              "$\\cos_t(a,b)$ & $1-\\cos_t(a,b)$ \\\\\n"
              "\\midrule\n", out);
    else
        fprintf(out, "%7s %10s %12s %11s %8s\n", "t", "|t*1|",
                "|t*1|/|x_a|", "cos_t(a,b)", "1-cos_t");
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        double pn = ts[i] * sqrt((double)D);
        double c = rope_cosine_at_position(a, b, D, ts[i]);
        if (latex) {
            fprintf(out, "%.0f & %.2f & %.1f & %.6f & ",
                    ts[i], pn, pn / na, c);
            print_sci_latex(out, 1.0 - c);
        } else
            fprintf(out, "%7.0f %10.2f %12.1f %11.6f %8.1e",
                    ts[i], pn, pn / na, c, 1.0 - c);
        row_end(out, latex);
    }
    if (latex) fputs("\\bottomrule\n\\end{tabular}\n", out);
}
void rope_print_normalized(FILE *out, int latex)
{
    static const int ns[] = {2, 4, 5, 16, 128, 1025, 32768};
    if (latex)
        fputs("\\begin{tabular}{rrr}\n\\toprule\nlength $n$ & step "
              "$1/(n-1)$ & position at $0.5$ \\\\\n\\midrule\n", out);
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
