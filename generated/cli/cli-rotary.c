/* W3.4 The command-line tools */
/* cli-rotary.c: the commands rope freqs and rope apply (chapter 3),
   and the RoPE options shared with chapters 4 and 5. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <sys/stat.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

void cli_rope_defaults(cli_rope_options *o)
{
    memset(o, 0, sizeof *o);
    o->head_dim = 0;
    o->theta = 1e6;
    o->pairing = ROPE_PAIRING_HALF;
    o->precision = ROPE_PRECISION_FLOAT;
}
int cli_rope_parse_option(cli_rope_options *o, int argc, char **argv,
                          int *i)
{
    const char *flag = argv[*i];
    long v;
    int rc;
    if (strcmp(flag, "--head-dim") == 0) {
        if ((rc = cli_need_value(argc, argv, *i)) != 0
            || (rc = cli_parse_int(flag, argv[++*i], 2, 4096, &v)) != 0)
            return rc;
        o->head_dim = (int)v;
        return 1;
    }
    if (strcmp(flag, "--theta") == 0) {
        if ((rc = cli_need_value(argc, argv, *i)) != 0)
            return rc;
        if ((rc = cli_parse_double(flag, argv[++*i], &o->theta)) != 0)
            return rc;
        return 1;
    }
    if (strcmp(flag, "--pairing") == 0
        || strcmp(flag, "--precision") == 0) {
        if ((rc = cli_need_value(argc, argv, *i)) != 0)
            return rc;
        const char *value = argv[++*i];
        int pairing = strcmp(flag, "--pairing") == 0;
        const char *first = pairing ? "half" : "float";
        const char *second = pairing ? "interleaved" : "double";
        if (strcmp(value, first) != 0 && strcmp(value, second) != 0)
            return cli_error("%s: '%s' is neither %s nor %s", flag, value,
                             first, second);
        int is_first = strcmp(value, first) == 0;
        if (pairing)
            o->pairing = is_first ? ROPE_PAIRING_HALF
                                  : ROPE_PAIRING_INTERLEAVED;
        else
            o->precision = is_first ? ROPE_PRECISION_FLOAT
                                    : ROPE_PRECISION_DOUBLE;
        return 1;
    }
    /* chapter 4 parses its scaling flags here */
    /* W4.3 The command line */
    if ((rc = cli_scaling_parse_option(o, argc, argv, i)) != 0)
        return rc;
    /* W3.4 The command-line tools */
    return 0;
}
int cli_rope_validate(const cli_rope_options *o)
{
    if (o->head_dim % 2 != 0)
        return cli_error("--head-dim must be even, got %d",
                         o->head_dim);
    if (!(o->theta > 1.0))
        return cli_error("--theta must be > 1, got %g", o->theta);
    if (o->theta > FLT_MAX)
        return cli_error("--theta must be a float (at most %g), got %g",
                         (double)FLT_MAX, o->theta);
    /* chapter 4 validates its scaling options here */
    /* W4.3 The command line */
    {
        int rc4 = cli_scaling_validate(o);
        if (rc4 != 0)
            return rc4;
    }
    /* W3.4 The command-line tools */
    return 0;
}
static long first_not_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return (long)i;
    return -1;
}
int cli_rope_inv_freq(const cli_rope_options *o, float *inv_freq,
                      double *attention_factor_out)
{
    double attention_factor = 1.0;
    rope_default_inv_freq(inv_freq, o->head_dim, o->theta);
/* chapter 4 computes scaled frequencies and their factor here */
/* W4.3 The command line */
{
    int rc4 = cli_scaling_inv_freq(o, inv_freq, &attention_factor);
    if (rc4 != 0)
        return rc4;
}
    /* W3.4 The command-line tools */
    long bad = first_not_finite(inv_freq, (size_t)(o->head_dim / 2));
    if (bad >= 0)
        return cli_error("inv_freq[%ld] is %g: the scaling options make "
                         "a frequency pass the float range", bad,
                         (double)inv_freq[bad]);
    *attention_factor_out = attention_factor;
    return 0;
}
int cli_rope_table(const cli_rope_options *o, long start, long end,
                   float **freqs_cos, float **freqs_sin)
{
    size_t n = (size_t)(end - start) * (size_t)o->head_dim;
    size_t bytes = (n > 0 ? n : 1) * sizeof(float);
    float *inv_freq = malloc((size_t)(o->head_dim / 2) * sizeof(float));
    double attention_factor = 1.0;
    int rc = inv_freq == NULL ? cli_error("out of memory")
           : cli_rope_inv_freq(o, inv_freq, &attention_factor);
    *freqs_cos = rc ? NULL : malloc(bytes);
    *freqs_sin = rc ? NULL : malloc(bytes);
    if (rc == 0 && (*freqs_cos == NULL || *freqs_sin == NULL))
        rc = cli_error("out of memory: needs %zu MiB for %ld table rows",
                       (2 * bytes + ((size_t)1 << 20) - 1) >> 20,
                       end - start);
    if (rc == 0 && rope_freqs_cis_from_inv_freq(*freqs_cos, *freqs_sin,
            inv_freq, o->head_dim, start, end, attention_factor,
            o->precision) != 0)
        rc = cli_error("cannot compute table rows %ld to %ld", start,
                       end - 1);
    long bad = rc ? -1 : first_not_finite(*freqs_cos, n);
    if (bad < 0 && rc == 0)
        bad = first_not_finite(*freqs_sin, n);
    if (bad >= 0)
        rc = cli_error("the cos/sin table is not finite at position %ld: "
                       "the position times inv_freq[%ld] = %g passes the "
                       "float range", start + bad / o->head_dim,
                       (bad % o->head_dim) % (o->head_dim / 2),
                       (double)inv_freq[(bad % o->head_dim)
                                        % (o->head_dim / 2)]);
    free(inv_freq);
    if (rc != 0) {
        free(*freqs_cos); free(*freqs_sin);
        *freqs_cos = *freqs_sin = NULL;
    }
    return rc;
}
static int per_position(const char *what)
{
    return strcmp(what, "angles") == 0 || strcmp(what, "cos") == 0
           || strcmp(what, "sin") == 0;
}
static void print_freqs_row(const float *x, int n, int repeat)
{
    for (int j = 0; j < n * repeat; j++)
        printf("%s%.9e", j ? " " : "", (double)x[j / repeat]);
    putchar('\n');
}
static int print_freqs(const cli_rope_options *o, const char *what,
                       const long *pos, size_t n_pos)
{
    int half = o->head_dim / 2, done = 0, rc;
    float inv_freq[2048], *c, *s;
    double attention_factor = 1.0;
    if ((rc = cli_rope_inv_freq(o, inv_freq, &attention_factor)) != 0)
        return rc;
    long max_pos = 0;
    float max_freq = 0;
    for (size_t p = 0; p < n_pos; p++)
        max_pos = pos[p] > max_pos ? pos[p] : max_pos;
    for (int i = 0; i < half; i++)
        max_freq = inv_freq[i] > max_freq ? inv_freq[i] : max_freq;
    if (!isfinite(rope_angle(max_pos, max_freq, o->precision)))
        return cli_error("freqs: position %ld times inv_freq %g passes the "
                         "float range", max_pos, (double)max_freq);
    if (strcmp(what, "inv_freq") == 0)
        print_freqs_row(inv_freq, half, 1), done = 1;
    for (size_t p = 0; strcmp(what, "angles") == 0 && p < n_pos; p++) {
        for (int i = 0; i < half; i++) /* a float angle is exact */
            printf("%s%.9e", i ? " " : "",
                   rope_angle(pos[p], inv_freq[i], o->precision));
        putchar('\n');
        done = 1;
    }
    int is_cos = strcmp(what, "cos") == 0;
    for (size_t p = 0; (is_cos || strcmp(what, "sin") == 0) && p < n_pos;
         p++) {
        if ((rc = cli_rope_table(o, pos[p], pos[p] + 1, &c, &s)) != 0)
            return rc;
        if (o->pairing == ROPE_PAIRING_HALF)
            print_freqs_row(is_cos ? c : s, o->head_dim, 1);
        else
            print_freqs_row(is_cos ? c : s, half, 2);
        free(c); free(s);
        done = 1;
    }
    /* chapter 4 prints its quantities (such as attention_factor) here */
    /* W4.3 The command line */
    if (!done) {
        int rc4 = cli_scaling_print(o, what, inv_freq, attention_factor,
                                    &done);
        if (rc4 != 0)
            return rc4;
    }
    /* W3.4 The command-line tools */
    if (!done)
        return cli_error("freqs: --print '%s' is not one of inv_freq, "
                         "angles, cos, sin, attention_factor, ramp",
                         what);
    return 0;
}
int cmd_freqs(int argc, char **argv)
{
    cli_rope_options o;
    long end = -1, *pos = NULL;
    size_t n_pos = 0;
    const char *what = "cos";
    int rc = 0;
    cli_rope_defaults(&o);
    for (int i = 1; i < argc && rc == 0; i++) {
        int r = cli_rope_parse_option(&o, argc, argv, &i);
        if (r != 0) {
            rc = r == 1 ? 0 : r;
            continue;
        }
        const char *flag = argv[i];
        int is_end = strcmp(flag, "--end") == 0;
        int is_positions = strcmp(flag, "--positions") == 0;
        if (!is_end && !is_positions && strcmp(flag, "--print") != 0)
            rc = cli_error("freqs: unexpected argument '%s'", flag);
        else if ((rc = cli_need_value(argc, argv, i)) != 0)
            break;
        else if (is_end)
            rc = cli_parse_int(flag, argv[++i], 1, ROPE_MAX_POSITION, &end);
        else if (is_positions) {
            free(pos);
            pos = NULL;
            rc = cli_parse_int_list(flag, argv[++i], 0,
                                    ROPE_MAX_POSITION - 1, &pos, &n_pos);
        } else
            what = argv[++i];
    }
    if (rc == 0 && o.head_dim == 0)
        rc = cli_error("freqs: --head-dim is required");
    if (rc == 0)
        rc = cli_rope_validate(&o);
    if (rc == 0 && end >= 0 && pos != NULL)
        rc = cli_error("freqs: give --end or --positions, not both");
    if (rc == 0 && end < 0 && pos == NULL && per_position(what))
        rc = cli_error("freqs: --print %s needs --end or --positions",
                       what);
    if (rc == 0 && cli_parse_only) {
        float inv_freq[2048];
        double attention_factor;
        free(pos);
        return cli_rope_inv_freq(&o, inv_freq, &attention_factor);
    }
    if (rc == 0 && end > 0) {
        pos = malloc((size_t)end * sizeof *pos);
        if (pos == NULL)
            rc = cli_error("freqs: out of memory");
        for (long t = 0; pos != NULL && t < end; t++)
            pos[t] = t;
        n_pos = (size_t)end;
    }
    if (rc == 0)
        rc = print_freqs(&o, what, pos, n_pos);
    free(pos);
    return rc;
}
static const char *shape_text(const rope_npy *a, int which)
{
    static char buf[2][160];
    int k = snprintf(buf[which], sizeof buf[which], "(");
    for (int j = 0; j < a->ndim; j++)
        k += snprintf(buf[which] + k, sizeof buf[which] - (size_t)k,
                      "%s%ld", j ? ", " : "", a->shape[j]);
    snprintf(buf[which] + k, sizeof buf[which] - (size_t)k, ")");
    return buf[which];
}
int cmd_apply(int argc, char **argv)
{
    cli_rope_options o;
    const char *path[4] = {NULL, NULL, NULL, NULL}; /* q k oq ok */
    long start_pos = 0;
    rope_npy q = {0}, k = {0};
    float *c = NULL, *s = NULL;
    char err[512];
    int rc = 0;
    cli_rope_defaults(&o);
    static const char *const names[4] = {"--q", "--k", "--out-q",
                                         "--out-k"};
    for (int i = 1; i < argc && rc == 0; i++) {
        int r = cli_rope_parse_option(&o, argc, argv, &i), known = 0;
        if (r != 0) {
            rc = r == 1 ? 0 : r;
            continue;
        }
        for (int j = 0; j < 4; j++)
            known |= strcmp(argv[i], names[j]) == 0;
        known |= strcmp(argv[i], "--start-pos") == 0;
        if (!known)
            rc = cli_error("apply: unexpected argument '%s'", argv[i]);
        else if ((rc = cli_need_value(argc, argv, i)) != 0)
            break;
        else if (strcmp(argv[i], "--start-pos") == 0)
            rc = cli_parse_int("--start-pos", argv[++i], 0,
                               ROPE_MAX_POSITION - 1, &start_pos);
        else
            for (int j = 0; j < 4; j++)
                if (strcmp(argv[i], names[j]) == 0) {
                    path[j] = argv[++i];
                    break;
                }
    }
    for (int j = 0; rc == 0 && j < 4; j++)
        if (path[j] == NULL)
            rc = cli_error("apply: %s FILE is required", names[j]);
    if (rc == 0)
        rc = cli_check_files(2, 4, names, path);
    if (rc == 0 && cli_parse_only)
        return cli_rope_validate(&o);
    if (rc == 0 && rope_npy_read(path[0], &q, err, sizeof err) != 0)
        rc = cli_error("%s", err);
    if (rc == 0 && rope_npy_read(path[1], &k, err, sizeof err) != 0)
        rc = cli_error("%s", err);
    if (rc == 0) {
        int ok = q.ndim == 4 && k.ndim == 4 && q.shape[0] == k.shape[0]
                 && q.shape[1] == k.shape[1] && q.shape[3] == k.shape[3];
        for (int j = 0; ok && j < 4; j++)
            ok = q.shape[j] <= (1L << 24) && k.shape[j] <= (1L << 24);
        if (!ok)
            rc = cli_error("apply: q %s and k %s must be [batch, seq_len, "
                           "heads, head_dim] with equal batch, seq_len "
                           "and head_dim", shape_text(&q, 0),
                           shape_text(&k, 1));
    }
    if (rc == 0 && o.head_dim != 0 && o.head_dim != q.shape[3])
        rc = cli_error("apply: --head-dim %d but the arrays have "
                       "head_dim %ld", o.head_dim, q.shape[3]);
    if (rc == 0) {
        o.head_dim = (int)q.shape[3];
        if (o.head_dim == 0)
            rc = cli_error("apply: head_dim is 0");
        else
            rc = cli_rope_validate(&o);
    }
    if (rc == 0 && start_pos + q.shape[1] > ROPE_MAX_POSITION)
        rc = cli_error("apply: --start-pos %ld + seq_len %ld passes %ld",
                       start_pos, q.shape[1], ROPE_MAX_POSITION);
    for (int j = 0; rc == 0 && j < 2; j++) {
        const rope_npy *a = j ? &k : &q;
        long bad = first_not_finite(a->data, a->count);
        if (bad >= 0)
            rc = cli_error("apply: %s %s holds %g at element %ld; the "
                           "inputs must be finite", names[j], path[j],
                           (double)a->data[bad], bad);
    }
    if (rc == 0)
        rc = cli_rope_table(&o, start_pos, start_pos + q.shape[1], &c, &s);
    if (rc == 0) {
        rope_apply_rotary_pos_emb(q.data, k.data, c, s, (int)q.shape[0],
            (int)q.shape[1], (int)q.shape[2], (int)k.shape[2], o.head_dim,
            0, o.pairing);
        for (int j = 0; rc == 0 && j < 2; j++) {
            const rope_npy *a = j ? &k : &q;
            long bad = first_not_finite(a->data, a->count);
            if (bad >= 0)
                rc = cli_error("apply: rotating %s %s gives %g at element %ld: "
                               "an input is too close to the largest float (%g) "
                               "for this rotation and attention factor",
                               names[j], path[j], (double)a->data[bad], bad,
                               (double)FLT_MAX);
        }
    }
    if (rc == 0) {
        rope_npy out[2] = {q, k};
        rc = cli_write_npys(2, names + 2, path + 2, out);
    }
    rope_npy_free(&q); rope_npy_free(&k);
    free(c); free(s);
    return rc;
}
static int same_dir(const char *a, const char *b)
{
    char da[4096], db[4096];
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const char *ba = sa ? sa + 1 : a, *bb = sb ? sb + 1 : b;
    struct stat ta, tb;
    if (strcmp(ba, bb) != 0)
        return 0;
    snprintf(da, sizeof da, "%.*s", sa ? (int)(sa - a) + 1 : 1,
             sa ? a : ".");
    snprintf(db, sizeof db, "%.*s", sb ? (int)(sb - b) + 1 : 1,
             sb ? b : ".");
    return stat(da, &ta) == 0 && stat(db, &tb) == 0
           && ta.st_dev == tb.st_dev && ta.st_ino == tb.st_ino;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ra = stat(a, &sa), rb = stat(b, &sb);
    if ((ra == 0 && !S_ISREG(sa.st_mode))
        || (rb == 0 && !S_ISREG(sb.st_mode)))
        return 0;
    if (ra == 0 && rb == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0 || same_dir(a, b);
}

int cli_check_files(int n_in, int n, const char *const *flags,
                    const char *const *paths)
{
    for (int j = n_in; j < n; j++)
        for (int i = 0; i < j; i++)
            if (same_file(paths[i], paths[j]))
                return cli_error("%s and %s name the same file '%s'",
                                 flags[i], flags[j], paths[j]);
    return 0;
}
#define CLI_MAX_OUTPUTS 4
static char temp_path[CLI_MAX_OUTPUTS][4096];
static volatile sig_atomic_t n_temps;

static void remove_temps(void)
{
    for (int j = 0; j < n_temps; j++)
        if (temp_path[j][0] != '\0')
            unlink(temp_path[j]);
}

static void remove_temps_and_die(int sig)
{
    remove_temps();
    raise(sig); /* SA_RESETHAND: the default action, once we return */
}

static void catch_signals(void)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temps_and_die;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int j = 0; j < 3; j++)
        sigaction(sigs[j], &sa, NULL);
}
static mode_t temp_mode[CLI_MAX_OUTPUTS];

static int open_temp(int j, const char *path, mode_t mode)
{
    int len = snprintf(temp_path[j], sizeof temp_path[j], "%s.XXXXXX",
                       path);
    if (len < 0 || (size_t)len >= sizeof temp_path[j]) {
        temp_path[j][0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    n_temps = j + 1;
    int fd = mkstemp(temp_path[j]);
    if (fd < 0) {
        temp_path[j][0] = '\0';
        return -1;
    }
    temp_mode[j] = mode;
    return close(fd) != 0 ? -1 : 0;
}
static char backup_path[CLI_MAX_OUTPUTS][4096];

static int link_backup(int j, const char *path)
{
    struct stat st;
    backup_path[j][0] = '\0';
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1; /* nothing to keep */
    for (int k = 0; k < 100; k++) {
        int len = snprintf(backup_path[j], sizeof backup_path[j],
                           "%s.%ld-%d.backup", path, (long)getpid(), k);
        if (len < 0 || (size_t)len >= sizeof backup_path[j]) {
            errno = ENAMETOOLONG;
            break;
        }
        if (link(path, backup_path[j]) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    backup_path[j][0] = '\0';
    errno = e;
    return -1;
}
static int rename_outputs(int n, const char *const *flags,
                          const char *const *paths, const int *direct)
{
    int failed = -1, stage = 0, err = 0, lost = -1, regular = 0;
    sigset_t block, old;
    for (int j = 0; j < n; j++)
        regular += !direct[j], backup_path[j][0] = '\0';
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    for (int j = 0; j < n && failed < 0 && regular > 1; j++)
        if (!direct[j] && link_backup(j, paths[j]) != 0)
            failed = j, err = errno;
    for (int j = 0; j < n && failed < 0; j++)
        if (!direct[j] && rename(temp_path[j], paths[j]) != 0)
            failed = j, stage = 1, err = errno;
        else
            temp_path[j][0] = '\0';
    for (int j = 0; stage == 1 && j < failed; j++) {
        if (direct[j])
            continue;
        if (backup_path[j][0] != '\0'
                ? rename(backup_path[j], paths[j]) == 0
                : unlink(paths[j]) == 0)
            backup_path[j][0] = '\0';
        else
            lost = j;
    }
    for (int j = 0; j < n; j++)
        if (backup_path[j][0] != '\0' && j != lost)
            unlink(backup_path[j]);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (failed >= 0 && stage == 0)
        return cli_error("%s %s: cannot link a backup beside it: %s",
                         flags[failed], paths[failed], strerror(err));
    if (failed >= 0 && lost >= 0)
        return cli_error("%s %s: %s; %s %s could not be restored: its old "
                         "contents are in %s", flags[failed], paths[failed],
                         strerror(err), flags[lost], paths[lost],
                         backup_path[lost]);
    if (failed >= 0)
        return cli_error("%s %s: %s", flags[failed], paths[failed],
                         strerror(err));
    return 0;
}
static char link_target[CLI_MAX_OUTPUTS][4096];

static int follow_link(int j, const char *flag, const char *path,
                       const char **target)
{
    struct stat st;
    char *real;
    *target = path;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 0;
    if ((real = realpath(path, NULL)) == NULL)
        return cli_error("%s %s: a symbolic link that cannot be followed: "
                         "%s", flag, path, strerror(errno));
    int len = snprintf(link_target[j], sizeof link_target[j], "%s", real);
    free(real);
    if (len < 0 || (size_t)len >= sizeof link_target[j])
        return cli_error("%s %s: the file of the symbolic link has too long "
                         "a name", flag, path);
    *target = link_target[j];
    return 0;
}
int cli_write_npys(int n, const char *const *flags,
                   const char *const *paths, const rope_npy *arrays)
{
    char err[512];
    int rc = 0, direct[CLI_MAX_OUTPUTS];
    const char *target[CLI_MAX_OUTPUTS];
    mode_t mask = umask(0);
    umask(mask);
    catch_signals();
    for (int j = 0; j < n; j++)
        temp_path[j][0] = '\0';
    for (int j = 0; j < n && rc == 0; j++) {
        struct stat st;
        rc = follow_link(j, flags[j], paths[j], &target[j]);
        int exists = rc == 0 && stat(target[j], &st) == 0;
        direct[j] = exists && !S_ISREG(st.st_mode);
        if (rc == 0 && !direct[j]
            && open_temp(j, target[j], exists ? st.st_mode & 0777
                                              : 0666 & ~mask) != 0)
            rc = cli_error("%s %s: cannot create a file beside it: %s",
                           flags[j], target[j], strerror(errno));
    }
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < n && rc == 0; j++) {
            if (direct[j] != pass)
                continue;
            const rope_npy *a = &arrays[j];
            errno = 0;
            if (rope_npy_write(pass ? paths[j] : temp_path[j], a->data,
                               a->ndim, a->shape, err, sizeof err) != 0)
                rc = cli_error("%s %s: cannot write: %s", flags[j],
                               paths[j], errno ? strerror(errno) : err);
            else if (!pass && chmod(temp_path[j], temp_mode[j]) != 0)
                rc = cli_error("%s %s: cannot set the mode: %s", flags[j],
                               paths[j], strerror(errno));
        }
    if (rc == 0)
        rc = rename_outputs(n, flags, target, direct);
    remove_temps();
    n_temps = 0;
    return rc;
}
