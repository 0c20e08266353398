/* W4.1 The scaling interface in detail */
/* generated/lib/scaling.c: RoPE scaling for long contexts (chapter 4) */
#include "rotary.h"
#include "scaling.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROPE_PI 3.14159265358979323846

/* 4.5 Dynamic NTK */
static long dynamic_length(const rope_scaling *s)
{
    return s->max_position_embeddings > 0
               ? s->max_position_embeddings
               : s->original_max_position_embeddings;
}
/* 4.6.1 The correction range */
static int yarn_is_minimind(const rope_scaling *s)
{
    return s->yarn_flavor == ROPE_YARN_MINIMIND;
}

static long original_length(const rope_scaling *s)
{
    if (s->original_max_position_embeddings > 0)
        return s->original_max_position_embeddings;
    if (s->rope_type == ROPE_SCALING_YARN && yarn_is_minimind(s))
        return 2048;
    return s->max_position_embeddings;
}
static double yarn_factor(const rope_scaling *s)
{
    long L = original_length(s);
    long M = s->max_position_embeddings;
    if (s->factor > 0)
        return s->factor;
    if (yarn_is_minimind(s))
        return 16.0;
    return M > 0 && L > 0 ? (double)M / (double)L : 0.0;
}

static double yarn_beta_fast(const rope_scaling *s)
{
    return s->beta_fast != 0 ? s->beta_fast : 32.0;
}

static double yarn_beta_slow(const rope_scaling *s)
{
    return s->beta_slow != 0 ? s->beta_slow : 1.0;
}
/* 4.6.3 The attention temperature */
static double yarn_attention_factor(const rope_scaling *s)
{
    double f = yarn_factor(s);
    if (s->attention_factor > 0)
        return s->attention_factor;
    if (yarn_is_minimind(s))
        return 1.0;
    if (s->mscale != 0 && s->mscale_all_dim != 0)
        return rope_yarn_get_mscale(f, s->mscale)
               / rope_yarn_get_mscale(f, s->mscale_all_dim);
    return rope_yarn_get_mscale(f, 1.0);
}
/* 4.8 LongRoPE: one factor per pair */
static double longrope_attention_factor(const rope_scaling *s)
{
    double L = (double)original_length(s);
    double f = s->factor > 0
                   ? s->factor
                   : (double)s->max_position_embeddings / L;
    if (s->attention_factor > 0)
        return s->attention_factor;
    return f <= 1.0 ? 1.0 : sqrt(1 + log(f) / log(L));
}
/* 4.1 Why RoPE does not extrapolate */
/* number of pairs whose wavelength 2*pi/inv_freq[i] is <= length */
int rope_count_full_turns(const float *inv_freq, int head_dim,
                          long length)
{
    int n = 0;
    for (int i = 0; i < head_dim / 2; i++)
        if (2.0 * ROPE_PI / (double)inv_freq[i] <= (double)length)
            n++;
    return n;
}
/* 4.4 NTK-aware scaling */
double rope_ntk_aware_base(double rope_base, double factor,
                           int head_dim)
{
    return rope_base
           * pow(factor, (double)head_dim / (double)(head_dim - 2));
}
/* 4.5 Dynamic NTK */
double rope_dynamic_factor(double factor, long seq_len, long original)
{
    double n = seq_len > original ? (double)seq_len : (double)original;
    return factor * n / (double)original - (factor - 1);
}
/* 4.6.1 The correction range */
double rope_yarn_correction_dim(double num_rotations, int head_dim,
                                double rope_base, long original)
{
    return (head_dim * log((double)original
                           / (num_rotations * 2 * ROPE_PI)))
           / (2 * log(rope_base));
}
int rope_yarn_range(double *low, double *high, int head_dim,
                    double rope_base, const rope_scaling *s)
{
    long L = original_length(s);
    double lo = rope_yarn_correction_dim(yarn_beta_fast(s), head_dim,
                                         rope_base, L);
    double hi = rope_yarn_correction_dim(yarn_beta_slow(s), head_dim,
                                         rope_base, L);
    if (s->yarn_flavor == ROPE_YARN_MINIMIND) {
        lo = fmax(floor(lo), 0);
        hi = fmin(ceil(hi), head_dim / 2 - 1);
    } else {
        if (s->truncate) {
            lo = floor(lo);
            hi = ceil(hi);
        }
        lo = fmax(lo, 0);
        hi = fmin(hi, head_dim - 1);
    }
    *low = lo;
    *high = hi;
    return ROPE_SCALING_OK;
}
/* 4.6.2 The ramp and the blend */
int rope_yarn_ramp(float *ramp, int head_dim, double rope_base,
                   const rope_scaling *s)
{
    double lo, hi, den;
    rope_yarn_range(&lo, &hi, head_dim, rope_base, s);
    if (yarn_is_minimind(s))
        den = fmax(hi - lo, 0.001);
    else
        den = lo == hi ? (hi + 0.001) - lo : hi - lo;
    for (int i = 0; i < head_dim / 2; i++) {
        float r = ((float)i - (float)lo) / (float)den;
        ramp[i] = r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
    }
    return ROPE_SCALING_OK;
}
/* 4.6.3 The attention temperature */
double rope_yarn_get_mscale(double scale, double mscale)
{
    if (scale <= 1)
        return 1.0;
    return 0.1 * mscale * log(scale) + 1.0;
}
/* 4.6.4 MiniMind's YaRN, line by line, and Hugging Face's */
double rope_yarn_clamp_threshold(int head_dim, double rope_base,
                                 double beta_slow)
{
    return 2 * ROPE_PI * beta_slow
           * pow(rope_base, (double)(head_dim - 2) / head_dim);
}
/* 4.9 One function for every method */
int rope_compute_inv_freq(float *inv_freq, double *attention_factor,
                          int head_dim, double rope_base,
                          const rope_scaling *s)
{
    rope_scaling none;
    int half = head_dim / 2, err;
    if (s == NULL) {
        rope_scaling_defaults(&none);
        s = &none;
    }
    if ((err = rope_scaling_check(s, head_dim)) != ROPE_SCALING_OK)
        return err;
    *attention_factor = 1.0;
    switch (s->rope_type) {
    case ROPE_SCALING_DEFAULT:
        rope_default_inv_freq(inv_freq, head_dim, rope_base);
        break;
    case ROPE_SCALING_LINEAR:
        /* 4.3 Position interpolation */
        rope_default_inv_freq(inv_freq, head_dim, rope_base);
        for (int i = 0; i < half; i++)
            inv_freq[i] = inv_freq[i] / (float)s->factor;
        /* 4.9 One function for every method */
        break;
    case ROPE_SCALING_DYNAMIC:
        /* 4.5 Dynamic NTK */
        {
            long L = dynamic_length(s);
            double fac = rope_dynamic_factor(s->factor, s->seq_len, L);
            double base = rope_base
                * pow(fac, (double)head_dim / (double)(head_dim - 2));
            rope_default_inv_freq(inv_freq, head_dim, base);
        }
        /* 4.9 One function for every method */
        break;
    case ROPE_SCALING_YARN:
        /* 4.6.2 The ramp and the blend */
        if (yarn_is_minimind(s)) {
            long end = s->max_position_embeddings > 0
                           ? s->max_position_embeddings : 32768;
            if ((double)end / (double)original_length(s) > 1.0) {
                rope_yarn_ramp(inv_freq, head_dim, rope_base, s);
                {
                    float fac = (float)yarn_factor(s);
                    float b = (float)rope_base;
                    for (int i = 0; i < half; i++) {
                        float ramp = inv_freq[i];
                        float f = 1.0f / powf(b, (float)(2 * i) / (float)head_dim);
                        inv_freq[i] = f * ((1.0f - ramp) + ramp / fac);
                    }
                }
            } else {
                rope_default_inv_freq(inv_freq, head_dim, rope_base);
            }
        } else {
            rope_yarn_ramp(inv_freq, head_dim, rope_base, s);
            {
                float fac = (float)yarn_factor(s);
                float b = (float)rope_base;
                for (int i = 0; i < half; i++) {
                    float pos = powf(b, (float)(2 * i) / (float)head_dim);
                    float extrap = 1.0f / pos, interp = 1.0f / (fac * pos);
                    float ef = 1.0f - inv_freq[i];
                    inv_freq[i] = interp * (1.0f - ef) + extrap * ef;
                }
            }
        }
        *attention_factor = yarn_attention_factor(s);
        /* 4.9 One function for every method */
        break;
    case ROPE_SCALING_LLAMA3:
        /* 4.7 Llama 3.1: wavelength bands */
        {
            double L = (double)original_length(s);
            float low_wl = (float)(L / s->low_freq_factor);
            float high_wl = (float)(L / s->high_freq_factor);
            float fac = (float)s->factor, lo = (float)s->low_freq_factor;
            float span = (float)(s->high_freq_factor - s->low_freq_factor);
            rope_default_inv_freq(inv_freq, head_dim, rope_base);
            for (int i = 0; i < half; i++) {
                float wl = (1.0f / inv_freq[i]) * (float)(2 * ROPE_PI);
                float f = wl > low_wl ? inv_freq[i] / fac : inv_freq[i];
                float sm = ((1.0f / wl) * (float)L - lo) / span;
                float blend = ((1.0f - sm) * f) / fac + sm * f;
                int medium = !(wl < high_wl) && !(wl > low_wl);
                inv_freq[i] = medium ? blend : f;
            }
        }
        /* 4.9 One function for every method */
        break;
    case ROPE_SCALING_LONGROPE:
        /* 4.8 LongRoPE: one factor per pair */
        {
            long L = original_length(s);
            const double *ext = s->seq_len > L ? s->long_factor
                                               : s->short_factor;
            float b = (float)rope_base;
            for (int i = 0; i < half; i++) {
                float p = powf(b, (float)(2 * i) / (float)head_dim);
                inv_freq[i] = 1.0f / ((float)ext[i] * p);
            }
            *attention_factor = longrope_attention_factor(s);
        }
        /* 4.9 One function for every method */
        break;
    }
    if (!(*attention_factor > 0) || *attention_factor > FLT_MAX)
        return ROPE_SCALING_EATTENTION;
    return ROPE_SCALING_OK;
}
/* 4.9.1 MiniMind's precompute_freqs_cis in full */
int rope_precompute_freqs_cis_scaled(float *freqs_cos, float *freqs_sin,
                                     int head_dim, long end,
                                     double rope_base,
                                     const rope_scaling *s,
                                     rope_precision precision)
{
    rope_scaling local;
    float *inv_freq;
    double af;
    int err;
    if (head_dim < 2 || head_dim % 2 != 0)
        return ROPE_SCALING_EHEAD_DIM;
    if (s == NULL)
        rope_scaling_defaults(&local);
    else
        local = *s;
    if (local.rope_type == ROPE_SCALING_YARN
        && local.yarn_flavor == ROPE_YARN_MINIMIND)
        local.max_position_embeddings = end;
    inv_freq = malloc((size_t)(head_dim / 2) * sizeof *inv_freq);
    if (inv_freq == NULL)
        return -1;
    err = rope_compute_inv_freq(inv_freq, &af, head_dim, rope_base,
                                &local);
    if (err == ROPE_SCALING_OK)
        err = rope_freqs_cis_from_inv_freq(freqs_cos, freqs_sin,
                                           inv_freq, head_dim, 0, end,
                                           af, precision);
    free(inv_freq);
    return err;
}
/* W4.1 The scaling interface in detail */
void rope_scaling_defaults(rope_scaling *s)
{
    memset(s, 0, sizeof *s);
    s->rope_type = ROPE_SCALING_DEFAULT;
    s->yarn_flavor = ROPE_YARN_HF;
    s->truncate = 1;
}
/* W4.1.1 Validation */
int rope_scaling_check(const rope_scaling *s, int head_dim)
{
    if (head_dim < 2 || head_dim % 2 != 0)
        return ROPE_SCALING_EHEAD_DIM;
    if (s->factor != 0 && !(s->factor >= 1))
        return ROPE_SCALING_EFACTOR;
    if (!(s->attention_factor >= 0) || s->attention_factor > FLT_MAX)
        return ROPE_SCALING_EATTENTION;
    switch (s->rope_type) {
    case ROPE_SCALING_DEFAULT:
        return ROPE_SCALING_OK;
    case ROPE_SCALING_LINEAR:
        return s->factor == 0 ? ROPE_SCALING_ENOFACTOR : ROPE_SCALING_OK;
    case ROPE_SCALING_DYNAMIC:
        if (head_dim < 4)
            return ROPE_SCALING_EHEAD_DIM;
        if (s->factor == 0)
            return ROPE_SCALING_ENOFACTOR;
        return dynamic_length(s) > 0 ? ROPE_SCALING_OK : ROPE_SCALING_ENOLENGTH;
    case ROPE_SCALING_YARN:
        if (original_length(s) <= 0)
            return ROPE_SCALING_ENOORIGINAL;
        if (yarn_factor(s) == 0)
            return ROPE_SCALING_ENOFACTOR;
        if (!(yarn_factor(s) >= 1))
            return ROPE_SCALING_EFACTOR;
        if (!(yarn_beta_slow(s) > 0)
            || !(yarn_beta_fast(s) > yarn_beta_slow(s)))
            return ROPE_SCALING_EBETA;
        return ROPE_SCALING_OK;
    case ROPE_SCALING_LLAMA3:
        if (s->factor == 0)
            return ROPE_SCALING_ENOFACTOR;
        if (original_length(s) <= 0)
            return ROPE_SCALING_ENOORIGINAL;
        if (!(s->low_freq_factor > 0)
            || !(s->high_freq_factor > s->low_freq_factor))
            return ROPE_SCALING_EFREQ;
        return ROPE_SCALING_OK;
    case ROPE_SCALING_LONGROPE:
        if (original_length(s) <= 0)
            return ROPE_SCALING_ENOORIGINAL;
        if (s->factor == 0 && s->max_position_embeddings <= 0)
            return ROPE_SCALING_ENOFACTOR;
        if (s->factor == 0 && s->max_position_embeddings < original_length(s))
            return ROPE_SCALING_EFACTOR;
        if (s->short_factor == NULL || s->long_factor == NULL
            || s->n_short_factor != head_dim / 2
            || s->n_long_factor != head_dim / 2)
            return ROPE_SCALING_ELIST;
        for (int i = 0; i < head_dim / 2; i++)
            if (!(s->short_factor[i] > 0) || !(s->long_factor[i] > 0))
                return ROPE_SCALING_ELIST;
        return ROPE_SCALING_OK;
    }
    return ROPE_SCALING_ETYPE;
}
const char *rope_scaling_strerror(int err)
{
    static const char *const msg[] = {
        "no error",
        "head_dim must be even and >= 2 (>= 4 for dynamic)",
        "factor must be >= 1",
        "factor is required",
        "original_max_position_embeddings is required",
        "a length (max_position_embeddings) is required",
        "beta_fast must be greater than beta_slow > 0",
        "need 0 < low_freq_factor < high_freq_factor",
        "factor lists need head_dim/2 positive entries",
        "attention_factor must be positive and at most FLT_MAX",
        "unknown rope_type"};
    if (err < 0 || err > ROPE_SCALING_ETYPE)
        return "unknown error";
    return msg[err];
}
