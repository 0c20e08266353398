/* 6.5 The interface */
/* ring-mpi.h: ring attention over MPI (chapter 6). */
#ifndef ROPE_RING_MPI_H
#define ROPE_RING_MPI_H
#include <mpi.h>
#include "attention.h"
#include "ring.h"

typedef struct rope_ring_stats {
    double rotate_s; /* rotating the shard once */
    double compute_s; /* kernel calls and merges, all steps */
    double wait_s; /* in MPI_Waitall after the compute of a step */
    double pairs; /* visible (query, key) pairs computed */
    int steps;
} rope_ring_stats;

enum {
    ROPE_RING_OK, ROPE_RING_EARGS, ROPE_RING_ESHORT,
    ROPE_RING_EMISMATCH, ROPE_RING_ENOMEM, ROPE_RING_EKERNEL,
    ROPE_RING_ENONFINITE
};

int rope_ring_attention(float *out, const float *q, const float *k,
                        const float *v, const rope_attention_params *p,
                        rope_ring_layout layout, MPI_Comm comm,
                        rope_ring_stats *stats);
const char *rope_ring_strerror(int code);
#endif
