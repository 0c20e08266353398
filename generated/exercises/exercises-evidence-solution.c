/* A.7 Chapter 7: evidence */
/* exercises-evidence-solution.c: the book's answers to chapter 7. */
#include <math.h>
#include "exercises-evidence.h"

void ex_softmax_backward(const double *p, const double *dp, int n,
                         double *ds)
{
    double acc = 0;
    for (int j = 0; j < n; j++)
        acc += p[j] * dp[j];
    for (int l = 0; l < n; l++)
        ds[l] = p[l] * (dp[l] - acc);
}
double ex_adamw(double theta, double g, double *m, double *v, long step,
                double lr)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    theta *= 1 - lr * wd;
    return theta - lr * (*m / (1 - pow(b1, (double)step)))
                   / (sqrt(*v / (1 - pow(b2, (double)step))) + eps);
}
