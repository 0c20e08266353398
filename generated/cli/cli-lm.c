/* W7.12 The command rope lm */
/* cli-lm.c: `rope lm', chapter 7's experiments on the King James text */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "corpus.h"
#include "lm-f32.h"

typedef struct lm_args {
    int pe; /* rope_lm_pe */
    double base, factor;
    long seed, tokens, len, batch, threads, ft_percent, eval_tokens;
    long trials;
    double lr;
    const char *corpus;
    int ft_only; /* --ft-only: measure only the fine-tuned copies */
} lm_args;

static const char *const lm_pe_names[] = {"nope", "sin", "rope"};

typedef struct lm_run { /* what every phase of one run shares */
    const lm_args *a;
    rope_corpus corpus;
    rope_corpus_split train, valid, test;
    rope_lm model;
    const char *pe_name;
    double t0;
} lm_run;

/* The tables of method m at length n for run r, or NULL for a model
   without RoPE; the caller frees *cos_out. */
static int lm_tables(const lm_run *r, rope_lm_method m, long n,
                     float **cos_out, float **sin_out)
{
    int d = r->model.c.block.head_dim, e;
    *cos_out = *sin_out = NULL;
    if (m == ROPE_LM_M_NONE)
        return 0;
    *cos_out = malloc(2 * (size_t)n * d * sizeof **cos_out);
    if (*cos_out == NULL)
        return cli_error("out of memory: the tables of %ld positions", n);
    *sin_out = *cos_out + (size_t)n * d;
    e = rope_lm_tables(m, r->a->base, r->a->factor, r->a->len, n, d,
                       *cos_out, *sin_out);
    if (e != 0)
        return cli_error("lm: %s: %s", rope_lm_method_names[m],
                         rope_scaling_strerror(e));
    return 0;
}
/* Fill b's tokens and targets with `batch' windows of n + 1 tokens of
   split sp drawn with *state. */
static int lm_draw(const rope_corpus_split *sp, rope_lm_buffers *b,
                   uint64_t *state, int *win)
{
    int n = b->s.seq_len, doc;
    size_t start;
    for (int k = 0; k < b->s.batch; k++) {
        if (rope_corpus_window(sp, (size_t)n + 1, state, win, &doc, &start))
            return cli_error("lm: no document of %d tokens", n + 1);
        memcpy(b->tokens + (size_t)k * n, win, (size_t)n * sizeof *win);
        memcpy(b->targets + (size_t)k * n, win + 1, (size_t)n * sizeof *win);
    }
    return 0;
}

static void lm_progress(const lm_run *r, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "lm %s base %g seed %ld [%.0f s]: ", r->pe_name,
            r->a->base, r->a->seed, cli_now() - r->t0);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Train for `tokens' tokens in windows of n with method m's tables,
   MiniMind's AdamW and schedule; the mean training loss of the last
   tenth of the steps in *last. */
static int lm_train(lm_run *r, rope_lm_method m, long n, long batch, long tokens,
                    const char *phase, double *last)
{
    rope_lm_buffers b;
    rope_lm_adamw o;
    float *cs, *sn;
    long steps = tokens / (n * batch), tail = steps / 10 + 1, done = 0;
    int *win = malloc(((size_t)n + 1) * sizeof *win), rc;
    uint64_t state = 0x7a11ULL * 1000003ULL + (uint64_t)r->a->seed
                     + (uint64_t)n;
    double sum = 0, next = 0.1;
    if (steps < 1)
        return cli_error("lm: %ld tokens make no step of %ld x %ld", tokens,
                         batch, n);
    if (win == NULL || rope_lm_buffers_make(&b, &r->model, (int)batch, (int)n,
                                            (int)r->a->threads) != 0) {
        free(win);
        return cli_error("out of memory: training on %ld x %ld tokens",
                         batch, n);
    }
    rope_lm_adamw_defaults(&o);
    o.lr = r->a->lr;
    r->model.step = 0;
    memset(r->model.m, 0, 2 * r->model.n_params * sizeof *r->model.m);
    if ((rc = lm_tables(r, m, n, &cs, &sn)) == 0)
        for (long s = 0; s < steps; s++) {
            if ((rc = lm_draw(&r->train, &b, &state, win)) != 0)
                break;
            if ((rc = rope_lm_forward(&r->model, &b, cs, sn)) != 0) {
                rc = cli_error("lm: the attention kernel failed (%d)", rc);
                break;
            }
            double loss = rope_lm_backward(&r->model, &b, cs, sn);
            rope_lm_adamw_step(&r->model, &o, rope_lm_lr(o.lr, s, steps));
            if (!isfinite(loss)) {
                rc = cli_error("lm: %s: the loss is %g at step %ld", phase,
                               loss, s);
                break;
            }
            if (s >= steps - tail) {
                sum += loss;
                done++;
            }
            if ((double)(s + 1) >= next * (double)steps) {
                lm_progress(r, "%s step %ld of %ld, loss %.4f", phase, s + 1,
                            steps, loss);
                next += 0.1;
            }
        }
    *last = done > 0 ? sum / (double)done : NAN;
    free(cs);
    free(win);
    rope_lm_buffers_free(&b);
    return rc;
}

/* The mean loss over `windows' windows of n tokens of split sp, drawn
   with the fixed evaluation seed so every model sees the same text;
   each position's loss summed into pos_sum[n] when pos_sum != NULL. */
static int lm_eval(lm_run *r, const rope_corpus_split *sp, rope_lm_method m,
                   long n, long windows, double *mean, double *pos_sum)
{
    rope_lm_buffers b;
    float *cs, *sn, *nll = malloc((size_t)n * sizeof *nll);
    int *win = malloc(((size_t)n + 1) * sizeof *win), rc;
    uint64_t state = 0x5eed0000ULL + (uint64_t)n;
    double sum = 0;
    if (nll == NULL || win == NULL
        || rope_lm_buffers_make(&b, &r->model, 1, (int)n,
                                (int)r->a->threads) != 0) {
        free(nll);
        free(win);
        return cli_error("out of memory: evaluating %ld tokens", n);
    }
    if ((rc = lm_tables(r, m, n, &cs, &sn)) == 0)
        for (long w = 0; w < windows && rc == 0; w++) {
            if ((rc = lm_draw(sp, &b, &state, win)) != 0)
                break;
            if ((rc = rope_lm_forward(&r->model, &b, cs, sn)) != 0) {
                rc = cli_error("lm: the attention kernel failed (%d)", rc);
                break;
            }
            sum += rope_lm_loss(&r->model, &b, nll, NULL);
            for (long i = 0; pos_sum && i < n; i++)
                pos_sum[i] += nll[i];
        }
    *mean = sum / (double)windows;
    free(cs);
    free(nll);
    free(win);
    rope_lm_buffers_free(&b);
    return rc;
}

/* Passkey retrieval (Mohtashami and Jaggi): n tokens of test text with
   a five-letter key stated at a depth, then asked for at the end; a
   trial is right when the model's most likely next character is each of
   the key's five, the way greedy decoding would write it. */
static int lm_passkey(lm_run *r, rope_lm_method m, long n, double depth,
                      long trials, long *right, long *chars, double loss[3])
{
    static const char say[] = " The pass key is %s. Remember it. %s is the "
                              "pass key. ";
    static const char ask[] = " What is the pass key? The pass key is %s";
    rope_lm_buffers b;
    float *cs, *sn;
    int *seq = malloc(((size_t)n + 1) * 2 * sizeof *seq), rc;
    int *hit = malloc((size_t)n * sizeof *hit);
    float *nll = malloc((size_t)n * sizeof *nll);
    uint64_t state = 0x9a55ULL * 7919ULL + (uint64_t)n
                     + (uint64_t)(depth * 1000);
    *right = *chars = 0;
    loss[0] = loss[1] = loss[2] = 0;
    if (seq == NULL || hit == NULL || nll == NULL
        || rope_lm_buffers_make(&b, &r->model, 1, (int)n,
                                (int)r->a->threads) != 0) {
        free(seq);
        free(hit);
        free(nll);
        return cli_error("out of memory: a passkey of %ld tokens", n);
    }
    if ((rc = lm_tables(r, m, n, &cs, &sn)) == 0)
        for (long t = 0; t < trials && rc == 0; t++) {
            char key[6], text[160];
            int *fill = seq + n + 1, ids[160], doc;
            size_t start, ns, na;
            for (int i = 0; i < 5; i++)
                key[i] = (char)('a' + rope_splitmix64(&state) % 26);
            key[5] = 0;
            if (rope_corpus_window(&r->test, (size_t)n + 1, &state, fill, &doc,
                                   &start))
                rc = cli_error("lm: no test document of %ld tokens", n + 1);
            if (rc)
                break;
            snprintf(text, sizeof text, say, key, key);
            ns = strlen(text);
            if (rope_corpus_encode(&r->corpus, text, ns, ids) != 0) {
                rc = cli_error("lm: the passkey's text has a character "
                               "the corpus does not");
                break;
            }
            snprintf(text, sizeof text, ask, key);
            na = strlen(text);
            if ((size_t)n + 1 <= ns + na) {
                rc = cli_error("lm: a passkey needs more than %zu tokens, "
                               "not %ld", ns + na - 1, n);
                break;
            }
            size_t room = (size_t)n + 1 - ns - na;
            size_t at = (size_t)(depth * (double)room);
            memcpy(seq, fill, at * sizeof *seq);
            memcpy(seq + at, ids, ns * sizeof *seq);
            memcpy(seq + at + ns, fill + at, (room - at) * sizeof *seq);
            rope_corpus_encode(&r->corpus, text, na, seq + room + ns);
            memcpy(b.tokens, seq, (size_t)n * sizeof *seq);
            memcpy(b.targets, seq + 1, (size_t)n * sizeof *seq);
            for (long i = 0; i < n - 5; i++) /* the key's three places */
                if (!(i >= (long)at + 16 && i < (long)at + 21)
                    && !(i >= (long)at + 36 && i < (long)at + 41))
                    b.targets[i] = -1;
            if ((rc = rope_lm_forward(&r->model, &b, cs, sn)) != 0) {
                rc = cli_error("lm: the attention kernel failed (%d)", rc);
                break;
            }
            rope_lm_loss(&r->model, &b, nll, hit);
            int k = 0;
            for (long i = n - 5; i < n; i++)
                k += hit[i];
            *chars += k;
            *right += k == 5;
            for (int i = 0; i < 5; i++) {
                loss[0] += nll[at + 16 + i] / (5.0 * (double)trials);
                loss[1] += nll[at + 36 + i] / (5.0 * (double)trials);
                loss[2] += nll[n - 5 + i] / (5.0 * (double)trials);
            }
        }
    free(cs);
    free(seq);
    free(nll);
    free(hit);
    rope_lm_buffers_free(&b);
    return rc;
}

/* Every measurement of model `model' (pre, ft-pi, ft-yarn) under method
   m: loss against length, loss against position at 16 L, passkeys. */
static int lm_measure(lm_run *r, const char *model, rope_lm_method m)
{
    const lm_args *a = r->a;
    long L = a->len, top = 16 * L, bucket = L / 4 > 0 ? L / 4 : 1;
    double *pos = calloc((size_t)top, sizeof *pos), mean;
    int rc = 0;
    if (pos == NULL)
        return cli_error("out of memory: %ld positions", top);
    for (long n = L; n <= top && rc == 0; n *= 2) {
        long windows = a->eval_tokens / n > 0 ? a->eval_tokens / n : 1;
        rc = lm_eval(r, &r->test, m, n, windows, &mean, n == top ? pos : NULL);
        if (rc)
            break;
        printf("ppl\t%s\t%g\t%ld\t%s\t%s\t%ld\t%.6f\t%ld\n", r->pe_name,
               a->base, a->seed, model, rope_lm_method_names[m], n, mean, windows);
        if (n == top)
            for (long i = 0; i < top; i += bucket) {
                double s = 0;
                for (long j = i; j < i + bucket && j < top; j++)
                    s += pos[j];
                printf("pos\t%s\t%g\t%ld\t%s\t%s\t%ld\t%.6f\t%ld\n",
                       r->pe_name, a->base, a->seed, model,
                       rope_lm_method_names[m], i,
                       s / (double)(bucket * windows), windows);
            }
        fflush(stdout);
    }
    free(pos);
    lm_progress(r, "%s %s: loss against length done", model,
                rope_lm_method_names[m]);
    static const double depths[] = {0.1, 0.5, 0.9};
    for (long n = L / 2; n <= top && rc == 0 && a->trials > 0; n *= 2)
        for (int k = 0; k < 3 && rc == 0; k++) {
            long right, chars;
            double kl[3];
            rc = lm_passkey(r, m, n, depths[k], a->trials, &right, &chars,
                            kl);
            if (rc == 0)
                printf("passkey\t%s\t%g\t%ld\t%s\t%s\t%ld\t%.1f\t%ld\t%ld"
                       "\t%ld\t%.4f\t%.4f\t%.4f\n", r->pe_name, a->base,
                       a->seed, model, rope_lm_method_names[m], n, depths[k],
                       right, chars, a->trials, kl[0], kl[1], kl[2]);
        }
    fflush(stdout);
    return rc;
}

static int lm_main(const lm_args *a)
{
    lm_run r;
    rope_lm_config c;
    char err[256];
    double loss, val;
    int rc = 0;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.pe_name = lm_pe_names[a->pe];
    r.t0 = cli_now();
    if (rope_corpus_load(a->corpus, &r.corpus, err, sizeof err) != 0)
        return cli_error("lm: %s", err);
    if (rope_corpus_split_make(&r.corpus, ROPE_CORPUS_TRAIN,
                               (size_t)(a->factor * (double)a->len) + 1,
                               &r.train, err, sizeof err)
        || rope_corpus_split_make(&r.corpus, ROPE_CORPUS_VALIDATION,
                                  (size_t)a->len + 1, &r.valid, err,
                                  sizeof err)
        || rope_corpus_split_make(&r.corpus, ROPE_CORPUS_TEST,
                                  (size_t)(16 * a->len) + 1, &r.test, err,
                                  sizeof err)) {
        rope_corpus_free(&r.corpus);
        return cli_error("lm: %s", err);
    }
    rope_lm_config_defaults(&c);
    c.vocab_size = r.corpus.vocab_size;
    c.pe = (rope_lm_pe)a->pe;
    c.rope_theta = a->base;
    if (rope_lm_init(&r.model, &c, 0x1000ULL + (uint64_t)a->seed) != 0)
        rc = cli_error("out of memory: the model's weights");
    rope_lm_method first = a->pe == ROPE_LM_ROPE ? ROPE_LM_M_ROPE : ROPE_LM_M_NONE;
    printf("# rope lm: kind, pe, base, seed, then per kind: train: phase, "
           "tokens, training loss (last tenth), validation loss at the "
           "phase's length; ppl: model, method, n, mean loss, windows; pos: "
           "model, method, first position, mean loss, windows; passkey: "
           "model, method, n, depth, right, right characters, trials, mean "
           "loss of the key where stated, restated, asked for\n");
    if (rc == 0)
        rc = lm_train(&r, first, a->len, a->batch, a->tokens, "pretrain",
                      &loss);
    if (rc == 0)
        rc = lm_eval(&r, &r.valid, first, a->len, 64, &val, NULL);
    if (rc == 0 && !a->ft_only) /* --ft-only: the grid has this row */
        printf("train\t%s\t%g\t%ld\tpre\t%ld\t%.6f\t%.6f\n", r.pe_name, a->base,
               a->seed, a->tokens, loss, val);
    for (int m = first; rc == 0 && !a->ft_only
                        && m <= (first == ROPE_LM_M_NONE ? ROPE_LM_M_NONE
                                                          : ROPE_LM_M_YARN_MM_TEMP);
         m++)
        rc = lm_measure(&r, "pre", (rope_lm_method)m);
    if (first == ROPE_LM_M_ROPE && a->ft_percent > 0 && rc == 0) {
        static const rope_lm_method ft[] = {ROPE_LM_M_PI, ROPE_LM_M_YARN_HF};
        char names[2][32];
        float *keep = malloc(r.model.n_params * sizeof *keep);
        long n = (long)(a->factor * (double)a->len);
        long batch = a->batch * a->len / n > 0 ? a->batch * a->len / n : 1;
        long tokens = a->tokens * a->ft_percent / 100;
        snprintf(names[0], sizeof names[0], "ft-pi-%ld", a->ft_percent);
        snprintf(names[1], sizeof names[1], "ft-yarn-hf-%ld", a->ft_percent);
        if (keep == NULL)
            rc = cli_error("out of memory: a copy of the weights");
        else
            memcpy(keep, r.model.w, r.model.n_params * sizeof *keep);
        for (int k = 0; k < 2 && rc == 0; k++) {
            memcpy(r.model.w, keep, r.model.n_params * sizeof *keep);
            rc = lm_train(&r, ft[k], n, batch, tokens, names[k], &loss);
            if (rc == 0)
                rc = lm_eval(&r, &r.valid, ft[k], n, 64 * a->len / n + 1,
                             &val, NULL);
            if (rc == 0)
                printf("train\t%s\t%g\t%ld\t%s\t%ld\t%.6f\t%.6f\n", r.pe_name,
                       a->base, a->seed, names[k], tokens, loss, val);
            if (rc == 0)
                rc = lm_measure(&r, names[k], ft[k]);
        }
        free(keep);
    }
    lm_progress(&r, "done");
    rope_lm_free(&r.model);
    rope_corpus_split_free(&r.train);
    rope_corpus_split_free(&r.valid);
    rope_corpus_split_free(&r.test);
    rope_corpus_free(&r.corpus);
    return rc;
}

int cmd_lm(int argc, char **argv)
{
    lm_args a = {ROPE_LM_ROPE, 1e4, 4, -1, 2000000, 256, 8, 1, 10, 32768,
                 4, 2e-3, "build/corpus/kjv.txt", 0};
    int rc = 0, pe_given = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *f = argv[i];
        long *num = !strcmp(f, "--seed") ? &a.seed
            : !strcmp(f, "--tokens") ? &a.tokens : !strcmp(f, "--len") ? &a.len
            : !strcmp(f, "--batch") ? &a.batch
            : !strcmp(f, "--threads") ? &a.threads
            : !strcmp(f, "--ft-percent") ? &a.ft_percent
            : !strcmp(f, "--eval-tokens") ? &a.eval_tokens
            : !strcmp(f, "--trials") ? &a.trials : NULL;
        double *real = !strcmp(f, "--base") ? &a.base
            : !strcmp(f, "--factor") ? &a.factor : !strcmp(f, "--lr") ? &a.lr
            : NULL;
        if (!strcmp(f, "--ft-only")) {
            a.ft_only = 1;
            continue;
        }
        if (!num && !real && strcmp(f, "--pe") && strcmp(f, "--corpus"))
            return cli_error("lm: unexpected argument '%s'", f);
        if ((rc = cli_need_value(argc, argv, i)) != 0)
            return rc;
        const char *val = argv[++i];
        if (num)
            rc = cli_parse_int(f, val, num == &a.seed || num == &a.trials
                                   || num == &a.ft_percent ? 0 : 1,
                               num == &a.len ? 4096 : num == &a.ft_percent
                                   ? 100 : 1000000000L, num);
        else if (real)
            rc = cli_parse_double(f, val, real);
        else if (!strcmp(f, "--corpus"))
            a.corpus = val;
        else if (!strcmp(val, "nope") || !strcmp(val, "sin")
                 || !strcmp(val, "rope")) {
            a.pe = val[0] == 'n' ? ROPE_LM_NOPE : val[0] == 's'
                   ? ROPE_LM_SINUSOIDAL : ROPE_LM_ROPE;
            pe_given = 1;
        } else
            rc = cli_error("--pe: unknown value '%s' (nope, sin, rope)", val);
    }
    if (rc)
        return rc;
    if (!pe_given || a.seed < 0)
        return cli_error("lm: --pe and --seed are required");
    if (!(a.base > 1 && a.base < 1e12) || !(a.factor >= 1 && a.factor <= 16)
        || !(a.lr > 0 && a.lr < 1) || a.len % 4 != 0)
        return cli_error("lm: --base must be in (1, 1e12), --factor in "
                         "[1, 16], --lr in (0, 1) and --len a multiple of 4");
    if (cli_parse_only)
        return 0;
    return lm_main(&a);
}
