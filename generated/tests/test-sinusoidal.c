/* W2.7 The test suite */
/* test-sinusoidal.c: the claims of chapter 2. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

/* W2.3 The tests of the tables */
START_TEST(test_pe_matches_reference_table)
{
    const char *path = "tests/golden/hf/cos_sin_default_theta1e4.txt";
    size_t n, n1, n6, n7;
    double *pos = golden_read_column(path, 0, &n);
    double *col = golden_read_column(path, 1, &n1);
    double *cos64 = golden_read_column(path, 6, &n6);
    double *sin64 = golden_read_column(path, 7, &n7);
    ck_assert_uint_eq(n, 512);
    ck_assert(n1 == n && n6 == n && n7 == n);
    int used = 0;
    for (size_t r = 0; r < n; r++) {
        int i = (int)col[r];
        if (i >= 32)
            continue;
        long t = (long)pos[r];
        double row[64], w = rope_pe_omega(i, 64, 1e4);
        double tol = DBL_EPSILON * (4.0 * (double)t * w + 4.0);
        ck_assert_int_eq(rope_pe_row(row, t, 64, 1e4), ROPE_PE_OK);
        ck_assert_double_eq_tol(row[2 * i], sin64[r], tol);
        ck_assert_double_eq_tol(row[2 * i + 1], cos64[r], tol);
        used++;
    }
    ck_assert_int_eq(used, 256);
    free(pos); free(col); free(cos64); free(sin64);
}
END_TEST
START_TEST(test_pe_matches_long_double)
{
    static const int widths[2] = {768, 96};
    static const double bases[2] = {1e4, 1e6};
    int d = widths[_i];
    double b = bases[_i], row[768];
    for (long t = 0; t < 40000; t += 397) {
        ck_assert_int_eq(rope_pe_row(row, t, d, b), ROPE_PE_OK);
        for (int i = 0; i < d / 2; i++) {
            long double w = expl(-(long double)(2 * i) / d * logl(b));
            long double a = (long double)t * w;
            double tol = DBL_EPSILON
                * ((log(b) + 3.0) / 2 * (double)(t * w) + 1.0);
            ck_assert_double_eq_tol(row[2 * i], (double)sinl(a), tol);
            ck_assert_double_eq_tol(row[2 * i + 1], (double)cosl(a),
                                    tol);
        }
    }
}
END_TEST
START_TEST(test_pe_position_zero)
{
    double row[16];
    ck_assert_int_eq(rope_pe_row(row, 0, 16, 1e4), ROPE_PE_OK);
    for (int i = 0; i < 8; i++) {
        ck_assert(row[2 * i] == 0.0);
        ck_assert(row[2 * i + 1] == 1.0);
    }
    ck_assert(rope_pe_omega(0, 512, 1e4) == 1.0);
}
END_TEST

START_TEST(test_pe_table_is_its_rows)
{
    enum { L = 300, D = 32 };
    static double pe[L * D];
    double row[D];
    ck_assert_int_eq(rope_pe_table(pe, L, D, 1e4), ROPE_PE_OK);
    for (long t = 0; t < L; t++) {
        rope_pe_row(row, t, D, 1e4);
        ck_assert(memcmp(row, pe + t * D, sizeof row) == 0);
    }
}
END_TEST
START_TEST(test_omega_is_geometric)
{
    int d = 512;
    double b = 1e4, ratio = pow(b, -2.0 / d);
    for (int i = 0; i + 1 < d / 2; i++) {
        double q = rope_pe_omega(i + 1, d, b) / rope_pe_omega(i, d, b);
        ck_assert_double_eq_tol(q, ratio, 4 * DBL_EPSILON);
    }
    double last = pow(b, -(double)(d - 2) / d);
    ck_assert_double_eq_tol(rope_pe_omega(d / 2 - 1, d, b), last,
                            4 * DBL_EPSILON * last);
}
END_TEST
START_TEST(test_pe_is_bounded)
{
    enum { D = 128 };
    double row[D];
    for (long t = 0; t < 2000000; t += 9973) {
        rope_pe_row(row, t, D, 1e4);
        double norm2 = 0.0;
        for (int i = 0; i < D / 2; i++) {
            double s = row[2 * i], c = row[2 * i + 1];
            ck_assert(fabs(s) <= 1.0 && fabs(c) <= 1.0);
            ck_assert_double_eq_tol(s * s + c * c, 1.0,
                                    4 * DBL_EPSILON);
            norm2 += s * s + c * c;
        }
        ck_assert_double_eq_tol(norm2, D / 2,
                                D / 2 * (D / 2 + 6) * DBL_EPSILON / 2);
    }
}
END_TEST
START_TEST(test_pe_float_close_to_double)
{
    enum { L = 8192, D = 64 };
    float *pf = malloc(sizeof *pf * L * D);
    double *pd = malloc(sizeof *pd * L * D);
    ck_assert(pf != NULL && pd != NULL);
    ck_assert_int_eq(rope_pe_table_float(pf, L, D, 1e4f), ROPE_PE_OK);
    ck_assert_int_eq(rope_pe_table(pd, L, D, 1e4), ROPE_PE_OK);
    double worst = 0.0; /* largest |float - double| / tolerance */
    long worst_t = 0;
    for (int j = 0; j < D; j++) {
        double w = rope_pe_omega(j / 2, D, 1e4), lnb = log(1e4);
        for (long t = 0; t < L; t++) {
            double tol = ((lnb + 3.0) * (double)t * w + 2.0) * 0x1p-24;
            double r = fabs(pf[t * D + j] - pd[t * D + j]) / tol;
            if (r > worst) { worst = r; worst_t = t; }
        }
    }
    ck_assert_msg(worst <= 1.0, "error %g tolerances at t = %ld",
                  worst, worst_t);
    free(pf); free(pd);
}
END_TEST
START_TEST(test_pe_rejects_bad_arguments)
{
    double row[8];
    float rowf[8];
    ck_assert_int_eq(rope_pe_row(row, 0, 7, 1e4), ROPE_PE_EDMODEL);
    ck_assert_int_eq(rope_pe_row(row, 0, 0, 1e4), ROPE_PE_EDMODEL);
    ck_assert_int_eq(rope_pe_row(row, 0, 8, 1.0), ROPE_PE_EBASE);
    ck_assert_int_eq(rope_pe_row(row, 0, 8, 0.5), ROPE_PE_EBASE);
    ck_assert_int_eq(rope_pe_row(row, 0, 8, NAN), ROPE_PE_EBASE);
    ck_assert_int_eq(rope_pe_row(row, 0, 8, INFINITY), ROPE_PE_EBASE);
    ck_assert_int_eq(rope_pe_table(row, -1, 8, 1e4), ROPE_PE_ELEN);
    ck_assert_int_eq(rope_pe_table_float(rowf, 1, 8, 1.0f),
                     ROPE_PE_EBASE);
    ck_assert_int_eq(rope_pe_table_float(rowf, 1, 3, 1e4f),
                     ROPE_PE_EDMODEL);
}
END_TEST
/* 2.2 A shift is a rotation */
static const long pe_grid_t[] = {0, 1, 2, 7, 100, 1000, 4095, 32767,
                                 1000000};
static const long pe_grid_k[] = {-1000, -7, -1, 0, 1, 2, 5, 17, 100,
                                 999, 4096, 65536};
#define N_PE_GRID_T (sizeof pe_grid_t / sizeof pe_grid_t[0])
#define N_PE_GRID_K (sizeof pe_grid_k / sizeof pe_grid_k[0])

START_TEST(test_shift_is_rotation)
{
    enum { D = 64 };
    long t = pe_grid_t[_i];
    double pe_t[D], pe_tr[D], m[4];
    rope_pe_row(pe_t, t, D, 1e4);
    for (size_t g = 0; g < N_PE_GRID_K; g++) {
        long r = pe_grid_k[g];
        rope_pe_row(pe_tr, t + r, D, 1e4);
        for (int i = 0; i < D / 2; i++) {
            double w = rope_pe_omega(i, D, 1e4);
            double tol = DBL_EPSILON * (2.0 * (labs(t) + labs(r)) * w + 8.0);
            rope_pe_rotation(m, w, r);
            double c = m[0] * pe_t[2 * i + 1] + m[1] * pe_t[2 * i];
            double s = m[2] * pe_t[2 * i + 1] + m[3] * pe_t[2 * i];
            ck_assert_double_eq_tol(c, pe_tr[2 * i + 1], tol);
            ck_assert_double_eq_tol(s, pe_tr[2 * i], tol);
        }
    }
}
END_TEST
/* W2.4 The tests of the rotation and of the dot product */
START_TEST(test_rotation_is_orthogonal)
{
    double m[4];
    for (int i = 0; i < 32; i++)
        for (size_t g = 0; g < N_PE_GRID_K; g++) {
            double w = rope_pe_omega(i, 64, 1e4);
            rope_pe_rotation(m, w, pe_grid_k[g]);
            /* M^T M: products of the columns (m0, m2) and (m1, m3) */
            ck_assert_double_eq_tol(m[0] * m[0] + m[2] * m[2], 1.0,
                                    4 * DBL_EPSILON);
            ck_assert_double_eq_tol(m[1] * m[1] + m[3] * m[3], 1.0,
                                    4 * DBL_EPSILON);
            ck_assert_double_eq_tol(m[0] * m[1] + m[2] * m[3], 0.0,
                                    4 * DBL_EPSILON);
        }
}
END_TEST

START_TEST(test_rotation_has_determinant_one)
{
    double m[4];
    for (int i = 0; i < 32; i++)
        for (size_t g = 0; g < N_PE_GRID_K; g++) {
            double w = rope_pe_omega(i, 64, 1e4);
            rope_pe_rotation(m, w, pe_grid_k[g]);
            ck_assert_double_eq_tol(m[0] * m[3] - m[1] * m[2], 1.0,
                                    4 * DBL_EPSILON);
        }
}
END_TEST
/* 2.3 The dot product sees only the distance */
static double pe_dot_tol(long m, long n, int d)
{
    return d / 2 * DBL_EPSILON * (2.0 * (labs(m) + labs(n)) + 8.0 + d);
}

START_TEST(test_dot_depends_on_offset_only)
{
    enum { D = 64 };
    for (long m = -50; m < 3000; m += 37)
        for (long n = -3; n < 6000; n += 91)
            ck_assert_double_eq_tol(rope_pe_dot(m, n, D, 1e4),
                                    rope_pe_offset_dot(n - m, D, 1e4),
                                    pe_dot_tol(m, n, D));
}
END_TEST
/* W2.4 The tests of the rotation and of the dot product */
START_TEST(test_dot_is_even_with_peak_at_zero)
{
    enum { D = 64 };
    double f0 = rope_pe_offset_dot(0, D, 1e4);
    ck_assert(f0 == D / 2);
    for (long k = 1; k <= 20000; k++) {
        double f = rope_pe_offset_dot(k, D, 1e4);
        ck_assert(f == rope_pe_offset_dot(-k, D, 1e4));
        ck_assert_msg(f < f0, "f(%ld) = %.17g", k, f);
    }
}
END_TEST
/* 2.4.2 The code */
START_TEST(test_learned_projections_see_absolute_positions)
{
    enum { N = 16, DM = 16, D = 16, NN = N * N };
    double x[N * DM], pe[N * DM], wq[DM * D], wk[DM * D];
    double s[NN], terms[4 * NN], dev = 0.0;
    rope_pe_draw_example(BOOK_SEED, N, DM, D, x, wq, wk);
    ck_assert_int_eq(rope_pe_table(pe, N, DM, 1e4), ROPE_PE_OK);
    ck_assert_int_eq(rope_pe_score_terms(x, pe, wq, wk, N, DM, D, s,
                                         terms), 0);
    const double *t4 = terms + 3 * NN;
    for (int m = 1; m < N; m++)
        for (int n = 1; n < N; n++)
            dev = fmax(dev, fabs(t4[m * N + n]
                                 - t4[(m - 1) * N + n - 1]));
    ck_assert(dev > 0.1 * rope_pe_rms(t4, NN));
    double cross = 0.0;
    for (int j = 0; j < NN; j++)
        cross += pow(terms[NN + j] + terms[2 * NN + j], 2);
    ck_assert(sqrt(cross / NN) > rope_pe_rms(terms, NN) / 3);
}
END_TEST
/* W2.5 The tests of the four terms and of the bands */
START_TEST(test_four_terms_sum_to_score)
{
    enum { N = 16, DM = 16, D = 8, NN = N * N };
    double x[N * DM], pe[N * DM], wq[DM * D], wk[DM * D];
    double ax[N * DM], ape[N * DM], awq[DM * D], awk[DM * D];
    double s[NN], terms[4 * NN], bound[NN], abs_terms[4 * NN];
    rope_pe_draw_example(100 + (uint64_t)_i, N, DM, D, x, wq, wk);
    ck_assert_int_eq(rope_pe_table(pe, N, DM, 1e4), ROPE_PE_OK);
    for (int j = 0; j < N * DM; j++) {
        ax[j] = fabs(x[j]);
        ape[j] = fabs(pe[j]);
    }
    for (int j = 0; j < DM * D; j++) {
        awq[j] = fabs(wq[j]);
        awk[j] = fabs(wk[j]);
    }
    ck_assert_int_eq(rope_pe_score_terms(x, pe, wq, wk, N, DM, D, s,
                                         terms), 0);
    ck_assert_int_eq(rope_pe_score_terms(ax, ape, awq, awk, N, DM, D,
                                         bound, abs_terms), 0);
    for (int j = 0; j < NN; j++) {
        double sum = terms[j] + terms[NN + j] + terms[2 * NN + j]
                   + terms[3 * NN + j];
        double tol = (2 * DM + D + 3) * DBL_EPSILON * bound[j];
        ck_assert_double_eq_tol(sum, s[j], tol);
    }
}
END_TEST
START_TEST(test_identity_projections_give_f)
{
    enum { N = 40, DM = 16, NN = N * N };
    static double x[N * DM], pe[N * DM], eye[DM * DM], wk[DM * DM];
    static double s[NN], terms[4 * NN];
    rope_pe_draw_example(11, N, DM, DM, x, eye, wk);
    for (int j = 0; j < DM * DM; j++)
        eye[j] = (j % (DM + 1) == 0);
    ck_assert_int_eq(rope_pe_table(pe, N, DM, 1e4), ROPE_PE_OK);
    ck_assert_int_eq(rope_pe_score_terms(x, pe, eye, eye, N, DM, DM, s,
                                         terms), 0);
    for (int m = 0; m < N; m++)
        for (int n = 0; n < N; n++) {
            ck_assert_double_eq_tol(terms[3 * NN + m * N + n],
                                    rope_pe_offset_dot(n - m, DM, 1e4),
                                    pe_dot_tol(m, n, DM));
            ck_assert(terms[NN + m * N + n]
                      == terms[2 * NN + n * N + m]);
        }
}
END_TEST
START_TEST(test_wavelengths)
{
    int d = 512;
    double b = 1e4, two_pi = 2.0 * ROPE_PE_PI;
    ck_assert_double_eq_tol(rope_pe_wavelength(0, d, b), two_pi,
                            4 * DBL_EPSILON);
    for (int i = 0; i < d / 2; i++) {
        double w = rope_pe_omega(i, d, b);
        double lambda = rope_pe_wavelength(i, d, b);
        ck_assert_double_eq_tol(lambda * w, two_pi, 8 * DBL_EPSILON);
        ck_assert_double_eq_tol(2.0 * rope_pe_half_turn(i, d, b),
                                lambda, 4 * DBL_EPSILON * lambda);
        if (i > 0)
            ck_assert(lambda > rope_pe_wavelength(i - 1, d, b));
    }
    double last = two_pi * pow(b, (double)(d - 2) / d);
    ck_assert_double_eq_tol(rope_pe_wavelength(d / 2 - 1, d, b), last,
                            8 * DBL_EPSILON * last);
}
END_TEST
START_TEST(test_half_turn_reverses_the_pair)
{
    enum { D = 64 };
    double r0[D], r1[D];
    long t = 123;
    rope_pe_row(r0, t, D, 1e4);
    for (int i = 0; i < D / 2; i++) {
        long k = lround(rope_pe_half_turn(i, D, 1e4));
        double w = rope_pe_omega(i, D, 1e4);
        double tol = DBL_EPSILON * (2.0 * (t + k) * w + 8.0);
        rope_pe_row(r1, t + k, D, 1e4);
        double dot = r0[2 * i] * r1[2 * i]
                   + r0[2 * i + 1] * r1[2 * i + 1];
        ck_assert(dot <= -cos(w / 2) + tol);
    }
}
END_TEST
static double band_mean(long r, int band)
{
    double sum = 0.0;
    for (int i = 16 * band; i < 16 * (band + 1); i++)
        sum += cos((double)r * rope_pe_omega(i, 96, 1e4));
    return sum / 16;
}

START_TEST(test_fast_bands_resolve_short_offsets_slow_bands_long)
{
    ck_assert(band_mean(10, 0) < 0.5);
    ck_assert(band_mean(10, 2) > 0.99);
    for (long r = 1; r <= 1000; r++)
        ck_assert(band_mean(r, 2) >= 0.5);
    ck_assert(band_mean(100000, 2) < 0.5);
    ck_assert(fabs(band_mean(1000, 0)) < 0.5);
}
END_TEST
/* W2.6 The command line */
START_TEST(test_print_rows_matches_formula)
{
    static const long pos[3] = {0, 1, 50};
    FILE *f = tmpfile();
    ck_assert(f != NULL);
    ck_assert_int_eq(table_print_pe_rows(f, pos, 3, 8, 1e4), ROPE_PE_OK);
    rewind(f);
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 8; j++) {
            double v;
            ck_assert_int_eq(fscanf(f, "%lf", &v), 1);
            long double w = expl(-(long double)(2 * (j / 2)) / 8
                                 * logl(1e4L));
            long double a = (long double)pos[r] * w;
            double want = (double)(j % 2 == 0 ? sinl(a) : cosl(a));
            double tol = 5e-10 * fabs(want) + DBL_EPSILON
                * ((log(1e4) + 3.0) / 2 * (double)pos[r] + 1.0);
            ck_assert_double_eq_tol(v, want, tol);
        }
    double extra;
    ck_assert_int_eq(fscanf(f, "%lf", &extra), EOF);
    fclose(f);
}
END_TEST
START_TEST(test_cli_pe_prints_the_shared_rows)
{
    static const long pos[3] = {0, 1, 50};
    char *expect = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&expect, &len);
    ck_assert(f != NULL);
    ck_assert_int_eq(table_print_pe_rows(f, pos, 3, 8, 1e4), ROPE_PE_OK);
    fclose(f);
    cli_result r = cli_run("pe --d-model 8 --positions 0,1,50");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, expect);
    ck_assert_int_eq(cli_line_count(r.out), 3);
    ck_assert_str_eq(r.err, "");
    free(expect);
    cli_result_free(&r);
}
END_TEST
static const char *const pe_bad_calls[][2] = {
    {"pe --d-model 7 --positions 0", "--d-model"},
    {"pe --d-model 0 --positions 0", "--d-model"},
    {"pe --d-model 8 --positions -1", "--positions"},
    {"pe --d-model 8 --positions 0,x", "--positions"},
    {"pe --d-model 8 --positions 0 --base 1", "--base"},
    {"pe --d-model 8 --positions 0 --base 0.5", "--base"},
    {"pe --d-model 8 --positions 0 --base nan", "--base"},
    {"pe --d-model", "--d-model"},
    {"pe --d-model 8 --positions", "--positions"},
    {"pe --d-model 8 --positions 0 --base", "--base"},
    {"pe --positions 1", "--d-model"},
    {"pe --d-model 8", "--positions"},
    {"pe --d-model 8 --positions 0 --colour red", "--colour"},
};
#define N_PE_BAD_CALLS (sizeof pe_bad_calls / sizeof pe_bad_calls[0])

START_TEST(test_cli_pe_rejects_bad_arguments)
{
    cli_result r = cli_run(pe_bad_calls[_i][0]);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, pe_bad_calls[_i][1]) != NULL,
                  "'%s' gave: %s", pe_bad_calls[_i][0], r.err);
    cli_result_free(&r);
}
END_TEST

/* W2.7 The test suite */
Suite *sinusoidal_suite(void)
{
    Suite *s = suite_create("chapter 2: sinusoidal encoding");
    TCase *tab = tcase_create("table");
    TCase *rot = tcase_create("rotation and dot product");
    TCase *att = tcase_create("four terms and bands");
    TCase *cli = tcase_create("command line");
    tcase_add_test(tab, test_pe_matches_reference_table);
    tcase_add_loop_test(tab, test_pe_matches_long_double, 0, 2);
    tcase_add_test(tab, test_pe_position_zero);
    tcase_add_test(tab, test_pe_table_is_its_rows);
    tcase_add_test(tab, test_omega_is_geometric);
    tcase_add_test(tab, test_pe_is_bounded);
    tcase_add_test(tab, test_pe_float_close_to_double);
    tcase_add_test(tab, test_pe_rejects_bad_arguments);
    tcase_add_test(cli, test_print_rows_matches_formula);
    tcase_add_test(cli, test_cli_pe_prints_the_shared_rows);
    tcase_add_loop_test(cli, test_cli_pe_rejects_bad_arguments, 0,
                        (int)N_PE_BAD_CALLS);
    tcase_add_loop_test(rot, test_shift_is_rotation, 0, (int)N_PE_GRID_T);
    tcase_add_test(rot, test_rotation_is_orthogonal);
    tcase_add_test(rot, test_rotation_has_determinant_one);
    tcase_add_test(rot, test_dot_depends_on_offset_only);
    tcase_add_test(rot, test_dot_is_even_with_peak_at_zero);
    tcase_add_loop_test(att, test_four_terms_sum_to_score, 0, 4);
    tcase_add_test(att, test_identity_projections_give_f);
    tcase_add_test(att, test_learned_projections_see_absolute_positions);
    tcase_add_test(att, test_wavelengths);
    tcase_add_test(att, test_half_turn_reverses_the_pair);
    tcase_add_test(att, test_fast_bands_resolve_short_offsets_slow_bands_long);
    suite_add_tcase(s, tab);
    suite_add_tcase(s, rot);
    suite_add_tcase(s, att);
    suite_add_tcase(s, cli);
    return s;
}
