/* W7.9 A float32 MiniMind block and its backward */
/* evidence-f32.c: one MiniMind block in float32, forward and backward */
#include "evidence-f32.h"
#include "attention.h"
#include "rotary.h"

#include <math.h>
#include <string.h>

int rope_f32_check_shape(const rope_f32_shape *s)
{
    if (s->batch < 1 || s->seq_len < 1 || s->hidden_size < 1
        || s->num_attention_heads < 1 || s->num_key_value_heads < 1
        || s->head_dim < 2 || s->head_dim % 2 != 0
        || s->head_dim > ROPE_ATTENTION_MAX_HEAD_DIM
        || s->intermediate_size < 1 || !(s->rms_norm_eps >= 0)
        || s->num_attention_heads % s->num_key_value_heads != 0)
        return -1;
    return 0;
}

rope_f32_layout rope_f32_block_layout(const rope_f32_shape *s)
{
    size_t D = (size_t)s->hidden_size, F = (size_t)s->intermediate_size;
    size_t qd = (size_t)s->num_attention_heads * s->head_dim;
    size_t kvd = (size_t)s->num_key_value_heads * s->head_dim;
    rope_f32_layout L;
    L.input_layernorm = 0;
    L.q_proj = D;
    L.k_proj = L.q_proj + qd * D;
    L.v_proj = L.k_proj + kvd * D;
    L.o_proj = L.v_proj + kvd * D;
    L.q_norm = L.o_proj + D * qd;
    L.k_norm = L.q_norm + (size_t)s->head_dim;
    L.post_attention_layernorm = L.k_norm + (size_t)s->head_dim;
    L.gate_proj = L.post_attention_layernorm + D;
    L.up_proj = L.gate_proj + F * D;
    L.down_proj = L.up_proj + F * D;
    L.n = L.down_proj + D * F;
    return L;
}
static size_t f32_acts_carve(const rope_f32_shape *s, float *buf,
                             rope_f32_acts *a)
{
    size_t R = (size_t)s->batch * s->seq_len, D = (size_t)s->hidden_size;
    size_t h = (size_t)s->num_attention_heads;
    size_t hkv = (size_t)s->num_key_value_heads, d = (size_t)s->head_dim;
    size_t F = (size_t)s->intermediate_size, at = 0;
    float **slot[] = {&a->x, &a->inv1, &a->xn1, &a->q_raw, &a->k_raw,
                      &a->inv_q, &a->inv_k, &a->q, &a->k, &a->v, &a->o,
                      &a->lse, &a->xm, &a->inv2, &a->xn2, &a->gate, &a->up,
                      &a->hid};
    size_t len[] = {R * D, R, R * D, R * h * d, R * hkv * d, R * h, R * hkv,
                    R * h * d, R * hkv * d, R * hkv * d, R * h * d, R * h,
                    R * D, R, R * D, R * F, R * F, R * F};
    for (size_t i = 0; i < sizeof len / sizeof *len; i++) {
        if (buf) *slot[i] = buf + at;
        at += len[i];
    }
    return at;
}

size_t rope_f32_acts_len(const rope_f32_shape *s)
{
    rope_f32_acts a;
    return f32_acts_carve(s, NULL, &a);
}

void rope_f32_acts_bind(const rope_f32_shape *s, float *buf,
                        rope_f32_acts *a)
{
    f32_acts_carve(s, buf, a);
}
void rope_f32_linear(const float *x, const float *w, float *y, int rows,
                     int in, int out)
{
    if (rope_f32_linear_fast(x, w, y, rows, in, out) == 0)
        return; /* the same sums, vectorised (section W7.10) */
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            const float *xr = x + (size_t)r * in, *wo = w + (size_t)o * in;
            float s = 0;
            for (int i = 0; i < in; i++)
                s += xr[i] * wo[i];
            y[(size_t)r * out + o] = s;
        }
}

void rope_f32_linear_backward(const float *x, const float *w,
                              const float *dy, float *dx, float *dw,
                              int rows, int in, int out)
{
    memset(dx, 0, (size_t)rows * in * sizeof *dx);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            float g = dy[(size_t)r * out + o];
            const float *xr = x + (size_t)r * in, *wo = w + (size_t)o * in;
            rope_f32_axpy(dx + (size_t)r * in, g, wo, in);
            rope_f32_axpy(dw + (size_t)o * in, g, xr, in);
        }
}
void rope_f32_rmsnorm(const float *x, const float *w, float *y, float *inv,
                      int rows, int dim, float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        float s = 0;
        for (int i = 0; i < dim; i++)
            s += xr[i] * xr[i];
        inv[r] = 1.0f / sqrtf(s / (float)dim + eps);
        for (int i = 0; i < dim; i++)
            y[(size_t)r * dim + i] = w[i] * (xr[i] * inv[r]);
    }
}

void rope_f32_rmsnorm_backward(const float *x, const float *w,
                               const float *inv, const float *dy, float *dx,
                               float *dw, int rows, int dim)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim, *dyr = dy + (size_t)r * dim;
        float rho = inv[r], dot = 0;
        for (int i = 0; i < dim; i++) {
            dot += dyr[i] * w[i] * xr[i];
            dw[i] += dyr[i] * xr[i] * rho;
        }
        float c = rho * rho * rho * dot / (float)dim;
        for (int i = 0; i < dim; i++)
            dx[(size_t)r * dim + i] = rho * w[i] * dyr[i] - c * xr[i];
    }
}
void rope_f32_rotary_backward(float *dx, const float *freqs_cos,
                              const float *freqs_sin, int batch,
                              int seq_len, int n_heads, int head_dim)
{
    int half = head_dim / 2;
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < seq_len; t++) {
            const float *c = freqs_cos + (size_t)t * head_dim;
            const float *s = freqs_sin + (size_t)t * head_dim;
            for (int h = 0; h < n_heads; h++) {
                float *g = dx + (((size_t)b * seq_len + t) * n_heads + h)
                                * head_dim;
                for (int i = 0; i < half; i++) {
                    float g1 = g[i], g2 = g[i + half];
                    g[i] = c[i] * g1 + s[i + half] * g2;
                    g[i + half] = c[i + half] * g2 - s[i] * g1;
                }
            }
        }
}
int rope_f32_attention(float *o, float *lse, const float *q, const float *k,
                       const float *v, int batch, int seq_len, int n_heads,
                       int n_kv_heads, int head_dim, int n_threads)
{
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.batch = batch;
    p.seq_len = p.kv_len = seq_len;
    p.n_heads = n_heads;
    p.n_kv_heads = n_kv_heads;
    p.head_dim = head_dim;
    p.causal = 1;
    p.n_threads = n_threads < 1 ? 1 : n_threads;
    p.lse = lse;
    return rope_attention(o, q, k, v, &p);
}
size_t rope_f32_attention_work_len(int batch, int seq_len, int n_heads,
                                   int head_dim)
{
    return (size_t)batch * seq_len * n_heads
           + 2 * (size_t)ROPE_F32_BR * ROPE_F32_BK
           + 2 * (size_t)ROPE_F32_BK * head_dim;
}
void rope_f32_attention_backward(const float *q, const float *k,
                                 const float *v, const float *o,
                                 const float *lse, const float *dout,
                                 float *dq, float *dk, float *dv,
                                 float *work, int batch, int seq_len,
                                 int n_heads, int n_kv_heads, int head_dim)
{
    int N = seq_len, d = head_dim, h = n_heads, hkv = n_kv_heads;
    int rep = h / hkv;
    float scale = 1.0f / sqrtf((float)d);
    size_t rows = (size_t)batch * N * h;
    float *Dc = work, *A = Dc + rows, *dS = A + ROPE_F32_BR * ROPE_F32_BK;
    float *dKt = dS + ROPE_F32_BR * ROPE_F32_BK, *dVt = dKt + ROPE_F32_BK * d;
    for (size_t r = 0; r < rows; r++) {
        float s = 0;
        for (int e = 0; e < d; e++)
            s += dout[r * d + e] * o[r * d + e];
        Dc[r] = s;
    }
    memset(dq, 0, rows * d * sizeof *dq);
    for (int b = 0; b < batch; b++)
        for (int G = 0; G < hkv; G++)
            for (int j0 = 0; j0 < N; j0 += ROPE_F32_BK) {
                int nk = N - j0 < ROPE_F32_BK ? N - j0 : ROPE_F32_BK;
                memset(dKt, 0, (size_t)ROPE_F32_BK * d * sizeof *dKt);
                memset(dVt, 0, (size_t)ROPE_F32_BK * d * sizeof *dVt);
                for (int H = G * rep; H < (G + 1) * rep; H++)
                    for (int i0 = j0 / ROPE_F32_BR * ROPE_F32_BR; i0 < N;
                         i0 += ROPE_F32_BR) {
                        int nq = N - i0 < ROPE_F32_BR ? N - i0 : ROPE_F32_BR;
                        for (int il = 0; il < nq; il++) {
                            size_t ri = ((size_t)b * N + i0 + il) * h + H;
                            const float *qi = q + ri * d, *doi = dout + ri * d;
                            for (int jl = 0; jl < nk; jl++) {
                                size_t rj = ((size_t)b * N + j0 + jl) * hkv + G;
                                const float *kj = k + rj * d, *vj = v + rj * d;
                                float s = 0, da = 0, a = 0;
                                if (j0 + jl <= i0 + il) { /* step 1: the key is visible */
                                    for (int e = 0; e < d; e++)
                                        s += qi[e] * kj[e];
                                    a = expf(s * scale - lse[ri]);
                                    for (int e = 0; e < d; e++) /* step 3: a-bar */
                                        da += doi[e] * vj[e];
                                }
                                A[il * ROPE_F32_BK + jl] = a;
                                dS[il * ROPE_F32_BK + jl] = a * (da - Dc[ri]);
                            }
                        }
                        for (int il = 0; il < nq; il++) {
                            size_t ri = ((size_t)b * N + i0 + il) * h + H;
                            const float *qi = q + ri * d, *doi = dout + ri * d;
                            float *dqi = dq + ri * d;
                            for (int jl = 0; jl < nk; jl++) {
                                size_t rj = ((size_t)b * N + j0 + jl) * hkv + G;
                                const float *kj = k + rj * d;
                                float a = A[il * ROPE_F32_BK + jl];
                                float ds = dS[il * ROPE_F32_BK + jl] * scale;
                                float *dkj = dKt + (size_t)jl * d, *dvj = dVt + (size_t)jl * d;
                                for (int e = 0; e < d; e++) {
                                    dvj[e] += a * doi[e];
                                    dqi[e] += ds * kj[e];
                                    dkj[e] += ds * qi[e];
                                }
                            }
                        }
                    }
                for (int jl = 0; jl < nk; jl++) {
                    size_t rj = ((size_t)b * N + j0 + jl) * hkv + G;
                    memcpy(dk + rj * d, dKt + (size_t)jl * d, (size_t)d * sizeof *dk);
                    memcpy(dv + rj * d, dVt + (size_t)jl * d, (size_t)d * sizeof *dv);
                }
            }
}
void rope_f32_swiglu(const float *g, const float *u, float *hid, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hid[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

void rope_f32_swiglu_backward(const float *g, const float *u,
                              const float *dhid, float *dg, float *du,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float sg = 1.0f / (1.0f + expf(-g[i]));
        du[i] = dhid[i] * g[i] * sg;
        dg[i] = dhid[i] * u[i] * sg * (1.0f + g[i] * (1.0f - sg));
    }
}
void rope_f32_embed(const int *tokens, const float *emb, float *x, int rows,
                    int dim)
{
    for (int r = 0; r < rows; r++)
        memcpy(x + (size_t)r * dim, emb + (size_t)tokens[r] * dim,
               (size_t)dim * sizeof *x);
}

void rope_f32_embed_backward(const int *tokens, const float *dx,
                             float *demb, int rows, int dim)
{
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < dim; i++)
            demb[(size_t)tokens[r] * dim + i] += dx[(size_t)r * dim + i];
}
double rope_f32_head_loss(const float *xf, const float *emb,
                          const int *targets, int rows, int vocab, int dim,
                          float *logits, float *dxf, float *demb)
{
    long n = 0;
    double loss = 0;
    rope_f32_linear(xf, emb, logits, rows, dim, vocab);
    for (int r = 0; r < rows; r++)
        n += targets[r] >= 0;
    for (int r = 0; r < rows; r++) {
        float *l = logits + (size_t)r * vocab, mx = l[0], z = 0;
        for (int i = 1; i < vocab; i++)
            mx = l[i] > mx ? l[i] : mx;
        for (int i = 0; i < vocab; i++)
            z += expf(l[i] - mx);
        if (targets[r] >= 0)
            loss += (double)logf(z) + mx - l[targets[r]];
        for (int i = 0; dxf && i < vocab; i++) /* l becomes its gradient */
            l[i] = targets[r] < 0 ? 0.0f
                   : (expf(l[i] - mx) / z - (float)(i == targets[r]))
                         / (float)n;
    }
    if (dxf)
        rope_f32_linear_backward(xf, emb, logits, dxf, demb, rows, dim, vocab);
    return n > 0 ? loss / (double)n : 0.0;
}
int rope_f32_block_forward(const rope_f32_shape *s, const float *w, float *x,
                           const float *freqs_cos, const float *freqs_sin,
                           const rope_f32_acts *a)
{
    rope_f32_layout L = rope_f32_block_layout(s);
    int R = s->batch * s->seq_len, D = s->hidden_size;
    int h = s->num_attention_heads, hkv = s->num_key_value_heads;
    int d = s->head_dim, F = s->intermediate_size, rc;
    float eps = s->rms_norm_eps;
    size_t RD = (size_t)R * D;
    if (rope_f32_check_shape(s) != 0)
        return -1;
    memcpy(a->x, x, RD * sizeof *x);
    rope_f32_rmsnorm(x, w + L.input_layernorm, a->xn1, a->inv1, R, D, eps);
    rope_f32_linear(a->xn1, w + L.q_proj, a->q_raw, R, D, h * d);
    rope_f32_linear(a->xn1, w + L.k_proj, a->k_raw, R, D, hkv * d);
    rope_f32_linear(a->xn1, w + L.v_proj, a->v, R, D, hkv * d);
    rope_f32_rmsnorm(a->q_raw, w + L.q_norm, a->q, a->inv_q, R * h, d, eps);
    rope_f32_rmsnorm(a->k_raw, w + L.k_norm, a->k, a->inv_k, R * hkv, d, eps);
    if (freqs_cos)
        rope_apply_rotary_pos_emb(a->q, a->k, freqs_cos, freqs_sin, s->batch,
                                  s->seq_len, h, hkv, d, 0, ROPE_PAIRING_HALF);
    rc = rope_f32_attention(a->o, a->lse, a->q, a->k, a->v, s->batch,
                            s->seq_len, h, hkv, d, s->n_threads);
    if (rc != 0)
        return rc;
    rope_f32_linear(a->o, w + L.o_proj, a->xm, R, h * d, D);
    for (size_t i = 0; i < RD; i++)
        a->xm[i] += a->x[i];
    rope_f32_rmsnorm(a->xm, w + L.post_attention_layernorm, a->xn2, a->inv2,
                     R, D, eps);
    rope_f32_linear(a->xn2, w + L.gate_proj, a->gate, R, D, F);
    rope_f32_linear(a->xn2, w + L.up_proj, a->up, R, D, F);
    rope_f32_swiglu(a->gate, a->up, a->hid, (size_t)R * F);
    rope_f32_linear(a->hid, w + L.down_proj, x, R, F, D);
    for (size_t i = 0; i < RD; i++)
        x[i] += a->xm[i];
    return 0;
}
size_t rope_f32_work_len(const rope_f32_shape *s)
{
    size_t R = (size_t)s->batch * s->seq_len, D = (size_t)s->hidden_size;
    size_t hd = (size_t)s->num_attention_heads * s->head_dim;
    size_t kvd = (size_t)s->num_key_value_heads * s->head_dim;
    size_t F = (size_t)s->intermediate_size;
    size_t mlp = 3 * R * F, att = 3 * R * hd + 3 * R * kvd;
    return 2 * R * D + (mlp > att ? mlp : att)
           + rope_f32_attention_work_len(s->batch, s->seq_len,
                                         s->num_attention_heads, s->head_dim);
}

void rope_f32_block_backward(const rope_f32_shape *s, const float *w,
                             const rope_f32_acts *a, float *dx, float *dw,
                             const float *freqs_cos, const float *freqs_sin,
                             float *work)
{
    rope_f32_layout L = rope_f32_block_layout(s);
    int R = s->batch * s->seq_len, D = s->hidden_size;
    int h = s->num_attention_heads, hkv = s->num_key_value_heads;
    int d = s->head_dim, F = s->intermediate_size;
    size_t RD = (size_t)R * D;
    float *dn = work, *dn2 = dn + RD, *t = dn2 + RD;
    {
        float *dh = t, *dg = t + (size_t)R * F, *du = dg + (size_t)R * F;
        rope_f32_linear_backward(a->hid, w + L.down_proj, dx, dh,
                                 dw + L.down_proj, R, F, D);
        rope_f32_swiglu_backward(a->gate, a->up, dh, dg, du, (size_t)R * F);
        rope_f32_linear_backward(a->xn2, w + L.gate_proj, dg, dn,
                                 dw + L.gate_proj, R, D, F);
        rope_f32_linear_backward(a->xn2, w + L.up_proj, du, dn2, dw + L.up_proj,
                                 R, D, F);
        for (size_t i = 0; i < RD; i++)
            dn[i] += dn2[i];
        rope_f32_rmsnorm_backward(a->xm, w + L.post_attention_layernorm, a->inv2,
                                  dn, dn2, dw + L.post_attention_layernorm, R, D);
        for (size_t i = 0; i < RD; i++)
            dx[i] += dn2[i];
    }
    {
        size_t hd = (size_t)R * h * d, kvd = (size_t)R * hkv * d;
        float *dout = t, *dq = dout + hd, *dqn = dq + hd;
        float *dk = dqn + hd, *dkn = dk + kvd, *dv = dkn + kvd;
        float *aw = dv + kvd;
        rope_f32_linear_backward(a->o, w + L.o_proj, dx, dout, dw + L.o_proj, R,
                                 h * d, D);
        rope_f32_attention_backward(a->q, a->k, a->v, a->o, a->lse, dout, dq, dk,
                                    dv, aw, s->batch, s->seq_len, h, hkv, d);
        if (freqs_cos) {
            rope_f32_rotary_backward(dq, freqs_cos, freqs_sin, s->batch,
                                     s->seq_len, h, d);
            rope_f32_rotary_backward(dk, freqs_cos, freqs_sin, s->batch,
                                     s->seq_len, hkv, d);
        }
        rope_f32_rmsnorm_backward(a->q_raw, w + L.q_norm, a->inv_q, dq, dqn,
                                  dw + L.q_norm, R * h, d);
        rope_f32_rmsnorm_backward(a->k_raw, w + L.k_norm, a->inv_k, dk, dkn,
                                  dw + L.k_norm, R * hkv, d);
        rope_f32_linear_backward(a->xn1, w + L.q_proj, dqn, dn, dw + L.q_proj, R,
                                 D, h * d);
        rope_f32_linear_backward(a->xn1, w + L.k_proj, dkn, dn2, dw + L.k_proj, R,
                                 D, hkv * d);
        for (size_t i = 0; i < RD; i++)
            dn[i] += dn2[i];
        rope_f32_linear_backward(a->xn1, w + L.v_proj, dv, dn2, dw + L.v_proj, R,
                                 D, hkv * d);
        for (size_t i = 0; i < RD; i++)
            dn[i] += dn2[i];
        rope_f32_rmsnorm_backward(a->x, w + L.input_layernorm, a->inv1, dn, dn2,
                                  dw + L.input_layernorm, R, D);
        for (size_t i = 0; i < RD; i++)
            dx[i] += dn2[i];
    }
}
