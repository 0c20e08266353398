/* bench-machine.h: measurements of the machine (the peak of its FMA
   units, its memory bandwidth, its bfloat16 instructions) */
#ifndef ROPE_BENCH_MACHINE_H
#define ROPE_BENCH_MACHINE_H
#include <stdint.h>
#include "attention.h"
double rope_fma_peak(rope_simd s, int n_threads, double seconds);
double rope_triad_bandwidth(double seconds);
double rope_bf16_amx_peak(double seconds);
double rope_bf16_amx_error(long lanes, uint64_t seed);
int rope_bf16_amx_probe(int which, double *got, double *want,
                        double *mag);
double rope_bf16_dot_peak(double seconds);
double rope_fma_round_flops(rope_simd s); /* one round, one thread */
double rope_fma_load_share(rope_simd s, double seconds);
#endif
