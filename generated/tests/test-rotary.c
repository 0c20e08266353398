/* W3.6 The tests */
/* test-rotary.c: the claims of chapter 3, checked. */
#include <sys/stat.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"

#define GMM "tests/golden/minimind/"
#define GHF "tests/golden/hf/"

static float *golden_floats(const char *path, size_t expect)
{
    size_t n;
    double *v = golden_read(path, &n);
    ck_assert_msg(n == expect, "%s: %zu numbers, expected %zu", path, n,
                  expect);
    float *f = malloc(n * sizeof *f);
    ck_assert(f != NULL);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    free(v);
    return f;
}

/* W3.6.5 The command line */
static float *cli_floats(const char *text, size_t expect)
{
    float *v = malloc((expect > 0 ? expect : 1) * sizeof *v);
    size_t n = 0;
    char *end;
    ck_assert(v != NULL);
    for (const char *p = text; ; p = end) {
        double x = strtod(p, &end);
        if (end == p)
            break;
        ck_assert_msg(n < expect, "more than %zu numbers", expect);
        v[n++] = (float)x;
    }
    ck_assert_msg(n == expect, "%zu numbers, expected %zu", n, expect);
    return v;
}

static const char *tmp_path(char *buf, size_t len, const char *dir,
                            const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}
static void write_npy(const char *path, const float *x, int ndim,
                      const long *shape)
{
    char err[256];
    ck_assert_msg(rope_npy_write(path, x, ndim, shape, err, sizeof err)
                  == 0, "%s", err);
}

static float *read_npy(const char *path, size_t expect)
{
    rope_npy a;
    char err[256];
    ck_assert_msg(rope_npy_read(path, &a, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_uint_eq(a.count, expect);
    return a.data;
}
static const char *const apply_files[] = {"q.npy", "k.npy", "k2.npy",
    "q3d.npy", "q7.npy", "k7.npy", "magic.npy", "empty.npy", "f8.npy",
    "fortran.npy", "short.npy", "long.npy", "v3.npy", "big.npy",
    "nan.npy", "oq.npy", "ok.npy"};
#define N_APPLY_FILES (sizeof apply_files / sizeof apply_files[0])

static void write_bytes(const char *dir, const char *name,
                        const unsigned char *b, size_t n)
{
    char path[128];
    FILE *f = fopen(tmp_path(path, sizeof path, dir, name), "wb");
    ck_assert(f != NULL);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}
#define NPY_Q "'shape': (1, 3, 2, 8), }"
static void write_apply_files(const char *dir)
{
    static const long sq[4] = {1, 3, 2, 8}, sk[4] = {1, 3, 1, 8};
    static const long sk2[4] = {1, 2, 1, 8}, s3[3] = {3, 2, 8};
    static const long sq7[4] = {1, 3, 2, 7}, sk7[4] = {1, 3, 1, 7};
    float x[48];
    unsigned char b[512];
    char path[128];
    size_t n;
    randfill(x, 48, 71);
    write_npy(tmp_path(path, sizeof path, dir, "q.npy"), x, 4, sq);
    write_npy(tmp_path(path, sizeof path, dir, "k.npy"), x, 4, sk);
    write_npy(tmp_path(path, sizeof path, dir, "k2.npy"), x, 4, sk2);
    write_npy(tmp_path(path, sizeof path, dir, "q3d.npy"), x, 3, s3);
    write_npy(tmp_path(path, sizeof path, dir, "q7.npy"), x, 4, sq7);
    write_npy(tmp_path(path, sizeof path, dir, "k7.npy"), x, 4, sk7);
    float big[48];
    for (int j = 0; j < 48; j++)
        big[j] = 3e38f;
    write_npy(tmp_path(path, sizeof path, dir, "big.npy"), big, 4, sq);
    big[5] = NAN;
    write_npy(tmp_path(path, sizeof path, dir, "nan.npy"), big, 4, sq);
    n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': False, " NPY_Q,
                 x, 48);
    write_bytes(dir, "short.npy", b, n - 4);
    b[1] = 'X';
    write_bytes(dir, "magic.npy", b, n);
    write_bytes(dir, "empty.npy", b, 0);
    n = make_npy(b, 3, "{'descr': '<f4', 'fortran_order': False, " NPY_Q,
                 x, 48);
    write_bytes(dir, "v3.npy", b, n);
    n = make_npy(b, 1, "{'descr': '<f8', 'fortran_order': False, " NPY_Q,
                 x, 48);
    write_bytes(dir, "f8.npy", b, n);
    n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': True, " NPY_Q,
                 x, 48);
    write_bytes(dir, "fortran.npy", b, n);
    n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (1, 3, 1, 8), }", x, 24);
    b[n] = b[n + 1] = b[n + 2] = b[n + 3] = 0;
    write_bytes(dir, "long.npy", b, n + 4);
}
/* 3.3 The block-diagonal rotation */
static void check_shift(int iteration, rope_precision prec, long range,
                        double tol_per_unit)
{
    const int d = 64;
    float q[64], k[64], q1[64], k1[64], q2[64], k2[64];
    float r[3];
    randfill(q, d, (unsigned)iteration);
    randfill(k, d, (unsigned)iteration + 1000u);
    randfill(r, 3, (unsigned)iteration + 2000u);
    /* m, n, shift in [0, range/2): the shifted positions stay in range */
    long pick[3];
    for (int j = 0; j < 3; j++)
        pick[j] = (long)((r[j] + 1.0f) * 0.25f * (float)range);
    long m = pick[0], n = pick[1], shift = pick[2];
    memcpy(q1, q, sizeof q); memcpy(k1, k, sizeof k);
    memcpy(q2, q, sizeof q); memcpy(k2, k, sizeof k);
    rotate_to(q1, d, 1e4, m, prec, ROPE_PAIRING_HALF);
    rotate_to(k1, d, 1e4, n, prec, ROPE_PAIRING_HALF);
    rotate_to(q2, d, 1e4, m + shift, prec, ROPE_PAIRING_HALF);
    rotate_to(k2, d, 1e4, n + shift, prec, ROPE_PAIRING_HALF);
    double scale = sqrt(dot64(q, q, d) * dot64(k, k, d));
    double tol = tol_per_unit * scale;
    ck_assert_msg(fabs(dot64(q1, k1, d) - dot64(q2, k2, d)) <= tol,
                  "m=%ld n=%ld shift=%ld", m, n, shift);
}

START_TEST(test_shift_invariance_double_path)
{
    check_shift(_i, ROPE_PRECISION_DOUBLE, 1000000, 1e-5);
}
END_TEST

START_TEST(test_shift_invariance_float_path)
{
    check_shift(_i, ROPE_PRECISION_FLOAT, 2048,
                4.0 * 2048 * ldexp(1.0, -24) + 1e-5);
}
END_TEST
/* W3.6.1 Against MiniMind and Hugging Face */
static void check_inv_freq_and_angles(int d, long end, const char *inv,
                                      const char *angles)
{
    float f[128];
    rope_default_inv_freq(f, d, 1e6);
    float *g = golden_floats(inv, (size_t)d / 2);
    for (int i = 0; i < d / 2; i++)
        ck_assert_msg(f[i] == g[i], "inv_freq[%d]: %.9e != %.9e", i,
                      (double)f[i], (double)g[i]);
    free(g);
    g = golden_floats(angles, (size_t)end * (size_t)d / 2);
    for (long t = 0; t < end; t++)
        for (int i = 0; i < d / 2; i++)
            ck_assert(rope_angle(t, f[i], ROPE_PRECISION_FLOAT)
                      == (double)g[t * d / 2 + i]);
    free(g);
}

START_TEST(test_inv_freq_and_angles_match_minimind)
{
    check_inv_freq_and_angles(64, 32,
        GMM "rope_default_d64_inv_freq.txt",
        GMM "rope_default_d64_end32_angles.txt");
    check_inv_freq_and_angles(96, 8,
        GMM "rope_default_d96_inv_freq.txt",
        GMM "rope_default_d96_end8_angles.txt");
}
END_TEST
static void check_cos_sin(int d, long end, const char *cos_path,
                        const char *sin_path)
{
    size_t n = (size_t)end * (size_t)d;
    float *c = malloc(n * sizeof *c), *s = malloc(n * sizeof *s);
    ck_assert(c != NULL && s != NULL);
    ck_assert_int_eq(rope_precompute_freqs_cis(c, s, d, end, 1e6,
                         ROPE_PRECISION_FLOAT), 0);
    float *gc = golden_floats(cos_path, n);
    float *gs = golden_floats(sin_path, n);
    for (size_t j = 0; j < n; j++) {
        ck_assert_msg(float_ulp_diff(c[j], gc[j]) <= 1, "cos[%zu]", j);
        ck_assert_msg(float_ulp_diff(s[j], gs[j]) <= 1, "sin[%zu]", j);
    }
    free(c); free(s); free(gc); free(gs);
}

START_TEST(test_cos_sin_within_one_ulp_of_minimind)
{
    check_cos_sin(64, 32, GMM "rope_default_d64_end32_cos.txt",
                GMM "rope_default_d64_end32_sin.txt");
    check_cos_sin(96, 8, GMM "rope_default_d96_end8_cos.txt",
                GMM "rope_default_d96_end8_sin.txt");
}
END_TEST
START_TEST(test_rotate_half_matches_minimind)
{
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    float *g = golden_floats(GMM "rotate_half_d8.txt", 8);
    rope_rotate_half(x, out, 8);
    for (int j = 0; j < 8; j++)
        ck_assert(out[j] == g[j]);
    free(g);
}
END_TEST

static void apply_to_golden_inputs(const float *c, const float *s,
                                   float *q, float *k)
{
    float *gq = golden_floats(GMM "apply_rope_q_in.txt", 6 * 8 * 96);
    float *gk = golden_floats(GMM "apply_rope_k_in.txt", 6 * 2 * 96);
    memcpy(q, gq, 6 * 8 * 96 * sizeof *q);
    memcpy(k, gk, 6 * 2 * 96 * sizeof *k);
    rope_apply_rotary_pos_emb(q, k, c, s, 1, 6, 8, 2, 96, 0,
                              ROPE_PAIRING_HALF);
    free(gq); free(gk);
}

START_TEST(test_apply_with_minimind_tables_is_bitwise)
{
    float *c = golden_floats(GMM "rope_default_d96_end8_cos.txt", 768);
    float *s = golden_floats(GMM "rope_default_d96_end8_sin.txt", 768);
    float q[6 * 8 * 96], k[6 * 2 * 96];
    apply_to_golden_inputs(c, s, q, k);
    float *oq = golden_floats(
        GMM "apply_rope_c1_default_pos0_q_out.txt",
                              6 * 8 * 96);
    float *ok = golden_floats(
        GMM "apply_rope_c1_default_pos0_k_out.txt",
                              6 * 2 * 96);
    for (int j = 0; j < 6 * 8 * 96; j++)
        ck_assert_msg(q[j] == oq[j], "q[%d]", j);
    for (int j = 0; j < 6 * 2 * 96; j++)
        ck_assert_msg(k[j] == ok[j], "k[%d]", j);
    free(c); free(s); free(oq); free(ok);
}
END_TEST
#define ROT_OWN_TABLE_TOL (6.0f / 16777216.0f) /* 6 * 2^-24 */
START_TEST(test_apply_with_own_tables_within_tolerance)
{
    float c[8 * 96], s[8 * 96], q[6 * 8 * 96], k[6 * 2 * 96];
    ck_assert_int_eq(rope_precompute_freqs_cis(c, s, 96, 8, 1e6,
                         ROPE_PRECISION_FLOAT), 0);
    apply_to_golden_inputs(c, s, q, k);
    float *oq = golden_floats(
        GMM "apply_rope_c1_default_pos0_q_out.txt",
                              6 * 8 * 96);
    float *ok = golden_floats(
        GMM "apply_rope_c1_default_pos0_k_out.txt",
                              6 * 2 * 96);
    for (int j = 0; j < 6 * 8 * 96; j++)
        ck_assert_float_eq_tol(q[j], oq[j], ROT_OWN_TABLE_TOL);
    for (int j = 0; j < 6 * 2 * 96; j++)
        ck_assert_float_eq_tol(k[j], ok[j], ROT_OWN_TABLE_TOL);
    free(oq); free(ok);
}
END_TEST
static double hf_tolerance(long pos)
{
    return 4.0 * (double)pos * ldexp(1.0, -24) + 1e-6;
}

START_TEST(test_cos_sin_match_hugging_face)
{
    size_t n;
    double *v = golden_read(GHF "cos_sin_default_theta1e4.txt", &n);
    float inv[32], c[64], s[64];
    ck_assert_uint_eq(n, 8 * 64 * 8);
    rope_default_inv_freq(inv, 64, 1e4);
    for (size_t r = 0; r < n / 8; r++) {
        const double *row = v + 8 * r; /* pos j angle cos sin, refs */
        long pos = (long)row[0];
        int j = (int)row[1];
        ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, s, inv, 64,
                             pos, pos + 1, 1.0, ROPE_PRECISION_FLOAT),
                         0);
        ck_assert(rope_angle(pos, inv[j % 32], ROPE_PRECISION_FLOAT)
                  == (double)(float)row[2]);
        ck_assert(float_ulp_diff(c[j], (float)row[3]) <= 1);
        ck_assert(float_ulp_diff(s[j], (float)row[4]) <= 1);
        ck_assert_double_le(fabs(c[j] - row[6]), hf_tolerance(pos));
        ck_assert_double_le(fabs(s[j] - row[7]), hf_tolerance(pos));
    }
    free(v);
}
END_TEST
START_TEST(test_apply_matches_hugging_face)
{
    size_t n;
    double *v = golden_read(GHF "apply_rope_default_theta1e4.txt", &n);
    float inv[32], c[64], s[64], q[64], k[64];
    ck_assert_uint_eq(n, 8 * 64 * 4);
    rope_default_inv_freq(inv, 64, 1e4);
    for (int p = 0; p < 8; p++) {
        const double *rows = v + 4 * 64 * p; /* pos j q_in q_embed */
        long pos = (long)rows[0];
        for (int j = 0; j < 64; j++)
            q[j] = k[j] = (float)rows[4 * j + 2];
        ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, s, inv, 64,
                             pos, pos + 1, 1.0, ROPE_PRECISION_FLOAT),
                         0);
        rope_apply_rotary_pos_emb(q, k, c, s, 1, 1, 1, 1, 64, 0,
                                  ROPE_PAIRING_HALF);
        for (int j = 0; j < 64; j++)
            ck_assert_double_le(fabs(q[j] - rows[4 * j + 3]),
                                hf_tolerance(pos));
    }
    free(v);
}
END_TEST
/* W3.6.2 The algebra */
START_TEST(test_pair_encoding_is_the_complex_product)
{
    float q[2], k[2];
    randfill(q, 2, 7u);
    randfill(k, 2, 8u);
    double lq = hypot(q[0], q[1]), lk = hypot(k[0], k[1]);
    for (long m = 0; m <= 16; m++)
        for (long n = 0; n <= 16; n++) {
            float fq[2] = {q[0], q[1]}, fk[2] = {k[0], k[1]};
            rotate_to(fq, 2, 1e4, m, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            rotate_to(fk, 2, 1e4, n, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            double c = cos((double)m), s = sin((double)m);
            ck_assert_double_le(fabs(fq[0] - (q[0] * c - q[1] * s)),
                                1e-6 * lq);
            ck_assert_double_le(fabs(fq[1] - (q[0] * s + q[1] * c)),
                                1e-6 * lq);
            /* f(q,m) conj f(k,n) against q conj(k) e^{i(m-n)} */
            double re = (double)fq[0] * fk[0] + (double)fq[1] * fk[1];
            double im = (double)fq[1] * fk[0] - (double)fq[0] * fk[1];
            double a = (double)q[0] * k[0] + (double)q[1] * k[1];
            double b = (double)q[1] * k[0] - (double)q[0] * k[1];
            double cr = cos((double)(m - n)), sr = sin((double)(m - n));
            ck_assert_double_le(fabs(re - (a * cr - b * sr)),
                                1e-6 * lq * lk);
            ck_assert_double_le(fabs(im - (a * sr + b * cr)),
                                1e-6 * lq * lk);
        }
}
END_TEST
START_TEST(test_unit_pair_gives_cosine_of_distance)
{
    for (long m = 0; m < 100; m += 7)
        for (long n = 0; n < 100; n += 5) {
            float q[2] = {1, 0}, k[2] = {1, 0};
            rotate_to(q, 2, 1e6, m, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_HALF);
            rotate_to(k, 2, 1e6, n, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_HALF);
            ck_assert_double_eq_tol(dot64(q, k, 2),
                                    cos((double)(n - m)),
                                    1e-5);
        }
}
END_TEST
START_TEST(test_sine_term_tells_before_from_after)
{
    const long m = 30;
    const double tol = 1.5e-5;
    for (long r = -20; r <= 20; r++) {
        float q[2] = {1, 0}, k[2] = {1, 1}, q2[2] = {1, 0}, k2[2] = {1, 1};
        rotate_to(q, 2, 1e6, m, ROPE_PRECISION_FLOAT, ROPE_PAIRING_HALF);
        rotate_to(k, 2, 1e6, m + r, ROPE_PRECISION_FLOAT,
                  ROPE_PAIRING_HALF);
        rotate_to(q2, 2, 1e6, m, ROPE_PRECISION_FLOAT, ROPE_PAIRING_HALF);
        rotate_to(k2, 2, 1e6, m - r, ROPE_PRECISION_FLOAT,
                  ROPE_PAIRING_HALF);
        double plus = dot64(q, k, 2), minus = dot64(q2, k2, 2);
        ck_assert_double_eq_tol(plus, cos((double)r) - sin((double)r), tol);
        ck_assert_double_eq_tol(minus - plus, 2 * sin((double)r),
                                2 * tol);
    }
}
END_TEST
static void rotation_matrix(double *R, int d, long m)
{
    float e[16];
    for (int col = 0; col < d; col++) {
        memset(e, 0, sizeof e);
        e[col] = 1;
        rotate_to(e, d, 1e4, m, ROPE_PRECISION_DOUBLE,
                  ROPE_PAIRING_HALF);
        for (int row = 0; row < d; row++)
            R[row * d + col] = e[row];
    }
}

START_TEST(test_transpose_product_is_relative_rotation)
{
    const int d = 8;
    long pairs[4][2] = {{3, 10}, {10, 3}, {0, 500}, {1234, 1234}};
    for (int p = 0; p < 4; p++) {
        double A[64], B[64], C[64];
        long m = pairs[p][0], n = pairs[p][1];
        rotation_matrix(A, d, m);
        rotation_matrix(B, d, n);
        rotation_matrix(C, d, n >= m ? n - m : m - n);
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) {
                double sum = 0, eye = 0;
                for (int r = 0; r < d; r++) {
                    sum += A[r * d + i] * B[r * d + j];
                    eye += A[r * d + i] * A[r * d + j];
                }
                /* R_{n-m} is R_{m-n} transposed when n < m */
                double want = n >= m ? C[i * d + j] : C[j * d + i];
                ck_assert_double_eq_tol(eye, i == j, 1e-6);
                ck_assert_double_eq_tol(sum, want, 1e-6);
            }
    }
}
END_TEST
START_TEST(test_rotation_keeps_the_norm)
{
    float x[96], y[96];
    randfill(x, 96, 7);
    for (long m = 1; m < 40000; m = m * 3 + 1) {
        memcpy(y, x, sizeof x);
        rotate_to(y, 96, 1e6, m, ROPE_PRECISION_FLOAT,
                  ROPE_PAIRING_HALF);
        ck_assert_double_eq_tol(dot64(y, y, 96) / dot64(x, x, 96), 1.0,
                                1e-6);
    }
}
END_TEST
START_TEST(test_rotate_half_form_is_the_pairwise_rotation)
{
    const int d = 96;
    float c[4 * 96], s[4 * 96], x[96], rx[96], y[96], k[96];
    ck_assert_int_eq(rope_precompute_freqs_cis(c, s, d, 4, 1e6,
                         ROPE_PRECISION_FLOAT), 0);
    randfill(x, d, 11);
    rope_rotate_half(x, rx, d);
    memcpy(y, x, sizeof x);
    memcpy(k, x, sizeof x);
    rope_apply_rotary_pos_emb(y, k, c, s, 1, 1, 1, 1, d, 3,
                              ROPE_PAIRING_HALF);
    for (int j = 0; j < d; j++) {
        float x_cos = x[j] * c[3 * d + j];
        float rx_sin = rx[j] * s[3 * d + j];
        ck_assert(y[j] == x_cos + rx_sin);
    }
}
END_TEST
START_TEST(test_pairings_differ_by_the_permutation)
{
    int widths[3] = {8, 64, 96};
    int perm8[8], want8[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    rope_pairing_permutation(perm8, 8);
    for (int j = 0; j < 8; j++)
        ck_assert_int_eq(perm8[j], want8[j]);
    for (int w = 0; w < 3; w++) {
        int d = widths[w], perm[96], seen[96] = {0};
        float x[96], px[96];
        rope_pairing_permutation(perm, d);
        for (int j = 0; j < d; j++)
            seen[perm[j]]++;
        for (int j = 0; j < d; j++)
            ck_assert_int_eq(seen[j], 1);
        for (long m = 0; m < 32768; m = 2 * m + 5) {
            randfill(x, (size_t)d, (unsigned)(m + d));
            for (int j = 0; j < d; j++)
                px[j] = x[perm[j]];
            rotate_to(x, d, 1e6, m, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_HALF);
            rotate_to(px, d, 1e6, m, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_INTERLEAVED);
            for (int j = 0; j < d; j++)
                ck_assert(px[j] == x[perm[j]]);
        }
    }
}
END_TEST
static void proj(const float *W, const float *x, float *q, int d,
                    int width, const int *row_of)
{
    for (int r = 0; r < d; r++) {
        float sum = 0;
        for (int c = 0; c < width; c++)
            sum += W[row_of[r] * width + c] * x[c];
        q[r] = sum;
    }
}

START_TEST(test_permuted_weights_give_the_same_scores)
{
    enum { D = 8, W = 16 };
    float Wq[D * W], Wk[D * W], x[W], y[W];
    int id[D], perm[D];
    randfill(Wq, D * W, 1); randfill(Wk, D * W, 2);
    randfill(x, W, 3); randfill(y, W, 4);
    rope_pairing_permutation(perm, D);
    for (int j = 0; j < D; j++) id[j] = j;
    for (long m = 0; m < 3000; m += 701)
        for (long n = 0; n < 3000; n += 599) {
            float q[D], k[D], pq[D], pk[D];
            proj(Wq, x, q, D, W, id);
            proj(Wk, y, k, D, W, id);
            proj(Wq, x, pq, D, W, perm);
            proj(Wk, y, pk, D, W, perm);
            rotate_to(q, D, 1e4, m, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_HALF);
            rotate_to(k, D, 1e4, n, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_HALF);
            rotate_to(pq, D, 1e4, m, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_INTERLEAVED);
            rotate_to(pk, D, 1e4, n, ROPE_PRECISION_FLOAT,
                      ROPE_PAIRING_INTERLEAVED);
            ck_assert_double_eq_tol(dot64(q, k, D), dot64(pq, pk, D),
                                    1e-5);
        }
}
END_TEST
START_TEST(test_rotating_the_hidden_state_breaks_relativity)
{
    enum { D = 8 };
    float Wq[D * D], Wk[D * D], x[D], y[D];
    int id[D];
    randfill(Wq, D * D, 5); randfill(Wk, D * D, 6);
    randfill(x, D, 7); randfill(y, D, 8);
    for (int j = 0; j < D; j++) id[j] = j;
    double worst_wrong = 0, worst_right = 0;
    for (long t = 1; t < 400; t += 37) {
        double score[2][2];
        for (int shifted = 0; shifted < 2; shifted++) {
            long m = 5 + shifted * t, n = 9 + shifted * t;
            float xr[D], yr[D], q[D], k[D];
            memcpy(xr, x, sizeof x); memcpy(yr, y, sizeof y);
            rotate_to(xr, D, 1e4, m, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            rotate_to(yr, D, 1e4, n, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            proj(Wq, xr, q, D, D, id); proj(Wk, yr, k, D, D, id);
            score[0][shifted] = dot64(q, k, D); /* rotated too early */
            proj(Wq, x, q, D, D, id); proj(Wk, y, k, D, D, id);
            rotate_to(q, D, 1e4, m, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            rotate_to(k, D, 1e4, n, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            score[1][shifted] = dot64(q, k, D); /* MiniMind's place */
        }
        double wrong = fabs(score[0][0] - score[0][1]);
        double right = fabs(score[1][0] - score[1][1]);
        worst_wrong = fmax(worst_wrong, wrong);
        worst_right = fmax(worst_right, right);
    }
    ck_assert_double_gt(worst_wrong, 1e-3);
    ck_assert_double_lt(worst_right, 1e-5);
}
END_TEST
/* W3.6.3 The interface, at long range and with bad arguments */
START_TEST(test_start_pos_and_heads_use_the_right_rows)
{
    enum { D = 16, END = 300, S0 = 250, L = 7 };
    static float c[END * D], s[END * D], c2[L * D], s2[L * D];
    float inv[D / 2], q[2 * L * 4 * D], k[2 * L * 2 * D];
    float q2[2 * L * 4 * D], k2[2 * L * 2 * D];
    rope_default_inv_freq(inv, D, 1e6);
    ck_assert_int_eq(rope_precompute_freqs_cis(c, s, D, END, 1e6,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c2, s2, inv, D, S0,
                         S0 + L, 1.0, ROPE_PRECISION_FLOAT), 0);
    ck_assert(memcmp(c + S0 * D, c2, sizeof c2) == 0);
    ck_assert(memcmp(s + S0 * D, s2, sizeof s2) == 0);
    randfill(q, 2 * L * 4 * D, 9);
    for (int tok = 0; tok < 2 * L; tok++) /* keys = query head 0 */
        for (int h = 0; h < 2; h++)
            memcpy(k + (tok * 2 + h) * D, q + tok * 4 * D,
                   D * sizeof *k);
    memcpy(q2, q, sizeof q); memcpy(k2, k, sizeof k);
    rope_apply_rotary_pos_emb(q, k, c, s, 2, L, 4, 2, D, S0,
                              ROPE_PAIRING_HALF);
    rope_apply_rotary_pos_emb(q2, k2, c2, s2, 2, L, 4, 2, D, 0,
                              ROPE_PAIRING_HALF);
    ck_assert(memcmp(q, q2, sizeof q) == 0);
    ck_assert(memcmp(k, k2, sizeof k) == 0);
    for (int tok = 0; tok < 2 * L; tok++)
        for (int h = 0; h < 2; h++)
            ck_assert(memcmp(k + (tok * 2 + h) * D, q + tok * 4 * D,
                             D * sizeof *k) == 0);
}
END_TEST

START_TEST(test_attention_factor_scales_every_entry)
{
    float inv[48], c1[96], s1[96], c2[96], s2[96];
    rope_default_inv_freq(inv, 96, 1e6);
    for (int p = 0; p < 2; p++) {
        rope_precision prec = p ? ROPE_PRECISION_DOUBLE
                                : ROPE_PRECISION_FLOAT;
        rope_freqs_cis_from_inv_freq(c1, s1, inv, 96, 777, 778, 1.0,
                                     prec);
        rope_freqs_cis_from_inv_freq(c2, s2, inv, 96, 777, 778, 2.0,
                                     prec);
        for (int j = 0; j < 96; j++) {
            ck_assert(c2[j] == 2 * c1[j]);
            ck_assert(s2[j] == 2 * s1[j]);
        }
    }
}
END_TEST
START_TEST(test_rotation_far_from_the_start)
{
    enum { D = 64 };
    float inv[D / 2], x[D], y[D], z[D];
    rope_default_inv_freq(inv, D, 1e4);
    randfill(x, D, 12);
    for (long m = 999990; m < 1000000; m += 3) {
        memcpy(y, x, sizeof x); memcpy(z, x, sizeof x);
        rotate_to(y, D, 1e4, m, ROPE_PRECISION_DOUBLE,
                  ROPE_PAIRING_HALF);
        rotate_to(z, D, 1e4, m, ROPE_PRECISION_FLOAT,
                  ROPE_PAIRING_HALF);
        for (int i = 0; i < D / 2; i++) {
            double a = (double)m * inv[i], c = cos(a), s = sin(a);
            double want0 = x[i] * c - x[i + D / 2] * s;
            double want1 = x[i + D / 2] * c + x[i] * s;
            ck_assert_double_eq_tol(y[i], want0, 4e-7);
            ck_assert_double_eq_tol(y[i + D / 2], want1, 4e-7);
            double tol = 2.0 * m * ldexp(1.0, -24);
            ck_assert_double_eq_tol(z[i], want0, tol);
            ck_assert_double_eq_tol(z[i + D / 2], want1, tol);
        }
    }
}
END_TEST
START_TEST(test_bad_arguments_are_refused)
{
    float c[8], s[8], inv[4] = {1, 1, 1, 1};
    ck_assert_int_ne(rope_precompute_freqs_cis(c, s, 7, 1, 1e4,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_precompute_freqs_cis(c, s, 8, 1, 1.0,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_precompute_freqs_cis(c, s, 8, 1, 1e300,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_precompute_freqs_cis(c, s, 8, -1, 1e4,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_freqs_cis_from_inv_freq(c, s, inv, 8, 5, 4,
                         1.0, ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_freqs_cis_from_inv_freq(c, s, inv, 8,
                         ROPE_MAX_POSITION, ROPE_MAX_POSITION + 1, 1.0,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_ne(rope_freqs_cis_from_inv_freq(NULL, s, inv, 8, 0, 1,
                         1.0, ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, s, inv, 8, 0, 1,
                         1.0, ROPE_PRECISION_FLOAT), 0);
}
END_TEST
/* W3.6.4 Long-term decay */
START_TEST(test_decay_matches_the_roformer_values)
{
    size_t n;
    double *v = golden_read(GHF "roformer_decay_bound.txt", &n);
    ck_assert_uint_eq(n % 4, 0);
    ck_assert_uint_ge(n / 4, 50);
    for (size_t r = 0; r < n / 4; r++) { /* d base r A(r) */
        double a = rope_decay_average((int)v[4 * r], v[4 * r + 1],
                                      v[4 * r + 2]);
        ck_assert_double_eq_tol(a, v[4 * r + 3], 1e-12 * v[4 * r + 3]);
    }
    free(v);
}
END_TEST

START_TEST(test_decay_at_distance_zero)
{
    for (int d = 2; d <= 256; d += 2)
        ck_assert(rope_decay_average(d, 1e4, 0.0) == (d / 2 + 1) / 2.0);
}
END_TEST
START_TEST(test_summation_by_parts_and_the_bound)
{
    enum { D = 64, H = D / 2 };
    float q[D], k[D], qi[D], ki[D], inv[H];
    int perm[D];
    randfill(q, D, 21); randfill(k, D, 22);
    rope_pairing_permutation(perm, D);
    rope_default_inv_freq(inv, D, 1e4);
    for (long m = 0; m < 5000; m += 331)
        for (long n = 0; n < 5000; n += 457) {
            double r = (double)(n - m), hr[H + 1], hi[H + 1];
            double sum_re = 0, abel_re = 0, sre = 0, sim = 0;
            double max_dh = 0, sum_abs_s = 0;
            for (int i = 0; i < H; i++) { /* eta_i = conj(q_[i]) k_[i] */
                double q0 = q[2 * i], q1 = q[2 * i + 1];
                double k0 = k[2 * i], k1 = k[2 * i + 1];
                hr[i] = q0 * k0 + q1 * k1;
                hi[i] = q0 * k1 - q1 * k0;
            }
            hr[H] = hi[H] = 0;
            for (int i = 0; i < H; i++) {
                double a = r * inv[i];
                sum_re += hr[i] * cos(a) - hi[i] * sin(a);
                sre += cos(a); sim += sin(a); /* Z_{i+1} */
                double dr = hr[i + 1] - hr[i], di = hi[i + 1] - hi[i];
                abel_re -= sre * dr - sim * di;
                max_dh = fmax(max_dh, hypot(dr, di));
                sum_abs_s += hypot(sre, sim);
            }
            memcpy(qi, q, sizeof q); memcpy(ki, k, sizeof k);
            rotate_to(qi, D, 1e4, m, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_INTERLEAVED);
            rotate_to(ki, D, 1e4, n, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_INTERLEAVED);
            ck_assert_double_eq_tol(dot64(qi, ki, D), sum_re, 1e-5);
            ck_assert_double_eq_tol(sum_re, abel_re, 1e-9);
            ck_assert_double_le(fabs(sum_re),
                                max_dh * sum_abs_s + 1e-9);
        }
}
END_TEST
/* W3.6.5 The command line */
static char *freqs_output(const char *args, int lines)
{
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 0, "'%s': status %d, %s", args, r.status,
                  r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(cli_line_count(r.out), lines);
    free(r.err);
    return r.out;
}

static void check_cli_freqs(int d, long end, const char *stem)
{
    char args[160], path[160];
    const char *what[4] = {"inv_freq", "angles", "cos", "sin"};
    for (int w = 0; w < 4; w++) {
        size_t n = w == 0 ? (size_t)d / 2
                 : (size_t)end * (size_t)(w == 1 ? d / 2 : d);
        snprintf(args, sizeof args, "freqs --head-dim %d --theta 1e6 "
                 "--end %ld --print %s", d, end, what[w]);
        char *out = freqs_output(args, w == 0 ? 1 : (int)end);
        if (w == 0)
            snprintf(path, sizeof path, GMM "%s_inv_freq.txt", stem);
        else
            snprintf(path, sizeof path, GMM "%s_end%ld_%s.txt", stem,
                     end, what[w]);
        float *got = cli_floats(out, n), *want = golden_floats(path, n);
        for (size_t j = 0; j < n; j++)
            ck_assert_msg(w < 2 ? got[j] == want[j]
                                : float_ulp_diff(got[j], want[j]) <= 1,
                          "%s: value %zu is %.9e, MiniMind %.9e", args, j,
                          (double)got[j], (double)want[j]);
        free(got); free(want); free(out);
    }
}
START_TEST(test_cli_freqs_matches_minimind)
{
    check_cli_freqs(64, 32, "rope_default_d64");
    check_cli_freqs(96, 8, "rope_default_d96");
}
END_TEST

START_TEST(test_cli_freqs_positions_pairing_and_precision)
{
    char *all = freqs_output("freqs --head-dim 64 --end 32", 32);
    char *two = freqs_output("freqs --head-dim 64 --positions 31,5", 2);
    char *il = freqs_output("freqs --head-dim 64 --positions 31,5 "
                            "--pairing interleaved", 2);
    char *dbl = freqs_output("freqs --head-dim 64 --theta 1e4 "
                             "--positions 999999 --precision double", 1);
    float *a = cli_floats(all, 32 * 64), *t = cli_floats(two, 2 * 64);
    float *p = cli_floats(il, 2 * 64), *x = cli_floats(dbl, 64);
    float c[64], s[64];
    for (int j = 0; j < 64; j++) {
        ck_assert(t[j] == a[31 * 64 + j] && t[64 + j] == a[5 * 64 + j]);
        ck_assert(p[j] == t[j / 2] && p[64 + j] == t[64 + j / 2]);
    }
    float inv[32];
    rope_default_inv_freq(inv, 64, 1e4);
    rope_freqs_cis_from_inv_freq(c, s, inv, 64, 999999, 1000000, 1.0,
                                 ROPE_PRECISION_DOUBLE);
    ck_assert(memcmp(x, c, sizeof c) == 0);
    free(a); free(t); free(p); free(x);
    free(all); free(two); free(il); free(dbl);
}
END_TEST
START_TEST(test_cli_apply_equals_the_library)
{
    enum { B = 2, S = 5, H = 4, HK = 2, D = 32 };
    enum { NQ = B * S * H * D, NK = B * S * HK * D };
    static const long start[3] = {0, 4093, 65530};
    static float q[NQ], k[NK], c[(65530 + S) * D], s[(65530 + S) * D];
    const long qshape[4] = {B, S, H, D}, kshape[4] = {B, S, HK, D};
    rope_pairing pairing = _i & 1 ? ROPE_PAIRING_INTERLEAVED
                                  : ROPE_PAIRING_HALF;
    rope_precision prec = _i & 2 ? ROPE_PRECISION_DOUBLE
                                 : ROPE_PRECISION_FLOAT;
    char dir[] = "/tmp/rope-apply-XXXXXX", args[1024], p[4][96];
    const char *name[4] = {"q.npy", "k.npy", "oq.npy", "ok.npy"};
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 4; j++)
        tmp_path(p[j], sizeof p[j], dir, name[j]);
    randfill(q, NQ, 61); randfill(k, NK, 62);
    write_npy(p[0], q, 4, qshape); write_npy(p[1], k, 4, kshape);
    for (int r = 0; r < 3; r++) {
        snprintf(args, sizeof args, "apply --q %s --k %s --theta 1e4 "
                 "--start-pos %ld --out-q %s --out-k %s --pairing %s "
                 "--precision %s", p[0], p[1], start[r], p[2], p[3],
                 _i & 1 ? "interleaved" : "half", _i & 2 ? "double" : "float");
        cli_result res = cli_run(args);
        ck_assert_msg(res.status == 0, "'%s': %s", args, res.err);
        ck_assert_str_eq(res.out, "");
        ck_assert_str_eq(res.err, "");
        cli_result_free(&res);
        float *oq = read_npy(p[2], NQ), *ok = read_npy(p[3], NK);
        ck_assert_int_eq(rope_precompute_freqs_cis(c, s, D, start[r] + S, 1e4,
                                                   prec), 0);
        static float wq[NQ], wk[NK];
        memcpy(wq, q, sizeof q); memcpy(wk, k, sizeof k);
        rope_apply_rotary_pos_emb(wq, wk, c, s, B, S, H, HK, D, start[r],
                                  pairing);
        ck_assert_msg(memcmp(oq, wq, sizeof wq) == 0, "q at %ld", start[r]);
        ck_assert_msg(memcmp(ok, wk, sizeof wk) == 0, "k at %ld", start[r]);
        free(oq); free(ok);
    }
    for (int j = 0; j < 4; j++)
        remove(p[j]);
    rmdir(dir);
}
END_TEST
START_TEST(test_cli_apply_on_minimind_inputs)
{
    char dir[] = "/tmp/rope-apply-XXXXXX", args[1024], p[4][96];
    const char *name[4] = {"q.npy", "k.npy", "oq.npy", "ok.npy"};
    const long qshape[4] = {1, 6, 8, 96}, kshape[4] = {1, 6, 2, 96};
    float *q = golden_floats(GMM "apply_rope_q_in.txt", 4608);
    float *k = golden_floats(GMM "apply_rope_k_in.txt", 1152);
    float *wq = golden_floats(
        GMM "apply_rope_c1_default_pos0_q_out.txt", 4608);
    float *wk = golden_floats(
        GMM "apply_rope_c1_default_pos0_k_out.txt", 1152);
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 4; j++)
        tmp_path(p[j], sizeof p[j], dir, name[j]);
    write_npy(p[0], q, 4, qshape); write_npy(p[1], k, 4, kshape);
    snprintf(args, sizeof args, "apply --q %s --k %s --start-pos 0 "
             "--out-q %s --out-k %s", p[0], p[1], p[2], p[3]);
    cli_result res = cli_run(args);
    ck_assert_msg(res.status == 0, "'%s': %s", args, res.err);
    cli_result_free(&res);
    float *oq = read_npy(p[2], 4608), *ok = read_npy(p[3], 1152);
    for (int j = 0; j < 4608; j++)
        ck_assert_float_eq_tol(oq[j], wq[j], ROT_OWN_TABLE_TOL);
    for (int j = 0; j < 1152; j++)
        ck_assert_float_eq_tol(ok[j], wk[j], ROT_OWN_TABLE_TOL);
    for (int j = 0; j < 4; j++)
        remove(p[j]);
    rmdir(dir);
    free(q); free(k); free(wq); free(wk); free(oq); free(ok);
}
END_TEST
#define APPLY_QK "apply --q DIR/q.npy --k DIR/k.npy"
#define APPLY_OUT " --out-q DIR/oq.npy --out-k DIR/ok.npy"
static const char *const cli_bad_calls[][2] = {
    {"freqs --head-dim 7 --end 3", "--head-dim"},
    {"freqs --head-dim 0 --end 3", "--head-dim"},
    {"freqs --head-dim 8194 --end 3", "--head-dim"},
    {"freqs --head-dim", "--head-dim"},
    {"freqs --end 3", "--head-dim"},
    {"freqs --head-dim 8 --theta 1 --end 3", "--theta"},
    {"freqs --head-dim 8 --theta 1e39 --end 3", "--theta"},
    {"freqs --head-dim 8 --theta x --end 3", "--theta"},
    {"freqs --head-dim 8 --end 0", "--end"},
    {"freqs --head-dim 8 --end 16777217", "--end"},
    {"freqs --head-dim 8", "--end"},
    {"freqs --head-dim 8 --positions 0,-1", "--positions"},
    {"freqs --head-dim 8 --positions 2,,3", "--positions"},
    {"freqs --head-dim 8 --end 3 --positions 1", "--positions"},
    {"freqs --head-dim 8 --end 3 --pairing diagonal", "--pairing"},
    {"freqs --head-dim 8 --end 3 --precision half", "--precision"},
    {"freqs --head-dim 8 --end 3 --print tan", "--print"},
    {"freqs --head-dim 8 --end 3 --colour red", "--colour"},
    {APPLY_QK " --out-q DIR/oq.npy", "--out-k"},
    {APPLY_QK " --out-q DIR/oq.npy --out-k", "--out-k"},
    {"apply --k DIR/k.npy" APPLY_OUT, "--q"},
    {APPLY_QK APPLY_OUT " --start-pos -1", "--start-pos"},
    {APPLY_QK APPLY_OUT " --start-pos 16777214", "--start-pos"},
    {APPLY_QK APPLY_OUT " --theta 0.5", "--theta"},
    {APPLY_QK APPLY_OUT " --head-dim 16", "--head-dim"},
    {APPLY_QK APPLY_OUT " --pairing neox", "--pairing"},
    {APPLY_QK APPLY_OUT " --frobnicate", "--frobnicate"},
    {"apply --q DIR/magic.npy --k DIR/k.npy" APPLY_OUT, "bad magic"},
    {"apply --q DIR/empty.npy --k DIR/k.npy" APPLY_OUT, "bad magic"},
    {"apply --q DIR/f8.npy --k DIR/k.npy" APPLY_OUT, "not float32"},
    {"apply --q DIR/fortran.npy --k DIR/k.npy" APPLY_OUT, "Fortran"},
    {"apply --q DIR/short.npy --k DIR/k.npy" APPLY_OUT, "truncated data"},
    {"apply --q DIR/q.npy --k DIR/long.npy" APPLY_OUT, "after the data"},
    {"apply --q DIR/v3.npy --k DIR/k.npy" APPLY_OUT, "version"},
    {"apply --q DIR/q.npy --k DIR/k2.npy" APPLY_OUT, "must be [batch"},
    {"apply --q DIR/q3d.npy --k DIR/k.npy" APPLY_OUT, "must be [batch"},
    {"apply --q DIR/q7.npy --k DIR/k7.npy" APPLY_OUT, "--head-dim"},
    {"apply --q DIR/none.npy --k DIR/k.npy" APPLY_OUT, "none.npy"},
    {APPLY_QK " --out-q DIR/no/oq.npy --out-k DIR/ok.npy", "no/oq.npy"},
    {APPLY_QK " --out-q DIR/oq.npy --out-k DIR/./oq.npy",
     "--out-q and --out-k name the same file"},
    {APPLY_QK " --out-q DIR/ok.npy --out-k DIR/../" "$(basename DIR/)/ok.npy",
     "--out-q and --out-k name the same file"},
    {APPLY_QK " --out-q DIR/q.npy --out-k DIR/ok.npy",
     "--q and --out-q name the same file"},
    {APPLY_QK " --out-q DIR/oq.npy --out-k DIR/./k.npy",
     "--k and --out-k name the same file"},
    {APPLY_QK APPLY_OUT " --theta 1e-320", "--theta must be > 1"},
    {APPLY_QK APPLY_OUT " --factor 2", "--factor needs --scaling"},
    {APPLY_QK APPLY_OUT " --scaling linear --factor 2 --beta-fast 8",
     "--beta-fast means nothing with --scaling linear"},
    {"apply --q /dev/zero --k DIR/k.npy" APPLY_OUT, "bad magic"},
    {APPLY_QK APPLY_OUT " '--fro\nb'", "'--fro\\nb'"},
    {APPLY_QK APPLY_OUT " '--x\001y'", "'--x\\x01y'"},
    {"", "no command given"},
    {"freqs --head-dim 4 --scaling longrope --factor 2 "
     "--original-max-position-embeddings 10 --short-factor 1e-300,1 "
     "--long-factor 1,1 --print inv_freq", "inv_freq[0] is inf"},
    {"freqs --head-dim 4 --scaling longrope --factor 2 "
     "--original-max-position-embeddings 10 --short-factor 1e-37,1 "
     "--long-factor 1,1 --positions 1,1000000 --print angles",
     "position 1000000 times inv_freq 1e+37 passes the float range"},
    {APPLY_QK APPLY_OUT " --start-pos 1000000 --scaling longrope --factor 2"
     " --original-max-position-embeddings 10 --short-factor 1e-37,1,1,1"
     " --long-factor 1e-37,1,1,1", "table is not finite at position 1000000"},
    {"apply --q DIR/big.npy --k DIR/k.npy" APPLY_OUT,
     "rotating --q DIR/big.npy gives inf"},
    {"apply --q DIR/big.npy --k DIR/k.npy" APPLY_OUT " --scaling yarn "
     "--factor 4 --original-max-position-embeddings 2 --attention-factor 1.5",
     "rotating --q DIR/big.npy gives inf at element 0"},
    {"apply --q DIR/nan.npy --k DIR/k.npy" APPLY_OUT,
     "--q DIR/nan.npy holds nan at element 5"},
    {"demo 'a\nb'", "unknown NAME 'a\\nb'"},
    {"'dem\to' integer", "unknown command 'dem\\x09o'"},
    {"pe --d-model 8 --positions '1\n2'", "'1\\n2' is not an integer"},
    {"pe --d-model 8 --positions 1 --base '2\r'", "'2\\x0d'"},
    {"freqs --head-dim 8 --end 3 --print 'cos\n'", "'cos\\n'"},
    {"freqs --head-dim 8 --end 3 --scaling 'yarn\033[1m'",
     "'yarn\\x1b[1m'"},
    {"apply --q 'DIR/no\nne.npy' --k DIR/k.npy" APPLY_OUT, "no\\nne.npy"},
    {"attention --q DIR/q.npy --k DIR/k.npy --v DIR/k.npy --out DIR/oq.npy"
     " --simd 'x\ty'", "'x\\x09y'"},
};
#define N_CLI_BAD_CALLS (sizeof cli_bad_calls / sizeof cli_bad_calls[0])
static void expand_dir(char *out, size_t len, const char *call,
                       const char *dir)
{
    size_t k = 0, dl = strlen(dir);
    for (const char *c = call; *c != '\0'; ) {
        ck_assert(k + dl + 2 < len);
        if (strncmp(c, "DIR/", 4) == 0) {
            memcpy(out + k, dir, dl);
            k += dl;
            out[k++] = '/';
            c += 4;
        } else
            out[k++] = *c++;
    }
    out[k] = '\0';
}
START_TEST(test_cli_rejects_bad_calls)
{
    char dir[] = "/tmp/rope-cli-XXXXXX", call[1024], path[128], want[256];
    ck_assert(mkdtemp(dir) != NULL);
    write_apply_files(dir);
    expand_dir(call, sizeof call, cli_bad_calls[_i][0], dir);
    expand_dir(want, sizeof want, cli_bad_calls[_i][1], dir);
    cli_result r = cli_run(call);
    ck_assert_msg(r.status == 2, "'%s': status %d", call, r.status);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(cli_line_count(r.err) == 1
                  && strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, want) != NULL,
                  "'%s' gave: %s", call, r.err);
    for (size_t j = 0; j < N_APPLY_FILES; j++) {
        tmp_path(path, sizeof path, dir, apply_files[j]);
        if (j >= N_APPLY_FILES - 2)
            ck_assert_msg(access(path, F_OK) != 0, "%s written", path);
        remove(path);
    }
    rmdir(dir);
    cli_result_free(&r);
}
END_TEST
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    ck_assert(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL; )
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

START_TEST(test_cli_failed_run_leaves_outputs_unchanged)
{
    enum { NQ = 128 * 4 * 64, NK = 128 * 64 };
    static float q[NQ], k[NK];
    const long qshape[4] = {1, 128, 4, 64}, kshape[4] = {1, 128, 1, 64};
    static const char *const before[2] = {"", "ulimit -f 128;"};
    char dir[] = "/tmp/rope-keep-XXXXXX", p[4][96], args[1024], got[64];
    const char *name[4] = {"q.npy", "k.npy", "oq.npy", "ok.npy"};
    const char old[] = "the old contents\n";
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 4; j++)
        tmp_path(p[j], sizeof p[j], dir, name[j]);
    randfill(q, NQ, 81); randfill(k, NK, 82);
    write_npy(p[0], q, 4, qshape); write_npy(p[1], k, 4, kshape);
    FILE *f = fopen(p[2], "w");
    ck_assert(f != NULL && fputs(old, f) >= 0 && fclose(f) == 0);
    snprintf(args, sizeof args, "apply --q %s --k %s --out-q %s "
             "--out-k %s", p[0], p[1], p[2], _i ? p[3] : "/dev/full");
    cli_result r = cli_run_in(before[_i], args, NULL);
    ck_assert_msg(r.status == 2, "'%s': status %d", args, r.status);
    ck_assert_msg(cli_line_count(r.err) == 1
                  && strncmp(r.err, "rope: error: ", 13) == 0, "%s", r.err);
    cli_result_free(&r);
    f = fopen(p[2], "r");
    ck_assert(f != NULL);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    ck_assert_uint_eq(n, strlen(old));
    ck_assert(memcmp(got, old, n) == 0);
    ck_assert_int_eq(count_entries(dir), 3);
    for (int j = 0; j < 3; j++)
        remove(p[j]);
    rmdir(dir);
}
END_TEST
static void assert_holds(const char *path, const char *text)
{
    char got[64];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s is gone", path);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    ck_assert_msg(n == strlen(text) && memcmp(got, text, n) == 0,
                  "%s changed", path);
}

START_TEST(test_cli_failed_second_rename_restores_the_first)
{
    static const long sq[4] = {1, 3, 2, 8}, sk[4] = {1, 3, 1, 8};
    char dir[] = "/tmp/rope-pair-XXXXXX", p[4][128], args[1024], sh[512];
    const char *name[4] = {"q.npy", "k.npy", "oq.npy", "ad/ok.npy"};
    const char old[] = "the old contents\n";
    float x[48];
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 4; j++)
        tmp_path(p[j], sizeof p[j], dir, name[j]);
    randfill(x, 48, 91);
    write_npy(p[0], x, 4, sq); write_npy(p[1], x, 4, sk);
    snprintf(sh, sizeof sh, "mkdir %s/ad && printf 'the old contents\\n'"
             " | tee %s %s > /dev/null && chattr +a %s/ad 2> /dev/null",
             dir, p[2], p[3], dir);
    if (system(sh) != 0) {
        fprintf(stderr, "note: chattr +a failed; the restore of a pair "
                "is not tested here\n");
    } else {
        snprintf(args, sizeof args, "apply --q %s --k %s --out-q %s "
                 "--out-k %s", p[0], p[1], p[2], p[3]);
        cli_result r = cli_run(args);
        snprintf(sh, sizeof sh, "chattr -a %s/ad", dir);
        ck_assert(system(sh) == 0);
        ck_assert_msg(r.status == 2 && cli_line_count(r.err) == 1
                      && strncmp(r.err, "rope: error: --out-k ", 21) == 0
                      && strstr(r.err, "backup") == NULL,
                      "status %d: %s", r.status, r.err);
        cli_result_free(&r);
        assert_holds(p[2], old);
        assert_holds(p[3], old);
        ck_assert_int_eq(count_entries(dir), 4); /* q k oq ad */
    }
    snprintf(sh, sizeof sh, "chattr -a %s/ad 2> /dev/null; rm -rf %s",
             dir, dir);
    ck_assert(system(sh) == 0);
}
END_TEST
static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_msg(stat(path, &st) == 0, "%s is gone", path);
    return st.st_mode & 07777;
}

START_TEST(test_cli_output_keeps_its_mode_and_its_link)
{
    static const long sq[4] = {1, 3, 2, 8}, sk[4] = {1, 3, 1, 8};
    char dir[] = "/tmp/rope-mode-XXXXXX", p[6][128], args[1024], got[64];
    const char *name[6] = {"q.npy", "k.npy", "oq.npy", "real/ok.npy",
                           "lk.npy", "dangling.npy"};
    float x[48];
    rope_npy a;
    struct stat st;
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 6; j++)
        tmp_path(p[j], sizeof p[j], dir, name[j]);
    randfill(x, 48, 93);
    write_npy(p[0], x, 4, sq); write_npy(p[1], x, 4, sk);
    snprintf(args, sizeof args, "mkdir %s/real && echo old > %s && echo old"
             " > %s && chmod 600 %s && chmod 440 %s && ln -s real/ok.npy %s"
             " && ln -s real/none.npy %s", dir, p[2], p[3], p[2], p[3],
             p[4], p[5]);
    ck_assert(system(args) == 0);
    snprintf(args, sizeof args, "apply --q %s --k %s --out-q %s --out-k %s",
             p[0], p[1], p[2], p[4]);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 0, "%s", r.err);
    cli_result_free(&r);
    ck_assert_msg(mode_of(p[2]) == 0600, "--out-q: mode %o", mode_of(p[2]));
    ck_assert_msg(lstat(p[4], &st) == 0 && S_ISLNK(st.st_mode),
                  "--out-k is no longer a symbolic link");
    ck_assert(readlink(p[4], got, sizeof got) == 11
              && memcmp(got, "real/ok.npy", 11) == 0);
    ck_assert_msg(mode_of(p[3]) == 0440, "link target: mode %o",
                  mode_of(p[3]));
    ck_assert_msg(rope_npy_read(p[3], &a, got, sizeof got) == 0
                  && a.count == 24, "the link's target was not written");
    rope_npy_free(&a);
    snprintf(args, sizeof args, "apply --q %s --k %s --out-q %s --out-k %s",
             p[0], p[1], p[2], p[5]);
    r = cli_run(args);
    ck_assert_msg(r.status == 2 && cli_line_count(r.err) == 1
                  && strstr(r.err, "symbolic link"), "%s", r.err);
    cli_result_free(&r);
    ck_assert(lstat(p[5], &st) == 0 && S_ISLNK(st.st_mode));
    snprintf(got, sizeof got, "%s/real", dir);
    ck_assert_int_eq(count_entries(dir), 6); /* q k oq real lk dangling */
    ck_assert_int_eq(count_entries(got), 1); /* ok */
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert(system(args) == 0);
}
END_TEST
static const char *const cli_print_calls[] = {
    "demo integer", "pe --d-model 8 --positions 0,1",
    "freqs --head-dim 8 --end 3", "--help", "apply --help",
    "attention -h"};
#define N_CLI_PRINT_CALLS \
    (sizeof cli_print_calls / sizeof cli_print_calls[0])

START_TEST(test_cli_lost_stdout_is_an_error)
{
    static const char *const to[2] = {"/dev/full", "&-"};
    for (int j = 0; j < 2; j++) {
        cli_result r = cli_run_in("", cli_print_calls[_i], to[j]);
        ck_assert_msg(r.status == 2, "'%s' >%s: status %d",
                      cli_print_calls[_i], to[j], r.status);
        ck_assert_msg(cli_line_count(r.err) == 1
                      && strstr(r.err, "rope: error: cannot write the "
                                "standard output") == r.err, "%s", r.err);
        cli_result_free(&r);
    }
}
END_TEST

static const char *const cli_help_calls[] = {
    "apply --help", "freqs --help", "attention --help", "apply -h",
    "freqs -h", "attention -h", "demo --help", "pe -h",
    "demo nosuch --help", "pe --d-model 7 --positions 0 --help",
    "freqs --head-dim 8 --end 3 --print tan -h",
    "apply --q /nonexistent.npy --help --k x",
    "attention --threads 999 --causal --help"};
#define N_CLI_HELP_CALLS (sizeof cli_help_calls / sizeof cli_help_calls[0])

START_TEST(test_cli_command_help_succeeds)
{
    char want[64];
    const char *args = cli_help_calls[_i];
    snprintf(want, sizeof want, "usage: rope %.*s ",
             (int)strcspn(args, " "), args);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 0, "'%s': status %d", args, r.status);
    ck_assert_str_eq(r.err, "");
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    cli_result_free(&r);
}
END_TEST

/* W3.6 The tests */
Suite *rotary_suite(void)
{
    Suite *s = suite_create("chapter 3: rotary embeddings");
    TCase *tc = tcase_create("rotary");
    tcase_set_timeout(tc, 60);
    /* W3.6.1 Against MiniMind and Hugging Face */
    tcase_add_test(tc, test_inv_freq_and_angles_match_minimind);
    tcase_add_test(tc, test_cos_sin_within_one_ulp_of_minimind);
    tcase_add_test(tc, test_rotate_half_matches_minimind);
    tcase_add_test(tc, test_apply_with_minimind_tables_is_bitwise);
    tcase_add_test(tc, test_apply_with_own_tables_within_tolerance);
    tcase_add_test(tc, test_cos_sin_match_hugging_face);
    tcase_add_test(tc, test_apply_matches_hugging_face);
    /* W3.6.2 The algebra */
    tcase_add_test(tc, test_pair_encoding_is_the_complex_product);
    /* W3.6.3 The interface, at long range and with bad arguments */
    tcase_add_loop_test(tc, test_shift_invariance_double_path, 0, 40);
    tcase_add_loop_test(tc, test_shift_invariance_float_path, 0, 40);
    tcase_add_test(tc, test_unit_pair_gives_cosine_of_distance);
    tcase_add_test(tc, test_sine_term_tells_before_from_after);
    tcase_add_test(tc, test_transpose_product_is_relative_rotation);
    tcase_add_test(tc, test_rotation_keeps_the_norm);
    tcase_add_test(tc, test_rotate_half_form_is_the_pairwise_rotation);
    tcase_add_test(tc, test_pairings_differ_by_the_permutation);
    tcase_add_test(tc, test_permuted_weights_give_the_same_scores);
    tcase_add_test(tc, test_rotating_the_hidden_state_breaks_relativity);
    tcase_add_test(tc, test_start_pos_and_heads_use_the_right_rows);
    tcase_add_test(tc, test_attention_factor_scales_every_entry);
    tcase_add_test(tc, test_rotation_far_from_the_start);
    tcase_add_test(tc, test_bad_arguments_are_refused);
    /* W3.6.4 Long-term decay */
    tcase_add_test(tc, test_decay_matches_the_roformer_values);
    tcase_add_test(tc, test_decay_at_distance_zero);
    tcase_add_test(tc, test_summation_by_parts_and_the_bound);
    /* W3.6.5 The command line */
    tcase_add_loop_test(tc, test_cli_failed_run_leaves_outputs_unchanged,
                        0, 2);
    tcase_add_test(tc, test_cli_failed_second_rename_restores_the_first);
    tcase_add_test(tc, test_cli_output_keeps_its_mode_and_its_link);
    tcase_add_loop_test(tc, test_cli_lost_stdout_is_an_error, 0,
                        (int)N_CLI_PRINT_CALLS);
    tcase_add_loop_test(tc, test_cli_command_help_succeeds, 0,
                        (int)N_CLI_HELP_CALLS);
    tcase_add_test(tc, test_cli_freqs_matches_minimind);
    tcase_add_test(tc, test_cli_freqs_positions_pairing_and_precision);
    tcase_add_loop_test(tc, test_cli_apply_equals_the_library, 0, 4);
    tcase_add_test(tc, test_cli_apply_on_minimind_inputs);
    tcase_add_loop_test(tc, test_cli_rejects_bad_calls, 0,
                        (int)N_CLI_BAD_CALLS);
    /* W3.6 The tests */
    suite_add_tcase(s, tc);
    return s;
}
