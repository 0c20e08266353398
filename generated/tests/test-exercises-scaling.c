/* W4.6 The exercise code */
/* test-exercises-scaling.c: the tests of chapter 4's exercises. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-scaling.h"

static const ex_info ex_4_1 = {"exercise 4.1", "NTK-aware base",
    "a base that divides the slowest pair's frequency by the factor",
    "reread section 4.4 (NTK-aware scaling): solve b'^(-(d-2)/d) = "
    "b^(-(d-2)/d) / s", NULL};
static const ex_info ex_4_2 = {"exercise 4.2", "YaRN correction dim",
    "the pair index i whose wavelength fits num_rotations times",
    "reread section 4.6 (YaRN): 2 pi b^(2i/d) * num_rotations = "
    "original", NULL};
static const ex_info ex_4_3 = {"exercise 4.3", "YaRN ranges differ",
    "1 exactly when MiniMind's and Hugging Face's ranges differ",
    "reread section 4.6 (YaRN), its subsection on MiniMind's YaRN and "
    "Hugging Face's: the threshold on L", NULL};
static const ex_info ex_4_4 = {"exercise 4.4", "Llama 3.1 scale",
    "1 for short wavelengths, 1/factor for long ones, a blend between",
    "reread section 4.7 (Llama 3.1: wavelength bands)", NULL};
static const ex_info ex_4_5 = {"exercise 4.5", "YaRN blend",
    "omega for the fast pairs i <= lo, omega/factor for the slow i >= hi",
    "reread section 4.6 (YaRN), the ramp and the blend: the ramp is "
    "0 for "
    "the fast (high-frequency) pairs, which keep their frequency", NULL};

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
        ex_check_double(&ex_4_1, ratio, 1.0, 1e-12, "ex_ntk_aware_base(1e6,"
            " factor %g, head_dim %d) = %g: slowest pair's ratio", s, d, nb);
        ratio = nb / rope_ntk_aware_base(1e6, s, d);
        ex_check_double(&ex_4_1, ratio, 1.0, 1e-12, "ex_ntk_aware_base(1e6,"
            " factor %g, head_dim %d) / the library's:", s, d);
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
    ex_check_double(&ex_4_2, fast, a, 1e-12 * a,
        "ex_yarn_correction_dim(32, 64, 1e4, 2048):");
    ex_check_double(&ex_4_2, slow, b, 1e-12 * b,
        "ex_yarn_correction_dim(1, 64, 1e4, 4096):");
}
END_TEST

START_TEST(test_ex_yarn_correction_dim_wavelength)
{
    static const double rots[3] = {0.5, 1, 32};
    for (int r = 0; r < 3; r++) {
        double i = ex_yarn_correction_dim(rots[r], 96, 1e6, 32768);
        double wl = 2 * 3.14159265358979323846 * pow(1e6, 2 * i / 96);
        ex_check_double(&ex_4_2, wl * rots[r] / 32768, 1.0, 1e-12,
            "ex_yarn_correction_dim(%g, 96, 1e6, 32768) = %g: rotations "
            "in 32768 positions / %g", rots[r], i, rots[r]);
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
                ex_check_long(&ex_4_3, mine, differ, "ex_yarn_ranges_"
                    "differ(%d, %g, %ld, beta_slow %g):", dims[a],
                    bases[b], L, h.beta_slow);
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
    ex_check_long(&ex_4_4, rope_compute_inv_freq(inv, &af, d, 5e5, &s), 0,
                  "(the library's frequencies, before your function)");
    rope_default_inv_freq(omega, d, 5e5);
    for (int i = 0; i < d / 2; i++) {
        double wl = 2 * 3.14159265358979323846 / omega[i];
        double k = ex_llama3_scale(wl, 8192, 8, 1, 4);
        double ref = (double)inv[i] / omega[i];
        ex_check_double(&ex_4_4, k, ref, 1e-5 * ref, "ex_llama3_scale("
            "wavelen %g, 8192, 8, 1, 4):", wl);
    }
}
END_TEST

START_TEST(test_ex_llama3_scale_edges)
{
    static const struct { double wl, want, tol; } e[4] = {
        {2047.0, 1.0, 0}, {8193.0, 1.0 / 8, 0},
        {2048.0, 1.0, 1e-12}, {8192.0, 1.0 / 8, 1e-12},
    };
    double a, b;
    for (int k = 0; k < 4; k++)
        ex_check_double(&ex_4_4, ex_llama3_scale(e[k].wl, 8192, 8, 1, 4),
            e[k].want, e[k].tol, "ex_llama3_scale(wavelen %g, 8192, 8, "
            "1, 4):", e[k].wl);
    a = ex_llama3_scale(5000.0, 8192, 8, 1, 4);
    b = ex_llama3_scale(4000.0, 8192, 8, 1, 4);
    if (!(a < b))
        ex_fail(&ex_4_4, "ex_llama3_scale(wavelen 5000, ...) = %g expected "
                "below ex_llama3_scale(wavelen 4000, ...), got %g", a, b);
}
END_TEST
START_TEST(test_ex_yarn_blend)
{
    for (int i = 0; i < 32; i++) {
        double omega = pow(1e4, -2.0 * i / 64), r = (i - 4.0) / 8.0;
        double gamma = r < 0 ? 0 : r > 1 ? 1 : r;
        double want = (1 - gamma) * omega + gamma * omega / 16;
        ex_check_double(&ex_4_5, ex_yarn_blend(omega, i, 4, 12, 16),
            want, 1e-14 * omega, "ex_yarn_blend(omega_%d = %g, i = %d, "
            "lo = 4, hi = 12, factor = 16):", i, omega, i);
    }
}
END_TEST

const ex_info *const exercises_scaling_table[] = {
    &ex_4_1, &ex_4_2, &ex_4_3, &ex_4_4, &ex_4_5, NULL
};

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
    tc = tcase_create("exercise 4.5");
    tcase_add_test(tc, test_ex_yarn_blend);
    suite_add_tcase(s, tc);
    return s;
}
