/* W1.5 The exercise files */
/* test-exercises-positions.c: the tests of chapter 1's exercises. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-positions.h"

static const ex_info ex_1_1 = {"exercise 1.1", "softmax",
    "a row of positive numbers summing to 1",
    "reread section 1.1 (Attention in one head): the softmax "
    "equation; subtract the row's max", NULL};
static const ex_info ex_1_2 = {"exercise 1.2", "invert a permutation",
    "inv[perm[i]] == i for every i",
    "reread section 1.2 (Attention does not see order): if perm[i] "
    "= j then inv[j] = i", NULL};
static const ex_info ex_1_3 = {"exercise 1.3", "crossover position",
    "the smallest t with t*sqrt(d_model) > embed_norm",
    "reread section 1.3 (Adding the integer position): the norm of "
    "t*1 is t*sqrt(d_model)", NULL};
static const ex_info ex_1_4 = {"exercise 1.4", "one attention row",
    "row 2 of the library's rope_tiny_attention",
    "reread section 1.1 (Attention in one head): scores, softmax, "
    "weighted values", NULL};
static const ex_info ex_1_5 = {"exercise 1.5", "permute rows",
    "row i of Pi X is row perm[i] of X",
    "reread section 1.2 (Attention does not see order): the matrix Pi has its 1 "
    "of row i in column perm[i], "
    "so (Pi X)[i] = X[perm[i]], not X[i] moved to row perm[i]", NULL};

START_TEST(test_ex_softmax_values)
{
    double x[2] = {0.0, log(2.0)};
    ex_softmax(x, 2);
    ex_check_double(&ex_1_1, x[0], 1.0 / 3.0, 1e-15,
                    "ex_softmax({0, ln 2}, 2): x[0]");
    ex_check_double(&ex_1_1, x[1], 2.0 / 3.0, 1e-15,
                    "ex_softmax({0, ln 2}, 2): x[1]");
}
END_TEST

START_TEST(test_ex_softmax_large)
{
    double x[3] = {1000.0, 999.0, 1000.0};
    ex_softmax(x, 3);
    double e = exp(-1.0), z = 2.0 + e;
    double want[3] = {1.0 / z, e / z, 1.0 / z};
    for (int j = 0; j < 3; j++)
        ex_check_double(&ex_1_1, x[j], want[j], 1e-15,
                        "ex_softmax({1000, 999, 1000}, 3): x[%d]", j);
}
END_TEST
START_TEST(test_ex_invert_permutation)
{
    enum { N = 9 };
    int perm[N], inv[N];
    char in[64];
    uint64_t st = 300 + (uint64_t)_i;
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(rope_uniform(&st) * (i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int i = 0; i < N; i++) {
        inv[i] = -1;
        snprintf(in + 2 * i, 3, i ? ",%d" : "{%d", perm[i]);
    }
    ex_invert_permutation(perm, N, inv);
    for (int i = 0; i < N; i++) {
        ex_check_long(&ex_1_2, inv[perm[i]], i,
            "ex_invert_permutation(perm = %s}, 9): inv[perm[%d]] =", in, i);
        ex_check_long(&ex_1_2, perm[inv[i]], i,
            "ex_invert_permutation(perm = %s}, 9): perm[inv[%d]] =", in, i);
    }
}
END_TEST
START_TEST(test_ex_crossover_position)
{
    static const struct { double norm; int d; long t; } c[] = {
        {0.554, 768, 1}, {100.0, 768, 4}, {8.0, 16, 3}, {0.0, 16, 1},
    };
    for (int k = 0; k < 4; k++)
        ex_check_long(&ex_1_3, ex_crossover_position(c[k].norm, c[k].d),
                      c[k].t, "ex_crossover_position(%g, %d):",
                      c[k].norm, c[k].d);
}
END_TEST
START_TEST(test_ex_attention_row)
{
    enum { N = 5, D = 4 };
    double x[N * D], w[D * D], q[D], out[D] = {0}, full[N * D];
    uint64_t st = 77;
    for (int i = 0; i < N * D; i++) x[i] = rope_gaussian(&st);
    for (int i = 0; i < D * D; i++) w[i] = (i % (D + 1) == 0);
    /* identity projections: Q = K = V = X */
    rope_tiny_attention(x, N, D, D, w, w, w, full);
    for (int j = 0; j < D; j++) q[j] = x[2 * D + j];
    ex_attention_row(q, x, x, N, D, out);
    for (int j = 0; j < D; j++)
        ex_check_double(&ex_1_4, out[j], full[2 * D + j], 1e-12,
            "ex_attention_row(q = row 2 of X, K = V = X, 5 Gaussian "
            "rows of width 4): out[%d]", j);
}
END_TEST
START_TEST(test_ex_permute_rows)
{
    static const int cyc[3] = {1, 2, 0};
    static const double x3[6] = {10, 11, 20, 21, 30, 31};
    double out[18], x[18];
    int perm[6];
    uint64_t st = 15;
    ex_permute_rows(cyc, x3, 3, 2, out);
    for (int i = 0; i < 6; i++)
        ex_check_double(&ex_1_5, out[i], x3[2 * cyc[i / 2] + i % 2], 0,
            "ex_permute_rows(perm = {1, 2, 0}, X rows (10,11) (20,21) "
            "(30,31)): row %d, column %d", i / 2, i % 2);
    for (int i = 0; i < 6; i++) perm[i] = i;
    for (int i = 5; i > 0; i--) {
        int j = (int)(rope_uniform(&st) * (i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int i = 0; i < 18; i++) x[i] = i;
    ex_permute_rows(perm, x, 6, 3, out);
    for (int i = 0; i < 18; i++)
        ex_check_double(&ex_1_5, out[i], x[3 * perm[i / 3] + i % 3], 0,
            "ex_permute_rows(perm = {%d,%d,%d,%d,%d,%d}, X[i][c] = 3i+c):"
            " row %d, column %d", perm[0], perm[1], perm[2], perm[3],
            perm[4], perm[5], i / 3, i % 3);
}
END_TEST

const ex_info *const exercises_positions_table[] = {
    &ex_1_1, &ex_1_2, &ex_1_3, &ex_1_4, &ex_1_5, NULL
};

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
    tc = tcase_create("exercise 1.5");
    tcase_add_test(tc, test_ex_permute_rows);
    suite_add_tcase(s, tc);
    return s;
}
