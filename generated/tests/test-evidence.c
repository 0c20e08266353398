/* W7.2 The tests */
/* test-evidence.c: the claims of chapter 7. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

typedef double (*ev_scalar_fn)(const double *x, void *ctx, double *mag);

static void ev_check_gradient(const char *what, ev_scalar_fn f, double *x,
                              size_t n, const double *grad, void *ctx)
{
    const double h = 1e-4;
    for (size_t j = 0; j < n; j++) {
        double x0 = x[j], mag = 0, m, d[2];
        for (int s = 0; s < 2; s++) {
            double hs = h * (s + 1);
            x[j] = x0 + hs;
            double up = f(x, ctx, &m);
            mag = m > mag ? m : mag;
            x[j] = x0 - hs;
            double down = f(x, ctx, &m);
            mag = m > mag ? m : mag;
            d[s] = (up - down) / (2 * hs);
        }
        x[j] = x0;
        double tol = 2 * fabs(d[1] - d[0]) + 64 * DBL_EPSILON * mag / h;
        ck_assert_msg(fabs(d[0] - grad[j]) <= tol,
                      "%s: component %zu: backward %.12g, central "
                      "difference %.12g, allowed %.3g", what, j, grad[j],
                      d[0], tol);
    }
}

static double ev_weighted(const double *y, const double *c, size_t n,
                          double *mag)
{
    double s = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
        s += c[i] * y[i];
        a += fabs(c[i] * y[i]);
    }
    *mag = a;
    return s;
}

static void ev_fill(double *x, size_t n, uint64_t seed, double scale)
{
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (2 * rope_uniform(&st) - 1);
}
typedef struct ev_ctx {
    int rows, in, out; /* shapes of the piece */
    const double *a, *b; /* the inputs held fixed */
    const double *c; /* weights of the outputs */
    int which; /* which input varies */
} ev_ctx;

static double ev_linear_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[64];
    if (c->which == 0) rope_ev_linear(x, c->a, y, c->rows, c->in, c->out);
    else rope_ev_linear(c->a, x, y, c->rows, c->in, c->out);
    return ev_weighted(y, c->c, (size_t)c->rows * c->out, mag);
}

static double ev_rms_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[64], inv[8];
    if (c->which == 0) rope_ev_rmsnorm(x, c->a, y, inv, c->rows, c->in, 1e-5);
    else rope_ev_rmsnorm(c->a, x, y, inv, c->rows, c->in, 1e-5);
    return ev_weighted(y, c->c, (size_t)c->rows * c->in, mag);
}
static double ev_rot_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[96];
    memcpy(y, x, 96 * sizeof *y);
    rope_ev_rotary(y, c->a, c->b, 2, 3, 2, 8, 0);
    return ev_weighted(y, c->c, 96, mag);
}

static double ev_swiglu_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double y[16];
    if (c->which == 0) rope_ev_swiglu(x, c->a, y, 16);
    else rope_ev_swiglu(c->a, x, y, 16);
    return ev_weighted(y, c->c, 16, mag);
}
static double ev_att_fn(const double *x, void *vc, double *mag)
{
    ev_ctx *c = vc;
    double p[200], o[160];
    const double *q = c->which == 0 ? x : c->a;
    const double *k = c->which == 1 ? x : c->b;
    const double *v = c->which == 2 ? x : c->b + 80;
    rope_ev_attention(q, k, v, p, o, 2, 5, 4, 2, 4);
    return ev_weighted(o, c->c, 160, mag);
}
static double ev_ce_fn(const double *x, void *vc, double *mag)
{
    static const int targets[3] = {2, -1, 0};
    (void)vc;
    double l = rope_ev_cross_entropy(x, targets, 3, 5, NULL, NULL, NULL);
    *mag = fabs(l);
    return l;
}
typedef struct ev_model_ctx {
    rope_ev_model *m;
    const int *tok;
    const double *cs, *sn;
} ev_model_ctx;

static double ev_model_fn(const double *x, void *vc, double *mag)
{
    ev_model_ctx *c = vc;
    (void)x; /* x is c->m->params, changed in place */
    double l = rope_ev_forward(c->m, c->tok, c->tok + 12, 2, 6, c->cs,
                               c->sn, 0, NULL, NULL);
    *mag = fabs(l);
    return l;
}

static void ev_tiny_config(rope_ev_config *c, rope_ev_pe pe)
{
    rope_ev_config_default(c, pe);
    c->vocab_size = 7;
    c->hidden_size = 8;
    c->num_attention_heads = 2;
    c->num_key_value_heads = 1;
    c->intermediate_size = 12;
}
/* W7.8 The King James corpus */
enum { TINY_DOCS = 12 };

static size_t corpus_tiny(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "rope-corpus 1\nsource tiny 1\n"
                                "command none\ndocuments %d\n", TINY_DOCS);
    for (int d = 0; d < TINY_DOCS; d++) {
        size_t len = 300 + 37 * (size_t)d;
        n += (size_t)snprintf(buf + n, cap - n, "document doc%d %zu\n", d,
                              len);
        for (size_t i = 0; i < len; i++)
            buf[n + i] = i % 20 == 19 ? '\n' : (char)('a' + d % 8);
        if (d == 8)
            buf[n + 5] = '#';
        n += len;
    }
    return n;
}
/* W7.2 The tests */
START_TEST(test_ev_linear_rmsnorm_backward)
{
    double x[24], w[48], c[64], dx[24], dw[48] = {0}, inv[8];
    ev_ctx ctx = {3, 8, 6, NULL, NULL, c, 0};
    ev_fill(x, 24, 1, 1.0);
    ev_fill(w, 48, 2, 1.0);
    ev_fill(c, 64, 3, 1.0);
    rope_ev_linear_backward(x, w, c, dx, dw, 3, 8, 6);
    ctx.a = w;
    ev_check_gradient("linear, input", ev_linear_fn, x, 24, dx, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("linear, weight", ev_linear_fn, w, 48, dw, &ctx);
    double dwn[8] = {0};
    rope_ev_rmsnorm(x, w, c + 32, inv, 3, 8, 1e-5);
    rope_ev_rmsnorm_backward(x, w, inv, c, dx, dwn, 3, 8);
    ctx = (ev_ctx){3, 8, 8, w, NULL, c, 0};
    ev_check_gradient("rmsnorm, input", ev_rms_fn, x, 24, dx, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("rmsnorm, weight", ev_rms_fn, w, 8, dwn, &ctx);
}
END_TEST
START_TEST(test_ev_rotary_swiglu_backward)
{
    double x[96], c[96], g[96], cs[24], sn[24], u[16], dg[16], du[16];
    ck_assert_int_eq(rope_ev_tables(cs, sn, 8, 3, 1e4, ROPE_EV_YARN_HF,
                                    4.0, 2), 0);
    ck_assert(fabs(cs[0] - 1.0) > 1e-3); /* the factor a is in the table */
    ev_fill(x, 96, 4, 1.0);
    ev_fill(c, 96, 5, 1.0);
    memcpy(g, c, sizeof g);
    rope_ev_rotary(g, cs, sn, 2, 3, 2, 8, 1);
    ev_ctx ctx = {0, 0, 0, cs, sn, c, 0};
    ev_check_gradient("rotary", ev_rot_fn, x, 96, g, &ctx);
    ev_fill(u, 16, 6, 3.0);
    rope_ev_swiglu_backward(x, u, c, dg, du, 16);
    ctx = (ev_ctx){0, 0, 0, u, NULL, c, 0};
    ev_check_gradient("swiglu, gate", ev_swiglu_fn, x, 16, dg, &ctx);
    ctx.a = x; ctx.which = 1;
    ev_check_gradient("swiglu, up", ev_swiglu_fn, u, 16, du, &ctx);
}
END_TEST
START_TEST(test_ev_attention_backward)
{
    double q[160], kv[160], c[160], p[200], o[160];
    double dq[160], dk[80], dv[80];
    ev_fill(q, 160, 7, 1.5);
    ev_fill(kv, 160, 8, 1.5);
    ev_fill(c, 160, 9, 1.0);
    rope_ev_attention(q, kv, kv + 80, p, o, 2, 5, 4, 2, 4);
    rope_ev_attention_backward(q, kv, kv + 80, p, c, dq, dk, dv, 2, 5, 4,
                               2, 4);
    ev_ctx ctx = {0, 0, 0, q, kv, c, 0};
    ev_check_gradient("attention, q", ev_att_fn, q, 160, dq, &ctx);
    ctx.which = 1;
    ev_check_gradient("attention, k", ev_att_fn, kv, 80, dk, &ctx);
    ctx.which = 2;
    ev_check_gradient("attention, v", ev_att_fn, kv + 80, 80, dv, &ctx);
}
END_TEST
START_TEST(test_ev_cross_entropy_backward)
{
    static const int targets[3] = {2, -1, 0};
    double x[15], g[15];
    long right = 0, n = 0;
    ev_fill(x, 15, 10, 2.0);
    rope_ev_cross_entropy(x, targets, 3, 5, g, &right, &n);
    ck_assert_int_eq(n, 2);
    for (int i = 5; i < 10; i++)
        ck_assert(g[i] == 0);
    ev_check_gradient("cross-entropy", ev_ce_fn, x, 15, g, NULL);
}
END_TEST
START_TEST(test_ev_model_backward)
{
    for (int pe = ROPE_EV_NOPE; pe <= ROPE_EV_ROPE; pe++) {
        rope_ev_config c;
        rope_ev_model m;
        int tok[24];
        double cs[24], sn[24];
        uint64_t st = 11;
        ev_tiny_config(&c, (rope_ev_pe)pe);
        ck_assert_int_eq(rope_ev_init(&m, &c, 12), 0);
        rope_ev_batch(ROPE_EV_COPY, &st, tok, tok + 12, 2, 6, 7);
        rope_ev_tables(cs, sn, 4, 6, 1e4, ROPE_EV_PLAIN, 1, 6);
        ev_model_ctx ctx = {&m, tok, pe == ROPE_EV_ROPE ? cs : NULL, sn};
        rope_ev_forward(&m, tok, tok + 12, 2, 6, ctx.cs, sn, 1, NULL, NULL);
        double *g = malloc(m.n_params * sizeof *g);
        memcpy(g, m.grads, m.n_params * sizeof *g);
        ev_check_gradient(pe == 0 ? "model, NoPE" : pe == 1
                          ? "model, sinusoidal" : "model, RoPE",
                          ev_model_fn, m.params, m.n_params, g, &ctx);
        free(g);
        rope_ev_free(&m);
    }
}
END_TEST
START_TEST(test_ev_attention_matches_kernel)
{
    enum { B = 2, T = 37, H = 4, HKV = 2, D = 16 };
    static float q[B * T * H * D], k[B * T * HKV * D], v[B * T * HKV * D];
    static float out[B * T * H * D], fc[T * D], fs[T * D];
    static double dq[B * T * H * D], dk[B * T * HKV * D];
    static double dv[B * T * HKV * D], p[B * H * T * T], o[B * T * H * D];
    static double cs[T * D], sn[T * D];
    rope_attention_params ap;
    randfill(q, sizeof q / sizeof *q, 21);
    randfill(k, sizeof k / sizeof *k, 22);
    randfill(v, sizeof v / sizeof *v, 23);
    rope_precompute_freqs_cis(fc, fs, D, T, 1e4, ROPE_PRECISION_FLOAT);
    rope_attention_defaults(&ap);
    ap.batch = B; ap.seq_len = ap.kv_len = T;
    ap.n_heads = H; ap.n_kv_heads = HKV; ap.head_dim = D;
    ap.causal = 1; ap.freqs_cos = fc; ap.freqs_sin = fs; ap.table_len = T;
    ap.pairing = ROPE_PAIRING_HALF;
    ck_assert_int_eq(rope_attention(out, q, k, v, &ap), 0);
    for (int i = 0; i < T * D; i++) { cs[i] = fc[i]; sn[i] = fs[i]; }
    for (size_t i = 0; i < sizeof dq / sizeof *dq; i++) dq[i] = q[i];
    double vmax = 0;
    for (size_t i = 0; i < sizeof dk / sizeof *dk; i++) {
        dk[i] = k[i];
        dv[i] = v[i];
        vmax = fabs(v[i]) > vmax ? fabs(v[i]) : vmax;
    }
    rope_ev_rotary(dq, cs, sn, B, T, H, D, 0);
    rope_ev_rotary(dk, cs, sn, B, T, HKV, D, 0);
    rope_ev_attention(dq, dk, dv, p, o, B, T, H, HKV, D);
    double tol = 8.0 * (D + T) * FLT_EPSILON * vmax, worst = 0;
    for (size_t i = 0; i < sizeof o / sizeof *o; i++)
        worst = fmax(worst, fabs(o[i] - out[i]));
    ck_assert_msg(worst <= tol, "model vs kernel: %.3g > %.3g", worst, tol);
}
END_TEST
START_TEST(test_ev_training_repeats)
{
    double a[8], b[8];
    for (int run = 0; run < 2; run++) {
        rope_ev_config c;
        rope_ev_model m;
        rope_ev_config_default(&c, ROPE_EV_ROPE);
        ck_assert_int_eq(rope_ev_init(&m, &c, 1), 0);
        ck_assert_int_eq(rope_ev_train(&m, ROPE_EV_COPY, 16, 4, 8, 3e-3, 1,
                         ROPE_EV_PLAIN, 1, 16, NULL, run ? b : a), 0);
        rope_ev_free(&m);
    }
    ck_assert_msg(memcmp(a, b, sizeof a) == 0, "two runs differ");
    size_t n = 0;
    double *ref = golden_read("book/data/evidence/reference.txt", &n);
    ck_assert_msg(ref != NULL && n == 8, "reference.txt: 8 losses");
    for (int i = 0; i < 8; i++)
        ck_assert_msg(fabs(a[i] - ref[i]) <= 1e-6 * fabs(ref[i]),
                      "step %d: loss %.17g, reference %.17g", i, a[i],
                      ref[i]);
    ck_assert(a[7] < a[0]); /* it learns */
    free(ref);
}
END_TEST
/* W7.3 The command rope evidence */
START_TEST(test_ev_out_of_memory_is_not_divergence)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;
#endif
    cli_result r = cli_run_in("ulimit -v 1048576;", "evidence --task copy "
                              "--pe rope --seed 1 --batch 100000 --steps 1",
                              NULL);
    ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: out of memory: needs ", 34)
                  == 0 && strstr(r.err, " MiB for the training workspace"),
                  "%s", r.err);
    cli_result_free(&r);
}
END_TEST
/* W7.8 The King James corpus */
START_TEST(test_corpus_split_is_fixed_and_disjoint)
{
    static char buf[16384];
    size_t n = corpus_tiny(buf, sizeof buf);
    int count[3] = {0, 0, 0}, owner[TINY_DOCS];
    char err[256];
    rope_corpus c;
    for (int p = 0; p < 66; p++) {
        rope_corpus_part part = rope_corpus_part_of(p);
        count[part]++;
        ck_assert_int_eq(part == ROPE_CORPUS_VALIDATION, p % 10 == 8);
        ck_assert_int_eq(part == ROPE_CORPUS_TEST, p % 10 == 9);
    }
    ck_assert_int_eq(count[ROPE_CORPUS_TRAIN], 54);
    ck_assert_int_eq(count[ROPE_CORPUS_VALIDATION], 6);
    ck_assert_int_eq(count[ROPE_CORPUS_TEST], 6);
    ck_assert_msg(rope_corpus_parse(buf, n, &c, err, sizeof err) == 0,
                  "%s", err);
    for (int d = 0; d < TINY_DOCS; d++)
        owner[d] = -1;
    for (int part = 0; part < 3; part++) {
        rope_corpus_split s, t;
        ck_assert(rope_corpus_split_make(&c, (rope_corpus_part)part, 0, &s,
                                         err, sizeof err) == 0);
        ck_assert(rope_corpus_split_make(&c, (rope_corpus_part)part, 0, &t,
                                         err, sizeof err) == 0);
        ck_assert_int_eq(s.n_docs, t.n_docs);
        for (int k = 0; k < s.n_docs; k++) {
            ck_assert_int_eq(s.doc[k], t.doc[k]);
            ck_assert(s.len[k] == t.len[k]);
            ck_assert(memcmp(s.ids[k], t.ids[k],
                             s.len[k] * sizeof *s.ids[k]) == 0);
            ck_assert_msg(owner[s.doc[k]] == -1, "document %d in two parts",
                          s.doc[k]);
            owner[s.doc[k]] = part;
        }
        rope_corpus_split_free(&s);
        rope_corpus_split_free(&t);
    }
    for (int d = 0; d < TINY_DOCS; d++)
        ck_assert_int_eq(owner[d], (int)rope_corpus_part_of(d));
    rope_corpus_free(&c);
}
END_TEST
START_TEST(test_corpus_vocabulary_round_trip)
{
    static char buf[16384], back[1024];
    int ids[1024];
    size_t n = corpus_tiny(buf, sizeof buf);
    char err[256];
    rope_corpus c;
    rope_corpus_split v;
    ck_assert(rope_corpus_parse(buf, n, &c, err, sizeof err) == 0);
    ck_assert_int_eq(c.vocab_size, 1 + 8 + 1);
    ck_assert_int_eq(c.id_of['#'], ROPE_CORPUS_UNKNOWN);
    for (int d = 0; d < c.n_docs; d++) {
        const char *text = c.text + c.docs[d].offset;
        size_t len = c.docs[d].len, unknown;
        if (c.docs[d].part != ROPE_CORPUS_TRAIN)
            continue;
        unknown = rope_corpus_encode(&c, text, len, ids);
        ck_assert(unknown == 0);
        for (size_t i = 0; i < len; i++)
            ck_assert(ids[i] > 0 && ids[i] < c.vocab_size);
        rope_corpus_decode(&c, ids, len, back);
        ck_assert(memcmp(back, text, len) == 0);
    }
    ck_assert(rope_corpus_split_make(&c, ROPE_CORPUS_VALIDATION, 0, &v, err,
                                     sizeof err) == 0);
    ck_assert(v.unknown == 1 && v.ids[0][5] == ROPE_CORPUS_UNKNOWN);
    rope_corpus_decode(&c, v.ids[0], v.len[0], back);
    ck_assert_int_eq(back[5], ROPE_CORPUS_UNKNOWN_CHAR);
    ck_assert_int_eq(back[4], c.text[c.docs[8].offset + 4]);
    rope_corpus_split_free(&v);
    rope_corpus_free(&c);
}
END_TEST
START_TEST(test_corpus_windows_repeat_and_stay_inside)
{
    enum { LEN = 257, DRAWS = 4000 };
    static char buf[16384];
    size_t n = corpus_tiny(buf, sizeof buf), start, starts = 0;
    int ids[LEN], doc, hits[TINY_DOCS] = {0}, first[8][2];
    char err[256];
    uint64_t seed = 7, again = 7, other = 8;
    rope_corpus c;
    rope_corpus_split s;
    ck_assert(rope_corpus_parse(buf, n, &c, err, sizeof err) == 0);
    ck_assert(rope_corpus_split_make(&c, ROPE_CORPUS_TRAIN, LEN, &s, err,
                                     sizeof err) == 0);
    for (int k = 0; k < s.n_docs; k++)
        starts += s.len[k] - LEN + 1;
    for (int w = 0; w < DRAWS; w++) {
        ck_assert(rope_corpus_window(&s, LEN, &seed, ids, &doc, &start) == 0);
        ck_assert(doc >= 0 && doc < s.n_docs && start + LEN <= s.len[doc]);
        ck_assert(memcmp(ids, s.ids[doc] + start, sizeof ids) == 0);
        hits[doc]++;
        if (w < 8) {
            first[w][0] = doc;
            first[w][1] = (int)start;
        }
    }
    for (int k = 0; k < s.n_docs; k++) {
        double p = (double)(s.len[k] - LEN + 1) / (double)starts;
        double mean = DRAWS * p, sd = sqrt(DRAWS * p * (1 - p));
        ck_assert_msg(fabs(hits[k] - mean) <= 5 * sd, "document %d drawn %d "
                      "times, expected %.1f +- %.1f", k, hits[k], mean, 5 * sd);
    }
    int same = 1, differ = 0;
    for (int w = 0; w < 8; w++) {
        rope_corpus_window(&s, LEN, &again, ids, &doc, &start);
        same &= doc == first[w][0] && (int)start == first[w][1];
        rope_corpus_window(&s, LEN, &other, ids, &doc, &start);
        differ |= doc != first[w][0] || (int)start != first[w][1];
    }
    ck_assert_msg(same, "seed 7 gave other windows the second time");
    ck_assert_msg(differ, "seeds 7 and 8 gave the same windows");
    ck_assert(rope_corpus_window(&s, 100000, &seed, ids, &doc, &start) == -1);
    rope_corpus_split_free(&s);
    rope_corpus_free(&c);
}
END_TEST
START_TEST(test_corpus_bad_input_one_clear_line)
{
    static char buf[16384];
    size_t n = corpus_tiny(buf, sizeof buf);
    char err[256], path[] = "/tmp/rope-corpus-XXXXXX";
    rope_corpus c;
    ck_assert(rope_corpus_load("/nonexistent/kjv.txt", &c, err,
                               sizeof err) == -1);
    ck_assert_msg(strstr(err, "/nonexistent/kjv.txt: ") == err
                  && strstr(err, "No such file"), "%s", err);
    for (size_t k = 0; k < n; k++) {
        err[0] = '\0';
        ck_assert_msg(rope_corpus_parse(buf, k, &c, err, sizeof err) == -1,
                      "%zu of %zu bytes parsed", k, n);
        ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL, "%s", err);
        ck_assert_msg(strstr(err, k < 14 ? "not a rope corpus"
                                         : "truncated"), "%zu: %s", k, err);
    }
    buf[n] = 'x';
    ck_assert(rope_corpus_parse(buf, n + 1, &c, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "1 bytes after"), "%s", err);
    {
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        ck_assert(f != NULL && fwrite(buf, 1, n - 10, f) == n - 10);
        fclose(f);
        ck_assert(rope_corpus_load(path, &c, err, sizeof err) == -1);
        remove(path);
        ck_assert_msg(strstr(err, path) == err
                      && strstr(err, "truncated: document 12 (doc11)"), "%s", err);
    }
    ck_assert(rope_corpus_parse(buf, n, &c, err, sizeof err) == 0);
    rope_corpus_free(&c);
}
END_TEST
START_TEST(test_corpus_real_text)
{
    const char *path = getenv("ROPE_CORPUS");
    char err[512];
    int seen[66] = {0};
    rope_corpus c;
    if (path == NULL)
        path = "build/corpus/kjv.txt";
    ck_assert_msg(rope_corpus_load(path, &c, err, sizeof err) == 0,
                  "%s (run make corpus)", err);
    ck_assert(c.text_len >= 2000000 && c.n_docs == 66);
    ck_assert(strncmp(c.source, "bible-kjv-text ", 15) == 0);
    for (int part = 0; part < 3; part++) {
        rope_corpus_split all, held;
        ck_assert(rope_corpus_split_make(&c, (rope_corpus_part)part, 0, &all,
                                         err, sizeof err) == 0);
        ck_assert_int_eq(all.n_docs, part == ROPE_CORPUS_TRAIN ? 54 : 6);
        for (int k = 0; k < all.n_docs; k++) {
            ck_assert(seen[all.doc[k]]++ == 0);
            if (part != ROPE_CORPUS_TRAIN) /* the 9th, 19th, ... book */
                ck_assert_int_eq(all.doc[k], 10 * k + 7 + part);
        }
        if (part != ROPE_CORPUS_TRAIN) {
            ck_assert(rope_corpus_split_make(&c, (rope_corpus_part)part,
                                             4096, &held, err,
                                             sizeof err) == 0);
            ck_assert_int_eq(held.n_docs, all.n_docs);
            for (int k = 0; k < held.n_docs; k++) {
                const rope_corpus_doc *doc = &c.docs[held.doc[k]];
                char *back = malloc(doc->len);
                ck_assert(back != NULL);
                rope_corpus_decode(&c, held.ids[k], held.len[k], back);
                for (size_t i = 0; i < doc->len; i++)
                    ck_assert_msg(back[i] == c.text[doc->offset + i]
                                  || (held.ids[k][i] == ROPE_CORPUS_UNKNOWN
                                      && back[i] == ROPE_CORPUS_UNKNOWN_CHAR),
                                  "%s, byte %zu", doc->name, i);
                free(back);
            }
            rope_corpus_split_free(&held);
        } else {
            {
                int ids[257], doc;
                size_t start;
                uint64_t seed = 1;
                for (int w = 0; w < 1000; w++) {
                    ck_assert(rope_corpus_window(&all, 257, &seed, ids, &doc, &start)
                              == 0);
                    ck_assert(start + 257 <= all.len[doc]);
                    ck_assert(memcmp(ids, all.ids[doc] + start, sizeof ids) == 0);
                }
            }
        }
        rope_corpus_split_free(&all);
    }
    for (int d = 0; d < 66; d++)
        ck_assert(seen[d] == 1);
    rope_corpus_free(&c);
}
END_TEST
Suite *corpus_suite(void)
{
    Suite *s = suite_create("chapter 7: the corpus");
    TCase *tc = tcase_create("corpus");
    tcase_add_test(tc, test_corpus_split_is_fixed_and_disjoint);
    tcase_add_test(tc, test_corpus_vocabulary_round_trip);
    tcase_add_test(tc, test_corpus_windows_repeat_and_stay_inside);
    tcase_add_test(tc, test_corpus_bad_input_one_clear_line);
    tcase_add_test(tc, test_corpus_real_text);
    suite_add_tcase(s, tc);
    return s;
}

/* W7.2 The tests */
Suite *evidence_suite(void)
{
    Suite *s = suite_create("chapter 7: evidence");
    TCase *tc = tcase_create("evidence");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_ev_linear_rmsnorm_backward);
    tcase_add_test(tc, test_ev_rotary_swiglu_backward);
    tcase_add_test(tc, test_ev_attention_backward);
    tcase_add_test(tc, test_ev_cross_entropy_backward);
    tcase_add_test(tc, test_ev_model_backward);
    tcase_add_test(tc, test_ev_attention_matches_kernel);
    tcase_add_test(tc, test_ev_training_repeats);
    tcase_add_test(tc, test_ev_out_of_memory_is_not_divergence);
    suite_add_tcase(s, tc);
    return s;
}
