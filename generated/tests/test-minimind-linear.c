/* W8c.7 The tests */
/* test-minimind-linear.c: the tests of workshop W8c */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "tests.h"
static const rope_simd mml_paths[] = {ROPE_SIMD_SCALAR, ROPE_SIMD_AVX2,
                                      ROPE_SIMD_AVX512};
enum { MML_N_PATHS = 3 };
static const int mml_sizes[] = {1, 15, 17, 95, 769};
enum { MML_N_SIZES = 5 };
static float *mml_rand(size_t n, unsigned seed)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    ck_assert(x != NULL);
    randfill(x, n, seed);
    return x;
}
static double mml_gamma(int n, double u)
{
    return n * u / (1 - n * u);
}
static void mml_check_bound(rope_simd s, int rows, int in, int out,
                            unsigned seed)
{
    float *x = mml_rand((size_t)rows * in, seed);
    float *w = mml_rand((size_t)out * in, seed + 1);
    float *y = malloc(sizeof(float) * rows * out);
    ck_assert(y != NULL);
    rope_minimind_linear_simd(y, x, w, rows, in, out, 1, s);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double sum = 0, mag = 0;
            for (int i = 0; i < in; i++) {
                double p = (double)x[(size_t)r * in + i]
                           * w[(size_t)o * in + i];
                sum += p;
                mag += fabs(p);
            }
            double tol = (mml_gamma(in, 0x1p-24) + mml_gamma(in, 0x1p-53))
                         * mag;
            ck_assert_msg(fabs(y[(size_t)r * out + o] - sum) <= tol,
                          "%s, rows %d, in %d, out %d: y[%d][%d] = %.9g, "
                          "sum %.17g, bound %.3g", rope_simd_name(s), rows,
                          in, out, r, o, y[(size_t)r * out + o], sum, tol);
        }
    free(x);
    free(w);
    free(y);
}
START_TEST(test_mml_bound)
{
    for (int p = 0; p < MML_N_PATHS; p++) {
        if (!rope_simd_available(mml_paths[p])) continue;
        for (int rows = 1; rows <= 7; rows++)
            for (int a = 0; a < MML_N_SIZES; a++)
                for (int b = 0; b < MML_N_SIZES - 1; b++)
                    mml_check_bound(mml_paths[p], rows, mml_sizes[a],
                                    mml_sizes[b], 10u * rows + a);
        mml_check_bound(mml_paths[p], 5, 95, 769, 3);
        mml_check_bound(mml_paths[p], 2, 768, 2432, 4);
    }
}
END_TEST
static void mml_check_exact(rope_simd s, int rows, int in, int out,
                            unsigned seed)
{
    float *x = mml_rand((size_t)rows * in, seed);
    float *w = mml_rand((size_t)out * in, seed + 1);
    float *y = malloc(sizeof(float) * rows * out);
    ck_assert(y != NULL);
    for (size_t i = 0; i < (size_t)rows * in; i++) x[i] = floorf(4 * x[i]);
    for (size_t i = 0; i < (size_t)out * in; i++) w[i] = floorf(4 * w[i]);
    rope_minimind_linear_simd(y, x, w, rows, in, out, 1, s);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            long want = 0;
            for (int i = 0; i < in; i++)
                want += (long)x[(size_t)r * in + i]
                        * (long)w[(size_t)o * in + i];
            ck_assert_msg(y[(size_t)r * out + o] == (float)want,
                          "%s, rows %d, in %d, out %d: y[%d][%d] = %.9g, "
                          "not %ld", rope_simd_name(s), rows, in, out, r, o,
                          y[(size_t)r * out + o], want);
        }
    free(x);
    free(w);
    free(y);
}
START_TEST(test_mml_exact_integers)
{
    for (int p = 0; p < MML_N_PATHS; p++) {
        if (!rope_simd_available(mml_paths[p])) continue;
        for (int rows = 1; rows <= 7; rows++)
            for (int a = 0; a < MML_N_SIZES; a++)
                for (int b = 0; b < MML_N_SIZES; b++)
                    mml_check_exact(mml_paths[p], rows, mml_sizes[a],
                                    mml_sizes[b], 7u * rows + 11u * a + b);
    }
}
END_TEST
static void mml_check_rows(rope_simd s, int rows, int in, int out)
{
    float *x = mml_rand((size_t)rows * in, 21);
    float *w = mml_rand((size_t)out * in, 22);
    float *y = malloc(sizeof(float) * rows * out);
    float *y1 = malloc(sizeof(float) * out);
    ck_assert(y != NULL && y1 != NULL);
    rope_minimind_linear_simd(y, x, w, rows, in, out, 1, s);
    for (int r = 0; r < rows; r++) {
        rope_minimind_linear_simd(y1, x + (size_t)r * in, w, 1, in, out, 1,
                                  s);
        ck_assert_msg(!memcmp(y1, y + (size_t)r * out, sizeof(float) * out),
                      "%s: row %d of %d (in %d, out %d) differs from the "
                      "same row alone", rope_simd_name(s), r, rows, in, out);
    }
    free(x);
    free(w);
    free(y);
    free(y1);
}
START_TEST(test_mml_rows_identical)
{
    static const int rows[] = {2, 3, 4, 5, 7, 69};
    for (int p = 0; p < MML_N_PATHS; p++)
        if (rope_simd_available(mml_paths[p]))
            for (int k = 0; k < 6; k++) {
                mml_check_rows(mml_paths[p], rows[k], 769, 95);
                mml_check_rows(mml_paths[p], rows[k], 768, 17);
            }
}
END_TEST
START_TEST(test_mml_reads_only)
{
    int rows = 5, in = 95, out = 769;
    size_t nw = (size_t)out * in, nx = (size_t)rows * in;
    size_t bytes = sizeof(float) * (nw + nx);
    float *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(mem != MAP_FAILED);
    randfill(mem, nw + nx, 5);
    ck_assert_int_eq(mprotect(mem, bytes, PROT_READ), 0);
    float *y = malloc(sizeof(float) * rows * out);
    ck_assert(y != NULL);
    for (int p = 0; p < MML_N_PATHS; p++)
        rope_minimind_linear_simd(y, mem + nw, mem, rows, in, out, 1,
                                  mml_paths[p]);
    ck_assert(isfinite(y[0]));
    free(y);
    munmap(mem, bytes);
}
END_TEST
static void mml_check_threads(rope_simd s, int rows, int in, int out)
{
    static const int threads[] = {2, 3, 0, -1};
    size_t ny = (size_t)rows * out;
    float *x = mml_rand((size_t)rows * in, 31);
    float *w = mml_rand((size_t)out * in, 32);
    float *y1 = malloc(sizeof(float) * ny), *yt = malloc(sizeof(float) * ny);
    ck_assert(y1 != NULL && yt != NULL);
    rope_minimind_linear_simd(y1, x, w, rows, in, out, 1, s);
    for (int k = 0; k < 4; k++) {
        memset(yt, 0xff, sizeof(float) * ny);
        rope_minimind_linear_simd(yt, x, w, rows, in, out, threads[k], s);
        ck_assert_msg(!memcmp(y1, yt, sizeof(float) * ny),
                      "%s: %d threads differ from one (rows %d, in %d, "
                      "out %d)", rope_simd_name(s), threads[k], rows, in,
                      out);
    }
    free(x);
    free(w);
    free(y1);
    free(yt);
}
START_TEST(test_mml_threads_identical)
{
    for (int p = 0; p < MML_N_PATHS; p++)
        if (rope_simd_available(mml_paths[p])) {
            mml_check_threads(mml_paths[p], 7, 95, 769);
            mml_check_threads(mml_paths[p], 1, 769, 95);
            mml_check_threads(mml_paths[p], 1, 17, 1);
            mml_check_threads(mml_paths[p], 69, 768, 2432);
        }
}
END_TEST
START_TEST(test_mml_pool_threads)
{
    float *x = mml_rand(768, 41), *w = mml_rand(768 * 384, 42);
    float y[3 * 384];
    rope_minimind_linear(y, x, w, 1, 768, 384, 4);
    int first = count_threads();
    ck_assert_int_ge(first, 4);
    for (int i = 0; i < 40; i++) {
        rope_minimind_linear(y, x, w, 1 + i % 3, 256, 384, 1 + i % 4);
        ck_assert_int_eq(count_threads(), first);
    }
    free(x);
    free(w);
}
END_TEST
typedef struct {
    const float *x, *w;
    float *y;
} mml_caller;
static void *mml_call_repeatedly(void *arg)
{
    mml_caller *c = arg;
    for (int k = 0; k < 50; k++)
        rope_minimind_linear(c->y + (size_t)k % 2 * 5 * 384, c->x, c->w, 5,
                             768, 384, 2);
    return NULL;
}
START_TEST(test_mml_two_callers)
{
    float *x = mml_rand(5 * 768, 43), *w = mml_rand(768 * 384, 44);
    float *want = malloc(sizeof(float) * 5 * 384);
    mml_caller c[2];
    pthread_t t[2];
    ck_assert(want != NULL);
    rope_minimind_linear(want, x, w, 5, 768, 384, 1);
    for (int k = 0; k < 2; k++) {
        c[k] = (mml_caller){x, w, calloc(2 * 5 * 384, sizeof(float))};
        ck_assert(c[k].y != NULL);
        ck_assert_int_eq(pthread_create(&t[k], NULL, mml_call_repeatedly,
                                        &c[k]), 0);
    }
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
        for (int h = 0; h < 2; h++)
            ck_assert_msg(!memcmp(c[k].y + (size_t)h * 5 * 384, want,
                                  sizeof(float) * 5 * 384),
                          "caller %d: not the bits of one thread", k);
        free(c[k].y);
    }
    free(x);
    free(w);
    free(want);
}
END_TEST
Suite *minimind_linear_suite(void)
{
    Suite *s = suite_create("chapter 8: linear layers");
    TCase *tc = tcase_create("linear");
    TCase *th = threads_tcase_create("linear, threads");
    tcase_set_timeout(tc, 300);
    tcase_set_timeout(th, 300);
    tcase_add_test(tc, test_mml_bound);
    tcase_add_test(tc, test_mml_exact_integers);
    tcase_add_test(tc, test_mml_rows_identical);
    tcase_add_test(tc, test_mml_reads_only);
    tcase_add_test(th, test_mml_threads_identical);
    tcase_add_test(th, test_mml_pool_threads);
    tcase_add_test(th, test_mml_two_callers);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, th);
    return s;
}
