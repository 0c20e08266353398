/* W4.4 Checking the library against the references */
/* generated/tests/test-scaling.c: checks of chapter 4 (RoPE scaling) */
#include "rope.h"
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_DIR "tests/golden/hf/"
#define MM_DIR "tests/golden/minimind/"
#define TEST_PI 3.14159265358979323846

/* W4.4.1 Frequencies and attention factors */
typedef struct {
    const char *name; /* file inv_freq_NAME.txt, and the
                                    row NAME of attention_factors.txt */
    rope_scaling_type type;
    double factor;
    long original, max_pos, seq_len;
    int truncate;
    double mscale, mscale_all_dim, low, high;
} scaling_golden_case;

static const scaling_golden_case scaling_golden_cases[] = {
 /* name, type, factor, original, max_pos, seq_len, truncate,
    mscale, mscale_all_dim, low, high */
 {"default_theta1e4", ROPE_SCALING_DEFAULT, 0, 0, 0, 0, 1, 0, 0, 0, 0},
 {"linear_f4_theta1e4", ROPE_SCALING_LINEAR, 4, 0, 0, 0, 1, 0, 0, 0, 0},
 {"dynamic_f2_seq4096_theta1e4", ROPE_SCALING_DYNAMIC,
  2, 0, 2048, 4096, 1, 0, 0, 0, 0},
 {"dynamic_f2_seq4096_tensorseqlen_theta1e4", ROPE_SCALING_DYNAMIC,
  2, 0, 2048, 4096, 1, 0, 0, 0, 0},
 {"yarn_f16_orig2048_theta1e4", ROPE_SCALING_YARN,
  16, 2048, 0, 0, 1, 0, 0, 0, 0},
 {"yarn_f16_orig2048_notruncate_theta1e4", ROPE_SCALING_YARN,
  16, 2048, 0, 0, 0, 0, 0, 0, 0},
 {"yarn_f16_orig2048_mscale1_0.707_theta1e4", ROPE_SCALING_YARN,
  16, 2048, 0, 0, 1, 1.0, 0.707, 0, 0},
 {"yarn_f4_orig4096_theta1e4", ROPE_SCALING_YARN,
  4, 4096, 0, 0, 1, 0, 0, 0, 0},
 {"yarn_f4_orig4096_notruncate_theta1e4", ROPE_SCALING_YARN,
  4, 4096, 0, 0, 0, 0, 0, 0, 0},
 {"llama3_f8_theta1e4", ROPE_SCALING_LLAMA3,
  8, 8192, 0, 0, 1, 0, 0, 1, 4},
 {"longrope_short_theta1e4", ROPE_SCALING_LONGROPE,
  0, 4096, 131072, 0, 1, 0, 0, 0, 0},
 {"longrope_long_theta1e4", ROPE_SCALING_LONGROPE,
  0, 4096, 131072, 4097, 1, 0, 0, 0, 0},
};
#define N_SCALING_GOLDEN_CASES \
    ((int)(sizeof scaling_golden_cases \
           / sizeof scaling_golden_cases[0]))
static void scaling_golden_case_setup(const scaling_golden_case *c,
                                      rope_scaling *s, double *lists)
{
    rope_scaling_defaults(s);
    s->rope_type = c->type;
    s->factor = c->factor;
    s->original_max_position_embeddings = c->original;
    s->max_position_embeddings = c->max_pos;
    s->seq_len = c->seq_len;
    s->truncate = c->truncate;
    s->mscale = c->mscale;
    s->mscale_all_dim = c->mscale_all_dim;
    s->low_freq_factor = c->low;
    s->high_freq_factor = c->high;
    for (int i = 0; i < 32; i++) {
        lists[i] = 1 + i / 32.0;
        lists[32 + i] = 1 + i / 2.0;
    }
    s->short_factor = lists;
    s->long_factor = lists + 32;
    s->n_short_factor = s->n_long_factor = 32;
}
static double scaling_golden_attention_factor(const char *name)
{
    char line[512];
    size_t n = strlen(name);
    double v = NAN;
    FILE *f = fopen(HF_DIR "attention_factors.txt", "r");
    ck_assert_msg(f != NULL, "missing " HF_DIR "attention_factors.txt");
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ' ') {
            v = strtod(line + n, NULL);
            break;
        }
    fclose(f);
    ck_assert_msg(!isnan(v), "no attention factor for %s", name);
    return v;
}
/* W4.4.3 Tables and rotated vectors */
static const char *const scaling_table_cases[3] = {
    "default_theta1e4", "yarn_f16_orig2048_theta1e4",
    "yarn_f4_orig4096_theta1e4"};

static void scaling_table_case_setup(int k, rope_scaling *s)
{
    rope_scaling_defaults(s);
    if (k > 0) {
        s->rope_type = ROPE_SCALING_YARN;
        s->factor = k == 1 ? 16 : 4;
        s->original_max_position_embeddings = k == 1 ? 2048 : 4096;
    }
}

static double scaling_table_tolerance(double pos)
{
    return 4 * pos * ldexp(1.0, -24) + 1e-6;
}
/* W4.4.4 MiniMind's own YaRN */
static void scaling_minimind_setup(rope_scaling *s)
{
    rope_scaling_defaults(s);
    s->rope_type = ROPE_SCALING_YARN;
    s->yarn_flavor = ROPE_YARN_MINIMIND;
}
/* W4.4.5 The derivations */
/* score of unit vectors of pair i (half-split layout) after rotating
   the query at qpos with qinv and the key at kpos with kinv */
static double scaling_pair_score(int i, const float *qinv, long qpos,
                                 const float *kinv, long kpos)
{
    float q[64] = {0}, k[64] = {0}, scratch[64] = {0};
    float c[64], sn[64];
    double dot = 0;
    q[i] = k[i] = 1.0f;
    rope_freqs_cis_from_inv_freq(c, sn, qinv, 64, qpos, qpos + 1, 1.0,
                                 ROPE_PRECISION_FLOAT);
    rope_apply_rotary_pos_emb(q, scratch, c, sn, 1, 1, 1, 1, 64, 0,
                              ROPE_PAIRING_HALF);
    rope_freqs_cis_from_inv_freq(c, sn, kinv, 64, kpos, kpos + 1, 1.0,
                                 ROPE_PRECISION_FLOAT);
    rope_apply_rotary_pos_emb(k, scratch, c, sn, 1, 1, 1, 1, 64, 0,
                              ROPE_PAIRING_HALF);
    for (int j = 0; j < 64; j++)
        dot += (double)q[j] * k[j];
    return dot;
}
static double reach_worst(const float *inv, const float *omega, long n,
                          long train)
{
    const double two_pi = 6.28318530717958647692;
    double worst = 0;
    for (int i = 0; i < 48; i++) {
        if (two_pi / (double)omega[i] <= (double)train)
            continue;
        double r = (double)(n - 1) * inv[i]
                   / ((double)(train - 1) * omega[i]);
        worst = r > worst ? r : worst;
    }
    return worst;
}
typedef struct {
    rope_scaling_type type;
    int head_dim;
    double factor, beta_fast, beta_slow, low, high;
    long original;
    int n_list;
    rope_scaling_error expect;
} scaling_invalid_case;

static const scaling_invalid_case scaling_invalid_cases[] = {
 {ROPE_SCALING_DEFAULT, 63, 0, 0, 0, 0, 0, 0, 0,
  ROPE_SCALING_EHEAD_DIM},
 {ROPE_SCALING_LINEAR, 64, 0.5, 0, 0, 0, 0, 0, 0, ROPE_SCALING_EFACTOR},
 {ROPE_SCALING_LINEAR, 64, 0, 0, 0, 0, 0, 0, 0, ROPE_SCALING_ENOFACTOR},
 {ROPE_SCALING_DYNAMIC, 64, 2, 0, 0, 0, 0, 0, 0,
  ROPE_SCALING_ENOLENGTH},
 {ROPE_SCALING_YARN, 64, 16, 0, 0, 0, 0, 0, 0,
  ROPE_SCALING_ENOORIGINAL},
 {ROPE_SCALING_YARN, 64, 16, 1, 32, 0, 0, 2048, 0, ROPE_SCALING_EBETA},
 {ROPE_SCALING_YARN, 64, 16, 4, 4, 0, 0, 2048, 0, ROPE_SCALING_EBETA},
 {ROPE_SCALING_LLAMA3, 64, 8, 0, 0, 4, 1, 8192, 0, ROPE_SCALING_EFREQ},
 {ROPE_SCALING_LLAMA3, 64, 8, 0, 0, 1, 4, 0, 0,
  ROPE_SCALING_ENOORIGINAL},
 {ROPE_SCALING_LONGROPE, 64, 4, 0, 0, 0, 0, 4096, 31,
  ROPE_SCALING_ELIST},
 {ROPE_SCALING_LONGROPE, 64, 0, 0, 0, 0, 0, 4096, 32,
  ROPE_SCALING_ENOFACTOR},
};
#define N_SCALING_INVALID_CASES \
    ((int)(sizeof scaling_invalid_cases \
           / sizeof scaling_invalid_cases[0]))
/* W4.4.6 The command line */
static const char *const scaling_type_names[] = {
    "default", "linear", "dynamic", "yarn", "llama3", "longrope"};

/* append " FLAG V" to a[0..n) when v != 0; return the new length */
static size_t scaling_cli_flag(char *a, size_t size, size_t n,
                               const char *flag, double v)
{
    if (v != 0 && n < size)
        n += (size_t)snprintf(a + n, size - n, " %s %.17g", flag, v);
    return n;
}

/* append " FLAG v[0],v[1],...,v[count-1]" */
static size_t scaling_cli_list(char *a, size_t size, size_t n,
                               const char *flag, const double *v,
                               int count)
{
    if (n < size)
        n += (size_t)snprintf(a + n, size - n, " %s ", flag);
    for (int i = 0; i < count && n < size; i++)
        n += (size_t)snprintf(a + n, size - n, "%s%.17g",
                              i == 0 ? "" : ",", v[i]);
    return n;
}
static void scaling_cli_args(char *a, size_t size,
                             const scaling_golden_case *c,
                             const double *lists)
{
    size_t n = (size_t)snprintf(a, size,
        "freqs --head-dim 64 --theta 1e4 --scaling %s",
        scaling_type_names[c->type]);
    n = scaling_cli_flag(a, size, n, "--factor", c->factor);
    n = scaling_cli_flag(a, size, n,
            "--original-max-position-embeddings", (double)c->original);
    n = scaling_cli_flag(a, size, n, "--max-position-embeddings",
                         (double)c->max_pos);
    n = scaling_cli_flag(a, size, n, "--seq-len", (double)c->seq_len);
    n = scaling_cli_flag(a, size, n, "--mscale", c->mscale);
    n = scaling_cli_flag(a, size, n, "--mscale-all-dim",
                         c->mscale_all_dim);
    n = scaling_cli_flag(a, size, n, "--low-freq-factor", c->low);
    n = scaling_cli_flag(a, size, n, "--high-freq-factor", c->high);
    if (!c->truncate && n < size)
        n += (size_t)snprintf(a + n, size - n, " --no-truncate");
    if (c->type == ROPE_SCALING_LONGROPE) {
        n = scaling_cli_list(a, size, n, "--short-factor", lists, 32);
        n = scaling_cli_list(a, size, n, "--long-factor", lists + 32,
                             32);
    }
    ck_assert_msg(n < size, "arguments of %s too long", c->name);
}
/* run "ARGS --print WHAT [EXTRA]", demand success and one line per
   row, and read at most max numbers into v; returns their count */
static int scaling_cli_numbers(const char *args, const char *what,
                               const char *extra, int rows,
                               double *v, int max)
{
    char cmd[4096];
    char *p, *end;
    int n = 0;
    snprintf(cmd, sizeof cmd, "%s --print %s%s", args, what, extra);
    cli_result r = cli_run(cmd);
    ck_assert_msg(r.status == 0, "'%s' failed: %s", cmd, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(cli_line_count(r.out), rows);
    for (p = r.out; n < max; p = end) {
        double x = strtod(p, &end);
        if (end == p)
            break;
        v[n++] = x;
    }
    cli_result_free(&r);
    return n;
}
typedef struct {
    const char *args; /* after "freqs --head-dim 64 --theta 1e4" */
    int n_short, n_long; /* lengths of lists to append, -1: none */
    const char *flag; /* a flag the message must name */
} scaling_cli_bad_call;

static const scaling_cli_bad_call scaling_cli_bad_calls[] = {
 {"--scaling linear --factor 0.5", -1, -1, "--factor"},
 {"--scaling yarn --factor 0.5 --original-max-position-embeddings 2048",
  -1, -1, "--factor"},
 {"--scaling yarn --original-max-position-embeddings 4096"
  " --max-position-embeddings 2048", -1, -1, "--factor"},
 {"--scaling yarn --factor 16 --original-max-position-embeddings 2048"
  " --beta-fast 1 --beta-slow 32", -1, -1, "--beta-fast"},
 {"--scaling yarn --factor 16 --original-max-position-embeddings 2048"
  " --beta-fast 4 --beta-slow 4", -1, -1, "--beta-slow"},
 {"--scaling yarn --yarn-flavor minimind --beta-slow 64", -1, -1,
  "--beta-fast"},
 {"--scaling longrope --factor 4"
  " --original-max-position-embeddings 4096",
  31, 32, "--short-factor"},
 {"--scaling longrope --factor 4"
  " --original-max-position-embeddings 4096",
  32, 33, "--long-factor"},
 {"--scaling longrope --factor 4"
  " --original-max-position-embeddings 4096",
  32, -1, "--long-factor"},
 {"--scaling linear", -1, -1, "--factor"},
 {"--scaling dynamic --factor 2", -1, -1, "--max-position-embeddings"},
 {"--scaling yarn --factor 16", -1, -1,
  "--original-max-position-embeddings"},
 {"--scaling yarn --original-max-position-embeddings 2048", -1, -1,
  "--factor"},
 {"--scaling llama3 --factor 8 --original-max-position-embeddings 8192",
  -1, -1, "--low-freq-factor"},
 {"--scaling llama3 --original-max-position-embeddings 8192"
  " --low-freq-factor 1 --high-freq-factor 4", -1, -1, "--factor"},
 {"--scaling llama3 --factor 8 --low-freq-factor 1"
  " --high-freq-factor 4", -1, -1, "--original-max-position-embeddings"},
 {"--scaling longrope --original-max-position-embeddings 4096", 32, 32,
  "--factor"},
 {"--scaling nosuch", -1, -1, "--scaling"},
 {"--scaling yarn --yarn-flavor other", -1, -1, "--yarn-flavor"},
 {"--scaling llama3 --factor 8 --original-max-position-embeddings 8192"
  " --low-freq-factor 4 --high-freq-factor 1", -1, -1,
  "--high-freq-factor"},
 {"--scaling linear --factor -2", -1, -1, "--factor"},
 {"--scaling linear --factor 0", -1, -1, "--factor"},
 {"--scaling yarn --factor 16 --original-max-position-embeddings 2048"
  " --attention-factor 0", -1, -1, "--attention-factor"},
 {"--scaling yarn --factor 4 --original-max-position-embeddings 2048"
  " --attention-factor 1e300", -1, -1, "--attention-factor"},
 {"--scaling linear --factor", -1, -1, "--factor"},
 {"--scaling longrope --short-factor 1,x", -1, -1, "--short-factor"},
 {"--scaling linear --factor 2 --print ramp", -1, -1, "--scaling"},
 {"--scaling yarn --factor 16 --original-max-position-embeddings 0",
  -1, -1, "--original-max-position-embeddings"},
};
#define N_SCALING_CLI_BAD_CALLS \
    ((int)(sizeof scaling_cli_bad_calls \
           / sizeof scaling_cli_bad_calls[0]))
/* 4.4 NTK-aware scaling */
START_TEST(test_scaling_ntk_aware_derivation)
{
    static const int dims[4] = {32, 64, 96, 128};
    static const double bases[3] = {1e4, 5e5, 1e6};
    static const double factors[4] = {2, 4, 16, 40};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int f = 0; f < 4; f++) {
                int d = dims[a];
                double base = bases[b], s = factors[f];
                double nb = rope_ntk_aware_base(base, s, d);
                double e = (double)(d - 2) / d;
                double last = pow(nb, -e), last0 = pow(base, -e);
                ck_assert_double_eq(pow(nb, 0.0), 1.0);
                ck_assert_double_eq_tol(last * s / last0, 1.0, 1e-12);
            }
}
END_TEST
/* 4.6.4 MiniMind's YaRN, line by line, and Hugging Face's */
START_TEST(test_scaling_flavour_ranges)
{
    static const int dims[5] = {32, 64, 80, 96, 128};
    static const double bases[3] = {1e4, 5e5, 1e6};
    static const double slows[2] = {1, 2};
    rope_scaling h, m;
    rope_scaling_defaults(&h);
    h.rope_type = ROPE_SCALING_YARN;
    h.factor = 16;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 8; k <= 26; k++) {
                long L = (long)ldexp(1.0, k);
                double hl, hh, ml, mh;
                h.beta_slow = slows[k % 2];
                h.original_max_position_embeddings = L;
                m = h;
                m.yarn_flavor = ROPE_YARN_MINIMIND;
                rope_yarn_range(&hl, &hh, dims[a], bases[b], &h);
                rope_yarn_range(&ml, &mh, dims[a], bases[b], &m);
                int differ = hl != ml || hh != mh;
                int predicted = (double)L > rope_yarn_clamp_threshold(dims[a], bases[b],
                                                                      h.beta_slow);
                ck_assert_int_eq(differ, predicted);
                if (bases[b] == 1e6 && L == 2048 && dims[a] >= 64 && dims[a] <= 96)
                    ck_assert_int_eq(differ, 0);
            }
}
END_TEST
/* W4.4.1 Frequencies and attention factors */
START_TEST(test_scaling_golden_inv_freq)
{
    const scaling_golden_case *c = &scaling_golden_cases[_i];
    char path[256];
    double lists[64], af;
    float inv[32];
    size_t n;
    rope_scaling s;
    scaling_golden_case_setup(c, &s, lists);
    snprintf(path, sizeof path, HF_DIR "inv_freq_%s.txt", c->name);
    double *g = golden_read_column(path, 1, &n);
    ck_assert_int_eq((int)n, 32);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s), 0);
    for (int i = 0; i < 32; i++)
        ck_assert_msg(float_ulp_diff(inv[i], (float)g[i]) <= 2,
                      "%s: inv_freq[%d] = %.9e, HF %.9e", c->name, i,
                      (double)inv[i], g[i]);
    ck_assert_double_eq_tol(af,
                            scaling_golden_attention_factor(c->name),
                            1e-12);
    free(g);
}
END_TEST
START_TEST(test_scaling_original_falls_back_on_max)
{
    const scaling_golden_case *c =
        &scaling_golden_cases[_i == 0 ? 4 : 9];
    char path[256];
    double lists[64], af;
    float inv[32];
    size_t n;
    rope_scaling s;
    ck_assert_int_eq(c->type, _i == 0 ? ROPE_SCALING_YARN
                                      : ROPE_SCALING_LLAMA3);
    scaling_golden_case_setup(c, &s, lists);
    s.max_position_embeddings = s.original_max_position_embeddings;
    s.original_max_position_embeddings = 0;
    snprintf(path, sizeof path, HF_DIR "inv_freq_%s.txt", c->name);
    double *g = golden_read_column(path, 1, &n);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s), 0);
    for (int i = 0; i < 32; i++)
        ck_assert_int_le(float_ulp_diff(inv[i], (float)g[i]), 2);
    free(g);
}
END_TEST
/* W4.4.2 The YaRN range and ramp */
START_TEST(test_scaling_golden_yarn_ramp)
{
    static const char *files[2] = {"yarn_f16_orig2048",
                                   "yarn_f4_orig4096"};
    static const double factors[2] = {16, 4};
    static const long originals[2] = {2048, 4096};
    char path[256];
    float ramp[32];
    size_t n;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.factor = factors[_i];
    s.original_max_position_embeddings = originals[_i];
    snprintf(path, sizeof path, HF_DIR "yarn_ramp_%s_theta1e4.txt",
             files[_i]);
    {
        double fast = scaling_golden_header_value(path,
                          "find_correction_dim(beta_fast=32) = ");
        double slow = scaling_golden_header_value(path,
                          "find_correction_dim(beta_slow=1) = ");
        double lo = rope_yarn_correction_dim(32, 64, 1e4, originals[_i]);
        double hi = rope_yarn_correction_dim(1, 64, 1e4, originals[_i]);
        ck_assert_double_eq_tol(lo, fast, 1e-12 * fabs(fast));
        ck_assert_double_eq_tol(hi, slow, 1e-12 * fabs(slow));
    }
    double *g = golden_read_column(path, 1, &n);
    double *e = golden_read_column(path, 2, &n);
    ck_assert_int_eq(rope_yarn_ramp(ramp, 64, 1e4, &s), 0);
    for (int i = 0; i < 32; i++) {
        ck_assert_float_eq(ramp[i], (float)g[i]);
        ck_assert_float_eq(1.0f - ramp[i], (float)e[i]);
    }
    free(g);
    free(e);
}
END_TEST
/* W4.4.3 Tables and rotated vectors */
START_TEST(test_scaling_golden_cos_sin)
{
    char path[256];
    float inv[32], c[64], sn[64];
    double af;
    size_t n;
    rope_scaling s;
    scaling_table_case_setup(_i, &s);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s), 0);
    snprintf(path, sizeof path, HF_DIR "cos_sin_%s.txt",
             scaling_table_cases[_i]);
    double *pos = golden_read_column(path, 0, &n);
    double *gc = golden_read_column(path, 3, &n);
    double *gs = golden_read_column(path, 4, &n);
    ck_assert_int_eq((int)n, 8 * 64);
    for (size_t r = 0; r < n; r += 64) {
        long t = (long)pos[r];
        ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, sn, inv, 64, t,
                             t + 1, af, ROPE_PRECISION_FLOAT), 0);
        double tol = scaling_table_tolerance(t);
        for (int j = 0; j < 64; j++) {
            ck_assert_double_le(fabs(c[j] - gc[r + j]), tol);
            ck_assert_double_le(fabs(sn[j] - gs[r + j]), tol);
        }
    }
    free(pos);
    free(gc);
    free(gs);
}
END_TEST
START_TEST(test_scaling_golden_apply)
{
    char path[256];
    float inv[32], c[64], sn[64], q[64], k[64];
    double af;
    size_t n;
    rope_scaling s;
    scaling_table_case_setup(_i, &s);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s), 0);
    snprintf(path, sizeof path, HF_DIR "apply_rope_%s.txt",
             scaling_table_cases[_i]);
    double *pos = golden_read_column(path, 0, &n);
    double *qin = golden_read_column(path, 2, &n);
    double *qout = golden_read_column(path, 3, &n);
    for (size_t r = 0; r < n; r += 64) {
        long t = (long)pos[r];
        ck_assert_int_eq(rope_freqs_cis_from_inv_freq(c, sn, inv, 64, t, t + 1,
                             af, ROPE_PRECISION_FLOAT), 0);
        for (int j = 0; j < 64; j++)
            q[j] = k[j] = (float)qin[r + j];
        rope_apply_rotary_pos_emb(q, k, c, sn, 1, 1, 1, 1, 64, 0,
                                  ROPE_PAIRING_HALF);
        for (int j = 0; j < 64; j++) {
            ck_assert_double_le(fabs(q[j] - qout[r + j]),
                                scaling_table_tolerance(t));
            ck_assert_float_eq(q[j], k[j]);
        }
    }
    free(pos);
    free(qin);
    free(qout);
}
END_TEST
/* W4.4.4 MiniMind's own YaRN */
START_TEST(test_scaling_minimind_inv_freq_and_ramp)
{
    float inv[32], ramp[32];
    double af;
    size_t n1, n2;
    rope_scaling s;
    scaling_minimind_setup(&s);
    double *gi = golden_read(MM_DIR "rope_yarn_d64_inv_freq.txt", &n1);
    double *gr = golden_read(MM_DIR "rope_yarn_d64_ramp.txt", &n2);
    ck_assert_int_eq((int)n1, 32);
    ck_assert_int_eq((int)n2, 32);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e6, &s), 0);
    ck_assert_int_eq(rope_yarn_ramp(ramp, 64, 1e6, &s), 0);
    for (int i = 0; i < 32; i++) {
        ck_assert_float_eq(inv[i], (float)gi[i]);
        ck_assert_float_eq(ramp[i], (float)gr[i]);
    }
    ck_assert_double_eq(af, 1.0);
    free(gi);
    free(gr);
}
END_TEST
START_TEST(test_scaling_minimind_cos_sin)
{
    static const long rows[13] = {0, 1, 2, 3, 4, 5, 6, 7,
                                  2047, 2048, 4095, 8191, 32767};
    const char *file = _i == 0 ? MM_DIR "rope_yarn_d64_cos.txt"
                               : MM_DIR "rope_yarn_d64_sin.txt";
    size_t n;
    rope_scaling s;
    float *c = malloc(32768 * 64 * sizeof *c);
    float *sn = malloc(32768 * 64 * sizeof *sn);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(sn);
    scaling_minimind_setup(&s);
    ck_assert_int_eq(rope_precompute_freqs_cis_scaled(c, sn, 64, 32768,
                         1e6, &s, ROPE_PRECISION_FLOAT), 0);
    double *g = golden_read(file, &n);
    ck_assert_int_eq((int)n, 13 * 64);
    for (int r = 0; r < 13; r++)
        for (int j = 0; j < 64; j++) {
            float mine = (_i == 0 ? c : sn)[rows[r] * 64 + j];
            float ref = (float)g[r * 64 + j];
            ck_assert_int_le(float_ulp_diff(mine, ref), 1);
        }
    free(g);
    free(c);
    free(sn);
}
END_TEST
START_TEST(test_scaling_minimind_off_within_original)
{
    static const long ends[3] = {16, 2047, 2048};
    long end = ends[_i];
    size_t sz = (size_t)end * 96;
    float *c1 = malloc(sz * sizeof *c1), *s1 = malloc(sz * sizeof *s1);
    float *c2 = malloc(sz * sizeof *c2), *s2 = malloc(sz * sizeof *s2);
    rope_scaling s;
    scaling_minimind_setup(&s);
    ck_assert_int_eq(rope_precompute_freqs_cis_scaled(c1, s1, 96, end,
                         1e6, &s, ROPE_PRECISION_FLOAT), 0);
    ck_assert_int_eq(rope_precompute_freqs_cis(c2, s2, 96, end, 1e6,
                         ROPE_PRECISION_FLOAT), 0);
    ck_assert_mem_eq(c1, c2, sz * sizeof *c1);
    ck_assert_mem_eq(s1, s2, sz * sizeof *s1);
    ck_assert_int_eq(rope_precompute_freqs_cis_scaled(c1, s1, 96, end,
                         1e6, NULL, ROPE_PRECISION_FLOAT), 0);
    ck_assert_mem_eq(c1, c2, sz * sizeof *c1);
    free(c1); free(s1); free(c2); free(s2);
}
END_TEST
/* W4.4.5 The derivations */
START_TEST(test_scaling_dynamic_properties)
{
    static const long seqs[4] = {1, 1000, 2048, 4096};
    float inv[48], ref[48];
    double af;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_DYNAMIC;
    s.factor = 4;
    s.max_position_embeddings = 2048;
    s.seq_len = seqs[_i];
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 96, 1e6, &s), 0);
    double fac = rope_dynamic_factor(4, seqs[_i], 2048);
    rope_default_inv_freq(ref, 96, rope_ntk_aware_base(1e6, fac, 96));
    ck_assert_mem_eq(inv, ref, sizeof inv);
    if (seqs[_i] <= 2048) {
        rope_default_inv_freq(ref, 96, 1e6);
        ck_assert_mem_eq(inv, ref, sizeof inv);
    }
    ck_assert_double_eq(rope_dynamic_factor(4, 4096, 2048), 5.0);
}
END_TEST
START_TEST(test_scaling_dynamic_cached_keys)
{
    int i = 20;
    long qpos = 3000, kpos = 1000;
    float old_inv[32], new_inv[32];
    double af;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_DYNAMIC;
    s.factor = 2;
    s.max_position_embeddings = 2048;
    rope_default_inv_freq(old_inv, 64, 1e4);
    s.seq_len = qpos + 1;
    ck_assert_int_eq(rope_compute_inv_freq(new_inv, &af, 64, 1e4, &s),
                     0);
    double fresh = scaling_pair_score(i, new_inv, qpos, new_inv, kpos);
    double shifted = scaling_pair_score(i, new_inv, qpos + 500,
                                        new_inv, kpos + 500);
    double stale = scaling_pair_score(i, new_inv, qpos, old_inv, kpos);
    double predicted = cos((double)qpos * new_inv[i]
                           - (double)kpos * old_inv[i]);
    ck_assert_double_eq_tol(fresh, shifted, 1e-4);
    ck_assert_double_eq_tol(stale, predicted, 1e-4);
    ck_assert_double_gt(fabs(stale - fresh), 1e-2);
}
END_TEST
START_TEST(test_scaling_yarn_blend)
{
    static const int dims[4] = {32, 64, 96, 128};
    static const double bases[3] = {1e4, 5e5, 1e6};
    static const double factors[4] = {2, 4, 16, 40};
    static const long lengths[3] = {1024, 2048, 8192};
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.yarn_flavor = _i == 0 ? ROPE_YARN_HF : ROPE_YARN_MINIMIND;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int f = 0; f < 4; f++)
                for (int l = 0; l < 3; l++) {
                    s.factor = factors[f];
                    s.original_max_position_embeddings = lengths[l];
                    s.max_position_embeddings =
                        (long)(factors[f] * (double)lengths[l]);
                    {
                        int d = dims[a];
                        float inv[64], omega[64], ramp[64];
                        double af;
                        ck_assert_int_eq(rope_compute_inv_freq(inv, &af, d, bases[b], &s),
                                         0);
                        rope_default_inv_freq(omega, d, bases[b]);
                        rope_yarn_ramp(ramp, d, bases[b], &s);
                        for (int i = 0; i < d / 2; i++) {
                            double g = ramp[i];
                            double ref = omega[i] * ((1 - g) + g / s.factor);
                            ck_assert_int_le(float_ulp_diff(inv[i], (float)ref), 2);
                            if (g == 0 && s.yarn_flavor == ROPE_YARN_HF)
                                ck_assert_float_eq(inv[i], omega[i]);
                            if (g == 1)
                                ck_assert_int_le(float_ulp_diff(inv[i],
                                                     omega[i] / (float)s.factor), 1);
                        }
                    }
                }
}
END_TEST
START_TEST(test_scaling_float_complement)
{
    float ramp[32];
    int differ = 0;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.factor = 16;
    s.original_max_position_embeddings = 2048;
    ck_assert_int_eq(rope_yarn_ramp(ramp, 64, 1e4, &s), 0);
    for (int i = 0; i < 32; i++) {
        volatile float ef = 1.0f - ramp[i];
        differ += 1.0f - ef != ramp[i];
    }
    ck_assert_int_gt(differ, 0);
}
END_TEST
START_TEST(test_scaling_reach)
{
    long n = _i == 0 ? 2048 : 32768, T = 768;
    double fac = (double)n / (double)T, af;
    float omega[48], inv[48];
    rope_scaling s;
    rope_default_inv_freq(omega, 96, 1e6);
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LINEAR;
    s.factor = fac;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 96, 1e6, &s), 0);
    ck_assert_double_le(reach_worst(inv, omega, n, T), 1.01);
    s.rope_type = ROPE_SCALING_YARN;
    s.yarn_flavor = ROPE_YARN_MINIMIND;
    s.original_max_position_embeddings = T;
    s.max_position_embeddings = n;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 96, 1e6, &s), 0);
    ck_assert_double_le(reach_worst(inv, omega, n, T), 1.01);
    rope_default_inv_freq(inv, 96, rope_ntk_aware_base(1e6, fac, 96));
    ck_assert_double_gt(reach_worst(inv, omega, n, T), 1.01);
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.yarn_flavor = ROPE_YARN_MINIMIND;
    s.factor = 16;
    s.original_max_position_embeddings = 2048;
    s.max_position_embeddings = 32768;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 96, 1e6, &s), 0);
    if (n == 2048)
        ck_assert_double_le(reach_worst(inv, omega, n, T), 1.01);
    else {
        ck_assert_double_gt(reach_worst(inv, omega, n, T), 1.01);
        ck_assert_double_le(reach_worst(inv, omega, n, 2048), 1.01);
    }
}
END_TEST
START_TEST(test_scaling_attention_factor_stays_finite)
{
    float inv[32];
    double af;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.factor = 4;
    s.original_max_position_embeddings = 2048;
    s.attention_factor = 1e300;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s),
                     ROPE_SCALING_EATTENTION);
    s.attention_factor = NAN;
    ck_assert_int_eq(rope_scaling_check(&s, 64), ROPE_SCALING_EATTENTION);
    s.attention_factor = 0;
    s.mscale = 1e300;
    s.mscale_all_dim = 1;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s),
                     ROPE_SCALING_EATTENTION);
    s.mscale = 1;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s),
                     ROPE_SCALING_OK);
    ck_assert(af > 0 && af <= FLT_MAX);
}
END_TEST
START_TEST(test_scaling_llama3_bands)
{
    static const int dims[2] = {64, 96};
    static const double bases[2] = {1e4, 1e6};
    int d = dims[_i];
    float inv[48], omega[48];
    double af, prev = 2.0;
    int nmid = 0;
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_LLAMA3;
    s.factor = 8;
    s.low_freq_factor = 1;
    s.high_freq_factor = 4;
    s.original_max_position_embeddings = 8192;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, d, bases[_i], &s),
                     0);
    rope_default_inv_freq(omega, d, bases[_i]);
    for (int i = 0; i < d / 2; i++) {
        double wl = 2 * TEST_PI / omega[i], kappa = (double)inv[i] / omega[i];
        if (wl < 8192.0 / 4 * 0.999)
            ck_assert_float_eq(inv[i], omega[i]);
        else if (wl > 8192.0 * 1.001)
            ck_assert_float_eq(inv[i], omega[i] / 8.0f);
        else if (wl > 8192.0 / 4 * 1.001 && wl < 8192.0 * 0.999) {
            ck_assert_float_gt(inv[i], omega[i] / 8.0f);
            ck_assert_float_lt(inv[i], omega[i]);
            nmid++;
        }
        ck_assert_double_le(kappa, prev * (1 + 1e-6));
        prev = kappa;
    }
    ck_assert_int_gt(nmid, 0);
}
END_TEST
START_TEST(test_scaling_longrope_switch)
{
    double lists[96], af;
    float inv[48], omega[48];
    rope_scaling s;
    rope_scaling_defaults(&s);
    for (int i = 0; i < 48; i++) {
        lists[i] = 1.0 + 0.25 * i;
        lists[48 + i] = 2.0 + 0.5 * i;
    }
    s.rope_type = ROPE_SCALING_LONGROPE;
    s.original_max_position_embeddings = 2048;
    s.max_position_embeddings = 32768;
    s.short_factor = lists;
    s.long_factor = lists + 48;
    s.n_short_factor = s.n_long_factor = 48;
    s.seq_len = 2048 + _i;
    rope_default_inv_freq(omega, 96, 1e6);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 96, 1e6, &s), 0);
    for (int i = 0; i < 48; i++) {
        float ref = (float)(omega[i] / lists[48 * _i + i]);
        ck_assert_int_le(float_ulp_diff(inv[i], ref), 1);
    }
    ck_assert_double_eq_tol(af, sqrt(1 + log(16.0) / log(2048.0)),
                            1e-12);
}
END_TEST
START_TEST(test_scaling_attention_factors)
{
    static const double factors[5] = {1, 2, 4, 16, 40};
    double s_ = factors[_i], af;
    float inv[32];
    rope_scaling s;
    rope_scaling_defaults(&s);
    s.rope_type = ROPE_SCALING_YARN;
    s.factor = s_;
    s.original_max_position_embeddings = 4096;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e6, &s), 0);
    ck_assert_double_eq_tol(af, s_ <= 1 ? 1.0 : 0.1 * log(s_) + 1,
                            1e-12);
    s.mscale = 0.8;
    s.mscale_all_dim = 0.5;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e6, &s), 0);
    double ratio = (0.08 * log(s_) + 1) / (0.05 * log(s_) + 1);
    ck_assert_double_eq_tol(af, ratio, 1e-12);
    s.yarn_flavor = ROPE_YARN_MINIMIND;
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e6, &s), 0);
    ck_assert_double_eq(af, 1.0);
}
END_TEST
START_TEST(test_scaling_full_turns)
{
    static const int dims[3] = {64, 96, 128};
    static const double bases[2] = {1e4, 1e6};
    float inv[64];
    int checked = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (long L = 16; L <= 16777216; L *= 2) {
                double i1 = rope_yarn_correction_dim(1, dims[a],
                                                     bases[b], L);
                double lim = fmin(floor(i1) + 1, dims[a] / 2);
                if (fabs(i1 - nearbyint(i1)) < 1e-3)
                    continue;
                rope_default_inv_freq(inv, dims[a], bases[b]);
                ck_assert_int_eq(rope_count_full_turns(inv, dims[a], L),
                                 (int)fmax(lim, 0));
                checked++;
            }
    ck_assert_int_gt(checked, 100);
}
END_TEST
START_TEST(test_scaling_invalid)
{
    const scaling_invalid_case *c = &scaling_invalid_cases[_i];
    double lists[64] = {0}, af = -1;
    float inv[32] = {0};
    rope_scaling s;
    rope_scaling_defaults(&s);
    for (int i = 0; i < 64; i++)
        lists[i] = 1.0;
    s.rope_type = c->type;
    s.factor = c->factor;
    s.beta_fast = c->beta_fast;
    s.beta_slow = c->beta_slow;
    s.low_freq_factor = c->low;
    s.high_freq_factor = c->high;
    s.original_max_position_embeddings = c->original;
    s.short_factor = lists;
    s.long_factor = lists + 32;
    s.n_short_factor = s.n_long_factor = c->n_list;
    ck_assert_int_eq(rope_scaling_check(&s, c->head_dim), c->expect);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, c->head_dim, 1e4,
                                           &s), c->expect);
    ck_assert_float_eq(inv[0], 0.0f);
    ck_assert_double_eq(af, -1.0);
    ck_assert_str_ne(rope_scaling_strerror(c->expect), "unknown error");
}
END_TEST
/* W4.4.6 The command line */
START_TEST(test_scaling_cli_golden_inv_freq)
{
    const scaling_golden_case *c = &scaling_golden_cases[_i];
    char args[3072], path[256];
    double lists[64], got[33], af;
    float inv[32];
    size_t n;
    rope_scaling s;
    scaling_golden_case_setup(c, &s, lists);
    ck_assert_int_eq(rope_compute_inv_freq(inv, &af, 64, 1e4, &s), 0);
    scaling_cli_args(args, sizeof args, c, lists);
    ck_assert_int_eq(scaling_cli_numbers(args, "inv_freq", "", 1, got,
                                         33), 32);
    snprintf(path, sizeof path, HF_DIR "inv_freq_%s.txt", c->name);
    double *g = golden_read_column(path, 1, &n);
    for (int i = 0; i < 32; i++) {
        ck_assert_float_eq((float)got[i], inv[i]);
        ck_assert_int_le(float_ulp_diff((float)got[i], (float)g[i]), 2);
    }
    free(g);
    ck_assert_int_eq(scaling_cli_numbers(args, "attention_factor", "",
                                         1, got, 2), 1);
    ck_assert_double_eq_tol(got[0],
                            scaling_golden_attention_factor(c->name),
                            1e-12);
}
END_TEST
START_TEST(test_scaling_cli_yarn_tables)
{
    const scaling_golden_case *c =
        &scaling_golden_cases[_i == 0 ? 4 : 7];
    const char *tag = _i == 0 ? "yarn_f16_orig2048"
                              : "yarn_f4_orig4096";
    char args[3072], path[256], extra[160];
    double lists[64], got[8 * 64 + 1];
    size_t n;
    rope_scaling s;
    scaling_golden_case_setup(c, &s, lists);
    ck_assert_int_eq(s.rope_type, ROPE_SCALING_YARN);
    scaling_cli_args(args, sizeof args, c, lists);
    snprintf(path, sizeof path, HF_DIR "yarn_ramp_%s_theta1e4.txt",
             tag);
    double *g = golden_read_column(path, 1, &n);
    ck_assert_int_eq(scaling_cli_numbers(args, "ramp", "", 1, got, 33),
                     32);
    for (int i = 0; i < 32; i++)
        ck_assert_float_eq((float)got[i], (float)g[i]);
    free(g);
    snprintf(path, sizeof path, HF_DIR "cos_sin_%s_theta1e4.txt", tag);
    double *pos = golden_read_column(path, 0, &n);
    ck_assert_int_eq((int)n, 8 * 64);
    int len = snprintf(extra, sizeof extra, " --positions ");
    for (int r = 0; r < 8; r++)
        len += snprintf(extra + len, sizeof extra - (size_t)len, "%s%ld",
                        r ? "," : "", (long)pos[64 * r]);
    for (int col = 3; col <= 4; col++) {
        double *want = golden_read_column(path, col, &n);
        ck_assert_int_eq(scaling_cli_numbers(args, col == 3 ? "cos" : "sin",
                                             extra, 8, got, 8 * 64 + 1),
                         8 * 64);
        for (int j = 0; j < 8 * 64; j++)
            ck_assert_double_le(fabs(got[j] - want[j]),
                                scaling_table_tolerance(pos[j]));
        free(want);
    }
    free(pos);
}
END_TEST
START_TEST(test_scaling_cli_minimind)
{
    static const char *const args[2] = {
        "freqs --head-dim 64 --theta 1e6 --scaling yarn"
        " --yarn-flavor minimind",
        "freqs --head-dim 64 --theta 1e6 --scaling yarn"
        " --yarn-flavor minimind --factor 16"
        " --original-max-position-embeddings 2048 --beta-fast 32"
        " --beta-slow 1 --attention-factor 1"
        " --max-position-embeddings 32768 --precision float"};
    static const char *const what[2] = {"inv_freq", "ramp"};
    static const char *const files[2] = {
        MM_DIR "rope_yarn_d64_inv_freq.txt",
        MM_DIR "rope_yarn_d64_ramp.txt"};
    double got[13 * 64 + 1];
    size_t n;
    for (int k = 0; k < 2; k++) {
        double *g = golden_read(files[k], &n);
        ck_assert_int_eq(scaling_cli_numbers(args[_i], what[k], "", 1,
                                             got, 33), 32);
        for (int i = 0; i < 32; i++)
            ck_assert_float_eq((float)got[i], (float)g[i]);
        free(g);
    }
    ck_assert_int_eq(scaling_cli_numbers(args[_i], "attention_factor",
                                         "", 1, got, 2), 1);
    ck_assert_double_eq(got[0], 1.0);
    for (int k = 0; k < 2; k++) {
        double *g = golden_read(k == 0 ? MM_DIR "rope_yarn_d64_cos.txt"
                                       : MM_DIR "rope_yarn_d64_sin.txt",
                                &n);
        ck_assert_int_eq((int)n, 13 * 64);
        ck_assert_int_eq(scaling_cli_numbers(args[_i], k == 0 ? "cos"
                             : "sin", " --positions 0,1,2,3,4,5,6,7,2047,"
                             "2048,4095,8191,32767", 13, got, 13 * 64 + 1),
                         13 * 64);
        for (int j = 0; j < 13 * 64; j++)
            ck_assert_int_le(float_ulp_diff((float)got[j], (float)g[j]), 1);
        free(g);
    }
}
END_TEST
START_TEST(test_scaling_cli_minimind_table_length)
{
    const char *mm = "freqs --head-dim 96 --scaling yarn"
                     " --yarn-flavor minimind --print inv_freq"
                     " --max-position-embeddings ";
    char args[256];
    cli_result plain = cli_run("freqs --head-dim 96 --print inv_freq");
    ck_assert_int_eq(plain.status, 0);
    snprintf(args, sizeof args, "%s%d", mm, 2048 + _i);
    cli_result r = cli_run(args);
    ck_assert_int_eq(r.status, 0);
    if (_i == 0)
        ck_assert_str_eq(r.out, plain.out);
    else
        ck_assert_str_ne(r.out, plain.out);
    cli_result_free(&r);
    cli_result_free(&plain);
}
END_TEST
START_TEST(test_scaling_cli_rejects_bad_calls)
{
    const scaling_cli_bad_call *b = &scaling_cli_bad_calls[_i];
    static const double ones[33] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1};
    char args[2048];
    size_t n = (size_t)snprintf(args, sizeof args,
        "freqs --head-dim 64 --theta 1e4 --end 1%s %s",
        strstr(b->args, "--print") ? "" : " --print inv_freq", b->args);
    if (b->n_short >= 0)
        n = scaling_cli_list(args, sizeof args, n, "--short-factor",
                             ones, b->n_short);
    if (b->n_long >= 0)
        n = scaling_cli_list(args, sizeof args, n, "--long-factor",
                             ones, b->n_long);
    ck_assert_uint_lt(n, sizeof args);
    cli_result r = cli_run(args);
    ck_assert_msg(r.status == 2, "'%s' gave status %d", args, r.status);
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(cli_line_count(r.err), 1);
    ck_assert_msg(strncmp(r.err, "rope: error: ", 13) == 0
                  && strstr(r.err, b->flag) != NULL,
                  "'%s' gave: %s", args, r.err);
    cli_result_free(&r);
}
END_TEST

/* W4.4 Checking the library against the references */
Suite *scaling_suite(void)
{
    Suite *suite = suite_create("chapter 4: long context");
    TCase *tc = tcase_create("scaling");
    tcase_set_timeout(tc, 30);
    /* 4.4 NTK-aware scaling */
    tcase_add_test(tc, test_scaling_ntk_aware_derivation);
    /* 4.6.4 MiniMind's YaRN, line by line, and Hugging Face's */
    tcase_add_test(tc, test_scaling_flavour_ranges);
    /* W4.4.1 Frequencies and attention factors */
    tcase_add_loop_test(tc, test_scaling_golden_inv_freq, 0,
                        N_SCALING_GOLDEN_CASES);
    tcase_add_loop_test(tc, test_scaling_original_falls_back_on_max, 0, 2);
    /* W4.4.2 The YaRN range and ramp */
    tcase_add_loop_test(tc, test_scaling_golden_yarn_ramp, 0, 2);
    /* W4.4.3 Tables and rotated vectors */
    tcase_add_loop_test(tc, test_scaling_golden_cos_sin, 0, 3);
    tcase_add_loop_test(tc, test_scaling_golden_apply, 0, 3);
    /* W4.4.4 MiniMind's own YaRN */
    tcase_add_test(tc, test_scaling_minimind_inv_freq_and_ramp);
    tcase_add_loop_test(tc, test_scaling_minimind_cos_sin, 0, 2);
    tcase_add_loop_test(tc, test_scaling_minimind_off_within_original,
                        0, 3);
    /* W4.4.5 The derivations */
    tcase_add_loop_test(tc, test_scaling_dynamic_properties, 0, 4);
    tcase_add_test(tc, test_scaling_dynamic_cached_keys);
    tcase_add_loop_test(tc, test_scaling_yarn_blend, 0, 2);
    tcase_add_test(tc, test_scaling_float_complement);
    tcase_add_loop_test(tc, test_scaling_reach, 0, 2);
    tcase_add_test(tc, test_scaling_attention_factor_stays_finite);
    tcase_add_loop_test(tc, test_scaling_llama3_bands, 0, 2);
    tcase_add_loop_test(tc, test_scaling_longrope_switch, 0, 2);
    tcase_add_loop_test(tc, test_scaling_attention_factors, 0, 5);
    tcase_add_test(tc, test_scaling_full_turns);
    tcase_add_loop_test(tc, test_scaling_invalid, 0,
                        N_SCALING_INVALID_CASES);
    /* W4.4.6 The command line */
    tcase_add_loop_test(tc, test_scaling_cli_golden_inv_freq, 0,
                        N_SCALING_GOLDEN_CASES);
    tcase_add_loop_test(tc, test_scaling_cli_yarn_tables, 0, 2);
    tcase_add_loop_test(tc, test_scaling_cli_minimind, 0, 2);
    tcase_add_loop_test(tc, test_scaling_cli_minimind_table_length, 0, 2);
    tcase_add_loop_test(tc, test_scaling_cli_rejects_bad_calls, 0,
                        N_SCALING_CLI_BAD_CALLS);
    /* W4.4 Checking the library against the references */
    suite_add_tcase(suite, tc);
    return suite;
}
