/* tests.h: what the test files share. */
#ifndef ROPE_TESTS_H
#define ROPE_TESTS_H
#include <check.h>
#include <stddef.h>
#include "rope.h"

double *golden_read(const char *path, size_t *n_out);
double *golden_read_column(const char *path, int column, size_t *n_out);
long float_ulp_diff(float a, float b);
/* suites: chapters 1-5 */
Suite *positions_suite(void);
Suite *exercises_positions_suite(void);
Suite *rotary_suite(void);
Suite *exercises_rotary_suite(void);
Suite *scaling_suite(void);
Suite *exercises_scaling_suite(void);
double scaling_golden_header_value(const char *path, const char *key);
#endif
