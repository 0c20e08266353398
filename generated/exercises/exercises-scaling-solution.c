/* A.4 Chapter 4: long context */
/* exercises-scaling-solution.c: the book's answers to chapter 4. */
#include <math.h>
#include "exercises-scaling.h"

double ex_ntk_aware_base(double rope_base, double factor, int head_dim)
{
    return rope_base
           * pow(factor, (double)head_dim / (double)(head_dim - 2));
}
double ex_yarn_correction_dim(double num_rotations, int head_dim,
                              double rope_base, long original)
{
    const double pi = 3.14159265358979323846;
    return (head_dim * log((double)original / (num_rotations * 2 * pi)))
           / (2 * log(rope_base));
}
int ex_yarn_ranges_differ(int head_dim, double rope_base, long original,
                          double beta_slow)
{
    const double pi = 3.14159265358979323846;
    double e = (double)(head_dim - 2) / head_dim;
    return (double)original > 2 * pi * beta_slow * pow(rope_base, e);
}
double ex_llama3_scale(double wavelen, long original, double factor,
                       double low_freq_factor, double high_freq_factor)
{
    double L = (double)original;
    if (wavelen < L / high_freq_factor)
        return 1.0;
    if (wavelen > L / low_freq_factor)
        return 1.0 / factor;
    double sm = (L / wavelen - low_freq_factor)
                / (high_freq_factor - low_freq_factor);
    return (1 - sm) / factor + sm;
}
double ex_yarn_blend(double omega, int i, double lo, double hi,
                     double factor)
{
    double r = (i - lo) / (hi - lo);
    double gamma = r < 0 ? 0 : (r > 1 ? 1 : r);
    return (1 - gamma) * omega + gamma * omega / factor;
}
