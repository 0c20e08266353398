/* W5.14 The code of the exercises */
/* test-exercises-attention.c: the tests of chapter 5's exercises. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-attention.h"

static const ex_info ex_5_1 = {"exercise 5.1", "online log-sum-exp",
    "log(sum exp x_j), without overflow, -inf entries ignored",
    "reread section 5.4 (The online softmax): rescale the running sum "
    "when the maximum grows", NULL};
static const ex_info ex_5_2 = {"exercise 5.2", "merge two states",
    "the state (m, l, u) of the two blocks together",
    "reread section 5.4 (The online softmax): m = max(m_a, m_b), scale each "
    "l and u by exp(m_a - m) or exp(m_b - m)", NULL};
static const ex_info ex_5_3 = {"exercise 5.3", "tile class",
    "0 for a tile with no visible key, 2 all visible, 1 mixed",
    "reread section 5.5 (Tiling): query i sees key j when j <= n_kv - n + i", NULL};
static const ex_info ex_5_4 = {"exercise 5.4", "causal FLOPs",
    "4 d h times the number of visible (query, key) pairs",
    "reread section 5.1 (The computation and its cost): count the "
    "keys "
    "j <= n_kv - n + i", NULL};
static const ex_info ex_5_5 = {"exercise 5.5", "causal mask with a cache",
    "0 where key j <= start_pos + i, -inf elsewhere",
    "reread section 5.1 (The computation and its cost), positions: "
    "query i sits at start_pos + i and "
    "sees the cached keys too", NULL};
static const ex_info ex_5_6 = {"exercise 5.6", "rounding to bfloat16",
    "the upper 16 bits of the nearest bfloat16, ties to even",
    "reread section W5b.2 (The code of the bfloat16 path): add 0x7fff "
    "plus the lowest kept bit", NULL};

START_TEST(test_ex_online_logsumexp)
{
    float big[3] = {1000, 999, 1000}, x[1000];
    float masked[3] = {-INFINITY, 1, 2}; /* a masked first score */
    uint64_t st = 51;
    double m = -INFINITY, sum = 0;
    ex_check_double(&ex_5_1, ex_online_logsumexp(big, 3),
                    1000 + log(2 + exp(-1.0)), 2e-4,
                    "ex_online_logsumexp({1000, 999, 1000}, 3):");
    ex_check_double(&ex_5_1, ex_online_logsumexp(big, 1), 1000.0f, 0,
                    "ex_online_logsumexp({1000}, 1):");
    ex_check_double(&ex_5_1, ex_online_logsumexp(masked, 3),
                    log(exp(1.0) + exp(2.0)), 1e-4,
                    "ex_online_logsumexp({-inf, 1, 2}, 3):");
    for (int i = 0; i < 1000; i++) {
        x[i] = (float)(40 * rope_uniform(&st) - 20);
        m = x[i] > m ? x[i] : m;
    }
    for (int i = 0; i < 1000; i++) sum += exp(x[i] - m);
    ex_check_double(&ex_5_1, ex_online_logsumexp(x, 1000), m + log(sum),
                    1e-4, "ex_online_logsumexp(1000 uniform in [-20, 20]):");
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
    ex_check_double(&ex_5_2, out[0], all[0], 1e-6, "ex_merge_states("
                    "scores 0..%d, scores %d..7, d = 3): m", _i - 1, _i);
    for (int c = 1; c < 5; c++)
        ex_check_double(&ex_5_2, out[c], all[c], 1e-5 * all[1],
            "ex_merge_states(scores 0..%d, scores %d..7, d = 3): %s%d",
            _i - 1, _i, c == 1 ? "l, entry " : "u, entry ", c);
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
                        ex_check_long(&ex_5_3, ex_tile_class(q0, 3, j0,
                            4, n, nkv, causal), want, "ex_tile_class(q0 = "
                            "%ld, 3, j0 = %ld, 4, n = %ld, n_kv = %ld, "
                            "causal = %d):", q0, j0, n, nkv, causal);
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
            ex_check_double(&ex_5_4, ex_causal_flops(n, nkv, 8, 3),
                            4.0 * 8 * 3 * count, 0, "ex_causal_flops(n = "
                            "%ld, n_kv = %ld, d = 8, h = 3):", n, nkv);
        }
}
END_TEST
START_TEST(test_ex_causal_mask_with_cache)
{
    static const long cases[4][2] = {{0, 4}, {3, 2}, {5, 1}, {2, 3}};
    float mask[4 * 8];
    for (int c = 0; c < 4; c++) {
        long sp = cases[c][0], n = cases[c][1], nkv = sp + n;
        for (long k = 0; k < n * nkv; k++) mask[k] = NAN;
        ex_causal_mask_with_cache(sp, (int)n, mask);
        for (long i = 0; i < n; i++)
            for (long j = 0; j < nkv; j++)
                ex_check_double(&ex_5_5, mask[i * nkv + j],
                    j <= sp + i ? 0.0 : -INFINITY, 0,
                    "ex_causal_mask_with_cache(start_pos = %ld, seq_len "
                    "= %ld): mask[%ld][%ld] (query at position %ld, key "
                    "%ld)", sp, n, i, j, sp + i, j);
    }
}
END_TEST
static double ex_bf16_value(unsigned h)
{
    uint32_t u = (uint32_t)h << 16;
    float y;
    memcpy(&y, &u, sizeof y);
    return y;
}
START_TEST(test_ex_bf16_round)
{
    uint64_t st = 56;
    for (long i = 0; i < 200002; i++) {
        uint32_t u = (uint32_t)(rope_uniform(&st) * 4294967296.0);
        float x;
        if (i >= 200000) u = i == 200000 ? 0x3f808000u : 0x3f818000u;
        memcpy(&x, &u, sizeof x);
        unsigned h = ex_bf16_round(x), lo = u >> 16, want = lo;
        if (isnan(x)) {
            ex_check_long(&ex_5_6, isnan(ex_bf16_value(h)), 1,
                         "ex_bf16_round(NaN 0x%08x) is a NaN", u);
            continue;
        }
        if ((u & 0x7f800000u) == 0) {
            want = lo & 0x8000u;
        } else if ((u & 0x7f800000u) != 0x7f800000u) {
            double up = ((lo + 1) & 0x7f80u) == 0x7f80u /* past the top */
                        ? copysign(ldexp(1, 128), x) : ex_bf16_value(lo + 1);
            double a = fabs(x - ex_bf16_value(lo)), b = fabs(up - x);
            want = a < b || (a == b && !(lo & 1)) ? lo : lo + 1;
        }
        ex_check_long(&ex_5_6, (long)h, (long)want,
                     "ex_bf16_round(bits 0x%08x)", u);
    }
}
END_TEST

const ex_info *const exercises_attention_table[] = {
    &ex_5_1, &ex_5_2, &ex_5_3, &ex_5_4, &ex_5_5, &ex_5_6, NULL
};

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
    tc = tcase_create("exercise 5.5");
    tcase_add_test(tc, test_ex_causal_mask_with_cache);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 5.6");
    tcase_add_test(tc, test_ex_bf16_round);
    suite_add_tcase(s, tc);
    return s;
}
