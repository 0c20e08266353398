/* test-exercises-positions.c: the tests of chapter 1's exercises. */
#include <math.h>
#include <stdlib.h>
#include "tests.h"
#include "exercises-positions.h"

START_TEST(test_ex_softmax_values)
{
    double x[2] = {0.0, log(2.0)};
    ex_softmax(x, 2);
    ck_assert_double_eq_tol(x[0], 1.0 / 3.0, 1e-15);
    ck_assert_double_eq_tol(x[1], 2.0 / 3.0, 1e-15);
}
END_TEST

START_TEST(test_ex_softmax_large)
{
    double x[3] = {1000.0, 999.0, 1000.0};
    ex_softmax(x, 3);
    double e = exp(-1.0), z = 2.0 + e;
    ck_assert_double_eq_tol(x[0], 1.0 / z, 1e-15);
    ck_assert_double_eq_tol(x[1], e / z, 1e-15);
    ck_assert_double_eq_tol(x[2], 1.0 / z, 1e-15);
}
END_TEST
START_TEST(test_ex_invert_permutation)
{
    enum { N = 9 };
    int perm[N], inv[N];
    uint64_t st = 300 + (uint64_t)_i;
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(rope_uniform(&st) * (i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int i = 0; i < N; i++) inv[i] = -1;
    ex_invert_permutation(perm, N, inv);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(inv[perm[i]], i);
        ck_assert_int_eq(perm[inv[i]], i);
    }
}
END_TEST
START_TEST(test_ex_crossover_position)
{
    ck_assert_int_eq(ex_crossover_position(0.554, 768), 1);
    ck_assert_int_eq(ex_crossover_position(100.0, 768), 4);
    ck_assert_int_eq(ex_crossover_position(8.0, 16), 3);
    ck_assert_int_eq(ex_crossover_position(0.0, 16), 1);
}
END_TEST
START_TEST(test_ex_attention_row)
{
    enum { N = 5, D = 4 };
    double x[N * D], w[D * D], q[D], out[D], full[N * D];
    uint64_t st = 77;
    for (int i = 0; i < N * D; i++) x[i] = rope_gaussian(&st);
    for (int i = 0; i < D * D; i++) w[i] = (i % (D + 1) == 0);
    /* identity projections: Q = K = V = X */
    rope_tiny_attention(x, N, D, D, w, w, w, full);
    for (int j = 0; j < D; j++) q[j] = x[2 * D + j];
    ex_attention_row(q, x, x, N, D, out);
    for (int j = 0; j < D; j++)
        ck_assert_double_eq_tol(out[j], full[2 * D + j], 1e-12);
}
END_TEST

Suite *exercises_positions_suite(void)
{
    Suite *s = suite_create("chapter 1: exercises");
    TCase *tc;
    tc = tcase_create("exercise 1.1");
    tcase_add_test(tc, test_ex_softmax_values);
    tcase_add_test(tc, test_ex_softmax_large);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 1.2");
    tcase_add_loop_test(tc, test_ex_invert_permutation, 0, 5);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 1.3");
    tcase_add_test(tc, test_ex_crossover_position);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 1.4");
    tcase_add_test(tc, test_ex_attention_row);
    suite_add_tcase(s, tc);
    return s;
}
