/* The frame of the workshop / Numbers for the prose */
/* bookdata-util.c: opening, writing and closing the book's data. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

FILE *bd_open(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    return f;
}

FILE *bd_numbers_open(const char *dir, const char *chapter)
{
    char name[256];
    snprintf(name, sizeof name, "%s-numbers.tex", chapter);
    FILE *f = bd_open(dir, name);
    fprintf(f, "%% written by the book-data writer of %s\n", chapter);
    return f;
}

void bd_def(FILE *f, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "\\ropedef{%s}{", key);
    vfprintf(f, fmt, ap);
    fputs("}\n", f);
    va_end(ap);
}

void bd_close(FILE *f)
{
    if (ferror(f) || fclose(f) != 0) {
        fprintf(stderr, "bookdata: write error\n");
        exit(1);
    }
}

const char *bd_sci(char *buf, size_t size, double v, int digits)
{
    if (!isfinite(v) || digits < 1 || digits > 17) {
        fprintf(stderr, "bookdata: cannot print %g with %d digits\n", v,
                digits);
        exit(1);
    }
    int e = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    double m = v / pow(10.0, e);
    if (fabs(m) >= 10.0 - 0.5 * pow(10.0, 1 - digits)) {
        m /= 10.0;
        e++;
    }
    if (e == 0)
        snprintf(buf, size, "\\ensuremath{%.*f}", digits - 1, m);
    else
        snprintf(buf, size, "\\ensuremath{%.*f\\times 10^{%d}}",
                 digits - 1, m, e);
    return buf;
}

void bd_def_sci(FILE *f, const char *key, double v, int digits)
{
    char buf[96];
    bd_def(f, key, "%s", bd_sci(buf, sizeof buf, v, digits));
}
