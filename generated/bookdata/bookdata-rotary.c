/* W3.5 Numbers for the prose */
/* bookdata-rotary.c: the numbers and data of chapter 3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"

static void rd_sci(FILE *f, const char *key, double v)
{
    int e = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    if (v == 0 || (e >= -2 && e <= 3)) {
        bd_def(f, key, "%.3g", v);
        return;
    }
    bd_def_sci(f, key, v, 2);
}

static void rd_int(FILE *f, const char *key, long v)
{
    char digits[32], out[64];
    int n = snprintf(digits, sizeof digits, "%ld", v), k = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0 && n > 4)
            k += snprintf(out + k, sizeof out - (size_t)k, "\\,");
        out[k++] = digits[i];
        out[k] = '\0';
    }
    bd_def(f, key, "%s", out);
}

static float *rd_golden(const char *path, size_t *n)
{
    FILE *in = fopen(path, "r");
    size_t cap = 1024, k = 0;
    float *v = malloc(cap * sizeof *v);
    char word[64];
    if (in == NULL || v == NULL) {
        fprintf(stderr, "bookdata: cannot read %s\n", path);
        exit(1);
    }
    while (fscanf(in, "%63s", word) == 1) {
        if (word[0] == '#') { /* skip the rest of a header line */
            int ch;
            while ((ch = fgetc(in)) != EOF && ch != '\n') {}
            continue;
        }
        if (k == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        if (v == NULL)
            exit(1);
        v[k++] = strtof(word, NULL);
    }
    fclose(in);
    *n = k;
    return v;
}
static void rd_fixed4(FILE *f, const char *key, double v)
{
    bd_def(f, key, "\\ensuremath{%.4f}", v);
}

static int rotary_example(FILE *f)
{
    static const long pos[4] = {2, 5, 12, 15};
    char key[64];
    for (int j = 0; j < 4; j++) {
        snprintf(key, sizeof key, "rotary-ex-c%ld", pos[j]);
        rd_fixed4(f, key, cos((double)pos[j]));
        snprintf(key, sizeof key, "rotary-ex-s%ld", pos[j]);
        rd_fixed4(f, key, sin((double)pos[j]));
    }
    rd_fixed4(f, "rotary-ex-score", cos(2.0) * cos(5.0)
                                    + sin(2.0) * sin(5.0));
    rd_fixed4(f, "rotary-ex-score-shift", cos(12.0) * cos(15.0)
                                          + sin(12.0) * sin(15.0));
    const int d = 96;
    const double base = 1e6, two_pi = 2 * acos(-1.0);
    bd_def(f, "rotary-wl-first", "%.2f", two_pi);
    rd_int(f, "rotary-wl-last",
           lround(two_pi * pow(base, 2.0 * (d / 2 - 1) / d)));
    rd_int(f, "rotary-wl-last-i", d / 2 - 1);
    return 0;
}
static void rd_rotate2(float *x, long pos)
{
    float c[2 * 16], s[2 * 16], unused[2] = {0, 0};
    rope_precompute_freqs_cis(c, s, 2, 16, 1e4, ROPE_PRECISION_DOUBLE);
    rope_apply_rotary_pos_emb(x, unused, c, s, 1, 1, 1, 1, 2, pos,
                              ROPE_PAIRING_HALF);
}

static int rotary_worked(FILE *f)
{
    char key[64];
    const long m = 5;
    bd_def(f, "rotary-tab-m", "%ld", m);
    for (long r = -3; r <= 3; r++) { /* key at n = m + r */
        float q[2] = {1, 0}, k[2] = {1, 0}, k1[2] = {1, 1};
        snprintf(key, sizeof key, "rotary-tab-nope-%ld", r + 3);
        rd_fixed4(f, key, (double)q[0] * k[0] + (double)q[1] * k[1]);
        rd_rotate2(q, m);
        rd_rotate2(k, m + r);
        rd_rotate2(k1, m + r);
        snprintf(key, sizeof key, "rotary-tab-even-%ld", r + 3);
        rd_fixed4(f, key, (double)q[0] * k[0] + (double)q[1] * k[1]);
        snprintf(key, sizeof key, "rotary-tab-odd-%ld", r + 3);
        rd_fixed4(f, key, (double)q[0] * k1[0] + (double)q[1] * k1[1]);
    }
    float x[2] = {1, 2}; /* the pair written out, at position 1 */
    rd_rotate2(x, 1);
    rd_fixed4(f, "rotary-ex2-c", cos(1.0));
    rd_fixed4(f, "rotary-ex2-s", sin(1.0));
    rd_fixed4(f, "rotary-ex2-r0", x[0]);
    rd_fixed4(f, "rotary-ex2-r1", x[1]);
    float v[3 * 8], out[3 * 8];
    for (int j = 0; j < 3 * 8; j++)
        v[j] = (float)(j + 1);
    rope_rotate_half(v, out, 4); /* (1, 2, 3, 4) */
    for (int j = 0; j < 4; j++) {
        snprintf(key, sizeof key, "rotary-rh4-%d", j);
        bd_def(f, key, "\\ensuremath{%g}", (double)out[j]);
    }
    for (int t = 0; t < 3; t++) { /* three tokens of width 8 */
        rope_rotate_half(v + 8 * t, out + 8 * t, 8);
        for (int j = 0; j < 8; j++) {
            snprintf(key, sizeof key, "rotary-rht-%d-%d", t, j);
            bd_def(f, key, "%g", (double)v[8 * t + j]);
            snprintf(key, sizeof key, "rotary-rhy-%d-%d", t, j);
            bd_def(f, key, "\\ensuremath{%g}", (double)out[8 * t + j]);
        }
    }
    return 0;
}
static int rotary_shapes(FILE *f)
{
    const int hidden = 768, heads = 8, kv_heads = 4, batch = 1, seq = 6;
    rd_int(f, "rotary-sh-hidden", hidden);
    rd_int(f, "rotary-sh-heads", heads);
    rd_int(f, "rotary-sh-kv", kv_heads);
    rd_int(f, "rotary-sh-hd", hidden / heads);
    rd_int(f, "rotary-sh-rep", heads / kv_heads);
    rd_int(f, "rotary-sh-batch", batch);
    rd_int(f, "rotary-sh-seq", seq);
    rd_int(f, "rotary-sh-qcols", heads * (hidden / heads));
    rd_int(f, "rotary-sh-kcols", kv_heads * (hidden / heads));
    return 0;
}
#define MMDIR "tests/golden/minimind/"
static int rotary_golden_numbers(FILE *f)
{
    static const struct { int d; long end; const char *c, *s; } t[2] = {
        {64, 32, MMDIR "rope_default_d64_end32_cos.txt",
                 MMDIR "rope_default_d64_end32_sin.txt"},
        {96, 8, MMDIR "rope_default_d96_end8_cos.txt",
                MMDIR "rope_default_d96_end8_sin.txt"}};
    long ncos = 0, dcos = 0, dsin = 0;
    float c[32 * 64], s[32 * 64];
    for (int i = 0; i < 2; i++) {
        size_t n, m;
        float *gc = rd_golden(t[i].c, &n);
        float *gs = rd_golden(t[i].s, &m);
        rope_precompute_freqs_cis(c, s, t[i].d, t[i].end, 1e6,
                                  ROPE_PRECISION_FLOAT);
        for (size_t j = 0; j < n && j < m; j++) {
            dcos += c[j] != gc[j];
            dsin += s[j] != gs[j];
        }
        ncos += (long)n;
        free(gc); free(gs);
    }
    rd_int(f, "rotary-cos-count", ncos);
    rd_int(f, "rotary-cos-ulp-count", dcos);
    rd_int(f, "rotary-sin-ulp-count", dsin);
    size_t nq, nk, noq, nok;
    float *q = rd_golden(MMDIR "apply_rope_q_in.txt", &nq);
    float *k = rd_golden(MMDIR "apply_rope_k_in.txt", &nk);
    float *oq = rd_golden(MMDIR "apply_rope_c1_default_pos0_q_out.txt",
                            &noq);
    float *ok = rd_golden(MMDIR "apply_rope_c1_default_pos0_k_out.txt",
                            &nok);
    if (nq != 4608 || nk != 1152 || noq != nq || nok != nk)
        return 1;
    rope_precompute_freqs_cis(c, s, 96, 6, 1e6, ROPE_PRECISION_FLOAT);
    rope_apply_rotary_pos_emb(q, k, c, s, 1, 6, 8, 2, 96, 0,
                              ROPE_PAIRING_HALF);
    double maxdiff = 0;
    long ndiff = 0;
    for (size_t j = 0; j < nq + nk; j++) {
        float a = j < nq ? q[j] : k[j - nq];
        float b = j < nq ? oq[j] : ok[j - nq];
        maxdiff = fmax(maxdiff, fabs((double)a - b));
        ndiff += a != b;
    }
    rd_sci(f, "rotary-own-table-maxdiff", maxdiff);
    rd_int(f, "rotary-own-table-ndiff", ndiff);
    rd_int(f, "rotary-apply-count", (long)(nq + nk));
    free(q); free(k); free(oq); free(ok);
    size_t nh;
    float *h = rd_golden("tests/golden/hf/cos_sin_default_theta1e4.txt",
                           &nh);
    float inv[32];
    double worst = 0;
    rope_default_inv_freq(inv, 64, 1e4);
    for (size_t r = 0; r + 8 <= nh; r += 8) {
        long pos = (long)h[r];
        int j = (int)h[r + 1];
        rope_freqs_cis_from_inv_freq(c, s, inv, 64, pos, pos + 1, 1.0,
                                     ROPE_PRECISION_FLOAT);
        double tol = 4.0 * pos * ldexp(1.0, -24) + 1e-6;
        worst = fmax(worst, fabs(c[j] - (double)h[r + 6]) / tol);
        worst = fmax(worst, fabs(s[j] - (double)h[r + 7]) / tol);
    }
    bd_def(f, "rotary-hf-worst-ratio", "%.2f", worst);
    free(h);
    return 0;
}
static int rotary_precision_table(FILE *f)
{
    enum { D = 96 };
    const double base = 1e6;
    static const long t[7] = {10, 100, 1000, 4096, 32767, 100000,
                              1000000};
    float inv[D / 2], cf[D], sf[D], cd[D], sd[D];
    char key[64];
    double de_max = 0;
    rope_default_inv_freq(inv, D, base);
    rd_int(f, "rotary-prec-d", D);
    bd_def(f, "rotary-prec-base", "\\ensuremath{10^{%d}}",
           (int)lround(log10(base)));
    for (int r = 0; r < 7; r++) {
        double err[4] = {0, 0, 0, 0}; /* ff df fe de */
        if (rope_freqs_cis_from_inv_freq(cf, sf, inv, D, t[r], t[r] + 1, 1.0,
                                         ROPE_PRECISION_FLOAT) != 0
            || rope_freqs_cis_from_inv_freq(cd, sd, inv, D, t[r], t[r] + 1, 1.0,
                                            ROPE_PRECISION_DOUBLE) != 0)
            return 1;
        for (int i = 0; i < D / 2; i++) {
            double ideal = (double)t[r] * pow(base, -2.0 * i / D);
            double same = (double)t[r] * (double)inv[i];
            double ref[2] = {ideal, same};
            for (int k = 0; k < 2; k++) {
                double c = cos(ref[k]), s = sin(ref[k]);
                err[2 * k] = fmax(err[2 * k],
                                  fmax(fabs(cf[i] - c), fabs(sf[i] - s)));
                err[2 * k + 1] = fmax(err[2 * k + 1],
                                      fmax(fabs(cd[i] - c), fabs(sd[i] - s)));
            }
        }
        static const char *name[4] = {"ff", "df", "fe", "de"};
        de_max = fmax(de_max, err[3]);
        snprintf(key, sizeof key, "rotary-prec-t-%d", r);
        rd_int(f, key, t[r]);
        snprintf(key, sizeof key, "rotary-prec-bound-%d", r);
        rd_sci(f, key, (double)t[r] * ldexp(1.0, -24));
        for (int e = 0; e < 4; e++) {
            snprintf(key, sizeof key, "rotary-prec-%s-%d", name[e], r);
            rd_sci(f, key, err[e]);
        }
    }
    rd_sci(f, "rotary-prec-de-max", de_max);
    rd_sci(f, "rotary-prec-bound-32k", 32767 * ldexp(1.0, -24));
    /* the original length of MiniMind's YaRN, not its training length */
    rd_int(f, "rotary-mm-train-len", 2048);
    rd_sci(f, "rotary-prec-bound-train", 2048 * ldexp(1.0, -24));
    rd_sci(f, "rotary-prec-bound-1m", 1e6 * ldexp(1.0, -24));
    return 0;
}
static int rotary_decay(FILE *f, const char *dir)
{
    enum { D = 96 };
    const long rmax = 2000, rmark = 1000;
    FILE *dat = bd_open(dir, "rotary-decay.dat");
    fprintf(dat, "r b1e4 b1e6\n");
    for (long r = 0; r <= rmax; r += 2)
        fprintf(dat, "%ld %.6f %.6f\n", r,
                rope_decay_average(D, 1e4, (double)r),
                rope_decay_average(D, 1e6, (double)r));
    bd_close(dat);
    rd_int(f, "rotary-decay-d", D);
    rd_int(f, "rotary-decay-rmax", rmax);
    rd_int(f, "rotary-decay-r", rmark);
    bd_def(f, "rotary-decay-a0", "%g", rope_decay_average(D, 1e4, 0));
    bd_def(f, "rotary-decay-at-r-1e4", "%.2f",
           rope_decay_average(D, 1e4, rmark));
    bd_def(f, "rotary-decay-at-r-1e6", "%.2f",
           rope_decay_average(D, 1e6, rmark));
    return 0;
}
static double rd_score(const float *q, const float *k, int d)
{
    double sum = 0;
    for (int i = 0; i < d; i++)
        sum += (double)q[i] * k[i];
    return sum;
}

static int rotary_signed(FILE *f, const char *dir)
{
    enum { D = 96, RMAX = 128, SMALL = 8 };
    const long m0 = RMAX; /* keys from position 0 to 2 * RMAX */
    const unsigned seed = 3;
    FILE *dat = bd_open(dir, "rotary-signed.dat");
    fprintf(dat, "r even odd\n");
    for (long r = -SMALL; r <= SMALL; r++) {
        float q[2] = {1, 0}, k[2] = {1, 0}, k1[2] = {1, 1};
        rd_rotate2(q, SMALL);
        rd_rotate2(k, SMALL + r);
        rd_rotate2(k1, SMALL + r);
        fprintf(dat, "%ld %.6f %.6f\n", r, rd_score(q, k, 2),
                rd_score(q, k1, 2));
    }
    bd_close(dat);
    static float c[(2 * RMAX + 1) * D], s[(2 * RMAX + 1) * D];
    float u[D], q[D], k[D], unused[D];
    uint64_t state = seed;
    for (int i = 0; i < D; i++)
        u[i] = (float)rope_gaussian(&state);
    for (int i = 0; i < D; i++)
        q[i] = u[i] + 0.5f * (float)rope_gaussian(&state);
    for (int i = 0; i < D; i++)
        k[i] = u[i] + 0.5f * (float)rope_gaussian(&state);
    if (rope_precompute_freqs_cis(c, s, D, 2 * RMAX + 1, 1e6,
                                  ROPE_PRECISION_FLOAT) != 0)
        return 1;
    double score[2 * RMAX + 1];
    float qr[D], kr[D];
    memcpy(qr, q, sizeof q);
    rope_apply_rotary_pos_emb(qr, unused, c, s, 1, 1, 1, 0, D, m0,
                              ROPE_PAIRING_HALF);
    for (long r = -RMAX; r <= RMAX; r++) {
        memcpy(kr, k, sizeof k);
        rope_apply_rotary_pos_emb(kr, unused, c, s, 1, 1, 1, 0, D, m0 + r,
                                  ROPE_PAIRING_HALF);
        score[r + RMAX] = rd_score(qr, kr, D) / sqrt((double)D);
    }
    dat = bd_open(dir, "rotary-signed96.dat");
    fprintf(dat, "r s mirror\n");
    for (long r = -RMAX; r <= RMAX; r++)
        fprintf(dat, "%ld %.6f %.6f\n", r, score[r + RMAX],
                score[RMAX - r]);
    bd_close(dat);
    rd_int(f, "rotary-signed-rmax", SMALL);
    rd_int(f, "rotary-signed96-rmax", RMAX);
    rd_int(f, "rotary-signed96-d", D);
    rd_int(f, "rotary-signed96-seed", seed);
    return 0;
}
static int rotary_clocks(FILE *f, const char *dir)
{
    enum { D = 96, NPOS = 5 };
    static const long pos[NPOS] = {1, 10, 100, 1000, 10000};
    float inv[D / 2];
    char key[64];
    rope_default_inv_freq(inv, D, 1e6);
    FILE *dat = bd_open(dir, "rotary-clocks.dat");
    for (int p = 0; p < NPOS; p++)
        fprintf(dat, "%sx%d y%d", p ? " " : "", p + 1, p + 1);
    fprintf(dat, "\n");
    for (int i = 0; i < D / 2; i++) {
        double len = 1.0 - 0.6 * i / (D / 2 - 1);
        for (int p = 0; p < NPOS; p++)
            fprintf(dat, "%s0 0", p ? " " : "");
        fprintf(dat, "\n");
        for (int p = 0; p < NPOS; p++) {
            double a = rope_angle(pos[p], inv[i], ROPE_PRECISION_FLOAT);
            fprintf(dat, "%s%.5f %.5f", p ? " " : "", len * cos(a),
                    len * sin(a));
        }
        fprintf(dat, "\n\n");
    }
    bd_close(dat);
    long still = 0;
    for (int i = 0; i < D / 2; i++)
        still += rope_angle(pos[3], inv[i], ROPE_PRECISION_FLOAT) < 1.0;
    rd_int(f, "rotary-clock-pairs", D / 2);
    rd_int(f, "rotary-clock-d", D);
    rd_int(f, "rotary-clock-still-3", still);
    for (int p = 0; p < NPOS; p++) {
        snprintf(key, sizeof key, "rotary-clock-m-%d", p);
        rd_int(f, key, pos[p]);
    }
    return 0;
}
static int rotary_memory(FILE *f)
{
    const double L = 32768, d = 96, heads = 8, MiB = 1048576.0;
    double rope = 2 * L * d * 4, bias = heads * L * L * 4;
    double shaw = L * L * d * 4;
    rd_int(f, "rotary-mem-positions", (long)L);
    rd_int(f, "rotary-mem-d", (long)d);
    rd_int(f, "rotary-mem-heads", (long)heads);
    bd_def(f, "rotary-mem-rope-mib", "%g", rope / MiB);
    bd_def(f, "rotary-mem-bias-gib", "%g", bias / (1024 * MiB));
    bd_def(f, "rotary-mem-shaw-gib", "%g", shaw / (1024 * MiB));
    rd_int(f, "rotary-mem-ratio", lround(bias / rope));
    return 0;
}

int bookdata_rotary(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "rotary");
    int rc = rotary_example(f) || rotary_worked(f) || rotary_shapes(f)
             || rotary_golden_numbers(f) || rotary_precision_table(f)
             || rotary_decay(f, dir) || rotary_memory(f)
             || rotary_signed(f, dir) || rotary_clocks(f, dir);
    bd_close(f);
    return rc;
}
