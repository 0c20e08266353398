/* W2.9 The code of the exercises */
/* test-exercises-sinusoidal.c: the tests of chapter 2's exercises. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-sinusoidal.h"

static const ex_info ex_2_1 = {"exercise 2.1", "rotation product",
    "R(r w) R(r2 w) == R((r+r2) w), row by row",
    "reread section 2.2 (A shift is a rotation): multiply the 2x2 "
    "matrices row by column", NULL};
static const ex_info ex_2_2 = {"exercise 2.2", "shift back",
    "PE(t) from PE(t+r), pair by pair",
    "reread section 2.2 (A shift is a rotation): R(-r w) is the "
    "transpose of R(r w), and it acts on (cos, sin) = "
    "(row[2i+1], row[2i])", NULL};
static const ex_info ex_2_3 = {"exercise 2.3", "repeat distance",
    "the smallest r >= 1 with r*omega within tol of 2*pi*nu, nu >= 1",
    "reread section 2.5 (Frequency bands) and the definition in the "
    "exercise", NULL};
static const ex_info ex_2_4 = {"exercise 2.4", "shift a pair forward",
    "(sin w(t+r), cos w(t+r)) from (sin wt, cos wt)",
    "reread section 2.2 (A shift is a rotation): sin(a+b) = sin a cos b "
    "+ cos a sin b, cos(a+b) = cos a cos b - sin a sin b", NULL};

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
                long r = ex_pe_offsets[a], r2 = ex_pe_offsets[b];
                double tol = DBL_EPSILON
                    * (2.0 * (labs(r) + labs(r2)) * w + 8.0);
                ex_rotation_product(got, w, r, r2);
                rope_pe_rotation(want, w, r + r2);
                for (int e = 0; e < 4; e++)
                    ex_check_double(&ex_2_1, got[e], want[e], tol,
                        "ex_rotation_product(omega = %g, r = %ld, r2 = %ld): "
                        "entry %d of R(r w) R(r2 w) (R((r+r2) w))", w, r, r2, e);
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
            long r = ex_pe_offsets[a];
            rope_pe_row(row, t + r, D, 1e4);
            rope_pe_row(want, t, D, 1e4);
            ex_shift_back(back, row, D, 1e4, r);
            for (int i = 0; i < D / 2; i++) {
                double w = rope_pe_omega(i, D, 1e4);
                double tol = DBL_EPSILON * (2.0 * (t + 2 * labs(r)) * w + 8.0);
                for (int e = 0; e < 2; e++)
                    ex_check_double(&ex_2_2, back[2 * i + e], want[2 * i + e], tol,
                        "ex_shift_back(PE(t+r), d_model = 32, r = %ld), t = %ld: "
                        "out[%d] = PE(t)[%d]", r, t, 2 * i + e, 2 * i + e);
                rope_pe_rotation(m, w, -r);
                double c = m[0] * row[2 * i + 1] + m[1] * row[2 * i];
                double s = m[2] * row[2 * i + 1] + m[3] * row[2 * i];
                ex_check_double(&ex_2_2, back[2 * i], s, 4 * DBL_EPSILON,
                    "ex_shift_back(PE(t+r), d_model = 32, r = %ld), t = %ld: out[%d] "
                    "= (R(-r w) pair %d)[1]", r, t, 2 * i, i);
                ex_check_double(&ex_2_2, back[2 * i + 1], c, 4 * DBL_EPSILON,
                    "ex_shift_back(PE(t+r), d_model = 32, r = %ld), t = %ld: out[%d] "
                    "= (R(-r w) pair %d)[0]", r, t, 2 * i + 1, i);
            }
        }
}
END_TEST
START_TEST(exercise_2_3_exact_periods)
{
    double w = 2.0 * ROPE_PE_PI / 7.0;
    ex_check_long(&ex_2_3, ex_repeat_distance(w, 1e-9, 100), 7,
                  "ex_repeat_distance(2 pi/7, 1e-9, 100):");
    ex_check_long(&ex_2_3, ex_repeat_distance(3.0 * w, 1e-9, 100), 7,
                  "ex_repeat_distance(3 * 2 pi/7, 1e-9, 100):");
    ex_check_long(&ex_2_3, ex_repeat_distance(w, 1e-9, 6), -1,
                  "ex_repeat_distance(2 pi/7, 1e-9, 6):");
}
END_TEST

START_TEST(exercise_2_3_pair_zero)
{
    /* 1/(2 pi) = [0; 6, 3, 1, 1, 7, 2, 146, ...] */
    ex_check_long(&ex_2_3, ex_repeat_distance(1.0, 0.05, 100000), 44,
                  "ex_repeat_distance(1, 0.05, 100000):");
    ex_check_long(&ex_2_3, ex_repeat_distance(1.0, 0.01, 100000), 333,
                  "ex_repeat_distance(1, 0.01, 100000):");
    ex_check_long(&ex_2_3, ex_repeat_distance(1.0, 1e-3, 100000), 710,
                  "ex_repeat_distance(1, 1e-3, 100000):");
}
END_TEST
START_TEST(exercise_2_3_pairs_of_a_table)
{
    enum { D = 16 };
    double tol = 0.05, r0[D], r1[D];
    rope_pe_row(r0, 0, D, 1e4);
    for (int i = 0; i < D / 2; i++) {
        double w = rope_pe_omega(i, D, 1e4);
        long r = ex_repeat_distance(w, tol, 1000000);
        if (r < 1)
            ex_fail(&ex_2_3, "ex_repeat_distance(omega_%d of d = 16, "
                    "0.05, 1000000): expected an offset >= 1, got %ld",
                    i, r);
        for (long r2 = 1; r2 <= r; r2++) {
            double turns = round(w * (double)r2 / (2.0 * ROPE_PE_PI));
            int repeats = turns >= 1.0
                && fabs(w * (double)r2 - 2.0 * ROPE_PE_PI * turns) <= tol;
            if (repeats != (r2 == r))
                ex_fail(&ex_2_3, "ex_repeat_distance(omega_%d of d = 16, 0.05, "
                        "1000000): expected %s, got %ld", i,
                        repeats ? "a smaller offset" : "an offset that repeats", r);
            if (r2 == r) {
                double gap;
                rope_pe_row(r1, r2, D, 1e4);
                gap = hypot(r1[2 * i] - r0[2 * i], r1[2 * i + 1] - r0[2 * i + 1]);
                if (!(gap <= tol))
                    ex_fail(&ex_2_3, "ex_repeat_distance(omega_%d of d = 16, 0.05, "
                            "1000000) = %ld: expected |z(r) - z(0)| <= 0.05, got %g",
                            i, r, gap);
            }
        }
    }
}
END_TEST
START_TEST(exercise_2_4_shift_forward)
{
    static const double omegas[3] = {1.0, 0.1, 1e-3};
    static const long ts[3] = {0, 5, 100}, rs[4] = {1, 3, -2, 50};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++) {
                double w = omegas[a], in[2], out[2] = {0, 0};
                long t = ts[b], r = rs[c];
                in[0] = sin(w * (double)t);
                in[1] = cos(w * (double)t);
                ex_pe_shift(out, in, w, r);
                ex_check_double(&ex_2_4, out[0], sin(w * (double)(t + r)),
                    1e-12, "ex_pe_shift((sin %ld*w, cos %ld*w), w = %g, "
                    "r = %ld): out[0] = sin(w*(t+r))", t, t, w, r);
                ex_check_double(&ex_2_4, out[1], cos(w * (double)(t + r)),
                    1e-12, "ex_pe_shift((sin %ld*w, cos %ld*w), w = %g, "
                    "r = %ld): out[1] = cos(w*(t+r))", t, t, w, r);
            }
}
END_TEST

const ex_info *const exercises_sinusoidal_table[] = {
    &ex_2_1, &ex_2_2, &ex_2_3, &ex_2_4, NULL
};

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
    tc = tcase_create("exercise 2.4");
    tcase_add_test(tc, exercise_2_4_shift_forward);
    suite_add_tcase(s, tc);
    return s;
}
