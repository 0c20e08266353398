/* W7.9 A float32 MiniMind block and its backward */
/* test-evidence-f32.c: the float32 block's backward (workshop W7) */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

typedef void (*f32_ref_fn)(const double *x, void *ctx, double *y);

static void f32_check(const char *what, f32_ref_fn f, void *ctx, double *x,
                      size_t n, size_t m, const double *c, const float *g,
                      double chain)
{
    const double h = 1e-4, u = FLT_EPSILON / 2;
    double *y = malloc(4 * m * sizeof *y), *d0 = malloc(3 * n * sizeof *d0);
    double *tfd = d0 + n, *A = tfd + n, amax = 0;
    ck_assert(y != NULL && d0 != NULL);
    for (size_t j = 0; j < n; j++) {
        double x0 = x[j], d[2], mag = 0;
        for (int s = 0; s < 2; s++) {
            double *up = y + 2 * m * s, *dn = up + m;
            x[j] = x0 + h * (s + 1);
            f(x, ctx, up);
            x[j] = x0 - h * (s + 1);
            f(x, ctx, dn);
            d[s] = 0;
            for (size_t i = 0; i < m; i++) {
                d[s] += c[i] * (up[i] - dn[i]) / (2 * h * (s + 1));
                mag = fmax(mag, fmax(fabs(c[i] * up[i]), fabs(c[i] * dn[i])));
            }
        }
        x[j] = x0;
        A[j] = 0; /* alpha_j */
        for (size_t i = 0; i < m; i++)
            A[j] += fabs(c[i] * (y[i] - y[m + i])) / (2 * h);
        amax = fmax(amax, A[j]);
        d0[j] = d[0];
        tfd[j] = 2 * fabs(d[1] - d[0]) + 64 * DBL_EPSILON * mag * (double)m / h;
    }
    for (size_t j = 0; j < n; j++) {
        double tol = tfd[j] + chain * u * amax;
        ck_assert_msg(fabs(d0[j] - g[j]) <= tol,
                      "%s: component %zu: float32 backward %.9g, central "
                      "difference %.9g, allowed %.3g (C eps32 max alpha = %.3g)",
                      what, j, (double)g[j], d0[j], tol, chain * u * amax);
    }
    free(y);
    free(d0);
}

static void f32_fill(float *x, size_t n, uint64_t seed, double scale)
{
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * (2 * rope_uniform(&st) - 1));
}

static double *f32_to_double(const float *x, size_t n)
{
    double *y = malloc(n * sizeof *y);
    ck_assert(y != NULL);
    for (size_t i = 0; i < n; i++)
        y[i] = x[i];
    return y;
}
typedef struct f32_ctx {
    int rows, dim, which; /* shape; which input varies */
    const double *a, *b, *cs, *sn; /* the inputs held fixed, tables */
    int batch, seq, heads, kv_heads, head_dim;
} f32_ctx;

static void f32_rms_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    double inv[64];
    if (c->which == 0) rope_ev_rmsnorm(x, c->a, y, inv, c->rows, c->dim, (double)1e-5f);
    else rope_ev_rmsnorm(c->a, x, y, inv, c->rows, c->dim, (double)1e-5f);
}
static void f32_rot_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    size_t n = (size_t)c->batch * c->seq * c->heads * c->head_dim;
    memcpy(y, x, n * sizeof *y);
    rope_ev_rotary(y, c->cs, c->sn, c->batch, c->seq, c->heads, c->head_dim,
                   0);
}

static void f32_qnorm_rope_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    double inv[256];
    int rows = c->batch * c->seq * c->heads;
    if (c->which == 0)
        rope_ev_rmsnorm(x, c->a, y, inv, rows, c->head_dim, (double)1e-5f);
    else
        rope_ev_rmsnorm(c->a, x, y, inv, rows, c->head_dim, (double)1e-5f);
    rope_ev_rotary(y, c->cs, c->sn, c->batch, c->seq, c->heads, c->head_dim,
                   0);
}
enum { F32_AB = 2, F32_AT = 37, F32_AH = 4, F32_AHKV = 2, F32_AD = 8 };
enum { F32_AQ = F32_AB * F32_AT * F32_AH * F32_AD,
       F32_AKV = F32_AB * F32_AT * F32_AHKV * F32_AD };

static void f32_att_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    static double p[F32_AB * F32_AH * F32_AT * F32_AT];
    const double *q = c->which == 0 ? x : c->a;
    const double *k = c->which == 1 ? x : c->b;
    const double *v = c->which == 2 ? x : c->b + F32_AKV;
    rope_ev_attention(q, k, v, p, y, F32_AB, F32_AT, F32_AH, F32_AHKV,
                      F32_AD);
}
static void f32_att_abs(const double *q, const double *k, const double *v,
                        const double *p, const double *o, const double *dout,
                        double *aq, double *ak, double *av, int B, int T,
                        int H, int HKV, int D)
{
    int rep = H / HKV;
    double scale = 1 / sqrt((double)D);
    memset(aq, 0, (size_t)B * T * H * D * sizeof *aq);
    memset(ak, 0, (size_t)B * T * HKV * D * sizeof *ak);
    memset(av, 0, (size_t)B * T * HKV * D * sizeof *av);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                size_t ri = ((size_t)b * T + i) * H + h;
                double dd = 0;
                for (int e = 0; e < D; e++)
                    dd += fabs(dout[ri * D + e] * o[ri * D + e]);
                for (int j = 0; j <= i; j++) {
                    size_t rj = ((size_t)b * T + j) * HKV + h / rep;
                    double a = p[(((size_t)b * H + h) * T + i) * T + j], da = 0;
                    for (int e = 0; e < D; e++)
                        da += fabs(dout[ri * D + e] * v[rj * D + e]);
                    double ds = a * (da + dd) * scale;
                    for (int e = 0; e < D; e++) {
                        av[rj * D + e] += a * fabs(dout[ri * D + e]);
                        aq[ri * D + e] += ds * fabs(k[rj * D + e]);
                        ak[rj * D + e] += ds * fabs(q[ri * D + e]);
                    }
                }
            }
}
static void f32_swiglu_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    if (c->which == 0) rope_ev_swiglu(x, c->a, y, (size_t)c->rows);
    else rope_ev_swiglu(c->a, x, y, (size_t)c->rows);
}

static const int f32_targets[3] = {2, -1, 6};

static void f32_head_ref(const double *x, void *vc, double *y)
{
    f32_ctx *c = vc;
    const double *xf = c->which == 0 ? x : c->a;
    const double *emb = c->which == 1 ? x : c->a;
    double logits[3 * 7];
    for (int r = 0; r < 3; r++)
        for (int t = 0; t < 7; t++) {
            double s = 0;
            for (int i = 0; i < c->dim; i++)
                s += xf[r * c->dim + i] * emb[t * c->dim + i];
            logits[r * 7 + t] = s;
        }
    y[0] = rope_ev_cross_entropy(logits, f32_targets, 3, 7, NULL, NULL, NULL);
}
enum { F32_MB = 2, F32_MT = 20, F32_MD = 8, F32_MH = 2, F32_MHKV = 1,
       F32_Md = 4, F32_MF = 12, F32_MV = 7, F32_MR = F32_MB * F32_MT };

typedef struct f32_model_ctx {
    rope_f32_shape s;
    rope_f32_layout L;
    const int *tok;
    const double *cs, *sn;
} f32_model_ctx;

static void f32_ref_linear(const double *x, const double *w, double *y,
                           int rows, int in, int out)
{
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double s = 0;
            for (int i = 0; i < in; i++)
                s += x[r * in + i] * w[o * in + i];
            y[r * out + o] = s;
        }
}
static void f32_model_ref(const double *x, void *vc, double *y)
{
    f32_model_ctx *c = vc;
    enum { R = F32_MR, D = F32_MD, QD = F32_MH * F32_Md,
           KD = F32_MHKV * F32_Md, F = F32_MF };
    static double h[R * D], n1[R * D], q[R * QD], k[R * KD], v[R * KD];
    static double qn[R * QD], kn[R * KD], p[F32_MB * F32_MH * F32_MT * F32_MT];
    static double o[R * QD], t[R * D], g[R * F], up[R * F], hid[R * F];
    static double inv[R * F32_MH], logits[R * F32_MV];
    const double *emb = x, *w = x + F32_MV * D, *wn = w + c->L.n;
    for (int r = 0; r < R; r++)
        memcpy(h + r * D, emb + c->tok[r] * D, D * sizeof *h);
    rope_ev_rmsnorm(h, w + c->L.input_layernorm, n1, inv, R, D, (double)1e-5f);
    f32_ref_linear(n1, w + c->L.q_proj, q, R, D, QD);
    f32_ref_linear(n1, w + c->L.k_proj, k, R, D, KD);
    f32_ref_linear(n1, w + c->L.v_proj, v, R, D, KD);
    rope_ev_rmsnorm(q, w + c->L.q_norm, qn, inv, R * F32_MH, F32_Md, (double)1e-5f);
    rope_ev_rmsnorm(k, w + c->L.k_norm, kn, inv, R * F32_MHKV, F32_Md, (double)1e-5f);
    rope_ev_rotary(qn, c->cs, c->sn, F32_MB, F32_MT, F32_MH, F32_Md, 0);
    rope_ev_rotary(kn, c->cs, c->sn, F32_MB, F32_MT, F32_MHKV, F32_Md, 0);
    rope_ev_attention(qn, kn, v, p, o, F32_MB, F32_MT, F32_MH, F32_MHKV, F32_Md);
    f32_ref_linear(o, w + c->L.o_proj, t, R, QD, D);
    for (int i = 0; i < R * D; i++) h[i] += t[i];
    rope_ev_rmsnorm(h, w + c->L.post_attention_layernorm, n1, inv, R, D, (double)1e-5f);
    f32_ref_linear(n1, w + c->L.gate_proj, g, R, D, F);
    f32_ref_linear(n1, w + c->L.up_proj, up, R, D, F);
    rope_ev_swiglu(g, up, hid, (size_t)R * F);
    f32_ref_linear(hid, w + c->L.down_proj, t, R, F, D);
    for (int i = 0; i < R * D; i++) h[i] += t[i];
    rope_ev_rmsnorm(h, wn, n1, inv, R, D, (double)1e-5f);
    f32_ref_linear(n1, emb, logits, R, D, F32_MV);
    y[0] = rope_ev_cross_entropy(logits, c->tok + R, R, F32_MV, NULL, NULL,
                                 NULL);
}
START_TEST(test_f32_rmsnorm_backward)
{
    enum { R = 3, DIM = 16 };
    float x[R * DIM], w[DIM], c[R * DIM], y[R * DIM], inv[R];
    float dx[R * DIM], dw[DIM] = {0};
    f32_fill(x, R * DIM, 31, 1.0);
    f32_fill(w, DIM, 32, 1.0);
    f32_fill(c, R * DIM, 33, 1.0);
    rope_f32_rmsnorm(x, w, y, inv, R, DIM, 1e-5f);
    rope_f32_rmsnorm_backward(x, w, inv, c, dx, dw, R, DIM);
    double *xd = f32_to_double(x, R * DIM), *wd = f32_to_double(w, DIM);
    double *cd = f32_to_double(c, R * DIM);
    f32_ctx ctx = {R, DIM, 0, wd, NULL, NULL, NULL, 0, 0, 0, 0, 0};
    f32_check("rmsnorm, input", f32_rms_ref, &ctx, xd, R * DIM, R * DIM, cd,
              dx, 4 * DIM + 16);
    ctx.which = 1; ctx.a = xd;
    f32_check("rmsnorm, weight", f32_rms_ref, &ctx, wd, DIM, R * DIM, cd, dw,
              4 * DIM + 16);
    free(xd); free(wd); free(cd);
}
END_TEST
START_TEST(test_f32_rotary_qk_norm_backward)
{
    enum { B = 2, T = 5, H = 3, D = 8, N = B * T * H * D };
    double cs[T * D], sn[T * D];
    float fc[T * D], fs[T * D], x[N], c[N], g[N], y[N], dx[N];
    float w[D], dw[D] = {0}, inv[B * T * H];
    ck_assert_int_eq(rope_ev_tables(cs, sn, D, T, 1e4, ROPE_EV_YARN_HF, 4.0,
                                    2), 0);
    ck_assert(fabs(cs[0] - 1.0) > 1e-3); /* the factor is in the table */
    for (int i = 0; i < T * D; i++) { fc[i] = (float)cs[i]; fs[i] = (float)sn[i]; }
    f32_fill(x, N, 41, 1.0);
    f32_fill(c, N, 42, 1.0);
    f32_fill(w, D, 43, 1.0);
    double *xd = f32_to_double(x, N), *cd = f32_to_double(c, N);
    double *wd = f32_to_double(w, D);
    f32_ctx ctx = {0, 0, 0, wd, NULL, cs, sn, B, T, H, 0, D};
    memcpy(g, c, sizeof g);
    rope_f32_rotary_backward(g, fc, fs, B, T, H, D);
    f32_check("rotary", f32_rot_ref, &ctx, xd, N, N, cd, g, 8);
    rope_f32_rmsnorm(x, w, y, inv, B * T * H, D, 1e-5f);
    memcpy(g, c, sizeof g);
    rope_f32_rotary_backward(g, fc, fs, B, T, H, D);
    rope_f32_rmsnorm_backward(x, w, inv, g, dx, dw, B * T * H, D);
    f32_check("q_norm then RoPE, input", f32_qnorm_rope_ref, &ctx, xd, N, N,
              cd, dx, 4 * D + 24);
    ctx.which = 1; ctx.a = xd;
    f32_check("q_norm then RoPE, weight", f32_qnorm_rope_ref, &ctx, wd, D, N,
              cd, dw, 4 * D + 24);
    free(xd); free(cd); free(wd);
}
END_TEST
START_TEST(test_f32_attention_backward)
{
    static float q[F32_AQ], kv[2 * F32_AKV], c[F32_AQ], o[F32_AQ];
    static float lse[F32_AB * F32_AT * F32_AH], dq[F32_AQ];
    static float dk[F32_AKV], dv[F32_AKV];
    float *work = malloc(rope_f32_attention_work_len(F32_AB, F32_AT, F32_AH,
                                                     F32_AD) * sizeof *work);
    ck_assert(F32_AT > 2 * ROPE_F32_BK && F32_AT % ROPE_F32_BK != 0
              && F32_AT % ROPE_F32_BR != 0);
    f32_fill(q, F32_AQ, 51, 1.5);
    f32_fill(kv, 2 * F32_AKV, 52, 1.5);
    f32_fill(c, F32_AQ, 53, 1.0);
    ck_assert_int_eq(rope_f32_attention(o, lse, q, kv, kv + F32_AKV, F32_AB,
                                        F32_AT, F32_AH, F32_AHKV, F32_AD, 1), 0);
    rope_f32_attention_backward(q, kv, kv + F32_AKV, o, lse, c, dq, dk, dv,
                                work, F32_AB, F32_AT, F32_AH, F32_AHKV, F32_AD);
    double *qd = f32_to_double(q, F32_AQ), *kvd = f32_to_double(kv, 2 * F32_AKV);
    double *cd = f32_to_double(c, F32_AQ), C = 2 * F32_AT + 6 * F32_AD + 32;
    f32_ctx ctx = {0, 0, 0, qd, kvd, NULL, NULL, 0, 0, 0, 0, 0};
    f32_check("attention, q", f32_att_ref, &ctx, qd, F32_AQ, F32_AQ, cd, dq, C);
    ctx.which = 1;
    f32_check("attention, k", f32_att_ref, &ctx, kvd, F32_AKV, F32_AQ, cd, dk, C);
    ctx.which = 2;
    f32_check("attention, v", f32_att_ref, &ctx, kvd + F32_AKV, F32_AKV, F32_AQ,
              cd, dv, C);
    free(qd); free(kvd); free(cd); free(work);
}
END_TEST
START_TEST(test_f32_attention_tiled_vs_naive)
{
    enum { B = 1, T = 150, H = 4, HKV = 2, D = 16 };
    enum { NQ = B * T * H * D, NKV = B * T * HKV * D };
    static float q[NQ], k[NKV], v[NKV], c[NQ], o[NQ], lse[B * T * H];
    static float dq[NQ], dk[NKV], dv[NKV];
    static double p[B * H * T * T], od[NQ], gq[NQ], gk[NKV], gv[NKV];
    static double aq[NQ], ak[NKV], av[NKV];
    float *work = malloc(rope_f32_attention_work_len(B, T, H, D) * sizeof *work);
    f32_fill(q, NQ, 61, 1.5);
    f32_fill(k, NKV, 62, 1.5);
    f32_fill(v, NKV, 63, 1.5);
    f32_fill(c, NQ, 64, 1.0);
    ck_assert_int_eq(rope_f32_attention(o, lse, q, k, v, B, T, H, HKV, D, 1), 0);
    rope_f32_attention_backward(q, k, v, o, lse, c, dq, dk, dv, work, B, T, H,
                                HKV, D);
    double *qd = f32_to_double(q, NQ), *kd = f32_to_double(k, NKV);
    double *vd = f32_to_double(v, NKV), *cd = f32_to_double(c, NQ);
    rope_ev_attention(qd, kd, vd, p, od, B, T, H, HKV, D);
    rope_ev_attention_backward(qd, kd, vd, p, cd, gq, gk, gv, B, T, H, HKV, D);
    f32_att_abs(qd, kd, vd, p, od, cd, aq, ak, av, B, T, H, HKV, D);
    const double C = 2 * T + 6 * D + 32, u = FLT_EPSILON / 2;
    const struct { const char *what; const float *g; const double *ref, *abs;
                   int n; } arr[3] = {{"dq", dq, gq, aq, NQ},
                                      {"dk", dk, gk, ak, NKV},
                                      {"dv", dv, gv, av, NKV}};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < arr[a].n; i++)
            ck_assert_msg(fabs(arr[a].g[i] - arr[a].ref[i])
                              <= C * u * arr[a].abs[i],
                          "tiled vs naive, %s[%d]: %.9g vs %.9g, allowed %.3g",
                          arr[a].what, i, (double)arr[a].g[i], arr[a].ref[i],
                          C * u * arr[a].abs[i]);
    free(qd); free(kd); free(vd); free(cd); free(work);
}
END_TEST
START_TEST(test_f32_swiglu_head_backward)
{
    float g[16], u[16], c[16], dg[16], du[16];
    f32_fill(g, 16, 71, 3.0);
    f32_fill(u, 16, 72, 3.0);
    f32_fill(c, 16, 73, 1.0);
    rope_f32_swiglu_backward(g, u, c, dg, du, 16);
    double *gd = f32_to_double(g, 16), *ud = f32_to_double(u, 16);
    double *cd = f32_to_double(c, 16), one = 1;
    f32_ctx ctx = {16, 0, 0, ud, NULL, NULL, NULL, 0, 0, 0, 0, 0};
    f32_check("swiglu, gate", f32_swiglu_ref, &ctx, gd, 16, 16, cd, dg, 16);
    ctx.which = 1; ctx.a = gd;
    f32_check("swiglu, up", f32_swiglu_ref, &ctx, ud, 16, 16, cd, du, 16);
    enum { DIM = 8, V = 7 };
    float xf[3 * DIM], emb[V * DIM], logits[3 * V], dxf[3 * DIM];
    float demb[V * DIM] = {0};
    f32_fill(xf, 3 * DIM, 74, 1.0);
    f32_fill(emb, V * DIM, 75, 1.0);
    rope_f32_head_loss(xf, emb, f32_targets, 3, V, DIM, logits, dxf, demb);
    for (int i = DIM; i < 2 * DIM; i++)
        ck_assert(dxf[i] == 0); /* the row without a target */
    double *xd = f32_to_double(xf, 3 * DIM), *ed = f32_to_double(emb, V * DIM);
    f32_ctx hc = {3, DIM, 0, ed, NULL, NULL, NULL, 0, 0, 0, 0, 0};
    f32_check("tied head, hidden", f32_head_ref, &hc, xd, 3 * DIM, 1, &one,
              dxf, 4 * DIM + 4 * V + 16);
    hc.which = 1; hc.a = xd;
    f32_check("tied head, embedding", f32_head_ref, &hc, ed, V * DIM, 1, &one,
              demb, 4 * DIM + 4 * V + 16);
    free(gd); free(ud); free(cd); free(xd); free(ed);
}
END_TEST
START_TEST(test_f32_block_backward)
{
    enum { R = F32_MR, D = F32_MD };
    f32_model_ctx c;
    int tok[2 * R];
    uint64_t st = 81;
    double cs[F32_MT * F32_Md], sn[F32_MT * F32_Md], one = 1;
    float fc[F32_MT * F32_Md], fs[F32_MT * F32_Md];
    c.s = (rope_f32_shape){F32_MB, F32_MT, D, F32_MH, F32_MHKV, F32_Md, F32_MF,
                           1e-5f, 1};
    ck_assert_int_eq(rope_f32_check_shape(&c.s), 0);
    rope_f32_shape bad = c.s;
    bad.num_key_value_heads = 3; /* 2 query heads do not split into 3 */
    ck_assert_int_eq(rope_f32_check_shape(&bad), -1);
    bad = c.s;
    bad.head_dim = 3; /* the half pairing needs an even d */
    ck_assert_int_eq(rope_f32_check_shape(&bad), -1);
    ck_assert((int)F32_MT > (int)ROPE_F32_BK);
    c.L = rope_f32_block_layout(&c.s);
    size_t np = (size_t)F32_MV * D + c.L.n + D;
    rope_ev_batch(ROPE_EV_LAG, &st, tok, tok + R, F32_MB, F32_MT, F32_MV);
    ck_assert_int_eq(rope_ev_tables(cs, sn, F32_Md, F32_MT, 1e4,
                                    ROPE_EV_YARN_HF, 4.0, 8), 0);
    for (int i = 0; i < F32_MT * F32_Md; i++) { fc[i] = (float)cs[i]; fs[i] = (float)sn[i]; }
    c.tok = tok; c.cs = cs; c.sn = sn;
    float *P = malloc(np * sizeof *P), *G = calloc(np, sizeof *G);
    float *acts = malloc(rope_f32_acts_len(&c.s) * sizeof *acts);
    float *work = malloc(rope_f32_work_len(&c.s) * sizeof *work);
    float x[R * D], xf[R * D], inv[R], dxf[R * D], dx[R * D], lg[R * F32_MV];
    rope_f32_acts a;
    ck_assert(P && G && acts && work);
    f32_fill(P, np, 82, 0.5);
    for (int i = 0; i < D; i++) { /* norm weights near MiniMind's ones */
        P[F32_MV * D + c.L.input_layernorm + i] += 1;
        P[F32_MV * D + c.L.post_attention_layernorm + i] += 1;
        P[np - D + i] += 1;
    }
    for (int i = 0; i < F32_Md; i++) {
        P[F32_MV * D + c.L.q_norm + i] += 1;
        P[F32_MV * D + c.L.k_norm + i] += 1;
    }
    rope_f32_acts_bind(&c.s, acts, &a);
    float *emb = P, *w = P + F32_MV * D, *wn = w + c.L.n;
    float *gemb = G, *gw = G + F32_MV * D, *gn = gw + c.L.n;
    rope_f32_embed(tok, emb, x, R, D);
    ck_assert_int_eq(rope_f32_block_forward(&c.s, w, x, fc, fs, &a), 0);
    rope_f32_rmsnorm(x, wn, xf, inv, R, D, 1e-5f);
    rope_f32_head_loss(xf, emb, tok + R, R, F32_MV, D, lg, dxf, gemb);
    rope_f32_rmsnorm_backward(x, wn, inv, dxf, dx, gn, R, D);
    rope_f32_block_backward(&c.s, w, &a, dx, gw, fc, fs, work);
    rope_f32_embed_backward(tok, dx, gemb, R, D);
    double *Pd = f32_to_double(P, np);
    double C = 2 * (8 * D + 4 * F32_MF + 2 * F32_MT + 8 * F32_Md) + 200;
    f32_check("one block: every parameter", f32_model_ref, &c, Pd, np, 1, &one,
              G, C);
    free(Pd); free(P); free(G); free(acts); free(work);
}
END_TEST

Suite *evidence_f32_suite(void)
{
    Suite *s = suite_create("chapter 7: the float32 block");
    TCase *tc = tcase_create("float32 block");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_f32_rmsnorm_backward);
    tcase_add_test(tc, test_f32_rotary_qk_norm_backward);
    tcase_add_test(tc, test_f32_attention_backward);
    tcase_add_test(tc, test_f32_attention_tiled_vs_naive);
    tcase_add_test(tc, test_f32_swiglu_head_backward);
    tcase_add_test(tc, test_f32_block_backward);
    suite_add_tcase(s, tc);
    return s;
}
