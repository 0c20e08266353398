/* A.2 Chapter 2: sinusoidal position encoding */
/* exercises-sinusoidal-solution.c: the book's answers to chapter 2. */
#include <math.h>
#include "exercises-sinusoidal.h"

void ex_rotation_product(double out[4], double omega, long r, long r2)
{
    double a[4], b[4];
    rope_pe_rotation(a, omega, r);
    rope_pe_rotation(b, omega, r2);
    out[0] = a[0] * b[0] + a[1] * b[2];
    out[1] = a[0] * b[1] + a[1] * b[3];
    out[2] = a[2] * b[0] + a[3] * b[2];
    out[3] = a[2] * b[1] + a[3] * b[3];
}
void ex_shift_back(double *out, const double *row, int d_model,
                   double base, long r)
{
    for (int i = 0; i < d_model / 2; i++) {
        double m[4], c = row[2 * i + 1], s = row[2 * i];
        rope_pe_rotation(m, rope_pe_omega(i, d_model, base), r);
        out[2 * i + 1] = m[0] * c + m[2] * s; /* R^T (c, s) */
        out[2 * i] = m[1] * c + m[3] * s;
    }
}
long ex_repeat_distance(double omega, double tol, long r_max)
{
    const double two_pi = 2.0 * ROPE_PE_PI;
    for (long r = 1; r <= r_max; r++) {
        double angle = omega * (double)r;
        double nu = round(angle / two_pi);
        if (nu >= 1.0 && fabs(angle - two_pi * nu) <= tol)
            return r;
    }
    return -1;
}
void ex_pe_shift(double out[2], const double in[2], double omega, long r)
{
    double c = cos(omega * (double)r), s = sin(omega * (double)r);
    out[0] = in[0] * c + in[1] * s;
    out[1] = in[1] * c - in[0] * s;
}
