/* W3.7 The code of the exercises */
/* tests/exercises/rotary.c: your answers to chapter 3's exercises. */
#include "exercises-rotary.h"

void rope_ex_unrotate(float *x, const float *freqs_cos,
                      const float *freqs_sin, int head_dim, long pos)
{
    (void)x; (void)freqs_cos; (void)freqs_sin;
    (void)head_dim; (void)pos;
}

void rope_ex_interleaved_to_half_rows(const float *w, float *out,
        int n_heads, int head_dim, int in_features)
{
    (void)w; (void)out; (void)n_heads;
    (void)head_dim; (void)in_features;
}

double rope_ex_score_at_offset(const float *q, const float *k,
        int head_dim, double rope_base, long r)
{
    (void)q; (void)k; (void)head_dim; (void)rope_base; (void)r;
    return 0.0;
}

void rope_ex_half_to_interleaved(const float *x, float *out,
                                 int head_dim)
{
    for (int j = 0; j < head_dim; j++)
        out[j] = x[j];
}
