/* The frame of the workshop / The test runner */
/* test-util.c: readers of golden files, float comparisons, and a
   runner of the command-line program. */
#include <dirent.h> /* count_threads (chapter W5's tests) */
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>
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
static long cli_args_threads(const char *args)
{
    static char prog[] = "rope";
    char *words = strdup(args), *argv[256];
    int n = 0;
    ck_assert(words != NULL);
    argv[n++] = prog;
    for (char *w = strtok(words, " \t\n"); w != NULL && n < 255;
         w = strtok(NULL, " \t\n"))
        argv[n++] = w;
    argv[n] = NULL;
    long threads = cli_threads_asked(argv);
    free(words);
    return threads;
}

static char *slurp_and_remove(char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot reopen %s", path);
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    int c;
    while (buf != NULL && (c = fgetc(f)) != EOF) {
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
        if (buf != NULL) buf[n++] = (char)c;
    }
    ck_assert(buf != NULL);
    buf[n] = '\0';
    fclose(f);
    remove(path);
    return buf;
}

cli_result cli_run_in(const char *before, const char *args,
                      const char *stdout_to)
{
    const char *prog = getenv("ROPE_CLI");
    char out[] = "/tmp/rope-cli-out-XXXXXX";
    char err[] = "/tmp/rope-cli-err-XXXXXX";
    threads_check(cli_args_threads(args), "the command");
    int fo = mkstemp(out), fe = mkstemp(err);
    ck_assert_msg(prog != NULL, "ROPE_CLI is not set (run make test)");
    ck_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    if (stdout_to == NULL)
        stdout_to = out;
    size_t len = strlen(before) + strlen(prog) + strlen(args)
                 + strlen(stdout_to) + sizeof err + 16;
    char *cmd = malloc(len);
    ck_assert(cmd != NULL);
    snprintf(cmd, len, "%s %s %s >%s 2>%s", before, prog, args, stdout_to,
             err);
    int st = system(cmd);
    free(cmd);
    cli_result r;
    r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
    r.out = slurp_and_remove(out);
    r.err = slurp_and_remove(err);
    return r;
}

cli_result cli_run(const char *args)
{
    return cli_run_in("", args, NULL);
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
}

int cli_line_count(const char *text)
{
    int n = 0;
    for (; *text; text++) n += (*text == '\n');
    return n;
}
static int threads_allowed; /* in a test of a case tagged threads */
static void threads_allow(void) { threads_allowed = 1; }
static void threads_forbid(void) { threads_allowed = 0; }

TCase *threads_tcase_create(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_tags(tc, "threads");
    tcase_add_checked_fixture(tc, threads_allow, threads_forbid);
    return tc;
}

void threads_check(long n, const char *who)
{
    ck_assert_msg(n <= 1 || threads_allowed,
                  "%s runs more than one thread in %s, whose test case "
                  "is not tagged threads: put the test in a test case "
                  "made by threads_tcase_create", who, tcase_name());
}
long cli_threads_asked(char *const *argv)
{
    long n = 1;
    for (int i = 1; argv[i] != NULL; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
        if (!strcmp(argv[i], "--threads") && argv[i + 1] != NULL)
            n = strtol(argv[i + 1], NULL, 10);
    }
    return n;
}
/* End the test with one line: what was called, what differs, the hint. */
void ex_fail(const ex_info *ex, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ck_abort_msg("%s; hint: %s", what, ex->hint);
}
static void ex_trim(char *what)
{
    size_t n = strlen(what);
    while (n > 0 && strchr(" :=", what[n - 1]) != NULL)
        what[--n] = '\0';
}

void ex_check_double(const ex_info *ex, double got, double want,
                     double tol, const char *fmt, ...)
{
    char what[300], g[40], w[40];
    int p = 6;
    va_list ap;
    if (tol == 0 ? got == want : fabs(got - want) < tol)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ex_trim(what);
    do {
        snprintf(g, sizeof g, "%.*g", p, got);
        snprintf(w, sizeof w, "%.*g", p, want);
    } while (strcmp(g, w) == 0 && ++p <= 17);
    double rel = fabs(got - want) / fabs(want);
    if (want != 0 && rel < 1e-3)
        ex_fail(ex, "%s: expected %s, got %s, close (relative difference "
                "%.1e) but not equal: the formula is right and the "
                "arithmetic differs%s%s", what, w, g, rel,
                ex->close != NULL ? ", likely " : "",
                ex->close != NULL ? ex->close : "");
    ex_fail(ex, "%s: expected %s, got %s", what, w, g);
}

void ex_check_long(const ex_info *ex, long got, long want,
                   const char *fmt, ...)
{
    char what[300];
    va_list ap;
    if (got == want)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ex_trim(what);
    ex_fail(ex, "%s: expected %ld, got %ld", what, want, got);
}
/* shared test helpers, chapter by chapter */
/* The frame of the workshop / NumPy files / The tests of the NumPy files */
size_t make_npy(unsigned char *buf, int major, const char *header,
                const float *x, size_t nx)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(header), k = 0;
    size_t total = hl + 1;
    while ((pre + total) % 64 != 0) total++;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major; buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (unsigned char)(total >> (8 * i));
    memcpy(buf + pre, header, hl);
    for (k = pre + hl; k < pre + total - 1; k++) buf[k] = ' ';
    buf[k++] = '\n';
    memcpy(buf + k, x, nx * sizeof *x); /* a little-endian host */
    return k + nx * sizeof *x;
}
/* W3.6 The tests */
void randfill(float *x, size_t n, unsigned seed)
{
    unsigned long long s = 0x9E3779B97F4A7C15ull * (seed + 1u);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 11) / 4503599627370496.0 - 1.0);
    }
}

double dot64(const float *a, const float *b, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += (double)a[i] * (double)b[i];
    return sum;
}
/* W3.6.2 The algebra */
void rotate_to(float *x, int d, double base, long m,
               rope_precision prec, rope_pairing pairing)
{
    float inv[512], c[1024], s[1024], k[1024];
    ck_assert(d <= 1024);
    rope_default_inv_freq(inv, d, base);
    ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, s, inv, d, m,
                         m + 1, 1.0, prec), 0);
    memcpy(k, x, (size_t)d * sizeof *k);
    rope_apply_rotary_pos_emb(x, k, c, s, 1, 1, 1, 1, d, 0, pairing);
}
/* W5.10 Accuracy and the tests */
int count_threads(void) /* the entries of /proc/self/task */
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    ck_assert(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL; )
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
