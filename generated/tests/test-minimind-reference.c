/* W8b.6 The tests */
/* test-minimind-reference.c: the double reference and its bound (W8b) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"
#include "minimind.h"
#include "minimind-reference.h"

enum { MR_CONFIGS = 5 };
static const char *const mr_names[MR_CONFIGS] = {
    "dense", "MoE top-1", "MoE top-2", "dense YaRN", "MoE top-1 YaRN"
};

static void mr_config(rope_minimind_config *c, int which, int layers)
{
    rope_minimind_config_defaults(c);
    c->hidden_size = 32;
    c->num_hidden_layers = layers;
    c->num_attention_heads = 4;
    c->num_key_value_heads = 2;
    c->head_dim = 8;
    c->intermediate_size = c->moe_intermediate_size = 64;
    c->vocab_size = 50;
    c->use_moe = which == 1 || which == 2 || which == 4;
    c->num_experts_per_tok = which == 2 ? 2 : 1;
    c->inference_rope_scaling = which >= 3;
    c->max_position_embeddings = which >= 3 ? 4096 : 256;
}

static double mr_uniform(uint64_t *s) /* [-1, 1) */
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * ldexp(1, -52) - 1;
}
static float *mr_model_layers(rope_minimind *m, int which, uint64_t seed,
                              int layers)
{
    rope_minimind_config c;
    mr_config(&c, which, layers);
    int nt = rope_minimind_tensor_list(&c, NULL);
    rope_minimind_tensor *t = malloc((size_t)nt * sizeof *t);
    float *data = malloc(rope_minimind_n_floats(&c) * sizeof *data);
    ck_assert(t != NULL && data != NULL);
    rope_minimind_tensor_list(&c, t);
    for (int i = 0; i < nt; i++) {
        size_t cnt = (size_t)t[i].shape[0] * (t[i].ndim == 2
                                               ? t[i].shape[1] : 1);
        double a = t[i].ndim == 1 ? 0.25 : i == 0 ? sqrt(3.0)
                   : 1 / sqrt((double)t[i].shape[1]);
        for (size_t j = 0; j < cnt; j++)
            data[t[i].offset + j] = (float)((t[i].ndim == 1 ? 1 : 0)
                                            + a * mr_uniform(&seed));
    }
    free(t);
    memset(m, 0, sizeof *m);
    ck_assert_int_eq(rope_minimind_bind(m, &c, data), 0);
    return data;
}

static float *mr_model(rope_minimind *m, int which, uint64_t seed)
{
    return mr_model_layers(m, which, seed, 1);
}

static void mr_ids(int *ids, int n, int vocab, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        ids[i] = (int)((mr_uniform(&seed) + 1) / 2 * vocab) % vocab;
}
typedef long double ld;
typedef struct mr_plain {
    int f32, interleaved;
} mr_plain;

static ld mr_r(const mr_plain *P, ld x)
{
    return P->f32 ? (ld)(float)x : x;
}

static void mr_linear(const mr_plain *P, ld *y, const ld *x, const float *w,
                      int rows, int in, int out)
{
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            ld s = 0;
            for (int k = 0; k < in; k++)
                s = mr_r(P, s + mr_r(P, x[(size_t)r * in + k]
                                        * w[(size_t)o * in + k]));
            y[(size_t)r * out + o] = s;
        }
}

static void mr_rmsnorm(const mr_plain *P, ld *y, const ld *x,
                       const float *w, int rows, int n, double eps)
{
    for (int r = 0; r < rows; r++) {
        ld ss = 0, rr;
        for (int i = 0; i < n; i++)
            ss = mr_r(P, ss + mr_r(P, x[(size_t)r * n + i]
                                      * x[(size_t)r * n + i]));
        ss = mr_r(P, mr_r(P, ss / n) + mr_r(P, eps));
        rr = mr_r(P, 1 / mr_r(P, sqrtl(ss)));
        for (int i = 0; i < n; i++)
            y[(size_t)r * n + i] = mr_r(P, w[i] * mr_r(P, x[(size_t)r * n + i]
                                                         * rr));
    }
}
static void mr_rope(const mr_plain *P, ld *x, int n, int heads,
                    const rope_minimind *m)
{
    int d = m->config.head_dim, h2 = d / 2;
    for (int i = 0; i < n; i++)
        for (int h = 0; h < heads; h++) {
            ld *xr = x + ((size_t)i * heads + h) * d;
            const float *c = m->freqs_cos + (size_t)i * d;
            const float *s = m->freqs_sin + (size_t)i * d;
            for (int t = 0; t < h2; t++) {
                int a = P->interleaved ? 2 * t : t;
                int b = P->interleaved ? 2 * t + 1 : t + h2;
                ld xa = xr[a], xb = xr[b];
                xr[a] = mr_r(P, mr_r(P, xa * c[a]) - mr_r(P, xb * s[a]));
                xr[b] = mr_r(P, mr_r(P, xb * c[b]) + mr_r(P, xa * s[b]));
            }
        }
}

static void mr_softmax(const mr_plain *P, ld *p, int n)
{
    ld mx = p[0], z = 0;
    for (int j = 1; j < n; j++)
        mx = p[j] > mx ? p[j] : mx;
    for (int j = 0; j < n; j++)
        z = mr_r(P, z + (p[j] = mr_r(P, expl(mr_r(P, p[j] - mx)))));
    for (int j = 0; j < n; j++)
        p[j] = mr_r(P, p[j] / z);
}
static void mr_attention(const mr_plain *P, ld *o, const ld *q, const ld *k,
                         const ld *v, const rope_minimind_config *c, int n,
                         ld *p)
{
    int H = c->num_attention_heads, Hk = c->num_key_value_heads;
    int d = c->head_dim;
    ld scale = mr_r(P, sqrtl(d));
    for (int h = 0; h < H; h++)
        for (int i = 0; i < n; i++) {
            const ld *qi = q + ((size_t)i * H + h) * d;
            ld *oi = o + ((size_t)i * H + h) * d;
            int g = h / (H / Hk);
            for (int j = 0; j <= i; j++) {
                const ld *kj = k + ((size_t)j * Hk + g) * d;
                ld s = 0;
                for (int t = 0; t < d; t++)
                    s = mr_r(P, s + mr_r(P, qi[t] * kj[t]));
                p[j] = mr_r(P, s / scale);
            }
            mr_softmax(P, p, i + 1);
            for (int t = 0; t < d; t++) {
                ld s = 0;
                for (int j = 0; j <= i; j++)
                    s = mr_r(P, s + mr_r(P, p[j]
                                            * v[((size_t)j * Hk + g) * d + t]));
                oi[t] = s;
            }
        }
}
static void mr_ffn(const mr_plain *P, ld *y, const ld *x,
                   const rope_minimind_ffn *f, int rows, int D, int F,
                   ld *g, ld *up)
{
    mr_linear(P, g, x, f->gate_proj, rows, D, F);
    mr_linear(P, up, x, f->up_proj, rows, D, F);
    for (size_t i = 0; i < (size_t)rows * F; i++) {
        ld si = mr_r(P, g[i] / mr_r(P, 1 + mr_r(P, expl(-g[i]))));
        g[i] = mr_r(P, si * up[i]);
    }
    mr_linear(P, y, g, f->down_proj, rows, F, D);
}

static void mr_moe(const mr_plain *P, ld *y, const ld *x,
                   const rope_minimind_layer *L,
                   const rope_minimind_config *c, int n, ld *g, ld *up,
                   ld *f)
{
    int D = c->hidden_size, E = c->num_experts;
    ld p[64], w[64];
    memset(y, 0, (size_t)n * D * sizeof *y);
    for (int r = 0; r < n; r++) {
        ld sum = 0;
        mr_linear(P, p, x + (size_t)r * D, L->gate, 1, D, E);
        mr_softmax(P, p, E);
        for (int e = 0; e < E; e++)
            w[e] = -1;
        for (int j = 0; j < c->num_experts_per_tok; j++) {
            int best = -1;
            for (int e = 0; e < E; e++)
                if (w[e] < 0 && (best < 0 || p[e] > p[best]))
                    best = e;
            sum = mr_r(P, sum + (w[best] = p[best]));
        }
        for (int e = 0; e < E; e++) {
            if (w[e] < 0)
                continue;
            if (c->norm_topk_prob)
                w[e] = mr_r(P, w[e] / mr_r(P, sum + 1e-20L));
            mr_ffn(P, f, x + (size_t)r * D, &L->experts[e], 1, D,
                   c->moe_intermediate_size, g, up);
            for (int i = 0; i < D; i++)
                y[(size_t)r * D + i] = mr_r(P, y[(size_t)r * D + i]
                                               + mr_r(P, f[i] * w[e]));
        }
    }
}
static void mr_run(const mr_plain *P, const rope_minimind *m, ld *h,
                   int n, int l0, int l1, double *out)
{
    const rope_minimind_config *c = &m->config;
    int D = c->hidden_size, H = c->num_attention_heads, d = c->head_dim;
    int Hk = c->num_key_value_heads, V = c->vocab_size;
    int F = c->intermediate_size > c->moe_intermediate_size
            ? c->intermediate_size : c->moe_intermediate_size;
    size_t nd = (size_t)n * D;
    ld *a = malloc(nd * sizeof *a);
    ld *t = malloc(nd * sizeof *t), *f = malloc(D * sizeof *f);
    ld *q = malloc((size_t)n * H * d * sizeof *q);
    ld *k = malloc((size_t)n * Hk * d * sizeof *k);
    ld *v = malloc((size_t)n * Hk * d * sizeof *v);
    ld *o = malloc((size_t)n * H * d * sizeof *o);
    ld *g = malloc((size_t)n * F * sizeof *g), *p = malloc(n * sizeof *p);
    ld *up = malloc((size_t)n * F * sizeof *up);
    ld *lg = malloc((size_t)n * V * sizeof *lg);
    double eps = c->rms_norm_eps;
    ck_assert(a && t && f && q && k && v && o && g && p && up && lg);
    for (int l = l0; l < l1 && l < c->num_hidden_layers; l++) {
        const rope_minimind_layer *L = &m->layers[l];
        mr_rmsnorm(P, a, h, L->input_layernorm, n, D, eps);
        mr_linear(P, q, a, L->q_proj, n, D, H * d);
        mr_linear(P, k, a, L->k_proj, n, D, Hk * d);
        mr_linear(P, v, a, L->v_proj, n, D, Hk * d);
        mr_rmsnorm(P, q, q, L->q_norm, n * H, d, eps);
        mr_rmsnorm(P, k, k, L->k_norm, n * Hk, d, eps);
        mr_rope(P, q, n, H, m);
        mr_rope(P, k, n, Hk, m);
        mr_attention(P, o, q, k, v, c, n, p);
        mr_linear(P, t, o, L->o_proj, n, H * d, D);
        for (size_t i = 0; i < nd; i++)
            h[i] = mr_r(P, h[i] + t[i]);
        mr_rmsnorm(P, a, h, L->post_attention_layernorm, n, D, eps);
        if (c->use_moe)
            mr_moe(P, t, a, L, c, n, g, up, f);
        else
            mr_ffn(P, t, a, &L->mlp, n, D, c->intermediate_size, g, up);
        for (size_t i = 0; i < nd; i++)
            h[i] = mr_r(P, h[i] + t[i]);
    }
    if (l1 > c->num_hidden_layers) {
        mr_rmsnorm(P, a, h, m->norm, n, D, eps);
        mr_linear(P, lg, a, m->embed_tokens, n, D, V);
    }
    int head = l1 > c->num_hidden_layers;
    for (size_t i = 0; i < (size_t)(head ? V : D) * n; i++)
        out[i] = (double)(head ? lg[i] : h[i]);
    ld *all[] = {a, t, f, q, k, v, o, g, p, up, lg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}

static void mr_forward(const mr_plain *P, const rope_minimind *m,
                       const int *ids, int n, double *logits)
{
    int D = m->config.hidden_size;
    ld *h = malloc((size_t)n * D * sizeof *h);
    ck_assert(h != NULL);
    for (size_t i = 0; i < (size_t)n * D; i++)
        h[i] = m->embed_tokens[(size_t)ids[i / D] * D + i % D];
    mr_run(P, m, h, n, 0, m->config.num_hidden_layers + 1, logits);
    free(h);
}
static double mr_ratio(const double *x, const double *ref,
                       const double *bound, size_t count)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double r = fabs(x[i] - ref[i]) / bound[i];
        worst = r > worst || isnan(r) ? r : worst;
    }
    return worst;
}

static void mr_model_forward(const rope_minimind *m, const int *ids, int n,
                             double *out)
{
    rope_minimind_state s;
    size_t nv = (size_t)n * m->config.vocab_size;
    float *lg = malloc(nv * sizeof *lg);
    ck_assert(lg != NULL);
    ck_assert_int_eq(rope_minimind_state_init(&s, m, n, 1), 0);
    ck_assert_int_eq(rope_minimind_forward(m, &s, ids, n, lg, 1), 0);
    for (size_t i = 0; i < nv; i++)
        out[i] = lg[i];
    rope_minimind_state_free(&s);
    free(lg);
}
START_TEST(test_reference_is_exact)
{
    rope_minimind m;
    float *data = mr_model(&m, _i, 41 + _i);
    const int n = 21;
    int ids[21];
    int V = m.config.vocab_size;
    double *ref = malloc(3 * (size_t)n * V * sizeof *ref);
    double *bound = ref + (size_t)n * V, *ldv = bound + (size_t)n * V;
    mr_plain P = {0, 0};
    ck_assert(ref != NULL);
    mr_ids(ids, n, V, 7 + _i);
    ck_assert_int_eq(rope_minimind_reference(&m, ids, n, ref, bound), 0);
    mr_forward(&P, &m, ids, n, ldv);
    double r = mr_ratio(ldv, ref, bound, (size_t)n * V);
    ck_assert_msg(r <= ldexp(1, -28), "%s: |long double - reference| = "
                  "%g bounds", mr_names[_i], r);
    free(ref);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_float32_within_bound)
{
    static const int lens[] = {1, 7, 40, 130};
    rope_minimind m;
    float *data = mr_model(&m, _i, 41 + _i);
    int V = m.config.vocab_size, ids[130], compared = 0;
    double *buf = malloc(4 * (size_t)130 * V * sizeof *buf), worst = 0;
    mr_plain P = {1, 0};
    rope_minimind_ref_stats st;
    ck_assert(buf != NULL);
    for (int li = 0; li < 4; li++) {
        int n = lens[li];
        size_t nv = (size_t)n * V;
        double *ref = buf, *bound = buf + nv, *c = bound + nv, *p = c + nv;
        mr_ids(ids, n, V, 100 + li);
        int r = rope_minimind_reference_ex(&m, ids, n, NULL, 1, ref, bound,
                                           &st);
        ck_assert(r == 0 || r == ROPE_MINIMIND_REF_UNDECIDED);
        int good = r == 0 ? n : st.first_undecided; /* bounded tokens */
        mr_model_forward(&m, ids, n, c);
        mr_forward(&P, &m, ids, n, p);
        double rc = mr_ratio(c, ref, bound, (size_t)good * V);
        double rp = mr_ratio(p, ref, bound, (size_t)good * V);
        ck_assert_msg(rc <= 1 && rp <= 1, "%s, n = %d: errors of %g and "
                      "%g bounds", mr_names[_i], n, rc, rp);
        worst = fmax(worst, fmax(rc, rp));
        compared += good;
    }
    ck_assert_int_ge(compared, 89); /* half of the 178 tokens */
    ck_assert_msg(worst >= ldexp(1, -14), "%s: the bound is vacuous: "
                  "worst error %g of it", mr_names[_i], worst);
    free(buf);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
enum { MR_SHIFT = -3 }; /* the changed weight: times 1 + 2^-MR_SHIFT */
START_TEST(test_mistakes_fall_outside)
{
    rope_minimind m, bad;
    float *data = mr_model(&m, _i, 41 + _i);
    const int n = 40;
    int V = m.config.vocab_size, ids[40];
    size_t nv = (size_t)n * V, nf = rope_minimind_n_floats(&m.config);
    double *buf = malloc(3 * nv * sizeof *buf);
    double *ref = buf, *bound = buf + nv, *w = bound + nv;
    float *data2 = malloc(nf * sizeof *data2);
    mr_plain P = {1, 1};
    ck_assert(buf != NULL && data2 != NULL);
    mr_ids(ids, n, V, 5);
    rope_minimind_ref_stats st;
    int r = rope_minimind_reference_ex(&m, ids, n, NULL, 1, ref, bound, &st);
    ck_assert(r == 0 || r == ROPE_MINIMIND_REF_UNDECIDED);
    nv = (size_t)(r == 0 ? n : st.first_undecided) * V;
    ck_assert_uint_ge(nv, (size_t)5 * V);
    mr_forward(&P, &m, ids, n, w);
    ck_assert_msg(mr_ratio(w, ref, bound, nv) > 3, "%s: interleaved RoPE "
                  "within %g bounds", mr_names[_i],
                  mr_ratio(w, ref, bound, nv));
    memcpy(data2, data, nf * sizeof *data2);
    memset(&bad, 0, sizeof bad);
    ck_assert_int_eq(rope_minimind_bind(&bad, &m.config, data2), 0);
    data2[bad.layers[0].v_proj - data2] *= 1 + ldexp(1, -MR_SHIFT);
    mr_model_forward(&bad, ids, n, w);
    ck_assert_msg(mr_ratio(w, ref, bound, nv) > 3, "%s: a changed weight "
                  "within %g bounds", mr_names[_i],
                  mr_ratio(w, ref, bound, nv));
    rope_minimind_free(&bad);
    free(data2);
    free(buf);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_yarn_tables_differ)
{
    rope_minimind m, y;
    float *a = mr_model(&m, 0, 1), *b = mr_model(&y, 3, 1);
    size_t len = (size_t)40 * m.config.head_dim, differ = 0;
    for (size_t i = 0; i < len; i++)
        differ += m.freqs_cos[i] != y.freqs_cos[i];
    ck_assert_msg(differ > len / 4, "only %zu of %zu entries differ",
                  differ, len);
    free(a);
    free(b);
    rope_minimind_free(&m);
    rope_minimind_free(&y);
}
END_TEST
START_TEST(test_undecided_route)
{
    rope_minimind m;
    float *data = mr_model(&m, 1, 3);
    const int n = 5;
    int ids[5], V = m.config.vocab_size, E = m.config.num_experts;
    double *ref = malloc(2 * (size_t)n * V * sizeof *ref);
    double *bound = ref + (size_t)n * V;
    rope_minimind_ref_stats st;
    ck_assert(ref != NULL);
    mr_ids(ids, n, V, 9);
    memset(data + (m.layers[0].gate - data), 0,
           (size_t)E * m.config.hidden_size * sizeof *data);
    ck_assert_int_eq(rope_minimind_reference_ex(&m, ids, n, NULL, 1, ref,
                                                bound, &st),
                     ROPE_MINIMIND_REF_UNDECIDED);
    ck_assert_int_eq(st.first_undecided, 0);
    ck_assert_int_eq(st.undecided, n);
    ck_assert(isinf(bound[0]) && isinf(bound[(size_t)n * V - 1]));
    free(ref);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_reference_arguments)
{
    rope_minimind m;
    float *data = mr_model(&m, 0, 2);
    int ids[2] = {0, 50};
    double x[100], e[100];
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 0, x, e), -1);
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 2, x, e), -1);
    ids[1] = -1;
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 2, x, e), -1);
    ids[1] = 1;
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 2, x, e), 0);
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 257, x, e), -1);
    free(data);
    rope_minimind_free(&m);
}
END_TEST

START_TEST(test_reference_threads)
{
    rope_minimind m;
    float *data = mr_model(&m, 2, 4);
    const int n = 70;
    int ids[70], V = m.config.vocab_size;
    size_t nv = (size_t)n * V;
    double *x = malloc(4 * nv * sizeof *x);
    ck_assert(x != NULL);
    mr_ids(ids, n, V, 11);
    ck_assert_int_eq(rope_minimind_reference_ex(&m, ids, n, NULL, 1, x,
                                                x + nv, NULL), 0);
    ck_assert_int_eq(rope_minimind_reference_ex(&m, ids, n, NULL, 2,
                                                x + 2 * nv, x + 3 * nv,
                                                NULL), 0);
    ck_assert(memcmp(x, x + 2 * nv, 2 * nv * sizeof *x) == 0);
    free(x);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_sigma)
{
    float w[40 * 24], wt[24 * 40], z[6] = {0};
    double x[24], y[40], lo = 0;
    uint64_t seed = 77;
    memset(w, 0, 35 * sizeof *w);
    for (int i = 0; i < 5; i++)
        w[i * 7 + i] = (float)(5 - i);
    double s5 = rope_minimind_ref_sigma(w, 5, 7, 1);
    ck_assert_msg(s5 >= 5 && s5 <= 5 * pow(5, 1.0 / 32), "%.17g", s5);
    for (int i = 0; i < 40 * 24; i++)
        w[i] = (float)mr_uniform(&seed);
    for (int i = 0; i < 40; i++)
        for (int k = 0; k < 24; k++)
            wt[k * 40 + i] = w[i * 24 + k];
    for (int k = 0; k < 24; k++)
        x[k] = 1;
    for (int it = 0; it < 500; it++) {
        double nx = 0, ny = 0;
        for (int i = 0; i < 40; i++) {
            y[i] = 0;
            for (int k = 0; k < 24; k++)
                y[i] += w[i * 24 + k] * x[k];
            ny += y[i] * y[i];
        }
        lo = sqrt(ny); /* |W x| with |x| = 1: at most sigma */
        for (int k = 0; k < 24; k++) {
            x[k] = 0;
            for (int i = 0; i < 40; i++)
                x[k] += w[i * 24 + k] * y[i];
            nx += x[k] * x[k];
        }
        for (int k = 0; k < 24; k++)
            x[k] /= sqrt(nx);
    }
    double sg = rope_minimind_ref_sigma(w, 40, 24, 1);
    ck_assert_msg(sg >= lo && sg <= pow(24, 1.0 / 32) * lo * (1 + 1e-6),
                  "bound %.17g, power method %.17g", sg, lo);
    ck_assert(fabs(rope_minimind_ref_sigma(wt, 24, 40, 1) - sg)
              <= 1e-12 * sg);
    ck_assert(rope_minimind_ref_sigma(w, 40, 24, 2) == sg);
    ck_assert(rope_minimind_ref_sigma(z, 2, 3, 1) == 0);
}
END_TEST
START_TEST(test_reference_npy)
{
    rope_minimind m;
    float *data = mr_model(&m, 0, 2);
    int ids[3] = {4, 8, 15}, V = m.config.vocab_size;
    double x[300];
    unsigned char buf[4096];
    char path[] = "/tmp/rope-ref-XXXXXX", err[200];
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    ck_assert_int_eq(rope_minimind_reference(&m, ids, 3, x, x + 150), 0);
    ck_assert_int_eq(rope_minimind_reference_npy(&m, ids, 3, 1, path, err,
                                                 sizeof err), 0);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    size_t hl = 10 + buf[8] + 256u * buf[9];
    ck_assert_uint_eq(got, hl + 300 * 8);
    ck_assert(memcmp(buf, "\x93NUMPY", 6) == 0);
    ck_assert(strstr((char *)buf + 10, "'<f8'") != NULL);
    ck_assert(strstr((char *)buf + 10, "(2, 3, 50)") != NULL);
    for (int i = 0; i < 300; i += 149) {
        double v;
        memcpy(&v, buf + hl + 8 * (size_t)i, 8); /* little endian host */
        ck_assert(v == x[i]);
    }
    ck_assert_int_eq(V, 50);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
/* W8b.8 The check block by block */
enum { MR_BLOCKS = 3 }; /* blocks of the models of the block checks */
typedef struct mr_record {
    float *states; /* [L + 1, n, D]: what enters each block, the norm */
    int n, D;
} mr_record;

static void mr_hook(void *ctx, int layer, long pos, float *x, int n, int D)
{
    mr_record *r = ctx;
    ck_assert(D == r->D && pos >= 0 && pos + n <= r->n);
    memcpy(r->states + ((size_t)layer * r->n + pos) * D, x,
           (size_t)n * D * sizeof *x);
}

static void mr_record_forward(const rope_minimind *m, const int *ids,
                              int n, int chunk, float *states,
                              float *logits)
{
    rope_minimind_state s;
    int V = m->config.vocab_size;
    mr_record r = {states, n, m->config.hidden_size};
    ck_assert_int_eq(rope_minimind_state_init(&s, m, chunk, 1), 0);
    s.hook = mr_hook;
    s.hook_ctx = &r;
    for (int i = 0; i < n; i += chunk) {
        int k = n - i < chunk ? n - i : chunk;
        ck_assert_int_eq(rope_minimind_forward(m, &s, ids + i, k,
                                               logits + (size_t)i * V, 1),
                         0);
    }
    rope_minimind_state_free(&s);
}
static double mr_block_ratio(const rope_minimind *m, int l, const float *in,
                             const double *y, int n, int *skipped)
{
    const rope_minimind_config *c = &m->config;
    int w = l < c->num_hidden_layers ? c->hidden_size : c->vocab_size;
    size_t cnt = (size_t)n * w;
    double *ref = malloc((2 * cnt + n) * sizeof *ref), *bd = ref + cnt;
    double *nb = bd + cnt, worst = 0;
    ck_assert(ref != NULL);
    int r = rope_minimind_reference_block_norm(m, l, in, n, 1, ref, bd, nb);
    ck_assert(r == 0 || r == ROPE_MINIMIND_REF_UNDECIDED);
    for (size_t i = 0; i < cnt; i += w) {
        double q = mr_ratio(y + i, ref + i, bd + i, w), dd = 0;
        for (int j = 0; j < w && l < c->num_hidden_layers; j++)
            dd += (y[i + j] - ref[i + j]) * (y[i + j] - ref[i + j]);
        q = fmax(q, sqrt(dd) / nb[i / w]);
        *skipped += isinf(bd[i]) != 0;
        worst = !isinf(bd[i]) && (q > worst || isnan(q)) ? q : worst;
    }
    free(ref);
    return worst;
}

static void mr_check_blocks(const rope_minimind *m, const float *states,
                            const float *logits, int n, double *ratio,
                            int *skipped)
{
    int L = m->config.num_hidden_layers;
    size_t nd = (size_t)n * m->config.hidden_size;
    size_t nv = (size_t)n * m->config.vocab_size;
    double *y = malloc((nd > nv ? nd : nv) * sizeof *y);
    ck_assert(y != NULL);
    for (int l = 0; l <= L; l++) {
        const float *out = l < L ? states + (l + 1) * nd : logits;
        for (size_t i = 0; i < (l < L ? nd : nv); i++)
            y[i] = out[i];
        ratio[l] = mr_block_ratio(m, l, states + l * nd, y, n, skipped);
    }
    free(y);
}

static void mr_block(const mr_plain *P, const rope_minimind *m, int l,
                     const float *x, int n, double *out)
{
    size_t nd = (size_t)n * m->config.hidden_size;
    ld *h = malloc(nd * sizeof *h);
    ck_assert(h != NULL);
    for (size_t i = 0; i < nd; i++)
        h[i] = x[i];
    mr_run(P, m, h, n, l, l + 1, out);
    free(h);
}
enum { MR_TIGHT = 14 }; /* each block's worst error >= 2^-MR_TIGHT */
START_TEST(test_blocks_within_bound)
{
    static const int lens[] = {1, 40, 130};
    rope_minimind m;
    float *data = mr_model_layers(&m, _i, 51 + _i, MR_BLOCKS);
    int V = m.config.vocab_size, D = m.config.hidden_size, L = MR_BLOCKS;
    int ids[130], skipped = 0, total = 0;
    double worst[MR_BLOCKS + 1] = {0}, r[MR_BLOCKS + 1];
    float *st = malloc((size_t)(L + 1) * 130 * D * sizeof *st);
    float *lg = malloc((size_t)130 * V * sizeof *lg);
    double *y = malloc((size_t)130 * V * sizeof *y);
    mr_plain P32 = {1, 0}, Pld = {0, 0};
    ck_assert(st && lg && y);
    for (int li = 0; li < 3; li++) {
        int n = lens[li];
        mr_ids(ids, n, V, 300 + li);
        mr_record_forward(&m, ids, n, n, st, lg);
        mr_check_blocks(&m, st, lg, n, r, &skipped);
        for (int l = 0; l <= L; l++) {
            const float *in = st + (size_t)l * n * D;
            int sk = 0;
            mr_block(&P32, &m, l, in, n, y);
            double rp = mr_block_ratio(&m, l, in, y, n, &sk);
            mr_block(&Pld, &m, l, in, n, y);
            double rl = mr_block_ratio(&m, l, in, y, n, &sk);
            ck_assert_msg(r[l] <= 1 && rp <= 1, "%s, n = %d, block %d: errors of %g "
                          "and %g bounds", mr_names[_i], n, l, r[l], rp);
            ck_assert_msg(rl <= ldexp(1, -28), "%s, n = %d, block %d: long double "
                          "%g bounds away", mr_names[_i], n, l, rl);
            worst[l] = fmax(worst[l], fmax(r[l], rp));
        }
        total += n * (L + 1);
    }
    ck_assert_int_le(2 * skipped, 3 * total); /* three of the four runs */
    for (int l = 0; l <= L; l++)
        ck_assert_msg(worst[l] >= ldexp(1, -MR_TIGHT), "%s, block %d: "
                      "worst error %g of the bound", mr_names[_i], l,
                      worst[l]);
    free(st);
    free(lg);
    free(y);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_blocks_through_cache)
{
    static const int chunks[] = {70, 16, 1};
    rope_minimind m;
    float *data = mr_model_layers(&m, _i, 61 + _i, MR_BLOCKS);
    const int n = 70;
    int V = m.config.vocab_size, D = m.config.hidden_size, ids[70];
    double r[MR_BLOCKS + 1];
    float *st = malloc((size_t)(MR_BLOCKS + 1) * n * D * sizeof *st);
    float *lg = malloc((size_t)n * V * sizeof *lg);
    ck_assert(st && lg);
    mr_ids(ids, n, V, 17);
    for (int ci = 0; ci < 3; ci++) {
        int skipped = 0;
        mr_record_forward(&m, ids, n, chunks[ci], st, lg);
        mr_check_blocks(&m, st, lg, n, r, &skipped);
        for (int l = 0; l <= MR_BLOCKS; l++)
            ck_assert_msg(r[l] <= 1, "%s, calls of %d, block %d: error of "
                          "%g bounds", mr_names[_i], chunks[ci], l, r[l]);
        ck_assert_int_lt(skipped, n * (MR_BLOCKS + 1) / 2);
    }
    free(st);
    free(lg);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_block_mistakes)
{
    rope_minimind m, bad;
    float *data = mr_model_layers(&m, _i, 71 + _i, MR_BLOCKS);
    const int n = 40;
    int V = m.config.vocab_size, D = m.config.hidden_size, ids[40], sk = 0;
    size_t nd = (size_t)n * D, nf = rope_minimind_n_floats(&m.config);
    double r[MR_BLOCKS + 1], *y = malloc(nd * sizeof *y);
    float *st = malloc((MR_BLOCKS + 1) * nd * sizeof *st);
    float *lg = malloc((size_t)n * V * sizeof *lg);
    float *data2 = malloc(nf * sizeof *data2);
    mr_plain P = {1, 1};
    ck_assert(y && st && lg && data2);
    mr_ids(ids, n, V, 23);
    mr_record_forward(&m, ids, n, n, st, lg);
    mr_block(&P, &m, 1, st + nd, n, y);
    double ri = mr_block_ratio(&m, 1, st + nd, y, n, &sk);
    ck_assert_msg(ri > 3, "%s: interleaved RoPE within %g bounds",
                  mr_names[_i], ri);
    memcpy(data2, data, nf * sizeof *data2);
    memset(&bad, 0, sizeof bad);
    ck_assert_int_eq(rope_minimind_bind(&bad, &m.config, data2), 0);
    data2[bad.layers[1].v_proj - data2] *= 1 + ldexp(1, -MR_SHIFT);
    mr_record_forward(&bad, ids, n, n, st, lg);
    mr_check_blocks(&m, st, lg, n, r, &sk);
    ck_assert_msg(r[0] <= 1 && r[1] > 3 && r[2] <= 1 && r[3] <= 1,
                  "%s: a changed weight of block 1: %g %g %g %g bounds",
                  mr_names[_i], r[0], r[1], r[2], r[3]);
    ck_assert_int_lt(sk, 2 * n);
    rope_minimind_free(&bad);
    free(data2);
    free(st);
    free(lg);
    free(y);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
START_TEST(test_blocks_undecided)
{
    rope_minimind m;
    float *data = mr_model_layers(&m, 1, 3, MR_BLOCKS);
    const int n = 5;
    int D = m.config.hidden_size, E = m.config.num_experts, ids[5];
    int first[2] = {-1, -1}, unbounded[2] = {0, 0};
    size_t nd = (size_t)n * D;
    float *st = malloc((MR_BLOCKS + 1) * nd * sizeof *st);
    float *lg = malloc((size_t)n * m.config.vocab_size * sizeof *lg);
    double *x = malloc(2 * nd * sizeof *x);
    char prefix[] = "/tmp/rope-refb-XXXXXX", err[200] = "", want[64];
    char path[64];
    int fd = mkstemp(prefix);
    ck_assert(st && lg && x && fd >= 0);
    close(fd);
    unlink(prefix);
    mr_ids(ids, n, m.config.vocab_size, 9);
    memset(data + (m.layers[1].gate - data), 0,
           (size_t)E * D * sizeof *data);
    mr_record_forward(&m, ids, n, n, st, lg);
    for (int l = 0; l < 2; l++) {
        int r = rope_minimind_reference_block(&m, l, st + l * nd, n, 1, x,
                                              x + nd);
        ck_assert(r == 0 || r == ROPE_MINIMIND_REF_UNDECIDED);
        for (int i = n - 1; i >= 0; i--)
            if (isinf(x[nd + (size_t)i * D])) {
                unbounded[l]++;
                first[l] = i;
            }
        ck_assert_int_eq(r == ROPE_MINIMIND_REF_UNDECIDED, unbounded[l] > 0);
    }
    ck_assert_int_lt(unbounded[0], n / 2);
    ck_assert_int_eq(unbounded[1], n);
    ck_assert_int_eq(rope_minimind_reference_block(&m, -1, st, n, 1, x,
                                                   x + nd), -1);
    ck_assert_int_eq(rope_minimind_reference_block(&m, MR_BLOCKS + 1, st, n,
                                                   1, x, x + nd), -1);
    ck_assert_int_eq(rope_minimind_reference_blocks_npy(&m, st, n, 1, prefix,
                                                        err, sizeof err),
                     ROPE_MINIMIND_REF_UNDECIDED);
    snprintf(want, sizeof want, "token %d in block %d", first[0] >= 0
             ? first[0] : 0, first[0] >= 0 ? 0 : 1);
    ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    snprintf(path, sizeof path, "%s-blocks.npy", prefix);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s-head.npy", prefix);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s-norms.npy", prefix);
    ck_assert_int_eq(unlink(path), 0);
    free(st);
    free(lg);
    free(x);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
static double *mr_read_f64(const char *path, const char *shape,
                           size_t count)
{
    FILE *f = fopen(path, "rb");
    unsigned char pre[10];
    char h[256];
    double *x = malloc(count * sizeof *x);
    ck_assert(f != NULL && x != NULL);
    ck_assert_uint_eq(fread(pre, 1, 10, f), 10);
    size_t hl = pre[8] + 256u * pre[9];
    ck_assert(hl < sizeof h && fread(h, 1, hl, f) == hl);
    h[hl] = '\0';
    ck_assert_msg(strstr(h, shape) != NULL && strstr(h, "'<f8'") != NULL,
                  "%s", h);
    ck_assert_uint_eq(fread(x, 8, count, f), count); /* little endian */
    ck_assert(fgetc(f) == EOF);
    fclose(f);
    unlink(path);
    return x;
}

START_TEST(test_blocks_npy)
{
    rope_minimind m;
    float *data = mr_model_layers(&m, 0, 5, MR_BLOCKS);
    const int n = 6, L = MR_BLOCKS;
    int D = m.config.hidden_size, V = m.config.vocab_size, ids[6];
    size_t nd = (size_t)n * D, nv = (size_t)n * V;
    float *st = malloc((L + 1) * nd * sizeof *st);
    float *lg = malloc(nv * sizeof *lg);
    double *x = malloc(2 * nv * sizeof *x);
    char prefix[] = "/tmp/rope-refb-XXXXXX", err[200], path[64], sh[32];
    int fd = mkstemp(prefix);
    ck_assert(st && lg && x && fd >= 0);
    close(fd);
    unlink(prefix);
    mr_ids(ids, n, V, 29);
    mr_record_forward(&m, ids, n, n, st, lg);
    ck_assert_int_eq(rope_minimind_reference_blocks_npy(&m, st, n, 2, prefix,
                                                        err, sizeof err), 0);
    snprintf(path, sizeof path, "%s-blocks.npy", prefix);
    snprintf(sh, sizeof sh, "(2, %d, %d, %d)", L, n, D);
    double *b = mr_read_f64(path, sh, 2 * L * nd);
    ck_assert_int_eq(rope_minimind_reference_block(&m, 2, st + 2 * nd, n, 1,
                                                   x, x + nd), 0);
    ck_assert(memcmp(b + 2 * nd, x, nd * sizeof *x) == 0);
    ck_assert(memcmp(b + (L + 2) * nd, x + nd, nd * sizeof *x) == 0);
    free(b);
    snprintf(path, sizeof path, "%s-norms.npy", prefix);
    snprintf(sh, sizeof sh, "(%d, %d)", L, n);
    b = mr_read_f64(path, sh, (size_t)L * n);
    ck_assert_int_eq(rope_minimind_reference_block_norm(&m, 2, st + 2 * nd, n,
                                                        1, x, x + nd,
                                                        x + 2 * nd), 0);
    ck_assert(memcmp(b + 2 * n, x + 2 * nd, n * sizeof *x) == 0);
    free(b);
    snprintf(path, sizeof path, "%s-head.npy", prefix);
    snprintf(sh, sizeof sh, "(2, %d, %d)", n, V);
    b = mr_read_f64(path, sh, 2 * nv);
    ck_assert_int_eq(rope_minimind_reference_block(&m, L, st + L * nd, n, 1,
                                                   x, x + nv), 0);
    ck_assert(memcmp(b, x, 2 * nv * sizeof *x) == 0);
    free(b);
    ck_assert_int_eq(rope_minimind_reference_blocks_npy(&m, st, n, 1,
                                                        "/nonexistent/x",
                                                        err, sizeof err),
                     -1);
    ck_assert(strstr(err, "/nonexistent/x-blocks.npy: ") == err);
    free(st);
    free(lg);
    free(x);
    free(data);
    rope_minimind_free(&m);
}
END_TEST
/* W8b.6 The tests */
Suite *minimind_reference_suite(void)
{
    Suite *s = suite_create("chapter 8: the reference");
    TCase *tc = tcase_create("reference");
    TCase *th = threads_tcase_create("reference threads");
    tcase_add_loop_test(tc, test_reference_is_exact, 0, MR_CONFIGS);
    tcase_add_loop_test(tc, test_float32_within_bound, 0, MR_CONFIGS);
    tcase_add_loop_test(tc, test_mistakes_fall_outside, 0, MR_CONFIGS);
    tcase_add_test(tc, test_yarn_tables_differ);
    tcase_add_test(tc, test_undecided_route);
    tcase_add_test(tc, test_reference_arguments);
    tcase_add_test(tc, test_reference_npy);
    tcase_add_test(th, test_sigma);
    /* W8b.8 The check block by block */
    tcase_add_loop_test(tc, test_blocks_within_bound, 0, MR_CONFIGS);
    tcase_add_loop_test(tc, test_blocks_through_cache, 0, MR_CONFIGS);
    tcase_add_loop_test(tc, test_block_mistakes, 0, MR_CONFIGS);
    tcase_add_test(tc, test_blocks_undecided);
    tcase_add_test(th, test_blocks_npy);
    /* W8b.6 The tests */
    tcase_add_test(th, test_reference_threads);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, th);
    return s;
}
