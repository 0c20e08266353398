/* rope.h: the public interface of librope, tangled from the rope book.
   Every chapter appends its types and declarations. */
#ifndef ROPE_H
#define ROPE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* types, chapter by chapter */
/* chapter 1: the example of "cat chases dog" */
enum { ROPE_EX_VOCAB = 3, ROPE_EX_DMODEL = 8, ROPE_EX_DHEAD = 4 };
typedef struct rope_example {
    double emb[ROPE_EX_VOCAB * ROPE_EX_DMODEL]; /* [vocab, d_model] */
    double wq[ROPE_EX_DMODEL * ROPE_EX_DHEAD]; /* [d_model, d] */
    double wk[ROPE_EX_DMODEL * ROPE_EX_DHEAD];
    double wv[ROPE_EX_DMODEL * ROPE_EX_DHEAD];
} rope_example;
/* chapter 2: pi, and the errors of the sinusoidal encoding */
#define ROPE_PE_PI 3.14159265358979323846
enum {
    ROPE_PE_OK = 0,
    ROPE_PE_EDMODEL = 1, /* d_model odd or not positive */
    ROPE_PE_EBASE = 2, /* base not finite or not > 1 */
    ROPE_PE_ELEN = 3 /* negative number of positions */
};
/* chapter 3: rotary position embeddings */
typedef enum {
    ROPE_PAIRING_HALF, ROPE_PAIRING_INTERLEAVED
} rope_pairing;
typedef enum {
    ROPE_PRECISION_FLOAT, ROPE_PRECISION_DOUBLE
} rope_precision;
/* positions t < 2^24 are exact in float32; tables stop there */
#define ROPE_MAX_POSITION 16777216L
typedef enum {
    ROPE_SCALING_DEFAULT, /* "default": plain RoPE */
    ROPE_SCALING_LINEAR, /* "linear": position interpolation */
    ROPE_SCALING_DYNAMIC, /* "dynamic": dynamic NTK */
    ROPE_SCALING_YARN, /* "yarn": NTK-by-parts + temperature */
    ROPE_SCALING_LLAMA3, /* "llama3": wavelength bands */
    ROPE_SCALING_LONGROPE /* "longrope": per-pair factors */
} rope_scaling_type;

typedef enum {
    ROPE_YARN_HF, /* Hugging Face _compute_yarn_parameters */
    ROPE_YARN_MINIMIND /* MiniMind precompute_freqs_cis */
} rope_yarn_flavor;
typedef struct rope_scaling {
    rope_scaling_type rope_type;
    rope_yarn_flavor yarn_flavor;
    double factor; /* s */
    long original_max_position_embeddings; /* L, training length */
    long max_position_embeddings; /* M, extended length */
    long seq_len; /* N, current length */
    double beta_fast, beta_slow; /* YaRN turn counts */
    double attention_factor; /* multiplies cos, sin */
    double mscale, mscale_all_dim; /* DeepSeek-style YaRN */
    int truncate; /* 1: floor/ceil range */
    double low_freq_factor, high_freq_factor; /* llama3 */
    const double *short_factor, *long_factor; /* longrope */
    int n_short_factor, n_long_factor;
} rope_scaling;
typedef enum {
    ROPE_SCALING_OK, ROPE_SCALING_EHEAD_DIM,
    ROPE_SCALING_EFACTOR, ROPE_SCALING_ENOFACTOR,
    ROPE_SCALING_ENOORIGINAL, ROPE_SCALING_ENOLENGTH,
    ROPE_SCALING_EBETA, ROPE_SCALING_EFREQ,
    ROPE_SCALING_ELIST, ROPE_SCALING_EATTENTION,
    ROPE_SCALING_ETYPE
} rope_scaling_error;
typedef enum {
    ROPE_SIMD_AUTO, /* best the CPU has, or $ROPE_SIMD */
    ROPE_SIMD_SCALAR, /* portable C */
    ROPE_SIMD_AVX2, /* AVX2 + FMA, 8 floats per vector */
    ROPE_SIMD_AVX512 /* AVX-512F, 16 floats per vector */
} rope_simd;

typedef enum {
    ROPE_DTYPE_F32, /* float32 throughout */
    ROPE_DTYPE_BF16 /* K, V (and Q) rounded to bfloat16 */
} rope_dtype;

typedef struct rope_attention_params {
    int batch, seq_len, kv_len; /* seq_len <= kv_len */
    int n_heads, n_kv_heads; /* n_heads % n_kv_heads == 0 */
    int head_dim;
    long start_pos; /* S: key j sits at S + j */
    int causal; /* 1: MiniMind's mask */
    const float *freqs_cos; /* [table_len, head_dim] or NULL */
    const float *freqs_sin; /* (NULL: no RoPE) */
    long table_len; /* >= start_pos + kv_len */
    rope_pairing pairing;
    int keys_rotated; /* 1: k is a cache of rotated keys */
    int n_threads; /* < 1 means 1 */
    rope_simd simd;
    float *lse; /* out or NULL: [batch, seq_len, n_heads] */
    void (*progress)(void *ctx, long done, long total); /* or NULL */
    void *progress_ctx;
    rope_dtype kv_dtype; /* ROPE_DTYPE_F32 (0) or ROPE_DTYPE_BF16 */
} rope_attention_params;
enum {
    ROPE_ATTENTION_ENOMEM = 7, /* an allocation failed */
    ROPE_ATTENTION_ENONFINITE = 8 /* an output is inf or NaN */
};
enum {
    ROPE_ATTENTION_BK = 64, /* keys per tile */
    ROPE_ATTENTION_ROWS = 64, /* rows (head, query) per block */
    ROPE_ATTENTION_SPLIT_MAX = 16, /* decode: most key ranges */
    ROPE_ATTENTION_ITEM_BLOCKS = 16, /* prefill: row blocks per item */
    ROPE_ATTENTION_MAX_HEAD_DIM = 1024, /* widest head it tiles */
    ROPE_ATTENTION_WS_MIB = 32, /* all threads' workspaces, at most */
    ROPE_ATTENTION_PART_MIB = 16 /* decode partial states, at most */
};
typedef struct rope_kv_cache {
    int batch, n_kv_heads, head_dim, dp; /* dp: head_dim padded to 16 */
    long len, cap; /* keys held and room for, per head */
    float *tiles; /* [cap / BK][batch * n_kv_heads][K^T, V][dp * BK] */
} rope_kv_cache;
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
#define ROPE_NPY_MAX_NDIM 8
typedef struct rope_npy {
    int ndim;
    long shape[ROPE_NPY_MAX_NDIM];
    size_t count; /* product of the shape */
    float *data; /* count floats, C order; free with rope_npy_free */
} rope_npy;
#define CLI_MAX_HALF 2048 /* longest factor list the CLI stores */
typedef struct rope_ring_model {
    double n; /* tokens of the sequence */
    int n_heads, n_kv_heads, head_dim;
    double flops_per_s; /* sigma: one rank's kernel speed */
    double bytes_per_s; /* beta: one link */
} rope_ring_model;
/* chapter 7: a tiny MiniMind-shaped model */
typedef enum {
    ROPE_EV_NOPE, /* no position information at all */
    ROPE_EV_SINUSOIDAL, /* chapter 2's table added to the embeddings */
    ROPE_EV_ROPE /* chapter 3's rotation of q and k */
} rope_ev_pe;
typedef enum {
    ROPE_EV_COPY, /* a random half, repeated: predict the copy */
    ROPE_EV_LAG /* output the token ROPE_EV_LAG_K places back */
} rope_ev_task;
enum { ROPE_EV_LAG_K = 5 };
typedef enum {
    ROPE_EV_PLAIN, ROPE_EV_PI, ROPE_EV_NTK, ROPE_EV_DYNAMIC,
    ROPE_EV_YARN_MINIMIND, ROPE_EV_YARN_HF
} rope_ev_method;
typedef struct rope_ev_config {
    int vocab_size, hidden_size, num_hidden_layers;
    int num_attention_heads, num_key_value_heads;
    int intermediate_size;
    rope_ev_pe pe;
    double rope_theta, rms_norm_eps;
} rope_ev_config;
typedef struct rope_ev_model {
    rope_ev_config c;
    int head_dim;
    size_t n_params;
    double *params, *grads; /* n_params each */
    double *adam_m, *adam_v; /* AdamW's moments */
    long step; /* AdamW steps taken */
    double *ws; /* activations of the last forward pass */
    size_t ws_len;
} rope_ev_model;
enum { ROPE_EV_MAX_LEN = 1024 }; /* longest sequence of chapter 7 */
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
/* chapter 2: the sinusoidal position encoding */
int rope_pe_check(int d_model, double base);
double rope_pe_omega(int i, int d_model, double base);
int rope_pe_row(double *row, long t, int d_model, double base);
int rope_pe_table(double *pe, long seq_len, int d_model, double base);
int rope_pe_table_float(float *pe, long seq_len, int d_model,
                        float base);
void rope_pe_rotation(double m[4], double omega, long k);
double rope_pe_dot(long m, long n, int d_model, double base);
double rope_pe_offset_dot(long k, int d_model, double base);
int rope_pe_score_terms(const double *x, const double *pe,
                        const double *wq, const double *wk, int n,
                        int d_model, int d, double *s, double *terms);
double rope_pe_wavelength(int i, int d_model, double base);
double rope_pe_half_turn(int i, int d_model, double base);
int rope_pe_print_rows(FILE *out, const long *positions, size_t n,
                       int d_model, double base);
void rope_pe_draw_example(uint64_t seed, int n, int d_model, int d,
                          double *x, double *wq, double *wk);
double rope_pe_rms(const double *a, size_t len);
/* chapter 3: rotary position embeddings */
void rope_default_inv_freq(float *inv_freq, int head_dim,
                           double rope_base);
int rope_freqs_cis_from_inv_freq(float *freqs_cos, float *freqs_sin,
        const float *inv_freq, int head_dim, long start, long end,
        double attention_factor, rope_precision precision);
int rope_precompute_freqs_cis(float *freqs_cos, float *freqs_sin,
        int head_dim, long end, double rope_base,
        rope_precision precision);
void rope_rotate_half(const float *x, float *out, int head_dim);
void rope_apply_rotary_pos_emb(float *q, float *k,
        const float *freqs_cos, const float *freqs_sin,
        int batch, int seq_len, int n_heads, int n_kv_heads,
        int head_dim, long start_pos, rope_pairing pairing);
void rope_pairing_permutation(int *perm, int head_dim);
double rope_angle(long t, float inv_freq, rope_precision precision);
double rope_decay_average(int head_dim, double rope_base, double r);
void rope_scaling_defaults(rope_scaling *s);
int rope_scaling_check(const rope_scaling *s, int head_dim);
const char *rope_scaling_strerror(int err);
int rope_count_full_turns(const float *inv_freq, int head_dim,
                          long length);
double rope_ntk_aware_base(double rope_base, double factor,
                           int head_dim);
double rope_dynamic_factor(double factor, long seq_len,
                           long original);
double rope_yarn_correction_dim(double num_rotations, int head_dim,
                                double rope_base, long original);
int rope_yarn_range(double *low, double *high, int head_dim,
                    double rope_base, const rope_scaling *s);
int rope_yarn_ramp(float *ramp, int head_dim, double rope_base,
                   const rope_scaling *s);
double rope_yarn_get_mscale(double scale, double mscale);
double rope_yarn_clamp_threshold(int head_dim, double rope_base,
                                 double beta_slow);
int rope_compute_inv_freq(float *inv_freq, double *attention_factor,
                          int head_dim, double rope_base,
                          const rope_scaling *s);
int rope_precompute_freqs_cis_scaled(float *freqs_cos, float *freqs_sin,
                                     int head_dim, long end,
                                     double rope_base,
                                     const rope_scaling *s,
                                     rope_precision precision);
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
int rope_repeat_kv(float *out, const float *x, int batch, int seq_len,
                   int n_kv_heads, int head_dim, int n_rep);
int rope_kv_cache_init(rope_kv_cache *c, int batch, int n_kv_heads,
                       int head_dim, long capacity);
int rope_kv_cache_append(rope_kv_cache *c, const float *k,
                         const float *v, int n,
                         const rope_attention_params *p);
int rope_attention_cached(float *out, const float *q,
                          const rope_kv_cache *c,
                          const rope_attention_params *p);
void rope_kv_cache_free(rope_kv_cache *c);
long rope_attention_allocations(void);
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
/* chapter 1's tables and their helpers (workshop W1) */
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
int rope_npy_parse(const unsigned char *buf, size_t n, rope_npy *a,
                   char *err, size_t errlen);
int rope_npy_read(const char *path, rope_npy *a, char *err,
                  size_t errlen);
int rope_npy_write(const char *path, const float *data, int ndim,
                   const long *shape, char *err, size_t errlen);
void rope_npy_free(rope_npy *a);
double rope_exp2_poly_bound(void); /* bound of eq. attention-exp2 */
enum { ROPE_TUNE_STEP, ROPE_TUNE_TAYLOR, ROPE_TUNE_ITEM_BLOCKS,
       ROPE_TUNE_ROWS, ROPE_TUNE_PACK, ROPE_TUNE_REDUCE, ROPE_TUNE_SIX,
       ROPE_TUNE_PREFETCH, ROPE_TUNE_SPIN };
int rope_attention_tune(int knob, int value); /* measurements only */
const char *rope_bf16_kernels(rope_simd s);
int rope_bf16_native(rope_simd s);
uint16_t rope_bf16_round(float x);
float rope_bf16_to_float(uint16_t h);
int rope_bf16_round_native(uint16_t *out, const float *x, int n);
int rope_bf16_dot(float *z, const uint32_t *a, const uint32_t *b,
                  int n, int how);
int rope_bf16_amx(rope_simd s);
int rope_bf16_amx_dot(float *z, const uint16_t *a, const uint16_t *b,
                      int n);
double rope_bf16_amx_peak(double seconds);
double rope_bf16_amx_error(long lanes, uint64_t seed);
int rope_bf16_amx_probe(int which, double *got, double *want,
                        double *mag);
double rope_bf16_dot_peak(double seconds);
double rope_bf16_error_bound(int head_dim, long kv_len, double qk,
                             double vmax);
enum { ROPE_ATTENTION_PACK_MIB = 32 }; /* packed tiles of a prefill */
#define ROPE_ATTENTION_SPIN_NS 1000000L /* pool threads spin, then sleep */
double rope_fma_round_flops(rope_simd s); /* one round, one thread */
double rope_fma_load_share(rope_simd s, double seconds);
double rope_ring_model_layer(const rope_ring_model *m, int n_ranks,
                             double *compute_s, double *comm_s);
long rope_ring_model_min_block(const rope_ring_model *m);
void rope_ring_shard_copy(float *shard, float *full,
                          const rope_ring_shard *s, long batch, long n,
                          size_t width, int to_full);
/* chapter 7: a tiny MiniMind-shaped model and its training */
void rope_ev_config_default(rope_ev_config *c, rope_ev_pe pe);
int rope_ev_init(rope_ev_model *m, const rope_ev_config *c,
                 uint64_t seed);
void rope_ev_free(rope_ev_model *m);
void rope_ev_linear(const double *x, const double *w, double *y,
                    int rows, int in, int out);
void rope_ev_linear_backward(const double *x, const double *w,
                             const double *dy, double *dx, double *dw,
                             int rows, int in, int out);
void rope_ev_rmsnorm(const double *x, const double *w, double *y,
                     double *inv, int rows, int dim, double eps);
void rope_ev_rmsnorm_backward(const double *x, const double *w,
                              const double *inv, const double *dy,
                              double *dx, double *dw, int rows, int dim);
void rope_ev_rotary(double *x, const double *cos_t, const double *sin_t,
                    int batch, int seq_len, int n_heads, int head_dim,
                    int transpose);
void rope_ev_attention(const double *q, const double *k, const double *v,
                       double *p, double *o, int batch, int seq_len,
                       int n_heads, int n_kv_heads, int head_dim);
void rope_ev_attention_backward(const double *q, const double *k,
                                const double *v, const double *p,
                                const double *dout, double *dq,
                                double *dk, double *dv, int batch,
                                int seq_len, int n_heads, int n_kv_heads,
                                int head_dim);
void rope_ev_swiglu(const double *g, const double *u, double *h,
                    size_t n);
void rope_ev_swiglu_backward(const double *g, const double *u,
                             const double *dh, double *dg, double *du,
                             size_t n);
double rope_ev_cross_entropy(const double *logits, const int *targets,
                             int rows, int vocab, double *dlogits,
                             long *correct, long *counted);
double rope_ev_forward(rope_ev_model *m, const int *tokens,
                       const int *targets, int batch, int seq_len,
                       const double *cos_t, const double *sin_t,
                       int backward, long *correct, long *counted);
double rope_ev_adamw_step(rope_ev_model *m, double lr, double clip);
double rope_ev_lr(double lr, long step, long total);
void rope_ev_batch(rope_ev_task task, uint64_t *state, int *tokens,
                   int *targets, int batch, int seq_len, int vocab);
int rope_ev_tables(double *cos_t, double *sin_t, int head_dim, long n,
                   double rope_theta, rope_ev_method method,
                   double factor, long original);
int rope_ev_train(rope_ev_model *m, rope_ev_task task, int seq_len,
                  int batch, long steps, double lr, uint64_t seed,
                  rope_ev_method method, double factor, long original,
                  FILE *progress, double *losses);
int rope_ev_evaluate(rope_ev_model *m, rope_ev_task task, int seq_len,
                     int n_seqs, uint64_t seed, rope_ev_method method,
                     double factor, long original, double *accuracy,
                     double *loss);
#endif
