/* The HTML edition / Interactive figures / The glue */
/* rope-wasm.c: what the interactive figures of the HTML edition ask
   the library, compiled to WebAssembly for the pages and natively for
   their test. */
#include <math.h>
#include <string.h>
#include "sinusoidal.h"
#include "rotary.h"
#include "scaling.h"
#include "attention-kernels.h"
#include "rope-wasm.h"

/* The HTML edition / Interactive figures / Figure: a query and a key turned by RoPE */
static float rw_inv[RW_HALF];
static float rw_cos[RW_NPOS * RW_D], rw_sin[RW_NPOS * RW_D];
static float rw_q[RW_NPOS * RW_D], rw_k[RW_NPOS * RW_D];
static double rw_curve[2 * RW_NPOS - 1];

RW_EXPORT("rw_rope_score")
double rw_rope_score(int m, int n)
{
    double s = 0;
    if (m < 0 || n < 0 || m >= RW_NPOS || n >= RW_NPOS)
        return NAN;
    for (int j = 0; j < RW_D; j++)
        s += (double)rw_q[m * RW_D + j] * (double)rw_k[n * RW_D + j];
    return s;
}

RW_EXPORT("rw_rope_setup")
int rw_rope_setup(int base_exponent)
{
    double base = base_exponent == 4 ? 1e4 : base_exponent == 6 ? 1e6 : 0;
    if (base == 0)
        return 1;
    rope_default_inv_freq(rw_inv, RW_D, base);
    if (rope_precompute_freqs_cis(rw_cos, rw_sin, RW_D, RW_NPOS, base,
                                  ROPE_PRECISION_FLOAT) != 0)
        return 1;
    for (int t = 0; t < RW_NPOS; t++)
        for (int j = 0; j < RW_D; j++) {
            rw_q[t * RW_D + j] = j < RW_HALF ? 1.0f : 0.0f;
            rw_k[t * RW_D + j] = 1.0f;
        }
    /* one sequence of RW_NPOS tokens: row t is turned by position t */
    rope_apply_rotary_pos_emb(rw_q, rw_k, rw_cos, rw_sin, 1, RW_NPOS, 1, 1,
                              RW_D, 0, ROPE_PAIRING_HALF);
    for (int r = -(RW_NPOS - 1); r < RW_NPOS; r++)
        rw_curve[r + RW_NPOS - 1] = rw_rope_score(r < 0 ? -r : 0,
                                                  r > 0 ? r : 0);
    return 0;
}

RW_EXPORT("rw_rope_angle")
double rw_rope_angle(int t, int i)
{
    return rope_angle(t, rw_inv[i], ROPE_PRECISION_FLOAT);
}
RW_EXPORT("rw_rope_inv_freq") float *rw_rope_inv_freq(void) { return rw_inv; }
RW_EXPORT("rw_rope_q") float *rw_rope_q(void) { return rw_q; }
RW_EXPORT("rw_rope_k") float *rw_rope_k(void) { return rw_k; }
RW_EXPORT("rw_rope_curve") double *rw_rope_curve(void) { return rw_curve; }
/* The HTML edition / Interactive figures / Figure: the clock hands of the sinusoidal encoding */
static double rw_row[RW_PE_D];
RW_EXPORT("rw_clock")
int rw_clock(int t)
{
    return rope_pe_row(rw_row, t, RW_PE_D, 1e4);
}
RW_EXPORT("rw_clock_row") double *rw_clock_row(void) { return rw_row; }
RW_EXPORT("rw_clock_omega")
double rw_clock_omega(int i)
{
    return rope_pe_omega(i, RW_PE_D, 1e4);
}
/* The HTML edition / Interactive figures / Figure: the wavelengths of a scaling method */
static float rw_sc_inv[RW_HALF], rw_sc_omega[RW_HALF];
static double rw_sc_lambda[RW_HALF], rw_sc_chi[RW_HALF], rw_sc_af;
static int rw_sc_out[RW_HALF];

static int rw_scaling_inv(int method, int factor, int original, long N)
{
    rope_scaling s;
    const double base = 1e6;
    rope_scaling_defaults(&s);
    s.factor = factor;
    s.original_max_position_embeddings = original;
    rw_sc_af = 1.0;
    switch (method) {
    case RW_SC_NONE:
        rope_default_inv_freq(rw_sc_inv, RW_D, base);
        return 0;
    case RW_SC_NTK:
        rope_default_inv_freq(rw_sc_inv, RW_D,
                              rope_ntk_aware_base(base, factor, RW_D));
        return 0;
    case RW_SC_PI: s.rope_type = ROPE_SCALING_LINEAR; break;
    case RW_SC_DYNAMIC:
        s.rope_type = ROPE_SCALING_DYNAMIC;
        s.seq_len = N;
        break;
    case RW_SC_YARN_MM: case RW_SC_YARN_HF:
        s.rope_type = ROPE_SCALING_YARN;
        s.yarn_flavor = method == RW_SC_YARN_MM ? ROPE_YARN_MINIMIND
                                                : ROPE_YARN_HF;
        s.max_position_embeddings = N;
        break;
    case RW_SC_LLAMA3:
        s.rope_type = ROPE_SCALING_LLAMA3;
        s.low_freq_factor = 1;
        s.high_freq_factor = 4;
        break;
    default: return 1;
    }
    return rope_compute_inv_freq(rw_sc_inv, &rw_sc_af, RW_D, base, &s);
}

RW_EXPORT("rw_scaling")
int rw_scaling(int method, int factor, int original)
{
    long N = (long)factor * original;
    int out = 0, turned;
    if (factor < 1 || original < 1 || rw_scaling_inv(method, factor,
                                                     original, N) != 0)
        return -1;
    rope_default_inv_freq(rw_sc_omega, RW_D, 1e6);
    turned = rope_count_full_turns(rw_sc_omega, RW_D, RW_SC_LTR);
    for (int i = 0; i < RW_HALF; i++) {
        rw_sc_lambda[i] = 2.0 * ROPE_PE_PI / (double)rw_sc_inv[i];
        rw_sc_chi[i] = (double)(N - 1) * (double)rw_sc_inv[i]
                       / ((double)(RW_SC_LTR - 1) * (double)rw_sc_omega[i]);
        rw_sc_out[i] = i >= turned && rw_sc_chi[i] > 1.01;
        out += rw_sc_out[i];
    }
    return out;
}
RW_EXPORT("rw_scaling_inv_freq")
float *rw_scaling_inv_freq(void) { return rw_sc_inv; }
RW_EXPORT("rw_scaling_omega") float *rw_scaling_omega(void) { return rw_sc_omega; }
RW_EXPORT("rw_scaling_lambda")
double *rw_scaling_lambda(void) { return rw_sc_lambda; }
RW_EXPORT("rw_scaling_chi") double *rw_scaling_chi(void) { return rw_sc_chi; }
RW_EXPORT("rw_scaling_out") int *rw_scaling_out(void) { return rw_sc_out; }
RW_EXPORT("rw_scaling_attention_factor")
double rw_scaling_attention_factor(void) { return rw_sc_af; }
/* The HTML edition / Interactive figures / Figure: the tiles and the items of a call */
static int rw_shape[RW_SHAPE_N];
static unsigned char rw_class[(RW_AT_MAXN / 8) * (RW_AT_MAXN / ATT_BK)];
static int rw_items[RW_AT_MAXITEMS * RW_IT_N];

static int rw_block_rows(const att_job *J, int b)
{
    int q0 = b * J->bq, n = J->p->seq_len;
    return n - q0 < J->bq ? n - q0 : J->bq;
}
static int rw_simulate(const att_job *J, int threads)
{
    long units = (long)J->p->batch * J->p->n_kv_heads * J->nhb;
    long items = units * J->nib;
    int nt = threads < items ? threads : (int)items, busy[RW_AT_MAXTH];
    if (items > RW_AT_MAXITEMS)
        return 1;
    rw_shape[RW_UNITS] = (int)units; rw_shape[RW_ITEMS] = (int)items;
    rw_shape[RW_THREADS] = nt;
    for (int th = 0; th < nt; th++) busy[th] = 0;
    for (long it = 0; it < items; it++) {
        int *r = rw_items + it * RW_IT_N, b0, b1, cost = 0, th = 0;
        att_item_blocks(J, it, ATT_IB, &b0, &b1);
        for (int b = b0; b < b1; b++)
            for (int t = 0; t < J->ntk; t++)
                cost += att_tile_kind(J, (long)b * J->bq,
                                      rw_block_rows(J, b), t)
                        != ATT_TILE_SKIPPED;
        for (int k = 1; k < nt; k++)
            if (busy[k] < busy[th]) th = k;
        r[RW_IT_UNIT] = (int)(it % units); r[RW_IT_B0] = b0;
        r[RW_IT_B1] = b1; r[RW_IT_COST] = cost; r[RW_IT_THREAD] = th;
        r[RW_IT_START] = busy[th];
        busy[th] += cost;
        rw_shape[RW_WORK] += cost;
        if (busy[th] > rw_shape[RW_SPAN]) rw_shape[RW_SPAN] = busy[th];
    }
    return 0;
}

RW_EXPORT("rw_tiles")
int rw_tiles(int n, int rep, int causal, int threads)
{
    static rope_attention_params p;
    static att_job J;
    if (n < 1 || n > RW_AT_MAXN || rep < 1 || rep > 8 || threads < 1
        || threads > RW_AT_MAXTH)
        return 1;
    memset(&p, 0, sizeof p); /* no table, float32 keys */
    p.batch = 1; p.seq_len = p.kv_len = n;
    p.n_kv_heads = RW_AT_KV; p.n_heads = RW_AT_KV * rep;
    p.head_dim = RW_D; p.causal = causal != 0; p.n_threads = threads;
    memset(&J, 0, sizeof J);
    att_plan_shape(&J, &p, ATT_IB);
    if (J.nsplit > 1)
        return 1; /* a decode step: not drawn */
    memset(rw_shape, 0, sizeof rw_shape);
    rw_shape[RW_BQ] = J.bq; rw_shape[RW_NQB] = J.nqb;
    rw_shape[RW_NTK] = J.ntk; rw_shape[RW_NIB] = J.nib;
    for (int b = 0; b < J.nqb; b++)
        for (int t = 0; t < J.ntk; t++) {
            int c = att_tile_kind(&J, (long)b * J.bq, rw_block_rows(&J, b), t);
            rw_class[b * J.ntk + t] = (unsigned char)c;
            rw_shape[c == ATT_TILE_FULL ? RW_FULL
                     : c == ATT_TILE_PARTIAL ? RW_PARTIAL : RW_SKIPPED]++;
        }
    return rw_simulate(&J, threads);
}
RW_EXPORT("rw_tiles_shape") int *rw_tiles_shape(void) { return rw_shape; }
RW_EXPORT("rw_tiles_class") unsigned char *rw_tiles_class(void) { return rw_class; }
RW_EXPORT("rw_tiles_items") int *rw_tiles_items(void) { return rw_items; }
