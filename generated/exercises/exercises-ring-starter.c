/* W6.7 The code of the exercises */
/* Your answers to the exercises of chapter 6. Fill in the bodies and
   run: make exercise CHAPTER=6 */
#include <math.h>
#include "exercises-ring.h"

void ex_zigzag_positions(long n, int n_ranks, int rank, long start_pos,
                         long *pos)
{
    (void)n; (void)n_ranks; (void)rank; (void)start_pos;
    pos[0] = -1;
}

void ex_merge_lse(const float *o1, float lse1, const float *o2,
                  float lse2, int d, float *o, float *lse)
{
    (void)o1; (void)lse1; (void)o2; (void)lse2; (void)d; (void)o;
    *lse = NAN;
}

long ex_min_hiding_block(int n_heads, int n_kv_heads, int head_dim,
                         double flops_per_s, double bytes_per_s)
{
    (void)n_heads; (void)n_kv_heads; (void)head_dim; (void)flops_per_s;
    (void)bytes_per_s;
    return -1;
}
