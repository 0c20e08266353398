/* A.6 Chapter 6: beyond one machine */
/* exercises-ring-solution.c: the book's answers to chapter 6. */
#include <math.h>
#include "exercises-ring.h"

static long ex_chunk_start(long n, long K, long c)
{
    return c * (n / K) + (c < n % K ? c : n % K);
}

void ex_zigzag_positions(long n, int n_ranks, int rank, long start_pos,
                         long *pos)
{
    long K = n_ranks > 1 ? 2L * n_ranks : 1, at = 0;
    long chunks[2] = {rank, K - 1 - rank};
    for (int i = 0; i < (K > 1 ? 2 : 1); i++)
        for (long t = ex_chunk_start(n, K, chunks[i]);
             t < ex_chunk_start(n, K, chunks[i] + 1); t++)
            pos[at++] = start_pos + t;
}
void ex_merge_lse(const float *o1, float lse1, const float *o2,
                  float lse2, int d, float *o, float *lse)
{
    double hi = lse1 > lse2 ? lse1 : lse2, lo = lse1 > lse2 ? lse2 : lse1;
    if (hi == -INFINITY) {
        for (int c = 0; c < d; c++) o[c] = 0;
        *lse = -INFINITY;
        return;
    }
    double l = hi + log1p(exp(lo - hi));
    double w1 = exp(lse1 - l), w2 = exp(lse2 - l);
    for (int c = 0; c < d; c++) o[c] = (float)(w1 * o1[c] + w2 * o2[c]);
    *lse = (float)l;
}
long ex_min_hiding_block(int n_heads, int n_kv_heads, int head_dim,
                         double flops_per_s, double bytes_per_s)
{
    double c = 4.0 * n_kv_heads * flops_per_s / (n_heads * bytes_per_s);
    long answer = (long)ceil(c);
    (void)head_dim;
    return answer < 1 ? 1 : answer;
}
