/* 6.5 The interface */
/* ring.h: ring attention, the parts without MPI (chapter 6) */
#ifndef ROPE_RING_H
#define ROPE_RING_H
#include <stddef.h>
typedef enum {
    ROPE_RING_CONTIGUOUS, /* rank r: chunk r of P */
    ROPE_RING_ZIGZAG /* rank r: chunks r and 2P-1-r of 2P */
} rope_ring_layout;

typedef struct rope_ring_shard {
    int n_chunks; /* 1, or 2 for zigzag with P > 1 */
    int chunk[2]; /* global chunk indices, ascending */
    long start[2], len[2]; /* first token and tokens of each */
    long tokens; /* len[0] + len[1] */
} rope_ring_shard;

enum { ROPE_RING_SKIP, ROPE_RING_DIAGONAL, ROPE_RING_FULL };
/* W6.2 Work and the cost model */
typedef struct rope_ring_model {
    double n; /* tokens of the sequence */
    int n_heads, n_kv_heads, head_dim;
    double flops_per_s; /* eta: one rank's kernel speed */
    double bytes_per_s; /* nu: one link */
    double latency_s; /* T_lat: the fixed cost of one message */
} rope_ring_model;
/* 6.5 The interface */
int rope_ring_n_chunks(rope_ring_layout layout, int n_ranks);
long rope_ring_chunk_start(long n, int n_chunks, int c);
int rope_ring_shard_of(rope_ring_shard *s, rope_ring_layout layout,
                       int n_ranks, int rank, long n);
int rope_ring_block_kind(int q_chunk, int k_chunk, int causal);
void rope_ring_merge(double *o, double *lse, const float *o_b,
                     const float *lse_b, size_t rows, int head_dim);
double rope_ring_block_pairs(long n_q, long n_k, int kind);
double rope_ring_rank_pairs(rope_ring_layout layout, int n_ranks,
                            int rank, long n, int causal);
/* W6.2 Work and the cost model */
double rope_ring_model_layer(const rope_ring_model *m, int n_ranks,
                             double *compute_s, double *comm_s);
long rope_ring_model_min_block(const rope_ring_model *m);
void rope_ring_shard_copy(float *shard, float *full,
                          const rope_ring_shard *s, long batch, long n,
                          size_t width, int to_full);
/* 6.5 The interface */
#endif
