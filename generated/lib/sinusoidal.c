/* 2.1.1 The interface */
/* sinusoidal.c: chapter 2, the sinusoidal position encoding. */
#include <math.h>
#include <stdlib.h>
#include "positions.h"
#include "sinusoidal.h"

/* W2.2 The errors of the interface */
int rope_pe_check(int d_model, double base)
{
    if (d_model <= 0 || d_model % 2 != 0)
        return ROPE_PE_EDMODEL;
    if (!(base > 1.0) || !isfinite(base))
        return ROPE_PE_EBASE;
    return ROPE_PE_OK;
}
/* 2.1.2 The implementation */
double rope_pe_omega(int i, int d_model, double base)
{
    return pow(base, -(double)(2 * i) / (double)d_model);
}
int rope_pe_row(double *row, long t, int d_model, double base)
{
    int err = rope_pe_check(d_model, base);
    if (err != ROPE_PE_OK)
        return err;
    for (int i = 0; i < d_model / 2; i++) {
        double angle = (double)t * rope_pe_omega(i, d_model, base);
        row[2 * i] = sin(angle);
        row[2 * i + 1] = cos(angle);
    }
    return ROPE_PE_OK;
}
int rope_pe_table(double *pe, long seq_len, int d_model, double base)
{
    int err = rope_pe_check(d_model, base);
    if (err != ROPE_PE_OK)
        return err;
    if (seq_len < 0)
        return ROPE_PE_ELEN;
    for (long t = 0; t < seq_len; t++)
        rope_pe_row(pe + (size_t)t * d_model, t, d_model, base);
    return ROPE_PE_OK;
}
int rope_pe_table_float(float *pe, long seq_len, int d_model,
                        float base)
{
    int err = rope_pe_check(d_model, base);
    if (err != ROPE_PE_OK)
        return err;
    if (seq_len < 0)
        return ROPE_PE_ELEN;
    for (int i = 0; i < d_model / 2; i++) {
        float omega = powf(base, -(float)(2 * i) / (float)d_model);
        for (long t = 0; t < seq_len; t++) {
            float angle = (float)t * omega;
            pe[(size_t)t * d_model + 2 * i] = sinf(angle);
            pe[(size_t)t * d_model + 2 * i + 1] = cosf(angle);
        }
    }
    return ROPE_PE_OK;
}
/* 2.2 A shift is a rotation */
void rope_pe_rotation(double m[4], double omega, long r)
{
    double angle = omega * (double)r;
    double c = cos(angle), s = sin(angle);
    m[0] = c;
    m[1] = -s;
    m[2] = s;
    m[3] = c;
}
/* 2.3 The dot product sees only the distance */
double rope_pe_dot(long m, long n, int d_model, double base)
{
    double sum = 0.0;
    for (int i = 0; i < d_model / 2; i++) {
        double w = rope_pe_omega(i, d_model, base);
        double am = (double)m * w, an = (double)n * w;
        sum += sin(am) * sin(an) + cos(am) * cos(an);
    }
    return sum;
}

double rope_pe_offset_dot(long r, int d_model, double base)
{
    double sum = 0.0;
    for (int i = 0; i < d_model / 2; i++)
        sum += cos((double)r * rope_pe_omega(i, d_model, base));
    return sum;
}
/* 2.4.2 The code */
int rope_pe_score_terms(const double *x, const double *pe,
                        const double *wq, const double *wk, int n,
                        int d_model, int d, double *s, double *terms)
{
    size_t nd = (size_t)n * d, nm = (size_t)n * d_model;
    size_t nn = (size_t)n * n;
    double *buf = malloc((4 * nd + nm) * sizeof *buf);
    if (buf == NULL)
        return -1;
    double *xq = buf, *xk = xq + nd, *pq = xk + nd, *pk = pq + nd;
    double *sum = pk + nd;
    rope_linear(x, wq, xq, n, d_model, d);
    rope_linear(x, wk, xk, n, d_model, d);
    rope_linear(pe, wq, pq, n, d_model, d);
    rope_linear(pe, wk, pk, n, d_model, d);
    rope_linear(xq, xk, terms, n, d, n);
    rope_linear(xq, pk, terms + nn, n, d, n);
    rope_linear(pq, xk, terms + 2 * nn, n, d, n);
    rope_linear(pq, pk, terms + 3 * nn, n, d, n);
    for (size_t j = 0; j < nm; j++)
        sum[j] = x[j] + pe[j];
    rope_linear(sum, wq, xq, n, d_model, d);
    rope_linear(sum, wk, xk, n, d_model, d);
    rope_linear(xq, xk, s, n, d, n);
    free(buf);
    return 0;
}
void rope_pe_draw_example(uint64_t seed, int n, int d_model, int d,
                          double *x, double *wq, double *wk)
{
    uint64_t st = seed;
    double wscale = 1.0 / sqrt((double)d_model);
    for (size_t j = 0; j < (size_t)n * d_model; j++)
        x[j] = rope_gaussian(&st);
    for (size_t j = 0; j < (size_t)d_model * d; j++)
        wq[j] = wscale * rope_gaussian(&st);
    for (size_t j = 0; j < (size_t)d_model * d; j++)
        wk[j] = wscale * rope_gaussian(&st);
}
double rope_pe_rms(const double *a, size_t len)
{
    double s = 0.0;
    for (size_t j = 0; j < len; j++)
        s += a[j] * a[j];
    return len > 0 ? sqrt(s / (double)len) : 0.0;
}
/* 2.5 Frequency bands */
double rope_pe_wavelength(int i, int d_model, double base)
{
    return 2.0 * ROPE_PE_PI / rope_pe_omega(i, d_model, base);
}

double rope_pe_half_turn(int i, int d_model, double base)
{
    return ROPE_PE_PI / rope_pe_omega(i, d_model, base);
}
