/* W7.9 A float32 MiniMind block and its backward */
/* evidence-f32.h: one MiniMind block in float32, forward and backward */
#ifndef ROPE_EVIDENCE_F32_H
#define ROPE_EVIDENCE_F32_H
#include <stddef.h>
enum {
    ROPE_F32_BR = 16, /* query rows of a tile of the attention backward */
    ROPE_F32_BK = 16 /* keys of a tile of the attention backward */
};
typedef struct rope_f32_shape {
    int batch, seq_len; /* N_batch and N: the block sees batch * seq_len rows */
    int hidden_size; /* d_model */
    int num_attention_heads, num_key_value_heads; /* h, h_kv */
    int head_dim; /* d (MiniMind: hidden_size / num_attention_heads) */
    int intermediate_size; /* d_ff */
    float rms_norm_eps; /* eps of all four RMSNorms */
    int n_threads; /* threads of chapter 5's kernel (< 1: one) */
} rope_f32_shape;

typedef struct rope_f32_layout { /* offsets into the block's weights */
    size_t input_layernorm, q_proj, k_proj, v_proj, o_proj, q_norm, k_norm,
        post_attention_layernorm, gate_proj, up_proj, down_proj;
    size_t n; /* floats of the block's weights */
} rope_f32_layout;

typedef struct rope_f32_acts { /* what the forward keeps; R = batch * seq_len */
    float *x; /* [R, d_model] the block's input */
    float *inv1; /* [R] 1/rms of input_layernorm */
    float *xn1; /* [R, d_model] input_layernorm's output */
    float *q_raw, *k_raw; /* [R, h, d], [R, h_kv, d] projections */
    float *inv_q, *inv_k; /* [R, h], [R, h_kv] 1/rms of q_norm, k_norm */
    float *q, *k, *v; /* [R, h, d], [R, h_kv, d] x2: normed, rotated */
    float *o; /* [R, h, d] attention output */
    float *lse; /* [R, h] log-sum-exp of each row (Lambda) */
    float *xm; /* [R, d_model] after the first residual */
    float *inv2; /* [R] 1/rms of post_attention_layernorm */
    float *xn2; /* [R, d_model] its output */
    float *gate, *up, *hid; /* [R, d_ff] gate_proj, up_proj, silu(g) * u */
} rope_f32_acts;
int rope_f32_check_shape(const rope_f32_shape *s);
rope_f32_layout rope_f32_block_layout(const rope_f32_shape *s);
size_t rope_f32_acts_len(const rope_f32_shape *s);
void rope_f32_acts_bind(const rope_f32_shape *s, float *buf,
                        rope_f32_acts *a);
size_t rope_f32_work_len(const rope_f32_shape *s);
void rope_f32_linear(const float *x, const float *w, float *y, int rows,
                     int in, int out);
void rope_f32_axpy(float *y, float a, const float *w, int n);
int rope_f32_linear_fast(const float *x, const float *w, float *y, int rows,
                         int in, int out);
void rope_f32_linear_backward(const float *x, const float *w,
                              const float *dy, float *dx, float *dw,
                              int rows, int in, int out);
void rope_f32_rmsnorm(const float *x, const float *w, float *y, float *inv,
                      int rows, int dim, float eps);
void rope_f32_rmsnorm_backward(const float *x, const float *w,
                               const float *inv, const float *dy, float *dx,
                               float *dw, int rows, int dim);
void rope_f32_rotary_backward(float *dx, const float *freqs_cos,
                              const float *freqs_sin, int batch,
                              int seq_len, int n_heads, int head_dim);
int rope_f32_attention(float *o, float *lse, const float *q, const float *k,
                       const float *v, int batch, int seq_len, int n_heads,
                       int n_kv_heads, int head_dim, int n_threads);
size_t rope_f32_attention_work_len(int batch, int seq_len, int n_heads,
                                   int head_dim);
void rope_f32_attention_backward(const float *q, const float *k,
                                 const float *v, const float *o,
                                 const float *lse, const float *dout,
                                 float *dq, float *dk, float *dv,
                                 float *work, int batch, int seq_len,
                                 int n_heads, int n_kv_heads, int head_dim);
void rope_f32_swiglu(const float *g, const float *u, float *hid, size_t n);
void rope_f32_swiglu_backward(const float *g, const float *u,
                              const float *dhid, float *dg, float *du,
                              size_t n);
void rope_f32_embed(const int *tokens, const float *emb, float *x, int rows,
                    int dim);
void rope_f32_embed_backward(const int *tokens, const float *dx,
                             float *demb, int rows, int dim);
double rope_f32_head_loss(const float *xf, const float *emb,
                          const int *targets, int rows, int vocab, int dim,
                          float *logits, float *dxf, float *demb);
int rope_f32_block_forward(const rope_f32_shape *s, const float *w, float *x,
                           const float *freqs_cos, const float *freqs_sin,
                           const rope_f32_acts *a);
void rope_f32_block_backward(const rope_f32_shape *s, const float *w,
                             const rope_f32_acts *a, float *dx, float *dw,
                             const float *freqs_cos, const float *freqs_sin,
                             float *work);
#endif
