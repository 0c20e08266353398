/* W8.3 The reader and the writer */
/* minimind-file.c: the weight file "rope-minimind 1" (workshop W8) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "minimind.h"

enum { MF_PAGE = 4096, MF_LINE = 256 }; /* alignment; longest line */
static const char mf_magic[] = "rope-minimind 1";
typedef struct mf_key {
    const char *name; /* MiniMindConfig's field */
    char kind; /* 'i' int, 'l' long, 'd' double */
    size_t at; /* offsetof the field in rope_minimind_config */
} mf_key;
#define MF_KEY(f, k) {#f, k, offsetof(rope_minimind_config, f)}
static const mf_key mf_keys[] = {
    MF_KEY(hidden_size, 'i'), MF_KEY(num_hidden_layers, 'i'),
    MF_KEY(num_attention_heads, 'i'), MF_KEY(num_key_value_heads, 'i'),
    MF_KEY(head_dim, 'i'), MF_KEY(intermediate_size, 'i'),
    MF_KEY(vocab_size, 'i'), MF_KEY(max_position_embeddings, 'l'),
    MF_KEY(rope_theta, 'd'), MF_KEY(rms_norm_eps, 'd'),
    MF_KEY(use_moe, 'i'), MF_KEY(num_experts, 'i'),
    MF_KEY(num_experts_per_tok, 'i'), MF_KEY(moe_intermediate_size, 'i'),
    MF_KEY(norm_topk_prob, 'i')};
enum { MF_N_KEYS = sizeof mf_keys / sizeof mf_keys[0] };
static int mf_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int mf_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}
static void mf_format(const mf_key *k, const rope_minimind_config *c,
                      char *s, size_t n)
{
    const char *p = (const char *)c + k->at;
    double v;
    if (k->kind == 'i') {
        snprintf(s, n, "%d", *(const int *)p);
        return;
    }
    if (k->kind == 'l') {
        snprintf(s, n, "%ld", *(const long *)p);
        return;
    }
    v = *(const double *)p;
    if (fabs(v) < 1e15 && v == (double)(long long)v) {
        snprintf(s, n, "%lld", (long long)v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(s, n, "%.*g", digits, v);
        if (strtod(s, NULL) == v)
            return;
    }
}
/* The header of c, padded to *data_at bytes, in a malloc'd buffer. */
static char *mf_header(const rope_minimind_config *c,
                       const rope_minimind_tensor *t, int nt,
                       size_t *data_at)
{
    char *text = NULL, *page, num[40], line[40];
    size_t len = 0, at = MF_PAGE;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "%s\n", mf_magic);
    for (int k = 0; k < MF_N_KEYS; k++) {
        mf_format(&mf_keys[k], c, num, sizeof num);
        fprintf(f, "%s %s\n", mf_keys[k].name, num);
    }
    for (int i = 0; i < nt; i++)
        if (t[i].ndim == 1)
            fprintf(f, "tensor %s f32 %ld\n", t[i].name, t[i].shape[0]);
        else
            fprintf(f, "tensor %s f32 %ld %ld\n", t[i].name,
                    t[i].shape[0], t[i].shape[1]);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    for (;;) {
        size_t need = len + (size_t)snprintf(line, sizeof line,
                                             "data %zu\n", at);
        if (need <= at)
            break;
        at = (need + MF_PAGE - 1) / MF_PAGE * MF_PAGE;
    }
    if ((page = malloc(at)) != NULL) {
        memcpy(page, text, len);
        memcpy(page + len, line, strlen(line));
        memset(page + len + strlen(line), '\n', at - len - strlen(line));
        *data_at = at;
    }
    free(text);
    return page;
}
static int mf_write_all(int fd, const void *buf, size_t n)
{
    enum { MF_PIECE = 0x40000000 };
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n < MF_PIECE ? n : MF_PIECE);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
/* Write the file tmp: 0; -1 if it could not be created; -2 if it was
   created and then failed (errno says why). */
static int mf_write_tmp(const char *tmp, const char *head, size_t at,
                        const float *data, size_t bytes)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644), e;
    if (fd < 0)
        return -1;
    if (mf_write_all(fd, head, at) != 0 || mf_write_all(fd, data, bytes)
        || fsync(fd) != 0) {
        e = errno;
        close(fd);
        errno = e;
        return -2;
    }
    return close(fd) != 0 ? -2 : 0;
}

int rope_minimind_save(const char *path, const rope_minimind_config *c,
                       const float *data, char *err, size_t errlen)
{
    char why[200], *tmp = NULL, *head = NULL;
    rope_minimind_tensor *t = NULL;
    size_t at = 0, bytes;
    int nt, rc = -1, wr = 0;
    if (rope_minimind_check_config(c, why, sizeof why) != 0)
        return mf_err(err, errlen, "%s: config: %s", path, why);
    if (!mf_little_endian())
        return mf_err(err, errlen, "%s: this machine is not little-endian",
                      path);
    nt = rope_minimind_tensor_list(c, NULL);
    bytes = rope_minimind_n_floats(c) * sizeof *data;
    t = malloc((size_t)nt * sizeof *t);
    tmp = malloc(strlen(path) + 5);
    if (t != NULL && tmp != NULL) {
        rope_minimind_tensor_list(c, t);
        head = mf_header(c, t, nt, &at);
        sprintf(tmp, "%s.tmp", path);
    }
    if (head == NULL)
        mf_err(err, errlen, "%s: out of memory", path);
    else if ((wr = mf_write_tmp(tmp, head, at, data, bytes)) != 0)
        mf_err(err, errlen, "%s: %s", tmp, strerror(errno));
    else if (rename(tmp, path) != 0) {
        mf_err(err, errlen, "%s: %s", path, strerror(errno));
        wr = -2;
    } else
        rc = 0;
    if (wr == -2) /* created, then failed */
        unlink(tmp);
    free(head);
    free(tmp);
    free(t);
    return rc;
}
typedef struct mf_reader {
    const char *p, *end; /* the unread bytes of the file */
    int line; /* the number of the last line read, from 1 */
    char *err; /* where a refusal is written */
    size_t errlen;
} mf_reader;

static int mf_line(mf_reader *r, char *s)
{
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t len = nl ? (size_t)(nl - r->p) : 0;
    r->line++;
    if (nl == NULL)
        return mf_err(r->err, r->errlen, "line %d: the file ends inside "
                      "the header (truncated)", r->line);
    if (len >= MF_LINE)
        return mf_err(r->err, r->errlen, "line %d: longer than %d "
                      "characters", r->line, MF_LINE - 1);
    for (size_t i = 0; i < len; i++)
        if (r->p[i] < 0x20 || r->p[i] > 0x7e)
            return mf_err(r->err, r->errlen, "line %d: byte %zu is not "
                          "printable ASCII", r->line, i + 1);
    memcpy(s, r->p, len);
    s[len] = '\0';
    r->p = nl + 1;
    return 0;
}
static int mf_long(const char *s, long *v)
{
    char *end;
    const char *d = s + (s[0] == '-');
    if (*d < '0' || *d > '9')
        return -1;
    errno = 0;
    *v = strtol(s, &end, 10);
    return *end != '\0' || errno == ERANGE ? -1 : 0;
}

static int mf_double(const char *s, double *v)
{
    char *end;
    if (s[0] == '\0' || s[0] == ' ')
        return -1;
    *v = strtod(s, &end);
    return *end != '\0' || !isfinite(*v) ? -1 : 0;
}
static int mf_key_line(mf_reader *r, const mf_key *k,
                       rope_minimind_config *c)
{
    char s[MF_LINE];
    size_t kl = strlen(k->name);
    char *p = (char *)c + k->at;
    long v = 0;
    double d = 0;
    if (mf_line(r, s) != 0)
        return -1;
    if (strncmp(s, k->name, kl) != 0 || s[kl] != ' ')
        return mf_err(r->err, r->errlen, "line %d: '%.40s', expected the "
                      "key %s", r->line, s, k->name);
    if (k->kind == 'd' ? mf_double(s + kl + 1, &d)
                       : mf_long(s + kl + 1, &v))
        return mf_err(r->err, r->errlen, "line %d: %s: '%.40s' is not %s",
                      r->line, k->name, s + kl + 1, k->kind == 'd'
                      ? "a finite number" : "an integer");
    if (k->kind == 'i' && (v < INT_MIN || v > INT_MAX))
        return mf_err(r->err, r->errlen, "line %d: %s: %ld is too large",
                      r->line, k->name, v);
    if (k->kind == 'i')
        *(int *)p = (int)v;
    else if (k->kind == 'l')
        *(long *)p = v;
    else
        *(double *)p = d;
    return 0;
}
static void mf_shape(char *s, size_t n, int ndim, const long *shape)
{
    if (ndim == 1)
        snprintf(s, n, "[%ld]", shape[0]);
    else
        snprintf(s, n, "[%ld %ld]", shape[0], shape[1]);
}

static int mf_tensor_line(mf_reader *r, const rope_minimind_tensor *t)
{
    char s[MF_LINE], *f[6], got[64], want[64];
    int nf = 0;
    long dim[2] = {0, 0};
    if (mf_line(r, s) != 0)
        return -1;
    if (strncmp(s, "tensor ", 7) != 0)
        return mf_err(r->err, r->errlen, "line %d: '%.40s', expected the "
                      "line of tensor %s", r->line, s, t->name);
    for (char *q = s; q != NULL && nf < 6; nf++) { /* split at spaces */
        f[nf] = q;
        if ((q = strchr(q, ' ')) != NULL)
            *q++ = '\0';
    }
    for (int i = 0; i < nf; i++)
        if (f[i][0] == '\0' || nf < 4 || nf == 6)
            return mf_err(r->err, r->errlen, "line %d: expected 'tensor "
                          "NAME f32 D0 [D1]' with one space between "
                          "fields", r->line);
    if (strcmp(f[1], t->name) != 0)
        return mf_err(r->err, r->errlen, "line %d: tensor %.100s, "
                      "expected %s", r->line, f[1], t->name);
    if (strcmp(f[2], "f32") != 0)
        return mf_err(r->err, r->errlen, "line %d: %s: dtype %.20s, "
                      "expected f32", r->line, t->name, f[2]);
    for (int i = 3; i < nf; i++)
        if (f[i][0] == '-' || mf_long(f[i], &dim[i - 3]) != 0)
            return mf_err(r->err, r->errlen, "line %d: %s: dimension "
                          "'%.20s' is not a size", r->line, t->name, f[i]);
    if (nf - 3 != t->ndim || dim[0] != t->shape[0]
        || (t->ndim == 2 && dim[1] != t->shape[1])) {
        mf_shape(got, sizeof got, nf - 3, dim);
        mf_shape(want, sizeof want, t->ndim, t->shape);
        return mf_err(r->err, r->errlen, "line %d: %s: shape %s, expected "
                      "%s", r->line, t->name, got, want);
    }
    return 0;
}
static int mf_parse(const char *buf, size_t size, rope_minimind_config *c,
                    size_t *data_at, char *err, size_t errlen)
{
    mf_reader r = {buf, buf + size, 0, err, errlen};
    rope_minimind_tensor *t = NULL;
    char s[MF_LINE], why[200];
    size_t n = sizeof mf_magic - 1, floats;
    long at = 0;
    int nt, rc = 0;
    if (size <= n || memcmp(buf, mf_magic, n) != 0 || buf[n] != '\n') {
        char v[12];
        size_t k = 0;
        while (k < 10 && 14 + k < size && buf[14 + k] > 0x20
               && buf[14 + k] <= 0x7e) {
            v[k] = buf[14 + k];
            k++;
        }
        v[k] = '\0';
        if (size > 14 && memcmp(buf, "rope-minimind ", 14) == 0)
            return mf_err(err, errlen, "line 1: version '%s': this reader "
                          "reads version 1", v);
        return mf_err(err, errlen, "line 1: not a weight file (the first "
                      "line is not '%s')", mf_magic);
    }
    r.p = buf + n + 1;
    r.line = 1;
    memset(c, 0, sizeof *c);
    for (int k = 0; k < MF_N_KEYS; k++)
        if (mf_key_line(&r, &mf_keys[k], c) != 0)
            return -1;
    if (rope_minimind_check_config(c, why, sizeof why) != 0)
        return mf_err(err, errlen, "config: %s", why);
    nt = rope_minimind_tensor_list(c, NULL);
    if ((t = malloc((size_t)nt * sizeof *t)) == NULL)
        return mf_err(err, errlen, "out of memory");
    rope_minimind_tensor_list(c, t);
    for (int i = 0; i < nt && rc == 0; i++)
        rc = mf_tensor_line(&r, &t[i]);
    free(t);
    if (rc != 0)
        return -1;
    floats = rope_minimind_n_floats(c);
    if (mf_line(&r, s) != 0)
        return -1;
    if (strncmp(s, "data ", 5) != 0 || s[5] == '-' || mf_long(s + 5, &at))
        return mf_err(err, errlen, "line %d: '%.40s', expected 'data N' "
                      "after the last tensor", r.line, s);
    if (at % MF_PAGE != 0)
        return mf_err(err, errlen, "line %d: data %ld: not a multiple of %d",
                      r.line, at, MF_PAGE);
    if ((size_t)at < (size_t)(r.p - buf))
        return mf_err(err, errlen, "line %d: data %ld: before the end of "
                      "the header (byte %zu)", r.line, at, (size_t)(r.p - buf));
    if (floats > (SIZE_MAX - (size_t)at) / 4)
        return mf_err(err, errlen, "line %d: data %ld: too large", r.line, at);
    if (size != (size_t)at + 4 * floats)
        return mf_err(err, errlen, "%s: %zu bytes, expected %zu",
                      size < (size_t)at + 4 * floats ? "truncated" : "too long",
                      size, (size_t)at + 4 * floats);
    for (const char *p = r.p; p < buf + at; p++)
        if (*p != '\n')
            return mf_err(err, errlen, "byte %zu: the padding before the "
                          "data holds a byte other than a newline",
                          (size_t)(p - buf));
    *data_at = (size_t)at;
    return 0;
}
int rope_minimind_load(rope_minimind *m, const char *path, char *err,
                       size_t errlen)
{
    int scaling = m->config.inference_rope_scaling, fd;
    rope_minimind_config c;
    char why[300];
    struct stat st;
    size_t size, at = 0;
    void *map;
    memset(m, 0, sizeof *m);
    if (!mf_little_endian())
        return mf_err(err, errlen, "%s: this machine is not little-endian",
                      path);
    if ((fd = open(path, O_RDONLY)) < 0)
        return mf_err(err, errlen, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        int e = errno;
        close(fd);
        return mf_err(err, errlen, "%s: %s", path, !S_ISREG(st.st_mode)
                      ? "not a regular file" : st.st_size == 0 ? "empty file"
                      : strerror(e));
    }
    size = (size_t)st.st_size;
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return mf_err(err, errlen, "%s: mmap: %s", path, strerror(errno));
    if (mf_parse(map, size, &c, &at, why, sizeof why) != 0) {
        munmap(map, size);
        return mf_err(err, errlen, "%s: %s", path, why);
    }
    c.inference_rope_scaling = scaling;
    if (rope_minimind_bind(m, &c, (const float *)((char *)map + at)) != 0) {
        rope_minimind_free(m); /* m->map is NULL: frees only the tables */
        munmap(map, size);
        return mf_err(err, errlen, "%s: cannot bind the weights (out of "
                      "memory)", path);
    }
    m->map = map;
    m->map_bytes = size;
    return 0;
}
