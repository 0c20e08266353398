/* test-attention.c: the claims of chapter 5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

typedef struct {
    rope_attention_params p;
    float *q, *k, *v, *cos, *sin;
    size_t nq, nkv;
} att_problem;

static float *att_random(size_t n, uint64_t *st)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    ck_assert(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(2.0 * rope_uniform(st) - 1.0);
    return x;
}
static void att_make(att_problem *a, int n, int nkv, int h, int hkv,
                     int d, long start, uint64_t seed)
{
    uint64_t st = seed;
    rope_attention_defaults(&a->p);
    a->p.seq_len = n; a->p.kv_len = nkv;
    a->p.n_heads = h; a->p.n_kv_heads = hkv; a->p.head_dim = d;
    a->p.start_pos = start;
    a->nq = (size_t)n * h * d;
    a->nkv = (size_t)nkv * hkv * d;
    a->q = att_random(a->nq, &st);
    a->k = att_random(a->nkv, &st);
    a->v = att_random(a->nkv, &st);
    a->p.table_len = start + nkv;
    a->cos = malloc(sizeof(float) * a->p.table_len * d);
    a->sin = malloc(sizeof(float) * a->p.table_len * d);
    ck_assert(a->cos && a->sin);
    ck_assert_int_eq(rope_precompute_freqs_cis(a->cos, a->sin, d,
        a->p.table_len, 1e6, ROPE_PRECISION_FLOAT), 0);
    a->p.freqs_cos = a->cos;
    a->p.freqs_sin = a->sin;
}
static void att_free(att_problem *a)
{
    free(a->q); free(a->k); free(a->v); free(a->cos); free(a->sin);
}

static double att_maxdiff(const float *x, const float *y, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - y[i]);
        m = e > m || e != e ? e : m;    /* a NaN counts as huge */
    }
    return m;
}
#define ATT_TOL 2e-5
static int att_paths(rope_simd *paths)
{
    static const rope_simd all[] = {
        ROPE_SIMD_SCALAR, ROPE_SIMD_AVX2, ROPE_SIMD_AVX512
    };
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (rope_simd_available(all[i])) paths[n++] = all[i];
    return n;
}
START_TEST(test_attention_two_keys_closed_form)
{
    float q[2] = {1, 0}, k[4] = {0, 0, 1, 0}, v[4] = {1, 2, -3, 5};
    float o[2];
    double w = exp(1 / sqrt(2.0));
    rope_attention_params p;
    rope_attention_defaults(&p);
    p.kv_len = 2; p.n_heads = p.n_kv_heads = 1; p.head_dim = 2;
    for (int impl = 0; impl < 2; impl++) {
        int e = impl ? rope_attention(o, q, k, v, &p)
                     : rope_attention_naive(o, q, k, v, &p);
        ck_assert_int_eq(e, 0);
        ck_assert_double_eq_tol(o[0], (1 - 3 * w) / (1 + w), 1e-6);
        ck_assert_double_eq_tol(o[1], (2 + 5 * w) / (1 + w), 1e-6);
    }
}
END_TEST
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ATT_SWEEP_MAX_LEN 257
#else
#define ATT_SWEEP_MAX_LEN 1000
#endif
static const int att_lens[] = {1, 2, 7, 63, 64, 65, 257, 1000};
static const int att_dims[] = {2, 8, 64, 96, 128};
static const int att_kvh[] = {8, 4, 2, 1};

START_TEST(test_attention_sweep)
{
    int n = att_lens[_i / 5], d = att_dims[_i % 5];
    rope_simd paths[3];
    int np = att_paths(paths);
    if (n > ATT_SWEEP_MAX_LEN) return;
    for (int hi = 0; hi < 4; hi++)
        for (int var = 0; var < 8; var++) {
            if (n > 65 && var != (hi + 2 * (_i % 5)) % 8) continue;
            att_problem a;
            long start = var & 2 ? 37 : 0;
            att_make(&a, n, n + (start ? 19 : 0), 8, att_kvh[hi], d, start,
                     1000 + (uint64_t)(_i * 32 + hi * 8 + var));
            a.p.causal = var & 1;
            a.p.pairing = var & 4 ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
            float *ref = malloc(sizeof(float) * a.nq);
            float *out = malloc(sizeof(float) * a.nq);
            ck_assert_int_eq(rope_attention_naive(ref, a.q, a.k, a.v, &a.p), 0);
            for (int pi = 0; pi < np; pi++) {
                a.p.simd = paths[pi];
                ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
                double e = att_maxdiff(ref, out, a.nq);
                ck_assert_msg(e <= ATT_TOL, "n=%d d=%d kv heads=%d variant=%d "
                              "path=%s: max error %g", n, d, att_kvh[hi], var,
                              rope_simd_name(paths[pi]), e);
            }
            free(ref); free(out); att_free(&a);
        }
}
END_TEST
START_TEST(test_attention_threads_bit_identical)
{
    static const int shape[4][5] = {   /* n, kv_len, heads, kv, d */
        {1000, 1000, 8, 2, 64}, {257, 300, 8, 8, 96},
        {1, 1000, 8, 2, 64}, {3, 700, 8, 4, 128}
    };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int s = 0; s < 4; s++) {
        att_problem a;
        const int *sh = shape[s];
        att_make(&a, sh[0], sh[1], sh[2], sh[3], sh[4], 5, 77 + s);
        a.p.causal = s != 1;
        float *one = malloc(sizeof(float) * a.nq);
        float *many = malloc(sizeof(float) * a.nq);
        for (int pi = 0; pi < np; pi++) {
            a.p.simd = paths[pi];
            a.p.n_threads = 1;
            ck_assert_int_eq(rope_attention(one, a.q, a.k, a.v, &a.p), 0);
            for (int t = 2; t <= 4; t++) {
                a.p.n_threads = t;
                ck_assert_int_eq(rope_attention(many, a.q, a.k, a.v, &a.p), 0);
                ck_assert_msg(!memcmp(one, many, sizeof(float) * a.nq),
                              "shape %d path %s: %d threads differ", s,
                              rope_simd_name(paths[pi]), t);
            }
        }
        free(one); free(many);
        att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_decode_equals_prefill)
{
    enum { N = 600, H = 8, HKV = 2, D = 96 };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int si = 0; si < 2; si++) {
        att_problem a;
        att_make(&a, N, N, H, HKV, D, si ? 1000 : 0, 4242 + si);
        float *full = malloc(sizeof(float) * a.nq);
        float *step = malloc(sizeof(float) * H * D);
        float *krot = malloc(sizeof(float) * a.nkv);
        float *qdummy = malloc(sizeof(float) * a.nkv);
        memcpy(krot, a.k, sizeof(float) * a.nkv);
        memcpy(qdummy, a.k, sizeof(float) * a.nkv);
        rope_apply_rotary_pos_emb(qdummy, krot, a.cos, a.sin, 1, N, HKV, HKV,
                                  D, a.p.start_pos, a.p.pairing);
        for (int pi = 0; pi < np; pi++) {
            rope_attention_params dp = a.p;
            const float *last = full + (size_t)(N - 1) * H * D;
            const float *qlast = a.q + (size_t)(N - 1) * H * D;
            a.p.simd = dp.simd = paths[pi];
            ck_assert_int_eq(rope_attention(full, a.q, a.k, a.v, &a.p), 0);
            dp.seq_len = 1;
            ck_assert_int_eq(rope_attention(step, qlast, a.k, a.v, &dp), 0);
            ck_assert_double_le(att_maxdiff(step, last, H * D), ATT_TOL);
            dp.keys_rotated = 1;
            ck_assert_int_eq(rope_attention(step, qlast, krot, a.v, &dp), 0);
            ck_assert_double_le(att_maxdiff(step, last, H * D), ATT_TOL);
        }
        free(full); free(step); free(krot); free(qdummy); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_gqa_equals_repeat_kv)
{
    enum { N = 200, H = 8, HKV = 2, D = 64, R = H / HKV };
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 3, 99);
    float *kr = malloc(sizeof(float) * a.nkv * R);
    float *vr = malloc(sizeof(float) * a.nkv * R);
    float *o1 = malloc(sizeof(float) * a.nq);
    float *o2 = malloc(sizeof(float) * a.nq);
    for (size_t j = 0; j < (size_t)N; j++)
        for (int hh = 0; hh < H; hh++) {
            size_t src = (j * HKV + hh / R) * D, dst = (j * H + hh) * D;
            memcpy(kr + dst, a.k + src, sizeof(float) * D);
            memcpy(vr + dst, a.v + src, sizeof(float) * D);
        }
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int pi = 0; pi < np; pi++) {
        rope_attention_params rp = a.p;
        a.p.simd = rp.simd = paths[pi];
        rp.n_kv_heads = H;
        ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
        ck_assert_int_eq(rope_attention(o2, a.q, kr, vr, &rp), 0);
        ck_assert(!memcmp(o1, o2, sizeof(float) * a.nq));
    }
    free(kr); free(vr); free(o1); free(o2); att_free(&a);
}
END_TEST
START_TEST(test_attention_mask_aligned_to_last_keys)
{
    enum { N = 70, NKV = 110, H = 4, HKV = 2, D = 32 };
    att_problem a;
    att_make(&a, N, NKV, H, HKV, D, 0, 5);
    float *o1 = malloc(sizeof(float) * a.nq);
    float *o2 = malloc(sizeof(float) * a.nq);
    ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
    for (size_t i = (size_t)(NKV - N + 1) * HKV * D; i < a.nkv; i++)
        a.v[i] += 1.0f;
    ck_assert_int_eq(rope_attention(o2, a.q, a.k, a.v, &a.p), 0);
    ck_assert(!memcmp(o1, o2, sizeof(float) * H * D));
    size_t last = (size_t)(N - 1) * H * D;
    ck_assert_double_gt(att_maxdiff(o1 + last, o2 + last, H * D), 0.01);
    free(o1); free(o2); att_free(&a);
}
END_TEST
START_TEST(test_attention_scaled_table)
{
    enum { N = 300, H = 8, HKV = 2, D = 64 };
    att_problem a;
    att_make(&a, N, N, H, HKV, D, 0, 31);
    float *ref = malloc(sizeof(float) * a.nq);
    float *out = malloc(sizeof(float) * a.nq);
    for (int t = 0; t < 2; t++) {
        if (t == 0) {
            float inv[D / 2];
            rope_default_inv_freq(inv, D, 1e6);
            for (int i = 0; i < D / 2; i++) inv[i] /= 4;
            ck_assert_int_eq(rope_freqs_cis_from_inv_freq(a.cos, a.sin, inv, D,
                0, N, 1.2, ROPE_PRECISION_FLOAT), 0);
        } else {
            rope_scaling sc;
            rope_scaling_defaults(&sc);
            sc.rope_type = ROPE_SCALING_YARN;
            sc.yarn_flavor = ROPE_YARN_MINIMIND;
            sc.factor = 16;
            sc.original_max_position_embeddings = 2048;
            sc.beta_fast = 32;
            sc.beta_slow = 1;
            sc.attention_factor = 1.0;
            ck_assert_int_eq(rope_precompute_freqs_cis_scaled(a.cos, a.sin, D, N,
                1e6, &sc, ROPE_PRECISION_FLOAT), 0);
        }
        ck_assert_int_eq(rope_attention_naive(ref, a.q, a.k, a.v, &a.p),
                         0);
        ck_assert_int_eq(rope_attention(out, a.q, a.k, a.v, &a.p), 0);
        ck_assert_double_le(att_maxdiff(ref, out, a.nq), ATT_TOL);
    }
    free(ref); free(out); att_free(&a);
}
END_TEST
START_TEST(test_attention_fused_rotation_is_chapter_3s)
{
    enum { N = 150, H = 8, HKV = 2, D = 64 };
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int pr = 0; pr < 2; pr++) {
        att_problem a;
        att_make(&a, N, N, H, HKV, D, 11, 600 + pr);
        a.p.pairing = pr ? ROPE_PAIRING_INTERLEAVED : ROPE_PAIRING_HALF;
        float *qr = malloc(sizeof(float) * a.nq);
        float *kr = malloc(sizeof(float) * a.nkv);
        float *o1 = malloc(sizeof(float) * a.nq);
        float *o2 = malloc(sizeof(float) * a.nq);
        memcpy(qr, a.q, sizeof(float) * a.nq);
        memcpy(kr, a.k, sizeof(float) * a.nkv);
        rope_apply_rotary_pos_emb(qr, kr, a.cos, a.sin, 1, N, H, HKV, D, 11,
                                  a.p.pairing);
        for (int pi = 0; pi < np; pi++) {
            rope_attention_params plain = a.p;
            a.p.simd = plain.simd = paths[pi];
            plain.freqs_cos = plain.freqs_sin = NULL;
            ck_assert_int_eq(rope_attention(o1, a.q, a.k, a.v, &a.p), 0);
            ck_assert_int_eq(rope_attention(o2, qr, kr, a.v, &plain), 0);
            ck_assert_msg(!memcmp(o1, o2, sizeof(float) * a.nq),
                          "pairing %d path %s", pr, rope_simd_name(paths[pi]));
        }
        free(qr); free(kr); free(o1); free(o2); att_free(&a);
    }
}
END_TEST
START_TEST(test_attention_exp2_accuracy)
{
    enum { N = 126 * 1024 + 1 };
    float *x = malloc(sizeof(float) * N);
    float *y = malloc(sizeof(float) * N);
    rope_simd paths[3];
    int np = att_paths(paths);
    for (int i = 0; i < N; i++) x[i] = -(float)i / 1024.0f;
    for (int pi = 0; pi < np; pi++) {
        double worst = 0;
        float special[2] = {0.0f, -INFINITY}, sy[2];
        rope_exp2_vec(y, x, N, paths[pi]);
        for (int i = 0; i < N; i++) {
            double t = exp2((double)x[i]), e = fabs(y[i] - t) / t;
            worst = e > worst ? e : worst;
        }
        ck_assert_double_le(worst, 4 * ldexp(1.0, -24));
        rope_exp2_vec(sy, special, 2, paths[pi]);
        ck_assert(sy[0] == 1.0f && sy[1] == 0.0f);
    }
    free(x); free(y);
}
END_TEST
START_TEST(test_attention_simd_env)
{
    rope_simd best = rope_simd_resolve(ROPE_SIMD_AVX512), s;
    ck_assert(rope_simd_available(best));
    setenv("ROPE_SIMD", "scalar", 1);
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO),
                     ROPE_SIMD_SCALAR);
    setenv("ROPE_SIMD", "no-such-path", 1);
    ck_assert_int_eq(rope_simd_resolve(ROPE_SIMD_AUTO), best);
    unsetenv("ROPE_SIMD");
    ck_assert_int_eq(rope_simd_parse("avx2", &s), 0);
    ck_assert_int_eq(s, ROPE_SIMD_AVX2);
    ck_assert_int_ne(rope_simd_parse("avx", &s), 0);
}
END_TEST
START_TEST(test_attention_rejects_bad_arguments)
{
    att_problem a;
    float out[8 * 64], keep;
    att_make(&a, 4, 4, 8, 2, 64, 0, 1);
    out[0] = keep = 12345.0f;
    rope_attention_params p = a.p;
    p.n_kv_heads = 3;                       /* 8 % 3 != 0 */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.seq_len = 5;                 /* longer than the cache */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.table_len = 3;               /* table too short */
    ck_assert_int_ne(rope_attention_naive(out, a.q, a.k, a.v, &p), 0);
    p = a.p; p.head_dim = 63;               /* odd with RoPE */
    ck_assert_int_ne(rope_attention(out, a.q, a.k, a.v, &p), 0);
    ck_assert(out[0] == keep);
    att_free(&a);
}
END_TEST
static size_t att_ws_bytes(int n)
{
    rope_attention_params p = {
        .batch = 1, .seq_len = n, .kv_len = n, .n_heads = 8,
        .n_kv_heads = 2, .head_dim = 64, .causal = 1, .n_threads = 2
    };
    return rope_attention_workspace_bytes(&p);
}
START_TEST(test_attention_workspace_is_linear)
{
    size_t w1 = att_ws_bytes(16384), w2 = att_ws_bytes(32768);
    size_t kv = sizeof(float) * 2 * (size_t)32768 * 2 * 64;
    ck_assert(w2 <= 2 * w1);
    ck_assert(w2 >= kv && w2 <= kv + kv / 20);
}
END_TEST

Suite *attention_suite(void)
{
    Suite *s = suite_create("chapter 5: attention");
    TCase *tc = tcase_create("attention");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_attention_two_keys_closed_form);
    tcase_add_loop_test(tc, test_attention_sweep, 0, 40);
    tcase_add_test(tc, test_attention_threads_bit_identical);
    tcase_add_test(tc, test_attention_decode_equals_prefill);
    tcase_add_test(tc, test_attention_gqa_equals_repeat_kv);
    tcase_add_test(tc, test_attention_mask_aligned_to_last_keys);
    tcase_add_test(tc, test_attention_scaled_table);
    tcase_add_test(tc, test_attention_fused_rotation_is_chapter_3s);
    tcase_add_test(tc, test_attention_exp2_accuracy);
    tcase_add_test(tc, test_attention_simd_env);
    tcase_add_test(tc, test_attention_rejects_bad_arguments);
    tcase_add_test(tc, test_attention_workspace_is_linear);
    suite_add_tcase(s, tc);
    return s;
}
