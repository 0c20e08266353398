/* W3.1 The interface in detail */
/* rotary.h: rotary position embeddings (chapter 3) */
#ifndef ROPE_ROTARY_H
#define ROPE_ROTARY_H
/* 3.5 The interface */
/* chapter 3: rotary position embeddings */
typedef enum {
    ROPE_PAIRING_HALF, ROPE_PAIRING_INTERLEAVED
} rope_pairing;
typedef enum {
    ROPE_PRECISION_FLOAT, ROPE_PRECISION_DOUBLE
} rope_precision;
/* positions t < 2^24 are exact in float32; tables stop there */
#define ROPE_MAX_POSITION 16777216L
/* chapter 3: rotary position embeddings */
void rope_default_inv_freq(float *inv_freq, int head_dim,
                           double rope_base);
int rope_freqs_cis_from_inv_freq(float *freqs_cos, float *freqs_sin,
        const float *inv_freq, int head_dim, long start, long end,
        double attention_factor, rope_precision precision);
int rope_precompute_freqs_cis(float *freqs_cos, float *freqs_sin,
        int head_dim, long end, double rope_base,
        rope_precision precision);
void rope_rotate_half(const float *x, float *out, int head_dim);
void rope_apply_rotary_pos_emb(float *q, float *k,
        const float *freqs_cos, const float *freqs_sin,
        int batch, int seq_len, int n_heads, int n_kv_heads,
        int head_dim, long start_pos, rope_pairing pairing);
void rope_pairing_permutation(int *perm, int head_dim);
/* 3.10 Long-term decay */
double rope_decay_average(int head_dim, double rope_base, double r);
/* W3.1 The interface in detail */
double rope_angle(long t, float inv_freq, rope_precision precision);
#endif
