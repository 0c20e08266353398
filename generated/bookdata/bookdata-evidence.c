/* W7.5 The book's data */
/* bookdata-evidence.c: the figures and numbers of chapter 7. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

typedef struct ev_row {
    char task[8], pe[8], method[16], tag[8];
    int seed, n;
    double acc, loss;
} ev_row;

static int ev_read_results(const char *path, ev_row *rows, int cap)
{
    FILE *in = fopen(path, "r");
    char line[256];
    int n = 0;
    if (in == NULL) { perror(path); return -1; }
    while (n < cap && fgets(line, sizeof line, in))
        if (line[0] != '#'
            && sscanf(line, "%7s %7s %d %15s %7s %d %lf %lf", rows[n].task,
                      rows[n].pe, &rows[n].seed, rows[n].method, rows[n].tag,
                      &rows[n].n, &rows[n].acc, &rows[n].loss) == 8)
            n++;
    fclose(in);
    return n;
}
static void ev_curve(const char *dir, FILE *f, const ev_row *rows, int n,
                     const char *task, const char *pe, const char *method,
                     const char *tag)
{
    char name[128];
    FILE *out = NULL;
    for (int len = 1; len <= ROPE_EV_MAX_LEN; len *= 2) {
        double sum = 0, lo = 2, hi = -1, lsum = 0;
        int k = 0;
        for (int i = 0; i < n; i++)
            if (rows[i].n == len && !strcmp(rows[i].task, task)
                && !strcmp(rows[i].pe, pe) && !strcmp(rows[i].method, method)
                && !strcmp(rows[i].tag, tag)) {
                sum += rows[i].acc;
                lsum += rows[i].loss;
                lo = fmin(lo, rows[i].acc);
                hi = fmax(hi, rows[i].acc);
                k++;
            }
        if (k == 0) continue;
        if (out == NULL) {
            snprintf(name, sizeof name, "evidence-%s-%s-%s-%s.dat", task, pe,
                     method, tag);
            out = bd_open(dir, name);
            fprintf(out, "n acc lo hi loss seeds\n");
        }
        fprintf(out, "%d %.2f %.2f %.2f %.4f %d\n", len, 100 * sum / k,
                100 * (sum / k - lo), 100 * (hi - sum / k), lsum / k, k);
        snprintf(name, sizeof name, "ev-%s-%s-%s-%s-%d", task, pe, method,
                 tag, len);
        bd_def(f, name, "%.0f", 100 * sum / k);
        snprintf(name, sizeof name, "ev-%s-%s-%s-%s-%d-lo", task, pe,
                 method, tag, len);
        bd_def(f, name, "%.0f", 100 * lo);
        snprintf(name, sizeof name, "ev-%s-%s-%s-%s-%d-hi", task, pe,
                 method, tag, len);
        bd_def(f, name, "%.0f", 100 * hi);
    }
    if (out) bd_close(out);
}
/* W7.8 The King James corpus */
static void corpus_def_count(FILE *f, const char *key, size_t v)
{
    char digits[32], out[64];
    int n = snprintf(digits, sizeof digits, "%zu", v), k = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            k += snprintf(out + k, sizeof out - (size_t)k, "\\,");
        out[k++] = digits[i];
    }
    out[k] = '\0';
    bd_def(f, key, "%s", out);
}

int bookdata_corpus(const char *dir)
{
    static const char *part_names[] = {"train", "validation", "test"};
    char err[512];
    rope_corpus c;
    if (rope_corpus_load("build/corpus/kjv.txt", &c, err, sizeof err) != 0) {
        fprintf(stderr, "bookdata: %s (run make corpus)\n", err);
        return 1;
    }
    FILE *f = bd_numbers_open(dir, "corpus");
    bd_def(f, "corpus-docs", "%d", c.n_docs);
    corpus_def_count(f, "corpus-bytes", c.text_len);
    bd_def(f, "corpus-version", "%s", strchr(c.source, ' ')
                                          ? strchr(c.source, ' ') + 1 : "?");
    {
        size_t verses = 0;
        int longest = 0, shortest = 0, n_short = 0;
        char short_books[256] = "";
        for (size_t i = 0; i < c.text_len; i++)
            verses += c.text[i] == '\n';
        for (int d = 0; d < c.n_docs; d++) {
            longest = c.docs[d].len > c.docs[longest].len ? d : longest;
            shortest = c.docs[d].len < c.docs[shortest].len ? d : shortest;
            if (c.docs[d].len < 4096)
                snprintf(short_books + strlen(short_books),
                         sizeof short_books - strlen(short_books), "%s%s",
                         n_short++ ? ", " : "", c.docs[d].name);
        }
        corpus_def_count(f, "corpus-verses", verses);
        bd_def(f, "corpus-longest", "%s", c.docs[longest].name);
        corpus_def_count(f, "corpus-longest-chars", c.docs[longest].len);
        bd_def(f, "corpus-shortest", "%s", c.docs[shortest].name);
        corpus_def_count(f, "corpus-shortest-chars", c.docs[shortest].len);
        bd_def(f, "corpus-short-docs", "%d", n_short);
        bd_def(f, "corpus-short-books", "%s", short_books);
    }
    for (int part = 0; part < 3; part++) {
        char key[64], books[256] = "";
        int n_docs = 0;
        size_t chars = 0;
        for (int d = 0; d < c.n_docs; d++)
            if ((int)c.docs[d].part == part) {
                snprintf(books + strlen(books), sizeof books - strlen(books),
                         "%s%s", n_docs++ ? ", " : "", c.docs[d].name);
                chars += c.docs[d].len;
            }
        snprintf(key, sizeof key, "corpus-%s-docs", part_names[part]);
        bd_def(f, key, "%d", n_docs);
        snprintf(key, sizeof key, "corpus-%s-chars", part_names[part]);
        corpus_def_count(f, key, chars);
        snprintf(key, sizeof key, "corpus-%s-books", part_names[part]);
        if (part != ROPE_CORPUS_TRAIN)
            bd_def(f, key, "%s", books);
    }
    {
        int seen[256] = {0}, distinct = 0, shortest = -1;
        size_t unknown = 0;
        for (size_t i = 0; i < c.text_len; i++)
            distinct += seen[(unsigned char)c.text[i]]++ == 0;
        for (int d = 0; d < c.n_docs; d++) {
            if (c.docs[d].part == ROPE_CORPUS_TRAIN)
                continue;
            for (size_t i = 0; i < c.docs[d].len; i++)
                unknown += c.id_of[(unsigned char)c.text[c.docs[d].offset + i]]
                           == ROPE_CORPUS_UNKNOWN;
            if (shortest < 0 || c.docs[d].len < c.docs[shortest].len)
                shortest = d;
        }
        bd_def(f, "corpus-vocab-chars", "%d", distinct);
        bd_def(f, "corpus-vocab", "%d", c.vocab_size);
        bd_def(f, "corpus-unknown", "%zu", unknown);
        bd_def(f, "corpus-heldout-shortest", "%s", c.docs[shortest].name);
        corpus_def_count(f, "corpus-heldout-shortest-chars",
                         c.docs[shortest].len);
    }
    bd_close(f);
    rope_corpus_free(&c);
    return 0;
}

/* W7.5 The book's data */
int bookdata_evidence(const char *dir)
{
    static ev_row rows[4096];
    int n = ev_read_results("book/data/evidence/results.tsv", rows, 4096);
    FILE *f = bd_numbers_open(dir, "evidence");
    rope_ev_config c;
    rope_ev_model m;
    if (n <= 0) {
        fprintf(stderr, "bookdata: no results in book/data/evidence\n");
        return 1;
    }
    rope_ev_config_default(&c, ROPE_EV_ROPE);
    rope_ev_init(&m, &c, 1);
    bd_def(f, "ev-params", "%zu", m.n_params);
    rope_ev_free(&m);
    bd_def(f, "ev-lag-k", "%d", ROPE_EV_LAG_K);
    bd_def(f, "ev-ffn", "%d", c.intermediate_size);
    bd_def(f, "ev-chance", "%.0f", 100.0 / c.vocab_size);
    {
        FILE *in = fopen("book/data/evidence/provenance.txt", "r");
        char line[512], key[64], val[448];
        while (in && fgets(line, sizeof line, in))
            if (sscanf(line, "%63s %447[^\n]", key, val) == 2
                && strspn(val, "0123456789.") == strlen(val)) {
                char name[80];
                snprintf(name, sizeof name, "ev-%s", key);
                bd_def(f, name, "%s", val);
            }
        if (in) fclose(in);
    }
    {
        static const char *const tasks[] = {"copy", "lag"};
        static const char *const pes[] = {"nope", "sin"};
        static const char *const methods[] = {"plain", "pi", "ntk", "dynamic",
                                              "yarn-minimind", "yarn-hf"};
        for (int t = 0; t < 2; t++) {
            for (int p = 0; p < 2; p++)
                ev_curve(dir, f, rows, n, tasks[t], pes[p], "plain", "none");
            for (int me = 0; me < 6; me++)
                ev_curve(dir, f, rows, n, tasks[t], "rope", methods[me], "none");
            ev_curve(dir, f, rows, n, tasks[t], "rope", "pi", "ft");
            ev_curve(dir, f, rows, n, tasks[t], "rope", "yarn-hf", "ft");
        }
    }
    bd_close(f);
    return 0;
}
