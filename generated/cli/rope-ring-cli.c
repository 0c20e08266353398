/* W6.3 The program rope-ring */
/* rope-ring-cli.c: mpirun -np P rope-ring attention|bench ...
   (chapter 6). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ring-mpi.h"

typedef struct {
    cli_attention_options att; /* the options of rope attention */
    rope_ring_layout layout;
} ring_cli;

static int ring_cli_layout(const char *s, rope_ring_layout *out)
{
    if (strcmp(s, "contiguous") == 0)
        *out = ROPE_RING_CONTIGUOUS;
    else if (strcmp(s, "zigzag") == 0)
        *out = ROPE_RING_ZIGZAG;
    else
        return cli_error("--layout: expected contiguous or zigzag, got "
                         "'%s'", s);
    return 0;
}
static int ring_cli_flag(ring_cli *a, cli_rope_options *o, int argc,
                         char **argv, int *i)
{
    if (strcmp(argv[*i], "--layout"))
        return cli_attention_flag(&a->att, o, argc, argv, i);
    if (cli_need_value(argc, argv, *i)) return 2;
    return ring_cli_layout(argv[++*i], &a->layout);
}
static int ring_cli_shapes(const rope_npy *x, cli_rope_options *o,
                           const ring_cli *a, int n_ranks)
{
    const long *q = x[0].shape, *k = x[1].shape;
    int K = rope_ring_n_chunks(a->layout, n_ranks);
    int rc = cli_attention_shapes(x, o, &a->att);
    if (rc != 0)
        return rc;
    if (q[1] != k[1])
        return cli_error("ring attention: seq_len %ld differs from kv_len "
                         "%ld (the ring attends a sequence to itself)",
                         q[1], k[1]);
    if (q[1] < K)
        return cli_error("ring attention: %d ranks need at least %d "
                         "tokens with the %s layout, got %ld", n_ranks, K,
                         a->layout == ROPE_RING_ZIGZAG ? "zigzag"
                         : "contiguous", q[1]);
    if (x[0].count > INT_MAX || (size_t)q[1] * q[3] > INT_MAX)
        return cli_error("ring attention: q is too large for one MPI "
                         "message");
    return 0;
}
enum { RING_HDR = 13 };
static int ring_prepare(int argc, char **argv, ring_cli *a,
                        cli_rope_options *o, rope_npy *x, float **c,
                        float **s, int n_ranks)
{
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++)
        rc = ring_cli_flag(a, o, argc, argv, &i);
    rc = rc ? rc : cli_attention_files(&a->att);
    rc = rc ? rc : cli_attention_read(&a->att, x);
    rc = rc ? rc : ring_cli_shapes(x, o, a, n_ranks);
    if (rc == 0 && !a->att.no_rope)
        rc = cli_rope_table(o, a->att.start_pos,
                            a->att.start_pos + x[0].shape[1], c, s);
    return rc;
}
static int ring_cli_agree(int ok, int rank, const char *what)
{
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all && rank == 0)
        cli_error("ring attention: %s", what);
    return all ? 0 : 2;
}
static int ring_attention_cmd(int argc, char **argv, int rank,
                              int n_ranks)
{
    ring_cli a = {.layout = ROPE_RING_ZIGZAG};
    cli_rope_options o;
    rope_npy x[3] = {{0}, {0}, {0}};
    float *c = NULL, *s = NULL, *sh[4] = {NULL, NULL, NULL, NULL};
    long hdr[RING_HDR] = {0};
    rope_ring_shard me;
    int rc = 0;
    cli_rope_defaults(&o);
    cli_attention_defaults(&a.att, "ring attention");
    if (rank == 0) {
        rc = ring_prepare(argc, argv, &a, &o, x, &c, &s, n_ranks);
        hdr[0] = rc;
        if (rc == 0) {
            for (int j = 0; j < 4; j++)
                hdr[1 + j] = x[0].shape[j]; /* batch, n, heads, head_dim */
            hdr[5] = x[1].shape[2];
            hdr[6] = a.att.causal; hdr[7] = a.att.no_rope;
            hdr[8] = (long)o.pairing; hdr[9] = a.att.threads;
            hdr[10] = (long)a.att.simd; hdr[11] = (long)a.layout;
            hdr[12] = (long)a.att.kv_dtype;
        }
    }
    MPI_Bcast(hdr, RING_HDR, MPI_LONG, 0, MPI_COMM_WORLD);
    long B = hdr[1], n = hdr[2], h = hdr[3], d = hdr[4], hkv = hdr[5];
    size_t width[4] = {(size_t)(h * d), (size_t)(hkv * d),
                       (size_t)(hkv * d), (size_t)(h * d)};
    if (hdr[0] == 0) {
        rope_ring_shard_of(&me, (rope_ring_layout)hdr[11], n_ranks, rank, n);
        long most = me.tokens; /* on rank 0: the largest shard of any rank */
        for (int r = 1; rank == 0 && r < n_ranks; r++) {
            rope_ring_shard rs;
            rope_ring_shard_of(&rs, (rope_ring_layout)hdr[11], n_ranks, r, n);
            most = rs.tokens > most ? rs.tokens : most;
        }
        int ok = 1;
        if (rank != 0 && !hdr[7])
            ok = (c = malloc(sizeof(float) * n * d)) != NULL
                 && (s = malloc(sizeof(float) * n * d)) != NULL;
        for (int j = 0; j < 4; j++)
            ok = ok && (sh[j] = malloc(sizeof(float) * B * (j % 3 ? me.tokens : most)
                                       * width[j])) != NULL;
        rc = ring_cli_agree(ok, rank, "out of memory");
        if (rc == 0 && !hdr[7]) {
            MPI_Bcast(c, (int)(n * d), MPI_FLOAT, 0, MPI_COMM_WORLD);
            MPI_Bcast(s, (int)(n * d), MPI_FLOAT, 0, MPI_COMM_WORLD);
        }
        for (int j = 0; j < 3 && rc == 0; j++) {
            if (rank == 0) {
                for (int r = 0; r < n_ranks; r++) {
                    rope_ring_shard rs;
                    rope_ring_shard_of(&rs, (rope_ring_layout)hdr[11], n_ranks, r, n);
                    float *dst = r == 0 ? sh[j] : sh[3];
                    rope_ring_shard_copy(dst, x[j].data, &rs, B, n, width[j], 0);
                    if (r != 0)
                        MPI_Send(sh[3], (int)(B * rs.tokens * width[j]), MPI_FLOAT, r, j,
                                 MPI_COMM_WORLD);
                }
            } else
                MPI_Recv(sh[j], (int)(B * me.tokens * width[j]), MPI_FLOAT, 0, j,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else
        rc = 2;
    if (rc == 0) {
        rope_attention_params p;
        rope_attention_defaults(&p);
        p.batch = (int)B; p.seq_len = p.kv_len = (int)n;
        p.n_heads = (int)h; p.n_kv_heads = (int)hkv; p.head_dim = (int)d;
        p.causal = (int)hdr[6];
        p.freqs_cos = hdr[7] ? NULL : c;
        p.freqs_sin = hdr[7] ? NULL : s;
        p.table_len = hdr[7] ? 0 : n;
        p.pairing = (rope_pairing)hdr[8];
        p.n_threads = (int)hdr[9];
        p.simd = (rope_simd)hdr[10];
        p.kv_dtype = (rope_dtype)hdr[12];
        int e = rope_ring_attention(sh[3], sh[0], sh[1], sh[2], &p,
                                    (rope_ring_layout)hdr[11], MPI_COMM_WORLD,
                                    NULL);
        if (e == ROPE_RING_ENONFINITE) {
            rc = rank == 0 ? cli_attention_kernel_error(ROPE_ATTENTION_ENONFINITE,
                                                        &p, x, NULL) : 2;
        } else if (e != 0) {
            rc = rank == 0 ? cli_error("ring attention: %s",
                                       rope_ring_strerror(e)) : 2;
        } else if (rank != 0) {
            MPI_Send(sh[3], (int)(B * me.tokens * width[3]), MPI_FLOAT, 0, 3,
                     MPI_COMM_WORLD);
        } else {
            for (int r = 0; r < n_ranks; r++) {
                rope_ring_shard rs;
                rope_ring_shard_of(&rs, (rope_ring_layout)hdr[11], n_ranks, r, n);
                if (r != 0)
                    MPI_Recv(sh[0], (int)(B * rs.tokens * width[3]), MPI_FLOAT, r, 3,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                rope_ring_shard_copy(r == 0 ? sh[3] : sh[0], x[0].data, &rs, B, n,
                                     width[3], 1);
            }
            rc = cli_write_npys(1, cli_attention_names + 3, a.att.path + 3, &x[0]);
        }
    }
    free(c); free(s);
    for (int j = 0; j < 4; j++) free(sh[j]);
    for (int j = 0; j < 3; j++) rope_npy_free(&x[j]);
    return rc;
}
static int ring_bench_parse(int argc, char **argv, long *cfg)
{
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *f = argv[i];
        rope_ring_layout l = ROPE_RING_ZIGZAG;
        if (!strcmp(f, "--causal")) { cfg[4] = 1; continue; }
        if (strcmp(f, "--n") && strcmp(f, "--reps") && strcmp(f, "--layout"))
            return cli_error("bench: unexpected argument '%s'", f);
        if ((rc = cli_need_value(argc, argv, i)) != 0) break;
        if (!strcmp(f, "--n"))
            rc = cli_parse_int(f, argv[++i], 1, 1L * 1024 * 1024, &cfg[1]);
        else if (!strcmp(f, "--reps"))
            rc = cli_parse_int(f, argv[++i], 1, 1000, &cfg[2]);
        else if ((rc = ring_cli_layout(argv[++i], &l)) == 0)
            cfg[3] = (long)l;
    }
    return rc;
}
static int ring_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int ring_bench_cmd(int argc, char **argv, int rank, int n_ranks)
{
    long cfg[5] = {0, 4096, 5, ROPE_RING_ZIGZAG, 0};
    rope_ring_shard me;
    if (rank == 0)
        cfg[0] = ring_bench_parse(argc, argv, cfg);
    MPI_Bcast(cfg, 5, MPI_LONG, 0, MPI_COMM_WORLD);
    if (cfg[0] != 0)
        return 2;
    if (rope_ring_shard_of(&me, (rope_ring_layout)cfg[3], n_ranks, rank,
                           cfg[1]))
        return rank == 0 ? cli_error("bench: --n %ld is too short for %d "
                                     "ranks", cfg[1], n_ranks) : 2;
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = (int)cfg[1];
    p.n_heads = 8; p.n_kv_heads = 4; p.head_dim = 96;
    p.causal = (int)cfg[4];
    size_t nq = (size_t)me.tokens * 8 * 96, nk = (size_t)me.tokens * 4 * 96;
    size_t most = 2 * (nk + 2 * 4 * 96);
    float *q = malloc(sizeof(float) * nq), *k = malloc(sizeof(float) * nk);
    float *v = malloc(sizeof(float) * nk), *o = malloc(sizeof(float) * nq);
    float *buf[2] = {calloc(most, sizeof(float)), calloc(most, sizeof(float))};
    double *rows = malloc(sizeof(double) * 4 * cfg[2]);
    if (!q || !k || !v || !o || !buf[0] || !buf[1] || !rows) {
        fprintf(stderr, "rope: error: bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t seed = 6000 + (uint64_t)rank;
    for (size_t i = 0; i < nq; i++) q[i] = (float)(2 * rope_uniform(&seed) - 1);
    for (size_t i = 0; i < nk; i++) k[i] = (float)(2 * rope_uniform(&seed) - 1);
    for (size_t i = 0; i < nk; i++) v[i] = (float)(2 * rope_uniform(&seed) - 1);
    for (long rep = 0; rep < cfg[2]; rep++) {
        rope_ring_stats st;
        double mine[4], worst[4];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        rope_ring_attention(o, q, k, v, &p, (rope_ring_layout)cfg[3],
                            MPI_COMM_WORLD, &st);
        mine[3] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int s = 0; s + 1 < n_ranks; s++) {
            MPI_Request req[2];
            MPI_Irecv(buf[1 - s % 2], (int)most, MPI_FLOAT,
                      (rank + n_ranks - 1) % n_ranks, s, MPI_COMM_WORLD,
                      &req[0]);
            MPI_Isend(buf[s % 2], (int)most, MPI_FLOAT, (rank + 1) % n_ranks,
                      s, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        }
        mine[0] = st.compute_s; mine[1] = st.wait_s;
        mine[2] = MPI_Wtime() - t0;
        MPI_Reduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        for (int c = 0; c < 4; c++) rows[c * cfg[2] + rep] = worst[c];
    }
    if (rank == 0) {
        double pmax = 0, pmin = -1;
        for (int r = 0; r < n_ranks; r++) {
            double w = rope_ring_rank_pairs((rope_ring_layout)cfg[3], n_ranks,
                                            r, cfg[1], (int)cfg[4]);
            pmax = w > pmax ? w : pmax;
            pmin = pmin < 0 || w < pmin ? w : pmin;
        }
        for (int c = 0; c < 4; c++) {
            qsort(rows + c * cfg[2], (size_t)cfg[2], sizeof(double), ring_cmp);
            printf("%.4f ", 1e3 * rows[c * cfg[2] + cfg[2] / 2]);
        }
        printf("%.0f %.0f\n", pmax, pmin);
    }
    free(q); free(k); free(v); free(o); free(buf[0]); free(buf[1]);
    free(rows);
    return 0;
}
static int ring_pingpong_cmd(int rank, int n_ranks)
{
    enum { BATCHES = 7 };
    const size_t most = (size_t)8 << 20;
    if (n_ranks != 2)
        return rank == 0 ? cli_error("pingpong: needs exactly 2 ranks, "
                                     "not %d", n_ranks) : 2;
    char *buf = calloc(most, 1);
    if (buf == NULL) {
        fprintf(stderr, "rope: error: pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t bytes = 8; bytes <= most; bytes *= 4) {
        int reps = bytes <= 65536 ? 400 : 20, other = 1 - rank;
        double t[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++)
                if (rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, other, 0,
                             MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, other, 0,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, other, 0,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, other, 0,
                             MPI_COMM_WORLD);
                }
            t[b] = (MPI_Wtime() - t0) / (2.0 * reps);
        }
        qsort(t, BATCHES, sizeof t[0], ring_cmp);
        if (rank == 0)
            printf("%zu %.4g %.4g %.4g\n", bytes, 1e6 * t[BATCHES / 2],
                   1e6 * t[0], 1e6 * t[BATCHES - 1]);
    }
    free(buf);
    return 0;
}
int main(int argc, char **argv)
{
    int rank, n_ranks, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    signal(SIGXFSZ, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "--help")) {
        if (rank == 0)
            printf("usage: mpirun -np P rope-ring attention --q Q.npy "
                   "--k K.npy --v V.npy --out O.npy [--layout contiguous|"
                   "zigzag] [options of rope attention]\n"
                   "       mpirun -np P rope-ring bench [--n N] [--layout "
                   "L] [--causal] [--reps R]\n"
                   "       mpirun -np 2 rope-ring pingpong\n");
        rc = 0;
    } else if (argc >= 2 && !strcmp(argv[1], "attention"))
        rc = ring_attention_cmd(argc - 1, argv + 1, rank, n_ranks);
    else if (argc >= 2 && !strcmp(argv[1], "bench"))
        rc = ring_bench_cmd(argc - 1, argv + 1, rank, n_ranks);
    else if (argc == 2 && !strcmp(argv[1], "pingpong"))
        rc = ring_pingpong_cmd(rank, n_ranks);
    else
        rc = rank == 0 ? cli_error("rope-ring: expected the command "
                                   "attention, bench or pingpong (try "
                                   "--help)") : 2;
    if (rank == 0 && (fflush(stdout) != 0 || ferror(stdout)) && rc == 0)
        rc = cli_error("cannot write the standard output");
    MPI_Finalize();
    return rc;
}
