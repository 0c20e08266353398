/* W4.1 The scaling interface in detail */
/* scaling.h: RoPE scaling for long context (chapter 4) */
#ifndef ROPE_SCALING_H
#define ROPE_SCALING_H
#include "rotary.h"
typedef enum {
    ROPE_SCALING_DEFAULT, /* "default": plain RoPE */
    ROPE_SCALING_LINEAR, /* "linear": position interpolation */
    ROPE_SCALING_DYNAMIC, /* "dynamic": dynamic NTK */
    ROPE_SCALING_YARN, /* "yarn": NTK-by-parts + temperature */
    ROPE_SCALING_LLAMA3, /* "llama3": wavelength bands */
    ROPE_SCALING_LONGROPE /* "longrope": per-pair factors */
} rope_scaling_type;

typedef enum {
    ROPE_YARN_HF, /* Hugging Face _compute_yarn_parameters */
    ROPE_YARN_MINIMIND /* MiniMind precompute_freqs_cis */
} rope_yarn_flavor;
typedef struct rope_scaling {
    rope_scaling_type rope_type;
    rope_yarn_flavor yarn_flavor;
    double factor; /* s */
    long original_max_position_embeddings; /* L, original length */
    long max_position_embeddings; /* L', extended length */
    long seq_len; /* N, current length */
    double beta_fast, beta_slow; /* YaRN turn counts */
    double attention_factor; /* multiplies cos, sin */
    double mscale, mscale_all_dim; /* DeepSeek-style YaRN */
    int truncate; /* 1: floor/ceil range */
    double low_freq_factor, high_freq_factor; /* llama3 */
    const double *short_factor, *long_factor; /* longrope */
    int n_short_factor, n_long_factor;
} rope_scaling;
typedef enum {
    ROPE_SCALING_OK, ROPE_SCALING_EHEAD_DIM,
    ROPE_SCALING_EFACTOR, ROPE_SCALING_ENOFACTOR,
    ROPE_SCALING_ENOORIGINAL, ROPE_SCALING_ENOLENGTH,
    ROPE_SCALING_EBETA, ROPE_SCALING_EFREQ,
    ROPE_SCALING_ELIST, ROPE_SCALING_EATTENTION,
    ROPE_SCALING_ETYPE
} rope_scaling_error;
/* 4.2 The scaling interface */
void rope_scaling_defaults(rope_scaling *s);
int rope_compute_inv_freq(float *inv_freq, double *attention_factor,
                          int head_dim, double rope_base,
                          const rope_scaling *s);
int rope_precompute_freqs_cis_scaled(float *freqs_cos, float *freqs_sin,
                                     int head_dim, long end,
                                     double rope_base,
                                     const rope_scaling *s,
                                     rope_precision precision);
int rope_count_full_turns(const float *inv_freq, int head_dim,
                          long length);
double rope_ntk_aware_base(double rope_base, double factor,
                           int head_dim);
double rope_dynamic_factor(double factor, long seq_len,
                           long original);
double rope_yarn_correction_dim(double num_rotations, int head_dim,
                                double rope_base, long original);
int rope_yarn_range(double *low, double *high, int head_dim,
                    double rope_base, const rope_scaling *s);
int rope_yarn_ramp(float *ramp, int head_dim, double rope_base,
                   const rope_scaling *s);
double rope_yarn_get_mscale(double scale, double mscale);
double rope_yarn_clamp_threshold(int head_dim, double rope_base,
                                 double beta_slow);
/* W4.1 The scaling interface in detail */
int rope_scaling_check(const rope_scaling *s, int head_dim);
const char *rope_scaling_strerror(int err);
#endif
