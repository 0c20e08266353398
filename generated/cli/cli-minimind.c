/* W8.4 The command rope generate */
/* cli-minimind.c: `rope generate', MiniMind's generation (chapter 8) */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "minimind-reference.h"

enum { GEN_ROWS = 128 }; /* --prefill-chunk's default */
typedef struct gen_args {
    const char *model, *ids, *ids_file, *logits, *reference;
    const char *states, *block_outputs, *block_reference;
    long max_new, top_k, seed, eos, threads, prefill_chunk;
    double temperature, top_p;
    int yarn; /* --yarn given */
} gen_args;

static int gen_parse_ids(const char *what, const char *s, int **ids,
                         int *n)
{
    size_t cap = strlen(s) / 2 + 1, k = 0;
    int *v = malloc(cap * sizeof *v);
    const char *p = s;
    if (v == NULL)
        return cli_error("generate: %s: out of memory", what);
    for (;;) {
        char *end;
        long x;
        while (*p != '\0' && strchr(" \t\r\n,", *p) != NULL)
            p++;
        if (*p == '\0')
            break;
        errno = 0;
        x = strtol(p, &end, 10);
        if (*p < '0' || *p > '9' || errno == ERANGE || x > INT_MAX
            || (*end != '\0' && strchr(" \t\r\n,", *end) == NULL)) {
            free(v);
            return cli_error("generate: %s: '%.20s' is not a token id",
                             what, p);
        }
        v[k++] = (int)x;
        p = end;
    }
    if (k == 0) {
        free(v);
        return cli_error("generate: %s: no token ids", what);
    }
    *ids = v;
    *n = (int)k;
    return 0;
}
static int gen_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("generate: %s", msg);
    return 1;
}

static int gen_read_ids(const char *path, int **ids, int *n)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc, c;
    if (f == NULL)
        return gen_fail("%s: %s", path, strerror(errno));
    while ((c = fgetc(f)) != EOF) {
        if (len + 1 >= cap) {
            char *t = realloc(text, cap = 2 * cap + 4096);
            if (t == NULL) {
                free(text);
                fclose(f);
                return gen_fail("%s: out of memory", path);
            }
            text = t;
        }
        text[len++] = (char)(c == '\0' ? 'x' : c);
    }
    rc = ferror(f);
    fclose(f);
    if (rc) {
        free(text);
        return gen_fail("%s: cannot read it", path);
    }
    rc = gen_parse_ids(path, text ? (text[len] = '\0', text) : "", ids, n);
    free(text);
    return rc;
}
typedef struct gen_states {
    const float *in; /* [L+1, n, hidden]: what enters each block, norm */
    float *out; /* [L, n, hidden]: what each block gave */
    int n; /* the prompt's length: rows of a plane */
} gen_states;

static int gen_read_states(const char *path, const rope_minimind_config *c,
                           int n, rope_npy *in, gen_states *g)
{
    char err[512], got[200] = "";
    int L = c->num_hidden_layers, D = c->hidden_size;
    size_t used = 0;
    if (rope_npy_read(path, in, err, sizeof err) != 0)
        return gen_fail("%s", err);
    if (in->ndim != 3 || in->shape[0] != L + 1 || in->shape[1] != n
        || in->shape[2] != D) {
        for (int i = 0; i < in->ndim && used < sizeof got - 24; i++)
            used += (size_t)snprintf(got + used, sizeof got - used, "%s%ld",
                                     i ? " " : "", in->shape[i]);
        return gen_fail("%s: shape [%s], expected [%d %d %d] (layers + 1, "
                        "prompt tokens, hidden_size)", path, got, L + 1, n,
                        D);
    }
    g->in = in->data;
    g->out = malloc((size_t)L * (size_t)n * (size_t)D * sizeof *g->out);
    if (g->out == NULL)
        return gen_fail("out of memory: the blocks' outputs");
    return 0;
}
static void gen_replace(void *ctx, int layer, long pos, float *x, int rows,
                        int hidden)
{
    gen_states *g = ctx;
    size_t plane = (size_t)g->n * hidden, at = (size_t)pos * hidden;
    size_t len = (size_t)rows * hidden * sizeof *x;
    if (layer > 0)
        memcpy(g->out + (size_t)(layer - 1) * plane + at, x, len);
    memcpy(x, g->in + (size_t)layer * plane + at, len);
}
static int gen_run(const gen_args *a, const int *ids, int n)
{
    rope_minimind m;
    rope_minimind_state s;
    rope_npy in = {0};
    gen_states g = {NULL, NULL, n};
    char err[512];
    float *logits = NULL, *step = NULL;
    int rc = 0, V, rows;
    memset(&m, 0, sizeof m);
    m.config.inference_rope_scaling = a->yarn;
    if (rope_minimind_load(&m, a->model, err, sizeof err) != 0)
        return gen_fail("%s", err);
    V = m.config.vocab_size;
    rows = n < a->prefill_chunk ? n : (int)a->prefill_chunk;
    for (int i = 0; i < n && rc == 0; i++)
        if (ids[i] >= V)
            rc = gen_fail("token id %d (place %d of the prompt) is not below "
                          "the model's vocab_size %d", ids[i], i + 1, V);
    if (rc == 0 && n + a->max_new > m.config.max_position_embeddings)
        rc = gen_fail("%d prompt tokens and --max-new %ld exceed the "
                      "model's max_position_embeddings %ld", n, a->max_new,
                      m.config.max_position_embeddings);
    if (rc == 0 && a->states)
        rc = gen_read_states(a->states, &m.config, n, &in, &g);
    if (rc == 0)
        fprintf(stderr, "generate: %s: %s, %d layers, hidden %d, vocab %d, "
                "%zu parameters; YaRN %s; %ld thread%s; %d prompt tokens\n",
                a->model, m.config.use_moe ? "MoE" : "dense",
                m.config.num_hidden_layers, m.config.hidden_size, V,
                rope_minimind_n_floats(&m.config), a->yarn ? "on" : "off",
                a->threads, a->threads > 1 ? "s" : "", n);
    logits = malloc((a->logits ? (size_t)n : 1) * (size_t)V * sizeof *logits);
    step = malloc((size_t)V * sizeof *step);
    if (rc == 0 && (logits == NULL || step == NULL
        || rope_minimind_state_init(&s, &m, rows, (int)a->threads) != 0))
        rc = gen_fail("out of memory: the state of %d rows", rows);
    else if (rc == 0) {
        if (a->states) {
            s.hook = gen_replace;
            s.hook_ctx = &g;
        }
        double t0 = cli_now(), t1;
        for (int at = 0; at < n && rc == 0; at += rows) { /* rows: the chunk */
            int k = n - at < rows ? n - at : rows, e;
            float *out = a->logits ? logits + (size_t)at * V : logits;
            if ((e = rope_minimind_forward(&m, &s, ids + at, k, out,
                                           a->logits != NULL)) != 0)
                rc = gen_fail("the forward pass failed at token %d (error %d)",
                              at + 1, e);
        }
        t1 = cli_now();
        if (rc == 0)
            fprintf(stderr, "generate: prefill: %d tokens in %.3f s, %.1f "
                    "tokens/s\n", n, t1 - t0, n / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
        const float *last = a->logits ? logits + (size_t)(n - 1) * V : logits;
        long shape[2] = {n, V};
        if (rc == 0 && a->logits
            && rope_npy_write(a->logits, logits, 2, shape, err, sizeof err) != 0)
            rc = gen_fail("%s", err);
        if (rc == 0 && a->reference
            && rope_minimind_reference_npy(&m, ids, n, (int)a->threads,
                                           a->reference, err, sizeof err) != 0)
            rc = gen_fail("%s", err);
        long bshape[3] = {m.config.num_hidden_layers, n, m.config.hidden_size};
        if (rc == 0 && a->block_outputs
            && rope_npy_write(a->block_outputs, g.out, 3, bshape, err,
                              sizeof err) != 0)
            rc = gen_fail("%s", err);
        if (rc == 0 && a->block_reference
            && rope_minimind_reference_blocks_npy(&m, g.in, n, (int)a->threads,
                                                  a->block_reference, err,
                                                  sizeof err) != 0)
            rc = gen_fail("%s", err);
        rope_minimind_sampler sp = {a->temperature, a->top_p, (int)a->top_k,
                                    (uint64_t)a->seed};
        long steps = 0;
        t0 = cli_now();
        for (long g = 0; g < a->max_new && rc == 0; g++) {
            int tok = rope_minimind_sample(last, V, &sp), e;
            printf("%s%d", g ? " " : "", tok);
            fflush(stdout);
            if (tok == a->eos || g + 1 == a->max_new)
                break;
            if ((e = rope_minimind_forward(&m, &s, &tok, 1, step, 0)) != 0)
                rc = gen_fail("the forward pass failed at position %ld (error %d)",
                              s.pos, e);
            last = step;
            steps++;
        }
        t1 = cli_now();
        if (rc == 0) {
            putchar('\n');
            if (steps > 0)
                fprintf(stderr, "generate: decode: %ld tokens in %.3f s, %.1f "
                        "tokens/s\n", steps, t1 - t0,
                        steps / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
        }
        rope_minimind_state_free(&s);
    }
    free(logits);
    free(step);
    free(g.out);
    rope_npy_free(&in);
    rope_minimind_free(&m);
    return rc;
}
int cmd_generate(int argc, char **argv)
{
    gen_args a = {.max_new = -1, .top_k = 50, .seed = 1, .eos = 2,
                  .threads = 1, .prefill_chunk = GEN_ROWS,
                  .temperature = 0.85, .top_p = 0.85};
    int *ids = NULL, n = 0, rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *f = argv[i], **str = !strcmp(f, "--model") ? &a.model
            : !strcmp(f, "--ids") ? &a.ids
            : !strcmp(f, "--ids-file") ? &a.ids_file
            : !strcmp(f, "--logits") ? &a.logits
            : !strcmp(f, "--reference") ? &a.reference
            : !strcmp(f, "--states") ? &a.states
            : !strcmp(f, "--block-outputs") ? &a.block_outputs
            : !strcmp(f, "--block-reference") ? &a.block_reference : NULL;
        long *num = !strcmp(f, "--max-new") ? &a.max_new
            : !strcmp(f, "--top-k") ? &a.top_k : !strcmp(f, "--seed") ? &a.seed
            : !strcmp(f, "--eos") ? &a.eos
            : !strcmp(f, "--threads") ? &a.threads
            : !strcmp(f, "--prefill-chunk") ? &a.prefill_chunk : NULL;
        double *real = !strcmp(f, "--temperature") ? &a.temperature
            : !strcmp(f, "--top-p") ? &a.top_p : NULL;
        if (!strcmp(f, "--yarn")) {
            a.yarn = 1;
            continue;
        }
        if (!str && !num && !real)
            return cli_error("generate: unexpected argument '%s'", f);
        if ((rc = cli_need_value(argc, argv, i)) != 0)
            return rc;
        const char *val = argv[++i];
        if (str)
            *str = val;
        else if (num)
            rc = cli_parse_int(f, val, num == &a.eos ? -1
                               : num == &a.threads
                                 || num == &a.prefill_chunk,
                               num == &a.threads ? 1024 : num == &a.seed
                               ? LONG_MAX : num == &a.eos ? INT_MAX
                               : ROPE_MAX_POSITION, num);
        else
            rc = cli_parse_double(f, val, real);
    }
    if (rc)
        return rc;
    if (a.model == NULL || (a.ids == NULL) == (a.ids_file == NULL))
        return cli_error("generate: --model and one of --ids, --ids-file "
                         "are required");
    if (!(a.temperature >= 0) || !(a.top_p > 0 && a.top_p <= 1))
        return cli_error("generate: --temperature must be >= 0 and --top-p "
                         "in (0, 1]");
    if ((a.block_outputs || a.block_reference) && a.states == NULL)
        return cli_error("generate: --block-outputs and --block-reference "
                         "need --states");
    if (a.states && a.max_new > 0)
        return cli_error("generate: --states replaces the prompt's hidden "
                         "states: nothing can be generated after them "
                         "(--max-new must be 0)");
    if (a.max_new < 0)
        a.max_new = a.states ? 0 : 64;
    const char *flags[8], *paths[8];
    char ref_blocks[4096], ref_head[4096];
    int nin = 0, nall;
    flags[nin] = "--model", paths[nin++] = a.model;
    if (a.ids_file)
        flags[nin] = "--ids-file", paths[nin++] = a.ids_file;
    if (a.states)
        flags[nin] = "--states", paths[nin++] = a.states;
    nall = nin;
    if (a.logits)
        flags[nall] = "--logits", paths[nall++] = a.logits;
    if (a.reference)
        flags[nall] = "--reference", paths[nall++] = a.reference;
    if (a.block_outputs)
        flags[nall] = "--block-outputs", paths[nall++] = a.block_outputs;
    if (a.block_reference) {
        snprintf(ref_blocks, sizeof ref_blocks, "%s-blocks.npy",
                 a.block_reference);
        snprintf(ref_head, sizeof ref_head, "%s-head.npy", a.block_reference);
        flags[nall] = "--block-reference", paths[nall++] = ref_blocks;
        flags[nall] = "--block-reference", paths[nall++] = ref_head;
    }
    if ((rc = cli_check_files(nin, nall, flags, paths)) != 0)
        return rc;
    if (a.ids && (rc = gen_parse_ids("--ids", a.ids, &ids, &n)) != 0)
        return rc;
    if (cli_parse_only) {
        free(ids);
        return 0;
    }
    if (a.ids_file && (rc = gen_read_ids(a.ids_file, &ids, &n)) != 0)
        return rc;
    rc = gen_run(&a, ids, n);
    free(ids);
    return rc;
}
