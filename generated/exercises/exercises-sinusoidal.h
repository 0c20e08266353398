/* W2.9 The code of the exercises */
/* exercises-sinusoidal.h: the functions of chapter 2's exercises. */
#ifndef ROPE_EXERCISES_SINUSOIDAL_H
#define ROPE_EXERCISES_SINUSOIDAL_H
#include "rope.h"
void ex_rotation_product(double out[4], double omega, long r, long r2);
void ex_shift_back(double *out, const double *row, int d_model,
                   double base, long r);
long ex_repeat_distance(double omega, double tol, long r_max);
void ex_pe_shift(double out[2], const double in[2], double omega, long r);
#endif
