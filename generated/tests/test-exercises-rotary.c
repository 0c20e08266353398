/* W3.7 The code of the exercises */
/* test-exercises-rotary.c: the tests of chapter 3's exercises. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "exercises-rotary.h"

static const ex_info ex_3_1 = {"exercise 3.1", "unrotate",
    "the vector before rope_apply_rotary_pos_emb",
    "reread section 3.4 (From the rotation to rotate_half, and the "
    "two pairings): the inverse rotation flips the "
    "sign of the sine", NULL};
static const ex_info ex_3_2 = {"exercise 3.2", "reorder projection rows",
    "the same scores with half-split pairs as with interleaved pairs",
    "reread section 3.4 (From the rotation to rotate_half, and the "
    "two pairings): interleaved row 2i goes to "
    "row i, row 2i+1 to row i + head_dim/2", NULL};
static const ex_info ex_3_3 = {"exercise 3.3", "score at an offset",
    "the score of q at m and k at m + r, for any m",
    "reread section 3.3 (The block-diagonal rotation): each pair's "
    "score "
    "turns by r times its frequency",
    "the frequencies computed in double instead of float32: MiniMind's "
    "freqs (and rope_default_inv_freq) are float32 numbers, and the "
    "angle r*freqs[i] is taken from the rounded frequency"};
static const ex_info ex_3_4 = {"exercise 3.4", "half-split to interleaved",
    "out[2i] = x[i] and out[2i+1] = x[i + head_dim/2]",
    "reread section 3.4 (From the rotation to rotate_half, and the "
    "two pairings): pair i is (i, i + head_dim/2) "
    "in MiniMind's layout and (2i, 2i+1) in the interleaved one", NULL};

START_TEST(exercise_3_1_unrotate_inverts_the_rotation)
{
    enum { D = 96, END = 2000 };
    static float c[END * D], s[END * D];
    float x[D], y[D], k[D], spare[D];
    ex_check_long(&ex_3_1, rope_precompute_freqs_cis(c, s, D, END, 1e6,
                      ROPE_PRECISION_FLOAT), 0,
                  "(the library's tables, before your function)");
    randfill(x, D, 31);
    memcpy(y, x, sizeof x);
    rope_ex_unrotate(y, c, s, D, 0);
    for (int j = 0; j < D; j++)
        ex_check_double(&ex_3_1, y[j], x[j], 0, "rope_ex_unrotate(x, "
                        "head_dim = 96, pos = 0): x[%d] (unchanged)", j);
    for (long m = 1; m < END; m += 173) {
        memcpy(y, x, sizeof x); memcpy(k, x, sizeof x);
        rope_apply_rotary_pos_emb(y, spare, c, s, 1, 1, 1, 0, D, m,
                                  ROPE_PAIRING_HALF);
        rope_ex_unrotate(y, c, s, D, m);
        for (int j = 0; j < D; j++)
            ex_check_double(&ex_3_1, y[j], x[j], 1e-6f, "rope_ex_unrotate("
                "rotated x, head_dim = 96, pos = %ld): x[%d]", m, j);
        rope_ex_unrotate(k, c, s, D, m);
        rope_apply_rotary_pos_emb(k, spare, c, s, 1, 1, 1, 0, D, m,
                                  ROPE_PAIRING_HALF);
        for (int j = 0; j < D; j++)
            ex_check_double(&ex_3_1, k[j], x[j], 1e-6f, "rotating "
                "rope_ex_unrotate(x, head_dim = 96, pos = %ld): x[%d]",
                m, j);
    }
}
END_TEST
static void ex_matvec(const float *w, const float *x, float *y,
                      int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int c = 0; c < cols; c++)
            sum += (double)w[r * cols + c] * x[c];
        y[r] = (float)sum;
    }
}

START_TEST(exercise_3_2_reordered_rows_give_the_same_scores)
{
    enum { H = 2, D = 8, IN = 12 };
    float wq[H * D * IN], wk[H * D * IN];
    float hq[H * D * IN], hk[H * D * IN];
    float x[IN], y[IN];
    randfill(wq, H * D * IN, 41); randfill(wk, H * D * IN, 42);
    randfill(x, IN, 43); randfill(y, IN, 44);
    rope_ex_interleaved_to_half_rows(wq, hq, H, D, IN);
    rope_ex_interleaved_to_half_rows(wk, hk, H, D, IN);
    for (int h = 0; h < H; h++)
        for (int r = 0; r < D; r++) {
            int found = 0;
            for (int r2 = 0; r2 < D; r2++)
                found += memcmp(hq + (h * D + r) * IN,
                                wq + (h * D + r2) * IN,
                                IN * sizeof *wq) == 0;
            if (found != 1)
                ex_fail(&ex_3_2, "rope_ex_interleaved_to_half_rows(2 heads "
                        "of 8 rows): new row %d of head %d expected to be one "
                        "old row of the head, got %d matching old rows", r, h, found);
        }
    for (long m = 0; m < 900; m += 149)
        for (long n = 0; n < 900; n += 211)
            for (int h = 0; h < H; h++) {
                float q[D], k[D], q2[D], k2[D];
                ex_matvec(wq + h * D * IN, x, q, D, IN);
                ex_matvec(wk + h * D * IN, y, k, D, IN);
                ex_matvec(hq + h * D * IN, x, q2, D, IN);
                ex_matvec(hk + h * D * IN, y, k2, D, IN);
                rotate_to(q, D, 1e4, m, ROPE_PRECISION_FLOAT,
                          ROPE_PAIRING_INTERLEAVED);
                rotate_to(k, D, 1e4, n, ROPE_PRECISION_FLOAT,
                          ROPE_PAIRING_INTERLEAVED);
                rotate_to(q2, D, 1e4, m, ROPE_PRECISION_FLOAT,
                          ROPE_PAIRING_HALF);
                rotate_to(k2, D, 1e4, n, ROPE_PRECISION_FLOAT,
                          ROPE_PAIRING_HALF);
                ex_check_double(&ex_3_2, dot64(q2, k2, D),
                    dot64(q, k, D), 1e-5, "rope_ex_interleaved_to_half_rows"
                    "(2 heads of 8 rows): head %d, score of m = %ld, "
                    "n = %ld", h, m, n);
            }
}
END_TEST
START_TEST(exercise_3_3_score_depends_on_the_offset)
{
    enum { D = 64 };
    float q[D], k[D], qr[D], kr[D];
    randfill(q, D, 51); randfill(k, D, 52);
    double scale = sqrt(dot64(q, q, D) * dot64(k, k, D));
    for (long m = 0; m < 70000; m += 6007)
        for (long n = 0; n < 70000; n += 7919) {
            memcpy(qr, q, sizeof q); memcpy(kr, k, sizeof k);
            rotate_to(qr, D, 1e6, m, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            rotate_to(kr, D, 1e6, n, ROPE_PRECISION_DOUBLE,
                      ROPE_PAIRING_HALF);
            ex_check_double(&ex_3_3,
                rope_ex_score_at_offset(q, k, D, 1e6, n - m),
                dot64(qr, kr, D), 1e-5 * scale,
                "rope_ex_score_at_offset(q, k, 64, 1e6, r = %ld):",
                n - m);
        }
}
END_TEST
START_TEST(exercise_3_4_half_to_interleaved)
{
    enum { D = 96 };
    float x[D], out[D], rx[D], rout[D];
    for (int j = 0; j < 8; j++) x[j] = (float)j;
    rope_ex_half_to_interleaved(x, out, 8);
    for (int j = 0; j < 8; j++)
        ex_check_double(&ex_3_4, out[j], j % 2 ? 4 + j / 2 : j / 2, 0,
            "rope_ex_half_to_interleaved(x = {0,1,...,7}, 8): out[%d] =",
            j);
    randfill(x, D, 61);
    memcpy(rx, x, sizeof x);
    rotate_to(rx, D, 1e4, 37, ROPE_PRECISION_FLOAT, ROPE_PAIRING_HALF);
    rope_ex_half_to_interleaved(x, out, D);
    rope_ex_half_to_interleaved(rx, rout, D);
    rotate_to(out, D, 1e4, 37, ROPE_PRECISION_FLOAT,
              ROPE_PAIRING_INTERLEAVED);
    for (int j = 0; j < D; j++)
        ex_check_double(&ex_3_4, rout[j], out[j], 1e-6, "convert(rotate("
            "x, pos 37, half pairs)) vs rotate(convert(x), pos 37, "
            "interleaved pairs), head_dim = 96: entry %d", j);
}
END_TEST

const ex_info *const exercises_rotary_table[] = {
    &ex_3_1, &ex_3_2, &ex_3_3, &ex_3_4, NULL
};

Suite *exercises_rotary_suite(void)
{
    Suite *s = suite_create("chapter 3: exercises");
    const struct { const char *name; const TTest *test; } ex[] = {
        {"exercise 3.1", exercise_3_1_unrotate_inverts_the_rotation},
        {"exercise 3.2", exercise_3_2_reordered_rows_give_the_same_scores},
        {"exercise 3.3", exercise_3_3_score_depends_on_the_offset},
        {"exercise 3.4", exercise_3_4_half_to_interleaved},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        TCase *tc = tcase_create(ex[i].name);
        tcase_add_test(tc, ex[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
