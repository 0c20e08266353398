/* W8.1 The rest of the library */
/* minimind.h: chapter 8: MiniMind's whole model in C */
#ifndef ROPE_MINIMIND_H
#define ROPE_MINIMIND_H
#include <stddef.h>
#include <stdint.h>
#include "attention.h"
#include "scaling.h"
/* 8.1 The model at a glance */
typedef struct rope_minimind_config { /* MiniMindConfig's fields */
    int hidden_size; /* 768 */
    int num_hidden_layers; /* 8 */
    int num_attention_heads; /* 8 */
    int num_key_value_heads; /* 4 */
    int head_dim; /* hidden_size / num_attention_heads: 96 */
    int intermediate_size; /* ceil(hidden_size pi / 64) 64: 2432 */
    int vocab_size; /* 6400 */
    long max_position_embeddings; /* 32768: rows of the RoPE tables */
    double rope_theta; /* 1e6 */
    double rms_norm_eps; /* 1e-6 */
    int use_moe; /* 0: FeedForward, 1: MOEFeedForward */
    int num_experts; /* 4 */
    int num_experts_per_tok; /* 1 */
    int moe_intermediate_size; /* intermediate_size */
    int norm_topk_prob; /* 1 */
    int inference_rope_scaling; /* 0; 1: YaRN, factor 16 over 2048 */
} rope_minimind_config;
/* 8.2 The weights */
enum { ROPE_MINIMIND_NAME = 96 }; /* longest tensor name, with its NUL */
typedef struct rope_minimind_tensor { /* one tensor, in file order */
    char name[ROPE_MINIMIND_NAME]; /* MiniMind's state-dict key */
    int ndim; /* 1 or 2 */
    long shape[2]; /* [out, in] for a weight of nn.Linear */
    size_t offset; /* floats from the start of the weights */
} rope_minimind_tensor;
typedef struct rope_minimind_ffn { /* FeedForward: [out, in] each */
    const float *gate_proj, *up_proj, *down_proj;
} rope_minimind_ffn;
typedef struct rope_minimind_layer { /* one MiniMindBlock */
    const float *input_layernorm; /* [hidden_size] */
    const float *q_proj, *k_proj, *v_proj, *o_proj;
    const float *q_norm, *k_norm; /* [head_dim] */
    const float *post_attention_layernorm; /* [hidden_size] */
    rope_minimind_ffn mlp; /* FeedForward (use_moe 0) */
    const float *gate; /* MOEFeedForward: [num_experts, hidden_size] */
    rope_minimind_ffn *experts; /* [num_experts] */
} rope_minimind_layer;
typedef struct rope_minimind {
    rope_minimind_config config;
    const float *embed_tokens; /* [vocab_size, hidden_size]: lm_head too */
    rope_minimind_layer *layers; /* [num_hidden_layers] */
    const float *norm; /* [hidden_size] */
    float *freqs_cos, *freqs_sin; /* [max_position_embeddings, head_dim] */
    void *map; /* the mapped file (minimind-file.c), or NULL */
    size_t map_bytes;
} rope_minimind;
/* W8.1 The rest of the library */
typedef void (*rope_minimind_hook)(void *ctx, int layer, long pos,
                                   float *x, int n, int hidden_size);
typedef struct rope_minimind_state {
    int max_rows; /* most tokens of one forward call */
    int n_threads;
    long pos; /* tokens in the caches: the next token's position */
    rope_kv_cache *cache; /* [num_hidden_layers] rotated keys, values */
    int n_layers; /* caches held */
    float *x, *xn, *q, *k, *v, *o; /* work: one call's activations */
    float *gate, *up, *y; /* the feed-forward's */
    float *xe, *ye, *probs, *sel; /* MoE: one expert's rows, the router */
    int *rows; /* MoE: the rows routed to one expert */
    rope_minimind_hook hook; /* or NULL: sees each block's input */
    void *hook_ctx;
} rope_minimind_state;
enum { /* errors of rope_minimind_forward besides chapter 5's */
    ROPE_MINIMIND_EROWS = 20, /* n < 1 or n > max_rows */
    ROPE_MINIMIND_ELENGTH = 21, /* past max_position_embeddings */
    ROPE_MINIMIND_ETOKEN = 22 /* an id outside [0, vocab_size) */
};
typedef struct rope_minimind_sampler {
    double temperature; /* <= 0: greedy (the first largest logit) */
    double top_p; /* 1: off */
    int top_k; /* 0: off */
    uint64_t rng; /* the sampler's state: the seed */
} rope_minimind_sampler;
void rope_minimind_config_defaults(rope_minimind_config *c);
void rope_minimind_rope_scaling(const rope_minimind_config *c,
                                rope_scaling *s);
int rope_minimind_check_config(const rope_minimind_config *c, char *why,
                               size_t n);
int rope_minimind_tensor_list(const rope_minimind_config *c,
                              rope_minimind_tensor *t);
size_t rope_minimind_n_floats(const rope_minimind_config *c);
int rope_minimind_bind(rope_minimind *m, const rope_minimind_config *c,
                       const float *data);
void rope_minimind_free(rope_minimind *m);
int rope_minimind_state_init(rope_minimind_state *s, const rope_minimind *m,
                             int max_rows, int n_threads);
void rope_minimind_state_reset(rope_minimind_state *s);
void rope_minimind_state_free(rope_minimind_state *s);
int rope_minimind_forward(const rope_minimind *m, rope_minimind_state *s,
                          const int *input_ids, int n, float *logits,
                          int all_logits);
void rope_minimind_rmsnorm(float *y, const float *x, const float *w,
                           int rows, int dim, double eps);
void rope_minimind_linear(float *y, const float *x, const float *w,
                          int rows, int in, int out, int n_threads);
int rope_minimind_sample(const float *logits, int vocab,
                         rope_minimind_sampler *sp);
/* the weight file (workshop W8) */
int rope_minimind_load(rope_minimind *m, const char *path, char *err,
                       size_t errlen);
int rope_minimind_save(const char *path, const rope_minimind_config *c,
                       const float *data, char *err, size_t errlen);
/* W8c.6 The entry points */
/* W8c: rope_minimind_linear on a named path (ROPE_SIMD_AUTO: the best
   the processor has, or $ROPE_SIMD) */
void rope_minimind_linear_simd(float *y, const float *x, const float *w,
                               int rows, int in, int out, int n_threads,
                               rope_simd simd);
/* W8.1 The rest of the library */
#endif
