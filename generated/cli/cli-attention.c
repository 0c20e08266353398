/* cli-attention.c: `rope attention', chapter 5's kernel on .npy. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct {
    const char *path[4]; /* q, k, v, out */
    int causal, no_rope;
    long threads, start_pos;
    rope_simd simd;
} att_cli;

static const char *const att_cli_names[4] = {
    "--q", "--k", "--v", "--out"
};
static int att_cli_flag(att_cli *a, cli_rope_options *o, int argc,
                        char **argv, int *i)
{
    const char *f = argv[*i];
    if (!strcmp(f, "--causal")) { a->causal = 1; return 0; }
    if (!strcmp(f, "--no-rope")) { a->no_rope = 1; return 0; }
    for (int j = 0; j < 4; j++)
        if (!strcmp(f, att_cli_names[j])) {
            if (cli_need_value(argc, argv, *i)) return 2;
            a->path[j] = argv[++*i];
            return 0;
        }
    if (!strcmp(f, "--threads") || !strcmp(f, "--start-pos")
        || !strcmp(f, "--simd")) {
        if (cli_need_value(argc, argv, *i)) return 2;
        const char *val = argv[++*i];
        if (!strcmp(f, "--threads"))
            return cli_parse_int(f, val, 1, 256, &a->threads);
        if (!strcmp(f, "--start-pos"))
            return cli_parse_int(f, val, 0, ROPE_MAX_POSITION - 1,
                                 &a->start_pos);
        if (rope_simd_parse(val, &a->simd))
            return cli_error("--simd: expected auto, scalar, avx2 or "
                             "avx512, got '%s'", val);
        return 0;
    }
    int r = cli_rope_parse_option(o, argc, argv, i);
    if (r == 1) return 0;
    return r == 2 ? 2
        : cli_error("attention: unexpected argument '%s'", f);
}
static int att_cli_shapes(const rope_npy *x, cli_rope_options *o,
                          const att_cli *a)
{
    const long *q = x[0].shape, *k = x[1].shape, *v = x[2].shape;
    int ok = x[0].ndim == 4 && x[1].ndim == 4 && x[2].ndim == 4;
    for (int j = 0; ok && j < 4; j++)
        ok = k[j] == v[j] && q[j] > 0 && k[j] > 0 && q[j] <= 1L << 24
             && k[j] <= 1L << 24;
    if (!ok || q[0] != k[0] || q[3] != k[3])
        return cli_error("attention: q must be [batch, seq_len, "
                         "n_heads, head_dim] and k, v equal [batch, "
                         "kv_len, n_kv_heads, head_dim]");
    if (q[2] % k[2])
        return cli_error("attention: n_heads %ld is not a multiple of "
                         "n_kv_heads %ld", q[2], k[2]);
    if (q[1] > k[1])
        return cli_error("attention: seq_len %ld exceeds kv_len %ld",
                         q[1], k[1]);
    if (o->head_dim != 0 && o->head_dim != q[3])
        return cli_error("attention: --head-dim %d but the arrays have "
                         "head_dim %ld", o->head_dim, q[3]);
    o->head_dim = (int)q[3];
    if (!a->no_rope && a->start_pos + k[1] > ROPE_MAX_POSITION)
        return cli_error("attention: --start-pos %ld + kv_len %ld passes "
                         "%ld", a->start_pos, k[1], ROPE_MAX_POSITION);
    return a->no_rope ? 0 : cli_rope_validate(o);
    return 0;
}

int cmd_attention(int argc, char **argv)
{
    cli_rope_options o;
    att_cli a = {{NULL, NULL, NULL, NULL}, 0, 0, 1, 0, ROPE_SIMD_AUTO};
    rope_npy x[3] = {{0}, {0}, {0}}; /* q, k, v */
    char err[512];
    int rc = 0;
    cli_rope_defaults(&o);
    for (int i = 1; i < argc && rc == 0; i++)
        rc = att_cli_flag(&a, &o, argc, argv, &i);
    for (int j = 0; j < 4 && rc == 0; j++)
        if (!a.path[j])
            rc = cli_error("attention: %s FILE is required",
                           att_cli_names[j]);
    if (rc == 0)
        rc = cli_check_files(3, 4, att_cli_names, a.path);
    if (rc == 0 && cli_parse_only)
        return a.no_rope ? 0 : cli_rope_validate(&o);
    for (int j = 0; j < 3 && rc == 0; j++)
        if (rope_npy_read(a.path[j], &x[j], err, sizeof err))
            rc = cli_error("%s", err);
    rc = rc ? rc : att_cli_shapes(x, &o, &a);
    float *c = NULL, *s = NULL, *out = NULL;
    rope_attention_params p;
    rope_attention_defaults(&p);
    if (rc == 0 && !a.no_rope)
        rc = cli_rope_table(&o, a.start_pos, a.start_pos + x[1].shape[1],
                            &c, &s);
    if (rc == 0 && !(out = malloc(sizeof(float) * x[0].count)))
        rc = cli_error("attention: out of memory");
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
        if (rope_attention(out, x[0].data, x[1].data, x[2].data, &p))
            rc = cli_error("attention: the kernel rejected the arguments");
        else {
            rope_npy result = x[0];
            result.data = out;
            rc = cli_write_npys(1, att_cli_names + 3, a.path + 3, &result);
        }
    }
    free(c); free(s); free(out);
    for (int j = 0; j < 3; j++) rope_npy_free(&x[j]);
    return rc;
}
