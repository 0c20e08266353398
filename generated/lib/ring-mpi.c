/* 6.7 The ring over MPI */
/* ring-mpi.c: ring attention over MPI (chapter 6). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ring-mpi.h"
#include "attention.h"
#include "ring.h"
#include "rotary.h"

typedef struct {
    int n_ranks, rank, cur;
    rope_ring_shard *shard; /* [n_ranks] */
    float *qr, *kv[2], *ob, *lb;
    double *acc, *lacc;
} ring_state;
/* W6.1 The helpers of the ring */
static int ring_kernel_code(int e)
{
    if (e == 0) return ROPE_RING_OK;
    if (e == ROPE_ATTENTION_ENOMEM) return ROPE_RING_ENOMEM;
    if (e == ROPE_ATTENTION_ENONFINITE) return ROPE_RING_ENONFINITE;
    return ROPE_RING_EKERNEL;
}
static int ring_check(const rope_attention_params *p,
                      rope_ring_layout layout, int n_ranks, int rank)
{
    rope_ring_shard me;
    if (p->batch < 1 || p->seq_len < 1 || p->n_heads < 1
        || p->n_kv_heads < 1 || p->head_dim < 1
        || p->n_heads % p->n_kv_heads || p->seq_len != p->kv_len
        || p->lse != NULL || p->start_pos < 0
        || (layout != ROPE_RING_CONTIGUOUS && layout != ROPE_RING_ZIGZAG))
        return ROPE_RING_EARGS;
    if (p->freqs_cos != NULL && (p->freqs_sin == NULL || p->head_dim % 2
        || p->table_len < p->start_pos + p->kv_len))
        return ROPE_RING_EARGS;
    if (rope_ring_shard_of(&me, layout, n_ranks, rank, p->seq_len))
        return ROPE_RING_ESHORT;
    if (2.0 * p->batch * (me.tokens + 2) * p->n_kv_heads * p->head_dim
        > INT_MAX)
        return ROPE_RING_EARGS;
    return ROPE_RING_OK;
}
enum { RING_NKEYS = 12 };
static int ring_agree_code(int rc, MPI_Comm comm)
{
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
    return worst;
}

static int ring_agree(int rc, const rope_attention_params *p,
                      rope_ring_layout layout, MPI_Comm comm)
{
    long mine[RING_NKEYS] = {p->batch, p->seq_len, p->kv_len, p->n_heads,
        p->n_kv_heads, p->head_dim, p->start_pos, p->causal,
        (long)p->pairing, p->freqs_cos != NULL, p->keys_rotated,
        (long)layout};
    long lo[RING_NKEYS], hi[RING_NKEYS];
    MPI_Allreduce(mine, lo, RING_NKEYS, MPI_LONG, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, RING_NKEYS, MPI_LONG, MPI_MAX, comm);
    rc = ring_agree_code(rc, comm);
    for (int i = 0; i < RING_NKEYS && rc == 0; i++)
        if (lo[i] != hi[i])
            rc = ROPE_RING_EMISMATCH;
    return rc;
}
static int ring_kv_count(const ring_state *r,
                         const rope_attention_params *p, int owner)
{
    return (int)(2 * (size_t)p->batch * r->shard[owner].tokens
                 * p->n_kv_heads * p->head_dim);
}

static void ring_free(ring_state *r)
{
    free(r->shard); free(r->qr); free(r->kv[0]); free(r->kv[1]);
    free(r->ob); free(r->lb); free(r->acc); free(r->lacc);
    r->shard = NULL; r->qr = r->kv[0] = r->kv[1] = r->ob = r->lb = NULL;
    r->acc = r->lacc = NULL;
}
static int ring_alloc(ring_state *r, const rope_attention_params *p,
                      rope_ring_layout layout, MPI_Comm comm)
{
    size_t B = (size_t)p->batch, h = (size_t)p->n_heads;
    size_t hd = h * p->head_dim, most = 0, chunk = 0;
    int ok = (r->shard = malloc(sizeof *r->shard * r->n_ranks)) != NULL;
    for (int o = 0; ok && o < r->n_ranks; o++) {
        rope_ring_shard_of(&r->shard[o], layout, r->n_ranks, o,
                           p->seq_len);
        most = (size_t)ring_kv_count(r, p, o) > most
             ? (size_t)ring_kv_count(r, p, o) : most;
        chunk = (size_t)r->shard[o].len[0] > chunk
              ? (size_t)r->shard[o].len[0] : chunk;
    }
    size_t mine = ok ? B * r->shard[r->rank].tokens : 0;
    ok = ok && (r->qr = malloc(sizeof(float) * mine * hd)) != NULL
         && (r->kv[0] = malloc(sizeof(float) * most)) != NULL
         && (r->kv[1] = malloc(sizeof(float) * most)) != NULL
         && (r->ob = malloc(sizeof(float) * B * chunk * hd)) != NULL
         && (r->lb = malloc(sizeof(float) * B * chunk * h)) != NULL
         && (r->acc = calloc(mine * hd, sizeof(double))) != NULL
         && (r->lacc = malloc(sizeof(double) * mine * h)) != NULL;
    for (size_t i = 0; ok && i < mine * h; i++)
        r->lacc[i] = -INFINITY;
    return ring_agree_code(ok ? ROPE_RING_OK : ROPE_RING_ENOMEM, comm);
}
static int ring_block(ring_state *r, const rope_attention_params *p,
                      int kind, int a, int owner, int b)
{
    const rope_ring_shard *me = &r->shard[r->rank], *kv = &r->shard[owner];
    size_t B = (size_t)p->batch, h = (size_t)p->n_heads;
    size_t hd = h * p->head_dim, kd = (size_t)p->n_kv_heads * p->head_dim;
    size_t qa = B * (a ? me->len[0] : 0), kb = B * (b ? kv->len[0] : 0);
    long lq = me->len[a], lk = kv->len[b];
    const float *qc = r->qr + qa * hd, *kc = r->kv[r->cur] + kb * kd;
    const float *vc = r->kv[r->cur] + B * kv->tokens * kd + kb * kd;
    rope_attention_params bp = *p;
    int rc = 0;
    bp.freqs_cos = bp.freqs_sin = NULL;
    bp.table_len = bp.start_pos = 0;
    bp.keys_rotated = 0;
    bp.causal = kind == ROPE_RING_DIAGONAL;
    if (lq <= lk) {
        bp.seq_len = (int)lq;
        bp.kv_len = (int)lk;
        bp.lse = r->lb;
        rc = rope_attention(r->ob, qc, kc, vc, &bp);
    } else {
        bp.batch = 1;
        bp.kv_len = (int)lk;
        for (size_t e = 0; e < B && !rc; e++)
            for (long i0 = 0; i0 < lq && !rc; i0 += lk) {
                size_t row = e * lq + i0;
                bp.seq_len = (int)(lq - i0 < lk ? lq - i0 : lk);
                bp.lse = r->lb + row * h;
                rc = rope_attention(r->ob + row * hd, qc + row * hd,
                                    kc + e * lk * kd, vc + e * lk * kd, &bp);
            }
    }
    if (rc)
        return ring_kernel_code(rc);
    rope_ring_merge(r->acc + qa * hd, r->lacc + qa * h, r->ob, r->lb,
                    B * lq * h, p->head_dim);
    return ROPE_RING_OK;
}
const char *rope_ring_strerror(int code)
{
    switch (code) {
    case ROPE_RING_OK: return "no error";
    case ROPE_RING_EARGS: return "invalid arguments";
    case ROPE_RING_ESHORT: return "the sequence is shorter than the "
                                  "number of chunks of the layout";
    case ROPE_RING_EMISMATCH: return "the ranks passed different "
                                     "parameters";
    case ROPE_RING_ENOMEM: return "out of memory";
    case ROPE_RING_EKERNEL: return "the attention kernel failed";
    case ROPE_RING_ENONFINITE: return "the attention output is not "
                                      "finite";
    }
    return "unknown error";
}
/* 6.7 The ring over MPI */
int rope_ring_attention(float *out, const float *q, const float *k,
                        const float *v, const rope_attention_params *p,
                        rope_ring_layout layout, MPI_Comm comm,
                        rope_ring_stats *stats)
{
    rope_ring_stats st = {0, 0, 0, 0, 0};
    ring_state r = {0, 0, 0, NULL, NULL, {NULL, NULL}, NULL, NULL,
                    NULL, NULL};
    MPI_Comm_size(comm, &r.n_ranks);
    MPI_Comm_rank(comm, &r.rank);
    int rc = ring_agree(ring_check(p, layout, r.n_ranks, r.rank), p,
                        layout, comm);
    if (rc == 0 && r.n_ranks == 1) {
        double t0 = MPI_Wtime();
        rc = ring_kernel_code(rope_attention(out, q, k, v, p));
        st.compute_s = MPI_Wtime() - t0;
        st.steps = 1;
        st.pairs = p->batch * rope_ring_block_pairs(p->seq_len, p->kv_len,
            p->causal ? ROPE_RING_DIAGONAL : ROPE_RING_FULL);
    } else if (rc == 0 && (rc = ring_alloc(&r, p, layout, comm)) == 0) {
        const rope_ring_shard *me = &r.shard[r.rank];
        size_t B = (size_t)p->batch, hd = (size_t)p->n_heads * p->head_dim;
        size_t kd = (size_t)p->n_kv_heads * p->head_dim;
        double t0 = MPI_Wtime();
        memcpy(r.qr, q, sizeof(float) * B * me->tokens * hd);
        memcpy(r.kv[0], k, sizeof(float) * B * me->tokens * kd);
        memcpy(r.kv[0] + B * me->tokens * kd, v,
               sizeof(float) * B * me->tokens * kd);
        for (int c = 0; c < me->n_chunks && p->freqs_cos != NULL; c++) {
            float *qc = r.qr + B * (c ? me->len[0] : 0) * hd;
            float *kc = r.kv[0] + B * (c ? me->len[0] : 0) * kd;
            rope_apply_rotary_pos_emb(qc, p->keys_rotated ? qc : kc,
                p->freqs_cos, p->freqs_sin, p->batch, (int)me->len[c],
                p->n_heads, p->keys_rotated ? 0 : p->n_kv_heads, p->head_dim,
                p->start_pos + me->start[c], p->pairing);
        }
        st.rotate_s = MPI_Wtime() - t0;
        int left = (r.rank + r.n_ranks - 1) % r.n_ranks;
        int right = (r.rank + 1) % r.n_ranks;
        for (int s = 0; s < r.n_ranks; s++) {
            int owner = (r.rank - s + r.n_ranks) % r.n_ranks;
            int next = (owner + r.n_ranks - 1) % r.n_ranks;
            MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            if (s + 1 < r.n_ranks) {
                MPI_Irecv(r.kv[1 - r.cur], ring_kv_count(&r, p, next), MPI_FLOAT,
                          left, s, comm, &req[0]);
                MPI_Isend(r.kv[r.cur], ring_kv_count(&r, p, owner), MPI_FLOAT,
                          right, s, comm, &req[1]);
            }
            double t1 = MPI_Wtime();
            const rope_ring_shard *held = &r.shard[owner];
            for (int a = 0; a < me->n_chunks; a++)
                for (int b = 0; b < held->n_chunks; b++) {
                    int kind = rope_ring_block_kind(me->chunk[a], held->chunk[b],
                                                    p->causal);
                    if (kind == ROPE_RING_SKIP)
                        continue;
                    int e = ring_block(&r, p, kind, a, owner, b), flag;
                    rc = rc ? rc : e;
                    st.pairs += B * rope_ring_block_pairs(me->len[a], held->len[b],
                                                          kind);
                    MPI_Testall(2, req, &flag, MPI_STATUSES_IGNORE);
                }
            double t2 = MPI_Wtime();
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            st.compute_s += t2 - t1;
            st.wait_s += MPI_Wtime() - t2;
            st.steps++;
            r.cur = 1 - r.cur;
        }
        rc = ring_agree_code(rc, comm);
        for (size_t i = 0; rc == 0 && i < B * me->tokens * hd; i++)
            out[i] = (float)r.acc[i];
    }
    ring_free(&r);
    if (stats != NULL)
        *stats = st;
    return rc;
}
