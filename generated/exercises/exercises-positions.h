/* W1.5 The exercise files */
/* exercises-positions.h: the functions of chapter 1's exercises. */
#ifndef ROPE_EXERCISES_POSITIONS_H
#define ROPE_EXERCISES_POSITIONS_H
void ex_softmax(double *x, int n);
void ex_invert_permutation(const int *perm, int n, int *inv);
long ex_crossover_position(double embed_norm, int d_model);
void ex_attention_row(const double *q, const double *k,
                      const double *v, int n, int d, double *out);
void ex_permute_rows(const int *perm, const double *x, int n, int d,
                     double *out);
#endif
