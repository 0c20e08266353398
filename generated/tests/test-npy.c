/* The frame of the workshop / NumPy files / The tests of the NumPy files */
/* test-npy.c: the reader and the writer of .npy files, checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"

static const char *npy_error(const unsigned char *buf, size_t n)
{
    static char err[256];
    rope_npy a;
    if (rope_npy_parse(buf, n, &a, err, sizeof err) == 0) {
        rope_npy_free(&a);
        return NULL;
    }
    ck_assert(a.data == NULL);
    ck_assert(strchr(err, '\n') == NULL); /* one line */
    return err;
}
#define NPY_GOOD "{'descr': '<f4', 'fortran_order': False, " \
             "'shape': (2, 3), }"
static const float npy_six[6] = {1, -2, 3.5f, 1e-30f, -0.0f, 7};

START_TEST(test_npy_reads_versions_1_and_2)
{
    unsigned char buf[512];
    rope_npy a;
    size_t n = make_npy(buf, 1, NPY_GOOD, npy_six, 6);
    ck_assert_int_eq(rope_npy_parse(buf, n, &a, NULL, 0), 0);
    ck_assert_int_eq(a.ndim, 2);
    ck_assert(a.shape[0] == 2 && a.shape[1] == 3 && a.count == 6);
    ck_assert(memcmp(a.data, npy_six, sizeof npy_six) == 0);
    rope_npy_free(&a);
    n = make_npy(buf, 2, "{\"shape\": (6,), \"descr\": \"<f4\", "
                 "\"fortran_order\": False}", npy_six, 6);
    ck_assert_int_eq(rope_npy_parse(buf, n, &a, NULL, 0), 0);
    ck_assert(a.ndim == 1 && a.shape[0] == 6);
    rope_npy_free(&a);
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (), }", npy_six, 1);
    ck_assert_int_eq(rope_npy_parse(buf, n, &a, NULL, 0), 0);
    ck_assert(a.ndim == 0 && a.count == 1 && a.data[0] == 1.0f);
    rope_npy_free(&a);
}
END_TEST
static void expect_npy_error(const unsigned char *buf, size_t n,
                             const char *needle)
{
    const char *err = npy_error(buf, n);
    ck_assert_msg(err != NULL, "accepted a file with %s", needle);
    ck_assert_msg(strstr(err, needle) != NULL, "'%s' lacks '%s'", err,
                  needle);
}

START_TEST(test_npy_refuses_malformed_files)
{
    unsigned char buf[512];
    size_t n = make_npy(buf, 1, NPY_GOOD, npy_six, 6);
    buf[3] = 'X';
    expect_npy_error(buf, n, "bad magic");
    expect_npy_error(buf, 4, "bad magic");
    n = make_npy(buf, 3, NPY_GOOD, npy_six, 6);
    expect_npy_error(buf, n, "version");
    n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, "
                 "'shape': (3,), }", npy_six, 6);
    expect_npy_error(buf, n, "not float32");
    n = make_npy(buf, 1, "{'descr': '>f4', 'fortran_order': False, "
                 "'shape': (2, 3), }", npy_six, 6);
    expect_npy_error(buf, n, "little-endian");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, "
                 "'shape': (2, 3), }", npy_six, 6);
    expect_npy_error(buf, n, "Fortran");
    n = make_npy(buf, 1, NPY_GOOD, npy_six, 5);
    expect_npy_error(buf, n, "truncated data");
    n = make_npy(buf, 1, NPY_GOOD, npy_six, 6);
    expect_npy_error(buf, n + 4, "after the data");
    expect_npy_error(buf, 40, "truncated header");
    n = make_npy(buf, 1, "{'descr': '<f4', 'shape': (2, 3), }",
                 npy_six, 6);
    expect_npy_error(buf, n, "missing");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (2, x), }", npy_six, 6);
    expect_npy_error(buf, n, "shape");
    n = make_npy(buf, 1, "['descr', '<f4']", npy_six, 6);
    expect_npy_error(buf, n, "dictionary");
    n = make_npy(buf, 1, "{'des\ncr': '<f4', 'fortran_order': False, "
                 "'shape': (2, 3), }", npy_six, 6);
    expect_npy_error(buf, n, "dictionary");
}
END_TEST
START_TEST(test_npy_write_then_read_round_trip)
{
    char path[] = "/tmp/rope-test-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    long shape[4] = {1, 2, 3, 1};
    rope_npy a;
    ck_assert_int_eq(rope_npy_write(path, npy_six, 4, shape, err,
                                    sizeof err), 0);
    ck_assert_int_eq(rope_npy_read(path, &a, err, sizeof err), 0);
    ck_assert_int_eq(a.ndim, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(a.shape[i], shape[i]);
    ck_assert(memcmp(a.data, npy_six, sizeof npy_six) == 0);
    rope_npy_free(&a);
    remove(path);
    ck_assert_int_ne(rope_npy_read(path, &a, err, sizeof err), 0);
    ck_assert(strstr(err, path) != NULL);
}
END_TEST
START_TEST(test_npy_reads_what_numpy_reads)
{
    static const char *const good[] = {
        "{'descr':\t'<f4',\t'fortran_order':\tFalse,\t'shape':\t(2,\t3),\t}\t\t",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\r",
        "\t{'descr': '<f4',\r\n'fortran_order': False,\f'shape': (2,3)}",
        "{'descr': '<f4', # numpy writes no comment\n"
        "'fortran_order': False, 'shape': (2, 3)} # but reads one"};
    static const char *const bad[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\v",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 03), }"};
    unsigned char buf[512];
    rope_npy a;
    for (size_t t = 0; t < sizeof good / sizeof *good; t++) {
        size_t n = make_npy(buf, 1, good[t], npy_six, 6);
        ck_assert_msg(rope_npy_parse(buf, n, &a, NULL, 0) == 0,
                      "refused header %zu, which numpy reads", t);
        ck_assert(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
        ck_assert(memcmp(a.data, npy_six, sizeof npy_six) == 0);
        rope_npy_free(&a);
    }
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        size_t n = make_npy(buf, 1, bad[t], npy_six, 6);
        ck_assert_msg(npy_error(buf, n) != NULL,
                      "accepted header %zu, which numpy refuses", t);
    }
    size_t n = make_npy(buf, 1, NPY_GOOD, npy_six, 6);
    buf[n - sizeof npy_six - 2] = '\r'; /* CR, then the final newline */
    ck_assert_ptr_null(npy_error(buf, n));
    buf[10 + strlen(NPY_GOOD)] = '\0'; /* a NUL in the padding */
    ck_assert_ptr_nonnull(npy_error(buf, n));
}
END_TEST

Suite *npy_suite(void)
{
    Suite *s = suite_create("NumPy files");
    TCase *tc = tcase_create("npy");
    tcase_add_test(tc, test_npy_reads_versions_1_and_2);
    tcase_add_test(tc, test_npy_refuses_malformed_files);
    tcase_add_test(tc, test_npy_reads_what_numpy_reads);
    tcase_add_test(tc, test_npy_write_then_read_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
