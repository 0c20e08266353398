/* 1.1.1 The code */
/* positions.c: chapter 1, attention without positions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "positions.h"

/* W1.1 The machinery of chapter 1 */
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
void rope_linear(const double *x, const double *w, double *y,
                 int n, int in, int out)
{
    for (int i = 0; i < n; i++)
        for (int o = 0; o < out; o++) {
            double acc = 0.0;
            for (int l = 0; l < in; l++)
                acc += x[(size_t)i * in + l] * w[(size_t)o * in + l];
            y[(size_t)i * out + o] = acc;
        }
}
/* 1.1.1 The code */
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
    rope_linear(x, wq, q, n, d_model, d); /* Q = X W_q^T */
    rope_linear(x, wk, k, n, d_model, d); /* K = X W_k^T */
    rope_linear(x, wv, v, n, d_model, d); /* V = X W_v^T */
    double scale = 1.0 / sqrt((double)d);
    rope_linear(q, k, s, n, d, n); /* S = Q K^T */
    for (size_t j = 0; j < (size_t)n * n; j++)
        s[j] *= scale;
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
