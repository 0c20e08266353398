/* W7.6 The code of the exercises */
/* test-exercises-evidence.c: the tests of chapter 7's exercises. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "tests.h"
#include "exercises-evidence.h"

static const ex_info ex_7_1 = {"exercise 7.1", "softmax backward",
    "ds_j = p_j (dp_j - sum_l p_l dp_l)",
    "reread section 7.3 (Forward and backward, piece by piece): the "
    "softmax backward", NULL};
static const ex_info ex_7_2 = {"exercise 7.2", "one AdamW step",
    "the parameter after decay and the bias-corrected Adam update",
    "reread section 7.6 (Training): beta1 0.9, beta2 0.999, eps 1e-8, "
    "weight decay 0.01", NULL};
static void ex71_softmax(const double *s, int n, double *p)
{
    double mx = s[0], z = 0;
    for (int i = 1; i < n; i++) mx = fmax(mx, s[i]);
    for (int i = 0; i < n; i++) z += p[i] = exp(s[i] - mx);
    for (int i = 0; i < n; i++) p[i] /= z;
}

START_TEST(test_ex_softmax_backward)
{
    const double h = 1e-4;
    double s[6], p[6], dp[6], ds[6], q[6];
    uint64_t st = 71;
    for (int i = 0; i < 6; i++) {
        s[i] = 4 * rope_uniform(&st) - 2;
        dp[i] = 2 * rope_uniform(&st) - 1;
    }
    ex71_softmax(s, 6, p);
    ex_softmax_backward(p, dp, 6, ds);
    for (int j = 0; j < 6; j++) {
        double d[2], mag = 0;
        for (int k = 0; k < 2; k++) {
            double l[2], s0 = s[j];
            for (int sg = 0; sg < 2; sg++) {
                s[j] = s0 + (sg ? -1 : 1) * h * (k + 1);
                ex71_softmax(s, 6, q);
                l[sg] = 0;
                for (int i = 0; i < 6; i++) {
                    l[sg] += dp[i] * q[i];
                    mag = fmax(mag, fabs(dp[i] * q[i]) * 6);
                }
            }
            s[j] = s0;
            d[k] = (l[0] - l[1]) / (2 * h * (k + 1));
        }
        ex_check_double(&ex_7_1, ds[j], d[0],
                        2 * fabs(d[1] - d[0]) + 64 * DBL_EPSILON * mag / h,
                        "ex_softmax_backward: ds[%d]", j);
    }
}
END_TEST

START_TEST(test_ex_adamw)
{
    rope_ev_config c;
    rope_ev_model md;
    double m = 0, v = 0, theta;
    rope_ev_config_default(&c, ROPE_EV_NOPE);
    rope_ev_init(&md, &c, 72);
    theta = md.params[0];
    for (long step = 1; step <= 5; step++) {
        double g = step % 2 ? 0.3 * step : -0.2;
        md.grads[0] = g;
        rope_ev_adamw_step(&md, 1e-2, 0);
        theta = ex_adamw(theta, g, &m, &v, step, 1e-2);
        ex_check_double(&ex_7_2, theta, md.params[0],
                        1e-12 * fabs(md.params[0]),
                        "ex_adamw: step %ld", step);
    }
    rope_ev_free(&md);
}
END_TEST

const ex_info *const exercises_evidence_table[] = {&ex_7_1, &ex_7_2, NULL};

Suite *exercises_evidence_suite(void)
{
    Suite *s = suite_create("chapter 7: exercises");
    TCase *tc;
    tc = tcase_create("exercise 7.1");
    tcase_add_test(tc, test_ex_softmax_backward);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 7.2");
    tcase_add_test(tc, test_ex_adamw);
    suite_add_tcase(s, tc);
    return s;
}
