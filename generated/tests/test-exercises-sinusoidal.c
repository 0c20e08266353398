/* test-exercises-sinusoidal.c: the tests of chapter 2's exercises. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "tests.h"
#include "exercises-sinusoidal.h"

static const long ex_pe_offsets[] = {-4096, -100, -3, -1, 0, 1, 2, 9,
                                     250, 4095, 65536};
#define N_EX_PE_OFFSETS (sizeof ex_pe_offsets / sizeof ex_pe_offsets[0])

START_TEST(exercise_2_1_product_is_the_sum)
{
    double got[4], want[4];
    for (int i = 0; i < 32; i++) {
        double w = rope_pe_omega(i, 64, 1e4);
        for (size_t a = 0; a < N_EX_PE_OFFSETS; a++)
            for (size_t b = 0; b < N_EX_PE_OFFSETS; b++) {
                long k = ex_pe_offsets[a], j = ex_pe_offsets[b];
                double tol = DBL_EPSILON
                    * (2.0 * (labs(k) + labs(j)) * w + 8.0);
                ex_rotation_product(got, w, k, j);
                rope_pe_rotation(want, w, k + j);
                for (int e = 0; e < 4; e++)
                    ck_assert_double_eq_tol(got[e], want[e], tol);
            }
    }
}
END_TEST
START_TEST(exercise_2_2_shift_back)
{
    enum { D = 32 };
    double row[D], back[D], want[D], m[4];
    for (long t = 0; t < 3000; t += 301)
        for (size_t a = 0; a < N_EX_PE_OFFSETS; a++) {
            long k = ex_pe_offsets[a];
            rope_pe_row(row, t + k, D, 1e4);
            rope_pe_row(want, t, D, 1e4);
            ex_shift_back(back, row, D, 1e4, k);
            for (int i = 0; i < D / 2; i++) {
                double w = rope_pe_omega(i, D, 1e4);
                double tol = DBL_EPSILON * (2.0 * (t + 2 * labs(k)) * w + 8.0);
                ck_assert_double_eq_tol(back[2 * i], want[2 * i], tol);
                ck_assert_double_eq_tol(back[2 * i + 1], want[2 * i + 1], tol);
                rope_pe_rotation(m, w, -k);
                double s = m[0] * row[2 * i] + m[1] * row[2 * i + 1];
                double c = m[2] * row[2 * i] + m[3] * row[2 * i + 1];
                ck_assert_double_eq_tol(back[2 * i], s, 4 * DBL_EPSILON);
                ck_assert_double_eq_tol(back[2 * i + 1], c, 4 * DBL_EPSILON);
            }
        }
}
END_TEST
START_TEST(exercise_2_3_exact_periods)
{
    double w = 2.0 * ROPE_PE_PI / 7.0;
    ck_assert_int_eq(ex_repeat_distance(w, 1e-9, 100), 7);
    ck_assert_int_eq(ex_repeat_distance(3.0 * w, 1e-9, 100), 7);
    ck_assert_int_eq(ex_repeat_distance(w, 1e-9, 6), -1);
}
END_TEST

START_TEST(exercise_2_3_pair_zero)
{
    /* 1/(2 pi) = [0; 6, 3, 1, 1, 7, 2, 146, ...] */
    ck_assert_int_eq(ex_repeat_distance(1.0, 0.05, 100000), 44);
    ck_assert_int_eq(ex_repeat_distance(1.0, 0.01, 100000), 333);
    ck_assert_int_eq(ex_repeat_distance(1.0, 1e-3, 100000), 710);
}
END_TEST
START_TEST(exercise_2_3_pairs_of_a_table)
{
    enum { D = 16 };
    double tol = 0.05, r0[D], r1[D];
    rope_pe_row(r0, 0, D, 1e4);
    for (int i = 0; i < D / 2; i++) {
        double w = rope_pe_omega(i, D, 1e4);
        long k = ex_repeat_distance(w, tol, 1000000);
        ck_assert_int_ge(k, 1);
        for (long j = 1; j <= k; j++) {
            double turns = round(w * (double)j / (2.0 * ROPE_PE_PI));
            int repeats = turns >= 1.0
                && fabs(w * (double)j - 2.0 * ROPE_PE_PI * turns) <= tol;
            ck_assert_int_eq(repeats, j == k);
            if (j == k) {
                rope_pe_row(r1, j, D, 1e4);
                ck_assert(hypot(r1[2 * i] - r0[2 * i],
                                r1[2 * i + 1] - r0[2 * i + 1]) <= tol);
            }
        }
    }
}
END_TEST

Suite *exercises_sinusoidal_suite(void)
{
    Suite *s = suite_create("chapter 2: exercises");
    TCase *tc;
    tc = tcase_create("exercise 2.1");
    tcase_add_test(tc, exercise_2_1_product_is_the_sum);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 2.2");
    tcase_add_test(tc, exercise_2_2_shift_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 2.3");
    tcase_add_test(tc, exercise_2_3_exact_periods);
    tcase_add_test(tc, exercise_2_3_pair_zero);
    tcase_add_test(tc, exercise_2_3_pairs_of_a_table);
    suite_add_tcase(s, tc);
    return s;
}
