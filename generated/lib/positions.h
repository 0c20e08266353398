/* 1.1.1 The code */
/* positions.h: attention without positions (chapter 1) */
#ifndef ROPE_POSITIONS_H
#define ROPE_POSITIONS_H
#include <stdint.h>
/* 1.2.1 Two sentences with the same words */
/* chapter 1: the example of "cat chases dog" */
enum { ROPE_EX_VOCAB = 3, ROPE_EX_DMODEL = 8, ROPE_EX_DHEAD = 4 };
typedef struct rope_example {
    double emb[ROPE_EX_VOCAB * ROPE_EX_DMODEL]; /* [vocab, d_model] */
    double wq[ROPE_EX_DHEAD * ROPE_EX_DMODEL]; /* [d, d_model], as nn.Linear */
    double wk[ROPE_EX_DHEAD * ROPE_EX_DMODEL];
    double wv[ROPE_EX_DHEAD * ROPE_EX_DMODEL];
} rope_example;
/* 1.1.1 The code */
/* chapter 1: attention without positions */
void rope_softmax_rows(double *s, int rows, int cols);
int rope_tiny_attention(const double *x, int n, int d_model, int d,
                        const double *wq, const double *wk,
                        const double *wv, double *out);
/* 1.2.1 Two sentences with the same words */
extern const char *const rope_example_words[ROPE_EX_VOCAB];
void rope_example_init(rope_example *ex, uint64_t seed);
void rope_embed(const rope_example *ex, const int *tokens, int n,
                double *x);
void rope_permute_rows(const double *x, const int *perm, int n, int d,
                       double *out);
/* 1.2.2 Running it */
int rope_catdog(uint64_t seed, double out_a[3 * ROPE_EX_DHEAD],
                double out_b[3 * ROPE_EX_DHEAD]);
/* 1.3 Adding the integer position */
void rope_add_integer_positions(double *x, int n, int d);
double rope_normalized_position(int t, int n);
void rope_add_normalized_positions(double *x, int n, int d);
double rope_norm(const double *x, int d);
double rope_cosine(const double *a, const double *b, int d);
/* W1.1 The machinery of chapter 1 */
/* chapter 1's helpers: random numbers and matrix products */
uint64_t rope_splitmix64(uint64_t *state);
double rope_uniform(uint64_t *state);
double rope_gaussian(uint64_t *state);
void rope_matmul(const double *a, const double *b, double *c,
                 int n, int k, int m);
void rope_linear(const double *x, const double *w, double *y,
                 int n, int in, int out);
/* 1.1.1 The code */
#endif
