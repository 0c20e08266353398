/* W5.14 The code of the exercises */
/* exercises-attention.h: the functions of chapter 5's exercises. */
#ifndef ROPE_EXERCISES_ATTENTION_H
#define ROPE_EXERCISES_ATTENTION_H
float ex_online_logsumexp(const float *x, int n);
void ex_merge_states(const float *a, const float *b, int d,
                     float *out);
int ex_tile_class(long q0, int bq, long j0, int bk, long n,
                  long n_kv, int causal);
double ex_causal_flops(long n, long n_kv, int d, int h);
void ex_causal_mask_with_cache(long start_pos, int seq_len, float *mask);
unsigned short ex_bf16_round(float x);
#endif
