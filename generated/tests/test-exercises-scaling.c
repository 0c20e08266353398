/* test-exercises-scaling.c: the tests of chapter 4's exercises. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-scaling.h"

START_TEST(test_ex_ntk_aware_base)
{
    static const int dims[4] = {32, 64, 96, 128};
    static const double factors[3] = {2, 8, 16};
    int d = dims[_i];
    for (int f = 0; f < 3; f++) {
        double s = factors[f];
        double nb = ex_ntk_aware_base(1e6, s, d);
        double e = (double)(d - 2) / d;
        double ratio = pow(nb, -e) * s / pow(1e6, -e);
        ck_assert_double_eq_tol(ratio, 1.0, 1e-12);
        ratio = nb / rope_ntk_aware_base(1e6, s, d);
        ck_assert_double_eq_tol(ratio, 1.0, 1e-12);
    }
}
END_TEST
double scaling_golden_header_value(const char *path, const char *key)
{
    char line[1024];
    double v = NAN;
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "missing %s", path);
    while (fgets(line, sizeof line, f)) {
        char *p = line[0] == '#' ? strstr(line, key) : NULL;
        if (p != NULL) {
            v = strtod(p + strlen(key), NULL);
            break;
        }
    }
    fclose(f);
    ck_assert_msg(!isnan(v), "%s: no '%s' in the header", path, key);
    return v;
}
START_TEST(test_ex_yarn_correction_dim_golden)
{
    const char *p16 = "tests/golden/hf/"
                      "yarn_ramp_yarn_f16_orig2048_theta1e4.txt";
    const char *p4 = "tests/golden/hf/"
                     "yarn_ramp_yarn_f4_orig4096_theta1e4.txt";
    double a = scaling_golden_header_value(p16,
                   "find_correction_dim(beta_fast=32) = ");
    double b = scaling_golden_header_value(p4,
                   "find_correction_dim(beta_slow=1) = ");
    double fast = ex_yarn_correction_dim(32, 64, 1e4, 2048);
    double slow = ex_yarn_correction_dim(1, 64, 1e4, 4096);
    ck_assert_double_eq_tol(fast, a, 1e-12 * a);
    ck_assert_double_eq_tol(slow, b, 1e-12 * b);
}
END_TEST

START_TEST(test_ex_yarn_correction_dim_wavelength)
{
    static const double rots[3] = {0.5, 1, 32};
    for (int r = 0; r < 3; r++) {
        double i = ex_yarn_correction_dim(rots[r], 96, 1e6, 32768);
        double wl = 2 * 3.14159265358979323846 * pow(1e6, 2 * i / 96);
        ck_assert_double_eq_tol(wl * rots[r] / 32768, 1.0, 1e-12);
    }
}
END_TEST
START_TEST(test_ex_yarn_ranges_differ)
{
    static const int dims[4] = {32, 64, 96, 128};
    static const double bases[3] = {1e4, 5e5, 1e6};
    rope_scaling h, m;
    double hl, hh, ml, mh;
    rope_scaling_defaults(&h);
    h.rope_type = ROPE_SCALING_YARN;
    h.factor = 16;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 8; k <= 26; k++) {
                h.beta_slow = 1 + k % 2;
                long L = (long)ldexp(1.0, k);
                h.original_max_position_embeddings = L;
                m = h;
                m.yarn_flavor = ROPE_YARN_MINIMIND;
                rope_yarn_range(&hl, &hh, dims[a], bases[b], &h);
                rope_yarn_range(&ml, &mh, dims[a], bases[b], &m);
                int mine = ex_yarn_ranges_differ(dims[a], bases[b], L,
                                                 h.beta_slow);
                int differ = hl != ml || hh != mh;
                ck_assert_int_eq(mine, differ);
            }
}
END_TEST
START_TEST(test_ex_llama3_scale)
{
    int d = _i == 0 ? 64 : 128;
    float inv[64], omega[64];
    double af;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LLAMA3;
    s.factor = 8;
    s.low_freq_factor = 1;
    s.high_freq_factor = 4;
    s.original_max_position_embeddings = 8192;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, d, 5e5, &s), 0);
    rope_default_inv_freq(omega, d, 5e5);
    for (int i = 0; i < d / 2; i++) {
        double wl = 2 * 3.14159265358979323846 / omega[i];
        double k = ex_llama3_scale(wl, 8192, 8, 1, 4);
        double ref = (double)inv[i] / omega[i];
        ck_assert_double_eq_tol(k, ref, 1e-5 * ref);
    }
}
END_TEST

START_TEST(test_ex_llama3_scale_edges)
{
    ck_assert_double_eq(ex_llama3_scale(2047.0, 8192, 8, 1, 4), 1.0);
    ck_assert_double_eq(ex_llama3_scale(8193.0, 8192, 8, 1, 4),
                        1.0 / 8);
    ck_assert_double_eq_tol(ex_llama3_scale(2048.0, 8192, 8, 1, 4), 1.0,
                            1e-12);
    ck_assert_double_eq_tol(ex_llama3_scale(8192.0, 8192, 8, 1, 4),
                            1.0 / 8, 1e-12);
    ck_assert_double_lt(ex_llama3_scale(5000.0, 8192, 8, 1, 4),
                        ex_llama3_scale(4000.0, 8192, 8, 1, 4));
}
END_TEST

Suite *exercises_scaling_suite(void)
{
    Suite *s = suite_create("chapter 4: exercises");
    TCase *tc;
    tc = tcase_create("exercise 4.1");
    tcase_add_loop_test(tc, test_ex_ntk_aware_base, 0, 4);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 4.2");
    tcase_add_test(tc, test_ex_yarn_correction_dim_golden);
    tcase_add_test(tc, test_ex_yarn_correction_dim_wavelength);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 4.3");
    tcase_add_test(tc, test_ex_yarn_ranges_differ);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 4.4");
    tcase_add_loop_test(tc, test_ex_llama3_scale, 0, 2);
    tcase_add_test(tc, test_ex_llama3_scale_edges);
    suite_add_tcase(s, tc);
    return s;
}
