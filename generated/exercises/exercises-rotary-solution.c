/* A.3 Chapter 3: rotary position embeddings */
/* exercises-rotary-solution.c: the book's answers to chapter 3's
   exercises. */
#include <math.h>
#include <stdlib.h>
#include "exercises-rotary.h"

void rope_ex_unrotate(float *x, const float *freqs_cos,
                      const float *freqs_sin, int head_dim, long pos)
{
    int half = head_dim / 2;
    const float *c = freqs_cos + (size_t)pos * (size_t)head_dim;
    const float *s = freqs_sin + (size_t)pos * (size_t)head_dim;
    for (int i = 0; i < half; i++) {
        float a = x[i], b = x[i + half];
        x[i] = a * c[i] + b * s[i];
        x[i + half] = b * c[i + half] - a * s[i + half];
    }
}
void rope_ex_interleaved_to_half_rows(const float *w, float *out,
        int n_heads, int head_dim, int in_features)
{
    int perm[4096];
    size_t row = (size_t)in_features;
    rope_pairing_permutation(perm, head_dim);
    for (int h = 0; h < n_heads; h++)
        for (int j = 0; j < head_dim; j++) {
            const float *src = w + ((size_t)h * head_dim + j) * row;
            float *dst = out + ((size_t)h * head_dim + perm[j]) * row;
            for (size_t c = 0; c < row; c++)
                dst[c] = src[c];
        }
}
double rope_ex_score_at_offset(const float *q, const float *k,
        int head_dim, double rope_base, long r)
{
    int half = head_dim / 2;
    float *inv = malloc((size_t)half * sizeof *inv);
    double score = 0;
    if (inv == NULL)
        return NAN;
    rope_default_inv_freq(inv, head_dim, rope_base);
    for (int i = 0; i < half; i++) {
        double a = (double)r * inv[i];
        double qa = q[i], qb = q[i + half], ka = k[i], kb = k[i + half];
        score += (qa * ka + qb * kb) * cos(a)
               + (qb * ka - qa * kb) * sin(a);
    }
    free(inv);
    return score;
}
void rope_ex_half_to_interleaved(const float *x, float *out,
                                 int head_dim)
{
    int half = head_dim / 2;
    for (int i = 0; i < half; i++) {
        out[2 * i] = x[i];
        out[2 * i + 1] = x[i + half];
    }
}
