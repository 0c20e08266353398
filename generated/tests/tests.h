/* The frame of the workshop / The test runner */
/* tests.h: what the test files share. */
#ifndef ROPE_TESTS_H
#define ROPE_TESTS_H
#include <check.h>
#include <stddef.h>
#include "rope.h"
#include "tables.h"

TCase *threads_tcase_create(const char *name);
void threads_check(long n, const char *who);
long cli_threads_asked(char *const *argv);
double *golden_read(const char *path, size_t *n_out);
double *golden_read_column(const char *path, int column, size_t *n_out);
long float_ulp_diff(float a, float b);
typedef struct cli_result {
    int status; /* the exit status, or -1 if the program did not exit */
    char *out; /* what it printed on stdout, NUL-terminated */
    char *err; /* what it printed on stderr */
} cli_result;
cli_result cli_run(const char *args);
cli_result cli_run_in(const char *before, const char *args,
                      const char *stdout_to);
void cli_result_free(cli_result *r);
int cli_line_count(const char *text);
/* What the runner says about one exercise. */
typedef struct {
    const char *id;     /* "exercise 1.1": the test case's name */
    const char *title;  /* a few words naming the function */
    const char *expect; /* what a right answer gives */
    const char *hint;   /* the section or equation to reread */
    const char *close;  /* the likely cause of an answer that is close
                           but not equal, or NULL */
} ex_info;
void ex_fail(const ex_info *ex, const char *fmt, ...);
void ex_check_double(const ex_info *ex, double got, double want,
                     double tol, const char *fmt, ...);
void ex_check_long(const ex_info *ex, long got, long want,
                   const char *fmt, ...);
/* suites, chapter by chapter */
Suite *runner_suite(void);
/* The frame of the workshop / NumPy files / The tests of the NumPy files */
Suite *npy_suite(void);
size_t make_npy(unsigned char *buf, int major, const char *header,
                const float *x, size_t nx);
/* W1.2 The tests of chapter 1 */
Suite *positions_suite(void);
Suite *exercises_positions_suite(void);
/* W2.7 The test suite */
Suite *sinusoidal_suite(void);
Suite *exercises_sinusoidal_suite(void);
/* W3.6 The tests */
Suite *rotary_suite(void);
Suite *exercises_rotary_suite(void);
void randfill(float *x, size_t n, unsigned seed);
double dot64(const float *a, const float *b, int n);
void rotate_to(float *x, int d, double base, long m,
               rope_precision prec, rope_pairing pairing);
/* W4.4 Checking the library against the references */
Suite *scaling_suite(void);
/* W4.6 The exercise code */
Suite *exercises_scaling_suite(void);
double scaling_golden_header_value(const char *path, const char *key);
/* W5.10 Accuracy and the tests */
Suite *attention_suite(void);
Suite *exercises_attention_suite(void);
int count_threads(void);
/* W6.5 The tests */
Suite *ring_suite(void);
Suite *exercises_ring_suite(void);
/* W7.2 The tests */
Suite *evidence_suite(void);
Suite *exercises_evidence_suite(void);
/* W7.8 The King James corpus */
Suite *corpus_suite(void);
/* W7.9 A float32 MiniMind block and its backward */
Suite *evidence_f32_suite(void);
/* W7.13 The tests of the trainer */
Suite *lm_f32_suite(void);
/* W8.5 The tests */
Suite *minimind_suite(void);
Suite *exercises_minimind_suite(void);
/* W8b.6 The tests */
Suite *minimind_reference_suite(void);
/* W8c.7 The tests */
Suite *minimind_linear_suite(void);
/* The frame of the workshop / The test runner */
#endif
