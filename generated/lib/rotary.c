/* W3.1 The interface in detail */
/* rotary.c: rotary position embeddings, bit-compatible with MiniMind
   (model/model_minimind.py: precompute_freqs_cis,
   apply_rotary_pos_emb).
   Tangled from chapters/03-rope.nw and 13-workshop-rope.nw. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "rotary.h"

/* 3.6 The frequencies and the tables, as MiniMind computes them */
void rope_default_inv_freq(float *inv_freq, int head_dim,
                           double rope_base)
{
    float base = (float)rope_base;
    for (int i = 0; i < head_dim / 2; i++) {
        float exponent = (float)(2 * i) / (float)head_dim;
        inv_freq[i] = 1.0f / powf(base, exponent);
    }
}
/* W3.1 The interface in detail */
static int table_arguments_ok(int head_dim, long start, long end)
{
    return head_dim > 0 && head_dim % 2 == 0 && start >= 0
        && start <= end && end <= ROPE_MAX_POSITION;
}
/* 3.6 The frequencies and the tables, as MiniMind computes them */
int rope_freqs_cis_from_inv_freq(float *freqs_cos, float *freqs_sin,
        const float *inv_freq, int head_dim, long start, long end,
        double attention_factor, rope_precision precision)
{
    if (freqs_cos == NULL || freqs_sin == NULL || inv_freq == NULL
        || !table_arguments_ok(head_dim, start, end))
        return EINVAL;
    int half = head_dim / 2;
    for (long t = start; t < end; t++) {
        float *c = freqs_cos + (size_t)(t - start) * (size_t)head_dim;
        float *s = freqs_sin + (size_t)(t - start) * (size_t)head_dim;
        for (int i = 0; i < half; i++) {
            if (precision == ROPE_PRECISION_FLOAT) {
                float angle = (float)t * inv_freq[i];
                c[i] = cosf(angle) * (float)attention_factor;
                s[i] = sinf(angle) * (float)attention_factor;
            } else {
                double angle = (double)t * (double)inv_freq[i];
                c[i] = (float)(cos(angle) * attention_factor);
                s[i] = (float)(sin(angle) * attention_factor);
            }
            c[i + half] = c[i];
            s[i + half] = s[i];
        }
    }
    return 0;
}
int rope_precompute_freqs_cis(float *freqs_cos, float *freqs_sin,
        int head_dim, long end, double rope_base,
        rope_precision precision)
{
    if (!table_arguments_ok(head_dim, 0, end) || !(rope_base > 1.0)
        || !(rope_base <= FLT_MAX)) /* the base is used as a float */
        return EINVAL;
    float *inv_freq = malloc((size_t)(head_dim / 2) * sizeof *inv_freq);
    if (inv_freq == NULL)
        return ENOMEM;
    rope_default_inv_freq(inv_freq, head_dim, rope_base);
    int rc = rope_freqs_cis_from_inv_freq(freqs_cos, freqs_sin,
                 inv_freq, head_dim, 0, end, 1.0, precision);
    free(inv_freq);
    return rc;
}
/* 3.7 Applying the rotation */
void rope_rotate_half(const float *x, float *out, int head_dim)
{
    int half = head_dim / 2;
    for (int i = 0; i < half; i++) {
        out[i] = -x[i + half];
        out[i + half] = x[i];
    }
}
static void rotate_pair(float *x, int a, int b, const float *cos_row,
                        const float *sin_row, int col_a, int col_b)
{
    float xa = x[a], xb = x[b];
    float xa_cos = xa * cos_row[col_a], xb_sin = xb * sin_row[col_a];
    float xb_cos = xb * cos_row[col_b], xa_sin = xa * sin_row[col_b];
    x[a] = xa_cos - xb_sin;
    x[b] = xb_cos + xa_sin;
}
static void rotate_head(float *x, const float *cos_row,
                        const float *sin_row, int head_dim,
                        rope_pairing pairing)
{
    int half = head_dim / 2;
    for (int i = 0; i < half; i++) {
        if (pairing == ROPE_PAIRING_HALF)
            rotate_pair(x, i, i + half, cos_row, sin_row, i, i + half);
        else
            rotate_pair(x, 2 * i, 2 * i + 1, cos_row, sin_row, i, i);
    }
}
void rope_apply_rotary_pos_emb(float *q, float *k,
        const float *freqs_cos, const float *freqs_sin,
        int batch, int seq_len, int n_heads, int n_kv_heads,
        int head_dim, long start_pos, rope_pairing pairing)
{
    size_t d = (size_t)head_dim;
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < seq_len; j++) {
            size_t row = (size_t)(start_pos + j) * d;
            size_t token = (size_t)b * (size_t)seq_len + (size_t)j;
            const float *c = freqs_cos + row, *sn = freqs_sin + row;
            float *qt = q + token * (size_t)n_heads * d;
            float *kt = k + token * (size_t)n_kv_heads * d;
            for (int h = 0; h < n_heads; h++)
                rotate_head(qt + (size_t)h * d, c, sn, head_dim,
                            pairing);
            for (int h = 0; h < n_kv_heads; h++)
                rotate_head(kt + (size_t)h * d, c, sn, head_dim,
                            pairing);
        }
}
void rope_pairing_permutation(int *perm, int head_dim)
{
    for (int i = 0; i < head_dim / 2; i++) {
        perm[2 * i] = i;
        perm[2 * i + 1] = i + head_dim / 2;
    }
}
/* 3.10 Long-term decay */
double rope_decay_average(int head_dim, double rope_base, double r)
{
    int half = head_dim / 2;
    double re = 0, im = 0, sum = 0; /* Z_j = re + i im */
    for (int j = 1; j <= half; j++) {
        double omega = pow(rope_base, -2.0 * (j - 1) / head_dim);
        re += cos(r * omega);
        im += sin(r * omega);
        sum += hypot(re, im);
    }
    return sum / half;
}
/* W3.1 The interface in detail */
double rope_angle(long t, float inv_freq, rope_precision precision)
{
    if (precision == ROPE_PRECISION_FLOAT)
        return (double)((float)t * inv_freq);
    return (double)t * (double)inv_freq;
}
