/* W5.11 The attention command */
/* cli-attention.c: `rope attention', chapter 5's kernel on .npy, and
   the options it shares with `rope-ring attention'. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

const char *const cli_attention_names[4] = {
    "--q", "--k", "--v", "--out"
};

void cli_attention_defaults(cli_attention_options *a, const char *cmd)
{
    *a = (cli_attention_options){.cmd = cmd, .threads = 1,
                                 .simd = ROPE_SIMD_AUTO,
                                 .kv_dtype = ROPE_DTYPE_F32};
}
int cli_attention_flag(cli_attention_options *a, cli_rope_options *o,
                       int argc, char **argv, int *i)
{
    const char *f = argv[*i];
    if (!strcmp(f, "--causal")) { a->causal = 1; return 0; }
    if (!strcmp(f, "--no-rope")) { a->no_rope = 1; return 0; }
    for (int j = 0; j < 4; j++)
        if (!strcmp(f, cli_attention_names[j])) {
            if (cli_need_value(argc, argv, *i)) return 2;
            a->path[j] = argv[++*i];
            return 0;
        }
    if (!strcmp(f, "--threads") || !strcmp(f, "--start-pos")
        || !strcmp(f, "--simd") || !strcmp(f, "--kv-dtype")) {
        if (cli_need_value(argc, argv, *i)) return 2;
        const char *val = argv[++*i];
        if (!strcmp(f, "--threads"))
            return cli_parse_int(f, val, 1, 256, &a->threads);
        if (!strcmp(f, "--start-pos"))
            return cli_parse_int(f, val, 0, ROPE_MAX_POSITION - 1,
                                 &a->start_pos);
        if (!strcmp(f, "--kv-dtype")) {
            if (strcmp(val, "f32") && strcmp(val, "bf16"))
                return cli_error("--kv-dtype: expected f32 or bf16, got "
                                 "'%s'", val);
            a->kv_dtype = val[0] == 'b' ? ROPE_DTYPE_BF16 : ROPE_DTYPE_F32;
            return 0;
        }
        if (rope_simd_parse(val, &a->simd))
            return cli_error("--simd: expected auto, scalar, avx2 or "
                             "avx512, got '%s'", val);
        return 0;
    }
    int r = cli_rope_parse_option(o, argc, argv, i);
    if (r == 1) return 0;
    return r == 2 ? 2
        : cli_error("%s: unexpected argument '%s'", a->cmd, f);
}
static size_t att_cli_mib(size_t bytes)
{
    return (bytes + ((size_t)1 << 20) - 1) >> 20;
}
static int att_cli_read_error(const char *path, const char *flag,
                              const char *err)
{
    struct stat st;
    if (strstr(err, "out of memory") && stat(path, &st) == 0)
        return cli_error("out of memory: needs %zu MiB for reading %s",
                         att_cli_mib(2 * (size_t)st.st_size), flag);
    return cli_error("%s", err);
}
int cli_attention_kernel_error(int e, const rope_attention_params *p,
                               const rope_npy *x, const float *lse)
{
    static const char *const why = "the attention output is not finite";
    size_t rows = x[0].count / (size_t)p->head_dim;
    if (e == ROPE_ATTENTION_ENOMEM)
        return cli_error("out of memory: needs %zu MiB for the attention "
                         "workspace",
                         att_cli_mib(rope_attention_workspace_bytes(p)));
    if (e == 1 && p->kv_dtype == ROPE_DTYPE_BF16)
        return cli_error("attention: --kv-dtype bf16: bf16 is not "
                         "supported by this build");
    if (e != ROPE_ATTENTION_ENONFINITE)
        return cli_error("attention: the kernel rejected the arguments");
    for (int j = 0; j < 3; j++)
        for (size_t i = 0; i < x[j].count; i++)
            if (!isfinite(x[j].data[i]))
                return cli_error("%s: %s holds inf or NaN", why,
                                 cli_attention_names[j]);
    if (lse == NULL)
        return cli_error("%s: the scores of --q and --k or the weighted "
                         "sums of --v overflow float", why);
    for (size_t i = 0; i < rows; i++)
        if (!isfinite(lse[i]))
            return cli_error("%s: the scores of --q and --k overflow "
                             "float", why);
    return cli_error("%s: the weighted sums of --v overflow float", why);
}
typedef struct {
    double t0, after, last;
    long best;
    int shown;
    pthread_mutex_t lock;
} att_progress;
static void att_cli_progress(void *ctx, long done, long total)
{
    att_progress *pr = ctx;
    if (pthread_mutex_trylock(&pr->lock) != 0) return;
    double t = cli_now() - pr->t0, f = (double)done / (double)total;
    if (done > pr->best && t >= pr->after
        && (!pr->shown || t - pr->last >= 0.25 || done == total)) {
        fprintf(stderr, "\rrope: attention %3.0f%% (%.1f s elapsed, "
                "about %.1f s left) ", 100 * f, t, t * (1 - f) / f);
        pr->last = t;
        pr->best = done;
        pr->shown = 1;
    }
    pthread_mutex_unlock(&pr->lock);
}
static void att_progress_start(att_progress *pr, rope_attention_params *p)
{
    const char *env = getenv("ROPE_PROGRESS_AFTER");
    char *end = NULL;
    double after = env ? strtod(env, &end) : 2.0;
    memset(pr, 0, sizeof *pr);
    pr->after = env && end != env && *end == '\0' && after >= 0
                ? after : 2.0;
    pr->t0 = cli_now();
    pthread_mutex_init(&pr->lock, NULL);
    if (isatty(2)) {
        p->progress = att_cli_progress;
        p->progress_ctx = pr;
    }
}

static void att_progress_end(att_progress *pr)
{
    if (pr->shown) fputc('\n', stderr);
    pthread_mutex_destroy(&pr->lock);
}
int cli_attention_files(const cli_attention_options *a)
{
    for (int j = 0; j < 4; j++)
        if (!a->path[j])
            return cli_error("%s: %s FILE is required", a->cmd,
                             cli_attention_names[j]);
    return cli_check_files(3, 4, cli_attention_names, a->path);
}

int cli_attention_read(const cli_attention_options *a, rope_npy *x)
{
    char err[512];
    for (int j = 0; j < 3; j++)
        if (rope_npy_read(a->path[j], &x[j], err, sizeof err))
            return att_cli_read_error(a->path[j],
                                      cli_attention_names[j], err);
    return 0;
}
int cli_attention_shapes(const rope_npy *x, cli_rope_options *o,
                         const cli_attention_options *a)
{
    const long *q = x[0].shape, *k = x[1].shape, *v = x[2].shape;
    int ok = x[0].ndim == 4 && x[1].ndim == 4 && x[2].ndim == 4;
    for (int j = 0; ok && j < 4; j++)
        ok = k[j] == v[j] && q[j] > 0 && k[j] > 0 && q[j] <= 1L << 24
             && k[j] <= 1L << 24;
    if (!ok || q[0] != k[0] || q[3] != k[3])
        return cli_error("%s: q must be [batch, seq_len, n_heads, "
                         "head_dim] and k, v equal [batch, kv_len, "
                         "n_kv_heads, head_dim]", a->cmd);
    if (q[3] > ROPE_ATTENTION_MAX_HEAD_DIM)
        return cli_error("%s: head_dim %ld exceeds %d, the widest head "
                         "the kernel tiles", a->cmd, q[3],
                         ROPE_ATTENTION_MAX_HEAD_DIM);
    if (q[2] % k[2])
        return cli_error("%s: n_heads %ld is not a multiple of "
                         "n_kv_heads %ld", a->cmd, q[2], k[2]);
    if (q[1] > k[1])
        return cli_error("%s: seq_len %ld exceeds kv_len %ld", a->cmd,
                         q[1], k[1]);
    if (o->head_dim != 0 && o->head_dim != q[3])
        return cli_error("%s: --head-dim %d but the arrays have head_dim "
                         "%ld", a->cmd, o->head_dim, q[3]);
    o->head_dim = (int)q[3];
    if (!a->no_rope && a->start_pos + k[1] > ROPE_MAX_POSITION)
        return cli_error("%s: --start-pos %ld + kv_len %ld passes %ld",
                         a->cmd, a->start_pos, k[1], ROPE_MAX_POSITION);
    return a->no_rope ? 0 : cli_rope_validate(o);
    return 0;
}

int cmd_attention(int argc, char **argv)
{
    cli_rope_options o;
    cli_attention_options a;
    rope_npy x[3] = {{0}, {0}, {0}}; /* q, k, v */
    int rc = 0;
    cli_rope_defaults(&o);
    cli_attention_defaults(&a, "attention");
    for (int i = 1; i < argc && rc == 0; i++)
        rc = cli_attention_flag(&a, &o, argc, argv, &i);
    rc = rc ? rc : cli_attention_files(&a);
    /* The frame of the workshop / Fuzzing: inputs nobody thought of */
    if (rc == 0 && cli_parse_only)
        return a.no_rope ? 0 : cli_rope_validate(&o);
    /* W5.11 The attention command */
    rc = rc ? rc : cli_attention_read(&a, x);
    rc = rc ? rc : cli_attention_shapes(x, &o, &a);
    float *c = NULL, *s = NULL, *out = NULL, *lse = NULL;
    att_progress pr;
    rope_attention_params p;
    rope_attention_defaults(&p);
    if (rc == 0 && !a.no_rope)
        rc = cli_rope_table(&o, a.start_pos, a.start_pos + x[1].shape[1],
                            &c, &s);
    size_t rows = rc == 0 ? x[0].count / (size_t)x[0].shape[3] : 0;
    if (rc == 0 && (!(out = malloc(sizeof(float) * x[0].count))
                    || !(lse = malloc(sizeof(float) * rows))))
        rc = cli_error("out of memory: needs %zu MiB for the output --out",
                       att_cli_mib(sizeof(float) * (x[0].count + rows)));
    if (rc == 0) {
        p.batch = (int)x[0].shape[0];
        p.seq_len = (int)x[0].shape[1];
        p.n_heads = (int)x[0].shape[2];
        p.head_dim = (int)x[0].shape[3];
        p.kv_len = (int)x[1].shape[1];
        p.n_kv_heads = (int)x[1].shape[2];
        p.causal = a.causal;
        p.freqs_cos = c; p.freqs_sin = s;
        p.table_len = c ? p.kv_len : 0;
        p.pairing = o.pairing;
        p.n_threads = (int)a.threads;
        p.simd = a.simd;
        p.kv_dtype = a.kv_dtype;
        p.lse = lse;
        att_progress_start(&pr, &p);
        int e = rope_attention(out, x[0].data, x[1].data, x[2].data, &p);
        att_progress_end(&pr);
        if (e)
            rc = cli_attention_kernel_error(e, &p, x, lse);
        else {
            rope_npy result = x[0];
            result.data = out;
            rc = cli_write_npys(1, cli_attention_names + 3, a.path + 3,
                                &result);
        }
    }
    free(c); free(s); free(out); free(lse);
    for (int j = 0; j < 3; j++) rope_npy_free(&x[j]);
    return rc;
}


/* W5.12 The decode command */
static void dec_rows(float *blk, float *all, long batch, long len,
                     long j0, long n, size_t width, int back)
{
    for (long b = 0; b < batch; b++) {
        float *a = all + ((size_t)b * len + j0) * width;
        float *k = blk + (size_t)b * n * width;
        memcpy(back ? a : k, back ? k : a, sizeof(float) * n * width);
    }
}

static int dec_call(float *out, float *lse, float *blk, rope_npy *x,
                    rope_attention_params *p, rope_kv_cache *cache,
                    long k0, long k1, long i0, long i1)
{
    long B = p->batch, n = p->seq_len, nkv = p->kv_len;
    size_t kw = (size_t)p->n_kv_heads * p->head_dim;
    size_t qw = (size_t)p->n_heads * p->head_dim;
    size_t most = (size_t)B * (nkv * kw > n * qw ? nkv * kw : n * qw);
    float *b1 = blk + most, *b2 = b1 + most;
    rope_attention_params pc = *p;
    int e = 0;
    if (k1 > k0) {
        dec_rows(blk, x[1].data, B, nkv, k0, k1 - k0, kw, 0);
        dec_rows(b1, x[2].data, B, nkv, k0, k1 - k0, kw, 0);
        e = rope_kv_cache_append(cache, blk, b1, (int)(k1 - k0), p);
    }
    if (e == 0 && i1 > i0) {
        pc.seq_len = (int)(i1 - i0);
        pc.lse = b2;
        dec_rows(blk, x[0].data, B, n, i0, i1 - i0, qw, 0);
        e = rope_attention_cached(b1, blk, cache, &pc);
        dec_rows(b1, out, B, n, i0, i1 - i0, qw, 1);
        dec_rows(b2, lse, B, n, i0, i1 - i0, p->n_heads, 1);
    }
    return e;
}

static int dec_run(float *out, float *lse, float *blk, rope_npy *x,
                   rope_attention_params *p, rope_kv_cache *cache,
                   long prefill)
{
    long n = p->seq_len, first = p->kv_len - n;
    int e = dec_call(out, lse, blk, x, p, cache, 0, first + prefill, 0,
                     prefill);
    for (long i = prefill; e == 0 && i < n; i++)
        e = dec_call(out, lse, blk, x, p, cache, first + i, first + i + 1,
                     i, i + 1);
    return e ? cli_attention_kernel_error(e, p, x, lse) : 0;
}
int cmd_decode(int argc, char **argv)
{
    cli_rope_options o;
    cli_attention_options a;
    rope_npy x[3] = {{0}, {0}, {0}}; /* q, k, v */
    long prefill = 0;
    int rc = 0;
    cli_rope_defaults(&o);
    cli_attention_defaults(&a, "decode");
    for (int i = 1; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "--prefill"))
            rc = cli_attention_flag(&a, &o, argc, argv, &i);
        else if ((rc = cli_need_value(argc, argv, i)) == 0)
            rc = cli_parse_int("--prefill", argv[++i], 0, 1L << 24,
                               &prefill);
    }
    if (rc == 0 && a.kv_dtype == ROPE_DTYPE_BF16)
        rc = cli_error("decode: --kv-dtype bf16: the key/value cache "
                       "holds float32 keys and values");
    rc = rc ? rc : cli_attention_files(&a);
    if (rc == 0 && cli_parse_only)
        return a.no_rope ? 0 : cli_rope_validate(&o);
    rc = rc ? rc : cli_attention_read(&a, x);
    rc = rc ? rc : cli_attention_shapes(x, &o, &a);
    if (rc == 0 && prefill > x[0].shape[1])
        rc = cli_error("decode: --prefill %ld exceeds seq_len %ld",
                       prefill, x[0].shape[1]);
    a.causal = 1;
    float *c = NULL, *s = NULL, *out = NULL, *lse = NULL, *blk = NULL;
    rope_attention_params p;
    rope_kv_cache cache = {0, 0, 0, 0, 0, 0, NULL};
    rope_attention_defaults(&p);
    if (rc == 0 && !a.no_rope)
        rc = cli_rope_table(&o, a.start_pos, a.start_pos + x[1].shape[1],
                            &c, &s);
    size_t rows = rc == 0 ? x[0].count / (size_t)x[0].shape[3] : 0;
    size_t most = rc == 0 ? (size_t)x[0].shape[0] * x[1].shape[1]
                            * x[1].shape[2] * x[1].shape[3] : 0;
    most = most > x[0].count ? most : x[0].count;
    if (rc == 0 && (!(out = malloc(sizeof(float) * x[0].count))
                    || !(lse = calloc(rows, sizeof(float)))
                    || !(blk = malloc(sizeof(float) * (2 * most + rows)))))
        rc = cli_error("out of memory: needs %zu MiB for the output --out "
                       "and the rows of a call", att_cli_mib(sizeof(float)
                       * (x[0].count + 2 * most + 2 * rows)));
    if (rc == 0) {
        /* W5.11 The attention command */
        p.batch = (int)x[0].shape[0];
        p.seq_len = (int)x[0].shape[1];
        p.n_heads = (int)x[0].shape[2];
        p.head_dim = (int)x[0].shape[3];
        p.kv_len = (int)x[1].shape[1];
        p.n_kv_heads = (int)x[1].shape[2];
        p.causal = a.causal;
        p.freqs_cos = c; p.freqs_sin = s;
        p.table_len = c ? p.kv_len : 0;
        p.pairing = o.pairing;
        p.n_threads = (int)a.threads;
        p.simd = a.simd;
        p.kv_dtype = a.kv_dtype;
        p.lse = lse;
        /* W5.12 The decode command */
        p.causal = 1;
        if (rope_kv_cache_init(&cache, p.batch, p.n_kv_heads, p.head_dim,
                               p.kv_len) != 0)
            rc = cli_error("out of memory: needs %zu MiB for the key/value "
                           "cache", att_cli_mib(sizeof(float) * 2
                           * (size_t)p.batch * p.n_kv_heads
                           * ((p.head_dim + 15) / 16 * 16)
                           * ((p.kv_len + ROPE_ATTENTION_BK - 1)
                              / ROPE_ATTENTION_BK * ROPE_ATTENTION_BK)));
        else
            rc = dec_run(out, lse, blk, x, &p, &cache, prefill);
    }
    if (rc == 0) {
        rope_npy result = x[0];
        result.data = out;
        rc = cli_write_npys(1, cli_attention_names + 3, a.path + 3, &result);
    }
    rope_kv_cache_free(&cache);
    free(c); free(s); free(out); free(lse); free(blk);
    for (int j = 0; j < 3; j++) rope_npy_free(&x[j]);
    return rc;
}
