/* W8b.4 The code */
/* minimind-reference.h: MiniMind's forward in double, with a bound on
   the error of any float32 evaluation (workshop W8b) */
#ifndef ROPE_MINIMIND_REFERENCE_H
#define ROPE_MINIMIND_REFERENCE_H
#include <stddef.h>
#include "minimind.h"
typedef struct rope_minimind_ref_budget {
    double u; /* float32's unit roundoff, 2^-24 */
    double exp_rel; /* e^x, 2^x of a softmax: 4u */
    double rsqrt_rel; /* 1/sqrt(t): 2u */
    double silu_rel; /* g / (1 + e^-g): 6u */
    int tile; /* keys per tile of chapter 5's kernel: 64 */
} rope_minimind_ref_budget;
typedef struct rope_minimind_ref_stats {
    double max_rel; /* largest relative error entering an exponential */
    double min_margin; /* smallest route margin over its bound */
    long undecided; /* (token, layer) routes undecided */
    int first_undecided; /* first such token, or -1 */
} rope_minimind_ref_stats;
enum { ROPE_MINIMIND_REF_UNDECIDED = 1 };
void rope_minimind_ref_budget_default(rope_minimind_ref_budget *b);
int rope_minimind_reference(const rope_minimind *m, const int *ids, int n,
                            double *logits, double *bound);
int rope_minimind_reference_ex(const rope_minimind *m, const int *ids,
                               int n, const rope_minimind_ref_budget *b,
                               int n_threads, double *logits,
                               double *bound, rope_minimind_ref_stats *st);
int rope_minimind_reference_npy(const rope_minimind *m, const int *ids,
                                int n, int n_threads, const char *path,
                                char *err, size_t errlen);
int rope_minimind_reference_block(const rope_minimind *m, int layer,
                                  const float *x, int n, int n_threads,
                                  double *out, double *bound);
int rope_minimind_reference_block_norm(const rope_minimind *m, int layer,
                                       const float *x, int n,
                                       int n_threads, double *out,
                                       double *bound, double *norm);
double rope_minimind_ref_sigma(const float *w, int rows, int cols,
                               int n_threads);
int rope_minimind_reference_blocks_npy(const rope_minimind *m,
                                       const float *states, int n,
                                       int n_threads, const char *prefix,
                                       char *err, size_t errlen);
#endif
