/* A.1 Chapter 1: why attention needs positions */
/* exercises-positions-solution.c: the book's answers to chapter 1. */
#include <math.h>
#include "exercises-positions.h"

void ex_softmax(double *x, int n)
{
    double max = x[0], sum = 0.0;
    for (int j = 1; j < n; j++)
        if (x[j] > max) max = x[j];
    for (int j = 0; j < n; j++)
        sum += (x[j] = exp(x[j] - max));
    for (int j = 0; j < n; j++)
        x[j] /= sum;
}
void ex_invert_permutation(const int *perm, int n, int *inv)
{
    for (int i = 0; i < n; i++)
        inv[perm[i]] = i;
}
long ex_crossover_position(double embed_norm, int d_model)
{
    return (long)floor(embed_norm / sqrt((double)d_model)) + 1;
}
void ex_attention_row(const double *q, const double *k,
                      const double *v, int n, int d, double *out)
{
    double max = -INFINITY, sum = 0.0;
    double scale = 1.0 / sqrt((double)d);
    for (int j = 0; j < d; j++) out[j] = 0.0;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < d; j++) s += q[j] * k[i * d + j];
        if (s * scale > max) max = s * scale;
    }
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < d; j++) s += q[j] * k[i * d + j];
        double w = exp(s * scale - max);
        sum += w;
        for (int j = 0; j < d; j++) out[j] += w * v[i * d + j];
    }
    for (int j = 0; j < d; j++) out[j] /= sum;
}
void ex_permute_rows(const int *perm, const double *x, int n, int d,
                     double *out)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < d; c++)
            out[i * d + c] = x[perm[i] * d + c];
}
