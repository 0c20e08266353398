/* bookdata-util.c: opening, writing and closing the book's data. */
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
