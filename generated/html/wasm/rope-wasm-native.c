/* The HTML edition / Interactive figures / The reference program */
/* rope-wasm-native.c: the numbers of the interactive figures from the
   native library, for their test (one request per line on stdin) */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "rope-wasm.h"

static void put_dlist(const char *key, const double *x, int n)
{
    printf("\"%s\":\"", key);
    for (int i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], sizeof u);
        printf("%s%016" PRIx64, i ? " " : "", u);
    }
    printf("\",");
}
static void put_flist(const char *key, const float *x, int n)
{
    printf("\"%s\":\"", key);
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        printf("%s%08" PRIx32, i ? " " : "", u);
    }
    printf("\",");
}
/* one number: a list of one */
static void put_f(const char *key, float x) { put_flist(key, &x, 1); }
static void put_d(const char *key, double x) { put_dlist(key, &x, 1); }
static void put_ilist(const char *key, const int *x, int n)
{
    printf("\"%s\":\"", key);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? " " : "", x[i]);
    printf("\",");
}
static int answer(const char *line)
{
    int a, b, c, d;
    printf("{");
    if (sscanf(line, "rope %d %d %d %d", &a, &b, &c, &d) == 4) {
        if (rw_rope_setup(a) != 0 || b < 0 || b >= RW_NPOS || c < 0
            || c >= RW_NPOS || d < 0 || d >= RW_HALF)
            return 1;
        const float *q = rw_rope_q(), *k = rw_rope_k();
        put_f("omega", rw_rope_inv_freq()[d]);
        put_d("angle-m", rw_rope_angle(b, d));
        put_d("angle-n", rw_rope_angle(c, d));
        put_f("q0", q[b * RW_D + d]);
        put_f("q1", q[b * RW_D + d + RW_HALF]);
        put_f("k0", k[c * RW_D + d]);
        put_f("k1", k[c * RW_D + d + RW_HALF]);
        put_d("score", rw_rope_score(b, c));
        put_d("score-low", rw_rope_curve()[c - b + RW_NPOS - 1]);
        put_dlist("curve", rw_rope_curve(), 2 * RW_NPOS - 1);
    } else if (sscanf(line, "clock %d", &a) == 1) {
        static const int hands[4] = {0, 64, 128, 255};
        if (rw_clock(a) != 0)
            return 1;
        for (int h = 0; h < 4; h++) {
            char key[32];
            snprintf(key, sizeof key, "omega-%d", h);
            put_d(key, rw_clock_omega(hands[h]));
            snprintf(key, sizeof key, "sin-%d", h);
            put_d(key, rw_clock_row()[2 * hands[h]]);
            snprintf(key, sizeof key, "cos-%d", h);
            put_d(key, rw_clock_row()[2 * hands[h] + 1]);
        }
    } else if (sscanf(line, "scaling %d %d %d", &a, &b, &c) == 3) {
        int n = rw_scaling(a, b, c);
        if (n < 0)
            return 1;
        printf("\"count\":\"%d\",", n);
        put_d("attention-factor", rw_scaling_attention_factor());
        put_flist("inv-freq", rw_scaling_inv_freq(), RW_HALF);
        put_dlist("lambda", rw_scaling_lambda(), RW_HALF);
        put_dlist("chi", rw_scaling_chi(), RW_HALF);
        put_ilist("out", rw_scaling_out(), RW_HALF);
    } else if (sscanf(line, "tiles %d %d %d %d", &a, &b, &c, &d) == 4) {
        if (rw_tiles(a, b, c, d) != 0)
            return 1;
        const int *s = rw_tiles_shape();
        uint32_t h = 2166136261u; /* FNV-1a of the classes */
        for (int i = 0; i < s[RW_NQB] * s[RW_NTK]; i++)
            h = (h ^ rw_tiles_class()[i]) * 16777619u;
        put_ilist("shape", s, RW_SHAPE_N);
        printf("\"classes\":\"%08" PRIx32 "\",", h);
        put_ilist("items", rw_tiles_items(), s[RW_ITEMS] * RW_IT_N);
    } else {
        return 1;
    }
    printf("\"in\":\"%.*s\"}\n", (int)strcspn(line, "\r\n"), line);
    return 0;
}

int main(void)
{
    char line[256];
    while (fgets(line, sizeof line, stdin))
        if (answer(line) != 0) {
            fprintf(stderr, "rope-wasm-native: bad request: %s", line);
            return 1;
        }
    return 0;
}
