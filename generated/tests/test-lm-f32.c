/* W7.13 The tests of the trainer */
/* test-lm-f32.c: chapter 7's trainer (workshop W7) */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

static void lm_fill(float *x, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(2 * rope_uniform(&st) - 1);
}

START_TEST(test_lm_linear_fast_is_the_definition)
{
    enum { R = 7, IN = 37, OUT = 19 };
    static float x[R * IN], w[OUT * IN], y[R * OUT], dy[R * OUT];
    static float dx[R * IN], dw[OUT * IN], ex[R * IN], ew[OUT * IN];
    lm_fill(x, R * IN, 1);
    lm_fill(w, OUT * IN, 2);
    lm_fill(dy, R * OUT, 3);
    rope_f32_linear(x, w, y, R, IN, OUT);
    for (int r = 0; r < R; r++)
        for (int o = 0; o < OUT; o++) {
            float s = 0;
            for (int i = 0; i < IN; i++)
                s += x[r * IN + i] * w[o * IN + i];
            ck_assert_msg(memcmp(&s, &y[r * OUT + o], sizeof s) == 0,
                          "y[%d][%d]: %.9g, the dot product %.9g", r, o,
                          (double)y[r * OUT + o], (double)s);
        }
    memset(dw, 0, sizeof dw);
    memset(ew, 0, sizeof ew);
    memset(ex, 0, sizeof ex);
    rope_f32_linear_backward(x, w, dy, dx, dw, R, IN, OUT);
    for (int r = 0; r < R; r++)
        for (int o = 0; o < OUT; o++)
            for (int i = 0; i < IN; i++) {
                ex[r * IN + i] += dy[r * OUT + o] * w[o * IN + i];
                ew[o * IN + i] += dy[r * OUT + o] * x[r * IN + i];
            }
    ck_assert(memcmp(dx, ex, sizeof dx) == 0);
    ck_assert(memcmp(dw, ew, sizeof dw) == 0);
}
END_TEST
START_TEST(test_lm_dynamic_factor_is_n_over_L)
{
    enum { D = 16, L = 256 };
    static const long lengths[] = {64, 256, 512, 768, 1024, 4096};
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
        long n = lengths[k];
        double s = n > L ? (double)n / L : 1.0;
        float *c = malloc(4 * (size_t)n * D * sizeof *c);
        float *sn = c + (size_t)n * D, *c2 = sn + (size_t)n * D;
        float *s2 = c2 + (size_t)n * D;
        ck_assert(c != NULL);
        ck_assert_int_eq(rope_lm_tables(ROPE_LM_M_DYNAMIC, 1e4, 4, L, n, D,
                                        c, sn), 0);
        ck_assert_int_eq(rope_precompute_freqs_cis(
                             c2, s2, D, n, rope_ntk_aware_base(1e4, s, D),
                             ROPE_PRECISION_FLOAT), 0);
        ck_assert(memcmp(c, c2, (size_t)n * D * sizeof *c) == 0);
        ck_assert(memcmp(sn, s2, (size_t)n * D * sizeof *c) == 0);
        if (n > L) {
            ck_assert_int_eq(rope_precompute_freqs_cis(
                                 c2, s2, D, n,
                                 rope_ntk_aware_base(1e4, s * s - s + 1, D),
                                 ROPE_PRECISION_FLOAT), 0);
            ck_assert(memcmp(sn, s2, (size_t)n * D * sizeof *c) != 0);
        }
        free(c);
    }
}
END_TEST
START_TEST(test_lm_yarn_temperature_on_and_off)
{
    enum { D = 16, L = 256, N = 1024 };
    const double xi = 0.1 * log(4.0) + 1;
    static const rope_lm_method on[] = {ROPE_LM_M_YARN_HF,
                                        ROPE_LM_M_YARN_MM_TEMP};
    static const rope_lm_method off[] = {ROPE_LM_M_YARN_HF_NOTEMP,
                                         ROPE_LM_M_YARN_MM};
    static float c1[N * D], s1[N * D], c0[N * D], s0[N * D];
    ck_assert(fabs(rope_yarn_get_mscale(4, 1) - xi) < 1e-15);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(rope_lm_tables(on[k], 1e4, 4, L, N, D, c1, s1), 0);
        ck_assert_int_eq(rope_lm_tables(off[k], 1e4, 4, L, N, D, c0, s0), 0);
        ck_assert(c0[0] == 1.0f); /* position 0, no temperature */
        for (int i = 0; i < N * D; i++) {
            ck_assert(fabs(c1[i] - xi * c0[i]) <= 0x1p-23 * xi * fabs(c0[i])
                                                  + FLT_MIN);
            ck_assert(fabs(s1[i] - xi * s0[i]) <= 0x1p-23 * xi * fabs(s0[i])
                                                  + FLT_MIN);
        }
    }
    {   /* the score of q at position 700 and k at 300 */
        float q[D], k[D], q1[D], k1[D];
        double z0 = 0, z1 = 0;
        lm_fill(q, D, 5);
        lm_fill(k, D, 6);
        memcpy(q1, q, sizeof q);
        memcpy(k1, k, sizeof k);
        ck_assert_int_eq(rope_lm_tables(ROPE_LM_M_YARN_HF_NOTEMP, 1e4, 4, L,
                                        N, D, c0, s0), 0);
        ck_assert_int_eq(rope_lm_tables(ROPE_LM_M_YARN_HF, 1e4, 4, L, N, D,
                                        c1, s1), 0);
        rope_apply_rotary_pos_emb(q, k, c0 + 700 * D, s0 + 700 * D, 1, 1, 1,
                                  1, D, 0, ROPE_PAIRING_HALF);
        rope_apply_rotary_pos_emb(q1, k1, c1 + 700 * D, s1 + 700 * D, 1, 1,
                                  1, 1, D, 0, ROPE_PAIRING_HALF);
        for (int i = 0; i < D; i++)
            z0 += (double)q[i] * k[i], z1 += (double)q1[i] * k1[i];
        ck_assert(fabs(z1 - xi * xi * z0) <= 1e-5 * (fabs(z0) + 1));
    }
}
END_TEST
enum { /* the tiny model of the trainer's tests */
    LM_TINY_V = 11, LM_TINY_DM = 16, LM_TINY_H = 2, LM_TINY_D = 8,
    LM_TINY_F = 32
};

static void lm_tiny_config(rope_lm_config *c)
{
    rope_lm_config_defaults(c);
    c->vocab_size = LM_TINY_V;
    c->block.hidden_size = LM_TINY_DM;
    c->block.num_attention_heads = LM_TINY_H;
    c->block.num_key_value_heads = 1;
    c->block.head_dim = LM_TINY_D;
    c->block.intermediate_size = LM_TINY_F;
}

static void lm_tiny_run(uint64_t seed, int threads, double *loss,
                        float **weights, size_t *n)
{
    rope_lm_config c;
    rope_lm m;
    rope_lm_buffers b;
    rope_lm_adamw o;
    enum { N = 24, B = 3, D = LM_TINY_D };
    static float cs[N * D], sn[N * D];
    uint64_t st = 99;
    lm_tiny_config(&c);
    ck_assert_int_eq(rope_lm_init(&m, &c, seed), 0);
    ck_assert_int_eq(rope_lm_buffers_make(&b, &m, B, N, threads), 0);
    ck_assert_int_eq(rope_lm_tables(ROPE_LM_M_ROPE, 1e4, 1, N, N, D, cs, sn),
                     0);
    rope_lm_adamw_defaults(&o);
    for (int step = 0; step < 6; step++) {
        for (int i = 0; i < B * N; i++) { /* each token the sum of two */
            b.tokens[i] = (int)(rope_splitmix64(&st) % LM_TINY_V);
            b.targets[i] = i % N ? (b.tokens[i] + b.tokens[i - 1]) % LM_TINY_V
                                 : -1;
        }
        ck_assert_int_eq(rope_lm_forward(&m, &b, cs, sn), 0);
        loss[step] = rope_lm_backward(&m, &b, cs, sn);
        rope_lm_adamw_step(&m, &o, rope_lm_lr(1e-2, step, 6));
    }
    *n = m.n_params;
    *weights = malloc(m.n_params * sizeof **weights);
    ck_assert(*weights != NULL);
    memcpy(*weights, m.w, m.n_params * sizeof **weights);
    rope_lm_buffers_free(&b);
    rope_lm_free(&m);
}

START_TEST(test_lm_training_repeats_bit_for_bit)
{
    double l1[6], l2[6], l3[6], l4[6];
    float *w1, *w2, *w3, *w4;
    size_t n1, n2, n3, n4;
    lm_tiny_run(7, 1, l1, &w1, &n1);
    lm_tiny_run(7, 1, l2, &w2, &n2);
    lm_tiny_run(7, 2, l3, &w3, &n3);
    lm_tiny_run(8, 1, l4, &w4, &n4);
    ck_assert(n1 == n2 && n1 == n3 && n1 == n4);
    ck_assert(memcmp(l1, l2, sizeof l1) == 0);
    ck_assert(memcmp(w1, w2, n1 * sizeof *w1) == 0);
    ck_assert(memcmp(l1, l3, sizeof l1) == 0);
    ck_assert(memcmp(w1, w3, n1 * sizeof *w1) == 0);
    ck_assert(memcmp(l1, l4, sizeof l1) != 0);
    ck_assert(l1[5] < l1[0]); /* and it learns */
    free(w1);
    free(w2);
    free(w3);
    free(w4);
}
END_TEST
static double lm_loss_at(rope_lm *m, rope_lm_buffers *b, const float *cs,
                         const float *sn)
{
    ck_assert_int_eq(rope_lm_forward(m, b, cs, sn), 0);
    return rope_lm_loss(m, b, NULL, NULL);
}

START_TEST(test_lm_gradient_against_differences)
{
    enum { N = 24, B = 2, D = LM_TINY_D, DM = LM_TINY_DM, F = LM_TINY_F,
           V = LM_TINY_V, H = LM_TINY_H };
    rope_lm_config c;
    rope_lm m;
    rope_lm_buffers b;
    static float cs[N * D], sn[N * D];
    uint64_t st = 3;
    const double h = 0x1p-6, u = 0x1p-24, M = 8;
    const double C = 2 * (2 * DM + DM + H * D + F + D + 2 + N * (D + 2))
                     + DM + V;
    int judged = 0, groups = 0;
    lm_tiny_config(&c);
    ck_assert_int_eq(rope_lm_init(&m, &c, 11), 0);
    ck_assert_int_eq(rope_lm_buffers_make(&b, &m, B, N, 1), 0);
    ck_assert_int_eq(rope_lm_tables(ROPE_LM_M_ROPE, 1e4, 1, N, N, D, cs, sn),
                     0);
    for (int i = 0; i < B * N; i++) {
        b.tokens[i] = (int)(rope_splitmix64(&st) % V);
        b.targets[i] = (int)(rope_splitmix64(&st) % V);
    }
    ck_assert_int_eq(rope_lm_forward(&m, &b, cs, sn), 0);
    rope_lm_backward(&m, &b, cs, sn);
    float *g = malloc(m.n_params * sizeof *g), *w0 = malloc(m.n_params * sizeof *g);
    ck_assert(g != NULL && w0 != NULL);
    memcpy(g, m.g, m.n_params * sizeof *g);
    memcpy(w0, m.w, m.n_params * sizeof *w0);
    size_t at[32], len[32];
    int n_groups = 0;
    at[n_groups] = m.embed;
    len[n_groups++] = (size_t)V * DM;
    for (int l = 0; l < c.num_hidden_layers; l++) {
        size_t base = m.blocks + (size_t)l * m.layout.n;
        const size_t *off[] = {&m.layout.q_proj, &m.layout.k_proj,
                               &m.layout.v_proj, &m.layout.o_proj,
                               &m.layout.gate_proj, &m.layout.up_proj,
                               &m.layout.down_proj};
        const size_t sz[] = {(size_t)DM * H * D, (size_t)DM * D, (size_t)DM * D,
                             (size_t)H * D * DM, (size_t)DM * F, (size_t)DM * F,
                             (size_t)F * DM};
        for (int j = 0; j < 7; j++) {
            at[n_groups] = base + *off[j];
            len[n_groups++] = sz[j];
        }
    }
    at[n_groups] = m.norm;
    len[n_groups++] = DM;
    for (int k = 0; k < n_groups; k++, groups++) {
        double norm = 0, d[2];
        for (size_t i = 0; i < len[k]; i++)
            norm += (double)g[at[k] + i] * g[at[k] + i];
        norm = sqrt(norm);
        for (int e = 0; e < 2; e++) {
            double step = h * (e + 1), up, down;
            for (size_t i = 0; i < len[k]; i++)
                m.w[at[k] + i] = (float)(w0[at[k] + i]
                                         + step * g[at[k] + i] / norm);
            up = lm_loss_at(&m, &b, cs, sn);
            for (size_t i = 0; i < len[k]; i++)
                m.w[at[k] + i] = (float)(w0[at[k] + i]
                                         - step * g[at[k] + i] / norm);
            down = lm_loss_at(&m, &b, cs, sn);
            memcpy(m.w + at[k], w0 + at[k], len[k] * sizeof *w0);
            d[e] = (up - down) / (2 * step);
        }
        double tol = 2 * fabs(d[1] - d[0]) + C * u * M / h;
        if (norm < 10 * tol)
            continue;
        judged++;
        ck_assert_msg(fabs(d[0] - norm) <= tol,
                      "matrix %d: gradient norm %.6g, difference %.6g, "
                      "allowed %.3g", k, norm, d[0], tol);
    }
    ck_assert_msg(2 * judged > groups, "only %d of %d matrices judged",
                  judged, groups);
    free(g);
    free(w0);
    rope_lm_buffers_free(&b);
    rope_lm_free(&m);
}
END_TEST

Suite *lm_f32_suite(void)
{
    Suite *s = suite_create("chapter 7: the trainer");
    TCase *tc = tcase_create("trainer");
    TCase *th = threads_tcase_create("trainer, threads");
    tcase_set_timeout(tc, 300);
    tcase_set_timeout(th, 300);
    tcase_add_test(tc, test_lm_linear_fast_is_the_definition);
    tcase_add_test(tc, test_lm_dynamic_factor_is_n_over_L);
    tcase_add_test(tc, test_lm_yarn_temperature_on_and_off);
    tcase_add_test(th, test_lm_training_repeats_bit_for_bit);
    tcase_add_test(tc, test_lm_gradient_against_differences);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, th);
    return s;
}
