/* The frame of the workshop / The test runner */
/* test-runner.c: the lines the exercise runner prints, checked. */
#include <stdlib.h>
#include <string.h>
#include "tests.h"

static const ex_info ex_cause = {"exercise 0.1", "a demonstration",
    "the value 1", "reread nothing", "a demonstration cause"};
static const ex_info ex_plain = {"exercise 0.2", "another demonstration",
    "the value 1", "reread nothing", NULL};

START_TEST(inner_far)
{
    ex_check_double(&ex_cause, 2.0, 1.0, 1e-6, "out[%d] =", 1);
}
END_TEST

START_TEST(inner_close)
{
    ex_check_double(&ex_cause, 1.0001, 1.0, 1e-6, "f(x):");
}
END_TEST

START_TEST(inner_close_plain)
{
    ex_check_double(&ex_plain, 1.0001, 1.0, 1e-6, "g(x)");
}
END_TEST

START_TEST(inner_count)
{
    ex_check_long(&ex_plain, 2, 4, "out[%d] =", 1);
}
END_TEST

/* The message of the one test t, run alone; the caller frees it. */
static char *message_of(const TTest *t)
{
    Suite *s = suite_create("inner");
    TCase *tc = tcase_create("inner");
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_SILENT);
    ck_assert_int_eq(srunner_ntests_run(sr), 1);
    TestResult **r = srunner_results(sr);
    ck_assert_int_eq(tr_rtype(r[0]), CK_FAILURE);
    char *msg = strdup(tr_msg(r[0]));
    free(r);
    srunner_free(sr);
    ck_assert(msg != NULL);
    return msg;
}

START_TEST(test_runner_lines_say_what_differs)
{
    const struct { const TTest *t; const char *line; } want[] = {
        {inner_far, "out[1]: expected 1, got 2; hint: reread nothing"},
        {inner_close, "f(x): expected 1, got 1.0001, close (relative "
         "difference 1.0e-04) but not equal: the formula is right and the "
         "arithmetic differs, likely a demonstration cause; hint: reread "
         "nothing"},
        {inner_close_plain, "g(x): expected 1, got 1.0001, close (relative "
         "difference 1.0e-04) but not equal: the formula is right and the "
         "arithmetic differs; hint: reread nothing"},
        {inner_count, "out[1]: expected 4, got 2; hint: reread nothing"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char *msg = message_of(want[i].t);
        ck_assert_msg(strcmp(msg, want[i].line) == 0,
                      "runner line %zu: got \"%s\"", i, msg);
        free(msg);
    }
}
END_TEST

Suite *runner_suite(void)
{
    Suite *s = suite_create("The exercise runner");
    TCase *tc = tcase_create("runner");
    tcase_add_test(tc, test_runner_lines_say_what_differs);
    suite_add_tcase(s, tc);
    return s;
}
