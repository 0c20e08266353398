/* W7.2 The tests */
/* test-evidence.c: the claims of chapter 7. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

typedef double (*ev_scalar_fn)(const double *x, void *ctx, double *mag);

static void ev_check_gradient(const char *what, ev_scalar_fn f, double *x,
                              size_t n, const double *grad, void *ctx)
{
    const double h = 1e-4;
    for (size_t j = 0; j < n; j++) {
        double x0 = x[j], mag = 0, m, d[2];
        for (int s = 0; s < 2; s++) {
            double hs = h * (s + 1);
            x[j] = x0 + hs;
            double up = f(x, ctx, &m);
            mag = m > mag ? m : mag;
            x[j] = x0 - hs;
            double down = f(x, ctx, &m);
            mag = m > mag ? m : mag;
            d[s] = (up - down) / (2 * hs);
        }
        x[j] = x0;
        double tol = 2 * fabs(d[1] - d[0]) + 64 * DBL_EPSILON * mag / h;
        ck_assert_msg(fabs(d[0] - grad[j]) <= tol,
                      "%s: component %zu: backward %.12g, central "
                      "difference %.12g, allowed %.3g", what, j, grad[j],
                      d[0], tol);
    }
}

static double ev_weighted(const double *y, const double *c, size_t n,
                          double *mag)
{
    double s = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
        s += c[i] * y[i];
        a += fabs(c[i] * y[i]);
    }
    *mag = a;
    return s;
}

static void ev_fill(double *x, size_t n, uint64_t seed, double scale)
{
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (2 * rope_uniform(&st) - 1);
}
typedef struct ev_ctx {
    int rows, in, out; /* shapes of the piece */
    const double *a, *b; /* the inputs held fixed */
    const double *c; /* weights of the outputs */
    int which; /* which input varies */
} ev_ctx;

static double ev_linear_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[64];
    if (c->which == 0) rope_ev_linear(x, c->a, y, c->rows, c->in, c->out);
    else rope_ev_linear(c->a, x, y, c->rows, c->in, c->out);
    return ev_weighted(y, c->c, (size_t)c->rows * c->out, mag);
}

static double ev_rms_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[64], inv[8];
    if (c->which == 0) rope_ev_rmsnorm(x, c->a, y, inv, c->rows, c->in, 1e-5);
    else rope_ev_rmsnorm(c->a, x, y, inv, c->rows, c->in, 1e-5);
    return ev_weighted(y, c->c, (size_t)c->rows * c->in, mag);
}
static double ev_rot_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[96];
    memcpy(y, x, 96 * sizeof *y);
    rope_ev_rotary(y, c->a, c->b, 2, 3, 2, 8, 0);
    return ev_weighted(y, c->c, 96, mag);
}

static double ev_swiglu_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[16];
    if (c->which == 0) rope_ev_swiglu(x, c->a, y, 16);
    else rope_ev_swiglu(c->a, x, y, 16);
    return ev_weighted(y, c->c, 16, mag);
}
static double ev_att_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double p[200], o[160];
    const double *q = c->which == 0 ? x : c->a;
    const double *k = c->which == 1 ? x : c->b;
    const double *v = c->which == 2 ? x : c->b + 80;
    rope_ev_attention(q, k, v, p, o, 2, 5, 4, 2, 4);
    return ev_weighted(o, c->c, 160, mag);
}
static double ev_ce_fn(const double *x, void *vc, double *mag)
{
    static const int targets[3] = {2, -1, 0};
    (void)vc;
    double l = rope_ev_cross_entropy(x, targets, 3, 5, NULL, NULL, NULL);
    *mag = fabs(l);
    return l;
}
typedef struct ev_model_ctx {
    rope_ev_model *m;
    const int *tok;
    const double *cs, *sn;
} ev_model_ctx;

static double ev_model_fn(const double *x, void *vc, double *mag)
{
    ev_model_ctx *c = vc;
    (void)x; /* x is c->m->params, changed in place */
    double l = rope_ev_forward(c->m, c->tok, c->tok + 12, 2, 6, c->cs,
                               c->sn, 0, NULL, NULL);
    *mag = fabs(l);
    return l;
}

static void ev_tiny_config(rope_ev_config *c, rope_ev_pe pe)
{
    rope_ev_config_default(c, pe);
    c->vocab_size = 7;
    c->hidden_size = 8;
    c->num_attention_heads = 2;
    c->num_key_value_heads = 1;
    c->intermediate_size = 12;
}
START_TEST(test_ev_linear_rmsnorm_backward)
{
    double x[24], w[48], c[64], dx[24], dw[48] = {0}, inv[8];
    ev_ctx ctx = {3, 8, 6, NULL, NULL, c, 0};
    ev_fill(x, 24, 1, 1.0);
    ev_fill(w, 48, 2, 1.0);
    ev_fill(c, 64, 3, 1.0);
    rope_ev_linear_backward(x, w, c, dx, dw, 3, 8, 6);
    ctx.a = w;
    ev_check_gradient("linear, input", ev_linear_fn, x, 24, dx, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("linear, weight", ev_linear_fn, w, 48, dw, &ctx);
    double dwn[8] = {0};
    rope_ev_rmsnorm(x, w, c + 32, inv, 3, 8, 1e-5);
    rope_ev_rmsnorm_backward(x, w, inv, c, dx, dwn, 3, 8);
    ctx = (ev_ctx){3, 8, 8, w, NULL, c, 0};
    ev_check_gradient("rmsnorm, input", ev_rms_fn, x, 24, dx, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("rmsnorm, weight", ev_rms_fn, w, 8, dwn, &ctx);
}
END_TEST
START_TEST(test_ev_rotary_swiglu_backward)
{
    double x[96], c[96], g[96], cs[24], sn[24], u[16], dg[16], du[16];
    ck_assert_int_eq(rope_ev_tables(cs, sn, 8, 3, 1e4, ROPE_EV_YARN_HF,
                                    4.0, 2), 0);
    ck_assert(fabs(cs[0] - 1.0) > 1e-3); /* the factor a is in the table */
    ev_fill(x, 96, 4, 1.0);
    ev_fill(c, 96, 5, 1.0);
    memcpy(g, c, sizeof g);
    rope_ev_rotary(g, cs, sn, 2, 3, 2, 8, 1);
    ev_ctx ctx = {0, 0, 0, cs, sn, c, 0};
    ev_check_gradient("rotary", ev_rot_fn, x, 96, g, &ctx);
    ev_fill(u, 16, 6, 3.0);
    rope_ev_swiglu_backward(x, u, c, dg, du, 16);
    ctx = (ev_ctx){0, 0, 0, u, NULL, c, 0};
    ev_check_gradient("swiglu, gate", ev_swiglu_fn, x, 16, dg, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("swiglu, up", ev_swiglu_fn, u, 16, du, &ctx);
}
END_TEST
START_TEST(test_ev_attention_backward)
{
    double q[160], kv[160], c[160], p[200], o[160];
    double dq[160], dk[80], dv[80];
    ev_fill(q, 160, 7, 1.5);
    ev_fill(kv, 160, 8, 1.5);
    ev_fill(c, 160, 9, 1.0);
    rope_ev_attention(q, kv, kv + 80, p, o, 2, 5, 4, 2, 4);
    rope_ev_attention_backward(q, kv, kv + 80, p, c, dq, dk, dv, 2, 5, 4,
                               2, 4);
    ev_ctx ctx = {0, 0, 0, q, kv, c, 0};
    ev_check_gradient("attention, q", ev_att_fn, q, 160, dq, &ctx);
    ctx.which = 1;
    ev_check_gradient("attention, k", ev_att_fn, kv, 80, dk, &ctx);
    ctx.which = 2;
    ev_check_gradient("attention, v", ev_att_fn, kv + 80, 80, dv, &ctx);
}
END_TEST
START_TEST(test_ev_cross_entropy_backward)
{
    static const int targets[3] = {2, -1, 0};
    double x[15], g[15];
    long right = 0, n = 0;
    ev_fill(x, 15, 10, 2.0);
    rope_ev_cross_entropy(x, targets, 3, 5, g, &right, &n);
    ck_assert_int_eq(n, 2);
    for (int i = 5; i < 10; i++)
        ck_assert(g[i] == 0);
    ev_check_gradient("cross-entropy", ev_ce_fn, x, 15, g, NULL);
}
END_TEST
START_TEST(test_ev_model_backward)
{
    for (int pe = ROPE_EV_NOPE; pe <= ROPE_EV_ROPE; pe++) {
        rope_ev_config c;
        rope_ev_model m;
        int tok[24];
        double cs[24], sn[24];
        uint64_t st = 11;
        ev_tiny_config(&c, (rope_ev_pe)pe);
        ck_assert_int_eq(rope_ev_init(&m, &c, 12), 0);
        rope_ev_batch(ROPE_EV_COPY, &st, tok, tok + 12, 2, 6, 7);
        rope_ev_tables(cs, sn, 4, 6, 1e4, ROPE_EV_PLAIN, 1, 6);
        ev_model_ctx ctx = {&m, tok, pe == ROPE_EV_ROPE ? cs : NULL, sn};
        rope_ev_forward(&m, tok, tok + 12, 2, 6, ctx.cs, sn, 1, NULL, NULL);
        double *g = malloc(m.n_params * sizeof *g);
        memcpy(g, m.grads, m.n_params * sizeof *g);
        ev_check_gradient(pe == 0 ? "model, NoPE" : pe == 1
                          ? "model, sinusoidal" : "model, RoPE",
                          ev_model_fn, m.params, m.n_params, g, &ctx);
        free(g);
        rope_ev_free(&m);
    }
}
END_TEST
START_TEST(test_ev_attention_matches_kernel)
{
    enum { B = 2, T = 37, H = 4, HKV = 2, D = 16 };
    static float q[B * T * H * D], k[B * T * HKV * D], v[B * T * HKV * D];
    static float out[B * T * H * D], fc[T * D], fs[T * D];
    static double dq[B * T * H * D], dk[B * T * HKV * D];
    static double dv[B * T * HKV * D], p[B * H * T * T], o[B * T * H * D];
    static double cs[T * D], sn[T * D];
    rope_attention_params ap;
    randfill(q, sizeof q / sizeof *q, 21);
    randfill(k, sizeof k / sizeof *k, 22);
    randfill(v, sizeof v / sizeof *v, 23);
    rope_precompute_freqs_cis(fc, fs, D, T, 1e4, ROPE_PRECISION_FLOAT);
    rope_attention_defaults(&ap);
    ap.batch = B; ap.seq_len = ap.kv_len = T;
    ap.n_heads = H; ap.n_kv_heads = HKV; ap.head_dim = D;
    ap.causal = 1; ap.freqs_cos = fc; ap.freqs_sin = fs; ap.table_len = T;
    ap.pairing = ROPE_PAIRING_HALF;
    ck_assert_int_eq(rope_attention(out, q, k, v, &ap), 0);
    for (int i = 0; i < T * D; i++) { cs[i] = fc[i]; sn[i] = fs[i]; }
    for (size_t i = 0; i < sizeof dq / sizeof *dq; i++) dq[i] = q[i];
    double vmax = 0;
    for (size_t i = 0; i < sizeof dk / sizeof *dk; i++) {
        dk[i] = k[i];
        dv[i] = v[i];
        vmax = fabs(v[i]) > vmax ? fabs(v[i]) : vmax;
    }
    rope_ev_rotary(dq, cs, sn, B, T, H, D, 0);
    rope_ev_rotary(dk, cs, sn, B, T, HKV, D, 0);
    rope_ev_attention(dq, dk, dv, p, o, B, T, H, HKV, D);
    double tol = 8.0 * (D + T) * FLT_EPSILON * vmax, worst = 0;
    for (size_t i = 0; i < sizeof o / sizeof *o; i++)
        worst = fmax(worst, fabs(o[i] - out[i]));
    ck_assert_msg(worst <= tol, "model vs kernel: %.3g > %.3g", worst, tol);
}
END_TEST
START_TEST(test_ev_training_repeats)
{
    double a[8], b[8];
    for (int run = 0; run < 2; run++) {
        rope_ev_config c;
        rope_ev_model m;
        rope_ev_config_default(&c, ROPE_EV_ROPE);
        ck_assert_int_eq(rope_ev_init(&m, &c, 1), 0);
        ck_assert_int_eq(rope_ev_train(&m, ROPE_EV_COPY, 16, 4, 8, 3e-3, 1,
                         ROPE_EV_PLAIN, 1, 16, NULL, run ? b : a), 0);
        rope_ev_free(&m);
    }
    ck_assert_msg(memcmp(a, b, sizeof a) == 0, "two runs differ");
    size_t n = 0;
    double *ref = golden_read("book/data/evidence/reference.txt", &n);
    ck_assert_msg(ref != NULL && n == 8, "reference.txt: 8 losses");
    for (int i = 0; i < 8; i++)
        ck_assert_msg(fabs(a[i] - ref[i]) <= 1e-6 * fabs(ref[i]),
                      "step %d: loss %.17g, reference %.17g", i, a[i],
                      ref[i]);
    ck_assert(a[7] < a[0]); /* it learns */
    free(ref);
}
END_TEST
/* W7.3 The command rope evidence */
START_TEST(test_ev_out_of_memory_is_not_divergence)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;
#endif
    cli_result r = cli_run_in("ulimit -v 1048576;", "evidence --task copy "
                              "--pe rope --seed 1 --batch 100000 --steps 1",
                              NULL);
    ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: out of memory: needs ", 34)
                  == 0 && strstr(r.err, " MiB for the training workspace"),
                  "%s", r.err);
    cli_result_free(&r);
}
END_TEST

/* W7.2 The tests */
Suite *evidence_suite(void)
{
    Suite *s = suite_create("chapter 7: evidence");
    TCase *tc = tcase_create("evidence");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_ev_linear_rmsnorm_backward);
    tcase_add_test(tc, test_ev_rotary_swiglu_backward);
    tcase_add_test(tc, test_ev_attention_backward);
    tcase_add_test(tc, test_ev_cross_entropy_backward);
    tcase_add_test(tc, test_ev_model_backward);
    tcase_add_test(tc, test_ev_attention_matches_kernel);
    tcase_add_test(tc, test_ev_training_repeats);
    tcase_add_test(tc, test_ev_out_of_memory_is_not_divergence);
    suite_add_tcase(s, tc);
    return s;
}
