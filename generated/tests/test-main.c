/* The frame of the workshop / The test runner */
/* test-main.c: runs the Check suites of every chapter, or of one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "tests.h"

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg);

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg)
{
    threads_check(2, "the test");
    return __real_pthread_create(th, attr, start, arg);
}

static const struct {
    int chapter;
    Suite *(*make)(void);
} suites[] = {
    /* {chapter, suite}, chapter by chapter */
    {1, runner_suite},
    /* The frame of the workshop / NumPy files / The tests of the NumPy files */
    {3, npy_suite},
    /* W1.2 The tests of chapter 1 */
    {1, positions_suite},
    {1, exercises_positions_suite},
    /* W2.7 The test suite */
    {2, sinusoidal_suite},
    {2, exercises_sinusoidal_suite},
    /* W3.6 The tests */
    {3, rotary_suite},
    {3, exercises_rotary_suite},
    /* W4.4 Checking the library against the references */
    {4, scaling_suite},
    /* W4.6 The exercise code */
    {4, exercises_scaling_suite},
    /* W5.10 Accuracy and the tests */
    {5, attention_suite},
    {5, exercises_attention_suite},
    /* W6.5 The tests */
    {6, ring_suite},
    {6, exercises_ring_suite},
    /* W7.2 The tests */
    {7, evidence_suite},
    {7, exercises_evidence_suite},
    /* W7.8 The King James corpus */
    {7, corpus_suite},
    /* W7.9 A float32 MiniMind block and its backward */
    {7, evidence_f32_suite},
    /* W7.13 The tests of the trainer */
    {7, lm_f32_suite},
    /* W8.5 The tests */
    {8, minimind_suite},
    {8, exercises_minimind_suite},
    /* W8b.6 The tests */
    {8, minimind_reference_suite},
    /* W8c.7 The tests */
    {8, minimind_linear_suite},
    /* The frame of the workshop / The test runner */
    {0, NULL}
};

int main(int argc, char **argv)
{
    int only = 0;
    if (argc > 1 && (only = atoi(argv[1])) <= 0) {
        fprintf(stderr, "usage: test-rope [CHAPTER]\n");
        return 2;
    }
    SRunner *sr = NULL;
    for (int i = 0; suites[i].make != NULL; i++) {
        if (only != 0 && suites[i].chapter != only) continue;
        if (sr == NULL) sr = srunner_create(suites[i].make());
        else srunner_add_suite(sr, suites[i].make());
    }
    if (sr == NULL) {
        fprintf(stderr, "test-rope: no suite for chapter %d\n", only);
        return 1;
    }
    srunner_run_all(sr, CK_NORMAL);
    int ran = srunner_ntests_run(sr);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (ran == 0) {
        fprintf(stderr, "test-rope: no test ran\n");
        return 1;
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
