/* The frame of the workshop / The test runner */
/* exercise-main.c: checks a learner's answers to one chapter's
   exercises. Built with -DEXERCISE_SUITE=exercises_NAME_suite
   -DEXERCISE_TABLE=exercises_NAME_table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

extern const ex_info *const EXERCISE_TABLE[];

static void print_exercise_line(const ex_info *ex, TestResult *bad)
{
    const char *msg = bad != NULL ? tr_msg(bad) : "";
    if (bad == NULL)
        printf("%s (%s) passed\n", ex->id, ex->title);
    else if (tr_rtype(bad) == CK_FAILURE && strstr(msg, "; hint: "))
        printf("%s (%s) FAILED: %s\n", ex->id, ex->title, msg);
    else
        printf("%s (%s) FAILED: %s before its checks finished; expected "
               "%s; hint: %s\n", ex->id, ex->title,
               tr_rtype(bad) == CK_ERROR ? msg : "the test stopped",
               ex->expect, ex->hint);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 && argv[1][0] != '\0' ? argv[1] : NULL;
    char name[64];
    SRunner *sr = srunner_create(EXERCISE_SUITE());
    if (only != NULL) {
        int found = 0, k = 0;
        snprintf(name, sizeof name, "exercise %s", only);
        for (; EXERCISE_TABLE[k] != NULL; k++)
            found |= strcmp(EXERCISE_TABLE[k]->id, name) == 0;
        if (!found) {
            fprintf(stderr, "make exercise: no exercise %s in this chapter "
                    "(its exercises are %s to %s)\n", only,
                    EXERCISE_TABLE[0]->id + 9, EXERCISE_TABLE[k - 1]->id + 9);
            srunner_free(sr);
            return 2;
        }
    }
    srunner_run(sr, NULL, only ? name : NULL, CK_SILENT);
    int n = srunner_ntests_run(sr), nfailed = 0, nrun = 0;
    TestResult **r = srunner_results(sr);
    for (int k = 0; EXERCISE_TABLE[k] != NULL; k++) {
        const ex_info *ex = EXERCISE_TABLE[k];
        TestResult *bad = NULL;
        int ran = 0;
        for (int i = 0; i < n; i++)
            if (strcmp(tr_tcname(r[i]), ex->id) == 0) {
                ran = 1;
                if (bad == NULL && tr_rtype(r[i]) != CK_PASS)
                    bad = r[i];
            }
        if (!ran)
            continue;
        nrun++;
        nfailed += bad != NULL;
        print_exercise_line(ex, bad);
    }
    printf("%s: %d of %d exercises pass\n", EXERCISE_NAME,
           nrun - nfailed, nrun);
    free(r);
    srunner_free(sr);
    return (nrun > 0 && nfailed == 0) ? EXIT_SUCCESS : EXIT_FAILURE;
}
