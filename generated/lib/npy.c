/* The frame of the workshop / NumPy files */
/* npy.c: NumPy .npy files of float32, read, parsed and written.
   Tangled from chapters/10-workshop.nw. */
#include <sys/stat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npy.h"

static int npy_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return EINVAL;
}
typedef struct { const char *p, *end; } npy_cursor;

static void npy_skip(npy_cursor *c)
{
    while (c->p < c->end) {
        if (*c->p == '#')
            while (c->p < c->end && *c->p != '\n' && *c->p != '\r')
                c->p++;
        else if (*c->p == ' ' || *c->p == '\t' || *c->p == '\f'
                 || *c->p == '\r' || *c->p == '\n')
            c->p++;
        else
            break;
    }
}

static int npy_take(npy_cursor *c, char ch)
{
    npy_skip(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int npy_string(npy_cursor *c, char *buf, size_t len)
{
    size_t k = 0;
    char quote = npy_take(c, '\'') ? '\'' : npy_take(c, '"') ? '"' : 0;
    if (quote == 0) return 0;
    while (c->p < c->end && *c->p != quote) {
        if (k + 1 >= len || *c->p < ' ' || *c->p > '~')
            return 0; /* too long, or not printable ASCII */
        buf[k++] = *c->p++;
    }
    buf[k] = '\0';
    return npy_take(c, quote);
}

static int npy_word(npy_cursor *c, const char *word)
{
    size_t n = strlen(word);
    npy_skip(c);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return 0;
    c->p += n;
    return 1;
}
static int npy_shape(npy_cursor *c, rope_npy *a, char *err,
                     size_t errlen)
{
    if (!npy_take(c, '('))
        return npy_fail(err, errlen, "header: 'shape' is not a tuple");
    a->ndim = 0;
    a->count = 1;
    while (!npy_take(c, ')')) {
        unsigned long long v = 0;
        int digits = 0;
        int zero = c->p < c->end && *c->p == '0';
        for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
            v = 10 * v + (unsigned long long)(*c->p - '0');
            if (++digits > 13)
                return npy_fail(err, errlen, "header: shape too large");
        }
        if (digits == 0 || (zero && digits > 1)
            || a->ndim == ROPE_NPY_MAX_NDIM)
            return npy_fail(err, errlen, "header: bad 'shape' tuple");
        if (v > 0 && a->count > ((size_t)1 << 40) / v)
            return npy_fail(err, errlen, "header: array too large");
        a->shape[a->ndim++] = (long)v;
        a->count *= (size_t)v;
        if (!npy_take(c, ',') && !(c->p < c->end && *c->p == ')'))
            return npy_fail(err, errlen, "header: bad 'shape' tuple");
    }
    return 0;
}
static int npy_dict(npy_cursor *c, rope_npy *a, char *err,
                    size_t errlen)
{
    int seen = 0; /* bits: 1 descr, 2 fortran_order, 4 shape */
    char key[32], value[32];
    if (!npy_take(c, '{'))
        return npy_fail(err, errlen, "header is not a dictionary");
    while (!npy_take(c, '}')) {
        if (!npy_string(c, key, sizeof key) || !npy_take(c, ':'))
            return npy_fail(err, errlen, "header: bad dictionary");
        if (strcmp(key, "descr") == 0) {
            if (!npy_string(c, value, sizeof value))
                return npy_fail(err, errlen, "header: bad 'descr'");
            if (strcmp(value, "<f4") != 0)
                return npy_fail(err, errlen, "dtype '%s' is not float32 "
                                "('<f4', little-endian)", value);
            seen |= 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (npy_word(c, "True"))
                return npy_fail(err, errlen, "array is in Fortran order; "
                                "save a C-order array");
            if (!npy_word(c, "False"))
                return npy_fail(err, errlen, "header: bad 'fortran_order'");
            seen |= 2;
        } else if (strcmp(key, "shape") == 0) {
            if (npy_shape(c, a, err, errlen) != 0)
                return EINVAL;
            seen |= 4;
        } else
            return npy_fail(err, errlen, "header: unexpected key '%s'", key);
        if (!npy_take(c, ',') && !(c->p < c->end && *c->p == '}'))
            return npy_fail(err, errlen, "header: bad dictionary");
    }
    if (seen != 7)
        return npy_fail(err, errlen, "header: 'descr', 'fortran_order' "
                        "or 'shape' missing");
    return 0;
}
static int npy_header(const unsigned char *buf, size_t n, rope_npy *a,
                      size_t *data_at, char *err, size_t errlen)
{
    size_t hlen, hstart;
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return npy_fail(err, errlen, "not a .npy file (bad magic)");
    if (buf[6] == 1 && buf[7] == 0) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if (buf[6] == 2 && buf[7] == 0 && n >= 12) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16
             | (size_t)buf[11] << 24;
        hstart = 12;
    } else
        return npy_fail(err, errlen, "unsupported .npy version %d.%d",
                        buf[6], buf[7]);
    if (hlen > n - hstart)
        return npy_fail(err, errlen, "truncated header");
    npy_cursor c = {(const char *)buf + hstart,
                    (const char *)buf + hstart + hlen};
    if (npy_dict(&c, a, err, errlen) != 0)
        return EINVAL;
    npy_skip(&c);
    if (c.p != c.end)
        return npy_fail(err, errlen, "header: junk after the dict");
    *data_at = hstart + hlen;
    return 0;
}

int rope_npy_parse(const unsigned char *buf, size_t n, rope_npy *a,
                   char *err, size_t errlen)
{
    size_t data_at;
    if (npy_header(buf, n, a, &data_at, err, errlen) != 0)
        return EINVAL;
    size_t have = n - data_at, need = a->count * 4;
    if (have < need)
        return npy_fail(err, errlen, "truncated data: %zu bytes, the shape "
                        "needs %zu", have, need);
    if (have > need)
        return npy_fail(err, errlen, "%zu bytes after the data",
                        have - need);
    a->data = malloc(need > 0 ? need : 1);
    if (a->data == NULL)
        return npy_fail(err, errlen, "out of memory");
    const unsigned char *d = buf + data_at;
    for (size_t i = 0; i < a->count; i++, d += 4) {
        uint32_t u = (uint32_t)d[0] | (uint32_t)d[1] << 8
                   | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
        memcpy(&a->data[i], &u, sizeof u);
    }
    return 0;
}
static int npy_read_fail(FILE *f, unsigned char *buf, char *err,
                         size_t errlen, const char *path, const char *msg)
{
    fclose(f);
    free(buf);
    return npy_fail(err, errlen, "%s: %s", path, msg);
}

int rope_npy_read(const char *path, rope_npy *a, char *err,
                  size_t errlen)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return npy_fail(err, errlen, "%s: %s", path, strerror(errno));
    unsigned char pre[12];
    size_t n = fread(pre, 1, sizeof pre, f), hend = 0, data_at;
    if (n >= 10 && memcmp(pre, "\x93NUMPY", 6) == 0 && pre[7] == 0)
        hend = pre[6] == 1 ? 10 + ((size_t)pre[8] | (size_t)pre[9] << 8)
             : pre[6] == 2 && n == 12
                 ? 12 + ((size_t)pre[8] | (size_t)pre[9] << 8
                         | (size_t)pre[10] << 16 | (size_t)pre[11] << 24)
                 : 0;
    if (hend > (1u << 20))
        return npy_read_fail(f, NULL, err, errlen, path, "header too long");
    unsigned char *buf = malloc(hend > n ? hend : n);
    if (buf == NULL)
        return npy_read_fail(f, NULL, err, errlen, path, "out of memory");
    memcpy(buf, pre, n);
    if (hend > n)
        n += fread(buf + n, 1, hend - n, f);
    if (ferror(f))
        return npy_read_fail(f, buf, err, errlen, path,
                             "cannot read the file");
    rope_npy head;
    char msg0[256];
    if (npy_header(buf, n, &head, &data_at, msg0, sizeof msg0) != 0)
        return npy_read_fail(f, buf, err, errlen, path, msg0);
    size_t need = data_at + head.count * 4;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)
        && (size_t)st.st_size != need) {
        snprintf(msg0, sizeof msg0, (size_t)st.st_size < need
                 ? "truncated data: %zu bytes, the shape needs %zu"
                 : "%zu bytes after the data",
                 (size_t)st.st_size < need ? (size_t)st.st_size - data_at
                                           : (size_t)st.st_size - need,
                 head.count * 4);
        return npy_read_fail(f, buf, err, errlen, path, msg0);
    }
    unsigned char *bigger = realloc(buf, need + 1);
    if (bigger == NULL)
        return npy_read_fail(f, buf, err, errlen, path, "out of memory");
    buf = bigger;
    n += fread(buf + n, 1, need + 1 - n, f);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return npy_fail(err, errlen, "%s: cannot read the file", path);
    }
    char msg[256];
    int rc = rope_npy_parse(buf, n, a, msg, sizeof msg);
    free(buf);
    return rc ? npy_fail(err, errlen, "%s: %s", path, msg) : 0;
}
void rope_npy_free(rope_npy *a)
{
    free(a->data);
    a->data = NULL;
}
int rope_npy_write(const char *path, const float *data, int ndim,
                   const long *shape, char *err, size_t errlen)
{
    char h[512];
    size_t count = 1;
    int k = snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': "
                     "False, 'shape': (");
    if (ndim < 0 || ndim > ROPE_NPY_MAX_NDIM)
        return npy_fail(err, errlen, "%s: bad dimensions", path);
    for (int i = 0; i < ndim; i++) {
        k += snprintf(h + k, sizeof h - (size_t)k, "%ld%s", shape[i],
                      ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
        count *= (size_t)shape[i];
    }
    k += snprintf(h + k, sizeof h - (size_t)k, "), }");
    while ((10 + k + 1) % 64 != 0)
        h[k++] = ' ';
    h[k++] = '\n';
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return npy_fail(err, errlen, "%s: %s", path, strerror(errno));
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(k & 0xff),
                             (unsigned char)(k >> 8)};
    fwrite(pre, 1, sizeof pre, f);
    fwrite(h, 1, (size_t)k, f);
    for (size_t i = 0; i < count; i++) {
        uint32_t u;
        memcpy(&u, &data[i], sizeof u);
        unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8),
                              (unsigned char)(u >> 16),
                              (unsigned char)(u >> 24)};
        fwrite(b, 1, 4, f);
    }
    if (ferror(f) | fclose(f))
        return npy_fail(err, errlen, "%s: write error", path);
    return 0;
}
