/* 7.2 The model */
/* evidence.h: a tiny MiniMind-shaped model (chapter 7) */
#ifndef ROPE_EVIDENCE_H
#define ROPE_EVIDENCE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
/* W7.1 The model's plumbing */
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
enum { ROPE_EV_EDIVERGED = 1, ROPE_EV_ENOMEM = 2, ROPE_EV_ETABLES = 3 };
enum { ROPE_EV_MAX_LEN = 1024 }; /* longest sequence of chapter 7 */
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
size_t rope_ev_workspace_bytes(const rope_ev_model *m, int batch,
                               int seq_len);
int rope_ev_reserve(rope_ev_model *m, int batch, int seq_len);
/* 7.2 The model */
#endif
