/* exercise-main.c: checks a learner's answers to one chapter's
   exercises. Built with -DEXERCISE_SUITE=exercises_NAME_suite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

int main(void)
{
    SRunner *sr = srunner_create(EXERCISE_SUITE());
    srunner_run_all(sr, CK_SILENT);
    int n = srunner_ntests_run(sr), nfailed = 0;
    TestResult **r = srunner_results(sr);
    const char *seen[64];
    int nseen = 0;
    for (int i = 0; i < n; i++) {
        const char *tc = tr_tcname(r[i]);
        int known = 0;
        for (int j = 0; j < nseen; j++) known |= strcmp(seen[j], tc) == 0;
        if (!known && nseen < 64) seen[nseen++] = tc;
    }
    for (int j = 0; j < nseen; j++) {
        int ok = 1;
        for (int i = 0; i < n; i++)
            if (strcmp(tr_tcname(r[i]), seen[j]) == 0
                && tr_rtype(r[i]) != CK_PASS) {
                if (ok) printf("%-14s FAILED: %s\n", seen[j], tr_msg(r[i]));
                ok = 0;
            }
        if (ok) printf("%-14s passed\n", seen[j]);
        else nfailed++;
    }
    printf("%s: %d of %d exercises pass\n", EXERCISE_NAME,
           nseen - nfailed, nseen);
    free(r);
    srunner_free(sr);
    return (n > 0 && nfailed == 0) ? EXIT_SUCCESS : EXIT_FAILURE;
}
