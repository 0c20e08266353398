/* W7.6 The code of the exercises */
/* Your answers to the exercises of chapter 7. Fill in the bodies and
   run: make exercise CHAPTER=7 */
#include <math.h>
#include "exercises-evidence.h"

void ex_softmax_backward(const double *p, const double *dp, int n,
                         double *ds)
{
    (void)p; (void)dp;
    for (int i = 0; i < n; i++)
        ds[i] = NAN;
}

double ex_adamw(double theta, double g, double *m, double *v, long step,
                double lr)
{
    (void)theta; (void)g; (void)m; (void)v; (void)step; (void)lr;
    return NAN;
}
