/* W8.8 The numbers of chapter 8 */
/* bookdata-minimind.c: the numbers of chapter 8. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bookdata.h"
#include "minimind-reference.h"

static const char *mm_group(char *buf, size_t n, size_t v)
{ /* 63912192 as 63\,912\,192 */
    char d[32];
    int len = snprintf(d, sizeof d, "%zu", v);
    size_t at = 0;
    for (int i = 0; i < len && at + 4 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            at += (size_t)snprintf(buf + at, n - at, "\\,");
        buf[at++] = d[i];
    }
    buf[at] = '\0';
    return buf;
}

static long mm_count_lines(const char *path)
{
    FILE *in = fopen(path, "r");
    long lines = 0;
    int ch;
    if (in == NULL)
        return -1;
    while ((ch = getc(in)) != EOF)
        lines += ch == '\n';
    fclose(in);
    return lines;
}
static float *mm_random(rope_minimind *m, const rope_minimind_config *c,
                        double spread, uint64_t seed)
{ /* matrices uniform with the given spread, norms' weights 1 */
    int nt = rope_minimind_tensor_list(c, NULL);
    rope_minimind_tensor *t = malloc((size_t)nt * sizeof *t);
    float *w = malloc(rope_minimind_n_floats(c) * sizeof *w);
    if (t == NULL || w == NULL) {
        free(t);
        free(w);
        return NULL;
    }
    rope_minimind_tensor_list(c, t);
    for (int i = 0; i < nt; i++) {
        size_t len = (size_t)t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1] : 1);
        for (size_t j = 0; j < len; j++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            double r = (double)(seed >> 11) * 0x1.0p-53 * 2 - 1;
            w[t[i].offset + j] = t[i].ndim == 1 ? 1.0f
                                 : (float)(r * spread * 1.7320508075688772);
        }
    }
    free(t);
    memset(m, 0, sizeof *m);
    if (rope_minimind_bind(m, c, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}
static int mm_tightness(const rope_minimind_config *c, double spread, int n,
                        double *ratio, double *bound_over_logit)
{ /* largest |float32 - reference| / bound, and max bound / max |logit| */
    rope_minimind m;
    rope_minimind_state s;
    float *w = mm_random(&m, c, spread, 8);
    size_t nv = (size_t)n * c->vocab_size;
    float *z = malloc(nv * sizeof *z);
    double *ref = malloc(2 * nv * sizeof *ref), *bd = ref + nv;
    int ids[64], err = -1;
    if (w && z && ref && n <= 64 && rope_minimind_state_init(&s, &m, n, 2) == 0) {
        for (int i = 0; i < n; i++)
            ids[i] = (7 + 13 * i) % c->vocab_size;
        err = rope_minimind_forward(&m, &s, ids, n, z, 1)
              || rope_minimind_reference_ex(&m, ids, n, NULL, 2, ref, bd, NULL);
        double worst = 0, bmax = 0, zmax = 0;
        for (size_t i = 0; i < nv && !err; i++) {
            worst = fmax(worst, fabs(z[i] - ref[i]) / bd[i]);
            bmax = fmax(bmax, bd[i]);
            zmax = fmax(zmax, fabs(ref[i]));
        }
        *ratio = worst;
        *bound_over_logit = bmax / zmax;
        rope_minimind_state_free(&s);
    }
    if (w)
        rope_minimind_free(&m);
    free(w);
    free(z);
    free(ref);
    return err;
}
static int mm_bound_numbers(FILE *f)
{
    rope_minimind_config c;
    double r1, r2, rd, b1, b2, bd;
    rope_minimind_config_defaults(&c); /* the tests' small size */
    c.hidden_size = 32;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    c.intermediate_size = 128;
    c.vocab_size = 64;
    c.max_position_embeddings = 4096;
    c.num_hidden_layers = 1;
    int err = mm_tightness(&c, 0.3, 40, &r1, &b1);
    c.num_hidden_layers = 2;
    err |= mm_tightness(&c, 0.3, 40, &r2, &b2);
    rope_minimind_config_defaults(&c);
    err |= mm_tightness(&c, 0.02, 4, &rd, &bd);
    if (err) {
        fprintf(stderr, "bookdata: chapter 8: the bound's tightness failed\n");
        return 1;
    }
    bd_def_sci(f, "mm-tight-one", r1, 1);
    bd_def_sci(f, "mm-tight-two", r2, 1);
    bd_def_sci(f, "mm-tight-default", rd, 1);
    bd_def_sci(f, "mm-bound-over-logit", bd, 1);
    return 0;
}
typedef struct mm_rec { float *in; int n; } mm_rec;
static void mm_record(void *ctx, int layer, long pos, float *x, int n,
                      int hidden)
{ /* the states entering block layer, rows pos.. */
    mm_rec *r = ctx;
    memcpy(r->in + ((size_t)layer * r->n + (size_t)pos) * hidden, x,
           (size_t)n * hidden * sizeof *x);
}

static void mm_compare(const float *got, const double *ref,
                       const double *bd, size_t len, double *err_over,
                       double *bound_over)
{ /* largest |got - ref| / bound, largest bound / largest |ref| */
    double e = 0, b = 0, r = 0;
    for (size_t i = 0; i < len; i++) {
        e = fmax(e, fabs(got[i] - ref[i]) / bd[i]);
        b = fmax(b, bd[i]);
        r = fmax(r, fabs(ref[i]));
    }
    *err_over = e;
    *bound_over = b / r;
}

static int mm_compare_norm(const float *got, const double *ref,
                           const double *nb, int n, int D,
                           double *err_over, double *bound_over)
{ /* the same in norm, over the tokens: largest |got - ref| / bound,
     largest bound / |ref|; returns how many tokens have 2 bound < |ref| */
    double e = 0, b = 0;
    int telling = 0;
    for (int i = 0; i < n; i++) {
        double dd = 0, rr = 0;
        for (int j = 0; j < D; j++) {
            double x = ref[(size_t)i * D + j];
            dd += (got[(size_t)i * D + j] - x) * (got[(size_t)i * D + j] - x);
            rr += x * x;
        }
        e = fmax(e, sqrt(dd) / nb[i]);
        b = fmax(b, nb[i] / sqrt(rr));
        telling += 2 * nb[i] < sqrt(rr);
    }
    *err_over = e;
    *bound_over = b;
    return telling;
}
enum { MM_BLK_N = 64 };
static int mm_block_numbers(FILE *f)
{
    rope_minimind_config c;
    rope_minimind m;
    rope_minimind_state s;
    rope_minimind_config_defaults(&c);
    int L = c.num_hidden_layers, D = c.hidden_size, V = c.vocab_size;
    int n = MM_BLK_N, ids[MM_BLK_N], err = -1, agree = 0;
    size_t nd = (size_t)n * D, nv = (size_t)n * V;
    float *w = mm_random(&m, &c, 0.02, 8);
    mm_rec r = {malloc((size_t)(L + 1) * nd * sizeof(float)), n};
    float *z = malloc(nv * sizeof *z);
    double *ref = malloc(2 * nv * sizeof *ref), *bd = ref + nv;
    double e_lo = INFINITY, e_hi = 0, first = 0, last = 0, he, hb, e2e = 0;
    double ne_lo = INFINITY, ne_hi = 0, nb_lo = INFINITY, nb_hi = 0;
    double nbound[MM_BLK_N];
    int telling = 0, all_from = L;
    if (!w || !r.in || !z || !ref || rope_minimind_state_init(&s, &m, n, 2))
        goto out;
    for (int i = 0; i < n; i++)
        ids[i] = (7 + 13 * i) % V;
    s.hook = mm_record;
    s.hook_ctx = &r;
    if (rope_minimind_forward(&m, &s, ids, n, z, 1) != 0)
        goto free_state;
    for (int l = 0; l < L; l++) { /* block l's output enters block l + 1 */
        double e, b;
        if (rope_minimind_reference_block_norm(&m, l, r.in + (size_t)l * nd, n,
                                               2, ref, bd, nbound) != 0)
            goto free_state;
        mm_compare(r.in + (size_t)(l + 1) * nd, ref, bd, nd, &e, &b);
        e_lo = fmin(e_lo, e);
        e_hi = fmax(e_hi, e);
        first = l == 0 ? b : first;
        last = b;
        int t = mm_compare_norm(r.in + (size_t)(l + 1) * nd, ref, nbound, n, D,
                                &e, &b);
        telling += t;
        all_from = t < n ? L : all_from < L ? all_from : l;
        ne_lo = fmin(ne_lo, e);
        ne_hi = fmax(ne_hi, e);
        nb_lo = fmin(nb_lo, b);
        nb_hi = fmax(nb_hi, b);
    }
    if (rope_minimind_reference_block(&m, L, r.in + (size_t)L * nd, n, 2, ref,
                                      bd) != 0)
        goto free_state;
    mm_compare(z, ref, bd, nv, &he, &hb);
    if (rope_minimind_reference_ex(&m, ids, n, NULL, 2, ref, bd, NULL) < 0)
        goto free_state;
    double zmax = 0;
    for (size_t i = 0; i < nv; i++) {
        e2e = fmax(e2e, fabs(z[i] - ref[i]));
        zmax = fmax(zmax, fabs(ref[i]));
    }
    e2e /= zmax;
    for (int i = 0; i < n; i++) {
        int a = 0, b = 0;
        for (int v = 1; v < V; v++) {
            a = z[(size_t)i * V + v] > z[(size_t)i * V + a] ? v : a;
            b = ref[(size_t)i * V + v] > ref[(size_t)i * V + b] ? v : b;
        }
        agree += a == b;
    }
    bd_def_sci(f, "mm-blk-err-lo", e_lo, 1);
    bd_def_sci(f, "mm-blk-err-hi", e_hi, 1);
    bd_def_sci(f, "mm-blk-first", first, 1);
    bd_def_sci(f, "mm-blk-last", last, 1);
    bd_def_sci(f, "mm-head-err", he, 1);
    bd_def_sci(f, "mm-head-bound", hb, 1);
    bd_def_sci(f, "mm-e2e", e2e, 1);
    bd_def(f, "mm-e2e-agree", "%d", agree);
    bd_def(f, "mm-blk-n", "%d", n);
    bd_def_sci(f, "mm-nblk-err-lo", ne_lo, 1);
    bd_def_sci(f, "mm-nblk-err-hi", ne_hi, 1);
    bd_def_sci(f, "mm-nblk-bound-lo", nb_lo, 1);
    bd_def_sci(f, "mm-nblk-bound-hi", nb_hi, 1);
    double rowsum = 0;
    int cols = c.num_attention_heads * c.head_dim;
    for (size_t i = 0; i < (size_t)D * cols; i++)
        rowsum += fabs(m.layers[0].o_proj[i]);
    bd_def(f, "mm-rowsum-o", "%.1f", rowsum / D);
    bd_def(f, "mm-sigma-o", "%.2f",
           rope_minimind_ref_sigma(m.layers[0].o_proj, D, cols, 2));
    bd_def(f, "mm-nblk-telling", "%d", telling);
    bd_def(f, "mm-nblk-pairs", "%d", n * L);
    bd_def(f, "mm-nblk-all-from", "%d", all_from);
    err = 0;
free_state:
    rope_minimind_state_free(&s);
out:
    if (w)
        rope_minimind_free(&m);
    free(w);
    free(r.in);
    free(z);
    free(ref);
    if (err)
        fprintf(stderr, "bookdata: chapter 8: the block check failed\n");
    return err;
}
static const char *const mm_mistakes[3] = {"moved", "pairing", "heads"};
static int mm_crosscheck_numbers(FILE *f, const char *dir)
{
    char path[4096], line[1024], kind[16], model[32], rope[8], result[16];
    char ratio[32], when[64] = "";
    int n, heads = 0, heads_ok = 0, blocks = 0, vacuous = 0, g = -1, gm = 0;
    int yarn_n = 0, undecided = 0, nr[5] = {0}, tell = 0, toks = 0, a, b;
    double w;
    int ctl[3][2] = {{-1, 0}, {-1, 0}, {-1, 0}}; /* caught, of */
    double ctl_worst[3] = {0, 0, 0};
    char mistake[16];
    double head_worst = 0, e2e = 0, bound_min = INFINITY, norm_worst = 0;
    snprintf(path, sizeof path, "%s/crosscheck-model.txt", dir);
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        fprintf(stderr, "bookdata: %s: no recorded crosscheck\n", path);
        return 1;
    }
    while (fgets(line, sizeof line, in)) {
        if (sscanf(line, "# date %63[^U]", when) == 1)
            continue;
        if (sscanf(line, "summary greedy identical %d of %d", &g, &gm) == 2)
            continue;
        if (sscanf(line, "summary control %15s blocks caught %d of %d "
                   "informative, largest %lf", mistake, &a, &b, &w) == 4) {
            for (int i = 0; i < 3; i++)
                if (strcmp(mistake, mm_mistakes[i]) == 0) {
                    ctl[i][0] = a;
                    ctl[i][1] = b;
                    ctl_worst[i] = w;
                }
            continue;
        }
        if (sscanf(line, "%15s %31s %7s %d %*s %*s %*s %*s %31s %15s", kind,
                   model, rope, &n, ratio, result) != 6)
            continue;
        if (strcmp(rope, "yarn") == 0)
            yarn_n = n;
        if (strcmp(kind, "head") == 0) {
            heads++;
            heads_ok += strcmp(result, "pass") == 0;
            head_worst = fmax(head_worst, atof(ratio));
        } else if (strcmp(kind, "block") == 0) {
            const char *b = strstr(line, "bound/|out| ");
            blocks++;
            vacuous += strcmp(result, "vacuous") == 0;
            undecided += strcmp(result, "undecided") == 0;
            if (b != NULL) /* twice the bound over the largest output */
                bound_min = fmin(bound_min, 2 * atof(b + 12));
        } else if (strcmp(kind, "norm") == 0) {
            const char *t = strstr(line, "telling ");
            nr[0]++;
            nr[1] += strcmp(result, "pass") == 0;
            nr[2] += strcmp(result, "partial") == 0;
            nr[3] += strcmp(result, "vacuous") == 0;
            nr[4] += strcmp(result, "undecided") == 0;
            norm_worst = fmax(norm_worst, atof(ratio));
            if (t != NULL && sscanf(t, "telling %d/%d", &a, &b) == 2) {
                tell += a;
                toks += b;
            }
        } else if (strcmp(kind, "e2e") == 0)
            e2e = fmax(e2e, atof(ratio));
    }
    fclose(in);
    for (size_t k = strlen(when); k > 0 && when[k - 1] == ' '; k--)
        when[k - 1] = '\0';
    if (heads == 0 || g < 0 || nr[0] == 0 || ctl[0][0] < 0 || ctl[1][0] < 0
        || ctl[2][0] < 0) {
        fprintf(stderr, "bookdata: %s: no head or norm rows, or no greedy "
                "or control summary\n", path);
        return 1;
    }
    bd_def(f, "mm-cc-heads", "%d", heads);
    bd_def(f, "mm-cc-heads-ok", "%d", heads_ok);
    bd_def_sci(f, "mm-cc-head-worst", head_worst, 1);
    bd_def(f, "mm-cc-blocks", "%d", blocks);
    bd_def(f, "mm-cc-vacuous", "%d", vacuous);
    bd_def(f, "mm-cc-bound-min", "%.1f", bound_min);
    bd_def(f, "mm-cc-undecided", "%d", undecided);
    bd_def_sci(f, "mm-cc-e2e", e2e, 1);
    bd_def(f, "mm-cc-greedy", "%d", g);
    bd_def(f, "mm-cc-greedy-runs", "%d", gm);
    bd_def(f, "mm-cc-yarn-len", "%d", yarn_n);
    bd_def(f, "mm-cc-date", "%s", when);
    bd_def(f, "mm-cc-norms", "%d", nr[0]);
    bd_def(f, "mm-cc-norm-pass", "%d", nr[1]);
    bd_def(f, "mm-cc-norm-partial", "%d", nr[2]);
    bd_def(f, "mm-cc-norm-vacuous", "%d", nr[3]);
    bd_def(f, "mm-cc-norm-undecided", "%d", nr[4]);
    bd_def_sci(f, "mm-cc-norm-worst", norm_worst, 1);
    bd_def(f, "mm-cc-norm-telling", "%d", tell);
    bd_def(f, "mm-cc-norm-tokens", "%d", toks);
    for (int i = 0; i < 3; i++) {
        char name[48];
        snprintf(name, sizeof name, "mm-cc-ctl-%s-caught", mm_mistakes[i]);
        bd_def(f, name, "%d", ctl[i][0]);
        snprintf(name, sizeof name, "mm-cc-ctl-%s-of", mm_mistakes[i]);
        bd_def(f, name, "%d", ctl[i][1]);
        snprintf(name, sizeof name, "mm-cc-ctl-%s-worst", mm_mistakes[i]);
        bd_def(f, name, "%.2f", ctl_worst[i]);
    }
    return 0;
}

int bookdata_minimind(const char *dir)
{
    FILE *f = bd_numbers_open(dir, "minimind");
    rope_minimind_config c;
    rope_scaling s;
    double lo, hi;
    char b1[64], b2[64], b3[64];
    rope_minimind_config_defaults(&c);
    size_t dense = rope_minimind_n_floats(&c);
    c.use_moe = 1;
    size_t moe = rope_minimind_n_floats(&c);
    long kv = 2L * c.num_hidden_layers * c.num_key_value_heads * c.head_dim;
    bd_def(f, "mm-params", "%s", mm_group(b1, sizeof b1, dense));
    bd_def(f, "mm-params-moe", "%s", mm_group(b2, sizeof b2, moe));
    bd_def(f, "mm-mib", "%.0f", dense * 4.0 / 1048576);
    bd_def(f, "mm-kv-floats", "%s", mm_group(b3, sizeof b3, (size_t)kv));
    bd_def(f, "mm-kv-kib", "%.0f", kv * 4.0 / 1024);
    bd_def(f, "mm-kv-full-mib", "%.0f", kv * 4.0 * 32768 / 1048576);
    c.inference_rope_scaling = 1;
    rope_minimind_rope_scaling(&c, &s); /* MiniMind's YaRN */
    rope_yarn_range(&lo, &hi, c.head_dim, c.rope_theta, &s);
    bd_def(f, "mm-yarn-low", "%.0f", lo);
    bd_def(f, "mm-yarn-high", "%.0f", hi);
    bd_def(f, "mm-yarn-fast", "%.0f", lo + 1);
    bd_def(f, "mm-lines", "%ld", mm_count_lines("generated/lib/minimind.c"));
    int err = mm_bound_numbers(f) | mm_block_numbers(f)
              | mm_crosscheck_numbers(f, dir);
    fprintf(f, "\\input{\\datadir mm-measured.tex}\n"); /* W8c's record */
    bd_close(f);
    return err;
}
