/* test-exercises-attention.c: the tests of chapter 5's exercises. */
#include <math.h>
#include <stdlib.h>
#include "tests.h"
#include "exercises-attention.h"

START_TEST(test_ex_online_logsumexp)
{
    float big[3] = {1000, 999, 1000}, x[1000];
    float masked[3] = {-INFINITY, 1, 2}; /* a masked first score */
    uint64_t st = 51;
    double m = -INFINITY, sum = 0;
    ck_assert_double_eq_tol(ex_online_logsumexp(big, 3),
                            1000 + log(2 + exp(-1.0)), 2e-4);
    ck_assert(ex_online_logsumexp(big, 1) == 1000.0f);
    ck_assert_double_eq_tol(ex_online_logsumexp(masked, 3),
                            log(exp(1.0) + exp(2.0)), 1e-4);
    for (int i = 0; i < 1000; i++) {
        x[i] = (float)(40 * rope_uniform(&st) - 20);
        m = x[i] > m ? x[i] : m;
    }
    for (int i = 0; i < 1000; i++) sum += exp(x[i] - m);
    ck_assert_double_eq_tol(ex_online_logsumexp(x, 1000),
                            m + log(sum), 1e-4);
}
END_TEST
static void ex52_state(const double *s, const double *v, int lo, int hi,
                       float *st)
{
    double m = -INFINITY, l = 0, u[3] = {0, 0, 0};
    for (int j = lo; j < hi; j++) m = s[j] > m ? s[j] : m;
    for (int j = lo; j < hi; j++) {
        l += exp(s[j] - m);
        for (int c = 0; c < 3; c++)
            u[c] += exp(s[j] - m) * v[3 * j + c];
    }
    st[0] = (float)m; st[1] = (float)l;
    for (int c = 0; c < 3; c++) st[2 + c] = (float)u[c];
}
START_TEST(test_ex_merge_states)
{
    double s[8], v[24];
    float a[5], b[5], all[5], out[5] = {NAN, NAN, NAN, NAN, NAN};
    uint64_t st = 52;
    for (int j = 0; j < 8; j++) s[j] = 6 * rope_uniform(&st) - 3;
    for (int j = 0; j < 24; j++) v[j] = 2 * rope_uniform(&st) - 1;
    ex52_state(s, v, 0, _i, a);
    ex52_state(s, v, _i, 8, b);
    ex52_state(s, v, 0, 8, all);
    ex_merge_states(a, b, 3, out);
    ck_assert_double_eq_tol(out[0], all[0], 1e-6);
    for (int c = 1; c < 5; c++)
        ck_assert_double_eq_tol(out[c], all[c], 1e-5 * all[1]);
}
END_TEST
static int ex53_brute(long q0, int bq, long j0, int bk, long n,
                      long nkv, int causal)
{
    int seen = 0, all = 1;
    for (long i = q0; i < q0 + bq && i < n; i++)
        for (long j = j0; j < j0 + bk; j++) {
            int vis = j < nkv && (!causal || j <= nkv - n + i);
            seen |= vis;
            all &= vis;
        }
    return !seen ? 0 : all ? 2 : 1;
}
START_TEST(test_ex_tile_class)
{
    for (int causal = 0; causal < 2; causal++)
        for (long n = 1; n <= 9; n++)
            for (long nkv = n; nkv <= 12; nkv++)
                for (long q0 = 0; q0 < n; q0 += 3)
                    for (long j0 = 0; j0 < nkv; j0 += 4) {
                        int want = ex53_brute(q0, 3, j0, 4, n, nkv,
                                              causal);
                        ck_assert_int_eq(ex_tile_class(q0, 3, j0, 4, n,
                                         nkv, causal), want);
                    }
}
END_TEST
START_TEST(test_ex_causal_flops)
{
    for (long n = 1; n <= 40; n += 13)
        for (long nkv = n; nkv <= n + 30; nkv += 10) {
            double count = 0;
            for (long i = 0; i < n; i++)
                for (long j = 0; j < nkv; j++)
                    count += j <= nkv - n + i;
            ck_assert_double_eq(ex_causal_flops(n, nkv, 8, 3),
                                4.0 * 8 * 3 * count);
        }
}
END_TEST

Suite *exercises_attention_suite(void)
{
    Suite *s = suite_create("chapter 5: exercises");
    TCase *tc;
    tc = tcase_create("exercise 5.1");
    tcase_add_test(tc, test_ex_online_logsumexp);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 5.2");
    tcase_add_loop_test(tc, test_ex_merge_states, 0, 9);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 5.3");
    tcase_add_test(tc, test_ex_tile_class);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 5.4");
    tcase_add_test(tc, test_ex_causal_flops);
    suite_add_tcase(s, tc);
    return s;
}
