/* A.5 Chapter 5: attention at the speed of the machine */
/* exercises-attention-solution.c: the book's answers to chapter 5. */
#include <math.h>
#include <string.h>
#include "exercises-attention.h"

float ex_online_logsumexp(const float *x, int n)
{
    float m = -INFINITY, l = 0;
    for (int j = 0; j < n; j++) {
        if (x[j] == -INFINITY)
            continue;
        if (x[j] > m) {
            l = l * expf(m - x[j]) + 1;
            m = x[j];
        } else {
            l += expf(x[j] - m);
        }
    }
    return m + logf(l);
}
void ex_merge_states(const float *a, const float *b, int d,
                     float *out)
{
    float m = a[0] > b[0] ? a[0] : b[0];
    float wa = a[0] == -INFINITY ? 0 : expf(a[0] - m);
    float wb = b[0] == -INFINITY ? 0 : expf(b[0] - m);
    out[0] = m;
    for (int c = 1; c < d + 2; c++) out[c] = wa * a[c] + wb * b[c];
}
int ex_tile_class(long q0, int bq, long j0, int bk, long n,
                  long n_kv, int causal)
{
    long q1 = (q0 + bq < n ? q0 + bq : n) - 1;
    long lo = causal ? n_kv - n + q0 : n_kv - 1;
    long hi = causal ? n_kv - n + q1 : n_kv - 1;
    if (j0 > hi) return 0;
    return j0 + bk - 1 <= lo ? 2 : 1;
}
double ex_causal_flops(long n, long n_kv, int d, int h)
{
    double pairs = (double)n * (n_kv - n) + 0.5 * (double)n * (n + 1);
    return 4.0 * d * h * pairs;
}
void ex_causal_mask_with_cache(long start_pos, int seq_len, float *mask)
{
    long n_kv = start_pos + seq_len;
    for (long i = 0; i < seq_len; i++)
        for (long j = 0; j < n_kv; j++)
            mask[i * n_kv + j] = j <= start_pos + i ? 0.0f : -INFINITY;
}
unsigned short ex_bf16_round(float x)
{
    unsigned int u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) return (unsigned short)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
