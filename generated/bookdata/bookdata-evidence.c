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

    \section{A float32 MiniMind block and its backward}\label{sec:w-ev-f32}

    The model of chapter~\ref{ch:evidence} computes in double precision
    and leaves out MiniMind's [[q_norm]] and [[k_norm]].  This section
    builds, as library code for a float32 trainer, one block exactly as
    MiniMind's [[MiniMindBlock]] (lines 178--194) computes it, with its
    backward: the pair \file{evidence-f32.h} and \file{evidence-f32.c}, one
    concern (a float32 block) in one file pair, with the public names
    [[rope_f32_*]].  It does not replace the double-precision model: the
    experiments of chapter~\ref{ch:evidence} keep using that one.

    \paragraph{The block, as MiniMind computes it.}
    With $X$ the block's input, $[N_{\mathrm{batch}}, N, \dmodel]$, read as
    $N_{\mathrm{batch}}N$ rows, the block computes, in order:
    \begin{enumerate}
    \item $X_1 = \mathrm{RMSNorm}(X)$ with the weights of
      [[input_layernorm]]; MiniMind's [[RMSNorm]] (lines 50--60) is
      $\mathrm{w}_i x_i\,\mathrm{rms}^{-1}$ with $\mathrm{rms}^{-1} =
      (\mathrm{mean}_j\, x_j^2 + \mathrm{eps})^{-1/2}$, the mean taken over
      the last axis (here $\dmodel$ wide);
    \item $Q = X_1W_q\T$, $K = X_1W_k\T$, $V = X_1W_v\T$ ([[q_proj]],
      [[k_proj]], [[v_proj]], here the weights of all heads at once), viewed as $[N_{\mathrm{batch}}, N, h, d]$
      and $[N_{\mathrm{batch}}, N, h_{kv}, d]$;
    \item [[q_norm]] and [[k_norm]], RMSNorms of width $d$ with their own
      weights, applied to each head vector of $Q$ and of $K$: line 117
      applies [[q_norm]] to [[xq]] and [[k_norm]] to [[xk]] after they
      are viewed as [[[bsz, seq_len, n_local_heads, head_dim]]], so the
      mean runs over [[head_dim]] only; $V$ is not normalised;
    \item the rotation of chapter~\ref{ch:rotary} of the normalised $Q$
      and $K$, \emph{after} the norm (line 119,
      [[apply_rotary_pos_emb]]), with the tables of chapters~\ref{ch:rotary}--\ref{ch:scaling} (half
      pairing; a YaRN table carries its attention factor $\xi$ in both
      columns);
    \item causal attention with grouped heads, query head $H$ reading key
      and value head $G = \lfloor H/n_{\mathrm{rep}}\rfloor$, giving $O$,
      $[N_{\mathrm{batch}}, N, h, d]$;
    \item $X_2 = X + OW_o\T$ ([[o_proj]]), the first residual;
    \item $X_3 = \mathrm{RMSNorm}(X_2)$ ([[post_attention_layernorm]]);
    \item $Y = X_2 + \bigl(\mathrm{silu}(X_3W_{\mathrm{gate}}\T) \odot
      X_3W_{\mathrm{up}}\T\bigr)W_{\mathrm{down}}\T$, MiniMind's
      [[FeedForward]] (lines 136--146) and the second residual.
    \end{enumerate}
    After the last block, MiniMind's model applies one more RMSNorm
    ([[norm]]) and the head; with [[tie_word_embeddings]] the head's
    weight is the embedding matrix $W_{\mathrm{emb}}$, $[N_{\mathrm{voc}},
    \dmodel]$, so the logits of a row $x$ are $xW_{\mathrm{emb}}\T$, and
    the loss is the mean cross-entropy over the rows that have a target.

    \paragraph{The interface.}
    A block's shape names MiniMind's configuration fields.  Its weights
    sit in one float array, in the order of MiniMind's modules, each
    weight of a linear layer stored as [[nn.Linear]] stores it,
    $[\text{out}, \text{in}]$:
    \begin{center}\small
    \begin{tabular}{@{}lll@{}}
    \toprule
    offset field & MiniMind's module & shape \\
    \midrule
    [[input_layernorm]] & [[input_layernorm.weight]] & $[\dmodel]$ \\
    [[q_proj]] & [[self_attn.q_proj.weight]] & $[hd, \dmodel]$ \\
    [[k_proj]], [[v_proj]] & [[self_attn.k_proj.weight]], [[v_proj]] & $[h_{kv}d, \dmodel]$ \\
    [[o_proj]] & [[self_attn.o_proj.weight]] & $[\dmodel, hd]$ \\
    [[q_norm]], [[k_norm]] & [[self_attn.q_norm.weight]], [[k_norm]] & $[d]$ \\
    [[post_attention_layernorm]] & [[post_attention_layernorm.weight]] & $[\dmodel]$ \\
    [[gate_proj]], [[up_proj]] & [[mlp.gate_proj.weight]], [[up_proj]] & $[d_{\mathrm{ff}}, \dmodel]$ \\
    [[down_proj]] & [[mlp.down_proj.weight]] & $[\dmodel, d_{\mathrm{ff}}]$ \\
    \bottomrule
    \end{tabular}
    \end{center}
    The forward keeps, for the backward, the activations listed in
    [[rope_f32_acts]] with their shapes; all of them are $O(N)$ per
    sequence, none is $N\times N$: the attention weights are not kept
    (the backward recomputes them, below).

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
