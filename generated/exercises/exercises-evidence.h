/* W7.6 The code of the exercises */
/* exercises-evidence.h: the functions of chapter 7's exercises. */
#ifndef ROPE_EXERCISES_EVIDENCE_H
#define ROPE_EXERCISES_EVIDENCE_H
void ex_softmax_backward(const double *p, const double *dp, int n,
                         double *ds);
double ex_adamw(double theta, double g, double *m, double *v, long step,
                double lr);
#endif
