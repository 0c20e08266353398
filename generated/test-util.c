/* test-util.c: readers of golden files and float comparisons. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

static double *golden_read_any(const char *path, int column,
                               size_t *n_out)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open golden file %s", path);
    size_t n = 0, cap = 256;
    double *v = malloc(cap * sizeof *v);
    char line[65536];
    ck_assert(v != NULL);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        int col = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok != NULL;
             tok = strtok(NULL, " \t\r\n"), col++) {
            if (column >= 0 && col != column) continue;
            if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
            ck_assert(v != NULL);
            v[n++] = strtod(tok, NULL);
        }
    }
    fclose(f);
    *n_out = n;
    return v;
}

double *golden_read(const char *path, size_t *n_out)
{
    return golden_read_any(path, -1, n_out);
}

double *golden_read_column(const char *path, int column, size_t *n_out)
{
    return golden_read_any(path, column, n_out);
}
static long ordered_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x80000000u) ? -(long)(u & 0x7fffffffu) : (long)u;
}

long float_ulp_diff(float a, float b)
{
    long d = ordered_bits(a) - ordered_bits(b);
    return d < 0 ? -d : d;
}
