/* exercise-main.c: checks a learner's answers to one chapter's
   exercises. Built with -DEXERCISE_SUITE=exercises_NAME_suite
   -DEXERCISE_TABLE=exercises_NAME_table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

/* What the runner says about one exercise. */
typedef struct {
    const char *id;     /* "exercise 1.1": the test case's name */
    const char *title;  /* a few words naming the function */
    const char *expect; /* what a right answer gives */
    const char *hint;   /* the section or equation to reread */
} ex_info;

/* End the test with one line: what was called, what differs, the hint. */
static inline void ex_fail(const ex_info *ex, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ck_abort_msg("%s; hint: %s", what, ex->hint);
}
static inline void ex_check_double(const ex_info *ex, double got,
                                   double want, double tol,
                                   const char *fmt, ...)
{
    char what[300], g[40], w[40];
    int p = 6;
    va_list ap;
    if (tol == 0 ? got == want : fabs(got - want) < tol)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    do {
        snprintf(g, sizeof g, "%.*g", p, got);
        snprintf(w, sizeof w, "%.*g", p, want);
    } while (strcmp(g, w) == 0 && ++p <= 17);
    ex_fail(ex, "%s expected %s, got %s", what, w, g);
}

static inline void ex_check_long(const ex_info *ex, long got, long want,
                                 const char *fmt, ...)
{
    char what[300];
    va_list ap;
    if (got == want)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ex_fail(ex, "%s expected %ld, got %ld", what, want, got);
}
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
