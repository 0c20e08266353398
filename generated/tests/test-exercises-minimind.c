/* W8.7 The code of the exercises */
/* test-exercises-minimind.c: the tests of chapter 8's exercises. */
#include "tests.h"
#include "exercises-minimind.h"

static const ex_info ex_8_1 = {"exercise 8.1", "floats of the KV cache",
    "2 x num_hidden_layers x num_key_value_heads x head_dim x n_tokens",
    "reread chapter 8's section on the cache: keys and values, every "
    "layer, the key-value heads only",
    "half or twice the answer: the cache holds keys and values, once each"};
static const ex_info ex_8_2 = {"exercise 8.2", "tokens top-p keeps",
    "1 + the number of tokens whose preceding probabilities sum to at "
    "most top_p",
    "reread chapter 8's section on sampling: MiniMind shifts its mask "
    "right by one, so the token that crosses top_p is kept",
    "one more or one less: the sum is of the tokens before, compared "
    "with > (strictly)"};
START_TEST(test_ex_kv_cache_floats)
{
    static const struct { int l, h, d; long n, want; } c[] = {
        {8, 4, 96, 1, 6144}, {8, 4, 96, 32768, 201326592L},
        {3, 5, 7, 11, 2310}, {1, 1, 2, 0, 0}};
    for (int i = 0; i < 4; i++)
        ex_check_long(&ex_8_1, ex_kv_cache_floats(c[i].l, c[i].h, c[i].d,
                                                  c[i].n), c[i].want,
                      "ex_kv_cache_floats(%d, %d, %d, %ld)", c[i].l,
                      c[i].h, c[i].d, c[i].n);
}
END_TEST

START_TEST(test_ex_top_p_count)
{
    static const double p[] = {0.5, 0.25, 0.125, 0.0625, 0.0625};
    static const double flat[] = {0.25, 0.25, 0.25, 0.25};
    static const struct { const double *p; int n; double top_p; int want; }
    c[] = {
        {p, 5, 0.7, 2},    /* 0.5 <= 0.7 keeps the 2nd; 0.75 > 0.7 */
        {p, 5, 0.75, 3},   /* 0.75 equals top_p: the 3rd is kept */
        {p, 5, 0.5, 2},    /* 0.5 equals top_p: the 2nd is kept */
        {p, 5, 0.4, 1},    /* the first token is always kept */
        {p, 5, 0.9375, 5}, /* 0.9375 before the last equals top_p */
        {p, 5, 0.93, 4},
        {p, 5, 1.0, 5},    /* top_p >= 1 keeps all */
        {flat, 4, 0.5, 3}, {flat, 4, 0.49, 2}, {flat, 4, 1e-9, 1},
        {p, 1, 0.1, 1}};
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++)
        ex_check_long(&ex_8_2, ex_top_p_count(c[i].p, c[i].n, c[i].top_p),
                      c[i].want, "ex_top_p_count(case %d: n %d, top_p %g)",
                      i + 1, c[i].n, c[i].top_p);
}
END_TEST

const ex_info *const exercises_minimind_table[] = {&ex_8_1, &ex_8_2, NULL};

Suite *exercises_minimind_suite(void)
{
    Suite *s = suite_create("chapter 8: exercises");
    TCase *tc;
    tc = tcase_create("exercise 8.1");
    tcase_add_test(tc, test_ex_kv_cache_floats);
    suite_add_tcase(s, tc);
    tc = tcase_create("exercise 8.2");
    tcase_add_test(tc, test_ex_top_p_count);
    suite_add_tcase(s, tc);
    return s;
}
