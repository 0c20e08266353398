/* W4.6 The exercise code */
/* exercises-scaling.h: the functions of chapter 4's exercises. */
#ifndef ROPE_EXERCISES_SCALING_H
#define ROPE_EXERCISES_SCALING_H
double ex_ntk_aware_base(double rope_base, double factor, int head_dim);
double ex_yarn_correction_dim(double num_rotations, int head_dim,
                              double rope_base, long original);
int ex_yarn_ranges_differ(int head_dim, double rope_base, long original,
                          double beta_slow);
double ex_llama3_scale(double wavelen, long original, double factor,
                       double low_freq_factor, double high_freq_factor);
double ex_yarn_blend(double omega, int i, double lo, double hi,
                     double factor);
#endif
