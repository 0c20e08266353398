/* W5.1 The three files of the kernel */
/* attention.c: tiled, multithreaded attention with fused RoPE */
#define _POSIX_C_SOURCE 200809L
#include "attention-kernels.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if ATT_X86
#include <immintrin.h>
#endif
/* W5.3 The other micro-kernels */
ATT_HIDDEN att_tuning att_tune = { 1, 0, ATT_IB, 1, 1, 1, 1, 1, 1 };
/* 5.6 Fused RoPE and grouped heads */
ATT_HIDDEN ATT_VECTORIZE void att_rotate_row(
    float *restrict out, const float *restrict x,
    const float *restrict c, const float *restrict s, int d,
    rope_pairing pr)
{
    int h = d / 2;
    if (pr == ROPE_PAIRING_HALF) {
        for (int i = 0; i < h; i++)
            out[i] = x[i] * c[i] + (-x[i + h]) * s[i];
        for (int i = 0; i < h; i++)
            out[i + h] = x[i + h] * c[i + h] + x[i] * s[i + h];
    } else {
        for (int i = 0; i < h; i++) {
            float x0 = x[2 * i], x1 = x[2 * i + 1];
            out[2 * i] = x0 * c[i] + (-x1) * s[i];
            out[2 * i + 1] = x1 * c[i] + x0 * s[i];
        }
    }
}
int rope_repeat_kv(float *out, const float *x, int batch, int seq_len,
                   int n_kv_heads, int head_dim, int n_rep)
{
    if (!out || !x || batch < 1 || seq_len < 1 || n_kv_heads < 1
        || head_dim < 1 || n_rep < 1)
        return 1;
    size_t rows = (size_t)batch * seq_len * n_kv_heads;
    size_t len = sizeof(float) * head_dim;
    /* row t is (b, j, g); copy c goes to head g * n_rep + c */
    for (size_t t = 0; t < rows; t++)
        for (int c = 0; c < n_rep; c++)
            memcpy(out + (t * n_rep + c) * head_dim,
                   x + t * head_dim, len);
    return 0;
}
/* W5.4 Defaults and checks of a call */
void rope_attention_defaults(rope_attention_params *p)
{
    memset(p, 0, sizeof *p);
    p->batch = 1;
    p->seq_len = p->kv_len = 1;
    p->n_heads = 8;
    p->n_kv_heads = 2;
    p->head_dim = 96;
    p->causal = 1;
    p->pairing = ROPE_PAIRING_HALF;
    p->n_threads = 1;
    p->simd = ROPE_SIMD_AUTO;
}
ATT_HIDDEN int att_check(const rope_attention_params *p)
{
    if (p->batch < 1 || p->seq_len < 1 || p->kv_len < 1
        || p->n_heads < 1 || p->n_kv_heads < 1 || p->head_dim < 1
        || p->head_dim > ROPE_ATTENTION_MAX_HEAD_DIM)
        return 1;
    if (p->n_heads % p->n_kv_heads) return 2;
    if (p->seq_len > p->kv_len) return 3;
    if (p->start_pos < 0) return 4;
    if (p->freqs_cos) {
        if (!p->freqs_sin || p->head_dim % 2) return 5;
        if (p->table_len < p->start_pos + p->kv_len) return 6;
    }
    if (p->kv_dtype != ROPE_DTYPE_F32 && p->kv_dtype != ROPE_DTYPE_BF16)
        return 1;
    return 0;
}
/* W5.9 The key/value cache */
static void att_cache_tile(const rope_kv_cache *c, int t, long bg,
                           const float **kt, const float **vt)
{
    size_t tile = (size_t)c->dp * ROPE_ATTENTION_BK;
    const float *at = c->tiles
        + ((size_t)t * c->batch * c->n_kv_heads + bg) * 2 * tile;
    *kt = at;
    *vt = at + tile;
}
/* 5.7 The micro-kernels */
static void s_tile_scalar(float *S, const float *Q, const float *Kt,
                          int M, int dp)
{
    for (int r = 0; r < M; r++) {
        float acc[ATT_BK] = {0};
        for (int i = 0; i < dp; i++) {
            float a = Q[(size_t)r * dp + i];
            const float *kr = Kt + (size_t)i * ATT_BK;
            for (int c = 0; c < ATT_BK; c++) acc[c] += a * kr[c];
        }
        memcpy(S + (size_t)r * ATT_BK, acc, sizeof acc);
    }
}
static void sm_tile_scalar(float *S, int M, const int *nvalid,
                           float *m, float *l, float *alpha)
{
    for (int r = 0; r < M; r++) {
        float *x = S + (size_t)r * ATT_BK;
        int nv = nvalid ? nvalid[r] : ATT_BK;
        float mx = -INFINITY, sum = 0;
        for (int c = 0; c < nv; c++) mx = x[c] > mx ? x[c] : mx;
        float mn = m[r] > mx ? m[r] : mx;
        if (mn == -INFINITY) {
            alpha[r] = 1;
            memset(x, 0, sizeof(float) * ATT_BK);
            continue;
        }
        for (int c = 0; c < ATT_BK; c++) {
            x[c] = c < nv ? exp2f(x[c] - mn) : 0.0f;
            sum += x[c];
        }
        alpha[r] = exp2f(m[r] - mn);
        l[r] = l[r] * alpha[r] + sum;
        m[r] = mn;
    }
}
static void pv_tile_scalar(float *U, const float *P, const float *V,
                           const float *alpha, int M, int dp)
{
    for (int r = 0; r < M; r++) {
        float *u = U + (size_t)r * dp;
        for (int i = 0; i < dp; i++) u[i] *= alpha[r];
        for (int c = 0; c < ATT_BK; c++) {
            float w = P[(size_t)r * ATT_BK + c];
            const float *vr = V + (size_t)c * dp;
            for (int i = 0; i < dp; i++) u[i] += w * vr[i];
        }
    }
}
/* W5.3 The other micro-kernels */
static ATT_VECTORIZE void att_scale_q(float *restrict x, float c, int d)
{
    for (int i = 0; i < d; i++) x[i] *= c;
}
static void att_prefetch_read(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) __builtin_prefetch(x + i, 0);
}
static void att_prefetch_write(float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) __builtin_prefetch(x + i, 1);
}
static att_kernels att_pick(rope_simd s)
{
    att_kernels k = { s_tile_scalar, sm_tile_scalar, pv_tile_scalar,
                      att_rotate_row, NULL, NULL, NULL };
    att_simd_kernels(s, &k);
    if (!att_tune.step) k.st = NULL;
    return k;
}
/* W5.5 The workspace of a call */
static atomic_long att_nallocs;
static void *att_alloc(size_t bytes)
{
    void *ptr = NULL;
    bytes = (bytes + 63) / 64 * 64;
    atomic_fetch_add(&att_nallocs, 1);
    if (posix_memalign(&ptr, 64, bytes ? bytes : 64)) return NULL;
    return ptr;
}
long rope_attention_allocations(void)
{
    return atomic_load(&att_nallocs);
}
static int att_ws_init(att_ws *w, const att_job *J)
{
    size_t M = (size_t)J->M, dp = (size_t)J->dp;
    size_t tile = sizeof(float) * dp * ATT_BK, G = ATT_IB;
    w->Q = att_alloc(sizeof(float) * G * M * dp);
    w->U = att_alloc(sizeof(float) * G * M * dp);
    w->S = att_alloc(sizeof(float) * M * ATT_BK);
    w->m = att_alloc(sizeof(float) * G * M);
    w->l = att_alloc(sizeof(float) * G * M);
    w->alpha = att_alloc(sizeof(float) * M);
    w->tmp = att_alloc(sizeof(float) * dp);
    w->nvalid = att_alloc(sizeof(int) * M);
    w->Kt = att_alloc(tile);
    w->Vt = att_alloc(tile);
    if (w->Kt) memset(w->Kt, 0, tile); /* the padding stays zero */
    if (w->Vt) memset(w->Vt, 0, tile);
    /* W5b.2 The code of the bfloat16 path */
    w->Q16 = att_alloc(sizeof(uint16_t) * G * M * dp);
    w->Kt16 = att_alloc(sizeof(uint16_t) * dp * ATT_BK);
    w->Vt16 = att_alloc(sizeof(uint16_t) * dp * ATT_BK);
    w->P16 = att_alloc(sizeof(uint16_t) * M * ATT_BK);
    w->lsave = att_alloc(sizeof(float) * M);
    w->Kw = att_alloc(sizeof(float) * dp * ATT_BK);
    w->Vw = att_alloc(sizeof(float) * dp * ATT_BK);
    /* W5.5 The workspace of a call */
    return w->Q && w->U && w->S && w->m && w->l && w->alpha
           && w->tmp && w->nvalid && w->Kt && w->Vt
           && w->Q16 && w->Kt16 && w->Vt16 && w->P16 && w->lsave
           && w->Kw && w->Vw;
}

static void att_ws_free(att_ws *w)
{
    free(w->Q); free(w->U); free(w->S); free(w->m);
    free(w->l); free(w->alpha); free(w->tmp); free(w->nvalid);
    free(w->Kt); free(w->Vt);
    w->Q = w->U = w->S = w->m = w->l = w->alpha = w->tmp = NULL;
    w->Kt = w->Vt = NULL;
    w->nvalid = NULL;
    /* W5b.2 The code of the bfloat16 path */
    free(w->Q16); free(w->Kt16); free(w->Vt16); free(w->P16); free(w->lsave);
    free(w->Kw); free(w->Vw);
    w->Q16 = w->Kt16 = w->Vt16 = w->P16 = NULL;
    w->lsave = w->Kw = w->Vw = NULL;
    /* W5.5 The workspace of a call */
    w->M = w->d = 0;
}
static pthread_key_t att_ws_key;
static int att_ws_key_ok; /* 0 if no key could be made */
static pthread_once_t att_pool_once = PTHREAD_ONCE_INIT;
static void att_pool_setup(void);
static void att_ws_destroy(void *arg)
{
    att_ws *w = arg;
    att_ws_free(w);
    free(w->part);
    free(w->pack);
    free(w);
}
static att_ws *att_ws_get(const att_job *J)
{
    pthread_once(&att_pool_once, att_pool_setup);
    if (!att_ws_key_ok) return NULL; /* reported as out of memory */
    att_ws *w = pthread_getspecific(att_ws_key);
    if (w && w->Q && w->M == J->M && w->d == J->d) return w;
    if (!w) {
        if (!(w = att_alloc(sizeof *w))) return NULL;
        memset(w, 0, sizeof *w);
        if (pthread_setspecific(att_ws_key, w)) { free(w); return NULL; }
    }
    att_ws_free(w);
    if (!att_ws_init(w, J)) { att_ws_free(w); return NULL; }
    w->M = J->M; w->d = J->d;
    return w;
}
static float *att_part_get(const att_job *J, size_t n)
{
    att_ws *w = att_ws_get(J);
    if (!w) return NULL;
    if (w->part_n < n) {
        free(w->part);
        w->part = att_alloc(sizeof(float) * n);
        w->part_n = w->part ? n : 0;
    }
    return w->part;
}
static size_t att_ws_floats(const att_job *J)
{
    size_t M = (size_t)J->M, dp = (size_t)J->dp;
    /* W5b.2 The code of the bfloat16 path */
    size_t bf16 = (ATT_IB * M * dp + 2 * dp * ATT_BK + M * ATT_BK) / 2 + M
                  + 2 * dp * ATT_BK + 7 * 16;
    /* W5.5 The workspace of a call */
    return ATT_IB * M * (2 * dp + 2) + M * (ATT_BK + 2) + dp
           + 2 * ATT_BK * dp + 10 * 16 + bf16;
}
/* W5.6 The driver's remaining steps */
static void att_pack_tile(att_job *J, att_ws *w, long bg, int t,
                          float *Kt, float *Vt)
{
    const rope_attention_params *p = J->p;
    int d = J->d, dp = J->dp, nk = p->kv_len, Hk = p->n_kv_heads;
    long b = bg / Hk, g = bg % Hk, j0 = (long)t * ATT_BK;
    int nt = nk - j0 < ATT_BK ? (int)(nk - j0) : ATT_BK;
    for (int jj = 0; jj < nt; jj++) {
        size_t off = (((size_t)b * nk + j0 + jj) * Hk + g) * d;
        const float *kr = J->k + off;
        if (p->freqs_cos && !p->keys_rotated) {
            long pos = p->start_pos + j0 + jj;
            J->ker.rot(w->tmp, kr, p->freqs_cos + pos * d,
                       p->freqs_sin + pos * d, d, p->pairing);
            kr = w->tmp;
        }
        for (int i = 0; i < d; i++) Kt[(size_t)i * ATT_BK + jj] = kr[i];
        memcpy(Vt + (size_t)jj * dp, J->v + off, sizeof(float) * d);
    }
    for (int jj = nt; jj < ATT_BK; jj++) {
        for (int i = 0; i < d; i++) Kt[(size_t)i * ATT_BK + jj] = 0;
        memset(Vt + (size_t)jj * dp, 0, sizeof(float) * d);
    }
}
static int att_heads_in(const att_job *J, int h0)
{
    return J->rep - h0 < J->hb ? J->rep - h0 : J->hb;
}
static void att_load_q(att_job *J, att_ws *w, int kb, long bg, int h0,
                       int q0, int nq)
{
    const rope_attention_params *p = J->p;
    int d = J->d, dp = J->dp, H = p->n_heads, n = p->seq_len;
    long b = bg / p->n_kv_heads, g = bg % p->n_kv_heads;
    float *Q = w->Q + (size_t)kb * J->M * dp;
    int nh = att_heads_in(J, h0);
    for (int r = 0; r < J->M; r++)
        if (r % J->bq >= nq || r / J->bq >= nh)
            memset(Q + (size_t)r * dp, 0, sizeof(float) * dp);
    for (int il = 0; il < nq; il++) {
        /* W5.3 The other micro-kernels */
        if (att_tune.prefetch && il + 2 < nq) {
            long i2 = q0 + il + 2;
            att_prefetch_read(J->q + ((b * n + i2) * H + g * J->rep + h0) * d,
                              (size_t)nh * d);
            if (p->freqs_cos) {
                long pos2 = p->start_pos + p->kv_len - n + i2;
                att_prefetch_read(p->freqs_cos + pos2 * d, (size_t)d);
                att_prefetch_read(p->freqs_sin + pos2 * d, (size_t)d);
            }
        }
        /* W5.6 The driver's remaining steps */
        for (int hl = 0; hl < nh; hl++) {
            long h = g * J->rep + h0 + hl, i = q0 + il;
            const float *x = J->q + ((b * n + i) * H + h) * d;
            float *dst = Q + (size_t)(hl * J->bq + il) * dp;
            memset(dst + d, 0, sizeof(float) * (dp - d));
            if (p->freqs_cos) {
                long pos = p->start_pos + p->kv_len - n + i;
                J->ker.rot(dst, x, p->freqs_cos + pos * d,
                           p->freqs_sin + pos * d, d, p->pairing);
            } else {
                memcpy(dst, x, sizeof(float) * d);
            }
            att_scale_q(dst, J->qscale, d);
        }
    }
}
/* 5.8 The driver, threads and load balance */
static void att_tile_block(att_job *J, att_ws *w, int kb, int q0,
                           int nq, int t)
{
    int M = J->M, dp = J->dp;
    long j0 = (long)t * ATT_BK, hi = att_last_key(J, q0 + nq - 1);
    int kind = att_tile_kind(J, q0, nq, t);
    size_t at = (size_t)kb * M;
    const int *nv = NULL;
    if (kind == ATT_TILE_SKIPPED) return;
    if (kind == ATT_TILE_PARTIAL) {
        for (int r = 0; r < M; r++) {
            int il = r % J->bq;
            long L = il < nq ? att_last_key(J, q0 + il) : hi;
            long c = L - j0 + 1;
            w->nvalid[r] = (int)(c < 0 ? 0 : c > ATT_BK ? ATT_BK : c);
        }
        nv = w->nvalid;
    }
    if (J->bf16) { att_tile_block_bf16(J, w, at, nv); return; }
    if (J->ker.st) {
        J->ker.st(w->S, w->Q + at * dp, w->kt, w->vt, w->U + at * dp, M,
                  dp, nv, w->m + at, w->l + at, w->alpha);
        return;
    }
    J->ker.s(w->S, w->Q + at * dp, w->kt, M, dp);
    J->ker.sm(w->S, M, nv, w->m + at, w->l + at, w->alpha);
    J->ker.pv(w->U + at * dp, w->S, w->vt, w->alpha, M, dp);
}
static void att_run_tiles(att_job *J, att_ws *w, long bg, int q0,
                          int nb, int t0, int t1)
{
    int M = J->M, dp = J->dp, n = J->p->seq_len, bq = J->bq;
    int q1 = q0 + nb * bq < n ? q0 + nb * bq : n; /* past the end */
    long hi = att_last_key(J, q1 - 1);
    memset(w->U, 0, sizeof(float) * nb * M * dp);
    for (int r = 0; r < nb * M; r++) { w->m[r] = -INFINITY; w->l[r] = 0; }
    if (J->bf16) att_round_q_bf16(J, w, nb);
    for (int t = t0; t < t1 && (long)t * ATT_BK <= hi; t++) {
        if (J->cache) {
            att_cache_tile(J->cache, t, bg, &w->kt, &w->vt);
        } else {
            att_pack_tile(J, w, bg, t, w->Kt, w->Vt);
            w->kt = w->Kt; w->vt = w->Vt;
        }
        if (J->bf16) att_pack_tile_bf16(J, w);
        for (int kb = 0; kb < nb; kb++) {
            int qk = q0 + kb * bq;
            att_tile_block(J, w, kb, qk, q1 - qk < bq ? q1 - qk : bq, t);
        }
    }
}
static float att_lse(float m, float l)
{
    return (float)(((double)m + log2((double)l)) * 0.6931471805599453);
}
/* W5.6 The driver's remaining steps */
static ATT_VECTORIZE int att_scale_row(float *restrict o,
                                       const float *restrict u,
                                       float inv, int d)
{
    int bad = 0;
    for (int c = 0; c < d; c++) {
        o[c] = u[c] * inv;
        bad |= !(fabsf(o[c]) < INFINITY);
    }
    return bad;
}
static void att_store(att_job *J, att_ws *w, int kb, long bg, int h0,
                      int q0, int nq)
{
    const rope_attention_params *p = J->p;
    int d = J->d, H = p->n_heads, n = p->seq_len, bad = 0;
    long b = bg / p->n_kv_heads, g = bg % p->n_kv_heads;
    size_t at = (size_t)kb * J->M;
    int nh = att_heads_in(J, h0);
    for (int il = 0; il < nq; il++) {
        /* W5.3 The other micro-kernels */
        if (att_tune.prefetch && il + 2 < nq)
            att_prefetch_write(J->out + ((b * n + q0 + il + 2) * H + g * J->rep
                                         + h0) * d, (size_t)nh * d);
        /* W5.6 The driver's remaining steps */
        for (int hl = 0; hl < nh; hl++) {
            size_t r = at + (size_t)(hl * J->bq + il);
            long h = g * J->rep + h0 + hl;
            float *o = J->out + ((b * n + q0 + il) * H + h) * d;
            const float *u = w->U + r * J->dp;
            bad |= att_scale_row(o, u, 1.0f / w->l[r], d);
            bad |= !(fabsf(w->m[r]) < INFINITY && w->l[r] > 0
                     && w->l[r] < INFINITY);
            if (p->lse)
                p->lse[(b * n + q0 + il) * H + h] =
                    att_lse(w->m[r], w->l[r]);
        }
    }
    if (bad) atomic_store(&J->bad, 1);
}
/* 5.8 The driver, threads and load balance */
static void att_store_partial(att_job *J, att_ws *w, long it);
/* W5.7 The packing pass */
static void att_run_pass(att_job *J, int pass, long n_items);
static size_t att_pack_floats(const att_job *J)
{
    const rope_attention_params *p = J->p;
    size_t cap = ROPE_ATTENTION_PACK_MIB * ATT_MIB / sizeof(float);
    size_t tile2 = (size_t)2 * J->dp * ATT_BK; /* K^T and V */
    size_t heads = (size_t)p->batch * (size_t)p->n_kv_heads;
    if (J->cache || J->nsplit > 1 || !att_tune.pack) return 0;
    if ((long)J->nhb * J->nib < 2) return 0; /* one item per tile */
    if (heads > cap / tile2 / (size_t)J->ntk) return 0;
    return heads * (size_t)J->ntk * tile2;
}
static float *att_pack_get(const att_job *J, size_t n)
{
    att_ws *w = att_ws_get(J);
    if (!w) return NULL;
    if (w->pack_n < n) {
        free(w->pack);
        w->pack = att_alloc(sizeof(float) * n);
        w->pack_n = w->pack ? n : 0;
        w->pack_d = 0;
    }
    if (w->pack && w->pack_d != J->d) {
        memset(w->pack, 0, sizeof(float) * w->pack_n);
        w->pack_d = J->d;
    }
    return w->pack;
}
static void att_pack_item(att_job *J, att_ws *w, long it)
{
    long per = (long)J->p->batch * J->p->n_kv_heads;
    float *kt = J->packed.tiles + (size_t)it * 2 * J->dp * ATT_BK;
    att_pack_tile(J, w, it % per, (int)(it / per), kt,
                  kt + (size_t)J->dp * ATT_BK);
}
static void att_prepack(att_job *J)
{
    const rope_attention_params *p = J->p;
    size_t n = att_pack_floats(J);
    float *t = n ? att_pack_get(J, n) : NULL;
    if (!t) return; /* the items pack their own tiles */
    J->packed = (rope_kv_cache){.batch = p->batch,
                                .n_kv_heads = p->n_kv_heads,
                                .head_dim = J->d, .dp = J->dp,
                                .len = p->kv_len,
                                .cap = (long)J->ntk * ATT_BK,
                                .tiles = t};
    att_run_pass(J, 3, (long)J->ntk * p->batch * p->n_kv_heads);
    J->cache = &J->packed;
}
/* W5.6 The driver's remaining steps */
static void att_do_item(att_job *J, att_ws *w, long it)
{
    const rope_attention_params *p = J->p;
    long per = (long)p->batch * p->n_kv_heads, units = per * J->nhb;
    if (J->pass == 3) {
        att_pack_item(J, w, it);
    } else if (J->pass == 1) {
        long u = it % units;
        int b0, b1, h0 = (int)(u / per) * J->hb;
        att_item_blocks(J, it, att_tune.ib, &b0, &b1);
        for (int kb = 0; kb < b1 - b0; kb++) {
            int q0 = (b0 + kb) * J->bq;
            int nq = p->seq_len - q0 < J->bq ? p->seq_len - q0 : J->bq;
            att_load_q(J, w, kb, u % per, h0, q0, nq);
        }
        att_run_tiles(J, w, u % per, b0 * J->bq, b1 - b0, 0, J->ntk);
        for (int kb = 0; kb < b1 - b0; kb++) {
            int q0 = (b0 + kb) * J->bq;
            int nq = p->seq_len - q0 < J->bq ? p->seq_len - q0 : J->bq;
            att_store(J, w, kb, u % per, h0, q0, nq);
        }
    } else {
        long u = it / J->nsplit;
        int t0 = (int)(it % J->nsplit) * J->tiles_per_split;
        int t1 = t0 + J->tiles_per_split;
        t1 = t1 < J->ntk ? t1 : J->ntk;
        att_load_q(J, w, 0, u % per, (int)(u / per) * J->hb, 0,
                   p->seq_len);
        att_run_tiles(J, w, u % per, 0, 1, t0, t1);
        att_store_partial(J, w, it);
    }
}
/* 5.8 The driver, threads and load balance */
static void *att_worker(void *arg)
{
    att_job *J = arg;
    const rope_attention_params *p = J->p;
    att_ws *w = att_ws_get(J);
    if (!w) {
        atomic_store(&J->fail, 1);
    } else {
        for (;;) {
            long it = atomic_fetch_add(&J->next, 1);
            if (it >= J->n_items || atomic_load(&J->fail)) break;
            att_do_item(J, w, it);
            long done = atomic_fetch_add(&J->done, 1) + 1;
            if (p->progress && J->pass != 3) /* not the packing */
                p->progress(p->progress_ctx, done, J->n_items);
        }
    }
    return NULL;
}
#define ATT_MAX_THREADS 256
/* W5.8 The thread pool */
#define ATT_SPIN_NS ROPE_ATTENTION_SPIN_NS
static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t go, idle;
    pthread_t th[ATT_MAX_THREADS];
    int id[ATT_MAX_THREADS];
    int n, want, stop, sleepers; /* threads, in this pass, asleep */
    long spin_ns; /* the poster's ATT_SPIN_NS, or 0 */
    atomic_int running; /* not done with this pass */
    atomic_long gen;
    att_job *job;
} att_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
              .busy = PTHREAD_MUTEX_INITIALIZER,
              .go = PTHREAD_COND_INITIALIZER,
              .idle = PTHREAD_COND_INITIALIZER};
static double att_now(void); /* the clock of the peak measurements */
static void att_spin_pause(void)
{
#if ATT_X86
    _mm_pause();
#endif
}
static int att_gen_moved(long seen)
{
    return atomic_load(&att_pool.gen) != seen;
}
static int att_all_done(long unused)
{
    (void)unused;
    return atomic_load(&att_pool.running) == 0;
}
static int att_spin(int (*ready)(long), long arg, long ns)
{
    double end = att_now() + 1e-9 * (double)ns;
    for (int i = 1;; i++) {
        if (ready(arg)) return 1;
        att_spin_pause();
        if (i % 64 == 0 && att_now() > end) return 0;
    }
}
static void *att_pool_main(void *arg)
{
    int id = *(const int *)arg;
    long seen = 0, spin = 0;
    for (;;) {
        if (spin > 0) att_spin(att_gen_moved, seen, spin);
        pthread_mutex_lock(&att_pool.mu);
        while (!att_pool.stop && atomic_load(&att_pool.gen) == seen) {
            att_pool.sleepers++;
            pthread_cond_wait(&att_pool.go, &att_pool.mu);
            att_pool.sleepers--;
        }
        if (att_pool.stop) break;
        seen = atomic_load(&att_pool.gen);
        spin = att_pool.spin_ns;
        if (id >= att_pool.want) {
            pthread_mutex_unlock(&att_pool.mu);
            continue;
        }
        att_job *J = att_pool.job;
        pthread_mutex_unlock(&att_pool.mu);
        att_worker(J);
        pthread_mutex_lock(&att_pool.mu);
        if (atomic_fetch_sub(&att_pool.running, 1) == 1)
            pthread_cond_signal(&att_pool.idle);
        pthread_mutex_unlock(&att_pool.mu);
    }
    pthread_mutex_unlock(&att_pool.mu);
    return NULL;
}
static void att_pool_stop(void)
{
    pthread_mutex_lock(&att_pool.mu);
    att_pool.stop = 1;
    atomic_fetch_add(&att_pool.gen, 1); /* ends the spins */
    pthread_cond_broadcast(&att_pool.go);
    pthread_mutex_unlock(&att_pool.mu);
    for (int i = 0; i < att_pool.n; i++) pthread_join(att_pool.th[i], NULL);
    att_pool.n = 0;
    att_ws *w = att_ws_key_ok ? pthread_getspecific(att_ws_key) : NULL;
    if (w) {
        att_ws_destroy(w);
        pthread_setspecific(att_ws_key, NULL);
    }
}
static void att_pool_child(void)
{
    pthread_mutex_init(&att_pool.mu, NULL);
    pthread_mutex_init(&att_pool.busy, NULL);
    pthread_cond_init(&att_pool.go, NULL);
    pthread_cond_init(&att_pool.idle, NULL);
    att_pool.n = att_pool.want = att_pool.sleepers = 0;
    atomic_store(&att_pool.running, 0);
}
static void att_pool_setup(void)
{
    att_ws_key_ok = !pthread_key_create(&att_ws_key, att_ws_destroy);
    atexit(att_pool_stop);
    pthread_atfork(NULL, NULL, att_pool_child);
}
static int att_pool_post(att_job *J, int h)
{
    if (h < 1) return 0;
    pthread_once(&att_pool_once, att_pool_setup);
    if (pthread_mutex_trylock(&att_pool.busy)) return 0;
    pthread_mutex_lock(&att_pool.mu);
    if (att_pool.stop) {
        pthread_mutex_unlock(&att_pool.mu);
        pthread_mutex_unlock(&att_pool.busy);
        return 0;
    }
    if (h > ATT_MAX_THREADS - 1) h = ATT_MAX_THREADS - 1;
    while (att_pool.n < h) {
        int i = att_pool.n;
        att_pool.id[i] = i;
        if (pthread_create(&att_pool.th[i], NULL, att_pool_main,
                           &att_pool.id[i])) break;
        att_pool.n++;
    }
    att_pool.job = J;
    att_pool.spin_ns = att_tune.spin ? ATT_SPIN_NS : 0;
    att_pool.want = h < att_pool.n ? h : att_pool.n;
    atomic_store(&att_pool.running, att_pool.want);
    atomic_fetch_add(&att_pool.gen, 1);
    if (att_pool.sleepers > 0) pthread_cond_broadcast(&att_pool.go);
    pthread_mutex_unlock(&att_pool.mu);
    return 1;
}
static void att_pool_wait(int posted)
{
    if (!posted) return;
    if (att_pool.spin_ns > 0) att_spin(att_all_done, 0, att_pool.spin_ns);
    pthread_mutex_lock(&att_pool.mu);
    while (atomic_load(&att_pool.running) > 0)
        pthread_cond_wait(&att_pool.idle, &att_pool.mu);
    pthread_mutex_unlock(&att_pool.mu);
    pthread_mutex_unlock(&att_pool.busy);
}
/* 5.8 The driver, threads and load balance */
static void att_run_pass(att_job *J, int pass, long n_items)
{
    int nt = J->nt;
    J->pass = pass;
    J->n_items = n_items;
    atomic_store(&J->next, 0);
    atomic_store(&J->done, 0);
    if (nt > n_items) nt = n_items > 0 ? (int)n_items : 1;
    int posted = att_pool_post(J, nt - 1);
    att_worker(J);
    att_pool_wait(posted);
}
/* 5.9 Decoding with split keys */
static int att_merge_row(att_job *J, const float *ps, float *o,
                         float *lse)
{
    size_t stride = (size_t)J->dp + 2, sstr = J->M * stride;
    float mx = -INFINITY, L = 0;
    int bad = 0;
    for (int s = 0; s < J->nsplit; s++)
        mx = ps[s * sstr] > mx ? ps[s * sstr] : mx;
    for (int c = 0; c < J->d; c++) o[c] = 0;
    for (int s = 0; s < J->nsplit; s++) {
        const float *st = ps + s * sstr;
        if (st[0] == -INFINITY) continue;
        float wgt = exp2f(st[0] - mx);
        L += wgt * st[1];
        for (int c = 0; c < J->d; c++) o[c] += wgt * st[2 + c];
    }
    for (int c = 0; c < J->d; c++) {
        o[c] /= L;
        bad |= !isfinite(o[c]);
    }
    float lam = att_lse(mx, L);
    if (lse) *lse = lam;
    return bad | !isfinite(lam);
}
/* W5.6 The driver's remaining steps */
static void att_store_partial(att_job *J, att_ws *w, long it)
{
    size_t stride = (size_t)J->dp + 2;
    float *dst = J->part + (size_t)it * J->M * stride;
    for (int r = 0; r < J->M; r++, dst += stride) {
        dst[0] = w->m[r];
        dst[1] = w->l[r];
        memcpy(dst + 2, w->U + (size_t)r * J->dp,
               sizeof(float) * J->dp);
    }
}
static void att_merge(att_job *J)
{
    const rope_attention_params *p = J->p;
    int n = p->seq_len, H = p->n_heads, Hk = p->n_kv_heads, bad = 0;
    long per = (long)p->batch * Hk;
    size_t stride = (size_t)J->dp + 2;
    for (long u = 0; u < per * J->nhb; u++) {
        long bg = u % per, h0 = (u / per) * J->hb;
        for (int hl = 0; hl < att_heads_in(J, (int)h0); hl++)
            for (int i = 0; i < n; i++) {
                long b = bg / Hk, h = (bg % Hk) * J->rep + h0 + hl;
                const float *ps = J->part + ((size_t)u * J->nsplit
                    * J->M + (size_t)hl * J->bq + i) * stride;
                float *lse = p->lse ? p->lse + (b * n + i) * H + h
                                    : NULL;
                bad |= att_merge_row(J, ps, J->out + ((b * n + i) * H
                                                      + h) * J->d, lse);
            }
    }
    if (bad) atomic_store(&J->bad, 1);
}
/* 5.10 Putting it together */
static void att_plan(att_job *J, const rope_attention_params *p);

static int att_call(float *out, const float *q, const float *k,
                    const float *v, const rope_kv_cache *c,
                    const rope_attention_params *p)
{
    int e = att_check(p);
    if (e) return e;
    att_job J;
    memset(&J, 0, sizeof J);
    J.q = q; J.k = k; J.v = v; J.out = out; J.cache = c;
    att_plan(&J, p);
    long units = (long)p->batch * p->n_kv_heads * J.nhb;
    if (J.nsplit > 1) {
        J.part = att_part_get(&J, (size_t)units * J.nsplit * J.M
                                      * (J.dp + 2));
        if (J.part) {
            att_run_pass(&J, 2, units * J.nsplit);
            if (!atomic_load(&J.fail)) att_merge(&J);
        } else {
            atomic_store(&J.fail, 1);
        }
    } else {
        att_prepack(&J); /* pack every tile once, if that pays */
        att_run_pass(&J, 1, units * J.nib);
    }
    if (atomic_load(&J.fail)) return ROPE_ATTENTION_ENOMEM;
    return atomic_load(&J.bad) ? ROPE_ATTENTION_ENONFINITE : 0;
}

int rope_attention(float *out, const float *q, const float *k,
                   const float *v, const rope_attention_params *p)
{
    return att_call(out, q, k, v, NULL, p);
}
/* W5.6 The driver's remaining steps */
static void att_plan(att_job *J, const rope_attention_params *p)
{
    att_plan_shape(J, p, att_tune.ib);
    J->qscale = (float)(1.4426950408889634 / sqrt((double)J->d));
    J->ker = att_pick(rope_simd_resolve(p->simd));
    att_plan_bf16(J, p);
    /* 5.10 Putting it together */
    size_t fits = ROPE_ATTENTION_WS_MIB * ATT_MIB
                  / (att_ws_floats(J) * sizeof(float));
    J->nt = p->n_threads < 1 ? 1 : p->n_threads;
    if (J->nt > ATT_MAX_THREADS) J->nt = ATT_MAX_THREADS;
    if ((size_t)J->nt > fits) J->nt = fits > 0 ? (int)fits : 1;
/* W5.6 The driver's remaining steps */
}
/* 5.11 A cache of rotated keys */
int rope_attention_cached(float *out, const float *q,
                          const rope_kv_cache *c,
                          const rope_attention_params *p)
{
    rope_attention_params pc = *p;
    if (!c || !c->tiles || c->len < 1 || c->len > INT_MAX) return 1;
    if (c->batch != p->batch || c->n_kv_heads != p->n_kv_heads
        || c->head_dim != p->head_dim) return 1;
    pc.kv_len = (int)c->len;
    pc.keys_rotated = 1;
    return att_call(out, q, NULL, NULL, c, &pc);
}
/* W5.5 The workspace of a call */
size_t rope_attention_workspace_bytes(const rope_attention_params *p)
{
    if (att_check(p)) return 0;
    att_job J;
    memset(&J, 0, sizeof J);
    att_plan(&J, p);
    long units = (long)p->batch * p->n_kv_heads * J.nhb;
    long items = J.nsplit > 1 ? units * J.nsplit : units * J.nib;
    size_t nt = (size_t)(J.nt < items ? J.nt : items);
    size_t fl = nt * att_ws_floats(&J) + att_pack_floats(&J);
    if (J.nsplit > 1)
        fl += (size_t)units * J.nsplit * J.M * ((size_t)J.dp + 2);
    return fl * sizeof(float);
}
/* W5.9 The key/value cache */
static int att_cache_grow(rope_kv_cache *c, long need)
{
    if (need <= c->cap) return 0;
    long cap = c->cap * 2 > need ? c->cap * 2 : need;
    cap = (cap + ATT_BK - 1) / ATT_BK * ATT_BK;
    size_t per = (size_t)c->batch * c->n_kv_heads * 2 * c->dp * ATT_BK;
    size_t old = (size_t)(c->cap / ATT_BK) * per;
    size_t all = (size_t)(cap / ATT_BK) * per;
    float *t = att_alloc(sizeof(float) * all);
    if (!t) return ROPE_ATTENTION_ENOMEM;
    if (old) memcpy(t, c->tiles, sizeof(float) * old);
    memset(t + old, 0, sizeof(float) * (all - old));
    free(c->tiles);
    c->tiles = t;
    c->cap = cap;
    return 0;
}
int rope_kv_cache_init(rope_kv_cache *c, int batch, int n_kv_heads,
                       int head_dim, long capacity)
{
    memset(c, 0, sizeof *c);
    if (batch < 1 || n_kv_heads < 1 || head_dim < 1 || capacity < 0
        || head_dim > ROPE_ATTENTION_MAX_HEAD_DIM) return 1;
    c->batch = batch;
    c->n_kv_heads = n_kv_heads;
    c->head_dim = head_dim;
    c->dp = (head_dim + 15) / 16 * 16;
    return att_cache_grow(c, capacity > 0 ? capacity : 1);
}
void rope_kv_cache_free(rope_kv_cache *c)
{
    free(c->tiles);
    c->tiles = NULL;
    c->len = c->cap = 0;
}
int rope_kv_cache_append(rope_kv_cache *c, const float *k,
                         const float *v, int n,
                         const rope_attention_params *p)
{
    int d = c->head_dim, dp = c->dp, Hk = c->n_kv_heads;
    if (n < 1 || !c->tiles || c->batch != p->batch
        || Hk != p->n_kv_heads || d != p->head_dim) return 1;
    if (p->start_pos < 0) return 4;
    if (p->freqs_cos && (!p->freqs_sin || d % 2)) return 5;
    if (p->freqs_cos && p->table_len < p->start_pos + c->len + n)
        return 6;
    int e = att_cache_grow(c, c->len + n);
    if (e) return e;
    att_kernels ker = att_pick(rope_simd_resolve(p->simd));
    _Alignas(64) float tmp[ROPE_ATTENTION_MAX_HEAD_DIM];
    for (long b = 0; b < c->batch; b++)
        for (int jj = 0; jj < n; jj++)
            for (int g = 0; g < Hk; g++) {
                long j = c->len + jj, col = j % ATT_BK;
                size_t off = (((size_t)b * n + jj) * Hk + g) * d;
                const float *kr = k + off;
                const float *kt, *vt;
                if (p->freqs_cos) {
                    long pos = p->start_pos + j;
                    ker.rot(tmp, kr, p->freqs_cos + pos * d, p->freqs_sin + pos * d,
                            d, p->pairing);
                    kr = tmp;
                }
                att_cache_tile(c, (int)(j / ATT_BK), b * Hk + g, &kt, &vt);
                float *K = (float *)kt, *V = (float *)vt; /* the cache's own array */
                for (int i = 0; i < d; i++) K[(size_t)i * ATT_BK + col] = kr[i];
                memcpy(V + (size_t)col * dp, v + off, sizeof(float) * d);
            }
    c->len += n;
    return 0;
}
/* W5c.1 Measuring the machine */
static double att_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
