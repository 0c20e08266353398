/* W7.11 The language model and its training */
/* lm-f32.h: chapter 7's small language model in float32 */
#ifndef ROPE_LM_F32_H
#define ROPE_LM_F32_H
#include <stddef.h>
#include <stdint.h>
#include "evidence-f32.h"
#include "scaling.h"
typedef enum {
    ROPE_LM_NOPE, /* no position signal at all */
    ROPE_LM_SINUSOIDAL, /* chapter 2's table added to the embeddings */
    ROPE_LM_ROPE /* chapter 3's rotation of q and k */
} rope_lm_pe;
typedef enum { /* the methods of chapter 7's evaluation */
    ROPE_LM_M_NONE, /* a model without RoPE */
    ROPE_LM_M_ROPE, /* plain RoPE */
    ROPE_LM_M_PI, ROPE_LM_M_NTK, ROPE_LM_M_DYNAMIC, /* chapter 4 */
    ROPE_LM_M_YARN_HF, ROPE_LM_M_YARN_HF_NOTEMP, /* HF's, xi on / off */
    ROPE_LM_M_YARN_MM, ROPE_LM_M_YARN_MM_TEMP, /* MiniMind's, xi off / on */
    ROPE_LM_M_COUNT
} rope_lm_method;
extern const char *const rope_lm_method_names[ROPE_LM_M_COUNT];
typedef struct rope_lm_config {
    int vocab_size; /* the corpus's characters and the unknown id */
    int num_hidden_layers; /* blocks */
    rope_f32_shape block; /* the block's sizes (batch, seq_len unused) */
    rope_lm_pe pe;
    double rope_theta; /* RoPE's base, or the sinusoids' */
} rope_lm_config;
typedef struct rope_lm {
    rope_lm_config c;
    rope_f32_layout layout; /* of one block */
    size_t embed, blocks, norm, n_params; /* offsets, floats */
    float *w, *g, *m, *v; /* weights, gradient, AdamW's two moments */
    long step; /* AdamW steps taken */
} rope_lm;
typedef struct rope_lm_buffers { /* what one batch shape needs */
    rope_f32_shape s; /* the block's shape with batch and seq_len */
    float *acts; /* each block's activations, one after the other */
    float *x, *dx, *xf, *inv_f, *dxf, *logits, *work, *pe;
    int *tokens, *targets;
} rope_lm_buffers;
typedef struct rope_lm_adamw { /* MiniMind's optimiser settings */
    double lr, beta1, beta2, eps, weight_decay, clip;
} rope_lm_adamw;
void rope_lm_config_defaults(rope_lm_config *c);
int rope_lm_init(rope_lm *m, const rope_lm_config *c, uint64_t seed);
void rope_lm_free(rope_lm *m);
int rope_lm_buffers_make(rope_lm_buffers *b, const rope_lm *m, int batch,
                         int seq_len, int n_threads);
void rope_lm_buffers_free(rope_lm_buffers *b);
int rope_lm_forward(const rope_lm *m, rope_lm_buffers *b,
                    const float *freqs_cos, const float *freqs_sin);
double rope_lm_loss(const rope_lm *m, rope_lm_buffers *b, float *nll,
                    int *hit);
double rope_lm_backward(rope_lm *m, rope_lm_buffers *b,
                        const float *freqs_cos, const float *freqs_sin);
void rope_lm_adamw_defaults(rope_lm_adamw *o);
double rope_lm_adamw_step(rope_lm *m, const rope_lm_adamw *o, double lr);
double rope_lm_lr(double lr, long step, long total);
void rope_lm_method_scaling(rope_lm_method m, double rope_base, double factor,
                            long L, long n, int head_dim, rope_scaling *s,
                            double *base);
int rope_lm_tables(rope_lm_method m, double rope_base, double factor,
                   long L, long n, int head_dim, float *freqs_cos,
                   float *freqs_sin);
#endif
