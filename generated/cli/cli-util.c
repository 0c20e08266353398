/* The frame of the workshop / The command-line program */
/* cli-util.c: argument parsing shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"

int cli_parse_only = 0;
int cli_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("rope: error: ", stderr);
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
        if (*c == '\n')
            fputs("\\n", stderr);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    fputc('\n', stderr);
    return 2;
}
int cli_need_value(int argc, char **argv, int i)
{
    if (i + 1 >= argc)
        return cli_error("%s needs a value", argv[i]);
    return 0;
}
int cli_parse_int(const char *flag, const char *s, long lo, long hi,
                  long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno == ERANGE)
        return cli_error("%s: '%s' is not an integer", flag, s);
    if (v < lo || v > hi)
        return cli_error("%s: %ld is outside [%ld, %ld]", flag, v, lo, hi);
    *out = v;
    return 0;
}

int cli_parse_double(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !isfinite(v))
        return cli_error("%s: '%s' is not a finite number", flag, s);
    *out = v;
    return 0;
}
static size_t count_items(const char *s)
{
    size_t n = 1;
    for (; *s; s++) n += (*s == ',');
    return n;
}

#define PARSE_LIST(T, PARSE_ITEM) \
    size_t cap = count_items(s), k = 0; \
    T *v = malloc(cap * sizeof *v); \
    char *copy = malloc(strlen(s) + 1); \
    if (v == NULL || copy == NULL) { \
        free(v); free(copy); \
        return cli_error("%s: out of memory", flag); \
    } \
    strcpy(copy, s); \
    char *item = copy; \
    for (;;) { \
        char *comma = strchr(item, ','); \
        if (comma) *comma = '\0'; \
        int rc = PARSE_ITEM; \
        if (rc != 0) { free(v); free(copy); return rc; } \
        if (!comma) break; \
        item = comma + 1; \
    } \
    free(copy); \
    *out = v; *n = k; \
    return 0

int cli_parse_int_list(const char *flag, const char *s, long lo,
                       long hi, long **out, size_t *n)
{
    PARSE_LIST(long, cli_parse_int(flag, item, lo, hi, &v[k++]));
}

int cli_parse_double_list(const char *flag, const char *s,
                          double **out, size_t *n)
{
    PARSE_LIST(double, cli_parse_double(flag, item, &v[k++]));
}
double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
