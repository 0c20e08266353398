/* W3.7 The code of the exercises */
/* exercises-rotary.h: the functions of chapter 3's exercises. */
#ifndef ROPE_EXERCISES_ROTARY_H
#define ROPE_EXERCISES_ROTARY_H
#include "rope.h"

void rope_ex_unrotate(float *x, const float *freqs_cos,
                      const float *freqs_sin, int head_dim, long pos);
void rope_ex_interleaved_to_half_rows(const float *w, float *out,
        int n_heads, int head_dim, int in_features);
double rope_ex_score_at_offset(const float *q, const float *k,
        int head_dim, double rope_base, long r);
void rope_ex_half_to_interleaved(const float *x, float *out,
                                 int head_dim);
#endif
