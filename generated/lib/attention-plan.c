/* W5.6.1 The shape of a job, in a file of its own */
/* attention-plan.c: the plan of a call of the attention kernel (its
   row blocks, key tiles and work items) and the class of each tile:
   no threads, no vector instructions (the HTML edition compiles it
   to WebAssembly). */
#include "attention-kernels.h"

/* 5.8 The driver, threads and load balance */
long att_last_key(const att_job *J, long i)
{
    const rope_attention_params *p = J->p;
    return p->causal ? (long)p->kv_len - p->seq_len + i
                     : (long)p->kv_len - 1;
}
/* W5.6.1 The shape of a job, in a file of its own */
int att_tile_kind(const att_job *J, long q0, int nq, int t)
{
    long j0 = (long)t * ATT_BK;
    if (j0 > att_last_key(J, q0 + nq - 1)) return ATT_TILE_SKIPPED;
    if (j0 + ATT_BK - 1 <= att_last_key(J, q0)) return ATT_TILE_FULL;
    return ATT_TILE_PARTIAL;
}
void att_item_blocks(const att_job *J, long it, int ib, int *b0, int *b1)
{
    long units = (long)J->p->batch * J->p->n_kv_heads * J->nhb;
    *b1 = J->nqb - (int)(it / units) * ib;
    *b0 = *b1 > ib ? *b1 - ib : 0;
}
void att_plan_shape(att_job *J, const rope_attention_params *p, int ib)
{
    J->p = p;
    J->d = p->head_dim;
    J->dp = (p->head_dim + 15) / 16 * 16;
    J->rep = p->n_heads / p->n_kv_heads;
    J->hb = J->rep < ATT_ROWS ? J->rep : ATT_ROWS;
    J->nhb = (J->rep + J->hb - 1) / J->hb;
    J->ntk = (p->kv_len + ATT_BK - 1) / ATT_BK;
    J->bq = (ATT_ROWS + J->hb - 1) / J->hb;
    if (J->bq > p->seq_len) J->bq = p->seq_len;
    J->nqb = (p->seq_len + J->bq - 1) / J->bq;
    J->nib = (J->nqb + ib - 1) / ib;
    J->M = (J->hb * J->bq + 3) / 4 * 4;
    /* 5.9 Decoding with split keys */
    size_t units = (size_t)p->batch * p->n_kv_heads * J->nhb;
    size_t state = units * J->M * ((size_t)J->dp + 2) * sizeof(float);
    long fit = (long)(ROPE_ATTENTION_PART_MIB * ATT_MIB / state);
    J->tiles_per_split = (J->ntk + ATT_SPLIT_MAX - 1) / ATT_SPLIT_MAX;
    if (J->tiles_per_split < 4) J->tiles_per_split = 4;
    if (fit >= 2 && J->ntk > fit * J->tiles_per_split)
        J->tiles_per_split = (int)((J->ntk + fit - 1) / fit);
    J->nsplit = (J->ntk + J->tiles_per_split - 1) / J->tiles_per_split;
    if (fit < 2 || J->nqb > 1) J->nsplit = 0; /* a prefill */
/* W5.6.1 The shape of a job, in a file of its own */
}
