/* W8.1 The rest of the library */
/* minimind.c: chapter 8: MiniMind's whole model in C */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "minimind.h"
#include "scaling.h"

void rope_minimind_config_defaults(rope_minimind_config *c)
{
    memset(c, 0, sizeof *c);
    c->hidden_size = 768;
    c->num_hidden_layers = 8;
    c->num_attention_heads = 8;
    c->num_key_value_heads = 4;
    c->head_dim = c->hidden_size / c->num_attention_heads;
    c->intermediate_size = 2432; /* ceil(768 pi / 64) 64 */
    c->vocab_size = 6400;
    c->max_position_embeddings = 32768;
    c->rope_theta = 1e6;
    c->rms_norm_eps = 1e-6;
    c->num_experts = 4;
    c->num_experts_per_tok = 1;
    c->moe_intermediate_size = c->intermediate_size;
    c->norm_topk_prob = 1;
}
int rope_minimind_check_config(const rope_minimind_config *c, char *why,
                               size_t n)
{
    const char *bad = NULL;
    if (c->hidden_size < 1 || c->num_hidden_layers < 1
        || c->vocab_size < 1 || c->intermediate_size < 1)
        bad = "sizes must be positive";
    else if (c->num_attention_heads < 1 || c->num_key_value_heads < 1
             || c->num_attention_heads % c->num_key_value_heads != 0)
        bad = "num_attention_heads must be a multiple of "
              "num_key_value_heads";
    else if (c->head_dim < 2 || c->head_dim % 2 != 0
             || c->head_dim > ROPE_ATTENTION_MAX_HEAD_DIM)
        bad = "head_dim must be even, from 2 to 1024";
    else if (c->max_position_embeddings < 1
             || c->max_position_embeddings > ROPE_MAX_POSITION)
        bad = "max_position_embeddings must be from 1 to 2^24";
    else if (!(c->rope_theta > 1) || !(c->rms_norm_eps >= 0))
        bad = "rope_theta must exceed 1 and rms_norm_eps be >= 0";
    else if (c->use_moe && (c->num_experts < 1
             || c->num_experts_per_tok < 1
             || c->num_experts_per_tok > c->num_experts
             || c->moe_intermediate_size < 1))
        bad = "MoE needs 1 <= num_experts_per_tok <= num_experts";
    if (bad && why && n)
        snprintf(why, n, "%s", bad);
    return bad ? -1 : 0;
}
static int mm_add(rope_minimind_tensor *t, int k, size_t *at, long rows,
                  long cols, const char *fmt, ...)
{
    if (t) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t[k].name, sizeof t[k].name, fmt, ap);
        va_end(ap);
        t[k].ndim = cols ? 2 : 1;
        t[k].shape[0] = rows;
        t[k].shape[1] = cols;
        t[k].offset = *at;
    }
    *at += (size_t)rows * (size_t)(cols ? cols : 1);
    return k + 1;
}
/* 8.2 The weights */
int rope_minimind_tensor_list(const rope_minimind_config *c,
                              rope_minimind_tensor *t)
{
    static const char *const att[] = {"q_proj", "k_proj", "v_proj",
                                      "o_proj"};
    static const char *const ffn[] = {"gate_proj", "up_proj", "down_proj"};
    long D = c->hidden_size, d = c->head_dim;
    long qd = (long)c->num_attention_heads * d;
    long kvd = (long)c->num_key_value_heads * d;
    long rows[] = {qd, kvd, kvd, D}, cols[] = {D, D, D, qd};
    long F = c->use_moe ? c->moe_intermediate_size : c->intermediate_size;
    long fr[] = {F, F, D}, fc[] = {D, D, F};
    int E = c->use_moe ? c->num_experts : 0;
    size_t at = 0;
    int k = mm_add(t, 0, &at, c->vocab_size, D, "model.embed_tokens.weight");
    for (int l = 0; l < c->num_hidden_layers; l++) {
        k = mm_add(t, k, &at, D, 0,
                   "model.layers.%d.input_layernorm.weight", l);
        for (int i = 0; i < 4; i++)
            k = mm_add(t, k, &at, rows[i], cols[i],
                       "model.layers.%d.self_attn.%s.weight", l, att[i]);
        k = mm_add(t, k, &at, d, 0, "model.layers.%d.self_attn.q_norm.weight",
                   l);
        k = mm_add(t, k, &at, d, 0, "model.layers.%d.self_attn.k_norm.weight",
                   l);
        k = mm_add(t, k, &at, D, 0,
                   "model.layers.%d.post_attention_layernorm.weight", l);
        if (E == 0)
            for (int i = 0; i < 3; i++)
                k = mm_add(t, k, &at, fr[i], fc[i],
                           "model.layers.%d.mlp.%s.weight", l, ffn[i]);
        else
            k = mm_add(t, k, &at, E, D, "model.layers.%d.mlp.gate.weight", l);
        for (int e = 0; e < E; e++)
            for (int i = 0; i < 3; i++)
                k = mm_add(t, k, &at, fr[i], fc[i],
                           "model.layers.%d.mlp.experts.%d.%s.weight", l, e,
                           ffn[i]);
    }
    return mm_add(t, k, &at, D, 0, "model.norm.weight");
}

size_t rope_minimind_n_floats(const rope_minimind_config *c)
{
    size_t at = 0;
    int n = rope_minimind_tensor_list(c, NULL);
    rope_minimind_tensor *t = malloc((size_t)n * sizeof *t);
    if (t == NULL)
        return 0;
    rope_minimind_tensor_list(c, t);
    at = t[n - 1].offset + (size_t)t[n - 1].shape[0];
    free(t);
    return at;
}
/* W8.1 The rest of the library */
void rope_minimind_rope_scaling(const rope_minimind_config *c,
                                rope_scaling *s)
{
    rope_scaling_defaults(s);
    if (c->inference_rope_scaling) { /* MiniMindConfig's rope_scaling */
        s->rope_type = ROPE_SCALING_YARN;
        s->yarn_flavor = ROPE_YARN_MINIMIND;
        s->factor = 16;
        s->original_max_position_embeddings = 2048;
        s->beta_fast = 32;
        s->beta_slow = 1;
        s->attention_factor = 1.0;
    }
}
static int mm_tables(rope_minimind *m)
{
    const rope_minimind_config *c = &m->config;
    size_t len = (size_t)c->max_position_embeddings * c->head_dim;
    rope_scaling s;
    m->freqs_cos = malloc(len * sizeof *m->freqs_cos);
    m->freqs_sin = malloc(len * sizeof *m->freqs_sin);
    if (!m->freqs_cos || !m->freqs_sin)
        return -1;
    rope_minimind_rope_scaling(c, &s);
    return rope_precompute_freqs_cis_scaled(m->freqs_cos, m->freqs_sin,
               c->head_dim, c->max_position_embeddings, c->rope_theta, &s,
               ROPE_PRECISION_FLOAT) == 0 ? 0 : -1;
}
int rope_minimind_bind(rope_minimind *m, const rope_minimind_config *c,
                       const float *data)
{
    int L = c->num_hidden_layers, E = c->use_moe ? c->num_experts : 0;
    int n = rope_minimind_tensor_list(c, NULL), k = 0;
    rope_minimind_tensor *t;
    void *map = m->map;
    size_t map_bytes = m->map_bytes;
    memset(m, 0, sizeof *m);
    m->map = map;
    m->map_bytes = map_bytes;
    m->config = *c;
    if (rope_minimind_check_config(c, NULL, 0) != 0)
        return -1;
    t = malloc((size_t)n * sizeof *t);
    m->layers = calloc((size_t)L, sizeof *m->layers);
    if (!t || !m->layers) {
        free(t);
        return -1;
    }
    rope_minimind_tensor_list(c, t);
#define MM_NEXT (data + t[k++].offset)
    m->embed_tokens = MM_NEXT;
    for (int l = 0; l < L; l++) {
        rope_minimind_layer *y = &m->layers[l];
        y->input_layernorm = MM_NEXT;
        y->q_proj = MM_NEXT;
        y->k_proj = MM_NEXT;
        y->v_proj = MM_NEXT;
        y->o_proj = MM_NEXT;
        y->q_norm = MM_NEXT;
        y->k_norm = MM_NEXT;
        y->post_attention_layernorm = MM_NEXT;
        rope_minimind_ffn *f = &y->mlp;
        if (E > 0) {
            y->gate = MM_NEXT;
            f = y->experts = calloc((size_t)E, sizeof *y->experts);
            if (f == NULL) {
                free(t);
                return -1;
            }
        }
        for (int e = 0; e < (E > 0 ? E : 1); e++) {
            f[e].gate_proj = MM_NEXT;
            f[e].up_proj = MM_NEXT;
            f[e].down_proj = MM_NEXT;
        }
    }
    m->norm = MM_NEXT;
#undef MM_NEXT
    free(t);
    return mm_tables(m);
}
void rope_minimind_free(rope_minimind *m)
{
    if (m->layers)
        for (int l = 0; l < m->config.num_hidden_layers; l++)
            free(m->layers[l].experts);
    free(m->layers);
    free(m->freqs_cos);
    free(m->freqs_sin);
    if (m->map)
        munmap(m->map, m->map_bytes);
    memset(m, 0, sizeof *m);
}
int rope_minimind_state_init(rope_minimind_state *s, const rope_minimind *m,
                             int max_rows, int n_threads)
{
    const rope_minimind_config *c = &m->config;
    size_t R = (size_t)(max_rows > 0 ? max_rows : 1), D = c->hidden_size;
    size_t qd = (size_t)c->num_attention_heads * c->head_dim;
    size_t kvd = (size_t)c->num_key_value_heads * c->head_dim;
    size_t F = (size_t)c->intermediate_size, E = 1;
    int L = c->num_hidden_layers, bad = 0;
    if (c->use_moe) {
        E = (size_t)c->num_experts;
        if ((size_t)c->moe_intermediate_size > F)
            F = (size_t)c->moe_intermediate_size;
    }
    memset(s, 0, sizeof *s);
    s->max_rows = (int)R;
    s->n_threads = n_threads > 0 ? n_threads : 1;
    s->cache = calloc((size_t)L, sizeof *s->cache);
    float **buf[] = {&s->x, &s->xn, &s->q, &s->k, &s->v, &s->o, &s->gate,
                     &s->up, &s->y, &s->xe, &s->ye, &s->probs, &s->sel};
    size_t len[] = {R * D, R * D, R * qd, R * kvd, R * kvd, R * qd, R * F,
                    R * F, R * D, R * D, R * D, R * E, R * E};
    for (size_t i = 0; i < sizeof len / sizeof *len; i++)
        bad |= (*buf[i] = malloc(len[i] * sizeof(float))) == NULL;
    s->rows = malloc(R * sizeof *s->rows);
    if (bad || !s->cache || !s->rows) {
        rope_minimind_state_free(s);
        return -1;
    }
    for (int l = 0; l < L; l++)
        if (rope_kv_cache_init(&s->cache[l], 1, c->num_key_value_heads,
                               c->head_dim, (long)R) != 0) {
            rope_minimind_state_free(s);
            return -1;
        }
    s->n_layers = L;
    return 0;
}
void rope_minimind_state_reset(rope_minimind_state *s)
{
    for (int l = 0; l < s->n_layers; l++)
        s->cache[l].len = 0;
    s->pos = 0;
}

void rope_minimind_state_free(rope_minimind_state *s)
{
    if (s->cache)
        for (int l = 0; l < s->n_layers; l++)
            rope_kv_cache_free(&s->cache[l]);
    free(s->cache);
    float *bufs[] = {s->x, s->xn, s->q, s->k, s->v, s->o, s->gate, s->up,
                     s->y, s->xe, s->ye, s->probs, s->sel};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    free(s->rows);
    memset(s, 0, sizeof *s);
}
/* 8.3 The forward pass */
void rope_minimind_rmsnorm(float *y, const float *x, const float *w,
                           int rows, int dim, double eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        float *yr = y + (size_t)r * dim, ss = 0;
        for (int i = 0; i < dim; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)dim + (float)eps);
        for (int i = 0; i < dim; i++)
            yr[i] = w[i] * (xr[i] * inv);
    }
}
/* W8.1 The rest of the library */
static void mm_add_into(float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] += y[i];
}

static void mm_swiglu(float *g, const float *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}
/* 8.3 The forward pass */
static int mm_attention(const rope_minimind *m, rope_minimind_state *s,
                        int l, int n, const rope_attention_params *p)
{
    const rope_minimind_config *c = &m->config;
    const rope_minimind_layer *w = &m->layers[l];
    int D = c->hidden_size, H = c->num_attention_heads, d = c->head_dim;
    int Hkv = c->num_key_value_heads, t = s->n_threads, err;
    rope_minimind_rmsnorm(s->xn, s->x, w->input_layernorm, n, D,
                          c->rms_norm_eps);
    rope_minimind_linear(s->q, s->xn, w->q_proj, n, D, H * d, t);
    rope_minimind_linear(s->k, s->xn, w->k_proj, n, D, Hkv * d, t);
    rope_minimind_linear(s->v, s->xn, w->v_proj, n, D, Hkv * d, t);
    rope_minimind_rmsnorm(s->q, s->q, w->q_norm, n * H, d, c->rms_norm_eps);
    rope_minimind_rmsnorm(s->k, s->k, w->k_norm, n * Hkv, d,
                          c->rms_norm_eps);
    err = rope_kv_cache_append(&s->cache[l], s->k, s->v, n, p);
    if (err == 0)
        err = rope_attention_cached(s->o, s->q, &s->cache[l], p);
    if (err != 0)
        return err;
    rope_minimind_linear(s->y, s->o, w->o_proj, n, H * d, D, t);
    mm_add_into(s->x, s->y, (size_t)n * D);
    return 0;
}
/* W8.1 The rest of the library */
static void mm_route(const rope_minimind_config *c, rope_minimind_state *s,
                     int n)
{
    int E = c->num_experts, k = c->num_experts_per_tok;
    for (int r = 0; r < n; r++) {
        float *p = s->probs + (size_t)r * E, *w = s->sel + (size_t)r * E;
        float mx = p[0], z = 0, sum = 0;
        for (int e = 1; e < E; e++)
            mx = p[e] > mx ? p[e] : mx;
        for (int e = 0; e < E; e++)
            z += p[e] = expf(p[e] - mx);
        for (int e = 0; e < E; e++) {
            p[e] /= z;
            w[e] = -1; /* not chosen */
        }
        for (int j = 0; j < k; j++) { /* the k largest, first on ties */
            int best = -1;
            for (int e = 0; e < E; e++)
                if (w[e] < 0 && (best < 0 || p[e] > p[best]))
                    best = e;
            w[best] = p[best];
            sum += p[best];
        }
        for (int e = 0; e < E; e++)
            if (w[e] >= 0 && c->norm_topk_prob)
                w[e] = w[e] / (sum + 1e-20f);
    }
}
/* 8.3 The forward pass */
static void mm_ffn(const rope_minimind_ffn *f, float *y, const float *x,
                   rope_minimind_state *s, int n, int D, int F)
{
    rope_minimind_linear(s->gate, x, f->gate_proj, n, D, F, s->n_threads);
    rope_minimind_linear(s->up, x, f->up_proj, n, D, F, s->n_threads);
    mm_swiglu(s->gate, s->up, (size_t)n * F);
    rope_minimind_linear(y, s->gate, f->down_proj, n, F, D, s->n_threads);
}
static void mm_moe(const rope_minimind_layer *w,
                   const rope_minimind_config *c, rope_minimind_state *s,
                   int n)
{
    int D = c->hidden_size, E = c->num_experts;
    rope_minimind_linear(s->probs, s->xn, w->gate, n, D, E, s->n_threads);
    mm_route(c, s, n);
    memset(s->y, 0, (size_t)n * D * sizeof *s->y);
    for (int e = 0; e < E; e++) { /* in MiniMind's order of experts */
        int cnt = 0;
        for (int r = 0; r < n; r++)
            if (s->sel[(size_t)r * E + e] >= 0) {
                memcpy(s->xe + (size_t)cnt * D, s->xn + (size_t)r * D,
                       (size_t)D * sizeof *s->xe);
                s->rows[cnt++] = r;
            }
        if (cnt == 0)
            continue;
        mm_ffn(&w->experts[e], s->ye, s->xe, s, cnt, D,
               c->moe_intermediate_size);
        for (int j = 0; j < cnt; j++) {
            float g = s->sel[(size_t)s->rows[j] * E + e];
            float *yr = s->y + (size_t)s->rows[j] * D;
            for (int i = 0; i < D; i++)
                yr[i] += s->ye[(size_t)j * D + i] * g;
        }
    }
}
static void mm_feed_forward(const rope_minimind *m, rope_minimind_state *s,
                            int l, int n)
{
    const rope_minimind_config *c = &m->config;
    const rope_minimind_layer *w = &m->layers[l];
    int D = c->hidden_size;
    rope_minimind_rmsnorm(s->xn, s->x, w->post_attention_layernorm, n, D,
                          c->rms_norm_eps);
    if (c->use_moe)
        mm_moe(w, c, s, n);
    else
        mm_ffn(&w->mlp, s->y, s->xn, s, n, D, c->intermediate_size);
    mm_add_into(s->x, s->y, (size_t)n * D);
}
int rope_minimind_forward(const rope_minimind *m, rope_minimind_state *s,
                          const int *input_ids, int n, float *logits,
                          int all_logits)
{
    const rope_minimind_config *c = &m->config;
    int D = c->hidden_size, V = c->vocab_size, err;
    if (n < 1 || n > s->max_rows)
        return ROPE_MINIMIND_EROWS;
    if (s->pos + n > c->max_position_embeddings)
        return ROPE_MINIMIND_ELENGTH;
    for (int i = 0; i < n; i++) {
        if (input_ids[i] < 0 || input_ids[i] >= V)
            return ROPE_MINIMIND_ETOKEN;
        memcpy(s->x + (size_t)i * D, m->embed_tokens + (size_t)input_ids[i] * D,
               (size_t)D * sizeof *s->x);
    }
    /* W8.1 The rest of the library */
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.batch = 1;
    p.seq_len = n;
    p.n_heads = c->num_attention_heads;
    p.n_kv_heads = c->num_key_value_heads;
    p.head_dim = c->head_dim;
    p.start_pos = 0; /* key j of the cache sits at position j */
    p.causal = 1;
    p.freqs_cos = m->freqs_cos;
    p.freqs_sin = m->freqs_sin;
    p.table_len = c->max_position_embeddings;
    p.pairing = ROPE_PAIRING_HALF;
    p.n_threads = s->n_threads;
    /* 8.3 The forward pass */
    for (int l = 0; l < c->num_hidden_layers; l++) {
        if (s->hook)
            s->hook(s->hook_ctx, l, s->pos, s->x, n, D);
        if ((err = mm_attention(m, s, l, n, &p)) != 0)
            return err;
        mm_feed_forward(m, s, l, n);
    }
    if (s->hook)
        s->hook(s->hook_ctx, c->num_hidden_layers, s->pos, s->x, n, D);
    int first = all_logits ? 0 : n - 1, rows = n - first;
    rope_minimind_rmsnorm(s->xn, s->x + (size_t)first * D, m->norm, rows, D,
                          c->rms_norm_eps);
    rope_minimind_linear(logits, s->xn, m->embed_tokens, rows, D, V,
                         s->n_threads);
    s->pos += n;
    return 0;
}
/* W8.1 The rest of the library */
static double mm_uniform(uint64_t *st) /* splitmix64, 53 bits */
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static const float *mm_sort_key;
static int mm_by_logit(const void *a, const void *b)
{
    float x = mm_sort_key[*(const int *)a], y = mm_sort_key[*(const int *)b];
    if (x != y)
        return x > y ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}
int rope_minimind_sample(const float *logits, int vocab,
                         rope_minimind_sampler *sp)
{
    int best = 0;
    for (int i = 1; i < vocab; i++)
        best = logits[i] > logits[best] ? i : best;
    if (!(sp->temperature > 0))
        return best; /* greedy: the first largest logit */
    int *idx = malloc((size_t)vocab * sizeof *idx);
    double *pr = malloc((size_t)vocab * sizeof *pr);
    float *z = malloc((size_t)vocab * sizeof *z);
    if (!idx || !pr || !z) {
        free(idx); free(pr); free(z);
        return best;
    }
    for (int i = 0; i < vocab; i++) {
        z[i] = logits[i] / (float)sp->temperature;
        idx[i] = i;
    }
    mm_sort_key = z;
    qsort(idx, (size_t)vocab, sizeof *idx, mm_by_logit);
    /* 8.6 Generating tokens */
    int keep = vocab;
    if (sp->top_k > 0 && sp->top_k < vocab) {
        float kth = z[idx[sp->top_k - 1]]; /* ties with the k-th stay */
        while (keep > sp->top_k && z[idx[keep - 1]] < kth)
            keep--;
    }
    if (sp->top_p < 1) {
        double all = 0, cum = 0;
        for (int j = 0; j < keep; j++)
            all += pr[j] = exp((double)z[idx[j]] - z[idx[0]]);
        for (int j = 0; j < keep; j++) {
            if (cum / all > sp->top_p) { /* the tokens before j exceed p */
                keep = j;
                break;
            }
            cum += pr[j];
        }
    }
    /* W8.1 The rest of the library */
    double total = 0, u, run = 0;
    for (int j = 0; j < keep; j++)
        total += pr[j] = exp((double)z[idx[j]] - z[idx[0]]);
    u = mm_uniform(&sp->rng) * total;
    int tok = idx[keep - 1];
    for (int j = 0; j < keep; j++)
        if ((run += pr[j]) > u) {
            tok = idx[j];
            break;
        }
    free(idx); free(pr); free(z);
    return tok;
}
