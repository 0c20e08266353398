/* W6.7 The code of the exercises */
/* test-exercises-ring.c: the tests of chapter 6's exercises. */
#include <math.h>
#include <stdlib.h>
#include "tests.h"
#include "exercises-ring.h"

static const ex_info ex_6_1 = {"exercise 6.1", "zigzag positions",
    "S + t for the tokens t of chunks r and 2P-1-r of 2P, in order",
    "reread section 6.4 (The causal mask across shards): chunk c starts "
    "at c floor(n/K) + min(c, n mod K)", NULL};
static const ex_info ex_6_2 = {"exercise 6.2", "merge with log-sum-exps",
    "the output and log-sum-exp over the union of the two key sets",
    "reread section 6.2 (The ring): weights exp(lse_i - lse), lse = "
    "max + log1p(exp(min - max))", NULL};
static const ex_info ex_6_3 = {"exercise 6.3", "smallest hiding block",
    "the least c with 2 h d c^2 / eta >= 8 c h_kv d / nu",
    "reread section 6.8 (The cost of the ring): c_min = 4 h_kv eta / "
    "(h nu), rounded up", NULL};
START_TEST(test_ex_zigzag_positions)
{
    long pos[64];
    for (int P = 1; P <= 4; P++)
        for (long n = 2 * P; n <= 2 * P + 9; n += 3)
            for (int r = 0; r < P; r++) {
                rope_ring_shard s;
                long at = 0;
                rope_ring_shard_of(&s, ROPE_RING_ZIGZAG, P, r, n);
                for (long i = 0; i < s.tokens; i++) pos[i] = -7;
                ex_zigzag_positions(n, P, r, 100, pos);
                for (int c = 0; c < s.n_chunks; c++)
                    for (long t = s.start[c]; t < s.start[c] + s.len[c];
                         t++, at++)
                        ex_check_long(&ex_6_1, pos[at], 100 + t,
                            "ex_zigzag_positions(n = %ld, P = %d, r = %d, "
                            "S = 100): pos[%ld]", n, P, r, at);
            }
}
END_TEST

static void ex62_state(const double *s, const double *v, int lo, int hi,
                       float *o, float *lse)
{
    double m = -INFINITY, l = 0, u[3] = {0, 0, 0};
    for (int j = lo; j < hi; j++) m = s[j] > m ? s[j] : m;
    for (int j = lo; j < hi; j++) {
        l += exp(s[j] - m);
        for (int c = 0; c < 3; c++) u[c] += exp(s[j] - m) * v[3 * j + c];
    }
    *lse = hi > lo ? (float)(m + log(l)) : -INFINITY;
    for (int c = 0; c < 3; c++) o[c] = hi > lo ? (float)(u[c] / l) : 0.0f;
}
START_TEST(test_ex_merge_lse)
{
    for (int shift = 0; shift <= 1000; shift += 1000)
        for (int cut = 0; cut <= 8; cut++) {
            double s[8], v[24];
            float o1[3], o2[3], all[3], o[3] = {NAN, NAN, NAN};
            float l1, l2, lall, l = NAN;
            uint64_t st = 62;
            for (int j = 0; j < 8; j++) s[j] = 6 * rope_uniform(&st) - 3 + shift;
            for (int j = 0; j < 24; j++) v[j] = 2 * rope_uniform(&st) - 1;
            ex62_state(s, v, 0, cut, o1, &l1);
            ex62_state(s, v, cut, 8, o2, &l2);
            ex62_state(s, v, 0, 8, all, &lall);
            ex_merge_lse(o1, l1, o2, l2, 3, o, &l);
            ex_check_double(&ex_6_2, l, lall, 1e-5 * fabs(lall) + 1e-5,
                "ex_merge_lse(scores 0..%d, %d..7, shift %d): lse", cut - 1,
                cut, shift);
            for (int c = 0; c < 3; c++)
                ex_check_double(&ex_6_2, o[c], all[c], 1e-5,
                    "ex_merge_lse(scores 0..%d, %d..7, shift %d): o[%d]",
                    cut - 1, cut, shift, c);
        }
}
END_TEST
START_TEST(test_ex_min_hiding_block)
{
    static const double speed[4] = {1.234567e9, 7.31e10, 2.13e11,
                                    9.87654e14};
    static const double link[3] = {3.125e9, 12.5e9, 50e9};
    static const int heads[3][2] = {{8, 4}, {8, 2}, {4, 4}};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int g = 0; g < 3; g++) {
                int h = heads[g][0], hkv = heads[g][1], d = 96;
                long c0 = (long)ceil(4.0 * hkv * speed[a]
                                     / (h * link[b])), want = -1;
                for (long c = c0 - 1; c <= c0 + 1 && want < 0; c++)
                    if (c >= 1 && 2.0 * h * d * c * c / speed[a]
                                  >= 8.0 * c * hkv * d / link[b])
                        want = c;
                ex_check_long(&ex_6_3, ex_min_hiding_block(h, hkv, d,
                    speed[a], link[b]), want,
                    "ex_min_hiding_block(h = %d, h_kv = %d, d = 96, eta "
                    "= %g, nu = %g)", h, hkv, speed[a], link[b]);
            }
}
END_TEST

const ex_info *const exercises_ring_table[] = {
    &ex_6_1, &ex_6_2, &ex_6_3, NULL
};

Suite *exercises_ring_suite(void)
{
    Suite *s = suite_create("chapter 6: exercises");
    TCase *tc;
    tc = tcase_create("exercise 6.1");
    tcase_add_test(tc, test_ex_zigzag_positions);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 6.2");
    tcase_add_test(tc, test_ex_merge_lse);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 6.3");
    tcase_add_test(tc, test_ex_min_hiding_block);
    suite_add_tcase(s, tc);
    return s;
}
