/* W7.11 The language model and its training */
/* lm-f32.c: chapter 7's small language model in float32 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attention.h"
#include "lm-f32.h"
#include "positions.h"
#include "sinusoidal.h"

void rope_lm_config_defaults(rope_lm_config *c)
{
    memset(c, 0, sizeof *c);
    c->vocab_size = 64;
    c->num_hidden_layers = 2;
    c->block.batch = c->block.seq_len = 1;
    c->block.hidden_size = 64;
    c->block.num_attention_heads = 4;
    c->block.num_key_value_heads = 2;
    c->block.head_dim = 16;
    c->block.intermediate_size = 192; /* 64 * ceil(64 * 8/3 / 64) */
    c->block.rms_norm_eps = 1e-5f; /* MiniMind's config: 1e-6 */
    c->block.n_threads = 1;
    c->pe = ROPE_LM_ROPE;
    c->rope_theta = 1e4;
}

static float uniform(uint64_t *state, float bound) /* in [-bound, bound) */
{
    double u = (double)(rope_splitmix64(state) >> 11) * 0x1.0p-53;
    return (float)((2 * u - 1) * bound);
}

static void fill_linear(float *w, int in, int out, uint64_t *state)
{
    float bound = 1.0f / sqrtf((float)in); /* nn.Linear's default */
    for (size_t i = 0; i < (size_t)in * out; i++)
        w[i] = uniform(state, bound);
}

int rope_lm_init(rope_lm *m, const rope_lm_config *c, uint64_t seed)
{
    rope_f32_shape s = c->block;
    int D = s.hidden_size, h = s.num_attention_heads;
    int hkv = s.num_key_value_heads, d = s.head_dim;
    int F = s.intermediate_size;
    memset(m, 0, sizeof *m);
    s.batch = s.seq_len = 1;
    if (c->vocab_size < 2 || c->num_hidden_layers < 1
        || rope_f32_check_shape(&s) != 0
        || (c->pe != ROPE_LM_NOPE && !(c->rope_theta > 1)))
        return -1;
    m->c = *c;
    m->layout = rope_f32_block_layout(&s);
    m->embed = 0;
    m->blocks = (size_t)c->vocab_size * D;
    m->norm = m->blocks + (size_t)c->num_hidden_layers * m->layout.n;
    m->n_params = m->norm + (size_t)D;
    m->w = calloc(4 * m->n_params, sizeof *m->w);
    if (m->w == NULL)
        return -2;
    m->g = m->w + m->n_params;
    m->m = m->g + m->n_params;
    m->v = m->m + m->n_params;
    uint64_t state = seed;
    /* the tied embedding is lm_head's nn.Linear(hidden, vocab) */
    fill_linear(m->w + m->embed, D, c->vocab_size, &state);
    for (int l = 0; l < c->num_hidden_layers; l++) {
        float *w = m->w + m->blocks + (size_t)l * m->layout.n;
        rope_f32_layout L = m->layout;
        fill_linear(w + L.q_proj, D, h * d, &state);
        fill_linear(w + L.k_proj, D, hkv * d, &state);
        fill_linear(w + L.v_proj, D, hkv * d, &state);
        fill_linear(w + L.o_proj, h * d, D, &state);
        fill_linear(w + L.gate_proj, D, F, &state);
        fill_linear(w + L.up_proj, D, F, &state);
        fill_linear(w + L.down_proj, F, D, &state);
        for (int i = 0; i < D; i++)
            w[L.input_layernorm + i] = w[L.post_attention_layernorm + i] = 1;
        for (int i = 0; i < d; i++)
            w[L.q_norm + i] = w[L.k_norm + i] = 1;
    }
    for (int i = 0; i < D; i++)
        m->w[m->norm + i] = 1;
    return 0;
}

void rope_lm_free(rope_lm *m)
{
    free(m->w);
    memset(m, 0, sizeof *m);
}

int rope_lm_buffers_make(rope_lm_buffers *b, const rope_lm *m, int batch,
                         int seq_len, int n_threads)
{
    memset(b, 0, sizeof *b);
    b->s = m->c.block;
    b->s.batch = batch;
    b->s.seq_len = seq_len;
    b->s.n_threads = n_threads;
    if (rope_f32_check_shape(&b->s) != 0)
        return -1;
    size_t R = (size_t)batch * seq_len, D = (size_t)b->s.hidden_size;
    size_t V = (size_t)m->c.vocab_size;
    size_t acts = rope_f32_acts_len(&b->s) * m->c.num_hidden_layers;
    size_t work = rope_f32_work_len(&b->s);
    size_t pe = m->c.pe == ROPE_LM_SINUSOIDAL ? (size_t)seq_len * D : 0;
    size_t total = acts + 4 * R * D + R + R * V + work + pe;
    b->acts = malloc(total * sizeof *b->acts);
    b->tokens = malloc(2 * R * sizeof *b->tokens);
    if (b->acts == NULL || b->tokens == NULL) {
        rope_lm_buffers_free(b);
        return -2;
    }
    b->targets = b->tokens + R;
    b->x = b->acts + acts;
    b->dx = b->x + R * D;
    b->xf = b->dx + R * D;
    b->dxf = b->xf + R * D;
    b->inv_f = b->dxf + R * D;
    b->logits = b->inv_f + R;
    b->work = b->logits + R * V;
    b->pe = pe ? b->work + work : NULL;
    if (pe && rope_pe_table_float(b->pe, seq_len, (int)D,
                                  (float)m->c.rope_theta) != 0) {
        rope_lm_buffers_free(b);
        return -1;
    }
    return 0;
}

void rope_lm_buffers_free(rope_lm_buffers *b)
{
    free(b->acts);
    free(b->tokens);
    memset(b, 0, sizeof *b);
}

static float *block_acts(const rope_lm *m, rope_lm_buffers *b, int l,
                         rope_f32_acts *a)
{
    rope_f32_acts_bind(&b->s, b->acts + (size_t)l * rope_f32_acts_len(&b->s),
                       a);
    return m->w + m->blocks + (size_t)l * m->layout.n;
}

/* The forward pass over b->tokens up to the final norm (b->xf).  RoPE
   models take the tables freqs_cos, freqs_sin [seq_len, head_dim];
   the others pass NULL. */
int rope_lm_forward(const rope_lm *m, rope_lm_buffers *b,
                    const float *freqs_cos, const float *freqs_sin)
{
    int R = b->s.batch * b->s.seq_len, D = b->s.hidden_size, N = b->s.seq_len;
    rope_f32_embed(b->tokens, m->w + m->embed, b->x, R, D);
    if (b->pe != NULL) {
        float scale = sqrtf((float)D); /* Vaswani et al.'s sqrt(d_model) */
        for (int r = 0; r < R; r++)
            for (int i = 0; i < D; i++)
                b->x[(size_t)r * D + i] = b->x[(size_t)r * D + i] * scale
                                          + b->pe[(size_t)(r % N) * D + i];
    }
    for (int l = 0; l < m->c.num_hidden_layers; l++) {
        rope_f32_acts a;
        float *w = block_acts(m, b, l, &a);
        int rc = rope_f32_block_forward(&b->s, w, b->x, freqs_cos, freqs_sin,
                                        &a);
        if (rc != 0)
            return rc;
    }
    rope_f32_rmsnorm(b->x, m->w + m->norm, b->xf, b->inv_f, R, D,
                     b->s.rms_norm_eps);
    return 0;
}

/* The loss of the forward's rows against b->targets (a target < 0 is
   skipped): the mean, and each row's negative log-likelihood in nll and
   whether its most likely next token is the target in hit (either may
   be NULL). */
double rope_lm_loss(const rope_lm *m, rope_lm_buffers *b, float *nll,
                    int *hit)
{
    int R = b->s.batch * b->s.seq_len, D = b->s.hidden_size;
    int V = m->c.vocab_size;
    long n = 0;
    double sum = 0;
    rope_f32_linear(b->xf, m->w + m->embed, b->logits, R, D, V);
    for (int r = 0; r < R; r++) {
        const float *l = b->logits + (size_t)r * V;
        int t = b->targets[r], best = 0;
        float mx = l[0], z = 0;
        for (int i = 1; i < V; i++)
            if (l[i] > mx) {
                mx = l[i];
                best = i;
            }
        for (int i = 0; i < V; i++)
            z += expf(l[i] - mx);
        float e = t >= 0 ? logf(z) + mx - l[t] : 0.0f;
        if (nll)
            nll[r] = e;
        if (hit)
            hit[r] = t >= 0 && best == t;
        if (t >= 0) {
            sum += e;
            n++;
        }
    }
    return n > 0 ? sum / (double)n : 0.0;
}

/* The loss and the gradient of its mean, into m->g (zeroed first). */
double rope_lm_backward(rope_lm *m, rope_lm_buffers *b,
                        const float *freqs_cos, const float *freqs_sin)
{
    int R = b->s.batch * b->s.seq_len, D = b->s.hidden_size;
    memset(m->g, 0, m->n_params * sizeof *m->g);
    double loss = rope_f32_head_loss(b->xf, m->w + m->embed, b->targets, R,
                                     m->c.vocab_size, D, b->logits, b->dxf,
                                     m->g + m->embed);
    rope_f32_rmsnorm_backward(b->x, m->w + m->norm, b->inv_f, b->dxf, b->dx,
                              m->g + m->norm, R, D);
    for (int l = m->c.num_hidden_layers - 1; l >= 0; l--) {
        rope_f32_acts a;
        float *w = block_acts(m, b, l, &a);
        rope_f32_block_backward(&b->s, w, &a, b->dx,
                                m->g + m->blocks + (size_t)l * m->layout.n,
                                freqs_cos, freqs_sin, b->work);
    }
    if (b->pe != NULL) /* the input was scaled by sqrt(d_model) */
        for (size_t i = 0; i < (size_t)R * D; i++)
            b->dx[i] *= sqrtf((float)D);
    rope_f32_embed_backward(b->tokens, b->dx, m->g + m->embed, R, D);
    return loss;
}

void rope_lm_adamw_defaults(rope_lm_adamw *o)
{
    /* torch.optim.AdamW's defaults, which MiniMind keeps, and its
       clipping of the gradient's norm to 1 */
    o->lr = 5e-4;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->weight_decay = 0.01;
    o->clip = 1.0;
}

double rope_lm_adamw_step(rope_lm *m, const rope_lm_adamw *o, double lr)
{
    double norm = 0, scale = 1;
    for (size_t i = 0; i < m->n_params; i++)
        norm += (double)m->g[i] * m->g[i];
    norm = sqrt(norm);
    if (o->clip > 0 && norm > o->clip)
        scale = o->clip / norm;
    m->step++;
    double c1 = 1 - pow(o->beta1, (double)m->step);
    double c2 = 1 - pow(o->beta2, (double)m->step);
    float b1 = (float)o->beta1, b2 = (float)o->beta2;
    float decay = (float)(1 - lr * o->weight_decay), eps = (float)o->eps;
    float a1 = (float)(lr / c1), r2 = (float)(1 / sqrt(c2));
    for (size_t i = 0; i < m->n_params; i++) {
        float g = m->g[i] * (float)scale;
        m->m[i] = b1 * m->m[i] + (1 - b1) * g;
        m->v[i] = b2 * m->v[i] + (1 - b2) * g * g;
        m->w[i] = m->w[i] * decay - a1 * m->m[i] / (sqrtf(m->v[i]) * r2 + eps);
    }
    return norm;
}

double rope_lm_lr(double lr, long step, long total)
{
    return lr * (0.1 + 0.45 * (1 + cos(3.14159265358979323846
                                       * (double)step / (double)total)));
}
const char *const rope_lm_method_names[ROPE_LM_M_COUNT] = {
    "none", "rope", "pi", "ntk", "dynamic", "yarn-hf", "yarn-hf-notemp",
    "yarn-minimind", "yarn-minimind-temp"};

/* The frequencies of method m for a model trained at length L = a->len,
   with the factor s = a->factor, evaluated at length n (section 7.x):
   the dynamic method takes its factor from n alone, the others are
   fixed for the whole range. */
void rope_lm_method_scaling(rope_lm_method m, double rope_base, double factor,
                            long L, long n, int head_dim, rope_scaling *s,
                            double *base)
{
    double fs = factor;
    rope_scaling_defaults(s);
    *base = rope_base;
    s->original_max_position_embeddings = L;
    switch (m) {
    case ROPE_LM_M_PI:
        s->rope_type = ROPE_SCALING_LINEAR;
        s->factor = fs;
        break;
    case ROPE_LM_M_NTK: /* chapter 4's NTK-aware base, fixed */
        *base = rope_ntk_aware_base(rope_base, fs, head_dim);
        break;
    case ROPE_LM_M_DYNAMIC: /* factor max(1, n/L): HF's "dynamic" with factor 1 */
        s->rope_type = ROPE_SCALING_DYNAMIC;
        s->factor = 1;
        s->seq_len = n;
        break;
    case ROPE_LM_M_YARN_HF:
    case ROPE_LM_M_YARN_HF_NOTEMP:
        s->rope_type = ROPE_SCALING_YARN;
        s->yarn_flavor = ROPE_YARN_HF;
        s->factor = fs;
        s->max_position_embeddings = (long)(fs * (double)L);
        if (m == ROPE_LM_M_YARN_HF_NOTEMP)
            s->attention_factor = 1;
        break;
    case ROPE_LM_M_YARN_MM:
    case ROPE_LM_M_YARN_MM_TEMP:
        s->rope_type = ROPE_SCALING_YARN;
        s->yarn_flavor = ROPE_YARN_MINIMIND;
        s->factor = fs;
        /* MiniMind computes its table once, for 32768 positions, well
           past 2048: here for 16 L, well past L */
        s->max_position_embeddings = 16 * L;
        s->attention_factor = m == ROPE_LM_M_YARN_MM_TEMP
                                  ? rope_yarn_get_mscale(fs, 1.0) : 1.0;
        break;
    default:
        break;
    }
}

/* The tables [n, head_dim] of method m for a model of base rope_base
   trained at length L, evaluated at length n (freqs_cos and freqs_sin
   hold n * head_dim floats each): 0, or chapter 4's error code. */
int rope_lm_tables(rope_lm_method m, double rope_base, double factor,
                   long L, long n, int head_dim, float *freqs_cos,
                   float *freqs_sin)
{
    double base, af;
    rope_scaling s;
    float inv_freq[ROPE_ATTENTION_MAX_HEAD_DIM / 2];
    int e;
    if (head_dim < 2 || head_dim > ROPE_ATTENTION_MAX_HEAD_DIM)
        return ROPE_SCALING_EHEAD_DIM;
    rope_lm_method_scaling(m, rope_base, factor, L, n, head_dim, &s, &base);
    if ((e = rope_compute_inv_freq(inv_freq, &af, head_dim, base, &s)) != 0)
        return e;
    return rope_freqs_cis_from_inv_freq(freqs_cos, freqs_sin, inv_freq,
                                        head_dim, 0, n, af,
                                        ROPE_PRECISION_FLOAT);
}
