/* W2.8 The numbers of the chapter */
/* bookdata-sinusoidal.c: the figures, tables and numbers of
   chapter 2. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "bookdata.h"

static const char *pe_tex_num(char *buf, size_t size, double v,
                              int digits)
{
    if (v != 0.0 && (fabs(v) < 1e-3 || fabs(v) >= 1e6))
        return bd_sci(buf, size, v, digits);
    if (fabs(v) >= pow(10.0, digits) - 0.5)
        snprintf(buf, size, "\\ensuremath{%.0f}", v);
    else
        snprintf(buf, size, "\\ensuremath{%.*g}", digits, v);
    return buf;
}
static int pe_write_heatmap(const char *dir, FILE *num)
{
    enum { D = 64, L = 100 };
    static double pe[L * D];
    if (rope_pe_table(pe, L, D, 1e4) != ROPE_PE_OK)
        return 1;
    FILE *f = bd_open(dir, "sinusoidal-heatmap.dat");
    fputs("t j pe\n", f);
    for (int j = 0; j < D; j++)
        for (int t = 0; t < L; t++)
            fprintf(f, "%d %d %.5f\n", t, j, pe[t * D + j]);
    bd_close(f);
    bd_def(num, "sinusoidal-heat-d", "%d", D);
    bd_def(num, "sinusoidal-heat-len", "%d", L);
    bd_def(num, "sinusoidal-heat-last", "%d", L - 1);
    return 0;
}
static int pe_write_dot(const char *dir, FILE *num)
{
    enum { D = 64, KMAX = 256, T1 = 1000 };
    char buf[64];
    double fmin = INFINITY;
    FILE *f = bd_open(dir, "sinusoidal-dot.dat");
    fputs("r t0 t1\n", f);
    for (long k = -KMAX; k <= KMAX; k++) {
        double a = rope_pe_dot(0, k, D, 1e4);
        fprintf(f, "%ld %.6f %.6f\n", k, a,
                rope_pe_dot(T1, T1 + k, D, 1e4));
        fmin = fmin < a ? fmin : a;
    }
    bd_close(f);
    bd_def(num, "sinusoidal-dot-d", "%d", D);
    bd_def(num, "sinusoidal-dot-t", "%d", T1);
    bd_def(num, "sinusoidal-dot-kmax", "%d", KMAX);
    bd_def(num, "sinusoidal-dot-f0", "%.0f",
           rope_pe_offset_dot(0, D, 1e4));
    bd_def(num, "sinusoidal-dot-fmin", "%.2f", fmin);
    enum { NEAR_KMAX = 20000 }; /* the range of the peak test */
    long best = 1;
    for (long k = 2; k <= NEAR_KMAX; k++)
        if (cos((double)k) > cos((double)best))
            best = k;
    bd_def(num, "sinusoidal-near-kmax", "%d", NEAR_KMAX);
    bd_def(num, "sinusoidal-near-k", "%ld", best);
    double turns = round((double)best / (2.0 * ROPE_PE_PI));
    bd_def(num, "sinusoidal-near-turns", "%.0f", turns);
    bd_def(num, "sinusoidal-near-delta", "%s",
           pe_tex_num(buf, sizeof buf,
                   fabs((double)best - 2.0 * ROPE_PE_PI * turns), 2));
    bd_def(num, "sinusoidal-near-gap", "%s",
           pe_tex_num(buf, sizeof buf, 1.0 - cos((double)best), 2));
    bd_def(num, "sinusoidal-dot-sumerr", "%s",
           pe_tex_num(buf, sizeof buf, (D / 2) * (D / 2) * DBL_EPSILON / 2,
                   1));
    return 0;
}
static int pe_write_bands(const char *dir, FILE *num)
{
    enum { D = 512, EVERY = 32, TEXT = 2048 };
    char b1[64], b2[64], b3[64], b4[64];
    int global = 0, local = 0;
    FILE *f = bd_open(dir, "sinusoidal-wavelength.dat");
    fputs("i lambda half\n", f);
    for (int i = 0; i < D / 2; i++) {
        double h = rope_pe_half_turn(i, D, 1e4);
        fprintf(f, "%d %.6e %.6e\n", i, rope_pe_wavelength(i, D, 1e4),
                h);
        global += h > TEXT;
        local += 2.0 * sin(rope_pe_omega(i, D, 1e4) / 2.0) > 0.1;
    }
    bd_close(f);
    FILE *t = bd_open(dir, "sinusoidal-bands.tex");
    fputs("\\begin{tabular}{rrrrr}\n\\toprule\n$i$ & $\\omega_i$ & "
          "$\\lambda_i$ & $\\lambda_i/2$ & $2\\sin(\\omega_i/2)$ \\\\\n"
          "\\midrule\n", t);
    for (int i = 0; i < D / 2; i++) {
        if (i % EVERY != 0 && i != D / 2 - 1)
            continue;
        double w = rope_pe_omega(i, D, 1e4);
        fprintf(t, "%d & %s & %s & %s & %s \\\\\n", i,
                bd_sci(b1, sizeof b1, w, 3),
                pe_tex_num(b2, sizeof b2, rope_pe_wavelength(i, D, 1e4), 3),
                pe_tex_num(b3, sizeof b3, rope_pe_half_turn(i, D, 1e4), 3),
                bd_sci(b4, sizeof b4, 2.0 * sin(w / 2.0), 3));
    }
    fputs("\\bottomrule\n\\end{tabular}\n", t);
    bd_close(t);
    bd_def(num, "sinusoidal-bands-d", "%d", D);
    bd_def(num, "sinusoidal-bands-pairs", "%d", D / 2);
    bd_def(num, "sinusoidal-bands-every", "%d", EVERY);
    bd_def(num, "sinusoidal-bands-text", "%d", TEXT);
    bd_def(num, "sinusoidal-bands-global", "%d", global);
    bd_def(num, "sinusoidal-bands-local", "%d", local);
    bd_def(num, "sinusoidal-lambda-first", "%.2f",
           rope_pe_wavelength(0, D, 1e4));
    bd_def(num, "sinusoidal-lambda-last", "%.0f",
           rope_pe_wavelength(D / 2 - 1, D, 1e4));
    bd_def(num, "sinusoidal-step-first", "%.2f",
           2.0 * sin(rope_pe_omega(0, D, 1e4) / 2.0));
    bd_def(num, "sinusoidal-step-last", "%s",
           pe_tex_num(b1, sizeof b1,
                   2.0 * sin(rope_pe_omega(D / 2 - 1, D, 1e4) / 2.0), 2));
    return 0;
}
/* 2.2 A shift is a rotation */
static const long pe_grid_t[] = {0, 1, 2, 7, 100, 1000, 4095, 32767,
                                 1000000};
static const long pe_grid_k[] = {-1000, -7, -1, 0, 1, 2, 5, 17, 100,
                                 999, 4096, 65536};
#define N_PE_GRID_T (sizeof pe_grid_t / sizeof pe_grid_t[0])
#define N_PE_GRID_K (sizeof pe_grid_k / sizeof pe_grid_k[0])

/* W2.8 The numbers of the chapter */
static int pe_write_float_accuracy(FILE *num)
{
    enum { L = 8192, D = 64 };
    char buf[64];
    float *pf = malloc(sizeof *pf * L * D);
    double *pd = malloc(sizeof *pd * L * D), worst = 0.0;
    long at = 0;
    if (pf == NULL || pd == NULL
        || rope_pe_table_float(pf, L, D, 1e4f) != ROPE_PE_OK
        || rope_pe_table(pd, L, D, 1e4) != ROPE_PE_OK) {
        free(pf); free(pd);
        return 1;
    }
    for (long j = 0; j < (long)L * D; j++)
        if (fabs(pf[j] - pd[j]) > worst) {
            worst = fabs(pf[j] - pd[j]);
            at = j / D;
        }
    free(pf); free(pd);
    bd_def(num, "sinusoidal-float-len", "%d", L);
    bd_def(num, "sinusoidal-float-entries", "%ld", (long)L * D);
    bd_def(num, "sinusoidal-float-maxdiff", "%s",
           pe_tex_num(buf, sizeof buf, worst, 2));
    bd_def(num, "sinusoidal-float-argmax", "%ld", at);
    return 0;
}
static int pe_write_rotation_accuracy(FILE *num)
{
    enum { D = 64 };
    double pe_t[D], pe_tk[D], m[4], worst = 0.0, ratio = 0.0;
    char buf[64];
    for (size_t a = 0; a < N_PE_GRID_T; a++)
        for (size_t g = 0; g < N_PE_GRID_K; g++) {
            long t = pe_grid_t[a], k = pe_grid_k[g];
            rope_pe_row(pe_t, t, D, 1e4);
            rope_pe_row(pe_tk, t + k, D, 1e4);
            for (int i = 0; i < D / 2; i++) {
                double w = rope_pe_omega(i, D, 1e4);
                double bound = DBL_EPSILON * (2.0 * (labs(t) + labs(k)) * w + 8.0);
                rope_pe_rotation(m, w, k);
                double ec = fabs(m[0] * pe_t[2 * i + 1] + m[1] * pe_t[2 * i]
                                 - pe_tk[2 * i + 1]);
                double es = fabs(m[2] * pe_t[2 * i + 1] + m[3] * pe_t[2 * i]
                                 - pe_tk[2 * i]);
                double e = es > ec ? es : ec;
                worst = e > worst ? e : worst;
                ratio = e / bound > ratio ? e / bound : ratio;
            }
        }
    bd_def(num, "sinusoidal-rot-maxerr", "%s",
           pe_tex_num(buf, sizeof buf, worst, 2));
    bd_def(num, "sinusoidal-rot-ratio", "%.2f", ratio);
    long lo[2] = {pe_grid_t[0], pe_grid_k[0]}, hi[2] = {lo[0], lo[1]};
    for (size_t a = 0; a < N_PE_GRID_T; a++) {
        lo[0] = pe_grid_t[a] < lo[0] ? pe_grid_t[a] : lo[0];
        hi[0] = pe_grid_t[a] > hi[0] ? pe_grid_t[a] : hi[0];
    }
    for (size_t g = 0; g < N_PE_GRID_K; g++) {
        lo[1] = pe_grid_k[g] < lo[1] ? pe_grid_k[g] : lo[1];
        hi[1] = pe_grid_k[g] > hi[1] ? pe_grid_k[g] : hi[1];
    }
    bd_def(num, "sinusoidal-grid-d", "%d", D);
    bd_def(num, "sinusoidal-grid-nt", "%zu", N_PE_GRID_T);
    bd_def(num, "sinusoidal-grid-nk", "%zu", N_PE_GRID_K);
    bd_def(num, "sinusoidal-grid-tmin", "%s",
           pe_tex_num(buf, sizeof buf, (double)lo[0], 1));
    bd_def(num, "sinusoidal-grid-tmax", "%s",
           pe_tex_num(buf, sizeof buf, (double)hi[0], 1));
    bd_def(num, "sinusoidal-grid-kmin", "%s",
           pe_tex_num(buf, sizeof buf, (double)lo[1], 1));
    bd_def(num, "sinusoidal-grid-kmax", "%s",
           pe_tex_num(buf, sizeof buf, (double)hi[1], 1));
    return 0;
}

static int pe_write_accuracy(FILE *num)
{
    char buf[64];
    bd_def(num, "sinusoidal-golden-tolmax", "%s",
           pe_tex_num(buf, sizeof buf,
                      DBL_EPSILON * (4.0 * 32767 + 4.0), 2));
    return pe_write_float_accuracy(num)
        || pe_write_rotation_accuracy(num);
}
static int pe_write_terms(const char *dir, FILE *num)
{
    enum { N = 16, DM = 16, D = 16, NN = N * N };
    double x[N * DM], pe[N * DM], wq[DM * D], wk[DM * D];
    double s[NN], terms[4 * NN], cross[NN];
    double sumerr = 0.0, dev = 0.0, spread = 0.0, max[5] = {0};
    char buf[64];
    rope_pe_draw_example(BOOK_SEED, N, DM, D, x, wq, wk);
    if (rope_pe_table(pe, N, DM, 1e4) != ROPE_PE_OK
        || rope_pe_score_terms(x, pe, wq, wk, N, DM, D, s, terms) != 0)
        return 1;
    for (int j = 0; j < NN; j++) {
        double sum = 0.0;
        for (int r = 0; r < 4; r++) {
            sum += terms[r * NN + j];
            max[r] = fmax(max[r], fabs(terms[r * NN + j]));
        }
        max[4] = fmax(max[4], fabs(s[j]));
        sumerr = fmax(sumerr, fabs(sum - s[j]));
        cross[j] = terms[NN + j] + terms[2 * NN + j];
    }
    for (int m = 1; m < N; m++)
        for (int n = 1; n < N; n++)
            dev = fmax(dev, fabs(terms[3 * NN + m * N + n]
                                 - terms[3 * NN + (m - 1) * N + n - 1]));
    for (int r = 1 - N; r < N; r++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int m = 0; m < N; m++) {
            int n = m + r;
            if (n < 0 || n >= N) continue;
            lo = fmin(lo, terms[3 * NN + m * N + n]);
            hi = fmax(hi, terms[3 * NN + m * N + n]);
        }
        spread = fmax(spread, hi - lo);
    }
    static const char *const keys[5] = {"1", "2", "3", "4", "s"};
    char key[64];
    for (int r = 0; r < 5; r++) {
        const double *a = r < 4 ? terms + r * NN : s;
        snprintf(key, sizeof key, "sinusoidal-rms-%s", keys[r]);
        bd_def(num, key, "%.2f", rope_pe_rms(a, NN));
        snprintf(key, sizeof key, "sinusoidal-max-%s", keys[r]);
        bd_def(num, key, "%.2f", max[r]);
    }
    bd_def(num, "sinusoidal-rms-cross", "%.2f", rope_pe_rms(cross, NN));
    bd_def(num, "sinusoidal-t4-dev", "%.2f", dev);
    bd_def(num, "sinusoidal-t4-spread", "%.2f", spread);
    bd_def(num, "sinusoidal-t4-ratio", "%.1f",
           dev / rope_pe_rms(terms + 3 * NN, NN));
    bd_def(num, "sinusoidal-terms-sumerr", "%s",
           pe_tex_num(buf, sizeof buf, sumerr, 1));
    bd_def(num, "sinusoidal-terms-n", "%d", N);
    bd_def(num, "sinusoidal-terms-dmodel", "%d", DM);
    bd_def(num, "sinusoidal-terms-d", "%d", D);
    bd_def(num, "sinusoidal-terms-seed", "%d", BOOK_SEED);
    FILE *hf = bd_open(dir, "sinusoidal-terms-heat.dat");
    fputs("m n t1 t2 t3 t4\n", hf);
    for (int m = 0; m < N; m++)
        for (int n = 0; n < N; n++)
            fprintf(hf, "%d %d %.5f %.5f %.5f %.5f\n", m, n,
                    terms[m * N + n], terms[NN + m * N + n],
                    terms[2 * NN + m * N + n], terms[3 * NN + m * N + n]);
    bd_close(hf);
    bd_def(num, "sinusoidal-terms-heat-max", "%.0f",
           ceil(2.0 * rope_pe_rms(terms, NN)));
    bd_def(num, "sinusoidal-terms-last", "%d", N - 1);
    return 0;
}
static int pe_write_convergents(FILE *num, const long *rec, int nrec,
                                long kmax)
{
    enum { TERMS = 8 };
    char cf[128], conv[256];
    double x = 1.0 / (2.0 * ROPE_PE_PI);
    long double xl = 1.0L / (2.0L * 3.141592653589793238462643383L);
    long p2 = 0, q2 = 1, p1 = 1, q1 = 0; /* p/q at j-2 and j-1 */
    int ncf = 0, nconv = 0, matched = 0, ok = 1;
    for (int j = 0; j < TERMS; j++) {
        long a = (long)floor(x), p = a * p1 + p2, q = a * q1 + q2;
        ok = ok && a == (long)floorl(xl);
        ncf += snprintf(cf + ncf, sizeof cf - (size_t)ncf,
                        j == 0 ? "%ld;" : j == 1 ? " %ld" : ", %ld", a);
        if (j >= 1 && q <= kmax) {
            nconv += snprintf(conv + nconv, sizeof conv - (size_t)nconv,
                              "%s$%ld/%ld$", j == 1 ? "" : ", ", p, q);
            if (nrec > 0 && q >= rec[0]) {
                ok = ok && matched < nrec && rec[matched] == q;
                matched++;
            }
        }
        p2 = p1; q2 = q1; p1 = p; q1 = q;
        x = 1.0 / (x - (double)a);
        xl = 1.0L / (xl - (long double)a);
    }
    bd_def(num, "sinusoidal-cf", "%s", cf);
    bd_def(num, "sinusoidal-convergents", "%s", conv);
    if (ok && matched == nrec)
        return 0;
    fprintf(stderr, "bookdata: the records of pair 0 are not the "
                    "convergent denominators of 1/(2 pi)\n");
    return 1;
}

static int pe_write_records(const char *dir, FILE *num)
{
    enum { KMAX = 1000, MAXREC = 32 };
    const double first = 0.5; /* radians: a near repeat at all */
    char b1[64];
    double best = first;
    long rec[MAXREC];
    int nrec = 0;
    FILE *t = bd_open(dir, "sinusoidal-records.tex");
    fputs("\\begin{tabular}{rrr}\n\\toprule\noffset $r$ & turns $\\nu$ & "
          "$\\theta(r) = |r - 2\\pi\\nu|$ \\\\\n\\midrule\n", t);
    for (long k = 1; k <= KMAX; k++) {
        double r = round((double)k / (2.0 * ROPE_PE_PI));
        double delta = fabs((double)k - 2.0 * ROPE_PE_PI * r);
        if (r < 1.0 || delta >= best)
            continue;
        best = delta;
        if (nrec < MAXREC)
            rec[nrec++] = k;
        fprintf(t, "%ld & %.0f & %s \\\\\n", k, r,
                pe_tex_num(b1, sizeof b1, delta, 2));
    }
    fputs("\\bottomrule\n\\end{tabular}\n", t);
    bd_close(t);
    bd_def(num, "sinusoidal-records-kmax", "%d", KMAX);
    bd_def(num, "sinusoidal-records-first", "%.1f", first);
    static const double tols[3] = {0.05, 0.01, 1e-3};
    static const char *const names[3] = {"a", "b", "c"};
    char key[64];
    for (int e = 0; e < 3; e++)
        for (long k = 1; k <= 100000; k++) {
            double r = round((double)k / (2.0 * ROPE_PE_PI));
            double delta = fabs((double)k - 2.0 * ROPE_PE_PI * r);
            if (r < 1.0 || delta > tols[e])
                continue;
            snprintf(key, sizeof key, "sinusoidal-rec-%s", names[e]);
            bd_def(num, key, "%ld", k);
            snprintf(key, sizeof key, "sinusoidal-rec-%s-tol", names[e]);
            bd_def(num, key, "%s", pe_tex_num(b1, sizeof b1, tols[e], 1));
            snprintf(key, sizeof key, "sinusoidal-rec-%s-delta", names[e]);
            bd_def(num, key, "%s", pe_tex_num(b1, sizeof b1, delta, 1));
            break;
        }
    return pe_write_convergents(num, rec, nrec, KMAX);
}
static int pe_write_example(FILE *num)
{
    enum { D = 8, T = 50, K = 3 };
    double row[D], later[D], m[4], rot[2];
    char key[64];
    if (rope_pe_row(row, T, D, 1e4) != ROPE_PE_OK
        || rope_pe_row(later, T + K, D, 1e4) != ROPE_PE_OK)
        return 1;
    for (int j = 0; j < D; j++) {
        snprintf(key, sizeof key, "sinusoidal-ex-pe-%d", j);
        bd_def(num, key, "\\ensuremath{%.4f}", row[j]);
    }
    rope_pe_rotation(m, rope_pe_omega(1, D, 1e4), K);
    rot[0] = m[0] * row[3] + m[1] * row[2]; /* cos, then sin */
    rot[1] = m[2] * row[3] + m[3] * row[2];
    if (fabs(rot[0] - later[3]) > 1e-12
        || fabs(rot[1] - later[2]) > 1e-12)
        return 1;
    bd_def(num, "sinusoidal-ex-cos", "\\ensuremath{%.4f}", m[0]);
    bd_def(num, "sinusoidal-ex-sin", "\\ensuremath{%.4f}", m[2]);
    bd_def(num, "sinusoidal-ex-rot-0", "\\ensuremath{%.4f}", rot[0]);
    bd_def(num, "sinusoidal-ex-rot-1", "\\ensuremath{%.4f}", rot[1]);
    bd_def(num, "sinusoidal-ex-dot", "\\ensuremath{%.4f}",
           rope_pe_dot(T, T + K, D, 1e4));
    return 0;
}
/* W2.8.1 The two circle figures */
static void pe_write_arc(FILE *f, double r, double from, double to)
{
    for (int s = 0; s <= 40; s++) {
        double a = from + (to - from) * s / 40.0;
        fprintf(f, "%.5f %.5f\n", r * cos(a), r * sin(a));
    }
}

static int pe_write_circle(const char *dir, FILE *num)
{
    enum { D = 8, PAIR = 1, T = 50, K = 3 };
    static const long at[4] = {0, K, T, T + K};
    static const char *const names[4] = {"0", "r", "t", "tr"};
    double row[D], w = rope_pe_omega(PAIR, D, 1e4);
    char key[64];
    for (int p = 0; p < 4; p++) {
        if (rope_pe_row(row, at[p], D, 1e4) != ROPE_PE_OK) return 1;
        snprintf(key, sizeof key, "sinusoidal-circle-x-%s", names[p]);
        bd_def(num, key, "%.5f", row[2 * PAIR + 1]); /* cos across */
        snprintf(key, sizeof key, "sinusoidal-circle-y-%s", names[p]);
        bd_def(num, key, "%.5f", row[2 * PAIR]); /* sin up */
    }
    bd_def(num, "sinusoidal-circle-t", "%d", T);
    bd_def(num, "sinusoidal-circle-r", "%d", K);
    bd_def(num, "sinusoidal-circle-angle", "%.1f", K * w);
    FILE *f = bd_open(dir, "sinusoidal-circle.dat");
    fputs("x y\n", f);
    pe_write_arc(f, 1.0, 0.0, 2.0 * ROPE_PE_PI);
    bd_close(f);
    f = bd_open(dir, "sinusoidal-circle-arc0.dat");
    fputs("x y\n", f);
    pe_write_arc(f, 1.0, 0.0, K * w);
    bd_close(f);
    f = bd_open(dir, "sinusoidal-circle-arct.dat");
    fputs("x y\n", f);
    pe_write_arc(f, 1.0, T * w, (T + K) * w);
    bd_close(f);
    f = bd_open(dir, "sinusoidal-circle-wedge.dat");
    fputs("x y\n", f);
    pe_write_arc(f, 0.3, T * w, (T + K) * w);
    bd_close(f);
    return 0;
}
static int pe_write_clocks(const char *dir, FILE *num)
{
    enum { D = 512, NT = 6, NH = 4 };
    static const long ts[NT] = {0, 1, 10, 100, 1000, 10000};
    static const int pairs[NH] = {0, D / 8, D / 4, D / 2 - 1};
    static const double len[NH] = {0.95, 0.8, 0.65, 0.5};
    static double row[D];
    char key[64];
    for (int h = 0; h < NH; h++) {
        snprintf(key, sizeof key, "sinusoidal-clock-%d.dat", h);
        FILE *f = bd_open(dir, key);
        fputs("cx cy u v\n", f);
        for (int c = 0; c < NT; c++) {
            if (rope_pe_row(row, ts[c], D, 1e4) != ROPE_PE_OK) return 1;
            fprintf(f, "%.2f 0 %.5f %.5f\n", 2.6 * c,
                    len[h] * row[2 * pairs[h]], len[h] * row[2 * pairs[h] + 1]);
        }
        bd_close(f);
        snprintf(key, sizeof key, "sinusoidal-clock-i-%d", h);
        bd_def(num, key, "%d", pairs[h]);
    }
    FILE *f = bd_open(dir, "sinusoidal-clock-dial.dat");
    fputs("x y\n", f);
    for (int c = 0; c < NT; c++) {
        for (int s = 0; s <= 60; s++)
            fprintf(f, "%.5f %.5f\n", 2.6 * c + cos(ROPE_PE_PI * s / 30.0),
                    sin(ROPE_PE_PI * s / 30.0));
        fputs("nan nan\n", f);
        snprintf(key, sizeof key, "sinusoidal-clock-t-%d", c);
        bd_def(num, key, "%ld", ts[c]);
    }
    bd_close(f);
    bd_def(num, "sinusoidal-clock-d", "%d", D);
    return 0;
}
/* W2.8.2 The frequency bands as Fourier features */
static double pe_band_mean(long r, int band, int d_model)
{
    int per = d_model / 6; /* pairs per band: a third of d_model/2 */
    double sum = 0.0;
    for (int i = band * per; i < (band + 1) * per; i++)
        sum += cos((double)r * rope_pe_omega(i, d_model, 1e4));
    return sum / per;
}

static int pe_write_fourier(const char *dir, FILE *num)
{
    enum { D = 96, RMAX = 100000 };
    static const char *const names[3] = {"high", "mid", "low"};
    long half[3] = {0, 0, 0};
    FILE *f = bd_open(dir, "sinusoidal-fourier.dat");
    fputs("r high mid low\n", f);
    for (long r = 1; r <= RMAX; r = r < 100 ? r + 1 : (long)(r * 1.01)) {
        double g[3];
        for (int b = 0; b < 3; b++) {
            g[b] = pe_band_mean(r, b, D);
            if (half[b] == 0 && g[b] < 0.5) half[b] = r;
        }
        fprintf(f, "%ld %.5f %.5f %.5f\n", r, g[0], g[1], g[2]);
    }
    bd_close(f);
    char key[64];
    for (int b = 0; b < 3; b++) {
        long r = 1;
        while (r <= RMAX && pe_band_mean(r, b, D) >= 0.5) r++;
        if (r > RMAX || r > half[b]) return 1;
        snprintf(key, sizeof key, "sinusoidal-fourier-half-%s", names[b]);
        bd_def(num, key, "%ld", r);
    }
    bd_def(num, "sinusoidal-fourier-d", "%d", D);
    bd_def(num, "sinusoidal-fourier-pairs", "%d", D / 2);
    bd_def(num, "sinusoidal-fourier-per", "%d", D / 6);
    static const long at[4] = {1, 3, 300, 3000};
    for (int b = 0; b < 3; b += 2)
        for (int j = 0; j < 4; j++) {
            snprintf(key, sizeof key, "sinusoidal-fourier-g-%s-%ld",
                     names[b], at[j]);
            bd_def(num, key, "\\ensuremath{%.2f}", pe_band_mean(at[j], b, D));
        }
    return 0;
}

/* W2.8 The numbers of the chapter */
int bookdata_sinusoidal(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "sinusoidal");
    int rc = pe_write_heatmap(dir, f) || pe_write_dot(dir, f)
          || pe_write_bands(dir, f) || pe_write_accuracy(f)
          || pe_write_terms(dir, f) || pe_write_records(dir, f)
          || pe_write_example(f) || pe_write_circle(dir, f)
          || pe_write_clocks(dir, f) || pe_write_fourier(dir, f);
    bd_close(f);
    return rc;
}
