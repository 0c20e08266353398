/* W6.5 The tests */
/* test-ring.c: the claims of chapter 6. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"

static char *ring_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc(65536);
    size_t n = 0;
    ck_assert(f != NULL && buf != NULL);
    n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
    return buf;
}

static cli_result ring_mpirun(int n_ranks, const char *program_env,
                              const char *args)
{
    const char *prog = getenv(program_env);
    char out[] = "/tmp/rope-ring-out-XXXXXX";
    char err[] = "/tmp/rope-ring-err-XXXXXX", cmd[2048];
    int fo = mkstemp(out), fe = mkstemp(err);
    ck_assert_msg(prog != NULL, "%s is not set (run make test)",
                  program_env);
    ck_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 "
             "timeout 120 mpirun --oversubscribe -np %d %s %s >%s 2>%s",
             n_ranks, prog, args, out, err);
    int st = system(cmd);
    cli_result r;
    r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
    r.out = ring_slurp(out);
    r.err = ring_slurp(err);
    return r;
}
START_TEST(test_ring_shards_cover_the_sequence)
{
    for (int lay = 0; lay < 2; lay++)
        for (int P = 1; P <= 8; P++) {
            int K = rope_ring_n_chunks((rope_ring_layout)lay, P);
            rope_ring_shard s;
            ck_assert_int_ne(rope_ring_shard_of(&s, (rope_ring_layout)lay,
                                                P, 0, K - 1), 0);
            for (long n = K; n < K + 10; n++) {
                int seen[40] = {0};
                for (int r = 0; r < P; r++) {
                    ck_assert_int_eq(rope_ring_shard_of(&s,
                        (rope_ring_layout)lay, P, r, n), 0);
                    for (int c = 0; c < s.n_chunks; c++)
                        for (long t = s.start[c]; t < s.start[c] + s.len[c];
                             t++)
                            seen[t]++;
                }
                for (long t = 0; t < n; t++) ck_assert_int_eq(seen[t], 1);
                for (int c = 0; c + 1 < K; c++) {
                    long a = rope_ring_chunk_start(n, K, c + 1)
                             - rope_ring_chunk_start(n, K, c);
                    long b = rope_ring_chunk_start(n, K, c + 2)
                             - rope_ring_chunk_start(n, K, c + 1);
                    ck_assert(a >= b && a - b <= 1);
                }
            }
        }
}
END_TEST
START_TEST(test_ring_block_kinds_match_the_tokens)
{
    for (int causal = 0; causal < 2; causal++)
        for (int K = 1; K <= 8; K++) {
            long n = 3 * K + 2;
            for (int a = 0; a < K; a++)
                for (int b = 0; b < K; b++) {
                    long qa = rope_ring_chunk_start(n, K, a);
                    long qe = rope_ring_chunk_start(n, K, a + 1);
                    long ka = rope_ring_chunk_start(n, K, b);
                    long ke = rope_ring_chunk_start(n, K, b + 1);
                    int kind = rope_ring_block_kind(a, b, causal);
                    for (long i = qa; i < qe; i++)
                        for (long j = ka; j < ke; j++) {
                            int vis = !causal || j <= i;
                            int want = kind == ROPE_RING_FULL ? 1
                                : kind == ROPE_RING_SKIP ? 0
                                : (j - ka <= i - qa);
                            ck_assert_int_eq(vis, want);
                        }
                }
        }
}
END_TEST
static void ring_state_of(const double *s, const double *v, int lo, int hi,
                          float *o, float *lse)
{
    double m = -INFINITY, l = 0, u[4] = {0, 0, 0, 0};
    for (int j = lo; j < hi; j++) m = s[j] > m ? s[j] : m;
    for (int j = lo; j < hi; j++) {
        l += exp(s[j] - m);
        for (int c = 0; c < 4; c++) u[c] += exp(s[j] - m) * v[4 * j + c];
    }
    *lse = (float)(m + log(l));
    for (int c = 0; c < 4; c++) o[c] = (float)(u[c] / l);
}

START_TEST(test_ring_merge_is_exact)
{
    for (int shift = 0; shift <= 1000; shift += 1000) {
        double s[12], v[48], acc[4] = {0, 0, 0, 0}, lacc = -INFINITY;
        uint64_t st = 66;
        float o[4], l, all[4], lall;
        for (int j = 0; j < 12; j++) s[j] = 8 * rope_uniform(&st) - 4 + shift;
        for (int j = 0; j < 48; j++) v[j] = 2 * rope_uniform(&st) - 1;
        static const int cut[4] = {0, 5, 6, 12};
        for (int b = 2; b >= 0; b--) {
            ring_state_of(s, v, cut[b], cut[b + 1], o, &l);
            rope_ring_merge(acc, &lacc, o, &l, 1, 4);
        }
        ring_state_of(s, v, 0, 12, all, &lall);
        double tol = 2 * 0x1p-24 * (fabs(lall) + 1);
        for (int c = 0; c < 4; c++)
            ck_assert_double_eq_tol(acc[c], all[c], tol);
        ck_assert_double_eq_tol(lacc, lall, tol);
    }
}
END_TEST
START_TEST(test_ring_zigzag_balances_the_causal_work)
{
    for (int P = 1; P <= 8; P++) {
        long n = 2L * P * 7, c = n / P;
        double total = 0;
        for (int r = 0; r < P; r++) {
            double w = rope_ring_rank_pairs(ROPE_RING_CONTIGUOUS, P, r, n, 1);
            ck_assert_double_eq(w, (double)r * c * c + 0.5 * c * (c + 1));
            ck_assert_double_eq(rope_ring_rank_pairs(ROPE_RING_ZIGZAG, P, r,
                n, 1), rope_ring_rank_pairs(ROPE_RING_ZIGZAG, P, 0, n, 1));
            total += rope_ring_rank_pairs(ROPE_RING_ZIGZAG, P, r, n, 1);
        }
        ck_assert_double_eq(total, 0.5 * n * (n + 1));
    }
}
END_TEST
START_TEST(test_ring_zigzag_balances_every_step)
{
    for (int P = 1; P <= 8; P++) {
        long c = 7, n = 2L * P * c;
        rope_ring_shard sh[8];
        for (int r = 0; r < P; r++)
            ck_assert_int_eq(rope_ring_shard_of(&sh[r], ROPE_RING_ZIGZAG,
                                                P, r, n), 0);
        for (int r = 0; r < P; r++)
            for (int s = 0; s < P; s++) {
                const rope_ring_shard *me = &sh[r];
                const rope_ring_shard *held = &sh[(r - s + P) % P];
                double w = 0;
                for (int a = 0; a < me->n_chunks; a++)
                    for (int b = 0; b < held->n_chunks; b++)
                        w += rope_ring_block_pairs(me->len[a], held->len[b],
                            rope_ring_block_kind(me->chunk[a],
                                                 held->chunk[b], 1));
                ck_assert_double_eq(w, 2.0 * c * c + (s == 0 ? c : 0));
            }
    }
}
END_TEST
START_TEST(test_ring_model_min_block)
{
    static const double bw[3] = {3.125e9, 12.5e9, 50e9};
    static const double lat[3] = {0, 1e-6, 1e-4};
    for (int i = 0; i < 9; i++) {
        rope_ring_model m = {1048576, 8, 4, 96, 7.3e10, bw[i % 3],
                             lat[i / 3]};
        long c = rope_ring_model_min_block(&m);
        double tc, tm;
        for (long cc = c - 1; cc <= c; cc++) {
            double comp = 2.0 * 8 * 96 * cc * cc / m.flops_per_s;
            double comm = 8.0 * cc * 4 * 96 / m.bytes_per_s + m.latency_s;
            ck_assert_int_eq(comp >= comm, cc == c);
        }
        double t = rope_ring_model_layer(&m, 64, &tc, &tm);
        ck_assert_double_eq(t, tc > tm ? tc : tm);
        ck_assert_double_eq_tol(tc, 2.0 * 8 * 96 * m.n * m.n / (64 * 7.3e10),
                                1e-9 * tc);
        ck_assert_double_eq_tol(tm, 8.0 * m.n * 4 * 96 / m.bytes_per_s
                                + 64 * m.latency_s, 1e-9 * tm);
    }
}
END_TEST
START_TEST(test_ring_equals_one_process)
{
    cli_result r = ring_mpirun(_i, "ROPE_RING_TEST", "sweep");
    double ek = 1, er = 1;
    const char *m = strstr(r.out, "max relative error ");
    ck_assert_msg(r.status == 0, "%d ranks: status %d\n%s%s", _i, r.status,
                  r.out, r.err);
    ck_assert_msg(m != NULL && sscanf(m, "max relative error %lf against "
                  "the kernel, %lf against the reference", &ek, &er) == 2,
                  "%s", r.out);
    ck_assert_double_le(ek, 2e-6);
    ck_assert_double_le(er, 2e-6);
    if (_i == 1)
        ck_assert_msg(strstr(r.out, "bit-identical: yes") != NULL, "%s",
                      r.out);
    cli_result_free(&r);
}
END_TEST
START_TEST(test_ring_errors_reach_every_rank)
{
    cli_result r = ring_mpirun(3, "ROPE_RING_TEST", "errors");
    ck_assert_msg(r.status == 0 && strstr(r.out, "errors: agreed") != NULL,
                  "status %d\n%s%s", r.status, r.out, r.err);
    cli_result_free(&r);
}
END_TEST
START_TEST(test_ring_pingpong)
{
    cli_result r = ring_mpirun(2, "ROPE_RING", "pingpong");
    double b, t, lo, hi, t0 = 0, t1 = 0, want = 8;
    int lines = 0, off = 0, used;
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    while (sscanf(r.out + off, "%lf %lf %lf %lf%n", &b, &t, &lo, &hi,
                  &used) == 4) {
        ck_assert_double_eq(b, want);
        ck_assert(lo <= t && t <= hi && lo > 0);
        t0 = lines == 0 ? t : t0;
        t1 = t;
        want *= 4;
        lines++;
        off += used;
    }
    ck_assert_int_eq(lines, 11);
    ck_assert_double_gt(t1, t0);
    cli_result_free(&r);
    r = ring_mpirun(3, "ROPE_RING", "pingpong");
    ck_assert_msg(r.status == 2 && strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, "exactly 2 ranks") != NULL,
                  "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_free(&r);
}
END_TEST
typedef struct {
    long b, n, h, hkv, d;
    const char *flags;
} ring_cli_case;
static const ring_cli_case ring_cli_cases[5] = {
    {0, 0, 0, 0, 0, ""},
    {1, 1000, 8, 2, 64, "--causal"},
    {1, 301, 8, 2, 32, "--causal --start-pos 7 --pairing interleaved"},
    {2, 200, 4, 4, 16, "--start-pos 20"},
    {1, 1000, 8, 2, 64, "--causal"},
};
static void ring_run_both(const ring_cli_case *t, int n_ranks,
                          const char *extra, const char *dir,
                          cli_result *one, cli_result *ring)
{
    char args[1024], path[256], err[256];
    long qs[4] = {t->b, t->n, t->h, t->d}, ks[4] = {t->b, t->n, t->hkv, t->d};
    size_t nq = (size_t)t->b * t->n * t->h * t->d;
    size_t nk = (size_t)t->b * t->n * t->hkv * t->d;
    uint64_t st = 600 + (uint64_t)n_ranks;
    float *x[3];
    const char *names[3] = {"q.npy", "k.npy", "v.npy"};
    for (int j = 0; j < 3; j++) {
        size_t cnt = j ? nk : nq;
        ck_assert((x[j] = malloc(sizeof(float) * cnt)) != NULL);
        for (size_t i = 0; i < cnt; i++)
            x[j][i] = (float)(2 * rope_uniform(&st) - 1);
        snprintf(path, sizeof path, "%s/%s", dir, names[j]);
        ck_assert_msg(rope_npy_write(path, x[j], 4, j ? ks : qs, err,
                                     sizeof err) == 0, "%s", err);
        free(x[j]);
    }
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/one.npy %s", dir, dir, dir, dir,
             t->flags);
    *one = cli_run(args);
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/ring.npy %s %s", dir, dir, dir, dir,
             t->flags, extra);
    *ring = ring_mpirun(n_ranks, "ROPE_RING", args);
}
static void ring_compare_outputs(const char *dir, size_t nq, int n_ranks)
{
    char path[256], err[256];
    rope_npy a, b;
    snprintf(path, sizeof path, "%s/one.npy", dir);
    ck_assert_msg(rope_npy_read(path, &a, err, sizeof err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/ring.npy", dir);
    ck_assert_msg(rope_npy_read(path, &b, err, sizeof err) == 0, "%s", err);
    ck_assert(a.count == nq && b.count == nq && b.ndim == 4);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < nq; i++) {
        diff = fmax(diff, fabs((double)a.data[i] - b.data[i]));
        scale = fmax(scale, fabs((double)a.data[i]));
    }
    if (n_ranks == 1)
        ck_assert_msg(memcmp(a.data, b.data, sizeof(float) * nq) == 0,
                      "one rank differs from rope attention");
    ck_assert_msg(diff <= 2e-6 * scale, "%d ranks: relative error %g", n_ranks,
                  diff / scale);
    rope_npy_free(&a);
    rope_npy_free(&b);
    static const char *const made[] = {"q.npy", "k.npy", "v.npy", "one.npy",
                                       "ring.npy"};
    for (int j = 0; j < 5; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    rmdir(dir);
}
START_TEST(test_ring_program_equals_the_command)
{
    const ring_cli_case *t = &ring_cli_cases[_i];
    char dir[] = "/tmp/rope-ring-XXXXXX";
    size_t nq = (size_t)t->b * t->n * t->h * t->d;
    cli_result one, ring;
    ck_assert(mkdtemp(dir) != NULL);
    ring_run_both(t, _i, _i == 2 ? "--layout contiguous" : "", dir, &one,
                  &ring);
    ck_assert_msg(one.status == 0, "%s: %s", t->flags, one.err);
    ck_assert_msg(ring.status == 0 && ring.err[0] == '\0',
                  "%d ranks, %s: status %d, %s", _i, t->flags, ring.status,
                  ring.err);
    ring_compare_outputs(dir, nq, _i);
    cli_result_free(&one);
    cli_result_free(&ring);
}
END_TEST
START_TEST(test_ring_program_passes_the_kv_dtype)
{
    static const ring_cli_case c = {1, 64, 8, 2, 16,
                                    "--causal --no-rope --kv-dtype bf16"};
    const ring_cli_case *t = &c;
    char dir[] = "/tmp/rope-ring-XXXXXX", path[256];
    size_t nq = (size_t)t->b * t->n * t->h * t->d;
    cli_result one, ring;
    ck_assert(mkdtemp(dir) != NULL);
    ring_run_both(t, _i, "", dir, &one, &ring);
    ck_assert_msg(one.status == ring.status, "rope attention: %d %s"
                  "rope-ring attention: %d %s", one.status, one.err,
                  ring.status, ring.err);
    if (one.status == 0) {
        ck_assert_str_eq(ring.err, "");
        ring_compare_outputs(dir, nq, _i);
    } else {
        ck_assert_int_eq(one.status, 2);
        ck_assert_msg(strncmp(one.err, "rope: error: attention: ", 24) == 0
                      && strncmp(ring.err, "rope: error: ring attention: ", 29)
                      == 0, "%s%s", one.err, ring.err);
        for (int j = 0; j < 3; j++) {
            snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
            remove(path);
        }
        ck_assert_msg(rmdir(dir) == 0, "an output is left in %s", dir);
    }
    cli_result_free(&one);
    cli_result_free(&ring);
}
END_TEST
static const struct {
    int ranks;
    long nq, nk, d;
    const char *flags, *text;
} ring_bad[5] = {
    {4, 5, 5, 8, "--causal", "4 ranks need at least 8 tokens with the "
                             "zigzag layout, got 5"},
    {2, 6, 7, 8, "", "seq_len 6 differs from kv_len 7"},
    {3, 6, 6, 8, "--layout ring", "--layout: expected contiguous or "
                                  "zigzag"},
    {2, 4, 4, ROPE_ATTENTION_MAX_HEAD_DIM + 2, "--causal",
     "the widest head the kernel tiles"},
    {2, 4, 4, 8, "--kv-dtype f64", "--kv-dtype: expected f32 or bf16, "
                                   "got 'f64'"},
};

START_TEST(test_ring_program_refuses_bad_uses)
{
    char dir[] = "/tmp/rope-ring-XXXXXX", args[1024], path[256], err[256];
    static const float x[7 * 2 * (ROPE_ATTENTION_MAX_HEAD_DIM + 2)];
    long d = ring_bad[_i].d;
    long qs[4] = {1, ring_bad[_i].nq, 2, d};
    long ks[4] = {1, ring_bad[_i].nk, 2, d};
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, j == 0 ? "q" : j == 1
                 ? "k" : "v");
        ck_assert(rope_npy_write(path, x, 4, j ? ks : qs, err, sizeof err)
                  == 0);
    }
    snprintf(args, sizeof args, "attention --q %s/q.npy --k %s/k.npy "
             "--v %s/v.npy --out %s/o.npy %s", dir, dir, dir, dir,
             ring_bad[_i].flags);
    cli_result r = ring_mpirun(ring_bad[_i].ranks, "ROPE_RING", args);
    int ours = 0;
    const char *line = r.err;
    for (; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1
                                            : line + strlen(line))
        ours += strncmp(line, "rope", 4) == 0;
    ck_assert_msg(r.status == 2, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(ours == 1 && strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, ring_bad[_i].text) != NULL,
                  "stderr was: %s", r.err);
    snprintf(path, sizeof path, "%s/o.npy", dir);
    ck_assert(access(path, F_OK) != 0);
    static const char *const made[] = {"q.npy", "k.npy", "v.npy"};
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    rmdir(dir);
    cli_result_free(&r);
}
END_TEST
START_TEST(test_ring_program_names_a_nonfinite_input)
{
    char dir[] = "/tmp/rope-ring-XXXXXX", args[1024], path[256], err[256];
    float x[8 * 2 * 8];
    long shape[4] = {1, 8, 2, 8};
    cli_result r[2];
    ck_assert(mkdtemp(dir) != NULL);
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < 8 * 2 * 8; i++)
            x[i] = j == 1 && i == 3 * 2 * 8 + 5 ? NAN : 0.25f;
        snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
        ck_assert(rope_npy_write(path, x, 4, shape, err, sizeof err) == 0);
    }
    snprintf(args, sizeof args, "attention --causal --q %s/q.npy --k "
             "%s/k.npy --v %s/v.npy --out %s/o.npy", dir, dir, dir, dir);
    r[0] = cli_run(args);
    r[1] = ring_mpirun(2, "ROPE_RING", args);
    for (int t = 0; t < 2; t++) {
        ck_assert_msg(r[t].status == 2, "status %d: %s", r[t].status,
                      r[t].err);
        ck_assert_msg(strncmp(r[t].err, "rope: error: the attention output "
                              "is not finite: --k holds inf or NaN\n", 70)
                      == 0, "%s", r[t].err);
        cli_result_free(&r[t]);
    }
    for (int j = 0; j < 3; j++) {
        snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
        remove(path);
    }
    ck_assert_msg(rmdir(dir) == 0, "an output is left in %s", dir);
}
END_TEST
static long ring_peak_kib(const char *dir, long n)
{
    const long qs[4] = {1, n, 32, 128}, ks[4] = {1, n, 8, 128};
    char path[256], err[256], cmd[2048];
    const char *prog = getenv("ROPE_RING");
    struct rusage ru;
    int st = 0;
    ck_assert(prog != NULL);
    for (int j = 0; j < 3; j++) {
        size_t cnt = (size_t)n * (j ? 8 : 32) * 128;
        float *x = malloc(sizeof(float) * cnt);
        ck_assert(x != NULL);
        randfill(x, cnt, 700 + (unsigned)j);
        snprintf(path, sizeof path, "%s/%c.npy", dir, "qkv"[j]);
        ck_assert_msg(rope_npy_write(path, x, 4, j ? ks : qs, err,
                                     sizeof err) == 0, "%s", err);
        free(x);
    }
    snprintf(cmd, sizeof cmd, "exec mpirun --oversubscribe -np 2 %s "
             "attention --causal --q %s/q.npy --k %s/k.npy --v %s/v.npy "
             "--out %s/o.npy > /dev/null 2>&1", prog, dir, dir, dir, dir);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    ck_assert(wait4(pid, &st, 0, &ru) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "rope-ring on %ld tokens failed", n);
    return ru.ru_maxrss;
}
static double ring_bound_bytes(long n, int n_ranks)
{
    const double h = 32, hkv = 8, d = 128, f = sizeof(float);
    long most = 0, chunk = 0;
    for (int r = 0; r < n_ranks; r++) {
        rope_ring_shard s;
        rope_ring_shard_of(&s, ROPE_RING_ZIGZAG, n_ranks, r, n);
        most = s.tokens > most ? s.tokens : most;
        chunk = s.len[0] > chunk ? s.len[0] : chunk;
    }
    double Bq = f * n * h * d, Bk = f * n * hkv * d, BT = 2 * f * n * d;
    double S = f * most * h * d, Sk = f * most * hkv * d;
    double C = f * chunk * h * d;
    size_t W = 0;
    for (int causal = 0; causal < 2; causal++) {
        rope_attention_params p;
        rope_attention_defaults(&p);
        p.seq_len = p.kv_len = (int)chunk;
        p.n_heads = (int)h; p.n_kv_heads = (int)hkv; p.head_dim = (int)d;
        p.causal = causal;
        size_t w = rope_attention_workspace_bytes(&p);
        W = w > W ? w : W;
    }
    double M0 = Bq + 2 * Bk + BT + 5 * S + 6 * Sk + C * (1 + 1 / d)
                + 2 * S / d + (double)W;
    return fmax(M0, 2 * Bq + BT);
}

START_TEST(test_ring_rank0_memory_is_bounded)
{
    char dir[] = "/tmp/rope-ring-XXXXXX", path[256];
    ck_assert(mkdtemp(dir) != NULL);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    long base = ring_peak_kib(dir, 8), peak = ring_peak_kib(dir, 4096);
    double bound = base + (ring_bound_bytes(4096, 2) + 16.0 * (1 << 20))
                          / 1024;
    ck_assert_msg(peak < bound, "peak %ld KiB, bound %.0f KiB (base %ld)",
                  peak, bound, base);
#else
    /* A sanitizer's shadow memory is not the program's: the bound is
       checked by the plain build; here the run must still succeed. */
    ck_assert_int_gt(ring_peak_kib(dir, 8), 0);
    ck_assert(ring_bound_bytes(4096, 2) > 0);
#endif
    static const char *const made[] = {"q.npy", "k.npy", "v.npy", "o.npy"};
    for (int j = 0; j < 4; j++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[j]);
        remove(path);
    }
    rmdir(dir);
}
END_TEST
START_TEST(test_ring_plan_command)
{
    cli_result r = cli_run("ring-plan --n 10 --ranks 2 --causal");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "rank 0: tokens 0-2 8-9 (5 tokens), pairs 25\n"
                            "rank 1: tokens 3-5 6-7 (5 tokens), pairs 30\n"
                            "work ratio (largest / smallest): 1.200\n");
    cli_result_free(&r);
    r = cli_run("ring-plan --n 3 --ranks 2");
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(cli_line_count(r.err), 1);
    cli_result_free(&r);
}
END_TEST

Suite *ring_suite(void)
{
    Suite *s = suite_create("chapter 6: ring");
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_ring_shards_cover_the_sequence);
    tcase_add_test(tc, test_ring_block_kinds_match_the_tokens);
    tcase_add_test(tc, test_ring_merge_is_exact);
    tcase_add_test(tc, test_ring_zigzag_balances_the_causal_work);
    tcase_add_test(tc, test_ring_zigzag_balances_every_step);
    tcase_add_test(tc, test_ring_model_min_block);
    tcase_add_loop_test(tc, test_ring_equals_one_process, 1, 5);
    tcase_add_test(tc, test_ring_errors_reach_every_rank);
    tcase_add_test(tc, test_ring_pingpong);
    tcase_add_loop_test(tc, test_ring_program_equals_the_command, 1, 5);
    tcase_add_loop_test(tc, test_ring_program_refuses_bad_uses, 0, 5);
    tcase_add_loop_test(tc, test_ring_program_passes_the_kv_dtype, 1, 2);
    tcase_add_test(tc, test_ring_program_names_a_nonfinite_input);
    tcase_add_test(tc, test_ring_rank0_memory_is_bounded);
    tcase_add_test(tc, test_ring_plan_command);
    suite_add_tcase(s, tc);
    return s;
}
