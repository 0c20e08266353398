/* W5.10 Accuracy and the tests */
/* test-attention.c: the claims of chapter 5. */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench-harness.h"
#include "tests.h"

typedef struct {
    rope_attention_params p;
    float *q, *k, *v, *cos, *sin;
    size_t nq, nkv;
} att_problem;

static float *att_random(size_t n, uint64_t *st)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    ck_assert(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(2.0 * rope_uniform(st) - 1.0);
    return x;
}
static void att_make(att_problem *a, int n, int nkv, int h, int hkv,
                     int d, long start, uint64_t seed)
{
    uint64_t st = seed;
    rope_attention_defaults(&a->p);
    a->p.seq_len = n; a->p.kv_len = nkv;
    a->p.n_heads = h; a->p.n_kv_heads = hkv; a->p.head_dim = d;
    a->p.start_pos = start;
    a->nq = (size_t)n * h * d;
    a->nkv = (size_t)nkv * hkv * d;
    a->q = att_random(a->nq, &st);
    a->k = att_random(a->nkv, &st);
    a->v = att_random(a->nkv, &st);
    a->p.table_len = start + nkv;
    a->cos = malloc(sizeof(float) * a->p.table_len * d);
    a->sin = malloc(sizeof(float) * a->p.table_len * d);
    ck_assert(a->cos && a->sin);
    ck_assert_int_eq(rope_precompute_freqs_cis(a->cos, a->sin, d,
        a->p.table_len, 1e6, ROPE_PRECISION_FLOAT), 0);
    a->p.freqs_cos = a->cos;
    a->p.freqs_sin = a->sin;
}
static void att_make_shape(att_problem *a, const int *sh, long start,
                           uint64_t seed)
{
    att_make(a, sh[0], sh[1], sh[2], sh[3], sh[4], start, seed);
    a->p.causal = sh[5];
}
static void att_free(att_problem *a)
{
    free(a->q); free(a->k); free(a->v); free(a->cos); free(a->sin);
}

static double att_maxdiff(const float *x, const float *y, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - y[i]);
        m = e > m || e != e ? e : m; /* a NaN counts as huge */
    }
    return m;
}
#define ATT_TOL 2e-5
static int att_paths(rope_simd *paths)
{
    static const rope_simd all[] = {
        ROPE_SIMD_SCALAR, ROPE_SIMD_AVX2, ROPE_SIMD_AVX512
    };
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (rope_simd_available(all[i])) paths[n++] = all[i];
    return n;
}
typedef struct {
    int n, kv, h, hkv, d, causal, rope, inter, threads;
    long start;
    int lse, cached, rotated;
} att_ck_case;
static const att_ck_case att_ck_cases[] = {
    {300, 300, 8, 2, 64, 1, 1, 0, 1, 0, 1, 0, 0},
    {300, 300, 8, 2, 64, 1, 1, 0, 2, 0, 1, 0, 0},
    {37, 101, 4, 1, 96, 1, 1, 1, 1, 5, 1, 0, 0},
    {65, 190, 4, 4, 128, 0, 0, 0, 2, 0, 1, 0, 0},
    {1, 2000, 8, 2, 64, 1, 1, 0, 2, 0, 1, 0, 1},
    {1, 2000, 8, 4, 96, 1, 1, 0, 1, 7, 1, 0, 1},
    {129, 129, 2, 1, 24, 1, 1, 0, 1, 0, 0, 0, 0},
    {5, 300, 8, 2, 64, 1, 1, 0, 2, 3, 1, 1, 0},
    {1, 300, 8, 2, 64, 1, 1, 1, 1, 3, 1, 1, 0},
};
static uint64_t att_ck_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
    return h;
}
static float att_ck_rand(uint64_t *st)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*st >> 40) / 16777216.0 * 2 - 1);
}
static int att_ck_path(const char *name, rope_simd *s, int *bf16,
                       int *naive)
{
    static const char *const paths[][4] = { /* name, simd, ROPE_BF16, kernels */
        {"f32-scalar", "scalar", NULL, NULL},
        {"f32-avx2", "avx2", NULL, NULL},
        {"f32-avx512", "avx512", NULL, NULL},
        {"bf16-portable", "avx512", "scalar", "portable-emulation"},
        {"bf16-avx2-emulation", "avx2", NULL, "avx2-emulation"},
        {"bf16-avx512f-emulation", "avx512", "emulate",
         "avx512f-emulation"},
        {"bf16-vdpbf16ps", "avx512", "dpbf16", "vdpbf16ps"},
        {"bf16-amx", "avx512", NULL, "amx"},
        {"naive", "scalar", NULL, NULL}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (strcmp(name, paths[i][0])) continue;
        ck_assert_int_eq(rope_simd_parse(paths[i][1], s), 0);
        *bf16 = paths[i][3] != NULL;
        *naive = !strcmp(name, "naive");
        bench_env("ROPE_BF16", paths[i][2]);
        if (!rope_simd_available(*s)) return 1;
        return *bf16 && strcmp(rope_bf16_kernels(*s), paths[i][3]);
    }
    ck_abort_msg("unknown path %s in the checksum file", name);
    return 1;
}
static uint64_t att_ck_run(int ci, rope_simd s, int bf16, int naive)
{
    const att_ck_case *c = &att_ck_cases[ci];
    uint64_t st = 1234 + (uint64_t)ci;
    size_t nq = (size_t)c->n * c->h * c->d;
    size_t nk = (size_t)c->kv * c->hkv * c->d;
    long tl = c->start + c->kv + 4;
    float *q = malloc(4 * nq), *k = malloc(4 * nk), *v = malloc(4 * nk);
    float *o = malloc(4 * nq), *lse = malloc(4 * (size_t)c->n * c->h);
    float *fc = malloc(4 * (size_t)tl * c->d);
    float *fs = malloc(4 * (size_t)tl * c->d);
    ck_assert(q && k && v && o && lse && fc && fs);
    for (size_t i = 0; i < nq; i++) q[i] = 2 * att_ck_rand(&st);
    for (size_t i = 0; i < nk; i++) k[i] = 2 * att_ck_rand(&st);
    for (size_t i = 0; i < nk; i++) v[i] = att_ck_rand(&st);
    ck_assert_int_eq(rope_precompute_freqs_cis(fc, fs, c->d, tl, 1e6,
                                               ROPE_PRECISION_FLOAT), 0);
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.batch = 1; p.seq_len = c->n; p.kv_len = c->kv;
    p.n_heads = c->h; p.n_kv_heads = c->hkv; p.head_dim = c->d;
    p.start_pos = c->start; p.causal = c->causal;
    p.n_threads = c->threads; p.simd = s;
    if (c->rope) { p.freqs_cos = fc; p.freqs_sin = fs; p.table_len = tl; }
    p.pairing = c->inter ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
    p.keys_rotated = c->rotated;
    p.lse = c->lse ? lse : NULL;
    p.kv_dtype = bf16 ? ROPE_DTYPE_BF16 : ROPE_DTYPE_F32;
    if (naive) {
        p.lse = NULL;
        ck_assert_int_eq(rope_attention_naive(o, q, k, v, &p), 0);
    } else if (c->cached) {
        rope_kv_cache kc;
        rope_attention_params ap = p;
        size_t old = (size_t)(c->kv - c->n) * c->hkv * c->d;
        ap.start_pos = 0; ap.seq_len = ap.kv_len = c->kv;
        ck_assert_int_eq(rope_kv_cache_init(&kc, 1, c->hkv, c->d, 16), 0);
        ck_assert_int_eq(rope_kv_cache_append(&kc, k, v, c->kv - c->n, &ap), 0);
        ck_assert_int_eq(rope_kv_cache_append(&kc, k + old, v + old, c->n, &ap),
                         0);
        p.start_pos = 0;
        ck_assert_int_eq(rope_attention_cached(o, q, &kc, &p), 0);
        rope_kv_cache_free(&kc);
    } else {
        ck_assert_int_eq(rope_attention(o, q, k, v, &p), 0);
    }
    uint64_t h = att_ck_hash(1469598103934665603ull, o, 4 * nq);
    if (p.lse) h = att_ck_hash(h, lse, 4 * (size_t)c->n * c->h);
    free(q); free(k); free(v); free(o); free(lse); free(fc); free(fs);
    return h;
}
/* W5.11 The attention command */
static void att_put_npy(const char *dir, const char *name,
                        const float *x, int ndim, const long *shape)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(rope_npy_write(path, x, ndim, shape, err,
                                 sizeof err) == 0, "%s", err);
}

static void att_put_bytes(const char *dir, const char *name,
                          const void *buf, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert(n == 0 || fwrite(buf, 1, n, f) == n);
    ck_assert(fclose(f) == 0);
}
static void att_make_bad_files(const char *dir)
{
    static const struct { const char *name; int ndim; long s[4]; }
    f[] = {
        {"q.npy", 4, {1, 4, 8, 8}}, {"k.npy", 4, {1, 6, 2, 8}},
        {"v.npy", 4, {1, 6, 2, 8}}, {"k3.npy", 4, {1, 6, 3, 8}},
        {"v3.npy", 4, {1, 6, 3, 8}}, {"ks.npy", 4, {1, 3, 2, 8}},
        {"vs.npy", 4, {1, 3, 2, 8}}, {"v5.npy", 4, {1, 5, 2, 8}},
        {"q6.npy", 4, {1, 4, 8, 6}}, {"qb.npy", 4, {2, 4, 8, 8}},
        {"q3d.npy", 3, {4, 8, 8}}, {"q7.npy", 4, {1, 4, 8, 7}},
        {"k7.npy", 4, {1, 6, 2, 7}}, {"v7.npy", 4, {1, 6, 2, 7}},
    };
    static float ones[2 * 4 * 8 * 8];
    for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++)
        ones[i] = 1.0f;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        att_put_npy(dir, f[i].name, ones, f[i].ndim, f[i].s);
    char path[256];
    unsigned char buf[2048];
    snprintf(path, sizeof path, "%s/v.npy", dir);
    FILE *in = fopen(path, "rb");
    ck_assert(in != NULL);
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    ck_assert(n > 128 && n < sizeof buf - 4);
    att_put_bytes(dir, "empty.npy", buf, 0);
    att_put_bytes(dir, "short.npy", buf, n - 4);
    att_put_bytes(dir, "long.npy", buf, n + 4); /* 4 stray bytes */
    for (size_t i = 0; i + 3 <= 128; i++)
        if (!memcmp(buf + i, "<f4", 3)) buf[i + 2] = '8';
    att_put_bytes(dir, "f8.npy", buf, n);
    buf[0] = 'X';
    att_put_bytes(dir, "magic.npy", buf, n);
}
/* W5.13 Memory, overflow and progress of the command */
static void att_put_qkv(const char *dir, const long *shape,
                        uint64_t seed)
{
    size_t n = (size_t)shape[0] * shape[1] * shape[2] * shape[3];
    static const char *const name[3] = {"q.npy", "k.npy", "v.npy"};
    for (int j = 0; j < 3; j++) {
        float *x = att_random(n, &seed);
        att_put_npy(dir, name[j], x, 4, shape);
        free(x);
    }
}
static int att_run_peak(char *const *argv, long *peak_kib)
{
    int st = 0;
    struct rusage ru;
    threads_check(cli_threads_asked(argv), "the command");
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
        execv(argv[0], argv);
        _exit(127);
    }
    ck_assert(wait4(pid, &st, 0, &ru) == pid);
    *peak_kib = ru.ru_maxrss;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
/* 5.3 The reference */
START_TEST(test_attention_two_keys_closed_form)
{
    float q[2] = {1, 0}, k[4] = {0, 0, 1, 0}, v[4] = {1, 2, -3, 5};
    float o[2];
    double w = exp(1 / sqrt(2.0));
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.kv_len = 2; p.n_heads = p.n_kv_heads = 1; p.head_dim = 2;
    for (int impl = 0; impl < 2; impl++) {
        int e = impl ? rope_attention(o, q, k, v, &p)
                     : rope_attention_naive(o, q, k, v, &p);
        ck_assert_int_eq(e, 0);
        ck_assert_double_eq_tol(o[0], (1 - 3 * w) / (1 + w), 1e-6);
        ck_assert_double_eq_tol(o[1], (2 + 5 * w) / (1 + w), 1e-6);
    }
}
END_TEST
/* W5.10 Accuracy and the tests */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ATT_SWEEP_MAX_LEN 257
#else
#define ATT_SWEEP_MAX_LEN 1000
#endif
static const int att_lens[] = {1, 2, 7, 63, 64, 65, 257, 1000};
static const int att_dims[] = {2, 8, 64, 96, 128};
static const int att_kvh[] = {8, 4, 2, 1};

START_TEST(test_attention_sweep)
{
    int n = att_lens[_i / 5], d = att_dims[_i % 5];
    rope_simd paths[3];
    int np = att_paths(paths);
    if (n > ATT_SWEEP_MAX_LEN) return;
    for (int hi = 0; hi < 4; hi++)
        for (int var = 0; var < 8; var++) {
            if (n > 65 && var != (hi + 2 * (_i % 5)) % 8) continue;
            att_problem a;
            long start = var & 2 ? 37 : 0;
            att_make(&a, n, n + (start ? 19 : 0), 8, att_kvh[hi], d, start,
                     1000 + (uint64_t)(_i * 32 + hi * 8 + var));
            a.p.causal = var & 1;
            a.p.pairing = var & 4 ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
            float *ref = malloc(sizeof(float) * a.nq);
            float *out = malloc(sizeof(float) * a.nq);
            ck_assert_int_eq(rope_attention_naive(ref, a.q, a.k, a.v, &a.p), 0);
            for (int pi = 0; pi < np; pi++) {
                a.p.simd = paths[pi];
                ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
                double e = att_maxdiff(ref, out, a.nq);
                ck_assert_msg(e <= ATT_TOL, "n=%d d=%d kv heads=%d variant=%d "
                              "path=%s: max error %g", n, d, att_kvh[hi], var,
                              rope_simd_name(paths[pi]), e);
            }
            free(ref); free(out); att_free(&a);
        }
}
END_TEST
START_TEST(test_attention_pool_creates_no_thread_per_call)
{
    att_problem a;
    att_make(&a, 64, 4096, 8, 2, 64, 0, 91);
    a.p.causal = 1;
    a.p.seq_len = 1;
    float *out = malloc(sizeof(float) * a.nq);
    ck_assert(out != NULL);
    a.p.n_threads = 4;
    ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
    int first = count_threads();
    ck_assert_int_ge(first, 4);
    for (int i = 0; i < 40; i++) {
        a.p.n_threads = 1 + i % 4;
        a.p.seq_len = i % 5 == 4 ? 64 : 1; /* now and then a prefill */
        ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
        ck_assert_int_eq(count_threads(), first);
    }
    free(out);
    att_free(&a);
}
END_TEST
START_TEST(test_attention_pool_spin)
{
    att_problem a;
    att_make(&a, 1, 2048, 8, 2, 64, 0, 77);
    a.p.causal = 1;
    float *ref = malloc(sizeof(float) * a.nq);
    float *out = malloc(sizeof(float) * a.nq);
    ck_assert(ref && out);
    a.p.n_threads = 1;
    ck_assert_int_eq(rope_attention(ref, a.q, a.k, a.v, &a.p), 0);
    a.p.n_threads = 4;
    for (int i = 0; i < 24; i++) {
        if (i % 3 == 2) bench_sleep_ns(2 * ROPE_ATTENTION_SPIN_NS);
        ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
        ck_assert_msg(!memcmp(ref, out, sizeof(float) * a.nq),
                      "step %d differs from one thread", i);
    }
    bench_sleep_ns(3 * ROPE_ATTENTION_SPIN_NS);
    double c0 = bench_cpu_now();
    bench_sleep_ns(20 * ROPE_ATTENTION_SPIN_NS);
    double used = bench_cpu_now() - c0;
    ck_assert_msg(used < 0.1 * 20 * ROPE_ATTENTION_SPIN_NS * 1e-9,
                  "idle pool used %.3f ms of CPU in %.0f ms", 1e3 * used,
                  20 * ROPE_ATTENTION_SPIN_NS * 1e-6);
    free(ref); free(out); att_free(&a);
}
END_TEST
START_TEST(test_attention_threads_bit_identical)
{
    static const int shape[4][5] = { /* n, kv_len, heads, kv, d */
        {1000, 1000, 8, 2, 64}, {257, 300, 8, 8, 96},
        {1, 1000, 8, 2, 64}, {3, 700, 8, 4, 128}
    };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int s = 0; s < 4; s++) {
        att_problem a;
        const int *sh = shape[s];
        att_make(&a, sh[0], sh[1], sh[2], sh[3], sh[4], 5, 77 + s);
        a.p.causal = s != 1;
        float *one = malloc(sizeof(float) * a.nq);
        float *many = malloc(sizeof(float) * a.nq);
        for (int pi = 0; pi < np; pi++) {
            a.p.simd = paths[pi];
            a.p.n_threads = 1;
            ck_assert_int_eq(rope_attention(one, a.q, a.k, a.v, &a.p), 0);
            for (int t = 2; t <= 4; t++) {
                a.p.n_threads = t;
                ck_assert_int_eq(rope_attention(many, a.q, a.k, a.v, &a.p), 0);
                ck_assert_msg(!memcmp(one, many, sizeof(float) * a.nq),
                              "shape %d path %s: %d threads differ", s,
                              rope_simd_name(paths[pi]), t);
            }
        }
        free(one); free(many);
        att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_pack_rows_step_change_no_bit)
{
    static const int shape[5][6] = { /* n, kv_len, heads, kv, d, causal */
        {700, 700, 8, 2, 64, 1}, {600, 900, 6, 3, 80, 0},
        {600, 900, 6, 3, 72, 1}, {520, 520, 4, 1, 2, 1},
        {400, 400, 6, 2, 64, 1}
    };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int s = 0; s < 5; s++) {
        att_problem a;
        const int *sh = shape[s];
        att_make_shape(&a, sh, 3, 91 + s);
        a.p.n_threads = 1 + s % 3;
        float *ref = malloc(sizeof(float) * a.nq);
        float *got = malloc(sizeof(float) * a.nq);
        ck_assert(ref && got);
        int dp = (sh[4] + 15) / 16 * 16, bk = ROPE_ATTENTION_BK;
        int ntk = (sh[1] + bk - 1) / bk;
        size_t packed = sizeof(float) * 2 * (size_t)dp * bk * ntk * sh[3];
        size_t with = rope_attention_workspace_bytes(&a.p);
        int was = rope_attention_tune(ROPE_TUNE_PACK, 0);
        size_t without = rope_attention_workspace_bytes(&a.p);
        rope_attention_tune(ROPE_TUNE_PACK, was);
        ck_assert_msg(with == without + packed, "shape %d: %zu != %zu + %zu", s,
                      with, without, packed);
        for (int pi = 0; pi < np; pi++) {
            a.p.simd = paths[pi];
            int pack = rope_attention_tune(ROPE_TUNE_PACK, 0);
            int rows = rope_attention_tune(ROPE_TUNE_ROWS, 0);
            ck_assert_int_eq(rope_attention(ref, a.q, a.k, a.v, &a.p), 0);
            for (int on = 0; on < 3; on++) {
                rope_attention_tune(ROPE_TUNE_PACK, on != 1 ? pack : 0);
                rope_attention_tune(ROPE_TUNE_ROWS, on != 0 ? rows : 0);
                long before = rope_attention_allocations();
                ck_assert_int_eq(rope_attention(got, a.q, a.k, a.v, &a.p), 0);
                if (on == 2)
                    ck_assert_int_eq(rope_attention_allocations(), before);
                ck_assert_msg(!memcmp(ref, got, sizeof(float) * a.nq),
                              "shape %d path %s: %s changed the output", s,
                              rope_simd_name(paths[pi]),
                              on == 0 ? "the pass" : on == 1 ? "the rows" : "both");
            }
            rope_attention_tune(ROPE_TUNE_PACK, pack);
            rope_attention_tune(ROPE_TUNE_ROWS, rows);
            int step = rope_attention_tune(ROPE_TUNE_STEP, 0);
            ck_assert_int_eq(rope_attention(ref, a.q, a.k, a.v, &a.p), 0);
            rope_attention_tune(ROPE_TUNE_STEP, step);
            ck_assert_int_eq(rope_attention(got, a.q, a.k, a.v, &a.p), 0);
            ck_assert_msg(!memcmp(ref, got, sizeof(float) * a.nq),
                          "shape %d path %s: the step changed the output", s,
                          rope_simd_name(paths[pi]));
        }
        if (sh[4] == 80) {
            for (size_t j = 0; j < a.nkv; j += (size_t)sh[4]) {
                a.k[j + 75] = INFINITY;
                a.v[j + 75] = INFINITY;
            }
            ck_assert_int_eq(rope_attention(got, a.q, a.k, a.v, &a.p),
                             ROPE_ATTENTION_ENONFINITE);
        }
        free(ref); free(got); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_six_rows_bits)
{
    static const int shape[7][6] = { /* n, kv_len, heads, kv, d, causal */
        {300, 300, 8, 2, 64, 1}, {250, 400, 12, 4, 48, 0},
        {1, 777, 16, 2, 64, 1}, {200, 200, 4, 4, 96, 1},
        {130, 130, 6, 2, 160, 1}, {90, 150, 3, 1, 2, 0},
        {1, 500, 8, 1, 80, 1}
    };
    rope_simd paths[3];
    int np = att_paths(paths);
    int six = rope_attention_tune(ROPE_TUNE_SIX, 1);
    int pre = rope_attention_tune(ROPE_TUNE_PREFETCH, 1);
    for (int s = 0; s < 7; s++) {
        att_problem a;
        const int *sh = shape[s];
        att_make_shape(&a, sh, 5, 301 + s);
        a.p.n_threads = 1 + s % 2;
        float *ref = malloc(sizeof(float) * a.nq);
        float *got = malloc(sizeof(float) * a.nq);
        ck_assert(ref && got);
        for (int pi = 0; pi < np; pi++) {
            a.p.simd = paths[pi];
            ck_assert_int_eq(rope_attention(ref, a.q, a.k, a.v, &a.p), 0);
            for (int off = 0; off < 2; off++) {
                rope_attention_tune(off ? ROPE_TUNE_PREFETCH : ROPE_TUNE_SIX,
                                    0);
                ck_assert_int_eq(rope_attention(got, a.q, a.k, a.v, &a.p),
                                 0);
                ck_assert_msg(!memcmp(ref, got, sizeof(float) * a.nq),
                              "shape %d path %s: %s changed the output", s,
                              rope_simd_name(paths[pi]),
                              off ? "prefetching" : "six-row blocks");
                rope_attention_tune(off ? ROPE_TUNE_PREFETCH : ROPE_TUNE_SIX,
                                    1);
            }
        }
        free(ref); free(got); att_free(&a);
    }
    rope_attention_tune(ROPE_TUNE_SIX, six);
    rope_attention_tune(ROPE_TUNE_PREFETCH, pre);
}
END_TEST
START_TEST(test_attention_decode_equals_prefill)
{
    enum { N = 600, H = 8, HKV = 2, D = 96 };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int si = 0; si < 2; si++) {
        att_problem a;
        att_make(&a, N, N, H, HKV, D, si ? 1000 : 0, 4242 + si);
        float *full = malloc(sizeof(float) * a.nq);
        float *step = malloc(sizeof(float) * H * D);
        float *krot = malloc(sizeof(float) * a.nkv);
        float *qdummy = malloc(sizeof(float) * a.nkv);
        memcpy(krot, a.k, sizeof(float) * a.nkv);
        memcpy(qdummy, a.k, sizeof(float) * a.nkv);
        rope_apply_rotary_pos_emb(qdummy, krot, a.cos, a.sin, 1, N, HKV, HKV,
                                  D, a.p.start_pos, a.p.pairing);
        for (int pi = 0; pi < np; pi++) {
            rope_attention_params dp = a.p;
            const float *last = full + (size_t)(N - 1) * H * D;
            const float *qlast = a.q + (size_t)(N - 1) * H * D;
            a.p.simd = dp.simd = paths[pi];
            ck_assert_int_eq(rope_attention(full, a.q, a.k, a.v, &a.p), 0);
            dp.seq_len = 1;
            ck_assert_int_eq(rope_attention(step, qlast, a.k, a.v, &dp), 0);
            ck_assert_double_le(att_maxdiff(step, last, H * D), ATT_TOL);
            dp.keys_rotated = 1;
            ck_assert_int_eq(rope_attention(step, qlast, krot, a.v, &dp), 0);
            ck_assert_double_le(att_maxdiff(step, last, H * D), ATT_TOL);
        }
        free(full); free(step); free(krot); free(qdummy); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_cache_equals_the_kernel)
{
    enum { N = 300, H = 8, HKV = 2, D = 64 };
    rope_simd paths[3];
    int np = att_paths(paths);
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 7, 515);
    float *full = malloc(sizeof(float) * a.nq);
    float *viac = malloc(sizeof(float) * a.nq);
    float *step = malloc(sizeof(float) * H * D);
    ck_assert(full && viac && step);
    for (int pi = 0; pi < np; pi++) {
        rope_kv_cache c;
        a.p.simd = paths[pi];
        a.p.n_threads = 2;
        ck_assert_int_eq(rope_attention(full, a.q, a.k, a.v, &a.p), 0);
        ck_assert_int_eq(rope_kv_cache_init(&c, 1, HKV, D, 0), 0);
        ck_assert_int_eq(rope_kv_cache_append(&c, a.k, a.v, 100, &a.p), 0);
        for (int j = 100; j < N; j++) {
            size_t off = (size_t)j * HKV * D;
            ck_assert_int_eq(rope_kv_cache_append(&c, a.k + off, a.v + off, 1,
                                                  &a.p), 0);
        }
        ck_assert_int_eq(c.len, N);
        ck_assert_int_eq(rope_attention_cached(viac, a.q, &c, &a.p), 0);
        ck_assert_msg(!memcmp(full, viac, sizeof(float) * a.nq),
                      "path %s: cached prefill differs",
                      rope_simd_name(paths[pi]));
        rope_attention_params dp = a.p;
        dp.seq_len = 1;
        ck_assert_int_eq(rope_attention_cached(step, a.q + (size_t)(N - 1)
                                               * H * D, &c, &dp), 0);
        ck_assert_double_le(att_maxdiff(step, full + (size_t)(N - 1) * H
                                        * D, H * D), ATT_TOL);
        rope_kv_cache_free(&c);
    }
    free(full); free(viac); free(step); att_free(&a);
}
END_TEST
START_TEST(test_attention_cache_decode_allocates_nothing)
{
    enum { N = 4096, STEPS = 50, H = 8, HKV = 2, D = 64 };
    att_problem a;
    att_make(&a, 1, N + STEPS, H, HKV, D, 0, 616);
    rope_kv_cache c;
    float *out = malloc(sizeof(float) * H * D);
    ck_assert(out != NULL);
    a.p.n_threads = 2;
    ck_assert_int_eq(rope_kv_cache_init(&c, 1, HKV, D, N), 0);
    ck_assert_int_eq(rope_kv_cache_append(&c, a.k, a.v, N, &a.p), 0);
    ck_assert_int_eq(rope_attention_cached(out, a.q, &c, &a.p), 0);
    long grown = rope_attention_allocations();
    for (int s = 0; s < STEPS; s++) {
        size_t off = (size_t)(N + s) * HKV * D;
        ck_assert_int_eq(rope_kv_cache_append(&c, a.k + off, a.v + off,
                                              1, &a.p), 0);
        long before = rope_attention_allocations();
        ck_assert_int_eq(rope_attention_cached(out, a.q, &c, &a.p), 0);
        ck_assert_int_eq(rope_attention_allocations(), before);
    }
    ck_assert_int_le(rope_attention_allocations() - grown, 1);
    ck_assert_int_eq(c.len, N + STEPS);
    rope_kv_cache_free(&c);
    free(out);
    att_free(&a);
}
END_TEST
START_TEST(test_attention_lse_matches_the_reference)
{
    enum { N = 300, H = 8, HKV = 2, D = 64 };
    rope_simd paths[3];
    int np = att_paths(paths);
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 17, 777);
    float *out = malloc(sizeof(float) * a.nq);
    float *l1 = malloc(sizeof(float) * N * H);
    float *l2 = malloc(sizeof(float) * N * H);
    for (int pi = 0; pi < np; pi++)
        for (int decode = 0; decode < 2; decode++) {
            rope_attention_params p = a.p;
            const float *q = a.q;
            p.simd = paths[pi];
            if (decode) {
                p.seq_len = 1;
                q = a.q + (size_t)(N - 1) * H * D;
            }
            p.lse = l1;
            ck_assert_int_eq(rope_attention_naive(out, q, a.k, a.v, &p),
                             0);
            p.lse = l2;
            ck_assert_int_eq(rope_attention(out, q, a.k, a.v, &p), 0);
            ck_assert_double_le(att_maxdiff(l1, l2,
                                            (size_t)p.seq_len * H),
                                ATT_TOL);
        }
    free(out); free(l1); free(l2); att_free(&a);
}
END_TEST
START_TEST(test_attention_repeat_kv_copies_head_a_over_r)
{
    enum { B = 2, N = 5, HKV = 3, D = 6, R = 4, H = HKV * R };
    float x[B * N * HKV * D], out[B * N * H * D];
    for (int i = 0; i < B * N * HKV * D; i++) x[i] = (float)i;
    ck_assert_int_eq(rope_repeat_kv(out, x, B, N, HKV, D, R), 0);
    for (int t = 0; t < B * N; t++)
        for (int a = 0; a < H; a++)
            for (int e = 0; e < D; e++)
                ck_assert_float_eq(out[(t * H + a) * D + e],
                                   x[(t * HKV + a / R) * D + e]);
    ck_assert_int_ne(rope_repeat_kv(out, x, B, N, HKV, D, 0), 0);
    ck_assert_int_ne(rope_repeat_kv(out, x, B, 0, HKV, D, R), 0);
    ck_assert_int_ne(rope_repeat_kv(NULL, x, B, N, HKV, D, R), 0);
}
END_TEST
START_TEST(test_attention_gqa_equals_repeat_kv)
{
    enum { N = 200, H = 8, HKV = 2, D = 64, R = H / HKV };
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 3, 99);
    float *kr = malloc(sizeof(float) * a.nkv * R);
    float *vr = malloc(sizeof(float) * a.nkv * R);
    float *o1 = malloc(sizeof(float) * a.nq);
    float *o2 = malloc(sizeof(float) * a.nq);
    ck_assert(kr && vr && o1 && o2);
    ck_assert_int_eq(rope_repeat_kv(kr, a.k, 1, N, HKV, D, R), 0);
    ck_assert_int_eq(rope_repeat_kv(vr, a.v, 1, N, HKV, D, R), 0);
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int pi = 0; pi < np; pi++) {
        rope_attention_params rp = a.p;
        a.p.simd = rp.simd = paths[pi];
        rp.n_kv_heads = H;
        ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
        ck_assert_int_eq(rope_attention(o2, a.q, kr, vr, &rp), 0);
        ck_assert(!memcmp(o1, o2, sizeof(float) * a.nq));
    }
    free(kr); free(vr); free(o1); free(o2); att_free(&a);
}
END_TEST
START_TEST(test_attention_mask_aligned_to_last_keys)
{
    enum { N = 70, NKV = 110, H = 4, HKV = 2, D = 32 };
    att_problem a;
    att_make(&a, N, NKV, H, HKV, D, 0, 5);
    float *o1 = malloc(sizeof(float) * a.nq);
    float *o2 = malloc(sizeof(float) * a.nq);
    ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
    for (size_t i = (size_t)(NKV - N + 1) * HKV * D; i < a.nkv; i++)
        a.v[i] += 1.0f;
    ck_assert_int_eq(rope_attention(o2, a.q, a.k, a.v, &a.p), 0);
    ck_assert(!memcmp(o1, o2, sizeof(float) * H * D));
    size_t last = (size_t)(N - 1) * H * D;
    ck_assert_double_gt(att_maxdiff(o1 + last, o2 + last, H * D), 0.01);
    free(o1); free(o2); att_free(&a);
}
END_TEST
START_TEST(test_attention_scaled_table)
{
    enum { N = 300, H = 8, HKV = 2, D = 64 };
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 0, 31);
    float *ref = malloc(sizeof(float) * a.nq);
    float *out = malloc(sizeof(float) * a.nq);
    for (int t = 0; t < 2; t++) {
        if (t == 0) {
            float inv[D / 2];
            rope_default_inv_freq(inv, D, 1e6);
            for (int i = 0; i < D / 2; i++) inv[i] /= 4;
            ck_assert_int_eq(rope_freqs_cis_from_inv_freq(a.cos, a.sin, inv, D,
                0, N, 1.2, ROPE_PRECISION_FLOAT), 0);
        } else {
            rope_scaling sc;
            rope_scaling_defaults(&sc);
            sc.rope_type = ROPE_SCALING_YARN;
            sc.yarn_flavor = ROPE_YARN_MINIMIND;
            sc.factor = 16;
            sc.original_max_position_embeddings = 2048;
            sc.beta_fast = 32;
            sc.beta_slow = 1;
            sc.attention_factor = 1.0;
            ck_assert_int_eq(rope_precompute_freqs_cis_scaled(a.cos, a.sin, D, N,
                1e6, &sc, ROPE_PRECISION_FLOAT), 0);
        }
        ck_assert_int_eq(rope_attention_naive(ref, a.q, a.k, a.v, &a.p),
                         0);
        ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
        ck_assert_double_le(att_maxdiff(ref, out, a.nq), ATT_TOL);
    }
    free(ref); free(out); att_free(&a);
}
END_TEST
START_TEST(test_attention_fused_rotation_is_chapter_3s)
{
    enum { N = 150, H = 8, HKV = 2, D = 64 };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int pr = 0; pr < 2; pr++) {
        att_problem a;
        att_make(&a, N, N, H, HKV, D, 11, 600 + pr);
        a.p.pairing = pr ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
        float *qr = malloc(sizeof(float) * a.nq);
        float *kr = malloc(sizeof(float) * a.nkv);
        float *o1 = malloc(sizeof(float) * a.nq);
        float *o2 = malloc(sizeof(float) * a.nq);
        memcpy(qr, a.q, sizeof(float) * a.nq);
        memcpy(kr, a.k, sizeof(float) * a.nkv);
        rope_apply_rotary_pos_emb(qr, kr, a.cos, a.sin, 1, N, H, HKV, D, 11,
                                  a.p.pairing);
        for (int pi = 0; pi < np; pi++) {
            rope_attention_params plain = a.p;
            a.p.simd = plain.simd = paths[pi];
            plain.freqs_cos = plain.freqs_sin = NULL;
            ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
            ck_assert_int_eq(rope_attention(o2, qr, kr, a.v, &plain), 0);
            ck_assert_msg(!memcmp(o1, o2, sizeof(float) * a.nq),
                          "pairing %d path %s", pr, rope_simd_name(paths[pi]));
        }
        free(qr); free(kr); free(o1); free(o2); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_exp2_accuracy)
{
    enum { G = 126 * 1024 + 1, N = 3 * G };
    float *x = malloc(sizeof(float) * N);
    float *y = malloc(sizeof(float) * N);
    rope_simd paths[3];
    int np = att_paths(paths);
    uint64_t st = 2024;
    for (int i = 0; i < G; i++) {
        x[i] = -(float)i / 1024.0f;
        x[G + i] = -(float)rope_uniform(&st);
        x[2 * G + i] = -126.0f * (float)rope_uniform(&st);
    }
    for (int pi = 0; pi < np; pi++) {
        double worst = 0;
        float special[2] = {0.0f, -INFINITY}, sy[2];
        rope_exp2_vec(y, x, N, paths[pi]);
        for (int i = 0; i < N; i++) {
            double t = exp2((double)x[i]), e = fabs(y[i] - t) / t;
            worst = e > worst ? e : worst;
        }
        ck_assert_double_le(worst, 4 * ldexp(1.0, -24));
        ck_assert_double_le(rope_exp2_poly_bound(), ldexp(1.0, -24));
        rope_exp2_vec(sy, special, 2, paths[pi]);
        ck_assert(sy[0] == 1.0f && sy[1] == 0.0f);
    }
    free(x); free(y);
}
END_TEST
START_TEST(test_attention_simd_env)
{
    rope_simd best = rope_simd_resolve(ROPE_SIMD_AVX512), s;
    ck_assert(rope_simd_available(best));
    bench_env("ROPE_SIMD", "scalar");
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO),
                     ROPE_SIMD_SCALAR);
    bench_env("ROPE_SIMD", "no-such-path");
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO), best);
    bench_env("ROPE_SIMD", NULL);
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO), best);
    setenv("ROPE_SIMD", "scalar", 1); /* not read again */
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO), best);
    bench_env("ROPE_SIMD", NULL);
    ck_assert_int_eq(rope_simd_parse("avx2", &s), 0);
    ck_assert_int_eq(s, ROPE_SIMD_AVX2);
    ck_assert_int_ne(rope_simd_parse("avx", &s), 0);
}
END_TEST
START_TEST(test_attention_outputs_unchanged)
{
    FILE *f = fopen("tests/checksums/attention-outputs.txt", "r");
    char line[256], path[64], what[16];
    unsigned long long want;
    int compared = 0;
    ck_assert_msg(f != NULL, "tests/checksums/attention-outputs.txt");
    while (fgets(line, sizeof line, f)) {
        rope_simd s;
        int ci, bf16, naive;
        if (line[0] == '#') continue;
        if (sscanf(line, "exp2 %15s %llx", what, &want) == 2) {
            enum { NX = 4096 };
            static float x[NX], y[NX];
            ck_assert_int_eq(rope_simd_parse(what, &s), 0);
            if (!rope_simd_available(s)) continue;
            for (int i = 0; i < NX; i++) x[i] = -130.0f + 140.0f * (float)i / NX;
            rope_exp2_vec(y, x, NX, s);
            ck_assert_msg(att_ck_hash(1469598103934665603ull, y, sizeof y) == want,
                          "exp2 %s changed", what);
            compared++;
            continue;
        }
        ck_assert_msg(sscanf(line, "%63s case %d %llx", path, &ci, &want)
                      == 3 && ci >= 0 && ci < 9, "bad line: %s", line);
        if (att_ck_path(path, &s, &bf16, &naive)) continue;
        ck_assert_msg(att_ck_run(ci, s, bf16, naive) == want,
                      "%s case %d changed", path, ci);
        compared++;
    }
    fclose(f);
    bench_env("ROPE_BF16", NULL);
    ck_assert_int_ge(compared, 9 + 7); /* scalar and naive at least */
}
END_TEST
START_TEST(test_attention_rejects_bad_arguments)
{
    att_problem a;
    float out[8 * 64], keep;
    att_make(&a, 4, 4, 8, 2, 64, 0, 1);
    out[0] = keep = 12345.0f;
    rope_attention_params p = a.p;
    p.n_kv_heads = 3; /* 8 % 3 != 0 */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.seq_len = 5; /* longer than the cache */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.table_len = 3; /* table too short */
    ck_assert_int_ne(rope_attention_naive(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.head_dim = 63; /* odd with RoPE */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.head_dim = ROPE_ATTENTION_MAX_HEAD_DIM + 2; /* too wide */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    ck_assert_int_eq(rope_attention_workspace_bytes(&p), 0);
    ck_assert(out[0] == keep);
    att_free(&a);
}
END_TEST
static size_t att_ws_bytes(int n, int nkv, int h, int hkv, int d,
                           int threads)
{
    rope_attention_params p = {
        .batch = 1, .seq_len = n, .kv_len = nkv, .n_heads = h,
        .n_kv_heads = hkv, .head_dim = d, .causal = 1,
        .n_threads = threads
    };
    return rope_attention_workspace_bytes(&p);
}
START_TEST(test_attention_workspace_is_bounded)
{
    size_t w1 = att_ws_bytes(1 << 20, 1 << 20, 8, 2, 64, 1);
    size_t cap = (size_t)(ROPE_ATTENTION_WS_MIB + ROPE_ATTENTION_PART_MIB
                          + ROPE_ATTENTION_PACK_MIB) << 20;
    size_t packed = (size_t)16 << 20;
    ck_assert(w1 > 0);
    ck_assert(att_ws_bytes(1 << 20, 1 << 20, 8, 2, 64, 2) == 2 * w1);
    ck_assert(att_ws_bytes(1 << 14, 1 << 14, 8, 2, 64, 1)
              == w1 + packed);
    ck_assert(att_ws_bytes(1 << 14, 1 << 14, 8, 2, 64, 2)
              == 2 * w1 + packed);
    ck_assert(att_ws_bytes(1, 1, 1 << 20, 1 << 20, 1, 1) < 65536);
    ck_assert(att_ws_bytes(1, 4096, 1 << 16, 1 << 16, 64, 2) <= cap);
    ck_assert(att_ws_bytes(1, 4096, 4096, 1, 128, 256) <= cap);
    ck_assert(att_ws_bytes(4096, 4096, 8, 8, ROPE_ATTENTION_MAX_HEAD_DIM,
                           256) <= cap);
}
END_TEST
START_TEST(test_attention_wide_groups)
{
    static const int len[2][2] = {{5, 70}, {1, 640}};
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int c = 0; c < 2; c++) {
        att_problem a;
        att_make(&a, len[c][0], len[c][1], 130, 1, 8, 3, 77 + c);
        float *want = malloc(sizeof(float) * a.nq);
        float *got = malloc(sizeof(float) * a.nq);
        ck_assert(want && got);
        ck_assert_int_eq(rope_attention_naive(want, a.q, a.k, a.v, &a.p),
                         0);
        for (int i = 0; i < np; i++) {
            a.p.simd = paths[i];
            ck_assert_int_eq(rope_attention(got, a.q, a.k, a.v, &a.p), 0);
            ck_assert_msg(att_maxdiff(got, want, a.nq) <= ATT_TOL,
                          "case %d path %s", c, rope_simd_name(paths[i]));
        }
        free(want); free(got); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_overflow_is_an_error)
{
    static const int len[2][2] = {{70, 70}, {1, 640}};
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int c = 0; c < 4; c++) {
        att_problem a;
        att_make(&a, len[c % 2][0], len[c % 2][1], 8, 2, 16, 0, 5);
        float big = c < 2 ? 1e30f : 1e15f;
        int want = c < 2 ? ROPE_ATTENTION_ENONFINITE : 0;
        float *out = malloc(sizeof(float) * a.nq);
        ck_assert(out != NULL);
        for (size_t i = 0; i < a.nq; i++) a.q[i] = big;
        for (size_t i = 0; i < a.nkv; i++) a.k[i] = big;
        ck_assert_int_eq(rope_attention_naive(out, a.q, a.k, a.v, &a.p),
                         want);
        for (int i = 0; i < np; i++) {
            a.p.simd = paths[i];
            ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p),
                             want);
            for (size_t j = 0; want == 0 && j < a.nq; j++)
                ck_assert(isfinite(out[j]));
        }
        free(out); att_free(&a);
    }
}
END_TEST
/* W5.11 The attention command */
typedef struct {
    int b, n, nkv, h, hkv, d, causal, rope;
    long start;
    double theta;
    rope_pairing pairing;
    rope_simd simd;
    const char *flags;
    rope_dtype kv_dtype;
} att_cli_case;

static const att_cli_case att_cli_cases[] = {
    {1, 37, 37, 8, 2, 16, 1, 1, 0, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal", ROPE_DTYPE_F32},
    {1, 37, 37, 8, 2, 16, 0, 0, 0, 0, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--no-rope", ROPE_DTYPE_F32},
    {1, 33, 33, 8, 8, 8, 1, 0, 0, 0, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal --no-rope", ROPE_DTYPE_F32},
    {2, 7, 30, 8, 4, 8, 1, 1, 5, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal --start-pos 5 --threads 3",
     ROPE_DTYPE_F32},
    {1, 20, 45, 4, 1, 12, 0, 1, 100, 1e4, ROPE_PAIRING_INTERLEAVED,
     ROPE_SIMD_AUTO, "--start-pos 100 --theta 1e4 "
     "--pairing interleaved", ROPE_DTYPE_F32},
    {1, 70, 70, 8, 2, 64, 1, 1, 0, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_SCALAR, "--causal --simd scalar --threads 2 --kv-dtype f32",
     ROPE_DTYPE_F32},
    {1, 1, 300, 8, 2, 64, 1, 1, 9, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal --start-pos 9 --threads 2", ROPE_DTYPE_F32},
    {1, 37, 37, 8, 2, 16, 1, 1, 0, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal --kv-dtype bf16", ROPE_DTYPE_BF16},
    {1, 1, 300, 8, 2, 64, 1, 1, 9, 1e6, ROPE_PAIRING_HALF,
     ROPE_SIMD_AUTO, "--causal --start-pos 9 --kv-dtype bf16 --threads 2",
     ROPE_DTYPE_BF16},
};
#define N_ATT_CLI_CASES \
    (int)(sizeof att_cli_cases / sizeof att_cli_cases[0])
START_TEST(test_attention_cli_equals_the_library)
{
    const att_cli_case *t = &att_cli_cases[_i];
    char dir[] = "/tmp/rope-attention-XXXXXX", args[512], path[128];
    char err[256];
    uint64_t st = 1000 + (uint64_t)_i;
    size_t nq = (size_t)t->b * t->n * t->h * t->d;
    size_t nkv = (size_t)t->b * t->nkv * t->hkv * t->d;
    long qs[4] = {t->b, t->n, t->h, t->d};
    long ks[4] = {t->b, t->nkv, t->hkv, t->d};
    float *q = att_random(nq, &st), *k = att_random(nkv, &st);
    float *v = att_random(nkv, &st), *want = malloc(sizeof(float) * nq);
    ck_assert(want != NULL && mkdtemp(dir) != NULL);
    att_put_npy(dir, "q.npy", q, 4, qs);
    att_put_npy(dir, "k.npy", k, 4, ks);
    att_put_npy(dir, "v.npy", v, 4, ks);
    rope_attention_params p;
    float *c = NULL, *s = NULL;
    rope_attention_defaults(&p);
    p.batch = t->b; p.seq_len = t->n; p.kv_len = t->nkv;
    p.n_heads = t->h; p.n_kv_heads = t->hkv; p.head_dim = t->d;
    p.causal = t->causal; p.start_pos = t->start;
    p.pairing = t->pairing; p.simd = t->simd; p.kv_dtype = t->kv_dtype;
    if (t->rope) {
        p.table_len = t->start + t->nkv;
        c = malloc(sizeof(float) * p.table_len * t->d);
        s = malloc(sizeof(float) * p.table_len * t->d);
        ck_assert(c && s);
        ck_assert_int_eq(rope_precompute_freqs_cis(c, s, t->d, p.table_len,
            t->theta, ROPE_PRECISION_FLOAT), 0);
        p.freqs_cos = c; p.freqs_sin = s;
    }
    int lib = rope_attention(want, q, k, v, &p);
    ck_assert_msg(lib == 0 || t->kv_dtype == ROPE_DTYPE_BF16,
                  "row %d: rope_attention returned %d", _i, lib);
    free(c); free(s);
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/o.npy %s", dir, dir, dir, dir,
             t->flags);
    cli_result r = cli_run(args);
    ck_assert_str_eq(r.out, "");
    if (lib == 0) {
        ck_assert_msg(r.status == 0, "'%s': status %d, %s", args, r.status,
                      r.err);
        ck_assert_str_eq(r.err, "");
    } else {
        ck_assert_msg(r.status == 2 && cli_line_count(r.err) == 1
                      && strncmp(r.err, "rope: error: ", 13) == 0,
                      "'%s': library %d, status %d, %s", args, lib, r.status,
                      r.err);
        ck_assert_msg(lib != 1 || strstr(r.err, "bf16 is not supported by "
                                         "this build"), "%s", r.err);
    }
    cli_result_free(&r);
    rope_npy o;
    snprintf(path, sizeof path, "%s/o.npy", dir);
    if (lib == 0) {
        ck_assert_msg(rope_npy_read(path, &o, err, sizeof err) == 0, "%s",
                      err);
        ck_assert_int_eq(o.ndim, 4);
        for (int j = 0; j < 4; j++)
            ck_assert_int_eq(o.shape[j], qs[j]);
        ck_assert_msg(memcmp(o.data, want, sizeof(float) * nq) == 0,
                      "'%s' differs from rope_attention", args);
        rope_npy_free(&o);
    } else
        ck_assert_msg(access(path, F_OK) != 0, "'%s' wrote o.npy", args);
    static const char *const made[] = {"q.npy", "k.npy", "v.npy", "o.npy"};
    for (int j = 0; j < 4; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    rmdir(dir);
    free(q); free(k); free(v); free(want);
}
END_TEST
#define ATT_QKV " --q DIR/q.npy --k DIR/k.npy --v DIR/v.npy"
#define ATT_CALL "attention" ATT_QKV " --out DIR/o.npy"
static const char *const att_cli_bad[][2] = {
    {"attention --q DIR/q.npy --k DIR/k3.npy --v DIR/v3.npy "
     "--out DIR/o.npy", "n_heads 8 is not a multiple of n_kv_heads 3"},
    {"attention --q DIR/q.npy --k DIR/ks.npy --v DIR/vs.npy "
     "--out DIR/o.npy", "seq_len 4 exceeds kv_len 3"},
    {"attention --q DIR/q.npy --k DIR/k.npy --v DIR/v5.npy "
     "--out DIR/o.npy", "must be [batch"},
    {"attention --q DIR/q6.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "must be [batch"},
    {"attention --q DIR/qb.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "must be [batch"},
    {"attention --q DIR/q3d.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "must be [batch"},
    {"attention --q DIR/q7.npy --k DIR/k7.npy --v DIR/v7.npy "
     "--out DIR/o.npy", "--head-dim"},
    {"attention --q DIR/magic.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "bad magic"},
    {"attention --q DIR/q.npy --k DIR/empty.npy --v DIR/v.npy "
     "--out DIR/o.npy", "bad magic"},
    {"attention --q DIR/q.npy --k DIR/k.npy --v DIR/f8.npy "
     "--out DIR/o.npy", "not float32"},
    {"attention --q DIR/short.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "truncated data"},
    {"attention --q DIR/long.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "after the data"},
    {"attention --q DIR/none.npy --k DIR/k.npy --v DIR/v.npy "
     "--out DIR/o.npy", "none.npy"},
    {"attention" ATT_QKV, "--out"},
    {"attention --k DIR/k.npy --v DIR/v.npy --out DIR/o.npy", "--q"},
    {ATT_CALL " --start-pos", "--start-pos"},
    {ATT_CALL " --threads 0", "--threads"},
    {ATT_CALL " --threads two", "--threads"},
    {ATT_CALL " --start-pos -1", "--start-pos"},
    {ATT_CALL " --start-pos 16777214", "--start-pos"},
    {ATT_CALL " --simd neon", "--simd"},
    {ATT_CALL " --kv-dtype f16",
     "--kv-dtype: expected f32 or bf16, got 'f16'"},
    {ATT_CALL " --kv-dtype BF16", "--kv-dtype: expected f32 or bf16"},
    {ATT_CALL " --kv-dtype", "--kv-dtype needs a value"},
    {ATT_CALL " --pairing diagonal", "--pairing"},
    {ATT_CALL " --theta 0.5", "--theta"},
    {ATT_CALL " --head-dim 16", "--head-dim"},
    {ATT_CALL " --scaling nosuch", "--scaling"},
    {ATT_CALL " --frobnicate", "--frobnicate"},
    {"attention" ATT_QKV " --out DIR/no/o.npy", "no/o.npy"},
    {"attention" ATT_QKV " --out DIR/./v.npy",
     "--v and --out name the same file"},
    {ATT_CALL " --factor 4", "--factor needs --scaling"},
    {ATT_CALL " --scaling yarn --factor 4 --low-freq-factor 1",
     "--low-freq-factor means nothing with --scaling yarn"},
    {ATT_CALL " --theta 1e-320", "--theta must be > 1"},
    {"attention --q /dev/zero --k DIR/k.npy --v DIR/v.npy --out DIR/o.npy",
     "bad magic"},
};
#define N_ATT_CLI_BAD (int)(sizeof att_cli_bad / sizeof att_cli_bad[0])
START_TEST(test_attention_cli_bad_calls)
{
    char dir[] = "/tmp/rope-attention-XXXXXX", args[1024], path[128];
    ck_assert(mkdtemp(dir) != NULL);
    att_make_bad_files(dir);
    size_t len = 0;
    for (const char *c = att_cli_bad[_i][0]; *c; ) {
        int is_dir = strncmp(c, "DIR", 3) == 0;
        size_t m = is_dir ? strlen(dir) : 1;
        ck_assert(len + m < sizeof args);
        memcpy(args + len, is_dir ? dir : c, m);
        len += m;
        c += is_dir ? 3 : 1;
    }
    args[len] = '\0';
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 2, "'%s': status %d", args, r.status);
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, att_cli_bad[_i][1]) != NULL,
                  "'%s' gave: %s", args, r.err);
    cli_result_free(&r);
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert_msg(access(path, F_OK) != 0, "'%s' wrote o.npy", args);
    static const char *const made[] = {
        "q.npy", "k.npy", "v.npy", "k3.npy", "v3.npy", "ks.npy", "vs.npy",
        "v5.npy", "q6.npy", "qb.npy", "q3d.npy", "q7.npy", "k7.npy",
        "v7.npy", "empty.npy", "short.npy", "long.npy", "f8.npy",
        "magic.npy"
    };
    for (size_t j = 0; j < sizeof made / sizeof made[0]; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    rmdir(dir);
}
END_TEST
START_TEST(test_attention_cli_full_disk_keeps_the_output)
{
    static float x[128 * 8 * 64];
    const long shape[4] = {1, 128, 8, 64};
    const char old[] = "the old output\n";
    char dir[] = "/tmp/rope-attention-XXXXXX", args[1024], path[256];
    char got[64];
    ck_assert(mkdtemp(dir) != NULL);
    randfill(x, sizeof x / sizeof x[0], 91);
    att_put_npy(dir, "q.npy", x, 4, shape);
    att_put_npy(dir, "k.npy", x, 4, shape);
    att_put_npy(dir, "v.npy", x, 4, shape);
    att_put_bytes(dir, "o.npy", old, strlen(old));
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/o.npy", dir, dir, dir, dir);
    cli_result r = cli_run_in("ulimit -f 128;", args, NULL);
    ck_assert_msg(r.status == 2, "status %d", r.status);
    ck_assert_msg(cli_line_count(r.err) == 1
                  && strncmp(r.err, "rope: error: ", 13) == 0, "%s", r.err);
    cli_result_free(&r);
    snprintf(path, sizeof path, "%s/o.npy", dir);
    FILE *f = fopen(path, "rb");
    ck_assert(f != NULL);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    ck_assert(n == strlen(old) && memcmp(got, old, n) == 0);
    remove(path);
    static const char *const made[] = {"q.npy", "k.npy", "v.npy"};
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "a temporary is left in %s", dir);
}
END_TEST
/* W5.12 The decode command */
static const struct {
    int b, n, nkv;
    const char *flags;
    int exact;
} dec_cases[] = {
    {2, 37, 300, "--start-pos 9", 0},
    {2, 37, 300, "--start-pos 9 --threads 2 --prefill 5", 0},
    {1, 37, 300, "--start-pos 9 --prefill 37", 1},
    {1, 40, 40, "--theta 1e4 --prefill 0", 0},
    {1, 20, 90, "--no-rope --simd scalar --prefill 3", 0},
};

START_TEST(test_decode_equals_attention)
{
    char dir[] = "/tmp/rope-decode-XXXXXX", args[512], path[128];
    char err[256];
    int b = dec_cases[_i].b, n = dec_cases[_i].n, nkv = dec_cases[_i].nkv;
    long qs[4] = {b, n, 8, 64}, ks[4] = {b, nkv, 2, 64};
    uint64_t st = 4000 + (uint64_t)_i;
    size_t nq = (size_t)b * n * 8 * 64, nk = (size_t)b * nkv * 2 * 64;
    float *x[3] = {att_random(nq, &st), att_random(nk, &st),
                   att_random(nk, &st)};
    rope_npy o[2];
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%c.npy", "qkv"[j]);
        att_put_npy(dir, path, x[j], 4, j ? ks : qs);
        free(x[j]);
    }
    for (int t = 0; t < 2; t++) {
        snprintf(args, sizeof args, "%s --q %s/q.npy --k %s/k.npy --v "
                 "%s/v.npy --out %s/%c.npy %s", t ? "decode" : "attention "
                 "--causal", dir, dir, dir, dir, "ad"[t],
                 dec_cases[_i].flags);
        char *pf = strstr(args, " --prefill"); /* last, decode's own */
        if (pf && !t) *pf = '\0';
        cli_result r = cli_run(args);
        ck_assert_msg(r.status == 0 && r.err[0] == '\0' && r.out[0] == '\0',
                      "'%s': status %d, %s", args, r.status, r.err);
        cli_result_free(&r);
        snprintf(path, sizeof path, "%s/%c.npy", dir, "ad"[t]);
        ck_assert_msg(rope_npy_read(path, &o[t], err, sizeof err) == 0,
                      "%s", err);
        remove(path);
    }
    ck_assert(o[0].count == nq && o[1].count == nq);
    double diff = att_maxdiff(o[0].data, o[1].data, nq);
    if (dec_cases[_i].exact)
        ck_assert_msg(diff == 0, "row %d: not the same bits (%g)", _i, diff);
    ck_assert_msg(diff <= 2 * ATT_TOL, "row %d: differs by %g", _i, diff);
    rope_npy_free(&o[0]);
    rope_npy_free(&o[1]);
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "a file is left in %s", dir);
}
END_TEST
static const char *const dec_bad[][2] = {
    {"--prefill 38", "decode: --prefill 38 exceeds seq_len 37"},
    {"--kv-dtype bf16", "the key/value cache holds float32 keys"},
    {"--prefill", "--prefill needs a value"},
};

START_TEST(test_decode_bad_calls)
{
    char dir[] = "/tmp/rope-decode-XXXXXX", args[512], path[128];
    long qs[4] = {1, 37, 8, 64}, ks[4] = {1, 37, 2, 64};
    uint64_t st = 4100;
    float *q = att_random((size_t)37 * 8 * 64, &st);
    ck_assert(mkdtemp(dir) != NULL);
    att_put_npy(dir, "q.npy", q, 4, qs);
    att_put_npy(dir, "k.npy", q, 4, ks);
    att_put_npy(dir, "v.npy", q, 4, ks);
    free(q);
    snprintf(args, sizeof args, "decode --q %s/q.npy --k %s/k.npy --v "
             "%s/v.npy --out %s/o.npy %s", dir, dir, dir, dir,
             dec_bad[_i][0]);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 2 && cli_line_count(r.err) == 1
                  && strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, dec_bad[_i][1]), "'%s': status %d, %s",
                  args, r.status, r.err);
    cli_result_free(&r);
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "an output is left in %s", dir);
}
END_TEST
/* W5.13 Memory, overflow and progress of the command */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATT_SANITIZED 1
#else
#define ATT_SANITIZED 0
#endif
static const long att_peak_shapes[3][4] = {
    {1, 1, 1L << 20, 1}, {1, 65536, 1, 2}, {1, 4096, 64, 2}
};

START_TEST(test_attention_cli_peak_memory)
{
    const long *shape = att_peak_shapes[_i];
    char dir[] = "/tmp/rope-attention-XXXXXX", f[4][256];
    long peak;
    if (ATT_SANITIZED && _i == 1) return;
    ck_assert(mkdtemp(dir) != NULL);
    att_put_qkv(dir, shape, 500 + (uint64_t)_i);
    static const char *const name[4] = {"q", "k", "v", "o"};
    for (int j = 0; j < 4; j++)
        snprintf(f[j], sizeof f[j], "%s/%s.npy", dir, name[j]);
    char *argv[] = {getenv("ROPE_CLI"), "attention", "--q", f[0],
                    "--k", f[1], "--v", f[2], "--out", f[3],
                    "--threads", "2", _i == 0 ? "--no-rope" : NULL,
                    NULL};
    ck_assert(argv[0] != NULL);
    int st = att_run_peak(argv, &peak);
    ck_assert_msg(st == 0, "shape %d: status %d", _i, st);
    size_t bytes = 4 * sizeof(float) * (size_t)shape[0] * shape[1]
                   * shape[2] * shape[3];
    long bound_kib = (long)((2 * bytes + ((size_t)64 << 20)) / 1024);
    ck_assert_msg(ATT_SANITIZED || peak < bound_kib,
                  "shape %d: peak %ld KiB, bound %ld KiB", _i, peak,
                  bound_kib);
    for (int j = 0; j < 4; j++) remove(f[j]);
    rmdir(dir);
}
END_TEST
START_TEST(test_attention_cli_out_of_memory)
{
    char dir[] = "/tmp/rope-attention-XXXXXX", args[1024], path[256];
    if (ATT_SANITIZED) return;
    ck_assert(mkdtemp(dir) != NULL);
    att_put_qkv(dir, att_peak_shapes[0], 600);
    snprintf(args, sizeof args, "attention --no-rope --q %s/q.npy "
             "--k %s/k.npy --v %s/v.npy --out %s/o.npy", dir, dir, dir,
             dir);
    cli_result r = cli_run_in("ulimit -v 16384;", args, NULL);
    ck_assert_msg(r.status == 2, "status %d", r.status);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: out of memory: needs ",
                          34) == 0 && strstr(r.err, " MiB for "),
                  "%s", r.err);
    cli_result_free(&r);
    static const char *const made[] = {"q.npy", "k.npy", "v.npy"};
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "an output is left in %s", dir);
}
END_TEST
static const struct { float q, k, v; const char *says; }
att_overflow[] = {
    {1e30f, 1e30f, 0.5f, "the scores of --q and --k overflow float"},
    {0.5f, 0.5f, 3e38f, "the weighted sums of --v overflow float"},
    {INFINITY, 0.5f, 0.5f, "--q holds inf or NaN"},
};

START_TEST(test_attention_cli_refuses_overflow)
{
    char dir[] = "/tmp/rope-attention-XXXXXX", args[1024], path[256];
    const long shape[4] = {1, 4, 2, 8};
    float x[3][64];
    static const char *const made[] = {"q.npy", "k.npy", "v.npy"};
    ck_assert(mkdtemp(dir) != NULL);
    for (int i = 0; i < 64; i++) {
        x[0][i] = att_overflow[_i].q;
        x[1][i] = att_overflow[_i].k;
        x[2][i] = att_overflow[_i].v;
    }
    for (int j = 0; j < 3; j++) att_put_npy(dir, made[j], x[j], 4, shape);
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/o.npy", dir, dir, dir, dir);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 2, "status %d", r.status);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: the attention output is "
                          "not finite: ", 49) == 0
                  && strstr(r.err, att_overflow[_i].says), "%s", r.err);
    cli_result_free(&r);
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "an output is left in %s", dir);
}
END_TEST
START_TEST(test_attention_cli_progress_on_a_terminal)
{
    char dir[] = "/tmp/rope-attention-XXXXXX", args[1024], f[4][128];
    char buf[8192];
    const long shape[4] = {1, 200, 2, 16};
    static const char *const name[4] = {"q", "k", "v", "o"};
    size_t n = 0;
    int st, fd;
    ck_assert(mkdtemp(dir) != NULL);
    att_put_qkv(dir, shape, 700);
    for (int j = 0; j < 4; j++)
        snprintf(f[j], sizeof f[j], "%s/%s.npy", dir, name[j]);
    const char *prog = getenv("ROPE_CLI");
    ck_assert(prog != NULL);
    pid_t pid = forkpty(&fd, NULL, NULL, NULL);
    ck_assert(pid >= 0);
    if (pid == 0) {
        setenv("ROPE_PROGRESS_AFTER", "0", 1);
        execl(prog, prog, "attention", "--q", f[0], "--k", f[1], "--v", f[2],
              "--out", f[3], (char *)NULL);
        _exit(127);
    }
    for (;;) {
        ssize_t got = read(fd, buf + n, sizeof buf - 1 - n);
        if (got > 0) n += (size_t)got;
        else if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || n == sizeof buf - 1) break;
    }
    buf[n] = '\0';
    close(fd);
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", buf);
    ck_assert_msg(strstr(buf, "rope: attention ")
                  && strstr(buf, "% (") && strstr(buf, " s elapsed, about "),
                  "no progress line in '%s'", buf);
    snprintf(args, sizeof args, "attention --q %s --k %s --v %s "
             "--out %s", f[0], f[1], f[2], f[3]);
    cli_result r = cli_run_in("ROPE_PROGRESS_AFTER=0", args, NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, "");
    cli_result_free(&r);
    for (int j = 0; j < 4; j++) remove(f[j]);
    rmdir(dir);
}
END_TEST
/* W5b.2 The code of the bfloat16 path */
static uint32_t att_bits(uint64_t *st)
{
    return (uint32_t)(rope_uniform(st) * 4294967296.0);
}
static uint32_t att_pair_of(uint64_t *st, double scale)
{
    float x = (float)((2 * rope_uniform(st) - 1) * scale);
    float y = (float)((2 * rope_uniform(st) - 1) * scale * 1e-3);
    return (uint32_t)rope_bf16_round(x) << 16 | rope_bf16_round(y);
}
static int att_same_float(float x, float y)
{
    return (isnan(x) && isnan(y)) || !memcmp(&x, &y, sizeof x);
}
START_TEST(test_attention_bf16_emulation_is_exact)
{
    enum { N = 1 << 18 };
    uint64_t st = 4242;
    int native = rope_bf16_dot(&(float){0}, &(uint32_t){0},
                               &(uint32_t){0}, 1, 2) == 0;
    int vec = rope_simd_available(ROPE_SIMD_AVX512);
    int avx2 = rope_simd_available(ROPE_SIMD_AVX2);
    long wrong = 0;
    for (long i = 0; i < 2 * N; i++) {
        uint32_t zb = att_bits(&st), a, b;
        float z, x, z0, z1, z2, z3;
        memcpy(&z, &zb, sizeof z);
        if (i % 2) z = (float)(rope_uniform(&st) * 200 - 100);
        a = i < N ? att_bits(&st) : att_pair_of(&st, 100);
        b = i < N ? att_bits(&st) : att_pair_of(&st, 1);
        z0 = z1 = z2 = z3 = z;
        ck_assert_int_eq(rope_bf16_dot(&z0, &a, &b, 1, 0), 0);
        if (vec) ck_assert_int_eq(rope_bf16_dot(&z1, &a, &b, 1, 1), 0);
        if (avx2) {
            ck_assert_int_eq(rope_bf16_dot(&z3, &a, &b, 1, 3), 0);
            wrong += !att_same_float(z0, z3);
        }
        if (native) {
            ck_assert_int_eq(rope_bf16_dot(&z2, &a, &b, 1, 2), 0);
            wrong += !att_same_float(z0, z2);
        }
        if (vec) wrong += !att_same_float(z0, z1);
        uint32_t xb = att_bits(&st);
        uint16_t h;
        memcpy(&x, &xb, sizeof x);
        if (!rope_bf16_round_native(&h, &x, 1))
            wrong += h != rope_bf16_round(x);
    }
    ck_assert_msg(wrong == 0, "%ld lanes differ", wrong);
}
END_TEST
START_TEST(test_attention_bf16_within_the_bound)
{
    static const int lens[] = {1, 7, 64, 65, 257, 1031};
    static const int dims[] = {2, 8, 64, 96, 128};
    int n = lens[_i / 5], d = dims[_i % 5];
    rope_simd paths[3];
    int np = att_paths(paths);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    if (n > 257) return;
#endif
    for (int hi = 0; hi < 4; hi++) {
        int var = (hi + _i) % 8;
        if (n > 257 && hi % 2) continue; /* the reference costs seconds */
        att_problem a;
        static const int kvh[] = {8, 4, 2, 1};
        long start = var & 2 ? 37 : 0;
        att_make(&a, n, n + (start ? 19 : 0), 8, kvh[hi], d, start,
                 7000 + (uint64_t)(_i * 8 + hi));
        a.p.causal = var & 1;
        a.p.pairing = var & 4 ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
        a.p.kv_dtype = ROPE_DTYPE_BF16;
        float *ref = malloc(sizeof(float) * a.nq);
        float *out = malloc(sizeof(float) * a.nq);
        a.p.kv_dtype = ROPE_DTYPE_F32; /* the reference on the float inputs */
        ck_assert_int_eq(rope_attention_naive(ref, a.q, a.k, a.v, &a.p), 0);
        a.p.kv_dtype = ROPE_DTYPE_BF16;
        double bound = rope_bf16_error_bound(d, a.p.kv_len, sqrt(d), sqrt(d), 1.0);
        for (int pi = 0; pi < np; pi++) {
            if (n > 257 && pi != np - 1) continue; /* the fastest path only */
            a.p.simd = paths[pi];
            ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
            double e = att_maxdiff(ref, out, a.nq);
            ck_assert_msg(e <= bound, "n=%d d=%d kv heads=%d variant=%d "
                          "path=%s: error %g above the bound %g", n, d,
                          kvh[hi], var, rope_simd_name(paths[pi]), e, bound);
        }
        free(ref); free(out); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_bf16_bound_at_scales)
{
    static const double sig[4] = {0.5, 1, 2, 3};
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int s = 0; s < 4; s++) {
        double e[5];
        ck_assert_int_eq(bench_bf16_at_scale(sig[s], 128, 64, 8, 2,
                                           paths[np - 1], e), 0);
        double old = bench_bf16_old_claim(64, 128, e[0], 1.0);
        ck_assert_msg(e[4] <= 1 && e[2] < 2,
                      "sigma=%g: error %g, bound %g, ratio %g", sig[s],
                      e[1], e[2], e[4]);
        ck_assert_msg(e[3] <= old, "sigma=%g: rounded-operand error %g "
                      "above %g", sig[s], e[3], old);
        if (sig[s] >= 2)
            ck_assert_msg(e[1] > old, "sigma=%g: float error %g not above "
                          "the earlier bound %g", sig[s], e[1], old);
    }
}
END_TEST
START_TEST(test_attention_bf16_native_equals_emulation)
{
    static const char *const how[] = {"emulate", "scalar"};
    static const char *const name[] = {"avx512f-emulation",
                                       "portable-emulation"};
    if (!rope_simd_available(ROPE_SIMD_AVX512)) return;
    for (int s = 0; s < 2; s++) {
        att_problem a;
        att_make(&a, s ? 1 : 700, 700, 8, 2, s ? 64 : 96, 3, 91 + s);
        a.p.kv_dtype = ROPE_DTYPE_BF16;
        a.p.simd = ROPE_SIMD_AVX512;
        float *o1 = malloc(sizeof(float) * a.nq);
        float *o2 = malloc(sizeof(float) * a.nq);
        bench_env("ROPE_BF16", "dpbf16");
        ck_assert_int_eq(rope_bf16_amx(ROPE_SIMD_AVX512), 0);
        ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
        bench_env("ROPE_BF16", NULL);
        for (int h = 0; h < 2; h++) {
            bench_env("ROPE_BF16", how[h]);
            ck_assert_str_eq(rope_bf16_kernels(ROPE_SIMD_AVX512), name[h]);
            ck_assert_int_eq(rope_attention(o2, a.q, a.k, a.v, &a.p), 0);
            bench_env("ROPE_BF16", NULL);
            ck_assert_msg(!memcmp(o1, o2, sizeof(float) * a.nq),
                          "shape %d: %s differs", s, how[h]);
        }
        free(o1); free(o2); att_free(&a);
    }
}
END_TEST

START_TEST(test_attention_bf16_avx2_equals_portable)
{
    /* prefill, decode, values near 2^-120, queries and keys near 2^-64 */
    static const int shape[4][3] = {{300, 300, 96}, {1, 300, 64},
                                    {200, 200, 64}, {200, 200, 32}};
    if (!rope_simd_available(ROPE_SIMD_AVX2)) return;
    for (int s = 0; s < 4; s++) {
        att_problem a;
        att_make(&a, shape[s][0], shape[s][1], 8, 2, shape[s][2], 3, 93 + s);
        for (size_t i = 0; i < a.nkv && s == 2; i++) a.v[i] *= 0x1p-118f;
        for (size_t i = 0; i < a.nkv && s == 3; i++) a.k[i] *= 0x1p-64f;
        for (size_t i = 0; i < a.nq && s == 3; i++) a.q[i] *= 0x1p-64f;
        a.p.kv_dtype = ROPE_DTYPE_BF16;
        a.p.simd = ROPE_SIMD_AVX2;
        float *o1 = malloc(sizeof(float) * a.nq);
        float *o2 = malloc(sizeof(float) * a.nq);
        ck_assert_str_eq(rope_bf16_kernels(ROPE_SIMD_AVX2),
                         "avx2-emulation");
        ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
        bench_env("ROPE_BF16", "scalar");
        ck_assert_str_eq(rope_bf16_kernels(ROPE_SIMD_AVX2),
                         "portable-emulation");
        ck_assert_int_eq(rope_attention(o2, a.q, a.k, a.v, &a.p), 0);
        bench_env("ROPE_BF16", NULL);
        ck_assert_msg(!memcmp(o1, o2, sizeof(float) * a.nq),
                      "shape %d: the AVX2 emulation differs", s);
        free(o1); free(o2); att_free(&a);
    }
}
END_TEST

START_TEST(test_attention_bf16_threads_bit_identical)
{
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int s = 0; s < 2; s++) {
        att_problem a;
        att_make(&a, s ? 1 : 400, s ? 1000 : 400, 8, 2, s ? 96 : 64, 5,
                 177 + s); /* 8 prefill items: enough for 4 threads */
        a.p.kv_dtype = ROPE_DTYPE_BF16;
        /* W5.10 Accuracy and the tests */
        float *one = malloc(sizeof(float) * a.nq);
        float *many = malloc(sizeof(float) * a.nq);
        for (int pi = 0; pi < np; pi++) {
            a.p.simd = paths[pi];
            a.p.n_threads = 1;
            ck_assert_int_eq(rope_attention(one, a.q, a.k, a.v, &a.p), 0);
            for (int t = 2; t <= 4; t++) {
                a.p.n_threads = t;
                ck_assert_int_eq(rope_attention(many, a.q, a.k, a.v, &a.p), 0);
                ck_assert_msg(!memcmp(one, many, sizeof(float) * a.nq),
                              "shape %d path %s: %d threads differ", s,
                              rope_simd_name(paths[pi]), t);
            }
        }
        free(one); free(many);
        /* W5b.2 The code of the bfloat16 path */
        att_free(&a);
    }
}
END_TEST

START_TEST(test_attention_bf16_cache_and_bad_dtype)
{
    enum { N = 300, H = 8, HKV = 2, D = 64 };
    att_problem a;
    rope_kv_cache c;
    att_make(&a, N, N, H, HKV, D, 7, 516);
    a.p.kv_dtype = ROPE_DTYPE_BF16;
    float *full = malloc(sizeof(float) * a.nq);
    float *viac = malloc(sizeof(float) * a.nq);
    ck_assert_int_eq(rope_attention(full, a.q, a.k, a.v, &a.p), 0);
    /* W5.10 Accuracy and the tests */
    ck_assert_int_eq(rope_kv_cache_init(&c, 1, HKV, D, 0), 0);
    ck_assert_int_eq(rope_kv_cache_append(&c, a.k, a.v, 100, &a.p), 0);
    for (int j = 100; j < N; j++) {
        size_t off = (size_t)j * HKV * D;
        ck_assert_int_eq(rope_kv_cache_append(&c, a.k + off, a.v + off, 1,
                                              &a.p), 0);
    }
    ck_assert_int_eq(c.len, N);
    /* W5b.2 The code of the bfloat16 path */
    ck_assert_int_eq(rope_attention_cached(viac, a.q, &c, &a.p), 0);
    ck_assert(!memcmp(full, viac, sizeof(float) * a.nq));
    rope_kv_cache_free(&c);
    a.p.kv_dtype = (rope_dtype)2;
    ck_assert_int_eq(rope_attention(full, a.q, a.k, a.v, &a.p), 1);
    ck_assert_int_eq(rope_attention_naive(full, a.q, a.k, a.v, &a.p), 1);
    free(full); free(viac); att_free(&a);
}
END_TEST
START_TEST(test_attention_bf16_amx_arithmetic)
{
    double u = ldexp(1, -24), worst = rope_bf16_amx_error(60000, 99);
    if (worst < 0) {
        ck_assert_int_eq(rope_bf16_amx(ROPE_SIMD_AUTO), 0);
        return; /* no AMX here */
    }
    ck_assert_msg(worst <= 16 / (1 - 16 * u), "error %g u", worst);
    for (int pr = 0; pr < 4; pr++) {
        double got, want, mag;
        ck_assert_int_eq(rope_bf16_amx_probe(pr, &got, &want, &mag), 0);
        ck_assert(fabs(got - want) <= 32 * u / (1 - 32 * u) * mag);
    }
    bench_env("ROPE_BF16", "dpbf16");
    ck_assert_int_eq(rope_bf16_amx(ROPE_SIMD_AVX512), 0);
    bench_env("ROPE_BF16", NULL);
    ck_assert_int_eq(rope_bf16_amx(ROPE_SIMD_AVX512), 1);
    ck_assert_int_eq(rope_bf16_amx(ROPE_SIMD_AVX2), 0);
}
END_TEST
START_TEST(test_attention_bf16_kernel_choice)
{
    static const rope_simd all[] = {ROPE_SIMD_SCALAR, ROPE_SIMD_AVX2,
                                    ROPE_SIMD_AVX512};
    int x512 = rope_simd_available(ROPE_SIMD_AVX512), bf = 0;
#if defined(__x86_64__) || defined(__i386__)
    bf = x512 && __builtin_cpu_supports("avx512bf16");
#endif
    const char *dp = bf ? "vdpbf16ps" : "avx512f-emulation";
    for (int i = 0; i < 3; i++) {
        rope_simd s = all[i];
        if (!rope_simd_available(s)) continue;
        const char *got = rope_bf16_kernels(s);
        const char *want = s == ROPE_SIMD_SCALAR ? "portable-emulation"
                           : s == ROPE_SIMD_AVX2 ? "avx2-emulation"
                           : bf && !strcmp(got, "amx") ? "amx" : dp;
        ck_assert_str_eq(got, want);
        bench_env("ROPE_BF16", "scalar");
        ck_assert_str_eq(rope_bf16_kernels(s), "portable-emulation");
        bench_env("ROPE_BF16", "emulate");
        ck_assert_str_eq(rope_bf16_kernels(s), x512 ? "avx512f-emulation"
                                                    : "portable-emulation");
        bench_env("ROPE_BF16", "dpbf16");
        ck_assert_str_eq(rope_bf16_kernels(s),
                         s == ROPE_SIMD_AVX512 ? dp : want);
        bench_env("ROPE_BF16", NULL);
    }
}
END_TEST
/* W5c.1 Measuring the machine */
START_TEST(test_fma_load_share)
{
    ck_assert_double_eq(rope_fma_load_share(ROPE_SIMD_SCALAR, 0.01), 0);
    ck_assert_double_eq(rope_fma_load_share(ROPE_SIMD_AVX2, 0.01), 0);
    if (rope_simd_available(ROPE_SIMD_AVX512)) {
        double r = rope_fma_load_share(ROPE_SIMD_AVX512, 0.01);
        ck_assert(isfinite(r) && r > 0);
    }
    ck_assert_double_eq(rope_fma_round_flops(ROPE_SIMD_SCALAR), 0);
    if (rope_simd_available(ROPE_SIMD_AVX512)
        && rope_simd_available(ROPE_SIMD_AVX2))
        ck_assert_double_eq(rope_fma_round_flops(ROPE_SIMD_AVX512),
                            2 * rope_fma_round_flops(ROPE_SIMD_AVX2));
    if (rope_simd_available(ROPE_SIMD_AVX2))
        ck_assert(rope_fma_round_flops(ROPE_SIMD_AVX2) > 0);
}
END_TEST
/* W5c.2 The benchmark */
START_TEST(test_bench_median_and_disturbed)
{
    double odd[5] = {5, 1, 4, 2, 3}, even[4] = {4, 1, 3, 2};
    ck_assert_double_eq(bench_median(odd, 5), 3);
    ck_assert_double_eq(bench_median(even, 4), 2.5);
    bench_row r = {.med = 1.0, .min = 0.5, .max = 1.0, .rope_share = 0.01};
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 0); /* spread 0.5 */
    r.max = 1.0078125;
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 1);
    r.min = 0.875; /* spread 0.125 */
    r.max = 1.0;
    r.rope_share = -0.001; /* chance: inside the spread */
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 0);
    r.rope_share = -0.25; /* faster by twice the spread */
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 1);
    r.rotated = 1; /* decode: a share near zero has no sign to trust */
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 0);
    r.rotated = 0;
    r.rope_share = NAN; /* not measured: disturbs nothing */
    ck_assert_int_eq(bench_disturbed(&r, 0.5), 0);
}
END_TEST
START_TEST(test_bench_keep)
{
    bench_row wide = {.med = 1, .min = 0.5, .max = 2.0},
              wider = {.med = 1, .min = 0.5, .max = 2.5},
              narrow = {.med = 1, .min = 0.9, .max = 1.1},
              negative = {.med = 1, .min = 0.9, .max = 1.1,
                          .rope_share = -0.3}; /* below -spread */
    ck_assert_int_eq(bench_keep(&wide, &narrow), 1);
    ck_assert_int_eq(bench_keep(&wide, &wider), 0);
    ck_assert_int_eq(bench_keep(&wider, &wide), 1);
    ck_assert_int_eq(bench_keep(&wide, &negative), 1); /* smaller spread */
    ck_assert_int_eq(bench_keep(&negative, &wide), 0);
}
END_TEST
START_TEST(test_bench_gate_and_verdicts)
{
    ck_assert_int_eq(bench_scales(100, 180), 1);
    ck_assert_int_eq(bench_scales(100, 179.9), 0);
    ck_assert_int_eq(bench_scales(0, 180), 0);
    ck_assert_double_eq_tol(bench_drift(100, 94), 0.06, 1e-12);
    ck_assert_double_eq_tol(bench_drift(100, 106), 0.06, 1e-12);
    ck_assert_int_eq(bench_accept(75, 75, 0), BENCH_MET);
    ck_assert_int_eq(bench_accept(74.9, 75, 0), BENCH_NOT_MET);
    ck_assert_int_eq(bench_accept(0, 0, 1), BENCH_MET);
    ck_assert_int_eq(bench_accept(1, 0, 1), BENCH_NOT_MET);
    ck_assert_int_eq(bench_accept(NAN, 75, 0), BENCH_NOT_MEASURED);
    ck_assert_int_eq(bench_accept(NAN, 0, 1), BENCH_NOT_MEASURED);
    ck_assert_int_eq(bench_accept(INFINITY, 75, 0), BENCH_NOT_MEASURED);
    ck_assert_int_eq(bench_accept(-INFINITY, 0, 1), BENCH_NOT_MEASURED);
    ck_assert_str_eq(bench_verdict_name(BENCH_NOT_MET), "not met");
    bench_row one = {0}, two = {0};
    one.med = 2.0;
    two.med = 1.0;
    ck_assert_ptr_null(bench_pair_doubt(&one, &two, 1));
    ck_assert_ptr_nonnull(bench_pair_doubt(&one, &two, 0));
    ck_assert_int_eq(bench_above_two_cores(&one, &two), 0); /* 2.00x */
    two.med = 0.9; /* 2.22x: more than two cores give */
    ck_assert_int_eq(bench_above_two_cores(&one, &two), 1);
    ck_assert_ptr_nonnull(bench_pair_doubt(&one, &two, 1));
    two.med = 1.0;
    two.unstable = 1;
    ck_assert_ptr_nonnull(bench_pair_doubt(&one, &two, 1));
}
END_TEST
START_TEST(test_bench_steps_for)
{
    ck_assert_int_eq(bench_steps_for(BENCH_SAMPLE_MIN), 1);
    ck_assert_int_eq(bench_steps_for(3 * BENCH_SAMPLE_MIN), 1);
    ck_assert_int_eq(bench_steps_for(BENCH_SAMPLE_MIN / 4), 4);
    ck_assert_int_eq(bench_steps_for(BENCH_SAMPLE_MIN / 3.5), 4);
    ck_assert_int_eq(bench_steps_for(1e-12), BENCH_STEPS_MAX);
    ck_assert_int_eq(bench_steps_for(0), 1);
    ck_assert_int_eq(bench_steps_for(-1), 1);
    ck_assert_int_eq(bench_steps_for(NAN), 1);
    ck_assert_int_eq(bench_steps_for(INFINITY), 1);
    bench_row r = {.n = 1, .kv = 130, .d = 16, .threads = 1,
                   .causal = 1, .reps = 1, .rotated = 1};
    bench_case k;
    double t;
    size_t len = (size_t)8 * r.d;
    float *one = malloc(sizeof(float) * len);
    ck_assert_ptr_nonnull(one);
    ck_assert_int_eq(bench_open(&k, &r, NULL), 0);
    ck_assert_int_eq(bench_step(&k, 1, &t), 0);
    ck_assert_int_eq(k.c.len, r.kv - 1);
    memcpy(one, k.b[3], sizeof(float) * len);
    memset(k.b[3], 0, sizeof(float) * len);
    r.steps = 3;
    ck_assert_int_eq(bench_step(&k, 1, &t), 0);
    ck_assert_int_eq(k.c.len, r.kv - 1);
    ck_assert_int_eq(memcmp(one, k.b[3], sizeof(float) * len), 0);
    ck_assert(t > 0);
    bench_close(&k);
    free(one);
}
END_TEST

/* W5.10 Accuracy and the tests */
Suite *attention_suite(void)
{
    Suite *s = suite_create("chapter 5: attention");
    TCase *tc = tcase_create("attention");
    TCase *th = threads_tcase_create("attention, threads");
    tcase_set_timeout(tc, 600);
    tcase_set_timeout(th, 600);
    tcase_add_test(th, test_attention_outputs_unchanged);
    tcase_add_test(tc, test_attention_two_keys_closed_form);
    tcase_add_loop_test(tc, test_attention_sweep, 0, 40);
    tcase_add_test(th, test_attention_threads_bit_identical);
    tcase_add_test(th, test_attention_pack_rows_step_change_no_bit);
    tcase_add_test(th, test_attention_six_rows_bits);
    tcase_add_test(th, test_attention_pool_creates_no_thread_per_call);
    tcase_add_test(th, test_attention_pool_spin);
    tcase_add_test(th, test_attention_cache_equals_the_kernel);
    tcase_add_test(th, test_attention_cache_decode_allocates_nothing);
    tcase_add_test(tc, test_attention_decode_equals_prefill);
    tcase_add_test(tc, test_attention_lse_matches_the_reference);
    tcase_add_test(tc, test_attention_repeat_kv_copies_head_a_over_r);
    tcase_add_test(tc, test_attention_gqa_equals_repeat_kv);
    tcase_add_test(tc, test_attention_mask_aligned_to_last_keys);
    tcase_add_test(tc, test_attention_scaled_table);
    tcase_add_test(tc, test_attention_fused_rotation_is_chapter_3s);
    tcase_add_test(tc, test_attention_exp2_accuracy);
    tcase_add_test(tc, test_attention_simd_env);
    tcase_add_test(tc, test_attention_rejects_bad_arguments);
    tcase_add_test(tc, test_attention_workspace_is_bounded);
    tcase_add_test(tc, test_attention_wide_groups);
    tcase_add_test(tc, test_attention_overflow_is_an_error);
    /* W5.11 The attention command */
    tcase_add_loop_test(th, test_attention_cli_equals_the_library, 0,
                        N_ATT_CLI_CASES);
    tcase_add_loop_test(tc, test_attention_cli_bad_calls, 0, N_ATT_CLI_BAD);
    tcase_add_test(tc, test_attention_cli_full_disk_keeps_the_output);
    /* W5.12 The decode command */
    tcase_add_loop_test(th, test_decode_equals_attention, 0,
                        (int)(sizeof dec_cases / sizeof dec_cases[0]));
    tcase_add_loop_test(tc, test_decode_bad_calls, 0, 3);
    /* W5.13 Memory, overflow and progress of the command */
    tcase_add_loop_test(th, test_attention_cli_peak_memory, 0, 3);
    tcase_add_test(tc, test_attention_cli_out_of_memory);
    tcase_add_loop_test(tc, test_attention_cli_refuses_overflow, 0, 3);
    tcase_add_test(tc, test_attention_cli_progress_on_a_terminal);
    /* W5b.2 The code of the bfloat16 path */
    tcase_add_test(tc, test_attention_bf16_amx_arithmetic);
    tcase_add_test(tc, test_attention_bf16_kernel_choice);
    tcase_add_test(tc, test_attention_bf16_emulation_is_exact);
    tcase_add_loop_test(tc, test_attention_bf16_within_the_bound, 0, 30);
    tcase_add_test(tc, test_attention_bf16_bound_at_scales);
    tcase_add_test(tc, test_attention_bf16_native_equals_emulation);
    tcase_add_test(tc, test_attention_bf16_avx2_equals_portable);
    tcase_add_test(th, test_attention_bf16_threads_bit_identical);
    tcase_add_test(tc, test_attention_bf16_cache_and_bad_dtype);
    /* W5c.1 Measuring the machine */
    tcase_add_test(tc, test_fma_load_share);
    /* W5c.2 The benchmark */
    tcase_add_test(tc, test_bench_median_and_disturbed);
    tcase_add_test(tc, test_bench_keep);
    tcase_add_test(tc, test_bench_gate_and_verdicts);
    tcase_add_test(tc, test_bench_steps_for);
    /* W5.10 Accuracy and the tests */
    suite_add_tcase(s, tc);
    suite_add_tcase(s, th);
    return s;
}
