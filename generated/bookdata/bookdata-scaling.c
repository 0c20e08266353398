/* W4.5 Numbers and figures for the prose */
/* bookdata-scaling.c: the numbers and figure data of chapter 4. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

#define ROPE_BD_PI 3.14159265358979323846
enum { MM_D = 96, MM_L = 2048, MM_M = 32768, MM_S = 16 };
enum { MM_T = 768, MM_TPRE = 380, IDEA_I = 24 };
static const double MM_BASE = 1e6;
enum { ALL_D = 64, ALL_L = 2048, ALL_S = 16 };
static const double ALL_BASE = 1e4;
enum { PIT_D = 64, PIT_KEY = 1000, PIT_QUERY = 3000, PIT_L = 2048 };
enum { PIT_I = 20 };
static const double PIT_S = 2, PIT_BASE = 1e4;
enum { WIDE_D = 64, WIDE_L = 65536 };
static const double WIDE_BASE = 1e4;
/* the golden files' cases: head 64, base 1e4 */
enum { G_D = 64, G_DYN_N = 4096, G_DYN_L = 2048, G_YARN_L = 2048 };
enum { G_L3_L = 8192, G_LR_L = 4096, G_LR_M = 131072 };
static const double G_BASE = 1e4, G_DYN_S = 2, G_L3_S = 8;
static const double G_L3_LOW = 1, G_L3_HIGH = 4;
static long scaling_bd_ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    long la = ia < 0 ? -(long)(ia & 0x7fffffff) : ia;
    long lb = ib < 0 ? -(long)(ib & 0x7fffffff) : ib;
    return la > lb ? la - lb : lb - la;
}

static void scaling_def_base(FILE *f, const char *key, double base)
{
    double e = log10(base);
    if (fabs(e - nearbyint(e)) < 1e-12)
        bd_def(f, key, "10^{%d}", (int)nearbyint(e));
    else
        bd_def(f, key, "%g", base);
}
static rope_scaling yarn_config(rope_yarn_flavor flavor, double factor,
                                long original)
{
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.yarn_flavor = flavor;
    s.factor = factor;
    s.original_max_position_embeddings = original;
    s.max_position_embeddings = (long)(factor * (double)original);
    return s;
}
static void reach_inv_freq(float *inv, int method, double factor,
                           long original)
{
    rope_scaling s;
    double af;
    int err = 0;
    rope_scaling_defaults(&s);
    s.factor = factor;
    s.original_max_position_embeddings = original;
    if (method == 0)
        rope_default_inv_freq(inv, MM_D, MM_BASE);
    else if (method == 2)
        rope_default_inv_freq(inv, MM_D,
                              rope_ntk_aware_base(MM_BASE, factor, MM_D));
    else {
        if (method == 1)
            s.rope_type = ROPE_SCALING_LINEAR;
        else if (method == 3)
            s = yarn_config(ROPE_YARN_MINIMIND, factor, original);
        else {
            s.rope_type = ROPE_SCALING_LLAMA3;
            s.low_freq_factor = 1;
            s.high_freq_factor = 4;
        }
        err = rope_compute_inv_freq(inv, &af, MM_D, MM_BASE, &s);
    }
    if (err != 0) {
        fprintf(stderr, "bookdata-scaling: bad reach configuration\n");
        exit(1);
    }
}
static int reach_count(const float *inv, long n_len, double *rmax)
{
    float omega[MM_D / 2];
    int count = 0;
    rope_default_inv_freq(omega, MM_D, MM_BASE);
    *rmax = 0;
    for (int i = 0; i < MM_D / 2; i++) {
        if (2.0 * ROPE_BD_PI / (double)omega[i] <= (double)MM_T)
            continue;
        double r = (double)(n_len - 1) * (double)inv[i]
            / ((double)(MM_T - 1) * (double)omega[i]);
        if (r > *rmax)
            *rmax = r;
        if (r > 1.01)
            count++;
    }
    return count;
}
static void write_why(const char *dir, FILE *f)
{
    float inv[MM_D / 2];
    int half = MM_D / 2;
    FILE *w = bd_open(dir, "scaling-wavelength.dat");
    rope_default_inv_freq(inv, MM_D, MM_BASE);
    fprintf(w, "i lambda T L M\n");
    for (int i = 0; i < half; i++)
        fprintf(w, "%d %.6e %d %d %d\n", i, 2 * ROPE_BD_PI / inv[i],
                MM_T, MM_L, MM_M);
    bd_close(w);
    int nt = rope_count_full_turns(inv, MM_D, MM_T);
    int ntp = rope_count_full_turns(inv, MM_D, MM_TPRE);
    int nl = rope_count_full_turns(inv, MM_D, MM_L);
    int nm = rope_count_full_turns(inv, MM_D, MM_M);
    bd_def(f, "scaling-mm-d", "%d", MM_D);
    bd_def(f, "scaling-mm-L", "%d", MM_L);
    bd_def(f, "scaling-mm-M", "%d", MM_M);
    bd_def(f, "scaling-mm-s", "%d", MM_S);
    scaling_def_base(f, "scaling-mm-base", MM_BASE);
    bd_def(f, "scaling-mm-half", "%d", half);
    bd_def(f, "scaling-mm-T", "%d", MM_T);
    bd_def(f, "scaling-mm-Tpre", "%d", MM_TPRE);
    bd_def(f, "scaling-mm-i1", "%.2f",
           rope_yarn_correction_dim(1, MM_D, MM_BASE, MM_L));
    bd_def(f, "scaling-mm-i1T", "%.2f",
           rope_yarn_correction_dim(1, MM_D, MM_BASE, MM_T));
    bd_def(f, "scaling-mm-i1Tpre", "%.2f",
           rope_yarn_correction_dim(1, MM_D, MM_BASE, MM_TPRE));
    bd_def(f, "scaling-mm-lastfullT", "%d", nt - 1);
    bd_def(f, "scaling-mm-nfullT", "%d", nt);
    bd_def(f, "scaling-mm-nfullTpre", "%d", ntp);
    bd_def(f, "scaling-mm-nfull", "%d", nl);
    bd_def(f, "scaling-mm-nfullM", "%d", nm);
    bd_def(f, "scaling-mm-nnew", "%d", nm - nt);
    bd_def(f, "scaling-mm-nout", "%d", half - nt);
    bd_def(f, "scaling-mm-nnever", "%d", half - nm);
    bd_def_sci(f, "scaling-mm-lambdalast",
               2 * ROPE_BD_PI / inv[half - 1], 3);
    bd_def_sci(f, "scaling-mm-anglelastT",
               (MM_T - 1) * (double)inv[half - 1], 2);
    bd_def(f, "scaling-mm-anglelastM", "%.3f",
           (MM_M - 1) * (double)inv[half - 1]);
    {
        rope_scaling m = yarn_config(ROPE_YARN_MINIMIND, MM_S, MM_L);
        float ramp[MM_D / 2], yinv[MM_D / 2];
        double af, deg = 180 / ROPE_BD_PI;
        rope_yarn_ramp(ramp, MM_D, MM_BASE, &m);
        rope_compute_inv_freq(yinv, &af, MM_D, MM_BASE, &m);
        bd_def(f, "scaling-mm-ngap", "%d", nl - nt);
        bd_def(f, "scaling-mm-gapfirst", "%d", nt);
        bd_def(f, "scaling-mm-gaplast", "%d", nl - 1);
        bd_def(f, "scaling-mm-gapgfirst", "%.2f", (double)ramp[nt]);
        bd_def(f, "scaling-mm-gapglast", "%.2f", (double)ramp[nl - 1]);
        double full = (MM_M - 1) * (double)inv[IDEA_I];
        bd_def(f, "scaling-idea-i", "%d", IDEA_I);
        bd_def(f, "scaling-idea-wave", "%.0f", 2 * ROPE_BD_PI / inv[IDEA_I]);
        bd_def(f, "scaling-idea-trained", "%.1f",
               (MM_T - 1) * (double)inv[IDEA_I] * deg);
        bd_def(f, "scaling-idea-assumed", "%.1f",
               (MM_L - 1) * (double)inv[IDEA_I] * deg);
        bd_def(f, "scaling-idea-yarn", "%.1f",
               (MM_M - 1) * (double)yinv[IDEA_I] * deg);
        bd_def(f, "scaling-idea-turns", "%.1f", full / (2 * ROPE_BD_PI));
        bd_def(f, "scaling-idea-plain", "%.1f",
               fmod(full, 2 * ROPE_BD_PI) * deg);
        bd_def(f, "scaling-idea-plain-rad", "%.2f",
               fmod(full, 2 * ROPE_BD_PI));
        bd_def(f, "scaling-idea-whole", "%.0f", floor(full / (2 * ROPE_BD_PI)));
        bd_def(f, "scaling-idea-trained-rad", "%.2f",
               (MM_T - 1) * (double)inv[IDEA_I]);
    }
}
static void write_pi_ntk(FILE *f)
{
    float inv[MM_D / 2];
    double af;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LINEAR;
    s.factor = MM_S;
    rope_compute_inv_freq(inv, &af, MM_D, MM_BASE, &s);
    bd_def(f, "scaling-pi-step0", "%.4f", (double)inv[0]);
    bd_def_sci(f, "scaling-ntk-base",
               rope_ntk_aware_base(MM_BASE, MM_S, MM_D), 4);
    double fac = rope_dynamic_factor(G_DYN_S, G_DYN_N, G_DYN_L);
    double b = G_BASE * pow(fac, (double)G_D / (G_D - 2));
    bd_def(f, "scaling-dyn-s", "%.0f", G_DYN_S);
    bd_def(f, "scaling-dyn-n", "%d", G_DYN_N);
    bd_def(f, "scaling-dyn-L", "%d", G_DYN_L);
    bd_def(f, "scaling-dyn-fac", "%.0f", fac);
    bd_def(f, "scaling-g-d", "%d", G_D);
    scaling_def_base(f, "scaling-g-base", G_BASE);
    bd_def(f, "scaling-dyn-base", "%.6f", b);
    bd_def(f, "scaling-dyn-basef", "%.6f", (double)(float)b);
}
static void write_pitfall(FILE *f)
{
    float old_inv[PIT_D / 2], new_inv[PIT_D / 2];
    double af, worst = 0;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_DYNAMIC;
    s.factor = PIT_S;
    s.max_position_embeddings = PIT_L;
    s.seq_len = PIT_QUERY + 1;
    rope_default_inv_freq(old_inv, PIT_D, PIT_BASE);
    rope_compute_inv_freq(new_inv, &af, PIT_D, PIT_BASE, &s);
    for (int i = 0; i < PIT_D / 2; i++)
        worst = fmax(worst,
                     PIT_KEY * fabs((double)new_inv[i] - old_inv[i]));
    double fresh = cos((double)(PIT_QUERY - PIT_KEY) * new_inv[PIT_I]);
    double stale = cos((double)PIT_QUERY * new_inv[PIT_I]
                       - (double)PIT_KEY * old_inv[PIT_I]);
    bd_def(f, "scaling-pit-d", "%d", PIT_D);
    scaling_def_base(f, "scaling-pit-base", PIT_BASE);
    bd_def(f, "scaling-pit-L", "%d", PIT_L);
    bd_def(f, "scaling-pit-s", "%.0f", PIT_S);
    bd_def(f, "scaling-pit-key", "%d", PIT_KEY);
    bd_def(f, "scaling-pit-query", "%d", PIT_QUERY);
    bd_def(f, "scaling-pit-N", "%d", PIT_QUERY + 1);
    bd_def(f, "scaling-pit-i", "%d", PIT_I);
    bd_def(f, "scaling-pit-err", "%.2f", worst);
    bd_def(f, "scaling-pit-score", "%.2f", fabs(stale - fresh));
}
static void write_flavour_column(FILE *f, int d)
{
    rope_scaling h = yarn_config(ROPE_YARN_HF, MM_S, MM_L);
    rope_scaling m = yarn_config(ROPE_YARN_MINIMIND, MM_S, MM_L);
    float ih[64], im[64], rh[64], rm[64];
    double hl, hh, ml, mh, af;
    int nramp = 0, ndiff = 0;
    long worst = 0;
    char key[64];
    rope_yarn_range(&hl, &hh, d, MM_BASE, &h);
    rope_yarn_range(&ml, &mh, d, MM_BASE, &m);
    rope_yarn_ramp(rh, d, MM_BASE, &h);
    rope_yarn_ramp(rm, d, MM_BASE, &m);
    rope_compute_inv_freq(ih, &af, d, MM_BASE, &h);
    rope_compute_inv_freq(im, &af, d, MM_BASE, &m);
    for (int i = 0; i < d / 2; i++) {
        nramp += rh[i] != rm[i];
        ndiff += ih[i] != im[i];
        if (scaling_bd_ulps(ih[i], im[i]) > worst)
            worst = scaling_bd_ulps(ih[i], im[i]);
    }
    #define FL(name, fmt, v) \
        (snprintf(key, sizeof key, "scaling-fl%d-" name, d), \
         bd_def(f, key, fmt, v))
    FL("d32", "%.3f", rope_yarn_correction_dim(32, d, MM_BASE, MM_L));
    FL("d1", "%.3f", rope_yarn_correction_dim(1, d, MM_BASE, MM_L));
    FL("mlo", "%.0f", ml);
    FL("mhi", "%.0f", mh);
    FL("hlo", "%.0f", hl);
    FL("hhi", "%.0f", hh);
    FL("nramp", "%d", nramp);
    FL("ndiff", "%d", ndiff);
    FL("ulp", "%ld", worst);
    #undef FL
}
static void write_yarn(FILE *f)
{
    rope_scaling s = yarn_config(ROPE_YARN_HF, 16, 2048);
    rope_scaling m = yarn_config(ROPE_YARN_MINIMIND, MM_S, MM_L);
    float inv[64];
    double af;
    bd_def(f, "scaling-yarn-d32", "%.6f",
           rope_yarn_correction_dim(32, G_D, G_BASE, G_YARN_L));
    bd_def(f, "scaling-yarn-d1", "%.6f",
           rope_yarn_correction_dim(1, G_D, G_BASE, G_YARN_L));
    bd_def(f, "scaling-yarn-L", "%d", G_YARN_L);
    bd_def(f, "scaling-af-16", "%.4f", rope_yarn_get_mscale(16, 1));
    bd_def(f, "scaling-af-4", "%.4f", rope_yarn_get_mscale(4, 1));
    s.mscale = 1.0;
    s.mscale_all_dim = 0.707;
    rope_compute_inv_freq(inv, &af, 64, 1e4, &s);
    bd_def(f, "scaling-af-mscale", "%.4f", af);
    bd_def(f, "scaling-af-mu1", "%.1f", s.mscale);
    bd_def(f, "scaling-af-mu2", "%.3f", s.mscale_all_dim);
    bd_def(f, "scaling-af-16sq", "%.4f",
           rope_yarn_get_mscale(16, 1) * rope_yarn_get_mscale(16, 1));
    {
        rope_scaling ds = yarn_config(ROPE_YARN_HF, 40, 4096);
        double a2 = rope_yarn_get_mscale(40, 0.707);
        ds.mscale = 0.707;
        ds.mscale_all_dim = 0.707;
        rope_compute_inv_freq(inv, &af, 64, 1e4, &ds);
        bd_def(f, "scaling-ds-s", "%.0f", ds.factor);
        bd_def(f, "scaling-ds-L", "%ld", ds.original_max_position_embeddings);
        bd_def(f, "scaling-ds-mu", "%.3f", ds.mscale);
        bd_def(f, "scaling-ds-ratio", "%g", af);
        bd_def(f, "scaling-ds-softmax", "%.4f", a2 * a2);
    }
    {
        float ramp[MM_D / 2];
        int keep = 0, blend = 0, interp = 0;
        rope_yarn_ramp(ramp, MM_D, MM_BASE, &m);
        for (int i = 0; i < MM_D / 2; i++) {
            keep += ramp[i] == 0.0f;
            interp += ramp[i] == 1.0f;
            blend += ramp[i] > 0.0f && ramp[i] < 1.0f;
        }
        bd_def(f, "scaling-mm-ykeep", "%d", keep);
        bd_def(f, "scaling-mm-yblend", "%d", blend);
        bd_def(f, "scaling-mm-yinterp", "%d", interp);
        bd_def(f, "scaling-mm-ykeeplast", "%d", keep - 1);
        bd_def(f, "scaling-mm-yinterpfirst", "%d", MM_D / 2 - interp);
    }
    rope_compute_inv_freq(inv, &af, MM_D, MM_BASE, &m);
    bd_def(f, "scaling-fl-afm", "%.4f", af);
    write_flavour_column(f, 64);
    write_flavour_column(f, 96);
}
static void write_thresholds_and_ramps(const char *dir, FILE *f)
{
    static const int dims[3] = {64, 96, 128};
    char key[64];
    for (int a = 0; a < 3; a++) {
        snprintf(key, sizeof key, "scaling-thr-%d-4", dims[a]);
        bd_def(f, key, "%.0f",
               rope_yarn_clamp_threshold(dims[a], 1e4, 1));
        snprintf(key, sizeof key, "scaling-thr-%d-6", dims[a]);
        bd_def(f, key, "%.0f",
               rope_yarn_clamp_threshold(dims[a], 1e6, 1));
    }
    rope_scaling h = yarn_config(ROPE_YARN_HF, MM_S, MM_L);
    rope_scaling m = yarn_config(ROPE_YARN_MINIMIND, MM_S, MM_L);
    rope_scaling hw = yarn_config(ROPE_YARN_HF, MM_S, WIDE_L);
    rope_scaling mw = yarn_config(ROPE_YARN_MINIMIND, MM_S, WIDE_L);
    float rh[MM_D / 2], rm[MM_D / 2], rhw[WIDE_D / 2], rmw[WIDE_D / 2];
    rope_yarn_ramp(rh, MM_D, MM_BASE, &h);
    rope_yarn_ramp(rm, MM_D, MM_BASE, &m);
    rope_yarn_ramp(rhw, WIDE_D, WIDE_BASE, &hw);
    rope_yarn_ramp(rmw, WIDE_D, WIDE_BASE, &mw);
    bd_def(f, "scaling-wide-d", "%d", WIDE_D);
    scaling_def_base(f, "scaling-wide-base", WIDE_BASE);
    bd_def(f, "scaling-wide-L", "%d", WIDE_L);
    {
        double wl, wh, ml, mh;
        rope_yarn_range(&wl, &wh, WIDE_D, WIDE_BASE, &hw);
        rope_yarn_range(&ml, &mh, WIDE_D, WIDE_BASE, &mw);
        bd_def(f, "scaling-wide-d1", "%.3f",
               rope_yarn_correction_dim(1, WIDE_D, WIDE_BASE, WIDE_L));
        bd_def(f, "scaling-wide-hlo", "%.0f", wl);
        bd_def(f, "scaling-wide-hhi", "%.0f", wh);
        bd_def(f, "scaling-wide-mhi", "%.0f", mh);
        bd_def(f, "scaling-wide-last", "%d", WIDE_D / 2 - 1);
        bd_def(f, "scaling-wide-clamp", "%d", WIDE_D - 1);
        bd_def(f, "scaling-wide-hflast", "%.3f", rhw[WIDE_D / 2 - 1]);
    }
    FILE *w = bd_open(dir, "scaling-ramp.dat");
    fprintf(w, "i mm96 hf96 mmwide hfwide\n");
    for (int i = 0; i < MM_D / 2; i++) {
        fprintf(w, "%d %.6f %.6f ", i, rm[i], rh[i]);
        if (i < WIDE_D / 2)
            fprintf(w, "%.6f %.6f\n", rmw[i], rhw[i]);
        else
            fprintf(w, "nan nan\n");
    }
    bd_close(w);
}
static void write_llama3_longrope(FILE *f)
{
    float omega[G_D / 2];
    float low_wl = (float)(G_L3_L / G_L3_LOW);
    float high_wl = (float)(G_L3_L / G_L3_HIGH);
    int nhigh = 0, nmid = 0, nlow = 0;
    rope_default_inv_freq(omega, G_D, G_BASE);
    for (int i = 0; i < G_D / 2; i++) {
        float wl = (1.0f / omega[i]) * (float)(2 * ROPE_BD_PI);
        if (wl < high_wl)
            nhigh++;
        else if (wl > low_wl)
            nlow++;
        else
            nmid++;
    }
    bd_def(f, "scaling-l3-s", "%.0f", G_L3_S);
    bd_def(f, "scaling-l3-low", "%.0f", G_L3_LOW);
    bd_def(f, "scaling-l3-high", "%.0f", G_L3_HIGH);
    bd_def(f, "scaling-l3-L", "%d", G_L3_L);
    bd_def(f, "scaling-lr-M", "%d", G_LR_M);
    bd_def(f, "scaling-lr-L", "%d", G_LR_L);
    bd_def(f, "scaling-lr-s", "%.0f", (double)G_LR_M / G_LR_L);
    bd_def(f, "scaling-l3-nhigh", "%d", nhigh);
    bd_def(f, "scaling-l3-nmid", "%d", nmid);
    bd_def(f, "scaling-l3-nlow", "%d", nlow);
    bd_def(f, "scaling-lr-af", "%.4f",
           sqrt(1 + log((double)G_LR_M / G_LR_L)
                        / log((double)G_LR_L)));
}
static void kappa_column(float *kappa, const rope_scaling *s)
{
    float omega[ALL_D / 2], inv[ALL_D / 2];
    double af;
    rope_default_inv_freq(omega, ALL_D, ALL_BASE);
    if (rope_compute_inv_freq(inv, &af, ALL_D, ALL_BASE, s) != 0) {
        fprintf(stderr, "bookdata-scaling: bad configuration\n");
        exit(1);
    }
    for (int i = 0; i < ALL_D / 2; i++)
        kappa[i] = inv[i] / omega[i];
}
static void write_kappa(const char *dir, FILE *f)
{
    enum { H = ALL_D / 2, NM = 7 };
    static const char *names[NM] = {"linear", "ntk", "dynamic2L",
        "dynamicM", "yarn", "llama3", "longrope"};
    float kappa[NM][H], omega[H];
    double rho[H];
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LINEAR;
    s.factor = ALL_S;
    kappa_column(kappa[0], &s);
    rope_default_inv_freq(omega, ALL_D,
                          rope_ntk_aware_base(ALL_BASE, ALL_S, ALL_D));
    for (int i = 0; i < H; i++)
        kappa[1][i] = omega[i] / (float)pow(ALL_BASE, -2.0 * i / ALL_D);
    s.rope_type = ROPE_SCALING_DYNAMIC;
    s.factor = 2;
    s.max_position_embeddings = ALL_L;
    s.seq_len = 2 * ALL_L;
    kappa_column(kappa[2], &s);
    s.seq_len = (long)ALL_S * ALL_L;
    kappa_column(kappa[3], &s);
    s = yarn_config(ROPE_YARN_HF, ALL_S, ALL_L);
    kappa_column(kappa[4], &s);
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LLAMA3;
    s.factor = ALL_S;
    s.low_freq_factor = 1;
    s.high_freq_factor = 4;
    s.original_max_position_embeddings = ALL_L;
    kappa_column(kappa[5], &s);
    for (int i = 0; i < H; i++)
        rho[i] = 1 + (ALL_S - 1) * (double)i / (H - 1);
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LONGROPE;
    s.original_max_position_embeddings = ALL_L;
    s.factor = ALL_S;
    s.seq_len = ALL_L + 1;
    s.short_factor = s.long_factor = rho;
    s.n_short_factor = s.n_long_factor = H;
    kappa_column(kappa[6], &s);
    FILE *w = bd_open(dir, "scaling-kappa.dat");
    fprintf(w, "i");
    for (int k = 0; k < NM; k++)
        fprintf(w, " %s", names[k]);
    for (int i = 0; i < H; i++) {
        fprintf(w, "\n%d", i);
        for (int k = 0; k < NM; k++)
            fprintf(w, " %.6e", kappa[k][i]);
    }
    fprintf(w, "\n");
    bd_close(w);
    {
        double r = (double)(ALL_S * ALL_L - 1) / (ALL_L - 1);
        char key[64];
        bd_def(f, "scaling-ang-default", "%.2f", r);
        for (int k = 0; k < NM; k++) {
            snprintf(key, sizeof key, "scaling-ang-%s", names[k]);
            bd_def(f, key, "%.3f", kappa[k][H - 1] * r);
        }
    }
    bd_def(f, "scaling-all-d", "%d", ALL_D);
    scaling_def_base(f, "scaling-all-base", ALL_BASE);
    bd_def(f, "scaling-all-L", "%d", ALL_L);
    bd_def(f, "scaling-all-M", "%d", ALL_L * ALL_S);
    bd_def(f, "scaling-all-s", "%d", ALL_S);
    bd_def(f, "scaling-all-dyn2L", "%.0f", rope_dynamic_factor(2, 2 * ALL_L,
                                                               ALL_L));
    bd_def(f, "scaling-all-dynM", "%.0f",
           rope_dynamic_factor(2, (long)ALL_S * ALL_L, ALL_L));
}
static void write_reach(const char *dir, FILE *f)
{
    enum { H = MM_D / 2, NR = 5 };
    static const char *names[NR] = {"none", "pi", "ntk", "yarn",
        "llama3"};
    float lam[NR][H];
    for (int k = 0; k < NR; k++) {
        reach_inv_freq(lam[k], k, MM_S, MM_L);
        for (int i = 0; i < H; i++)
            lam[k][i] = (float)(2 * ROPE_BD_PI / (double)lam[k][i]);
    }
    FILE *w = bd_open(dir, "scaling-wavelength-methods.dat");
    fprintf(w, "i");
    for (int k = 0; k < NR; k++)
        fprintf(w, " %s", names[k]);
    fprintf(w, " T L sL");
    for (int i = 0; i < H; i++) {
        fprintf(w, "\n%d", i);
        for (int k = 0; k < NR; k++)
            fprintf(w, " %.6e", lam[k][i]);
        fprintf(w, " %d %d %d", MM_T, MM_L, MM_L * MM_S);
    }
    fprintf(w, "\n");
    bd_close(w);
    {
        static const long lens[2] = {MM_L, MM_M};
        float inv[H];
        double rmax;
        char key[64];
        for (int c = 0; c < 2; c++) {
            double fac = (double)lens[c] / MM_T;
            for (int k = 0; k <= NR; k++) {
                if (k == NR)
                    reach_inv_freq(inv, 3, MM_S, MM_L);
                else
                    reach_inv_freq(inv, k, fac, MM_T);
                int n = reach_count(inv, lens[c], &rmax);
                const char *nm = k == NR ? "minimind" : names[k];
                snprintf(key, sizeof key, "scaling-reach-%s-%c", nm, 'a' + c);
                bd_def(f, key, "%d", n);
                snprintf(key, sizeof key, "scaling-reach-%s-%cr", nm, 'a' + c);
                bd_def(f, key, "%.2f", rmax);
            }
            bd_def(f, c ? "scaling-reach-sb" : "scaling-reach-sa", "%.2f", fac);
        }
        bd_def(f, "scaling-reach-Na", "%ld", lens[0]);
        bd_def(f, "scaling-reach-Nb", "%ld", lens[1]);
        reach_inv_freq(inv, 0, 1, MM_T);
        bd_def(f, "scaling-reach-slow", "%d",
               H - rope_count_full_turns(inv, MM_D, MM_T));
        {
            float omega[H];
            long safe = 0;
            int worst = 0;
            rope_default_inv_freq(omega, MM_D, MM_BASE);
            reach_inv_freq(inv, 3, MM_S, MM_L);
            for (int i = 0; i < H; i++) {
                if (2.0 * ROPE_BD_PI / (double)omega[i] <= (double)MM_T)
                    continue;
                long n = (long)floor(1.01 * (MM_T - 1) * (double)omega[i]
                                     / (double)inv[i]) + 1;
                if (safe == 0 || n < safe) {
                    safe = n;
                    worst = i;
                }
            }
            bd_def(f, "scaling-reach-safe", "%ld", safe);
            long strict = 0;
            for (int i = 0; i < H; i++) {
                if (2.0 * ROPE_BD_PI / (double)omega[i] <= (double)MM_T)
                    continue;
                long n = (long)floor((MM_T - 1) * (double)omega[i]
                                     / (double)inv[i]) + 1;
                if (strict == 0 || n < strict)
                    strict = n;
            }
            bd_def(f, "scaling-reach-strict", "%ld", strict);
            bd_def(f, "scaling-reach-worst", "%d", worst);
            bd_def(f, "scaling-reach-worstshare", "%.0f",
                   100 * (MM_T - 1) * (double)omega[worst] / (2 * ROPE_BD_PI));
            for (int i = 0; i < H; i++)
                if (inv[i] == omega[i] / (float)MM_S) {
                    bd_def(f, "scaling-reach-interpshare", "%.0f",
                           100 * (MM_T - 1) * (double)omega[i]
                               / (2 * ROPE_BD_PI));
                    break;
                }
        }
    }
}

int bookdata_scaling(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "scaling");
    write_why(dir, f);
    write_pi_ntk(f);
    write_pitfall(f);
    write_yarn(f);
    write_thresholds_and_ramps(dir, f);
    write_llama3_longrope(f);
    write_kappa(dir, f);
    write_reach(dir, f);
    bd_close(f);
    return 0;
}
