/* W8.5 The tests */
/* test-minimind.c: chapter 8's weight file, model and command (W8) */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"
#include "minimind-reference.h"

static void mmt_small(rope_minimind_config *c, int moe)
{
    rope_minimind_config_defaults(c);
    c->hidden_size = 32;
    c->num_hidden_layers = 2;
    c->num_attention_heads = 4;
    c->num_key_value_heads = 2;
    c->head_dim = 8;
    c->intermediate_size = 128;
    c->vocab_size = 64;
    c->max_position_embeddings = 4096;
    c->use_moe = moe;
    c->num_experts = 4;
    c->num_experts_per_tok = 2;
    c->moe_intermediate_size = 64;
}

static float *mmt_weights(const rope_minimind_config *c, uint64_t seed)
{
    int nt = rope_minimind_tensor_list(c, NULL);
    rope_minimind_tensor *t = malloc((size_t)nt * sizeof *t);
    float *w = malloc(rope_minimind_n_floats(c) * sizeof *w);
    uint64_t st = seed;
    ck_assert(t != NULL && w != NULL);
    rope_minimind_tensor_list(c, t);
    for (int i = 0; i < nt; i++) {
        long in = t[i].ndim == 2 ? t[i].shape[1] : 1;
        double a = t[i].ndim == 1 ? 0.1 : sqrt(3.0 / (double)in);
        for (size_t j = 0; j < (size_t)(t[i].shape[0] * in); j++) {
            double u = 2 * rope_uniform(&st) - 1;
            w[t[i].offset + j] = (float)(t[i].ndim == 1 ? 1 + a * u : a * u);
        }
    }
    free(t);
    return w;
}
static char mmt_dir[64];
static void mmt_mkdir(void)
{
    strcpy(mmt_dir, "/tmp/rope-mm-XXXXXX");
    ck_assert(mkdtemp(mmt_dir) != NULL);
}

static void mmt_rmdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", mmt_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void mmt_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", mmt_dir, name);
}

static char *mmt_slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0, cap = 65536, got;
    char *b = malloc(cap);
    ck_assert_msg(f != NULL && b != NULL, "cannot open %s", path);
    while ((got = fread(b + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap)
            ck_assert((b = realloc(b, cap *= 2)) != NULL);
    ck_assert(!ferror(f));
    fclose(f);
    b[n] = '\0';
    *size = n;
    return b;
}

static int mmt_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
/* The small model of seed 90 (dense) saved as m.bin in the test's
   directory, its path in p, the model bound to its weights in m. */
static float *mmt_cli_model(char *p, size_t n, rope_minimind *m, int yarn)
{
    rope_minimind_config c;
    char err[300];
    mmt_small(&c, 0);
    float *w = mmt_weights(&c, 90);
    mmt_path(p, n, "m.bin");
    ck_assert_msg(rope_minimind_save(p, &c, w, err, sizeof err) == 0, "%s",
                  err);
    c.inference_rope_scaling = yarn;
    memset(m, 0, sizeof *m);
    ck_assert(rope_minimind_bind(m, &c, w) == 0);
    return w;
}

/* What rope generate must print: the prompt run in one call, then
   max_new tokens sampled by sp, each run alone through the cache. */
static void mmt_expected(const rope_minimind *m, const int *ids, int n,
                         int max_new, rope_minimind_sampler sp, int eos,
                         char *out, size_t len)
{
    rope_minimind_state s;
    int V = m->config.vocab_size;
    float *lg = malloc((size_t)V * sizeof *lg);
    size_t used = 0;
    ck_assert(lg != NULL && rope_minimind_state_init(&s, m, n, 1) == 0);
    ck_assert_int_eq(rope_minimind_forward(m, &s, ids, n, lg, 0), 0);
    out[0] = '\0';
    for (int g = 0; g < max_new; g++) {
        int tok = rope_minimind_sample(lg, V, &sp);
        used += (size_t)snprintf(out + used, len - used, "%s%d",
                                 g ? " " : "", tok);
        if (tok == eos || g + 1 == max_new)
            break;
        ck_assert_int_eq(rope_minimind_forward(m, &s, &tok, 1, lg, 0), 0);
    }
    snprintf(out + used, len - used, "\n");
    rope_minimind_state_free(&s);
    free(lg);
}
typedef struct mmt_rec { /* the states entering each block, norm */
    float *at; /* [L+1, n, hidden] */
    int n;
} mmt_rec;

static void mmt_record(void *ctx, int layer, long pos, float *x, int rows,
                       int hidden)
{
    mmt_rec *r = ctx;
    memcpy(r->at + ((size_t)layer * r->n + (size_t)pos) * hidden, x,
           (size_t)rows * hidden * sizeof *x);
}

/* The library's run of ids in calls of chunk tokens: states
   [L+1, n, hidden] by the hook, logits [n, vocab]. */
static void mmt_own_run(const rope_minimind *m, const int *ids, int n,
                        int chunk, float *states, float *logits)
{
    rope_minimind_state s;
    mmt_rec r = {states, n};
    int rows = n < chunk ? n : chunk, V = m->config.vocab_size;
    ck_assert(rope_minimind_state_init(&s, m, rows, 1) == 0);
    s.hook = mmt_record;
    s.hook_ctx = &r;
    for (int at = 0; at < n; at += rows) {
        int k = n - at < rows ? n - at : rows;
        ck_assert_int_eq(rope_minimind_forward(m, &s, ids + at, k,
                                               logits + (size_t)at * V, 1),
                         0);
    }
    rope_minimind_state_free(&s);
}

/* A float64 .npy file of the given shape (as NumPy prints it, "(2, 7)")
   and count, as the reference writes it; its numbers. */
static double *mmt_read_f8(const char *path, const char *shape,
                           size_t count)
{
    size_t size, hl;
    unsigned char *b = (unsigned char *)mmt_slurp(path, &size);
    ck_assert_msg(size >= 10 && memcmp(b, "\x93NUMPY\x01\x00", 8) == 0,
                  "%s: not a .npy file of version 1", path);
    hl = (size_t)b[8] | (size_t)b[9] << 8;
    ck_assert(10 + hl <= size);
    char *h = malloc(hl + 1), want[64];
    double *v = malloc(count * sizeof *v);
    ck_assert(h != NULL && v != NULL);
    memcpy(h, b + 10, hl);
    h[hl] = '\0';
    snprintf(want, sizeof want, "'shape': %s", shape);
    ck_assert_msg(strstr(h, "'descr': '<f8'") && strstr(h, want), "%s: "
                  "header %s, expected float64 of shape %s", path, h, shape);
    ck_assert_uint_eq(size, 10 + hl + 8 * count);
    for (size_t i = 0; i < count; i++) {
        uint64_t u = 0;
        for (int j = 7; j >= 0; j--)
            u = u << 8 | b[10 + hl + 8 * i + (size_t)j];
        memcpy(&v[i], &u, sizeof u);
    }
    free(h);
    free(b);
    return v;
}
typedef struct mmt_blocks { /* what one run of --states gives */
    rope_npy out, logits; /* [L, n, hidden], [n, vocab] */
} mmt_blocks;

static void mmt_within(const float *c, const double *ref, size_t count,
                       const char *what)
{
    const double *bound = ref + count;
    for (size_t j = 0; j < count; j++) {
        ck_assert_msg(bound[j] > 0 && isfinite(bound[j]), "%s %zu: bound "
                      "%g", what, j, bound[j]);
        ck_assert_msg(fabs(c[j] - ref[j]) <= bound[j], "%s %zu: C %.9g, "
                      "reference %.9g, bound %.3g", what, j, c[j], ref[j],
                      bound[j]);
    }
}

static void mmt_blocks_cli(const char *model, const rope_minimind *m,
                           const char *ids, int n, int chunk,
                           const float *states, mmt_blocks *r)
{
    int L = m->config.num_hidden_layers, D = m->config.hidden_size;
    int V = m->config.vocab_size;
    long shape[3] = {L + 1, n, D};
    char sp[128], op[128], zp[128], rp[128], args[1024], err[300];
    char shb[64], shh[64];
    mmt_path(sp, sizeof sp, "s.npy");
    mmt_path(op, sizeof op, "o.npy");
    mmt_path(zp, sizeof zp, "z.npy");
    mmt_path(rp, sizeof rp, "r");
    ck_assert(rope_npy_write(sp, states, 3, shape, err, sizeof err) == 0);
    snprintf(args, sizeof args, "generate --model %s --ids '%s' --states "
             "%s --block-outputs %s --logits %s --block-reference %s "
             "--prefill-chunk %d", model, ids, sp, op, zp, rp, chunk);
    cli_result c = cli_run(args);
    ck_assert_msg(c.status == 0, "%s: %s", args, c.err);
    ck_assert_str_eq(c.out, "\n"); /* --max-new is 0 with --states */
    cli_result_free(&c);
    ck_assert(rope_npy_read(op, &r->out, err, sizeof err) == 0);
    ck_assert(rope_npy_read(zp, &r->logits, err, sizeof err) == 0);
    ck_assert(r->out.ndim == 3 && r->out.shape[0] == L
              && r->out.shape[1] == n && r->out.shape[2] == D);
    ck_assert(r->logits.ndim == 2 && r->logits.shape[0] == n
              && r->logits.shape[1] == V);
    snprintf(shb, sizeof shb, "(2, %d, %d, %d)", L, n, D);
    snprintf(shh, sizeof shh, "(2, %d, %d)", n, V);
    size_t nd = (size_t)n * D, nv = (size_t)n * V;
    mmt_path(rp, sizeof rp, "r-blocks.npy");
    double *rb = mmt_read_f8(rp, shb, 2 * (size_t)L * nd), *x;
    ck_assert((x = malloc(2 * nd * sizeof *x)) != NULL);
    for (int l = 0; l < L; l++) { /* [2, L, n, D] -> block l's pair */
        memcpy(x, rb + (size_t)l * nd, nd * sizeof *x);
        memcpy(x + nd, rb + (size_t)(L + l) * nd, nd * sizeof *x);
        mmt_within(r->out.data + (size_t)l * nd, x, nd, "block output");
    }
    mmt_path(rp, sizeof rp, "r-head.npy");
    double *rh = mmt_read_f8(rp, shh, 2 * nv);
    mmt_within(r->logits.data, rh, nv, "logit");
    free(rb);
    free(rh);
    free(x);
}
static int mmt_expect(const rope_minimind_config *c, rope_minimind_tensor *t)
{
    static const char *const att[] = {"q_proj", "k_proj", "v_proj",
                                      "o_proj"};
    static const char *const ffn[] = {"gate_proj", "up_proj", "down_proj"};
    long D = c->hidden_size, d = c->head_dim, F = c->intermediate_size;
    long q = c->num_attention_heads * d, kv = c->num_key_value_heads * d;
    long ar[] = {q, kv, kv, D}, ac[] = {D, D, D, q};
    long fr[3], fc[3];
    int k = 0;
#define MMT_T(r, cl, ...) (snprintf(t[k].name, sizeof t[k].name, \
    __VA_ARGS__), t[k].ndim = (cl) ? 2 : 1, t[k].shape[0] = (r), \
    t[k].shape[1] = (cl), k++)
    if (c->use_moe)
        F = c->moe_intermediate_size;
    fr[0] = fr[1] = fc[2] = F;
    fc[0] = fc[1] = fr[2] = D;
    MMT_T(c->vocab_size, D, "model.embed_tokens.weight");
    for (int l = 0; l < c->num_hidden_layers; l++) {
        MMT_T(D, 0, "model.layers.%d.input_layernorm.weight", l);
        for (int i = 0; i < 4; i++)
            MMT_T(ar[i], ac[i], "model.layers.%d.self_attn.%s.weight", l,
                  att[i]);
        MMT_T(d, 0, "model.layers.%d.self_attn.q_norm.weight", l);
        MMT_T(d, 0, "model.layers.%d.self_attn.k_norm.weight", l);
        MMT_T(D, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        if (!c->use_moe)
            for (int i = 0; i < 3; i++)
                MMT_T(fr[i], fc[i], "model.layers.%d.mlp.%s.weight", l,
                      ffn[i]);
        else
            MMT_T(c->num_experts, D, "model.layers.%d.mlp.gate.weight", l);
        for (int e = 0; c->use_moe && e < c->num_experts; e++)
            for (int i = 0; i < 3; i++)
                MMT_T(fr[i], fc[i], "model.layers.%d.mlp.experts.%d.%s."
                      "weight", l, e, ffn[i]);
    }
    MMT_T(D, 0, "model.norm.weight");
#undef MMT_T
    return k;
}

START_TEST(test_mm_tensor_list)
{
    rope_minimind_config c;
    rope_minimind_tensor want[200], got[200];
    size_t at = 0;
    rope_minimind_config_defaults(&c);
    c.use_moe = _i;
    int n = mmt_expect(&c, want);
    ck_assert_int_eq(n, _i ? 170 : 90);
    ck_assert_int_eq(rope_minimind_tensor_list(&c, NULL), n);
    ck_assert_int_eq(rope_minimind_tensor_list(&c, got), n);
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(got[i].name, want[i].name);
        ck_assert_int_eq(got[i].ndim, want[i].ndim);
        ck_assert_int_eq(got[i].shape[0], want[i].shape[0]);
        if (want[i].ndim == 2)
            ck_assert_int_eq(got[i].shape[1], want[i].shape[1]);
        ck_assert_uint_eq(got[i].offset, at);
        at += (size_t)want[i].shape[0]
              * (size_t)(want[i].ndim == 2 ? want[i].shape[1] : 1);
    }
    ck_assert_uint_eq(at, _i ? 198416640u : 63912192u);
    ck_assert_uint_eq(rope_minimind_n_floats(&c), at);
}
END_TEST
static void mmt_same_config(const rope_minimind_config *a,
                            const rope_minimind_config *b)
{
    ck_assert_int_eq(a->hidden_size, b->hidden_size);
    ck_assert_int_eq(a->num_hidden_layers, b->num_hidden_layers);
    ck_assert_int_eq(a->num_attention_heads, b->num_attention_heads);
    ck_assert_int_eq(a->num_key_value_heads, b->num_key_value_heads);
    ck_assert_int_eq(a->head_dim, b->head_dim);
    ck_assert_int_eq(a->intermediate_size, b->intermediate_size);
    ck_assert_int_eq(a->vocab_size, b->vocab_size);
    ck_assert_int_eq(a->max_position_embeddings, b->max_position_embeddings);
    ck_assert(a->rope_theta == b->rope_theta);
    ck_assert(a->rms_norm_eps == b->rms_norm_eps);
    ck_assert_int_eq(a->use_moe, b->use_moe);
    ck_assert_int_eq(a->num_experts, b->num_experts);
    ck_assert_int_eq(a->num_experts_per_tok, b->num_experts_per_tok);
    ck_assert_int_eq(a->moe_intermediate_size, b->moe_intermediate_size);
    ck_assert_int_eq(a->norm_topk_prob, b->norm_topk_prob);
}

START_TEST(test_mm_round_trip)
{
    rope_minimind_config c;
    rope_minimind m;
    char p1[128], p2[128], err[300];
    size_t n1, n2;
    mmt_mkdir();
    mmt_small(&c, _i);
    c.rms_norm_eps = 0.1 + 0.2;
    c.rope_theta = 12345.678;
    size_t nf = rope_minimind_n_floats(&c);
    float *w = mmt_weights(&c, 81 + (uint64_t)_i);
    mmt_path(p1, sizeof p1, "m.bin");
    mmt_path(p2, sizeof p2, "again.bin");
    ck_assert_msg(rope_minimind_save(p1, &c, w, err, sizeof err) == 0, "%s",
                  err);
    memset(&m, 0, sizeof m);
    m.config.inference_rope_scaling = !_i;
    ck_assert_msg(rope_minimind_load(&m, p1, err, sizeof err) == 0, "%s",
                  err);
    mmt_same_config(&m.config, &c);
    ck_assert_int_eq(m.config.inference_rope_scaling, !_i);
    ck_assert_ptr_eq((const char *)m.embed_tokens, (char *)m.map + 4096);
    ck_assert_uint_eq(m.map_bytes, 4096 + 4 * nf);
    ck_assert(memcmp(m.embed_tokens, w, nf * sizeof *w) == 0);
    ck_assert_msg(rope_minimind_save(p2, &m.config, m.embed_tokens, err,
                                     sizeof err) == 0, "%s", err);
    char *b1 = mmt_slurp(p1, &n1), *b2 = mmt_slurp(p2, &n2);
    ck_assert_uint_eq(n1, 4096 + 4 * nf);
    ck_assert(n1 == n2 && memcmp(b1, b2, n1) == 0);
    ck_assert(strncmp(b1, "rope-minimind 1\nhidden_size 32\n", 31) == 0);
    ck_assert(strstr(b1, "\nrope_theta 12345.678\n") != NULL);
    ck_assert(strstr(b1, "\nrms_norm_eps 0.30000000000000004\n") != NULL);
    rope_minimind_free(&m);
    ck_assert_ptr_null(m.map);
    free(b1);
    free(b2);
    free(w);
    mmt_rmdir();
}
END_TEST
static const struct {
    const char *from, *to; /* edit of the header (NULL: none) */
    int cut; /* -1: a byte less, 1: a byte more, 100: the first 100 only */
    const char *want; /* in the one-line message */
} mmt_bad[] = {
    {"rope-minimind 1\n", "rope-minimind 2\n", 0, "version '2'"},
    {"rope-minimind 1\n", "rope_minimind 1\n", 0, "not a weight file"},
    {"num_attention_heads 4\n", "num_heads 4\n", 0,
     "expected the key num_attention_heads"},
    {"vocab_size 64\n", "vocab_size 6x\n", 0,
     "vocab_size: '6x' is not an integer"},
    {"rms_norm_eps 1e-06\n", "rms_norm_eps nan\n", 0, "not a finite"},
    {"num_key_value_heads 2\n", "num_key_value_heads 3\n", 0, "config: "},
    {"layers.1.self_attn.q_proj.weight", "layers.1.self_attn.q_prok.weight",
     0, "tensor model.layers.1.self_attn.q_prok.weight, expected "
     "model.layers.1.self_attn.q_proj.weight"},
    {"q_proj.weight f32 32 32\n", "q_proj.weight f32 32 31\n", 0,
     "model.layers.0.self_attn.q_proj.weight: shape [32 31], expected "
     "[32 32]"},
    {"q_proj.weight f32 32 32\n", "q_proj.weight f32 32\n", 0,
     "shape [32], expected [32 32]"},
    {"q_proj.weight f32", "q_proj.weight f16", 0,
     "model.layers.0.self_attn.q_proj.weight: dtype f16, expected f32"},
    {"tensor model.layers.1.self_attn.k_norm.weight f32 8\n", "", 0,
     "expected model.layers.1.self_attn.k_norm.weight"},
    {"tensor model.norm.weight f32 32\n", "", 0,
     "expected the line of tensor model.norm.weight"},
    {"model.norm.weight f32", "model.norm.weight  f32", 0, "one space"},
    {"data 4096\n", "data 4100\n", 0, "data 4100: not a multiple of 4096"},
    {"data 4096\n", "data 0\n", 0, "before the end of the header"},
    {"data 4096\n", "", 0, "expected 'data N'"},
    {"data 4096\n\n", "data 4096\nx", 0, "padding"},
    {NULL, NULL, -1, "truncated: "},
    {NULL, NULL, 1, "too long: "},
    {NULL, NULL, 100, "ends inside the header"},
};
enum { MMT_N_BAD = sizeof mmt_bad / sizeof mmt_bad[0] };
static void mmt_mutate(const char *in, const char *out, const char *from,
                       const char *to, int cut)
{
    size_t size, N, len;
    char *b = mmt_slurp(in, &size), *h, *at;
    FILE *f;
    ck_assert((at = strstr(b, "\ndata ")) != NULL);
    N = strtoul(at + 6, NULL, 10);
    ck_assert(N == 4096 && size > N);
    h = malloc(N + 64);
    ck_assert(h != NULL);
    memcpy(h, b, N);
    h[N] = '\0';
    if (from != NULL) {
        ck_assert_msg((at = strstr(h, from)) != NULL, "no '%s'", from);
        memmove(at + strlen(to), at + strlen(from),
                strlen(at + strlen(from)) + 1);
        memcpy(at, to, strlen(to));
    }
    for (len = strlen(h); len > N && h[len - 1] == '\n'; len--)
        ;
    ck_assert(len <= N);
    memset(h + len, '\n', N - len);
    ck_assert((f = fopen(out, "wb")) != NULL);
    if (cut == 100) {
        ck_assert(fwrite(h, 1, 100, f) == 100);
    } else {
        ck_assert(fwrite(h, 1, N, f) == N);
        ck_assert(fwrite(b + N, 1, size - N - (cut < 0), f)
                  == size - N - (cut < 0));
        if (cut > 0)
            ck_assert(fputc(0, f) == 0);
    }
    ck_assert(fclose(f) == 0);
    free(h);
    free(b);
}

static int mmt_mapped(const char *path)
{
    size_t n;
    char *maps = mmt_slurp("/proc/self/maps", &n);
    int found = strstr(maps, path) != NULL;
    free(maps);
    return found;
}

START_TEST(test_mm_load_refuses)
{
    rope_minimind_config c;
    rope_minimind m;
    char good[128], bad[128], err[300];
    mmt_mkdir();
    mmt_small(&c, 0);
    float *w = mmt_weights(&c, 82);
    mmt_path(good, sizeof good, "good.bin");
    mmt_path(bad, sizeof bad, "bad.bin");
    ck_assert(rope_minimind_save(good, &c, w, err, sizeof err) == 0);
    mmt_mutate(good, bad, mmt_bad[_i].from, mmt_bad[_i].to, mmt_bad[_i].cut);
    memset(&m, 0, sizeof m);
    err[0] = '\0';
    ck_assert_int_ne(rope_minimind_load(&m, bad, err, sizeof err), 0);
    ck_assert_msg(strstr(err, mmt_bad[_i].want) != NULL,
                  "'%s' does not say '%s'", err, mmt_bad[_i].want);
    ck_assert(strncmp(err, bad, strlen(bad)) == 0);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_null(m.map);
    ck_assert_msg(!mmt_mapped(bad), "%s is still mapped", bad);
    ck_assert(rope_minimind_load(&m, good, err, sizeof err) == 0);
    ck_assert(mmt_mapped(good)); /* the check can see a mapping */
    rope_minimind_free(&m);
    ck_assert(!mmt_mapped(good));
    free(w);
    mmt_rmdir();
}
END_TEST
START_TEST(test_mm_load_bad_paths)
{
    rope_minimind m;
    char p[128], err[300];
    const char *want[] = {"No such file", "not a regular file", "empty file"};
    FILE *f;
    mmt_mkdir();
    mmt_path(p, sizeof p, "empty.bin");
    ck_assert((f = fopen(p, "wb")) != NULL && fclose(f) == 0);
    for (int k = 0; k < 3; k++) {
        mmt_path(p, sizeof p, k == 0 ? "none.bin" : k == 1 ? "." : "empty.bin");
        memset(&m, 0, sizeof m);
        ck_assert_int_ne(rope_minimind_load(&m, p, err, sizeof err), 0);
        ck_assert_msg(strstr(err, want[k]) != NULL, "%s", err);
        ck_assert_ptr_null(strchr(err, '\n'));
        ck_assert_ptr_null(m.map);
    }
    mmt_rmdir();
}
END_TEST
START_TEST(test_mm_save_leaves_nothing)
{
    rope_minimind_config c, bad;
    char p[128], none[128], tmp[140], err[300];
    int status;
    pid_t pid;
    mmt_mkdir();
    mmt_small(&c, 0);
    float *w1 = mmt_weights(&c, 83), *w2 = mmt_weights(&c, 84);
    mmt_path(p, sizeof p, "m.bin");
    mmt_path(none, sizeof none, "none/m.bin");
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    ck_assert_int_ne(rope_minimind_save(none, &c, w1, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "none/m.bin.tmp: No such file") != NULL, "%s",
                  err);
    bad = c;
    bad.num_key_value_heads = 3;
    ck_assert_int_ne(rope_minimind_save(p, &bad, w1, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "config: ") != NULL, "%s", err);
    ck_assert(!mmt_exists(p) && !mmt_exists(tmp));
    ck_assert(rope_minimind_save(p, &c, w1, err, sizeof err) == 0);
    fflush(NULL);
    ck_assert((pid = fork()) >= 0);
    if (pid == 0) {
        struct rlimit lim = {65536, 65536};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(3);
        _exit(rope_minimind_save(p, &c, w2, err, sizeof err) != 0
              && strstr(err, "File too large") != NULL ? 1 : 0);
    }
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
                  "the save under a 64 KiB limit did not fail as expected");
    ck_assert(!mmt_exists(tmp));
    rope_minimind m;
    memset(&m, 0, sizeof m);
    ck_assert(rope_minimind_load(&m, p, err, sizeof err) == 0);
    ck_assert(memcmp(m.embed_tokens, w1,
                     rope_minimind_n_floats(&c) * sizeof *w1) == 0);
    rope_minimind_free(&m);
    free(w1);
    free(w2);
    mmt_rmdir();
}
END_TEST
START_TEST(test_mm_prefill_equals_steps)
{
    enum { N = 12 };
    rope_minimind_config c;
    rope_minimind m;
    rope_minimind_state s;
    int ids[N];
    uint64_t st = 85;
    mmt_small(&c, _i);
    c.num_hidden_layers = 1; /* where the worst-case bound is informative */
    float *w = mmt_weights(&c, 86 + (uint64_t)_i);
    int V = c.vocab_size;
    float *all = malloc(N * (size_t)V * sizeof *all);
    float *again = malloc(N * (size_t)V * sizeof *again);
    float *one = malloc(N * (size_t)V * sizeof *one);
    ck_assert(all && again && one);
    double *ref = malloc(2 * N * (size_t)V * sizeof *ref), *bound;
    int decided = -1;
    ck_assert(ref != NULL);
    bound = ref + N * (size_t)V;
    memset(&m, 0, sizeof m);
    ck_assert(rope_minimind_bind(&m, &c, w) == 0);
    for (int tries = 0; tries < 20 && decided != 0; tries++) {
        for (int i = 0; i < N; i++)
            ids[i] = (int)(rope_uniform(&st) * V);
        decided = rope_minimind_reference(&m, ids, N, ref, bound);
    }
    ck_assert_msg(decided == 0, "no prompt of 20 with every route decided");
    ck_assert(rope_minimind_state_init(&s, &m, N, 1) == 0);
    ck_assert_int_eq(rope_minimind_forward(&m, &s, ids, N, all, 1), 0);
    ck_assert_int_eq(s.pos, N);
    rope_minimind_state_reset(&s);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(rope_minimind_forward(&m, &s, ids + i, 1,
                                               one + (size_t)i * V, 0), 0);
    rope_minimind_state_reset(&s);
    ck_assert_int_eq(rope_minimind_forward(&m, &s, ids, N, again, 1), 0);
    ck_assert(memcmp(all, again, N * (size_t)V * sizeof *all) == 0);
    for (size_t j = 0; j < N * (size_t)V; j++) {
        ck_assert_msg(fabs(all[j] - ref[j]) <= bound[j], "logit %zu (token "
                      "%zu) in one call: %g, reference %.9g, bound %.3g", j,
                      j / V, all[j], ref[j], bound[j]);
        ck_assert_msg(fabs(one[j] - ref[j]) <= bound[j], "logit %zu (token "
                      "%zu) one at a time: %g, reference %.9g, bound %.3g", j,
                      j / V, one[j], ref[j], bound[j]);
    }
    free(ref);
    rope_minimind_state_free(&s);
    rope_minimind_free(&m);
    free(all);
    free(again);
    free(one);
    free(w);
}
END_TEST
START_TEST(test_mm_cli_greedy)
{
    rope_minimind m;
    rope_minimind_sampler greedy = {0, 1, 0, 0};
    const int ids[] = {3, 1, 4, 1, 5};
    char p[128], args[512], want[256], first[16], idsf[160];
    mmt_mkdir();
    float *w = mmt_cli_model(p, sizeof p, &m, 0);
    mmt_expected(&m, ids, 5, 12, greedy, -1, want, sizeof want);
    snprintf(args, sizeof args, "generate --model %s --ids '3 1 4 1 5' "
             "--max-new 12 --temperature 0 --eos -1", p);
    for (int k = 0; k < 2; k++) { /* twice: the same ids */
        cli_result r = cli_run(args);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.out, want);
        cli_result_free(&r);
    }
    mmt_path(idsf, sizeof idsf, "ids.txt"); /* the ids from a file */
    FILE *f = fopen(idsf, "w");
    ck_assert(f != NULL && fputs("3, 1\n4 1\n5\n", f) >= 0 && fclose(f) == 0);
    snprintf(args, sizeof args, "generate --model %s --ids-file %s "
             "--max-new 12 --temperature 0 --eos -1", p, idsf);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, want);
    cli_result_free(&r);
    snprintf(first, sizeof first, "%.*s\n", (int)strcspn(want, " \n"), want);
    snprintf(args, sizeof args, "generate --model %s --ids '3 1 4 1 5' "
             "--max-new 12 --temperature 0 --eos %.*s", p,
             (int)strcspn(want, " \n"), want);
    r = cli_run(args); /* the end-of-sequence id is printed, then stop */
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, first);
    cli_result_free(&r);
    rope_minimind_free(&m);
    free(w);
    mmt_rmdir();
}
END_TEST

START_TEST(test_mm_cli_sampling)
{
    rope_minimind m;
    const int ids[] = {7, 7, 2};
    char p[128], args[512], want[2][512];
    mmt_mkdir();
    float *w = mmt_cli_model(p, sizeof p, &m, 0);
    for (int k = 0; k < 2; k++) {
        rope_minimind_sampler sp = {1.0, 0.9, 20, 7 + (uint64_t)k};
        mmt_expected(&m, ids, 3, 24, sp, -1, want[k], sizeof want[k]);
        snprintf(args, sizeof args, "generate --model %s --ids '7 7 2' "
                 "--max-new 24 --temperature 1 --top-p 0.9 --top-k 20 "
                 "--seed %d --eos -1", p, 7 + k);
        cli_result r = cli_run(args);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.out, want[k]);
        cli_result_free(&r);
    }
    ck_assert_str_ne(want[0], want[1]); /* the seed is used */
    rope_minimind_free(&m);
    free(w);
    mmt_rmdir();
}
END_TEST
START_TEST(test_mm_cli_logits_yarn)
{
    rope_minimind m;
    rope_minimind_state s;
    rope_npy a;
    const int ids[] = {9, 8, 7, 6, 5};
    char p[128], out[2][160], args[512], err[300];
    float *want[2];
    mmt_mkdir();
    for (int yarn = 0; yarn < 2; yarn++) {
        float *w = mmt_cli_model(p, sizeof p, &m, yarn);
        want[yarn] = malloc(5 * 64 * sizeof *want[yarn]);
        ck_assert(want[yarn] != NULL);
        ck_assert(rope_minimind_state_init(&s, &m, 5, 1) == 0);
        ck_assert(rope_minimind_forward(&m, &s, ids, 5, want[yarn], 1) == 0);
        rope_minimind_state_free(&s);
        rope_minimind_free(&m);
        free(w);
        mmt_path(out[yarn], sizeof out[yarn], yarn ? "y.npy" : "l.npy");
        snprintf(args, sizeof args, "generate --model %s --ids '9 8 7 6 5' "
                 "--max-new 0 --logits %s%s", p, out[yarn],
                 yarn ? " --yarn" : "");
        cli_result r = cli_run(args);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.out, "\n");
        cli_result_free(&r);
        ck_assert_msg(rope_npy_read(out[yarn], &a, err, sizeof err) == 0,
                      "%s", err);
        ck_assert(a.ndim == 2 && a.shape[0] == 5 && a.shape[1] == 64);
        ck_assert(memcmp(a.data, want[yarn], 5 * 64 * sizeof *a.data) == 0);
        rope_npy_free(&a);
    }
    ck_assert(memcmp(want[0], want[1], 5 * 64 * sizeof *want[0]) != 0);
    free(want[0]);
    free(want[1]);
    mmt_rmdir();
}
END_TEST
START_TEST(test_mm_cli_states)
{
    static const int chunks[] = {128, 1, 2};
    enum { N = 7, T = 3 };
    const int ids[N] = {5, 17, 33, 2, 60, 41, 9};
    int moe = _i / 3, chunk = chunks[_i % 3];
    rope_minimind_config c;
    rope_minimind m;
    char p[128], err[300];
    mmt_mkdir();
    mmt_small(&c, moe);
    float *w = mmt_weights(&c, 90 + (uint64_t)moe);
    mmt_path(p, sizeof p, "m.bin");
    ck_assert_msg(rope_minimind_save(p, &c, w, err, sizeof err) == 0, "%s",
                  err);
    memset(&m, 0, sizeof m);
    ck_assert(rope_minimind_bind(&m, &c, w) == 0);
    int L = c.num_hidden_layers, D = c.hidden_size, V = c.vocab_size;
    size_t plane = (size_t)N * D, nv = (size_t)N * V;
    float *own = malloc((size_t)(L + 1) * plane * sizeof *own);
    float *changed = malloc((size_t)(L + 1) * plane * sizeof *changed);
    float *logits = malloc(nv * sizeof *logits);
    ck_assert(own && changed && logits);
    mmt_own_run(&m, ids, N, chunk, own, logits);
    mmt_blocks r;
    mmt_blocks_cli(p, &m, "5 17 33 2 60 41 9", N, chunk, own, &r);
    ck_assert_msg(memcmp(r.out.data, own + plane, (size_t)L * plane
                         * sizeof *own) == 0, "the blocks' outputs differ from "
                  "the library's (chunk %d)", chunk);
    ck_assert_msg(memcmp(r.logits.data, logits, nv * sizeof *logits) == 0,
                  "the logits differ from the library's (chunk %d)", chunk);
    rope_npy_free(&r.out);
    rope_npy_free(&r.logits);
    for (int k = 0; k <= L; k++) {
        memcpy(changed, own, (size_t)(L + 1) * plane * sizeof *own);
        for (int j = 0; j < D; j++)
            changed[(size_t)k * plane + (size_t)T * D + (size_t)j] += 1.0f;
        mmt_blocks_cli(p, &m, "5 17 33 2 60 41 9", N, chunk, changed, &r);
        for (int l = 0; l < L; l++) {
            const float *got = r.out.data + (size_t)l * plane;
            const float *mine = own + (size_t)(l + 1) * plane;
            size_t same = l == k ? (size_t)T * D : plane; /* rows before T */
            ck_assert_msg(memcmp(got, mine, same * sizeof *got) == 0, "plane "
                          "%d changed: block %d's output changed where it must "
                          "not (chunk %d)", k, l, chunk);
            if (l == k)
                ck_assert_msg(memcmp(got + same, mine + same, (size_t)D
                                     * sizeof *got) != 0, "plane %d changed: "
                              "row %d of block %d's output did not", k, T, l);
        }
        size_t rowv = (size_t)T * V;
        ck_assert(memcmp(r.logits.data, logits, (k == L ? rowv : nv)
                         * sizeof *logits) == 0);
        if (k == L) {
            ck_assert(memcmp(r.logits.data + rowv, logits + rowv,
                             (size_t)V * sizeof *logits) != 0);
            ck_assert(memcmp(r.logits.data + rowv + V, logits + rowv + V,
                             (nv - rowv - V) * sizeof *logits) == 0);
        }
        rope_npy_free(&r.out);
        rope_npy_free(&r.logits);
    }
    rope_minimind_free(&m);
    free(own);
    free(changed);
    free(logits);
    free(w);
    mmt_rmdir();
}
END_TEST
static const struct {
    const char *args; /* %s: the model's path */
    int status;
    const char *want; /* in the last line of standard error */
} mmt_cli_bad[] = {
    {"--model %s --ids '1 2' --bogus 3", 2, "unexpected argument '--bogus'"},
    {"--model %s --ids ''", 2, "--ids: no token ids"},
    {"--model %s --ids '1 -2'", 2, "'-2' is not a token id"},
    {"--model %s --ids '1 2x'", 2, "'2x' is not a token id"},
    {"--ids 1", 2, "--model and one of --ids, --ids-file"},
    {"--model %s", 2, "--model and one of --ids, --ids-file"},
    {"--model %s --ids 1 --ids-file %s", 2, "one of --ids, --ids-file"},
    {"--model %s --ids 1 --top-p 0", 2, "--top-p in (0, 1]"},
    {"--model %s --ids 1 --temperature -1", 2, "--temperature must be"},
    {"--model %s --ids 1 --max-new", 2, "--max-new needs a value"},
    {"--model %s --ids 1 --max-new -1", 2, "--max-new: -1 is outside"},
    {"--model %s --ids '1 64'", 1, "token id 64 (place 2 of the prompt)"},
    {"--model %s --ids '1 2' --max-new 4095", 1,
     "max_position_embeddings 4096"},
    {"--model %s.none --ids 1", 1, "m.bin.none: No such file"},
    {"--model %s --ids-file %s.none", 1, "m.bin.none: No such file"},
    {"--model %s.cut --ids 1", 1, "m.bin.cut: truncated: "},
    {"--model %s --ids 1 --logits %s", 2,
     "--model and --logits name the same file"},
    {"--model %s --ids 1 --max-new 0 --logits /nonexistent/l.npy", 1,
     "/nonexistent/l.npy"},
    {"--model %s --ids '1 2' --block-outputs %s.o.npy", 2,
     "--block-outputs and --block-reference need --states"},
    {"--model %s --ids '1 2' --block-reference %s.r", 2,
     "--block-outputs and --block-reference need --states"},
    {"--model %s --ids '1 2' --states %s.s.npy --max-new 1", 2,
     "(--max-new must be 0)"},
    {"--model %s --ids 1 --prefill-chunk 0", 2, "--prefill-chunk: 0 is"},
    {"--model %s --ids '1 2' --states %s.none", 1,
     "m.bin.none: No such file"},
    {"--model %s --ids '1 2' --states %s.shape.npy", 1,
     "m.bin.shape.npy: shape [3 2 31], expected [3 2 32]"},
    {"--model %s --ids '1 2 3' --states %s.s.npy", 1,
     "shape [3 2 32], expected [3 3 32]"},
    {"--model %s --ids '1 2' --states %s.dim.npy", 1,
     "shape [3 64], expected [3 2 32]"},
    {"--model %s --ids '1 2' --states %s.f8.npy", 1,
     "m.bin.f8.npy: dtype '<f8' is not float32"},
    {"--model %s --ids '1 2' --states %s.s.npy --block-outputs %s.s.npy", 2,
     "--states and --block-outputs name the same file"},
    {"--model %s --ids '1 2' --states %s.x-head.npy --block-reference %s.x",
     2, "--states and --block-reference name the same file"},
    {"--model %s --ids '1 2' --states %s.s.npy --block-outputs "
     "/nonexistent/o.npy", 1, "/nonexistent/o.npy"},
    {"--model %s --ids '1 2' --states %s.s.npy --block-reference "
     "/nonexistent/r", 1, "/nonexistent/r-blocks.npy"},
};
enum { MMT_N_CLI_BAD = sizeof mmt_cli_bad / sizeof mmt_cli_bad[0] };

START_TEST(test_mm_cli_errors)
{
    rope_minimind m;
    char p[128], cut[140], args[512], call[600];
    mmt_mkdir();
    float *w = mmt_cli_model(p, sizeof p, &m, 0);
    snprintf(cut, sizeof cut, "%s.cut", p);
    mmt_mutate(p, cut, NULL, NULL, -1);
    static const long good[] = {3, 2, 32}, shape[] = {3, 2, 31}, dim[] = {3, 64};
    static const char *const name[] = {"s", "shape", "dim"};
    const long *shapes[] = {good, shape, dim};
    float *zero = calloc(3 * 2 * 32, sizeof *zero);
    char sp[160], err[300], h[118]; /* 10 + 118 = 128 bytes */
    ck_assert(zero != NULL);
    for (int i = 0; i < 3; i++) {
        snprintf(sp, sizeof sp, "%s.%s.npy", p, name[i]);
        ck_assert(rope_npy_write(sp, zero, i == 2 ? 2 : 3, shapes[i], err,
                                 sizeof err) == 0);
    }
    snprintf(sp, sizeof sp, "%s.f8.npy", p);
    int hl = snprintf(h, sizeof h, "{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (3, 2, 32), }");
    ck_assert(hl > 0 && (size_t)hl < sizeof h - 1);
    memset(h + hl, ' ', sizeof h - 1 - (size_t)hl);
    h[sizeof h - 1] = '\n';
    FILE *f = fopen(sp, "wb");
    ck_assert(f != NULL);
    ck_assert(fwrite("\x93NUMPY\x01\x00\x76\x00", 1, 10, f) == 10);
    ck_assert(fwrite(h, 1, sizeof h, f) == sizeof h);
    for (int i = 0; i < 3 * 2 * 32; i++)
        ck_assert(fwrite(zero, 8, 1, f) == 1);
    ck_assert(fclose(f) == 0);
    free(zero);
    snprintf(args, sizeof args, mmt_cli_bad[_i].args, p, p, p);
    snprintf(call, sizeof call, "generate %s", args);
    cli_result r = cli_run(call);
    ck_assert_msg(r.status == mmt_cli_bad[_i].status, "%s: status %d, %s",
                  call, r.status, r.err);
    const char *last = strstr(r.err, "rope: error: ");
    ck_assert_msg(last != NULL && strchr(last, '\n') == last + strlen(last)
                  - 1, "not one line of error at the end: %s", r.err);
    ck_assert_int_eq(cli_line_count(r.err),
                     mmt_cli_bad[_i].status == 2
                     || !strstr(call, "/nonexistent/") ? 1 : 3);
    ck_assert_msg(strstr(last, mmt_cli_bad[_i].want) != NULL,
                  "'%s' does not say '%s'", r.err, mmt_cli_bad[_i].want);
    ck_assert_str_eq(r.out, "");
    cli_result_free(&r);
    rope_minimind_free(&m);
    free(w);
    mmt_rmdir();
}
END_TEST

Suite *minimind_suite(void)
{
    Suite *s = suite_create("chapter 8: MiniMind in C");
    TCase *tc = tcase_create("weight file");
    TCase *fw = tcase_create("forward and cache");
    TCase *cl = tcase_create("rope generate");
    tcase_set_timeout(tc, 60);
    tcase_set_timeout(cl, 120);
    tcase_add_loop_test(tc, test_mm_tensor_list, 0, 2);
    tcase_add_loop_test(tc, test_mm_round_trip, 0, 2);
    tcase_add_loop_test(tc, test_mm_load_refuses, 0, MMT_N_BAD);
    tcase_add_test(tc, test_mm_load_bad_paths);
    tcase_add_test(tc, test_mm_save_leaves_nothing);
    tcase_add_loop_test(fw, test_mm_prefill_equals_steps, 0, 2);
    tcase_add_test(cl, test_mm_cli_greedy);
    tcase_add_test(cl, test_mm_cli_sampling);
    tcase_add_test(cl, test_mm_cli_logits_yarn);
    tcase_add_loop_test(cl, test_mm_cli_states, 0, 6);
    tcase_add_loop_test(cl, test_mm_cli_errors, 0, MMT_N_CLI_BAD);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, fw);
    suite_add_tcase(s, cl);
    return s;
}
