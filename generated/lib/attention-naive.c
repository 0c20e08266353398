/* W5.2 The reference's code */
/* attention-naive.c: the reference attention that the tests hold the
   kernel to: literal, in double precision, O(n n_kv) memory */
#define _POSIX_C_SOURCE 200809L
#include "attention-kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
/* rotate x [1, len, heads, d] in place from table row pos0 */
static int att_rotate_tensor(float *x, int len, int heads, int d,
                             long pos0, const rope_attention_params *p)
{
    size_t bytes = sizeof(float) * (size_t)len * heads * d;
    float *twin = malloc(bytes);
    if (!twin) return ROPE_ATTENTION_ENOMEM;
    memcpy(twin, x, bytes);
    rope_apply_rotary_pos_emb(x, twin, p->freqs_cos, p->freqs_sin,
                              1, len, heads, heads, d, pos0,
                              p->pairing);
    free(twin);
    return 0;
}
int rope_attention_naive(float *out, const float *q, const float *k,
                         const float *v,
                         const rope_attention_params *p)
{
    int e = att_check(p);
    if (e) return e;
    /* W5b.2 The code of the bfloat16 path */
    float *v16 = NULL;
    if (p->kv_dtype == ROPE_DTYPE_BF16) {
        size_t vn = (size_t)p->batch * p->kv_len * p->n_kv_heads
                    * p->head_dim;
        if (!(v16 = malloc(sizeof(float) * vn))) return ROPE_ATTENTION_ENOMEM;
        for (size_t i = 0; i < vn; i++)
            v16[i] = rope_bf16_to_float(rope_bf16_round(v[i]));
        v = v16;
    }
    /* W5.2 The reference's code */
    int n = p->seq_len, nk = p->kv_len, H = p->n_heads;
    int Hk = p->n_kv_heads, d = p->head_dim, rep = H / Hk;
    size_t qn = (size_t)n * H * d, kn = (size_t)nk * Hk * d;
    float *qr = malloc(sizeof(float) * qn);
    float *kr = malloc(sizeof(float) * kn);
    double *sc = malloc(sizeof(double) * (size_t)n * nk);
    double *acc = malloc(sizeof(double) * d);
    int bad = 0; /* an output or lse that is not finite */
    if (!qr || !kr || !sc || !acc) e = ROPE_ATTENTION_ENOMEM;
    for (int b = 0; !e && b < p->batch; b++) {
        memcpy(qr, q + (size_t)b * qn, sizeof(float) * qn);
        memcpy(kr, k + (size_t)b * kn, sizeof(float) * kn);
        if (p->freqs_cos) {
            if (!p->keys_rotated)
                e = att_rotate_tensor(kr, nk, Hk, d, p->start_pos, p);
            if (!e)
                e = att_rotate_tensor(qr, n, H, d,
                                      p->start_pos + nk - n, p);
            if (e) break;
        }
        /* W5b.2 The code of the bfloat16 path */
        if (p->kv_dtype == ROPE_DTYPE_BF16) {
            for (size_t i = 0; i < qn; i++)
                qr[i] = rope_bf16_to_float(rope_bf16_round(qr[i]));
            for (size_t i = 0; i < kn; i++)
                kr[i] = rope_bf16_to_float(rope_bf16_round(kr[i]));
        }
        /* W5.2 The reference's code */
        for (int h = 0; h < H; h++) {
            int g = h / rep;
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= (p->causal ? nk - n + i : nk - 1); j++) {
                    const float *qi = qr + ((size_t)i * H + h) * d;
                    const float *kj = kr + ((size_t)j * Hk + g) * d;
                    double s = 0;
                    for (int t = 0; t < d; t++) s += (double)qi[t] * kj[t];
                    sc[(size_t)i * nk + j] = s / sqrt((double)d);
                }
            for (int i = 0; i < n; i++) {
                const double *row = sc + (size_t)i * nk;
                int last = p->causal ? nk - n + i : nk - 1;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= last; j++) mx = row[j] > mx ? row[j] : mx;
                for (int t = 0; t < d; t++) acc[t] = 0;
                for (int j = 0; j <= last; j++) {
                    double w = exp(row[j] - mx);
                    const float *vj = v + (((size_t)b * nk + j) * Hk + g) * d;
                    sum += w;
                    for (int t = 0; t < d; t++) acc[t] += w * vj[t];
                }
                float *o = out + (((size_t)b * n + i) * H + h) * d;
                for (int t = 0; t < d; t++) o[t] = (float)(acc[t] / sum);
                for (int t = 0; t < d; t++) bad |= !isfinite(o[t]);
                float lse = (float)(mx + log(sum));
                bad |= !isfinite(lse);
                if (p->lse) p->lse[((size_t)b * n + i) * H + h] = lse;
            }
        }
    }
    free(qr); free(kr); free(sc); free(acc); free(v16);
    return e ? e : bad ? ROPE_ATTENTION_ENONFINITE : 0;
}
