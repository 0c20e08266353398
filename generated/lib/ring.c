/* 6.6 Chunks, shards and the merge */
/* ring.c: the MPI-free half of ring attention (chapter 6): layouts,
   shards, kinds of blocks, the merge and the cost model. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "ring.h"

int rope_ring_n_chunks(rope_ring_layout layout, int n_ranks)
{
    return layout == ROPE_RING_ZIGZAG && n_ranks > 1 ? 2 * n_ranks
                                                     : n_ranks;
}

long rope_ring_chunk_start(long n, int n_chunks, int c)
{
    long base = n / n_chunks, extra = n % n_chunks;
    return c * base + (c < extra ? c : extra);
}
int rope_ring_shard_of(rope_ring_shard *s, rope_ring_layout layout,
                       int n_ranks, int rank, long n)
{
    int K = rope_ring_n_chunks(layout, n_ranks);
    if (n_ranks < 1 || rank < 0 || rank >= n_ranks || n < K)
        return 1;
    s->n_chunks = K > n_ranks ? 2 : 1;
    s->chunk[0] = rank;
    s->chunk[1] = s->n_chunks == 2 ? K - 1 - rank : -1;
    s->start[1] = s->len[1] = s->tokens = 0;
    for (int i = 0; i < s->n_chunks; i++) {
        s->start[i] = rope_ring_chunk_start(n, K, s->chunk[i]);
        s->len[i] = rope_ring_chunk_start(n, K, s->chunk[i] + 1)
                    - s->start[i];
        s->tokens += s->len[i];
    }
    return 0;
}
int rope_ring_block_kind(int q_chunk, int k_chunk, int causal)
{
    if (!causal || k_chunk < q_chunk)
        return ROPE_RING_FULL;
    return k_chunk == q_chunk ? ROPE_RING_DIAGONAL : ROPE_RING_SKIP;
}
void rope_ring_merge(double *o, double *lse, const float *o_b,
                     const float *lse_b, size_t rows, int head_dim)
{
    size_t d = (size_t)head_dim;
    for (size_t r = 0; r < rows; r++) {
        double la = lse[r], lb = lse_b[r];
        if (lb == -INFINITY)
            continue;
        double hi = la > lb ? la : lb, lo = la > lb ? lb : la;
        double l = hi + log1p(exp(lo - hi));
        double wa = exp(la - l), wb = exp(lb - l);
        for (size_t c = 0; c < d; c++)
            o[r * d + c] = wa * o[r * d + c] + wb * (double)o_b[r * d + c];
        lse[r] = l;
    }
}
/* W6.2 Work and the cost model */
double rope_ring_block_pairs(long n_q, long n_k, int kind)
{
    if (kind == ROPE_RING_FULL)
        return (double)n_q * (double)n_k;
    return kind == ROPE_RING_DIAGONAL ? 0.5 * n_q * (n_q + 1.0) : 0.0;
}

double rope_ring_rank_pairs(rope_ring_layout layout, int n_ranks,
                            int rank, long n, int causal)
{
    rope_ring_shard me, kv;
    double sum = 0;
    if (rope_ring_shard_of(&me, layout, n_ranks, rank, n))
        return -1;
    for (int o = 0; o < n_ranks; o++) {
        rope_ring_shard_of(&kv, layout, n_ranks, o, n);
        for (int a = 0; a < me.n_chunks; a++)
            for (int b = 0; b < kv.n_chunks; b++)
                sum += rope_ring_block_pairs(me.len[a], kv.len[b],
                    rope_ring_block_kind(me.chunk[a], kv.chunk[b], causal));
    }
    return sum;
}
double rope_ring_model_layer(const rope_ring_model *m, int n_ranks,
                             double *compute_s, double *comm_s)
{
    double c = 2.0 * m->n_heads * m->head_dim * m->n * m->n
               / (n_ranks * m->flops_per_s);
    double t = 8.0 * m->n * m->n_kv_heads * m->head_dim / m->bytes_per_s
               + n_ranks * m->latency_s;
    if (compute_s != NULL) *compute_s = c;
    if (comm_s != NULL) *comm_s = t;
    return c > t ? c : t;
}

long rope_ring_model_min_block(const rope_ring_model *m)
{
    double a = 2.0 * m->n_heads * m->head_dim / m->flops_per_s;
    double b = 8.0 * m->n_kv_heads * m->head_dim / m->bytes_per_s;
    long c = (long)ceil((b + sqrt(b * b + 4 * a * m->latency_s)) / (2 * a));
    while (c > 1 && a * (c - 1.0) * (c - 1.0) >= b * (c - 1.0) + m->latency_s)
        c--; /* the root may round up past an exact whole number */
    return c;
}
void rope_ring_shard_copy(float *shard, float *full,
                          const rope_ring_shard *s, long batch, long n,
                          size_t width, int to_full)
{
    size_t at = 0;
    for (int c = 0; c < s->n_chunks; c++)
        for (long b = 0; b < batch; b++) {
            float *f = full + ((size_t)b * n + s->start[c]) * width;
            size_t len = (size_t)s->len[c] * width;
            if (to_full)
                memcpy(f, shard + at, sizeof(float) * len);
            else
                memcpy(shard + at, f, sizeof(float) * len);
            at += len;
        }
}
