/* W6.5 The tests */
/* test-ring-mpi.c: ring attention against one process, run by
   mpirun (chapter 6). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ring-mpi.h"
#include "rope.h"

typedef struct {
    long n, start;
    int batch, h, hkv, d, causal, rope;
    rope_ring_layout layout;
    rope_pairing pairing;
} ring_case;

static const ring_case ring_cases[] = {
    {37, 0, 1, 8, 2, 16, 1, 1, ROPE_RING_ZIGZAG, ROPE_PAIRING_HALF},
    {37, 5, 2, 4, 4, 8, 1, 1, ROPE_RING_CONTIGUOUS,
     ROPE_PAIRING_INTERLEAVED},
    {30, 100, 1, 6, 3, 32, 0, 1, ROPE_RING_ZIGZAG, ROPE_PAIRING_HALF},
    {41, 0, 2, 2, 1, 16, 0, 1, ROPE_RING_CONTIGUOUS, ROPE_PAIRING_HALF},
    {50, 1000, 1, 8, 2, 64, 1, 1, ROPE_RING_ZIGZAG,
     ROPE_PAIRING_INTERLEAVED},
    {33, 0, 1, 4, 2, 16, 1, 0, ROPE_RING_ZIGZAG, ROPE_PAIRING_HALF},
    {23, 0, 1, 8, 4, 96, 1, 1, ROPE_RING_CONTIGUOUS, ROPE_PAIRING_HALF},
};
enum { RING_NCASES = sizeof ring_cases / sizeof ring_cases[0] };
static float *ring_rand(size_t n, uint64_t *st)
{
    float *x = malloc(sizeof(float) * n);
    for (size_t i = 0; x != NULL && i < n; i++)
        x[i] = (float)(2 * rope_uniform(st) - 1);
    return x;
}

static int ring_case_run(const ring_case *t, int rank, int n_ranks,
                         double err[2], int *same)
{
    rope_attention_params p;
    rope_ring_shard me;
    uint64_t st = 7700 + (uint64_t)t->n;
    size_t wq = (size_t)t->h * t->d, wk = (size_t)t->hkv * t->d;
    size_t nq = (size_t)t->batch * t->n * wq;
    size_t nk = (size_t)t->batch * t->n * wk;
    float *c = NULL, *s = NULL;
    rope_attention_defaults(&p);
    p.batch = t->batch;
    p.seq_len = p.kv_len = (int)t->n;
    p.n_heads = t->h; p.n_kv_heads = t->hkv; p.head_dim = t->d;
    p.causal = t->causal;
    p.start_pos = t->start;
    p.pairing = t->pairing;
    if (t->rope) {
        p.table_len = t->start + t->n;
        c = malloc(sizeof(float) * p.table_len * t->d);
        s = malloc(sizeof(float) * p.table_len * t->d);
        if (!c || !s || rope_precompute_freqs_cis(c, s, t->d, p.table_len,
                                                  1e6, ROPE_PRECISION_FLOAT))
            return 1;
        p.freqs_cos = c;
        p.freqs_sin = s;
    }
    float *q = ring_rand(nq, &st), *k = ring_rand(nk, &st);
    float *v = ring_rand(nk, &st);
    float *want = malloc(sizeof(float) * nq), *ref = malloc(sizeof(float) * nq);
    rope_ring_shard_of(&me, t->layout, n_ranks, rank, t->n);
    size_t mq = (size_t)t->batch * me.tokens * wq;
    size_t mk = (size_t)t->batch * me.tokens * wk;
    float *sq = malloc(sizeof(float) * mq), *sk = malloc(sizeof(float) * mk);
    float *sv = malloc(sizeof(float) * mk), *so = malloc(sizeof(float) * mq);
    float *sw = malloc(sizeof(float) * mq), *sr = malloc(sizeof(float) * mq);
    if (!q || !k || !v || !want || !ref || !sq || !sk || !sv || !so || !sw
        || !sr || rope_attention(want, q, k, v, &p)
        || rope_attention_naive(ref, q, k, v, &p))
        return 1;
    rope_ring_shard_copy(sq, q, &me, t->batch, t->n, wq, 0);
    rope_ring_shard_copy(sk, k, &me, t->batch, t->n, wk, 0);
    rope_ring_shard_copy(sv, v, &me, t->batch, t->n, wk, 0);
    rope_ring_shard_copy(sw, want, &me, t->batch, t->n, wq, 0);
    rope_ring_shard_copy(sr, ref, &me, t->batch, t->n, wq, 0);
    int rc = rope_ring_attention(so, sq, sk, sv, &p, t->layout,
                                 MPI_COMM_WORLD, NULL);
    double scale = 0;
    for (size_t i = 0; i < nq; i++) scale = fmax(scale, fabs(want[i]));
    err[0] = err[1] = 0;
    for (size_t i = 0; i < mq; i++) {
        err[0] = fmax(err[0], fabs((double)so[i] - sw[i]) / scale);
        err[1] = fmax(err[1], fabs((double)so[i] - sr[i]) / scale);
    }
    *same = memcmp(so, sw, sizeof(float) * mq) == 0;
    free(q); free(k); free(v); free(want); free(ref); free(c); free(s);
    free(sq); free(sk); free(sv); free(so); free(sw); free(sr);
    return rc;
}
static int ring_sweep(int rank, int n_ranks)
{
    double worst[2] = {0, 0};
    int all_same = 1, failed = 0;
    for (int i = 0; i < RING_NCASES; i++) {
        double err[2], e[2];
        int same, rc = ring_case_run(&ring_cases[i], rank, n_ranks, err,
                                     &same), any_rc, all;
        MPI_Allreduce(&rc, &any_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(err, e, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rank == 0)
            printf("case %d: n = %ld, %d ranks: status %d, errors %.3g "
                   "%.3g\n", i, ring_cases[i].n, n_ranks, any_rc, e[0],
                   e[1]);
        failed |= any_rc != 0;
        worst[0] = fmax(worst[0], e[0]);
        worst[1] = fmax(worst[1], e[1]);
        all_same &= all;
    }
    if (rank == 0)
        printf("max relative error %.3g against the kernel, %.3g against "
               "the reference; bit-identical: %s\n", worst[0], worst[1],
               all_same ? "yes" : "no");
    return failed || worst[0] > 2e-6 || worst[1] > 2e-6
           || (n_ranks == 1 && !all_same);
}
static int ring_expect(int rc, int want, int rank, const char *what)
{
    int lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: codes %d to %d, expected %d (%s)\n", what, lo, hi, want,
               rope_ring_strerror(want));
    return lo != want || hi != want;
}

static int ring_errors(int rank, int n_ranks)
{
    static float buf[4 * 64 * 4 * 8];
    rope_attention_params p;
    int bad = 0;
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = 4 * n_ranks;
    p.n_heads = rank == n_ranks - 1 && n_ranks > 1 ? 4 : 2;
    p.n_kv_heads = 1; p.head_dim = 8;
    bad |= ring_expect(rope_ring_attention(buf, buf, buf, buf, &p,
        ROPE_RING_ZIGZAG, MPI_COMM_WORLD, NULL), n_ranks > 1
        ? ROPE_RING_EMISMATCH : ROPE_RING_OK, rank, "mismatch");
    p.n_heads = 2;
    p.seq_len = p.kv_len = 2 * n_ranks - 1;
    bad |= ring_expect(rope_ring_attention(buf, buf, buf, buf, &p,
        ROPE_RING_ZIGZAG, MPI_COMM_WORLD, NULL), n_ranks > 1
        ? ROPE_RING_ESHORT : ROPE_RING_OK, rank, "short");
    if (rank == 0)
        printf("errors: %s\n", bad ? "NOT agreed" : "agreed");
    return bad;
}

int main(int argc, char **argv)
{
    int rank, n_ranks, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    if (argc == 2 && strcmp(argv[1], "sweep") == 0)
        bad = ring_sweep(rank, n_ranks);
    else if (argc == 2 && strcmp(argv[1], "errors") == 0)
        bad = ring_errors(rank, n_ranks);
    else {
        if (rank == 0) fprintf(stderr, "usage: test-ring-mpi sweep|errors\n");
        bad = 2;
    }
    MPI_Finalize();
    return bad;
}
