/* W4.6 The exercise code */
/* Your answers to the exercises of chapter 4. Fill in the bodies and
   run: make exercise CHAPTER=4 */
#include <math.h>
#include "exercises-scaling.h"

double ex_ntk_aware_base(double rope_base, double factor, int head_dim)
{
    (void)rope_base; (void)factor; (void)head_dim;
    return 0.0;
}

double ex_yarn_correction_dim(double num_rotations, int head_dim,
                              double rope_base, long original)
{
    (void)num_rotations; (void)head_dim;
    (void)rope_base; (void)original;
    return -1.0;
}

int ex_yarn_ranges_differ(int head_dim, double rope_base, long original,
                          double beta_slow)
{
    (void)head_dim; (void)rope_base; (void)original; (void)beta_slow;
    return -1;
}

double ex_llama3_scale(double wavelen, long original, double factor,
                       double low_freq_factor, double high_freq_factor)
{
    (void)wavelen; (void)original; (void)factor;
    (void)low_freq_factor; (void)high_freq_factor;
    return -1.0;
}

double ex_yarn_blend(double omega, int i, double lo, double hi,
                     double factor)
{
    (void)omega; (void)i; (void)lo; (void)hi; (void)factor;
    return 0.0;
}
