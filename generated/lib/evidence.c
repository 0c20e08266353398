/* 7.2 The model */
/* generated/lib/evidence.c: a tiny MiniMind-shaped model (chapter 7) */
#include "evidence.h"
#include "positions.h"
#include "rotary.h"
#include "scaling.h"
#include "sinusoidal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* W7.1 The model's plumbing */
typedef struct ev_layout {
    size_t embed, norm, layer0, per_layer; /* offsets and stride */
    size_t attn_norm, wq, wk, wv, wo, ffn_norm, wg, wu, wd; /* in a layer */
} ev_layout;

static ev_layout ev_layout_of(const rope_ev_config *c)
{
    size_t D = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
    size_t d = D / (size_t)c->num_attention_heads;
    size_t kv = d * (size_t)c->num_key_value_heads;
    ev_layout L;
    L.embed = 0;
    L.layer0 = (size_t)c->vocab_size * D;
    L.attn_norm = 0;
    L.wq = D;
    L.wk = L.wq + D * D;
    L.wv = L.wk + D * kv;
    L.wo = L.wv + D * kv;
    L.ffn_norm = L.wo + D * D;
    L.wg = L.ffn_norm + D;
    L.wu = L.wg + D * F;
    L.wd = L.wu + D * F;
    L.per_layer = L.wd + F * D;
    L.norm = L.layer0 + (size_t)c->num_hidden_layers * L.per_layer;
    return L;
}
typedef struct ev_acts {
    double *x, *inv1, *xn1, *q, *k, *v, *p, *o, *xm, *inv2, *xn2,
        *g, *u, *h;
} ev_acts;

static size_t ev_layer_len(const rope_ev_model *m, int B, int T)
{
    size_t N = (size_t)B * T, D = (size_t)m->c.hidden_size;
    size_t kv = (size_t)m->head_dim * m->c.num_key_value_heads;
    size_t F = (size_t)m->c.intermediate_size;
    return N * (4 * D + 2 * D + 2 * kv + 3 * F + 2)
           + (size_t)B * m->c.num_attention_heads * T * T;
}

static ev_acts ev_acts_of(rope_ev_model *m, int l, int B, int T)
{
    size_t N = (size_t)B * T, D = (size_t)m->c.hidden_size;
    size_t kv = (size_t)m->head_dim * m->c.num_key_value_heads;
    size_t F = (size_t)m->c.intermediate_size;
    double *w = m->ws + (size_t)l * ev_layer_len(m, B, T);
    ev_acts a;
    a.x = w; w += N * D;
    a.inv1 = w; w += N;
    a.xn1 = w; w += N * D;
    a.q = w; w += N * D;
    a.k = w; w += N * kv;
    a.v = w; w += N * kv;
    a.p = w; w += (size_t)B * m->c.num_attention_heads * T * T;
    a.o = w; w += N * D;
    a.xm = w; w += N * D;
    a.inv2 = w; w += N;
    a.xn2 = w; w += N * D;
    a.g = w; w += N * F;
    a.u = w; w += N * F;
    a.h = w;
    return a;
}
static void ev_layer_forward(rope_ev_model *m, int l, int B, int T,
                             double *x, const double *cos_t,
                             const double *sin_t, double *tmp)
{
    const rope_ev_config *c = &m->c;
    ev_layout L = ev_layout_of(c);
    const double *w = m->params + L.layer0 + (size_t)l * L.per_layer;
    int N = B * T, D = c->hidden_size, F = c->intermediate_size;
    int H = c->num_attention_heads, Hkv = c->num_key_value_heads;
    int d = m->head_dim;
    ev_acts a = ev_acts_of(m, l, B, T);
    memcpy(a.x, x, (size_t)N * D * sizeof *x);
    rope_ev_rmsnorm(a.x, w + L.attn_norm, a.xn1, a.inv1, N, D,
                    c->rms_norm_eps);
    rope_ev_linear(a.xn1, w + L.wq, a.q, N, D, H * d);
    rope_ev_linear(a.xn1, w + L.wk, a.k, N, D, Hkv * d);
    rope_ev_linear(a.xn1, w + L.wv, a.v, N, D, Hkv * d);
    if (cos_t != NULL) {
        rope_ev_rotary(a.q, cos_t, sin_t, B, T, H, d, 0);
        rope_ev_rotary(a.k, cos_t, sin_t, B, T, Hkv, d, 0);
    }
    rope_ev_attention(a.q, a.k, a.v, a.p, a.o, B, T, H, Hkv, d);
    rope_ev_linear(a.o, w + L.wo, tmp, N, H * d, D);
    for (size_t i = 0; i < (size_t)N * D; i++)
        a.xm[i] = a.x[i] + tmp[i];
    rope_ev_rmsnorm(a.xm, w + L.ffn_norm, a.xn2, a.inv2, N, D,
                    c->rms_norm_eps);
    rope_ev_linear(a.xn2, w + L.wg, a.g, N, D, F);
    rope_ev_linear(a.xn2, w + L.wu, a.u, N, D, F);
    rope_ev_swiglu(a.g, a.u, a.h, (size_t)N * F);
    rope_ev_linear(a.h, w + L.wd, tmp, N, F, D);
    for (size_t i = 0; i < (size_t)N * D; i++)
        x[i] = a.xm[i] + tmp[i];
}
static void ev_layer_backward(rope_ev_model *m, int l, int B, int T,
                              double *dx, const double *cos_t,
                              const double *sin_t, double *t1, double *t2)
{
    const rope_ev_config *c = &m->c;
    ev_layout L = ev_layout_of(c);
    size_t off = L.layer0 + (size_t)l * L.per_layer;
    const double *w = m->params + off;
    double *gw = m->grads + off;
    int N = B * T, D = c->hidden_size, F = c->intermediate_size;
    int H = c->num_attention_heads, Hkv = c->num_key_value_heads;
    int d = m->head_dim;
    size_t ND = (size_t)N * D, kv = (size_t)N * Hkv * d;
    ev_acts a = ev_acts_of(m, l, B, T);
    {
        double *dh = t1, *dg = t2, *du = t2 + (size_t)N * F;
        double *dn = t1 + (size_t)N * F, *dn2 = dn + ND;
        rope_ev_linear_backward(a.h, w + L.wd, dx, dh, gw + L.wd, N, F, D);
        rope_ev_swiglu_backward(a.g, a.u, dh, dg, du, (size_t)N * F);
        rope_ev_linear_backward(a.xn2, w + L.wg, dg, dn, gw + L.wg, N, D, F);
        rope_ev_linear_backward(a.xn2, w + L.wu, du, dn2, gw + L.wu, N, D, F);
        for (size_t i = 0; i < ND; i++)
            dn[i] += dn2[i];
        rope_ev_rmsnorm_backward(a.xm, w + L.ffn_norm, a.inv2, dn, dn2,
                                 gw + L.ffn_norm, N, D);
        for (size_t i = 0; i < ND; i++)
            dx[i] += dn2[i];
    }
    {
        double *dout = t1, *dq = t1 + ND, *dk = dq + ND, *dv = dk + kv;
        double *dn = t2, *dn2 = t2 + ND;
        rope_ev_linear_backward(a.o, w + L.wo, dx, dout, gw + L.wo, N, H * d,
                                D);
        rope_ev_attention_backward(a.q, a.k, a.v, a.p, dout, dq, dk, dv, B, T,
                                   H, Hkv, d);
        if (cos_t != NULL) {
            rope_ev_rotary(dq, cos_t, sin_t, B, T, H, d, 1);
            rope_ev_rotary(dk, cos_t, sin_t, B, T, Hkv, d, 1);
        }
        rope_ev_linear_backward(a.xn1, w + L.wq, dq, dn, gw + L.wq, N, D, H * d);
        rope_ev_linear_backward(a.xn1, w + L.wk, dk, dn2, gw + L.wk, N, D,
                                Hkv * d);
        for (size_t i = 0; i < ND; i++) dn[i] += dn2[i];
        rope_ev_linear_backward(a.xn1, w + L.wv, dv, dn2, gw + L.wv, N, D,
                                Hkv * d);
        for (size_t i = 0; i < ND; i++) dn[i] += dn2[i];
        rope_ev_rmsnorm_backward(a.x, w + L.attn_norm, a.inv1, dn, dn2,
                                 gw + L.attn_norm, N, D);
        for (size_t i = 0; i < ND; i++)
            dx[i] += dn2[i];
    }
}
/* 7.3 Forward and backward, piece by piece */
void rope_ev_rmsnorm(const double *x, const double *w, double *y,
                     double *inv, int rows, int dim, double eps)
{
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * dim;
        double s = 0;
        for (int i = 0; i < dim; i++)
            s += xr[i] * xr[i];
        inv[r] = 1.0 / sqrt(s / dim + eps);
        for (int i = 0; i < dim; i++)
            y[(size_t)r * dim + i] = w[i] * xr[i] * inv[r];
    }
}

void rope_ev_rmsnorm_backward(const double *x, const double *w,
                              const double *inv, const double *dy,
                              double *dx, double *dw, int rows, int dim)
{
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * dim, *dyr = dy + (size_t)r * dim;
        double rho = inv[r], dot = 0;
        for (int i = 0; i < dim; i++) {
            dot += dyr[i] * w[i] * xr[i];
            dw[i] += dyr[i] * xr[i] * rho;
        }
        for (int i = 0; i < dim; i++)
            dx[(size_t)r * dim + i] = rho * w[i] * dyr[i]
                - rho * rho * rho * xr[i] * dot / dim;
    }
}
void rope_ev_rotary(double *x, const double *cos_t, const double *sin_t,
                    int batch, int seq_len, int n_heads, int head_dim,
                    int transpose)
{
    int half = head_dim / 2;
    double sg = transpose ? -1.0 : 1.0;
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < seq_len; t++)
            for (int h = 0; h < n_heads; h++) {
                double *xh = x + (((size_t)b * seq_len + t) * n_heads + h)
                                 * head_dim;
                const double *c = cos_t + (size_t)t * head_dim;
                const double *s = sin_t + (size_t)t * head_dim;
                for (int i = 0; i < half; i++) {
                    double x1 = xh[i], x2 = xh[i + half];
                    xh[i] = x1 * c[i] - sg * x2 * s[i];
                    xh[i + half] = x2 * c[i + half] + sg * x1 * s[i + half];
                }
            }
}
void rope_ev_attention(const double *q, const double *k, const double *v,
                       double *p, double *o, int batch, int seq_len,
                       int n_heads, int n_kv_heads, int head_dim)
{
    int rep = n_heads / n_kv_heads, T = seq_len, d = head_dim;
    double scale = 1.0 / sqrt((double)d);
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < n_heads; h++)
            for (int t = 0; t < T; t++) {
                const double *qt = q + (((size_t)b * T + t) * n_heads + h) * d;
                double *pt = p + (((size_t)b * n_heads + h) * T + t) * T;
                double *ot = o + (((size_t)b * T + t) * n_heads + h) * d;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= t; j++) {
                    const double *kj = k + (((size_t)b * T + j) * n_kv_heads + h / rep) * d;
                    double s = 0;
                    for (int e = 0; e < d; e++)
                        s += qt[e] * kj[e];
                    pt[j] = s * scale;
                    mx = pt[j] > mx ? pt[j] : mx;
                }
                for (int j = 0; j <= t; j++) {
                    pt[j] = exp(pt[j] - mx);
                    sum += pt[j];
                }
                for (int e = 0; e < d; e++)
                    ot[e] = 0;
                for (int j = 0; j <= t; j++) {
                    const double *vj = v + (((size_t)b * T + j) * n_kv_heads
                                            + h / rep) * d;
                    pt[j] /= sum;
                    for (int e = 0; e < d; e++)
                        ot[e] += pt[j] * vj[e];
                }
                for (int j = t + 1; j < T; j++)
                    pt[j] = 0;
            }
}
void rope_ev_attention_backward(const double *q, const double *k,
                                const double *v, const double *p,
                                const double *dout, double *dq,
                                double *dk, double *dv, int batch,
                                int seq_len, int n_heads, int n_kv_heads,
                                int head_dim)
{
    int rep = n_heads / n_kv_heads, T = seq_len, d = head_dim;
    double scale = 1.0 / sqrt((double)d);
    size_t nq = (size_t)batch * T * n_heads * d;
    size_t nkv = (size_t)batch * T * n_kv_heads * d;
    memset(dq, 0, nq * sizeof *dq);
    memset(dk, 0, nkv * sizeof *dk);
    memset(dv, 0, nkv * sizeof *dv);
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < n_heads; h++)
            for (int t = 0; t < T; t++) {
                size_t iq = (((size_t)b * T + t) * n_heads + h) * d;
                const double *pt = p + (((size_t)b * n_heads + h) * T + t) * T;
                const double *dot = dout + iq;
                double dp[ROPE_EV_MAX_LEN], acc = 0;
                for (int j = 0; j <= t; j++) {
                    size_t iv = (((size_t)b * T + j) * n_kv_heads + h / rep) * d;
                    double s = 0;
                    for (int e = 0; e < d; e++) {
                        s += dot[e] * v[iv + e];
                        dv[iv + e] += pt[j] * dot[e];
                    }
                    dp[j] = s;
                    acc += pt[j] * s;
                }
                for (int j = 0; j <= t; j++) {
                    size_t ik = (((size_t)b * T + j) * n_kv_heads + h / rep)
                                * d;
                    double ds = pt[j] * (dp[j] - acc) * scale;
                    for (int e = 0; e < d; e++) {
                        dq[iq + e] += ds * k[ik + e];
                        dk[ik + e] += ds * q[iq + e];
                    }
                }
            }
}
void rope_ev_swiglu(const double *g, const double *u, double *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
}

void rope_ev_swiglu_backward(const double *g, const double *u,
                             const double *dh, double *dg, double *du,
                             size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double sg = 1.0 / (1.0 + exp(-g[i]));
        du[i] = dh[i] * g[i] * sg;
        dg[i] = dh[i] * u[i] * sg * (1.0 + g[i] * (1.0 - sg));
    }
}
double rope_ev_cross_entropy(const double *logits, const int *targets,
                             int rows, int vocab, double *dlogits,
                             long *correct, long *counted)
{
    long n = 0, right = 0;
    double loss = 0;
    for (int r = 0; r < rows; r++)
        n += targets[r] >= 0;
    for (int r = 0; r < rows; r++) {
        const double *l = logits + (size_t)r * vocab;
        double *dl = dlogits ? dlogits + (size_t)r * vocab : NULL;
        double mx = l[0], z = 0;
        int arg = 0;
        for (int i = 1; i < vocab; i++)
            if (l[i] > mx) { mx = l[i]; arg = i; }
        for (int i = 0; i < vocab; i++)
            z += exp(l[i] - mx);
        if (targets[r] >= 0) {
            loss += log(z) + mx - l[targets[r]];
            right += arg == targets[r];
        }
        for (int i = 0; dl && i < vocab; i++)
            dl[i] = targets[r] < 0 ? 0
                : (exp(l[i] - mx) / z - (i == targets[r])) / (double)n;
    }
    if (correct) *correct += right;
    if (counted) *counted += n;
    return n > 0 ? loss / (double)n : 0.0;
}
/* W7.1 The model's plumbing */
void rope_ev_config_default(rope_ev_config *c, rope_ev_pe pe)
{
    c->vocab_size = 32;
    c->hidden_size = 64;
    c->num_hidden_layers = 2;
    c->num_attention_heads = 4;
    c->num_key_value_heads = 2;
    c->intermediate_size = 64 * ((64 * 8 / 3 + 63) / 64);
    c->pe = pe;
    c->rope_theta = 1e4;
    c->rms_norm_eps = 1e-5;
}
int rope_ev_init(rope_ev_model *m, const rope_ev_config *c, uint64_t seed)
{
    ev_layout L = ev_layout_of(c);
    memset(m, 0, sizeof *m);
    if (c->hidden_size % c->num_attention_heads != 0
        || c->num_attention_heads % c->num_key_value_heads != 0
        || (c->hidden_size / c->num_attention_heads) % 2 != 0)
        return -1;
    m->c = *c;
    m->head_dim = c->hidden_size / c->num_attention_heads;
    m->n_params = L.norm + (size_t)c->hidden_size;
    m->params = calloc(4 * m->n_params, sizeof(double));
    if (m->params == NULL)
        return -1;
    m->grads = m->params + m->n_params;
    m->adam_m = m->grads + m->n_params;
    m->adam_v = m->adam_m + m->n_params;
    {
        uint64_t st = seed;
        size_t D = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
        size_t kv = (size_t)m->head_dim * (size_t)c->num_key_value_heads;
        double *p = m->params;
        for (size_t i = 0; i < L.layer0; i++)
            p[i] = rope_gaussian(&st);
        for (int l = 0; l < c->num_hidden_layers; l++) {
            double *w = p + L.layer0 + (size_t)l * L.per_layer;
            const size_t off[7] = {L.wq, L.wk, L.wv, L.wo, L.wg, L.wu, L.wd};
            const size_t in[7] = {D, D, D, D, D, D, F};
            const size_t out[7] = {D, kv, kv, D, F, F, D};
            for (size_t i = 0; i < D; i++)
                w[L.attn_norm + i] = w[L.ffn_norm + i] = 1.0;
            for (int j = 0; j < 7; j++)
                for (size_t i = 0; i < in[j] * out[j]; i++)
                    w[off[j] + i] = (2 * rope_uniform(&st) - 1)
                                    / sqrt((double)in[j]);
        }
        for (size_t i = 0; i < D; i++)
            p[L.norm + i] = 1.0;
    }
    return 0;
}

void rope_ev_free(rope_ev_model *m)
{
    free(m->params);
    free(m->ws);
    memset(m, 0, sizeof *m);
}
void rope_ev_linear(const double *x, const double *w, double *y,
                    int rows, int in, int out)
{
    for (int r = 0; r < rows; r++) {
        double *yr = y + (size_t)r * out;
        for (int j = 0; j < out; j++)
            yr[j] = 0;
        for (int k = 0; k < in; k++) {
            double a = x[(size_t)r * in + k];
            const double *wk = w + (size_t)k * out;
            for (int j = 0; j < out; j++)
                yr[j] += a * wk[j];
        }
    }
}

void rope_ev_linear_backward(const double *x, const double *w,
                             const double *dy, double *dx, double *dw,
                             int rows, int in, int out)
{
    for (int r = 0; r < rows; r++) {
        const double *dyr = dy + (size_t)r * out;
        for (int k = 0; k < in; k++) {
            const double *wk = w + (size_t)k * out;
            double *dwk = dw + (size_t)k * out, s = 0;
            double a = x[(size_t)r * in + k];
            for (int j = 0; j < out; j++) {
                s += dyr[j] * wk[j];
                dwk[j] += a * dyr[j];
            }
            dx[(size_t)r * in + k] = s;
        }
    }
}
double rope_ev_forward(rope_ev_model *m, const int *tokens,
                       const int *targets, int batch, int seq_len,
                       const double *cos_t, const double *sin_t,
                       int backward, long *correct, long *counted)
{
    const rope_ev_config *c = &m->c;
    ev_layout L = ev_layout_of(c);
    int B = batch, T = seq_len, N = B * T, D = c->hidden_size;
    int V = c->vocab_size, F = c->intermediate_size;
    size_t ND = (size_t)N * D;
    size_t per = ev_layer_len(m, B, T);
    double *x, *t1, *t2, *xf, *inv, *logits, loss;
    if (T > ROPE_EV_MAX_LEN || rope_ev_reserve(m, B, T) != 0) return NAN;
    x = m->ws + per * c->num_hidden_layers;
    t1 = x + ND;
    t2 = t1 + 2 * ND + 2 * (size_t)N * F;
    xf = t2 + 2 * ND + 2 * (size_t)N * F;
    inv = xf + ND;
    logits = inv + N;
    for (int r = 0; r < N; r++)
        memcpy(x + (size_t)r * D, m->params + L.embed + (size_t)tokens[r] * D,
               (size_t)D * sizeof *x);
    if (c->pe == ROPE_EV_SINUSOIDAL) {
        rope_pe_table(t1, T, D, 10000.0);
        for (int r = 0; r < N; r++)
            for (int i = 0; i < D; i++)
                x[(size_t)r * D + i] += t1[(size_t)(r % T) * D + i];
    }
    for (int l = 0; l < c->num_hidden_layers; l++)
        ev_layer_forward(m, l, B, T, x, cos_t, sin_t, t1);
    rope_ev_rmsnorm(x, m->params + L.norm, xf, inv, N, D, c->rms_norm_eps);
    for (int r = 0; r < N; r++)
        for (int v = 0; v < V; v++) {
            const double *e = m->params + L.embed + (size_t)v * D;
            double s = 0;
            for (int i = 0; i < D; i++)
                s += xf[(size_t)r * D + i] * e[i];
            logits[(size_t)r * V + v] = s;
        }
    loss = rope_ev_cross_entropy(logits, targets, N, V,
                                 backward ? logits : NULL, correct, counted);
    if (backward) {
        double *g = m->grads, *dxf = t1, *dx = logits + (size_t)N * V;
        memset(g, 0, m->n_params * sizeof *g);
        for (int r = 0; r < N; r++)
            for (int i = 0; i < D; i++) {
                double s = 0;
                for (int v = 0; v < V; v++)
                    s += logits[(size_t)r * V + v]
                         * m->params[L.embed + (size_t)v * D + i];
                dxf[(size_t)r * D + i] = s;
            }
        for (int v = 0; v < V; v++)
            for (int r = 0; r < N; r++)
                for (int i = 0; i < D; i++)
                    g[L.embed + (size_t)v * D + i] += logits[(size_t)r * V + v]
                                                       * xf[(size_t)r * D + i];
        rope_ev_rmsnorm_backward(x, m->params + L.norm, inv, dxf, dx,
                                 g + L.norm, N, D);
        for (int l = c->num_hidden_layers - 1; l >= 0; l--)
            ev_layer_backward(m, l, B, T, dx, cos_t, sin_t, t1, t2);
        for (int r = 0; r < N; r++)
            for (int i = 0; i < D; i++)
                g[L.embed + (size_t)tokens[r] * D + i] += dx[(size_t)r * D + i];
    }
    return loss;
}
static size_t ev_workspace_len(const rope_ev_model *m, int B, int T)
{
    size_t N = (size_t)B * T, ND = N * (size_t)m->c.hidden_size;
    size_t F = (size_t)m->c.intermediate_size;
    size_t scratch = 2 * (2 * ND + 2 * N * F) + N * (size_t)m->c.vocab_size
                     + N + 3 * ND;
    return ev_layer_len(m, B, T) * (size_t)m->c.num_hidden_layers + scratch;
}

size_t rope_ev_workspace_bytes(const rope_ev_model *m, int batch,
                               int seq_len)
{
    return ev_workspace_len(m, batch, seq_len) * sizeof(double);
}

int rope_ev_reserve(rope_ev_model *m, int batch, int seq_len)
{
    size_t need = ev_workspace_len(m, batch, seq_len);
    if (need > m->ws_len) {
        double *ws = realloc(m->ws, need * sizeof *ws);
        if (ws == NULL) return ROPE_EV_ENOMEM;
        m->ws = ws;
        m->ws_len = need;
    }
    return 0;
}
double rope_ev_adamw_step(rope_ev_model *m, double lr, double clip)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
    double norm = 0, scale = 1;
    for (size_t i = 0; i < m->n_params; i++)
        norm += m->grads[i] * m->grads[i];
    norm = sqrt(norm);
    if (clip > 0 && norm > clip)
        scale = clip / norm;
    m->step++;
    double c1 = 1 - pow(b1, (double)m->step), c2 = 1 - pow(b2, (double)m->step);
    for (size_t i = 0; i < m->n_params; i++) {
        double g = m->grads[i] * scale;
        m->adam_m[i] = b1 * m->adam_m[i] + (1 - b1) * g;
        m->adam_v[i] = b2 * m->adam_v[i] + (1 - b2) * g * g;
        m->params[i] *= 1 - lr * wd;
        m->params[i] -= lr * (m->adam_m[i] / c1)
                        / (sqrt(m->adam_v[i] / c2) + eps);
    }
    return norm;
}
double rope_ev_lr(double lr, long step, long total)
{
    return lr * (0.1 + 0.45 * (1 + cos(3.14159265358979323846
                                       * (double)step / (double)total)));
}
void rope_ev_batch(rope_ev_task task, uint64_t *state, int *tokens,
                   int *targets, int batch, int seq_len, int vocab)
{
    int T = seq_len, half = seq_len / 2;
    for (int b = 0; b < batch; b++) {
        int *x = tokens + (size_t)b * T, *y = targets + (size_t)b * T;
        for (int t = 0; t < T; t++) {
            x[t] = (int)(rope_uniform(state) * vocab) % vocab;
            y[t] = -1;
        }
        if (task == ROPE_EV_COPY) {
            for (int t = half; t < T; t++)
                x[t] = x[t - half];
            for (int t = half - 1; t + 1 < T; t++)
                y[t] = x[t + 1];
        } else {
            for (int t = ROPE_EV_LAG_K; t < T; t++)
                y[t] = x[t - ROPE_EV_LAG_K];
        }
    }
}
int rope_ev_tables(double *cos_t, double *sin_t, int head_dim, long n,
                   double rope_theta, rope_ev_method method,
                   double factor, long original)
{
    rope_scaling s;
    double base = rope_theta;
    float *fc = malloc(2 * (size_t)n * head_dim * sizeof *fc);
    int err;
    if (fc == NULL) return -1;
    rope_scaling_defaults(&s);
    s.factor = factor;
    s.original_max_position_embeddings = original;
    s.seq_len = n;
    switch (method) {
    case ROPE_EV_PLAIN: s.rope_type = ROPE_SCALING_DEFAULT; break;
    case ROPE_EV_PI: s.rope_type = ROPE_SCALING_LINEAR; break;
    case ROPE_EV_NTK:
        s.rope_type = ROPE_SCALING_DEFAULT;
        base = rope_ntk_aware_base(rope_theta, factor, head_dim);
        break;
    case ROPE_EV_DYNAMIC:
        s.rope_type = ROPE_SCALING_DYNAMIC;
        s.max_position_embeddings = original;
        break;
    case ROPE_EV_YARN_MINIMIND:
        s.rope_type = ROPE_SCALING_YARN;
        s.yarn_flavor = ROPE_YARN_MINIMIND;
        break;
    case ROPE_EV_YARN_HF:
        s.rope_type = ROPE_SCALING_YARN;
        s.yarn_flavor = ROPE_YARN_HF;
        break;
    }
    err = rope_precompute_freqs_cis_scaled(fc, fc + (size_t)n * head_dim,
                                           head_dim, n, base, &s,
                                           ROPE_PRECISION_FLOAT);
    for (size_t i = 0; err == 0 && i < (size_t)n * head_dim; i++) {
        cos_t[i] = fc[i];
        sin_t[i] = fc[(size_t)n * head_dim + i];
    }
    free(fc);
    return err;
}
int rope_ev_train(rope_ev_model *m, rope_ev_task task, int seq_len,
                  int batch, long steps, double lr, uint64_t seed,
                  rope_ev_method method, double factor, long original,
                  FILE *progress, double *losses)
{
    size_t N = (size_t)batch * seq_len, tab = (size_t)seq_len * m->head_dim;
    int *tok = malloc(2 * N * sizeof *tok);
    double *cs = malloc(2 * tab * sizeof *cs);
    uint64_t st = seed ^ 0x5eedba7c4ULL;
    int rc = tok && cs ? rope_ev_reserve(m, batch, seq_len) : ROPE_EV_ENOMEM;
    if (rc == 0 && m->c.pe == ROPE_EV_ROPE
        && rope_ev_tables(cs, cs + tab, m->head_dim, seq_len,
                          m->c.rope_theta, method, factor, original) != 0)
        rc = ROPE_EV_ETABLES;
    for (long n = 0; rc == 0 && n < steps; n++) {
        rope_ev_batch(task, &st, tok, tok + N, batch, seq_len,
                      m->c.vocab_size);
        double loss = rope_ev_forward(m, tok, tok + N, batch, seq_len,
            m->c.pe == ROPE_EV_ROPE ? cs : NULL, cs + tab, 1, NULL, NULL);
        double norm = rope_ev_adamw_step(m, rope_ev_lr(lr, n, steps), 1.0);
        if (losses) losses[n] = loss;
        if (!isfinite(loss)) rc = ROPE_EV_EDIVERGED;
        if (progress && ((n + 1) % 50 == 0 || n + 1 == steps))
            fprintf(progress, "step %ld/%ld loss %.4f grad-norm %.3f\n",
                    n + 1, steps, loss, norm);
    }
    free(tok);
    free(cs);
    return rc;
}
int rope_ev_evaluate(rope_ev_model *m, rope_ev_task task, int seq_len,
                     int n_seqs, uint64_t seed, rope_ev_method method,
                     double factor, long original, double *accuracy,
                     double *loss)
{
    size_t N = 8 * (size_t)seq_len, tab = (size_t)seq_len * m->head_dim;
    int *tok = malloc(2 * N * sizeof *tok);
    double *cs = malloc(2 * tab * sizeof *cs), sum = 0;
    long right = 0, counted = 0;
    uint64_t st = seed;
    int rc = tok && cs ? rope_ev_reserve(m, 8, seq_len) : ROPE_EV_ENOMEM;
    if (rc == 0 && m->c.pe == ROPE_EV_ROPE
        && rope_ev_tables(cs, cs + tab, m->head_dim, seq_len,
                          m->c.rope_theta, method, factor, original) != 0)
        rc = ROPE_EV_ETABLES;
    for (int s = 0; rc == 0 && s < n_seqs; s += 8) {
        long before = counted;
        rope_ev_batch(task, &st, tok, tok + N, 8, seq_len, m->c.vocab_size);
        double l = rope_ev_forward(m, tok, tok + N, 8, seq_len,
            m->c.pe == ROPE_EV_ROPE ? cs : NULL, cs + tab, 0, &right,
            &counted);
        sum += l * (double)(counted - before);
    }
    *accuracy = counted ? (double)right / (double)counted : 0;
    *loss = counted ? sum / (double)counted : 0;
    free(tok);
    free(cs);
    return rc;
}
