/* W7.8 The King James corpus */
/* corpus.c: chapter 7's text, its split and its vocabulary */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"
#include "positions.h"

rope_corpus_part rope_corpus_part_of(int position)
{
    int last = (position + 1) % 10; /* the last digit of the book's number */
    return last == 9 ? ROPE_CORPUS_VALIDATION
         : last == 0 ? ROPE_CORPUS_TEST : ROPE_CORPUS_TRAIN;
}

static int corpus_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
static int corpus_line(const char *buf, size_t n, size_t *at, char *line,
                       size_t cap)
{
    const char *nl = *at < n ? memchr(buf + *at, '\n', n - *at) : NULL;
    size_t len = nl ? (size_t)(nl - (buf + *at)) : 0;
    if (nl == NULL || len >= cap)
        return -1;
    memcpy(line, buf + *at, len);
    line[len] = '\0';
    *at += len + 1;
    return 0;
}
int rope_corpus_parse(const char *buf, size_t n, rope_corpus *c,
                      char *err, size_t errlen)
{
    char line[128];
    size_t at = 0;
    int count = 0;
    memset(c, 0, sizeof *c);
    if (corpus_line(buf, n, &at, line, sizeof line) != 0
        || strcmp(line, "rope-corpus 1") != 0)
        return corpus_fail(err, errlen, "not a rope corpus (its first line "
                           "is not 'rope-corpus 1')");
    if (corpus_line(buf, n, &at, line, sizeof line) != 0
        || strncmp(line, "source ", 7) != 0)
        return corpus_fail(err, errlen, "truncated or bad header: no "
                           "'source' line");
    snprintf(c->source, sizeof c->source, "%s", line + 7);
    if (corpus_line(buf, n, &at, line, sizeof line) != 0
        || strncmp(line, "command ", 8) != 0)
        return corpus_fail(err, errlen, "truncated or bad header: no "
                           "'command' line");
    if (corpus_line(buf, n, &at, line, sizeof line) != 0
        || sscanf(line, "documents %d", &count) != 1 || count < 1
        || count > 100000)
        return corpus_fail(err, errlen, "truncated or bad header: no "
                           "'documents N' line");
    c->docs = calloc((size_t)count, sizeof *c->docs);
    c->text = malloc(n - at + 1);
    if (c->docs == NULL || c->text == NULL) {
        corpus_fail(err, errlen, "out of memory");
        goto fail;
    }
    for (int d = 0; d < count; d++) {
        rope_corpus_doc *doc = &c->docs[d];
        char *end = NULL;
        int name_end = 0;
        if (corpus_line(buf, n, &at, line, sizeof line) != 0) {
            corpus_fail(err, errlen, "truncated: %d of %d documents", d, count);
            goto fail;
        }
        if (sscanf(line, "document %15s %n", doc->name, &name_end) != 1
            || name_end == 0 || line[name_end] < '0' || line[name_end] > '9'
            || (doc->len = strtoul(line + name_end, &end, 10), *end != '\0')
            || doc->len == 0) {
            corpus_fail(err, errlen, "document %d: bad line '%s'", d + 1, line);
            goto fail;
        }
        if (doc->len > n - at) {
            corpus_fail(err, errlen, "truncated: document %d (%s) announces %zu "
                        "bytes, %zu remain", d + 1, doc->name, doc->len, n - at);
            goto fail;
        }
        doc->offset = c->text_len;
        doc->part = rope_corpus_part_of(d);
        memcpy(c->text + c->text_len, buf + at, doc->len);
        c->text_len += doc->len;
        at += doc->len;
        c->n_docs = d + 1;
    }
    if (at != n) {
        corpus_fail(err, errlen, "%zu bytes after the last document", n - at);
        goto fail;
    }
    {
        int seen[256] = {0};
        for (int d = 0; d < c->n_docs; d++)
            if (c->docs[d].part == ROPE_CORPUS_TRAIN)
                for (size_t i = 0; i < c->docs[d].len; i++)
                    seen[(unsigned char)c->text[c->docs[d].offset + i]] = 1;
        c->vocab_size = 1;
        c->char_of[ROPE_CORPUS_UNKNOWN] = ROPE_CORPUS_UNKNOWN_CHAR;
        for (int b = 0; b < 256; b++) {
            c->id_of[b] = seen[b] ? c->vocab_size : ROPE_CORPUS_UNKNOWN;
            if (seen[b])
                c->char_of[c->vocab_size++] = (unsigned char)b;
        }
        if (c->vocab_size == 1) {
            corpus_fail(err, errlen, "no training document");
            goto fail;
        }
    }
    return 0;
fail: /* err is written; the message may name a document, so free last */
    rope_corpus_free(c);
    return -1;
}
int rope_corpus_load(const char *path, rope_corpus *c, char *err,
                     size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, why[200];
    size_t n = 0, cap = 0;
    int rc;
    memset(c, 0, sizeof *c);
    if (f == NULL)
        return corpus_fail(err, errlen, "%s: %s", path, strerror(errno));
    for (;;) {
        if (n == cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (b == NULL) {
                free(buf);
                fclose(f);
                return corpus_fail(err, errlen, "%s: out of memory", path);
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    rc = ferror(f) ? corpus_fail(why, sizeof why, "read error")
                   : rope_corpus_parse(buf, n, c, why, sizeof why);
    fclose(f);
    free(buf);
    if (rc != 0)
        corpus_fail(err, errlen, "%s: %s", path, why);
    return rc;
}

void rope_corpus_free(rope_corpus *c)
{
    free(c->text);
    free(c->docs);
    memset(c, 0, sizeof *c);
}
size_t rope_corpus_encode(const rope_corpus *c, const char *text,
                          size_t n, int *ids)
{
    size_t unknown = 0;
    for (size_t i = 0; i < n; i++) {
        ids[i] = c->id_of[(unsigned char)text[i]];
        unknown += ids[i] == ROPE_CORPUS_UNKNOWN;
    }
    return unknown;
}

void rope_corpus_decode(const rope_corpus *c, const int *ids, size_t n,
                        char *text)
{
    for (size_t i = 0; i < n; i++)
        text[i] = (char)(ids[i] > 0 && ids[i] < c->vocab_size
                             ? c->char_of[ids[i]]
                             : (unsigned char)ROPE_CORPUS_UNKNOWN_CHAR);
}
int rope_corpus_split_make(const rope_corpus *c, rope_corpus_part part,
                           size_t min_len, rope_corpus_split *s,
                           char *err, size_t errlen)
{
    static const char *names[] = {"training", "validation", "test"};
    memset(s, 0, sizeof *s);
    s->part = part;
    s->doc = malloc((size_t)c->n_docs * sizeof *s->doc);
    s->ids = calloc((size_t)c->n_docs, sizeof *s->ids);
    s->len = malloc((size_t)c->n_docs * sizeof *s->len);
    if (s->doc == NULL || s->ids == NULL || s->len == NULL) {
        rope_corpus_split_free(s);
        return corpus_fail(err, errlen, "out of memory");
    }
    for (int d = 0; d < c->n_docs; d++) {
        const rope_corpus_doc *doc = &c->docs[d];
        if (doc->part != part || doc->len < min_len)
            continue;
        int *ids = malloc(doc->len * sizeof *ids);
        if (ids == NULL) {
            rope_corpus_split_free(s);
            return corpus_fail(err, errlen, "out of memory");
        }
        s->unknown += rope_corpus_encode(c, c->text + doc->offset,
                                         doc->len, ids);
        s->doc[s->n_docs] = d;
        s->ids[s->n_docs] = ids;
        s->len[s->n_docs++] = doc->len;
        s->tokens += doc->len;
    }
    if (s->n_docs == 0) {
        rope_corpus_split_free(s);
        return corpus_fail(err, errlen, "no %s document holds %zu tokens",
                           names[part], min_len);
    }
    return 0;
}

void rope_corpus_split_free(rope_corpus_split *s)
{
    for (int d = 0; s->ids != NULL && d < s->n_docs; d++)
        free(s->ids[d]);
    free(s->doc);
    free(s->ids);
    free(s->len);
    memset(s, 0, sizeof *s);
}
int rope_corpus_window(const rope_corpus_split *s, size_t len,
                       uint64_t *state, int *ids, int *doc,
                       size_t *start)
{
    uint64_t total = 0, r, limit;
    for (int d = 0; d < s->n_docs; d++)
        if (s->len[d] >= len)
            total += s->len[d] - len + 1;
    if (len == 0 || total == 0)
        return -1;
    limit = UINT64_MAX - UINT64_MAX % total;
    do
        r = rope_splitmix64(state);
    while (r >= limit);
    r %= total;
    for (int d = 0; d < s->n_docs; d++) {
        if (s->len[d] < len)
            continue;
        if (r <= s->len[d] - len) {
            memcpy(ids, s->ids[d] + r, len * sizeof *ids);
            *doc = d;
            *start = (size_t)r;
            return 0;
        }
        r -= s->len[d] - len + 1;
    }
    return -1; /* not reached: r < total */
}
