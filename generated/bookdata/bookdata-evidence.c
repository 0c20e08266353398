/* W7.5 The book's data */
/* bookdata-evidence.c: the figures and numbers of chapter 7. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

static int lm_vocab_size(size_t *train_tokens)
{
    rope_corpus c;
    rope_corpus_split sp;
    char err[256];
    int v = 0;
    *train_tokens = 0;
    if (rope_corpus_load("build/corpus/kjv.txt", &c, err, sizeof err) == 0) {
        v = c.vocab_size;
        if (rope_corpus_split_make(&c, ROPE_CORPUS_TRAIN, 0, &sp, err,
                                   sizeof err) == 0) {
            *train_tokens = sp.tokens;
            rope_corpus_split_free(&sp);
        }
        rope_corpus_free(&c);
    }
    return v;
}
static long LM_L; /* the training length: the shortest length evaluated */

static const char *lm_base_name(double base) /* 1e4, 1e6 */
{
    static char buf[4][16];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, 16, "1e%d", (int)lround(log10(base)));
    return b;
}

typedef struct lm_row {
    char kind[8], pe[8], model[24], method[24];
    double base, x, v[8];
    int seed;
} lm_row;

static int lm_read_results(const char *path, lm_row *rows, int cap)
{
    FILE *in = fopen(path, "r");
    char line[512];
    int n = 0;
    if (in == NULL) {
        perror(path);
        return -1;
    }
    while (n < cap && fgets(line, sizeof line, in)) {
        lm_row *r = &rows[n];
        memset(r, 0, sizeof *r);
        if (line[0] == '#')
            continue;
        if (!strncmp(line, "train", 5)) {
            if (sscanf(line, "%7s %7s %lf %d %23s %lf %lf %lf", r->kind, r->pe,
                       &r->base, &r->seed, r->model, &r->x, &r->v[0],
                       &r->v[1]) == 8)
                n++;
        } else if (sscanf(line, "%7s %7s %lf %d %23s %23s %lf %lf %lf %lf %lf "
                          "%lf %lf %lf", r->kind, r->pe, &r->base, &r->seed,
                          r->model, r->method, &r->x, &r->v[0], &r->v[1],
                          &r->v[2], &r->v[3], &r->v[4], &r->v[5],
                          &r->v[6]) >= 8)
            n++;
    }
    fclose(in);
    return n;
}
static double lm_t975(int dof) /* beyond ten: the normal's 1.96 */
{
    static const double t[] = {NAN, 12.706, 4.303, 3.182, 2.776, 2.571,
                               2.447, 2.365, 2.306, 2.262, 2.228};
    return dof >= 1 && dof <= 10 ? t[dof] : 1.96;
}

typedef struct lm_stat {
    double mean, half; /* the interval is mean +- half */
    int k;
} lm_stat;

static lm_stat lm_stat_of(const double *y, int k)
{
    lm_stat s = {NAN, NAN, k};
    double sum = 0, ss = 0;
    for (int i = 0; i < k; i++)
        sum += y[i];
    if (k == 0)
        return s;
    s.mean = sum / k;
    for (int i = 0; i < k; i++)
        ss += (y[i] - s.mean) * (y[i] - s.mean);
    s.half = k > 1 ? lm_t975(k - 1) * sqrt(ss / (k - 1)) / sqrt((double)k)
                   : NAN;
    return s;
}

/* The values column `col' of the rows of one kind, pe, base, model,
   method at x, ordered by seed (at most 64). */
static int lm_select(const lm_row *rows, int n, const char *kind,
                     const char *pe, double base, const char *model,
                     const char *method, double x, int col, double *y,
                     int *seeds)
{
    int k = 0;
    for (int i = 0; i < n && k < 64; i++) {
        const lm_row *r = &rows[i];
        if (strcmp(r->kind, kind) || strcmp(r->pe, pe) || r->base != base
            || strcmp(r->model, model) || (method && strcmp(r->method, method))
            || r->x != x)
            continue;
        int at = k++;
        while (at > 0 && seeds[at - 1] > r->seed) {
            seeds[at] = seeds[at - 1];
            y[at] = y[at - 1];
            at--;
        }
        seeds[at] = r->seed;
        y[at] = r->v[col];
    }
    return k;
}
static void lm_curve(const char *dir, FILE *f, const lm_row *rows, int n,
                     const char *kind, const char *pe, double base,
                     const char *model, const char *method, long first,
                     long last, long step, int doubling)
{
    char name[160], tag[128];
    FILE *out = NULL;
    snprintf(tag, sizeof tag, "%s-%s-%s-%s-%s", kind, pe, lm_base_name(base),
             model, method);
    for (long x = first; x <= last; x = doubling ? 2 * x : x + step) {
        double y[64];
        int seeds[64], k = lm_select(rows, n, kind, pe, base, model, method,
                                     (double)x, 0, y, seeds);
        lm_stat s = lm_stat_of(y, k);
        if (k == 0)
            continue;
        if (out == NULL) {
            snprintf(name, sizeof name, "lm-%s.dat", tag);
            out = bd_open(dir, name);
            fprintf(out, "x ppl lo hi loss seeds\n");
        }
        fprintf(out, "%ld %.4f %.4f %.4f %.5f %d\n", x, exp(s.mean),
                exp(s.mean - (k > 1 ? s.half : 0)),
                exp(s.mean + (k > 1 ? s.half : 0)), s.mean, k);
        if (strcmp(kind, "ppl") && x % LM_L != 0
            && x != last + 1 - step)
            continue; /* positions: the multiples of L and the last */
        const char *key = strcmp(kind, "ppl") ? tag : tag + 4;
        snprintf(name, sizeof name, "lm-%s-%ld", key, x);
        bd_def(f, name, "%.2f", exp(s.mean));
        snprintf(name, sizeof name, "lm-%s-%ld-lo", key, x);
        bd_def(f, name, "%.2f", exp(s.mean - (k > 1 ? s.half : 0)));
        snprintf(name, sizeof name, "lm-%s-%ld-hi", key, x);
        bd_def(f, name, "%.2f", exp(s.mean + (k > 1 ? s.half : 0)));
    }
    if (out)
        bd_close(out);
}
static void lm_diff_x(FILE *f, const lm_row *rows, int n, const char *name,
                      const char *pe_a, double base_a, const char *model_a,
                      const char *method_a, long x_a, const char *pe_b,
                      double base_b, const char *model_b,
                      const char *method_b, long x_b)
{
    double ya[64], yb[64], d[64] = {0};
    int sa[64], sb[64], k = 0;
    int ka = lm_select(rows, n, "ppl", pe_a, base_a, model_a, method_a,
                       (double)x_a, 0, ya, sa);
    int kb = lm_select(rows, n, "ppl", pe_b, base_b, model_b, method_b,
                       (double)x_b, 0, yb, sb);
    for (int i = 0, j = 0; i < ka && j < kb;)
        if (sa[i] == sb[j])
            d[k++] = ya[i++] - yb[j++];
        else if (sa[i] < sb[j])
            i++;
        else
            j++;
    lm_stat s = lm_stat_of(d, k);
    double half = k > 1 ? s.half : 0; /* one seed: no interval */
    char key[128];
    if (k < 1)
        return;
    snprintf(key, sizeof key, "lmd-%s", name);
    bd_def(f, key, "%.3f", exp(s.mean));
    snprintf(key, sizeof key, "lmd-%s-lo", name);
    bd_def(f, key, "%.3f", exp(s.mean - half));
    snprintf(key, sizeof key, "lmd-%s-hi", name);
    bd_def(f, key, "%.3f", exp(s.mean + half));
}

static void lm_diff(FILE *f, const lm_row *rows, int n, const char *name,
                    const char *pe_a, double base_a, const char *model_a,
                    const char *method_a, const char *pe_b, double base_b,
                    const char *model_b, const char *method_b, long x)
{
    lm_diff_x(f, rows, n, name, pe_a, base_a, model_a, method_a, x, pe_b,
              base_b, model_b, method_b, x);
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
    static lm_row rows[20000];
    int n = lm_read_results("book/data/evidence/results.tsv", rows, 20000);
    FILE *f = bd_numbers_open(dir, "evidence");
    rope_lm_config c;
    rope_lm m;
    if (n <= 0) {
        fprintf(stderr, "bookdata: no results in book/data/evidence\n");
        return 1;
    }
    rope_lm_config_defaults(&c);
    size_t train_tokens;
    c.vocab_size = lm_vocab_size(&train_tokens);
    bd_def(f, "lm-train-mchars", "%.1f", (double)train_tokens / 1e6);
    if (rope_lm_init(&m, &c, 1) == 0) {
        bd_def(f, "lm-params", "%zu", m.n_params);
        rope_lm_free(&m);
    }
    bd_def(f, "lm-vocab", "%d", c.vocab_size);
    LM_L = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].kind, "ppl") && (LM_L == 0 || rows[i].x < LM_L))
            LM_L = (long)rows[i].x;
    bd_def(f, "lm-L", "%ld", LM_L);
    bd_def(f, "lm-16L", "%ld", 16 * LM_L);
    for (int i = 0, got = 0; i < n && got != 3; i++)
        if (!strcmp(rows[i].kind, "ppl") && (rows[i].x == LM_L
                                             || rows[i].x == 16 * LM_L)) {
            int top = rows[i].x != LM_L;
            if (got & (1 << top))
                continue;
            got |= 1 << top;
            bd_def(f, top ? "lm-test-windows-16L" : "lm-test-windows-L",
                   "%.0f", rows[i].v[1]);
        }
    {
        float inv[8];
        rope_default_inv_freq(inv, 16, 1e4);
        bd_def(f, "lm-turns-1e4", "%d", rope_count_full_turns(inv, 16, LM_L));
        rope_default_inv_freq(inv, 16, 1e6);
        bd_def(f, "lm-turns-1e6", "%d", rope_count_full_turns(inv, 16, LM_L));
        bd_def(f, "lm-xi", "%.3f", rope_yarn_get_mscale(4, 1));
    }
    bd_def(f, "lm-ffn", "%d", c.block.intermediate_size);
    {
        FILE *in = fopen("book/data/evidence/provenance.txt", "r");
        char line[512], key[64], val[448];
        while (in && fgets(line, sizeof line, in))
            if (sscanf(line, "%63s %447[^\n]", key, val) == 2) {
                char name[80];
                snprintf(name, sizeof name, "lm-prov-%s", key);
                if (!strcmp(key, "commit"))
                    val[12] = 0;
                if (!strcmp(key, "seconds"))
                    bd_def(f, "lm-prov-minutes", "%.0f", atof(val) / 60);
                else if (!strcmp(key, "appended")) { /* "..., N s" */
                    const char *comma = strrchr(val, ',');
                    bd_def(f, "lm-prov-appended-minutes", "%.0f",
                           comma ? atof(comma + 1) / 60 : 0.0);
                } else if (strcmp(key, "command") != 0)
                    bd_def(f, name, "%s", val);
            }
        if (in)
            fclose(in);
    }
    {
        static const char *const pes[] = {"nope", "sin", "rope", "rope"};
        static const double bases[] = {1e4, 1e4, 1e4, 1e6};
        static const char *const models[] = {"pre", "ft-pi-10", "ft-yarn-hf-10",
                                             "ft-pi-30", "ft-yarn-hf-30"};
        double pre_tokens = 1;
        for (int p = 0; p < 4; p++)
            for (int mo = 0; mo < 5; mo++) {
                double y[64], tokens[64];
                int k = 0, seeds[64];
                for (int i = 0; i < n && k < 64; i++)
                    if (!strcmp(rows[i].kind, "train") && !strcmp(rows[i].pe, pes[p])
                        && rows[i].base == bases[p]
                        && !strcmp(rows[i].model, models[mo])) {
                        int seen = 0; /* one row per seed: the first */
                        for (int j = 0; j < k; j++)
                            seen |= seeds[j] == rows[i].seed;
                        if (seen)
                            continue;
                        seeds[k] = rows[i].seed;
                        y[k] = rows[i].v[1];
                        tokens[k++] = rows[i].x;
                    }
                if (k == 0)
                    continue;
                lm_stat s = lm_stat_of(y, k);
                char name[96];
                snprintf(name, sizeof name, "lm-val-%s-%s-%s", pes[p],
                         lm_base_name(bases[p]), models[mo]);
                bd_def(f, name, "%.3f", s.mean);
                snprintf(name, sizeof name, "lm-val-%s-%s-%s-half", pes[p],
                         lm_base_name(bases[p]), models[mo]);
                bd_def(f, name, "%.3f", k > 1 ? s.half : 0.0);
                snprintf(name, sizeof name, "lm-seeds-%s-%s-%s", pes[p],
                         lm_base_name(bases[p]), models[mo]);
                bd_def(f, name, "%d", k);
                snprintf(name, sizeof name, "lm-tokens-%s-%s-%s", pes[p],
                         lm_base_name(bases[p]), models[mo]);
                bd_def(f, name, "%.1f", tokens[0] / 1e6);
                if (p == 2 && mo == 0)
                    pre_tokens = tokens[0];
                if (p == 2 && (mo == 1 || mo == 3))
                    bd_def(f, mo < 3 ? "lm-ft-percent" : "lm-ft-long-percent",
                           "%.0f", 100 * tokens[0] / pre_tokens);
            }
    }
    {
        static const char *const methods[] = {
            "rope", "pi", "ntk", "dynamic", "yarn-hf", "yarn-hf-notemp",
            "yarn-minimind", "yarn-minimind-temp"};
        static const double bases[] = {1e4, 1e6};
        static const char *const kinds[] = {"ppl", "pos"};
        for (int k = 0; k < 2; k++) {
            int pos = k == 1;
            long first = pos ? 0 : LM_L, last = pos ? 16 * LM_L - 1 : 16 * LM_L;
            long step = LM_L / 4;
            lm_curve(dir, f, rows, n, kinds[k], "nope", 1e4, "pre", "none",
                     first, last, step, !pos);
            lm_curve(dir, f, rows, n, kinds[k], "sin", 1e4, "pre", "none",
                     first, last, step, !pos);
            for (int b = 0; b < 2; b++)
                for (int me = 0; me < 8; me++)
                    lm_curve(dir, f, rows, n, kinds[k], "rope", bases[b], "pre",
                             methods[me], first, last, step, !pos);
            lm_curve(dir, f, rows, n, kinds[k], "rope", 1e4, "ft-pi-10", "pi",
                     first, last, step, !pos);
            lm_curve(dir, f, rows, n, kinds[k], "rope", 1e4, "ft-yarn-hf-10",
                     "yarn-hf", first, last, step, !pos);
            lm_curve(dir, f, rows, n, kinds[k], "rope", 1e4, "ft-pi-30", "pi",
                     first, last, step, !pos);
            lm_curve(dir, f, rows, n, kinds[k], "rope", 1e4, "ft-yarn-hf-30",
                     "yarn-hf", first, last, step, !pos);
        }
    }
    {
        long L = LM_L;
        lm_diff(f, rows, n, "temp-4L", "rope", 1e4, "pre", "yarn-hf", "rope", 1e4,
                "pre", "yarn-hf-notemp", 4 * L);
        lm_diff(f, rows, n, "temp-L", "rope", 1e4, "pre", "yarn-hf", "rope", 1e4,
                "pre", "yarn-hf-notemp", L);
        lm_diff(f, rows, n, "yarn-rope-4L", "rope", 1e4, "pre", "yarn-hf", "rope",
                1e4, "pre", "rope", 4 * L);
        lm_diff(f, rows, n, "yarn-rope-L", "rope", 1e4, "pre", "yarn-hf", "rope",
                1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "ntk-rope-L", "rope", 1e4, "pre", "ntk", "rope", 1e4,
                "pre", "rope", L);
        lm_diff(f, rows, n, "dyn-ntk-L", "rope", 1e4, "pre", "dynamic", "rope",
                1e4, "pre", "ntk", L);
        lm_diff(f, rows, n, "dyn-ntk-8L", "rope", 1e4, "pre", "dynamic", "rope",
                1e4, "pre", "ntk", 8 * L);
        lm_diff(f, rows, n, "temp-8L", "rope", 1e4, "pre", "yarn-hf", "rope", 1e4,
                "pre", "yarn-hf-notemp", 8 * L);
        lm_diff(f, rows, n, "yarn-rope-8L", "rope", 1e4, "pre", "yarn-hf", "rope",
                1e4, "pre", "rope", 8 * L);
        lm_diff(f, rows, n, "b6-b4-8L", "rope", 1e6, "pre", "rope", "rope", 1e4,
                "pre", "rope", 8 * L);
        lm_diff(f, rows, n, "b6yarn-b4yarn-16L", "rope", 1e6, "pre", "yarn-hf",
                "rope", 1e4, "pre", "yarn-hf", 16 * L);
        lm_diff(f, rows, n, "ftyarn-ftpi-L", "rope", 1e4, "ft-yarn-hf-10",
                "yarn-hf", "rope", 1e4, "ft-pi-10", "pi", L);
        lm_diff(f, rows, n, "ft30-ft10-yarn-4L", "rope", 1e4, "ft-yarn-hf-30",
                "yarn-hf", "rope", 1e4, "ft-yarn-hf-10", "yarn-hf", 4 * L);
        lm_diff(f, rows, n, "ft30-ft10-pi-4L", "rope", 1e4, "ft-pi-30", "pi",
                "rope", 1e4, "ft-pi-10", "pi", 4 * L);
        lm_diff(f, rows, n, "ft30yarn-ft30pi-4L", "rope", 1e4, "ft-yarn-hf-30",
                "yarn-hf", "rope", 1e4, "ft-pi-30", "pi", 4 * L);
        lm_diff(f, rows, n, "ft30pi-rope-L", "rope", 1e4, "ft-pi-30", "pi", "rope",
                1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "ft30yarn-rope-L", "rope", 1e4, "ft-yarn-hf-30",
                "yarn-hf", "rope", 1e4, "pre", "rope", L);
        lm_diff_x(f, rows, n, "ft30yarn-4L-L", "rope", 1e4, "ft-yarn-hf-30",
                  "yarn-hf", 4 * L, "rope", 1e4, "pre", "rope", L);
        lm_diff_x(f, rows, n, "ft30pi-4L-L", "rope", 1e4, "ft-pi-30", "pi", 4 * L,
                  "rope", 1e4, "pre", "rope", L);
        lm_diff_x(f, rows, n, "rope-2L-L", "rope", 1e4, "pre", "rope", 2 * L,
                  "rope", 1e4, "pre", "rope", L);
        lm_diff_x(f, rows, n, "ftyarn-4L-L", "rope", 1e4, "ft-yarn-hf-10",
                  "yarn-hf", 4 * L, "rope", 1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "mm-hf-4L", "rope", 1e4, "pre", "yarn-minimind",
                "rope", 1e4, "pre", "yarn-hf-notemp", 4 * L);
        lm_diff(f, rows, n, "ftyarn-ftpi-4L", "rope", 1e4, "ft-yarn-hf-10",
                "yarn-hf", "rope", 1e4, "ft-pi-10", "pi", 4 * L);
        lm_diff(f, rows, n, "ftyarn-yarn-4L", "rope", 1e4, "ft-yarn-hf-10",
                "yarn-hf", "rope", 1e4, "pre", "yarn-hf", 4 * L);
        lm_diff(f, rows, n, "ftpi-rope-L", "rope", 1e4, "ft-pi-10", "pi", "rope",
                1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "ftyarn-rope-L", "rope", 1e4, "ft-yarn-hf-10",
                "yarn-hf", "rope", 1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "sin-rope-L", "sin", 1e4, "pre", "none", "rope", 1e4,
                "pre", "rope", L);
        lm_diff(f, rows, n, "nope-rope-L", "nope", 1e4, "pre", "none", "rope",
                1e4, "pre", "rope", L);
        lm_diff(f, rows, n, "b6-b4-L", "rope", 1e6, "pre", "rope", "rope", 1e4,
                "pre", "rope", L);
        lm_diff(f, rows, n, "b6-b4-4L", "rope", 1e6, "pre", "rope", "rope", 1e4,
                "pre", "rope", 4 * L);
    }
    {
        static const struct {
            const char *pe, *model, *method, *label;
            double base;
        } rows_of[] = {
            {"nope", "pre", "none", "NoPE", 1e4},
            {"sin", "pre", "none", "sinusoidal", 1e4},
            {"rope", "pre", "rope", "RoPE $10^4$, plain", 1e4},
            {"rope", "pre", "pi", "\\quad PI", 1e4},
            {"rope", "pre", "ntk", "\\quad NTK-aware", 1e4},
            {"rope", "pre", "dynamic", "\\quad dynamic NTK", 1e4},
            {"rope", "pre", "yarn-hf", "\\quad YaRN", 1e4},
            {"rope", "ft-pi-10", "pi", "\\quad PI, fine-tuned", 1e4},
            {"rope", "ft-yarn-hf-10", "yarn-hf", "\\quad YaRN, fine-tuned", 1e4},
            {"rope", "pre", "rope", "RoPE $10^6$, plain", 1e6},
        };
        FILE *t = bd_open(dir, "evidence-passkey.tex");
        long L = LM_L, right_all = 0, trials_all = 0;
        for (size_t r = 0; r < sizeof rows_of / sizeof *rows_of; r++) {
            long row_right = 0, row_trials = 0;
            fprintf(t, "%s", rows_of[r].label);
            for (long len = L / 2; len <= 16 * L; len *= 2) {
                double gain[64], sum[64] = {0};
                int seeds[64], cnt[64] = {0}, k = 0;
                for (int i = 0; i < n; i++) {
                    const lm_row *w = &rows[i];
                    if (strcmp(w->kind, "passkey") || strcmp(w->pe, rows_of[r].pe)
                        || w->base != rows_of[r].base
                        || strcmp(w->model, rows_of[r].model)
                        || strcmp(w->method, rows_of[r].method) || w->x != len)
                        continue;
                    int at = 0;
                    while (at < k && seeds[at] != w->seed)
                        at++;
                    if (at == k && k < 64)
                        seeds[k++] = w->seed;
                    row_right += (long)w->v[1];
                    row_trials += (long)w->v[3];
                    sum[at] += w->v[6] - w->v[4];
                    cnt[at]++;
                }
                for (int i = 0; i < k; i++)
                    gain[i] = sum[i] / cnt[i];
                lm_stat s = lm_stat_of(gain, k);
                if (k == 0)
                    fprintf(t, " & ---");
                else
                    fprintf(t, " & $%+.2f \\pm %.2f$", s.mean,
                            k > 1 ? s.half : 0.0);
            }
            fprintf(t, " & %ld/%ld\\\\\n", row_right, row_trials);
            right_all += row_right;
            trials_all += row_trials;
        }
        bd_close(t);
        bd_def(f, "lm-passkey-right", "%ld", right_all);
        bd_def(f, "lm-passkey-trials", "%ld", trials_all);
    }
    {
        static lm_row re[4096];
        int nr = lm_read_results("book/data/evidence/rerun/results.tsv", re,
                                 4096);
        int total = 0, inside = 0, fair = 0, m_seeds = 0;
        for (int i = 0; i < nr; i++) {
            double yb[64], yr[64];
            int sb[64], sr[64];
            if (strcmp(re[i].kind, "ppl"))
                continue;
            int seen = 0; /* each point once: at its first row */
            for (int j = 0; j < i && !seen; j++)
                seen = !strcmp(re[j].kind, "ppl") && !strcmp(re[j].pe, re[i].pe)
                       && re[j].base == re[i].base
                       && !strcmp(re[j].model, re[i].model)
                       && !strcmp(re[j].method, re[i].method) && re[j].x == re[i].x;
            if (seen)
                continue;
            int k = lm_select(rows, n, "ppl", re[i].pe, re[i].base, re[i].model,
                              re[i].method, re[i].x, 0, yb, sb);
            int m = lm_select(re, nr, "ppl", re[i].pe, re[i].base, re[i].model,
                              re[i].method, re[i].x, 0, yr, sr);
            if (k < 2 || m < 1)
                continue;
            lm_stat b = lm_stat_of(yb, k), r = lm_stat_of(yr, m);
            double wide = b.half * sqrt((double)k) * sqrt(1.0 / k + 1.0 / m);
            total++;
            inside += fabs(r.mean - b.mean) <= b.half;
            fair += fabs(r.mean - b.mean) <= wide;
            m_seeds = m;
        }
        bd_def(f, "lm-rerun-points", "%d", total);
        bd_def(f, "lm-rerun-inside", "%d", inside);
        bd_def(f, "lm-rerun-fair", "%d", fair);
        bd_def(f, "lm-rerun-seeds", "%d", m_seeds);
    }
    bd_close(f);
    return 0;
}
