/* W6.7 The code of the exercises */
/* exercises-ring.h: the functions of chapter 6's exercises. */
#ifndef ROPE_EXERCISES_RING_H
#define ROPE_EXERCISES_RING_H
void ex_zigzag_positions(long n, int n_ranks, int rank, long start_pos,
                         long *pos);
void ex_merge_lse(const float *o1, float lse1, const float *o2,
                  float lse2, int d, float *o, float *lse);
long ex_min_hiding_block(int n_heads, int n_kv_heads, int head_dim,
                         double flops_per_s, double bytes_per_s);
#endif
