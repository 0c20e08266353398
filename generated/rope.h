/* rope.h: the public interface of librope, tangled from the rope book.
   Every chapter appends its types and declarations. */
#ifndef ROPE_H
#define ROPE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* types: chapters 1-5 */
/* chapter 1: the example of "cat chases dog" */
enum { ROPE_EX_VOCAB = 3, ROPE_EX_DMODEL = 8, ROPE_EX_DHEAD = 4 };
typedef struct rope_example {
    double emb[ROPE_EX_VOCAB * ROPE_EX_DMODEL]; /* [vocab, d_model] */
    double wq[ROPE_EX_DMODEL * ROPE_EX_DHEAD];  /* [d_model, d] */
    double wk[ROPE_EX_DMODEL * ROPE_EX_DHEAD];
    double wv[ROPE_EX_DMODEL * ROPE_EX_DHEAD];
} rope_example;
typedef enum {
    ROPE_SIMD_AUTO,    /* best the CPU has, or $ROPE_SIMD */
    ROPE_SIMD_SCALAR,  /* portable C */
    ROPE_SIMD_AVX2,    /* AVX2 + FMA, 8 floats per vector */
    ROPE_SIMD_AVX512   /* AVX-512F, 16 floats per vector */
} rope_simd;

typedef struct rope_attention_params {
    int batch, seq_len, kv_len;   /* seq_len <= kv_len */
    int n_heads, n_kv_heads;      /* n_heads % n_kv_heads == 0 */
    int head_dim;
    long start_pos;               /* S of (eq. positions) */
    int causal;                   /* 1: MiniMind's mask */
    const float *freqs_cos;       /* [table_len, head_dim] or NULL */
    const float *freqs_sin;       /*   (NULL: no RoPE) */
    long table_len;               /* >= start_pos + kv_len */
    rope_pairing pairing;
    int keys_rotated;             /* 1: k is a cache of rotated keys */
    int n_threads;                /* < 1 means 1 */
    rope_simd simd;
} rope_attention_params;
enum {
    ROPE_ATTENTION_BK = 64,       /* keys per tile */
    ROPE_ATTENTION_ROWS = 64,     /* rows (head, query) per block */
    ROPE_ATTENTION_SPLIT_MAX = 16 /* decode: most key ranges */
};
/* declarations: chapters 1-5 */
/* chapter 1: attention without positions */
uint64_t rope_splitmix64(uint64_t *state);
double rope_uniform(uint64_t *state);
double rope_gaussian(uint64_t *state);
void rope_matmul(const double *a, const double *b, double *c,
                 int n, int k, int m);
void rope_softmax_rows(double *s, int rows, int cols);
int rope_tiny_attention(const double *x, int n, int d_model, int d,
                        const double *wq, const double *wk,
                        const double *wv, double *out);
extern const char *const rope_example_words[ROPE_EX_VOCAB];
void rope_example_init(rope_example *ex, uint64_t seed);
void rope_embed(const rope_example *ex, const int *tokens, int n,
                double *x);
void rope_permute_rows(const double *x, const int *perm, int n, int d,
                       double *out);
int rope_catdog(uint64_t seed, double out_a[3 * ROPE_EX_DHEAD],
                double out_b[3 * ROPE_EX_DHEAD]);
void rope_add_integer_positions(double *x, int n, int d);
double rope_normalized_position(int t, int n);
void rope_add_normalized_positions(double *x, int n, int d);
double rope_norm(const double *x, int d);
double rope_cosine(const double *a, const double *b, int d);
enum { ROPE_BOOK_SEED = 2024 };
void rope_print_catdog(FILE *out, int latex);
void rope_print_integer(FILE *out, int latex);
void rope_print_normalized(FILE *out, int latex);
enum { ROPE_CH1_DMODEL = 768 };
#define ROPE_CH1_SIGMA 0.02
void rope_two_embeddings(double *a, double *b, int d, double sigma,
                         uint64_t seed);
double rope_cosine_at_position(const double *a, const double *b, int d,
                               double t);
void rope_attention_defaults(rope_attention_params *p);
int rope_attention_naive(float *out, const float *q, const float *k,
                         const float *v,
                         const rope_attention_params *p);
int rope_attention(float *out, const float *q, const float *k,
                   const float *v, const rope_attention_params *p);
size_t rope_attention_workspace_bytes(const rope_attention_params *p);
int rope_simd_available(rope_simd s);
rope_simd rope_simd_resolve(rope_simd want);
const char *rope_simd_name(rope_simd s);
int rope_simd_parse(const char *name, rope_simd *out);
void rope_exp2_vec(float *y, const float *x, int n, rope_simd s);
double rope_fma_peak(rope_simd s, int n_threads, double seconds);
double rope_triad_bandwidth(double seconds);
#endif
