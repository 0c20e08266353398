/* W1.2 The tests of chapter 1 */
/* test-positions.c: the claims of chapter 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

/* W1.2.2 Tests of attention */
#define EQ_TOL 1e-12

START_TEST(test_softmax_rows_sum_to_one)
{
    double s[6] = {1.0, 2.0, 3.0, -50.0, 0.0, 800.0};
    rope_softmax_rows(s, 2, 3);
    for (int i = 0; i < 2; i++) {
        double sum = s[3 * i] + s[3 * i + 1] + s[3 * i + 2];
        ck_assert_double_eq_tol(sum, 1.0, 1e-15);
    }
    ck_assert(s[5] > 0.999999 && isfinite(s[5]));
}
END_TEST

START_TEST(test_softmax_shift_invariant)
{
    double a[3] = {0.5, -1.0, 2.0}, b[3] = {100.5, 99.0, 102.0};
    rope_softmax_rows(a, 1, 3);
    rope_softmax_rows(b, 1, 3);
    for (int j = 0; j < 3; j++)
        ck_assert_double_eq_tol(a[j], b[j], 1e-15);
    ck_assert_double_eq_tol(a[0] / a[1], exp(1.5), 1e-12);
}
END_TEST
START_TEST(test_linear_multiplies_by_the_transpose)
{
    enum { N = 2, IN = 5, OUT = 3 };
    uint64_t st = 11;
    double x[N * IN], w[OUT * IN], wt[IN * OUT], y[N * OUT], z[N * OUT];
    for (int i = 0; i < N * IN; i++) x[i] = rope_gaussian(&st);
    for (int o = 0; o < OUT; o++)
        for (int l = 0; l < IN; l++)
            wt[l * OUT + o] = w[o * IN + l] = rope_gaussian(&st);
    rope_linear(x, w, y, N, IN, OUT);
    rope_matmul(x, wt, z, N, IN, OUT);
    for (int i = 0; i < N * OUT; i++)
        ck_assert_double_eq(y[i], z[i]);
    ck_assert(fabs(y[0]) > 1e-3);
}
END_TEST
START_TEST(test_one_token_gets_its_value)
{
    rope_example ex;
    double out[ROPE_EX_DHEAD], v[ROPE_EX_DHEAD];
    rope_example_init(&ex, 7);
    ck_assert_int_eq(rope_tiny_attention(ex.emb, 1, ROPE_EX_DMODEL,
        ROPE_EX_DHEAD, ex.wq, ex.wk, ex.wv, out), 0);
    rope_linear(ex.emb, ex.wv, v, 1, ROPE_EX_DMODEL, ROPE_EX_DHEAD);
    for (int j = 0; j < ROPE_EX_DHEAD; j++)
        ck_assert_double_eq_tol(out[j], v[j], EQ_TOL);
}
END_TEST
/* 1.2 Attention does not see order */
static void random_permutation(int *perm, int n, uint64_t *st)
{
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rope_uniform(st) * (i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
}

START_TEST(test_attention_is_permutation_equivariant)
{
    enum { N = 8 };
    uint64_t st = 1000 + (uint64_t)_i;
    rope_example ex;
    int tokens[N], perm[N];
    double x[N * ROPE_EX_DMODEL], px[N * ROPE_EX_DMODEL];
    double out[N * ROPE_EX_DHEAD], pout[N * ROPE_EX_DHEAD];
    rope_example_init(&ex, 42 + (uint64_t)_i);
    for (int t = 0; t < N; t++)
        tokens[t] = (int)(rope_uniform(&st) * ROPE_EX_VOCAB);
    random_permutation(perm, N, &st);
    rope_embed(&ex, tokens, N, x);
    rope_permute_rows(x, perm, N, ROPE_EX_DMODEL, px);
    rope_tiny_attention(x, N, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                        ex.wq, ex.wk, ex.wv, out);
    rope_tiny_attention(px, N, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                        ex.wq, ex.wk, ex.wv, pout);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < ROPE_EX_DHEAD; j++)
            ck_assert_double_eq_tol(pout[i * ROPE_EX_DHEAD + j],
                out[perm[i] * ROPE_EX_DHEAD + j], EQ_TOL);
}
END_TEST
/* 1.2.2 Running it */
START_TEST(test_cat_chases_dog_equals_dog_chases_cat)
{
    double a[3 * ROPE_EX_DHEAD], b[3 * ROPE_EX_DHEAD];
    ck_assert_int_eq(rope_catdog(2024, a, b), 0);
    double catdog = 0.0;
    for (int j = 0; j < ROPE_EX_DHEAD; j++) {
        ck_assert_double_eq_tol(a[0 * ROPE_EX_DHEAD + j],
                                b[2 * ROPE_EX_DHEAD + j], EQ_TOL);
        ck_assert_double_eq_tol(a[1 * ROPE_EX_DHEAD + j],
                                b[1 * ROPE_EX_DHEAD + j], EQ_TOL);
        ck_assert_double_eq_tol(a[2 * ROPE_EX_DHEAD + j],
                                b[0 * ROPE_EX_DHEAD + j], EQ_TOL);
        catdog += fabs(a[j] - a[2 * ROPE_EX_DHEAD + j]);
    }
    ck_assert(catdog > 1e-3);
}
END_TEST
/* W1.2.2 Tests of attention */
START_TEST(test_positions_break_the_symmetry)
{
    static const int s1[3] = {0, 1, 2}, s2[3] = {2, 1, 0};
    rope_example ex;
    double x1[3 * ROPE_EX_DMODEL], x2[3 * ROPE_EX_DMODEL];
    double o1[3 * ROPE_EX_DHEAD], o2[3 * ROPE_EX_DHEAD];
    rope_example_init(&ex, 2024);
    rope_embed(&ex, s1, 3, x1);
    rope_embed(&ex, s2, 3, x2);
    rope_add_integer_positions(x1, 3, ROPE_EX_DMODEL);
    rope_add_integer_positions(x2, 3, ROPE_EX_DMODEL);
    rope_tiny_attention(x1, 3, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                        ex.wq, ex.wk, ex.wv, o1);
    rope_tiny_attention(x2, 3, ROPE_EX_DMODEL, ROPE_EX_DHEAD,
                        ex.wq, ex.wk, ex.wv, o2);
    double diff = 0.0;
    for (int j = 0; j < ROPE_EX_DHEAD; j++)
        diff += fabs(o1[j] - o2[2 * ROPE_EX_DHEAD + j]);
    ck_assert_msg(diff > 1e-3, "cat's rows still agree: %g", diff);
}
END_TEST
START_TEST(test_worked_example)
{
    double x[12] = {2, 0, 0, 0, 0, 2, 0, 0, 1, 1, 0, 0};
    double id[16], out[12];
    for (int i = 0; i < 16; i++) id[i] = (i % 5 == 0);
    ck_assert_int_eq(rope_tiny_attention(x, 3, 4, 4, id, id, id, out), 0);
    double e = exp(1.0), z = e * e + 1.0 + e;
    double a1 = e * e / z, a2 = 1.0 / z, a3 = e / z;
    ck_assert_double_eq_tol(out[0], 2.0 * a1 + a3, 1e-14);
    ck_assert_double_eq_tol(out[1], 2.0 * a2 + a3, 1e-14);
    ck_assert_double_eq_tol(out[2], 0.0, 1e-14);
    ck_assert_double_eq_tol(out[3], 0.0, 1e-14);
}
END_TEST
/* W1.2.3 Tests of positions */
START_TEST(test_gaussian_has_unit_variance)
{
    enum { N = 200000 };
    uint64_t st = 99;
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < N; i++) {
        double z = rope_gaussian(&st);
        sum += z; sq += z * z;
    }
    /* standard errors: 1/sqrt(N) = 0.0022 for the mean,
       sqrt(2/N) = 0.0032 for the variance; 5 of them */
    ck_assert_double_eq_tol(sum / N, 0.0, 0.012);
    ck_assert_double_eq_tol(sq / N, 1.0, 0.016);
}
END_TEST

START_TEST(test_embedding_norm_is_sigma_sqrt_d)
{
    enum { D = 768 };
    double x[D];
    uint64_t st = 5 + (uint64_t)_i;
    for (int j = 0; j < D; j++) x[j] = 0.02 * rope_gaussian(&st);
    ck_assert_double_eq_tol(rope_norm(x, D) / (0.02 * sqrt(D)), 1.0,
                            0.15);
}
END_TEST
START_TEST(test_integer_positions_grow_without_bound)
{
    enum { D = 16, N = 1001 };
    double *x = calloc((size_t)N * D, sizeof *x);
    ck_assert(x != NULL);
    rope_add_integer_positions(x, N, D);
    for (int t = 0; t < N; t += 50)
        ck_assert_double_eq(rope_norm(x + (size_t)t * D, D),
                            t * 4.0);
    free(x);
}
END_TEST

START_TEST(test_integer_positions_drown_the_tokens)
{
    enum { D = 768 };
    double a[D], b[D], ta[D], tb[D];
    uint64_t st = 11;
    for (int j = 0; j < D; j++) a[j] = 0.02 * rope_gaussian(&st);
    for (int j = 0; j < D; j++) b[j] = 0.02 * rope_gaussian(&st);
    ck_assert(fabs(rope_cosine(a, b, D)) < 0.2);
    for (int j = 0; j < D; j++) {
        ta[j] = a[j] + 1000.0;
        tb[j] = b[j] + 1000.0;
    }
    ck_assert(rope_cosine(ta, tb, D) > 0.999999);
}
END_TEST
START_TEST(test_normalized_positions_are_bounded)
{
    int n = 2 + _i * 37;
    for (int t = 0; t < n; t++) {
        double p = rope_normalized_position(t, n);
        ck_assert(p >= 0.0 && p <= 1.0);
    }
    ck_assert_double_eq(rope_normalized_position(0, n), 0.0);
    ck_assert_double_eq(rope_normalized_position(n - 1, n), 1.0);
    ck_assert_double_eq(rope_normalized_position(0, 1), 0.0);
}
END_TEST

START_TEST(test_normalized_step_depends_on_length)
{
    double s4 = rope_normalized_position(1, 4)
              - rope_normalized_position(0, 4);
    double s16 = rope_normalized_position(6, 16)
               - rope_normalized_position(5, 16);
    ck_assert_double_eq_tol(s4, 1.0 / 3.0, 1e-15);
    ck_assert_double_eq_tol(s16, 1.0 / 15.0, 1e-15);
    ck_assert(fabs(s4 - s16) > 0.2);
    ck_assert_double_eq(rope_normalized_position(2, 5), 0.5);
    ck_assert_double_eq(rope_normalized_position(512, 1025), 0.5);
}
END_TEST
START_TEST(test_add_normalized_positions)
{
    enum { N = 5, D = 3 };
    double x[N * D] = {0};
    rope_add_normalized_positions(x, N, D);
    for (int t = 0; t < N; t++)
        for (int j = 0; j < D; j++)
            ck_assert_double_eq(x[t * D + j], t / 4.0);
}
END_TEST
/* W1.2.4 Tests of the command line */
static char *printed_by(void (*print)(FILE *, int))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f != NULL);
    print(f, 0);
    fclose(f);
    return buf;
}

START_TEST(test_demo_prints_the_shared_tables)
{
    static const char *names[] = {"permutation", "integer", "normalized"};
    void (*printers[])(FILE *, int) = {
        table_print_catdog, table_print_integer, table_print_normalized
    };
    char args[64];
    snprintf(args, sizeof args, "demo %s", names[_i]);
    cli_result r = cli_run(args);
    char *expect = printed_by(printers[_i]);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, expect);
    ck_assert_str_eq(r.err, "");
    free(expect);
    cli_result_free(&r);
}
END_TEST

START_TEST(test_cli_usage_errors_are_one_line)
{
    static const char *bad[] = {"demo", "demo nosuch", "demo a b",
                                "nosuch-command"};
    cli_result r = cli_run(bad[_i]);
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: ", 13) == 0,
                  "unexpected error text: %s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_free(&r);
}
END_TEST

START_TEST(test_cli_help_lists_demo)
{
    cli_result r = cli_run("--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "demo NAME"));
    cli_result_free(&r);
}
END_TEST

/* W1.2 The tests of chapter 1 */
Suite *positions_suite(void)
{
    Suite *s = suite_create("chapter 1: why positions");
    TCase *a = tcase_create("attention");
    TCase *p = tcase_create("positions");
    TCase *c = tcase_create("command line");
    /* W1.2.4 Tests of the command line */
    tcase_add_loop_test(c, test_demo_prints_the_shared_tables, 0, 3);
    tcase_add_loop_test(c, test_cli_usage_errors_are_one_line, 0, 4);
    tcase_add_test(c, test_cli_help_lists_demo);
    tcase_add_test(a, test_softmax_rows_sum_to_one);
    tcase_add_test(a, test_softmax_shift_invariant);
    tcase_add_test(a, test_linear_multiplies_by_the_transpose);
    tcase_add_test(a, test_one_token_gets_its_value);
    tcase_add_loop_test(a, test_attention_is_permutation_equivariant, 0, 8);
    tcase_add_test(a, test_cat_chases_dog_equals_dog_chases_cat);
    tcase_add_test(a, test_positions_break_the_symmetry);
    tcase_add_test(a, test_worked_example);
    tcase_add_test(p, test_gaussian_has_unit_variance);
    tcase_add_loop_test(p, test_embedding_norm_is_sigma_sqrt_d, 0, 4);
    tcase_add_test(p, test_integer_positions_grow_without_bound);
    tcase_add_test(p, test_integer_positions_drown_the_tokens);
    tcase_add_loop_test(p, test_normalized_positions_are_bounded, 0, 4);
    tcase_add_test(p, test_normalized_step_depends_on_length);
    tcase_add_test(p, test_add_normalized_positions);
    /* W1.2 The tests of chapter 1 */
    suite_add_tcase(s, a);
    suite_add_tcase(s, p);
    suite_add_tcase(s, c);
    return s;
}
