/* W8b.4 The code */
/* minimind-reference.c: MiniMind's forward in double, with a bound on
   the error of any float32 evaluation (workshop W8b) */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "minimind-reference.h"
#include "npy.h"

void rope_minimind_ref_budget_default(rope_minimind_ref_budget *b)
{
    double u = ldexp(1.0, -24);
    b->u = u;
    b->exp_rel = 4 * u;
    b->rsqrt_rel = 2 * u;
    b->silu_rel = 6 * u;
    b->tile = ROPE_ATTENTION_BK;
}

static double ref_gamma(const rope_minimind_ref_budget *b, double n)
{
    return n * b->u / (1 - n * b->u);
}
enum { REF_MAX_THREADS = 64 };
typedef struct ref_share {
    void (*fn)(void *ctx, int item);
    void *ctx;
    int first, step, n_items;
} ref_share;

static void *ref_run_share(void *arg)
{
    const ref_share *s = arg;
    for (int i = s->first; i < s->n_items; i += s->step)
        s->fn(s->ctx, i);
    return NULL;
}

static void ref_parallel(int n_threads, int n_items,
                         void (*fn)(void *, int), void *ctx)
{
    int t = n_threads < 1 ? 1 : n_threads;
    pthread_t th[REF_MAX_THREADS];
    ref_share sh[REF_MAX_THREADS];
    int started[REF_MAX_THREADS] = {0};
    t = t > REF_MAX_THREADS ? REF_MAX_THREADS : t;
    t = t > n_items ? n_items : t;
    if (t < 1)
        return;
    for (int i = 0; i < t; i++)
        sh[i] = (ref_share){fn, ctx, i, t, n_items};
    for (int i = 1; i < t; i++)
        started[i] = pthread_create(&th[i], NULL, ref_run_share,
                                    &sh[i]) == 0;
    ref_run_share(&sh[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            ref_run_share(&sh[i]);
    }
}
enum { REF_GB = 4, REF_SQUARINGS = 3 };
typedef struct ref_gram_job {
    const double *a; /* [K, m] */
    double *c; /* [m, m]: A^T A */
    int K, m;
} ref_gram_job;

static void ref_gram_rows(void *arg, int blk)
{
    const ref_gram_job *j = arg;
    int i0 = blk * REF_GB, ni = j->m - i0 < REF_GB ? j->m - i0 : REF_GB;
    double *c = j->c + (size_t)i0 * j->m;
    memset(c, 0, (size_t)ni * j->m * sizeof *c);
    for (int t = 0; t < j->K; t++) {
        const double *at = j->a + (size_t)t * j->m;
        for (int r = 0; r < ni; r++) {
            double s = at[i0 + r], *cr = c + (size_t)r * j->m;
            for (int x = 0; x < j->m; x++)
                cr[x] += s * at[x];
        }
    }
}

static void ref_gram(const double *a, double *c, int K, int m, int threads)
{
    ref_gram_job j = {a, c, K, m};
    ref_parallel(threads, (m + REF_GB - 1) / REF_GB, ref_gram_rows, &j);
}
double rope_minimind_ref_sigma(const float *w, int rows, int cols,
                               int n_threads)
{
    int m = rows < cols ? rows : cols, K = rows < cols ? cols : rows;
    size_t mm = (size_t)m * m;
    double *a = malloc((size_t)K * m * sizeof *a), lg = 0, f = 0, r = -1;
    double *g = malloc(mm * sizeof *g), *t = malloc(mm * sizeof *t);
    if (a != NULL && g != NULL && t != NULL) {
        for (int i = 0; i < rows; i++)
            for (int k = 0; k < cols; k++)
                a[rows < cols ? (size_t)k * m + i : (size_t)i * m + k] =
                    w[(size_t)i * cols + k];
        ref_gram(a, g, K, m, n_threads);
        for (int p = 0; p < REF_SQUARINGS; p++) {
            double top = 0;
            ref_gram(g, t, m, m, n_threads);
            for (size_t i = 0; i < mm; i++)
                top = fmax(top, fabs(t[i]));
            for (size_t i = 0; i < mm; i++)
                g[i] = top > 0 ? t[i] / top : 0;
            lg = 2 * lg + (top > 0 ? log(top) : 0);
        }
        for (size_t i = 0; i < mm; i++)
            f += g[i] * g[i];
        r = f > 0 ? exp((2 * lg + log(f)) / (4 << REF_SQUARINGS)) : 0;
    }
    free(a);
    free(g);
    free(t);
    return r;
}
static void ref_fold(double *e, double *nrm, size_t rows, int len)
{
    for (size_t r = 0; r < rows; r++) {
        double ss = 0, *er = e + r * len;
        for (int i = 0; i < len; i++) {
            ss += er[i] * er[i];
            er[i] = 0;
        }
        nrm[r] += sqrt(ss);
    }
}

static double ref_rope_lip(const rope_minimind *m, int i)
{
    int d = m->config.head_dim, h2 = d / 2;
    const float *cs = m->freqs_cos + (size_t)i * d;
    const float *sn = m->freqs_sin + (size_t)i * d;
    double lip = 0;
    for (int t = 0; t < h2; t++) {
        double c0 = cs[t], s0 = sn[t], c1 = cs[t + h2], s1 = sn[t + h2];
        double F = c0 * c0 + s0 * s0 + c1 * c1 + s1 * s1;
        double det = c0 * c1 + s0 * s1;
        lip = fmax(lip, sqrt((F + sqrt(fmax(F * F - 4 * det * det, 0)))
                             / 2));
    }
    return lip;
}
enum { REF_OB = 64, REF_RB = 4 }; /* outputs, rows of a block */
typedef struct ref_linear_job {
    const float *wt; /* W^T: [in][outp], zero past out */
    const double *x, *xa; /* [rows, in]: x and E_x + gamma_in |x| */
    double *y, *ey; /* [rows, out] */
    int rows, in, out, outp;
} ref_linear_job;
static void ref_linear_block(void *arg, int blk)
{
    const ref_linear_job *j = arg;
    int o0 = blk * REF_OB;
    int no = j->out - o0 < REF_OB ? j->out - o0 : REF_OB;
    double wd[REF_OB], wa[REF_OB], ay[REF_RB][REF_OB], ae[REF_RB][REF_OB];
    for (int r0 = 0; r0 < j->rows; r0 += REF_RB) {
        int nr = j->rows - r0 < REF_RB ? j->rows - r0 : REF_RB;
        memset(ay, 0, sizeof ay);
        memset(ae, 0, sizeof ae);
        for (int k = 0; k < j->in; k++) {
            const float *wk = j->wt + (size_t)k * j->outp + o0;
            for (int o = 0; o < REF_OB; o++) {
                wd[o] = wk[o];
                wa[o] = fabs(wd[o]);
            }
            for (int r = 0; r < nr; r++) {
                double xv = j->x[(size_t)(r0 + r) * j->in + k];
                double av = j->xa[(size_t)(r0 + r) * j->in + k];
                for (int o = 0; o < REF_OB; o++) {
                    ay[r][o] += xv * wd[o];
                    ae[r][o] += av * wa[o];
                }
            }
        }
        for (int r = 0; r < nr; r++)
            for (int o = 0; o < no; o++) {
                j->y[(size_t)(r0 + r) * j->out + o0 + o] = ay[r][o];
                j->ey[(size_t)(r0 + r) * j->out + o0 + o] = ae[r][o];
            }
    }
}
static int ref_linear(double *y, double *ey, const double *x,
                      const double *ex, const float *w, int rows, int in,
                      int out, const rope_minimind_ref_budget *b,
                      int n_threads)
{
    int nb = (out + REF_OB - 1) / REF_OB, outp = nb * REF_OB;
    double g = ref_gamma(b, in);
    float *wt = calloc((size_t)in * outp, sizeof *wt);
    double *xa = malloc((size_t)rows * in * sizeof *xa);
    if (wt == NULL || xa == NULL) {
        free(wt);
        free(xa);
        return -1;
    }
    for (int o = 0; o < out; o++)
        for (int k = 0; k < in; k++)
            wt[(size_t)k * outp + o] = w[(size_t)o * in + k];
    for (size_t i = 0; i < (size_t)rows * in; i++)
        xa[i] = ex[i] + g * fabs(x[i]);
    ref_linear_job j = {wt, x, xa, y, ey, rows, in, out, outp};
    ref_parallel(n_threads, nb, ref_linear_block, &j);
    free(wt);
    free(xa);
    return 0;
}
static void ref_rmsnorm(double *y, double *ey, double *ny, const double *x,
                        const double *ex, const double *nx, const float *w,
                        int rows, int n, double eps,
                        const rope_minimind_ref_budget *b)
{
    double rel = (ref_gamma(b, n) + 3 * b->u) / 2 + b->rsqrt_rel
                 + 2 * b->u, wmax = 0;
    for (int i = 0; i < n; i++)
        wmax = fmax(wmax, fabs((double)w[i]));
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * n, *er = ex + (size_t)r * n;
        double *yr = y + (size_t)r * n, *fr = ey + (size_t)r * n;
        double ss = 0, s = 0;
        for (int i = 0; i < n; i++) {
            ss += xr[i] * xr[i];
            s += fabs(xr[i]) * er[i];
        }
        double rr = 1 / sqrt(ss / n + eps), prop = rr * rr * s / n;
        ny[r] = nx[r] * (wmax / sqrt(ss / n + eps));
        for (int i = 0; i < n; i++) {
            double yi = w[i] * (xr[i] * rr);
            fr[i] = fabs((double)w[i]) * rr * er[i]
                    + fabs(yi) * (prop + rel);
            yr[i] = yi;
        }
    }
}
static void ref_rope(double *x, double *ex, int n, int heads,
                     const rope_minimind *m,
                     const rope_minimind_ref_budget *b)
{
    int d = m->config.head_dim, h2 = d / 2;
    double g2 = ref_gamma(b, 2);
    for (int i = 0; i < n; i++)
        for (int h = 0; h < heads; h++) {
            double *xr = x + ((size_t)i * heads + h) * d;
            double *er = ex + ((size_t)i * heads + h) * d;
            const float *cs = m->freqs_cos + (size_t)i * d;
            const float *sn = m->freqs_sin + (size_t)i * d;
            for (int t = 0; t < h2; t++) {
                double a = xr[t], z = xr[t + h2], ea = er[t];
                double ez = er[t + h2], c0 = cs[t], s0 = sn[t];
                double c1 = cs[t + h2], s1 = sn[t + h2];
                xr[t] = a * c0 - z * s0; /* rotate_half: -x2 */
                xr[t + h2] = z * c1 + a * s1; /* then x1 */
                er[t] = fabs(c0) * ea + fabs(s0) * ez
                        + g2 * (fabs(a * c0) + fabs(z * s0));
                er[t + h2] = fabs(c1) * ez + fabs(s1) * ea
                             + g2 * (fabs(z * c1) + fabs(a * s1));
            }
        }
}
typedef struct ref_attention_job {
    const double *q, *eq; /* [n, H, d] */
    const double *k, *ka, *v, *ev; /* [n, Hkv, d]; ka: E_k + g |k| */
    double *o, *eo; /* [n, H, d] */
    const double *nq, *nk, *nv, *kn; /* [n, H], [n, Hkv] x 3 */
    double *no; /* [n, H] */
    double *max_rel; /* [H]: largest r_j of each head */
    int n, H, Hkv, d, failed;
    const rope_minimind_ref_budget *b;
} ref_attention_job;
static void ref_attention_head(void *arg, int h)
{
    ref_attention_job *J = arg;
    const rope_minimind_ref_budget *b = J->b;
    int n = J->n, d = J->d, g = h / (J->H / J->Hkv);
    double c = 1 / sqrt((double)d), u = b->u, worst = 0;
    double *s = malloc((size_t)n * sizeof *s);
    double *es = malloc((size_t)n * sizeof *es);
    if (s == NULL || es == NULL) {
        J->failed = 1;
        free(s);
        free(es);
        return;
    }
    for (int i = 0; i < n; i++) {
        const double *qi = J->q + ((size_t)i * J->H + h) * d;
        const double *eqi = J->eq + ((size_t)i * J->H + h) * d;
        double *oi = J->o + ((size_t)i * J->H + h) * d;
        double *eoi = J->eo + ((size_t)i * J->H + h) * d;
        double smax = -INFINITY, M = 0;
        for (int j = 0; j <= i; j++) {
            const double *kj = J->k + ((size_t)j * J->Hkv + g) * d;
            const double *kaj = J->ka + ((size_t)j * J->Hkv + g) * d;
            double dot = 0, e = 0;
            for (int t = 0; t < d; t++) {
                dot += qi[t] * kj[t];
                e += fabs(qi[t]) * kaj[t] + eqi[t] * fabs(kj[t]);
            }
            s[j] = c * dot;
            es[j] = c * e;
            smax = s[j] > smax ? s[j] : smax;
            M = fabs(s[j]) > M ? fabs(s[j]) : M;
        }
        int T = (i + b->tile) / b->tile; /* tiles of i + 1 keys */
        double same = b->exp_rel + u + T * (b->exp_rel + 2 * u * M), z = 0;
        double mix = 2 * ref_gamma(b, i + 1 + T) + 3 * u;
        for (int j = 0; j <= i; j++) {
            es[j] += u * (fabs(s[j]) + M) + same;
            worst = es[j] > worst ? es[j] : worst;
            s[j] = exp(s[j] - smax);
            z += s[j];
        }
        for (int j = 0; j <= i; j++)
            s[j] /= z;
        for (int t = 0; t < d; t++)
            oi[t] = eoi[t] = 0;
        for (int j = 0; j <= i; j++) {
            const double *vj = J->v + ((size_t)j * J->Hkv + g) * d;
            const double *evj = J->ev + ((size_t)j * J->Hkv + g) * d;
            for (int t = 0; t < d; t++) {
                oi[t] += s[j] * vj[t];
                eoi[t] += s[j] * (evj[t] + mix * fabs(vj[t]));
            }
        }
        for (int j = 0; j <= i; j++) {
            const double *vj = J->v + ((size_t)j * J->Hkv + g) * d;
            double pr = s[j] * es[j];
            for (int t = 0; t < d; t++)
                eoi[t] += pr * fabs(vj[t] - oi[t]);
        }
        double qn = 0, acc = 0;
        for (int t = 0; t < d; t++)
            qn += qi[t] * qi[t];
        qn = sqrt(qn);
        for (int j = 0; j <= i; j++) {
            const double *vj = J->v + ((size_t)j * J->Hkv + g) * d;
            size_t kj = (size_t)j * J->Hkv + g;
            double dv = 0;
            for (int t = 0; t < d; t++)
                dv += (vj[t] - oi[t]) * (vj[t] - oi[t]);
            double ds = c * (J->nq[(size_t)i * J->H + h] * J->kn[kj]
                             + qn * J->nk[kj]);
            acc += s[j] * (J->nv[kj] + sqrt(dv) * ds);
            worst = fmax(worst, es[j] + ds);
        }
        J->no[(size_t)i * J->H + h] = acc;
    }
    J->max_rel[h] = worst;
    free(s);
    free(es);
}
static int ref_attention(double *o, double *eo, double *no,
                         const double *q, const double *eq,
                         const double *nq, const double *k,
                         const double *ek, const double *nk,
                         const double *v, const double *ev,
                         const double *nv, const rope_minimind *m, int n,
                         const rope_minimind_ref_budget *b, int n_threads,
                         double *max_rel)
{
    const rope_minimind_config *c = &m->config;
    int H = c->num_attention_heads, Hkv = c->num_key_value_heads;
    int d = c->head_dim;
    size_t cnt = (size_t)n * Hkv * d;
    double g = ref_gamma(b, d) + 3 * b->u;
    double *ka = malloc(cnt * sizeof *ka), *rel = malloc(H * sizeof *rel);
    double *kn = calloc(cnt / d, sizeof *kn);
    if (ka == NULL || rel == NULL || kn == NULL) {
        free(ka);
        free(rel);
        free(kn);
        return -1;
    }
    for (size_t i = 0; i < cnt; i++) {
        ka[i] = ek[i] + g * fabs(k[i]);
        kn[i / d] += k[i] * k[i];
    }
    for (size_t i = 0; i < cnt / d; i++)
        kn[i] = sqrt(kn[i]);
    ref_attention_job J = {q, eq, k, ka, v, ev, o, eo, nq, nk, nv, kn, no,
                           rel, n, H, Hkv, d, 0, b};
    ref_parallel(n_threads, H, ref_attention_head, &J);
    for (int h = 0; h < H && !J.failed; h++)
        *max_rel = rel[h] > *max_rel ? rel[h] : *max_rel;
    free(ka);
    free(rel);
    free(kn);
    return J.failed ? -1 : 0;
}
static void ref_residual(double *h, double *eh, const double *a,
                         const double *ea, size_t count,
                         const rope_minimind_ref_budget *b)
{
    for (size_t i = 0; i < count; i++) {
        h[i] += a[i];
        eh[i] += ea[i] + b->u * fabs(h[i]);
    }
}

static void ref_swiglu(double *g, double *eg, const double *up,
                       const double *eu, size_t count,
                       const rope_minimind_ref_budget *b)
{
    for (size_t i = 0; i < count; i++) {
        double sg = 1 / (1 + exp(-g[i])), si = g[i] * sg;
        double dsi = sg * (1 + g[i] * (1 - sg)), z = si * up[i];
        eg[i] = fabs(dsi) * eg[i] * fabs(up[i]) + fabs(si) * eu[i]
                + (b->silu_rel + b->u) * fabs(z);
        g[i] = z;
    }
}

static void ref_swiglu_lip(double *nz, const double *g, const double *up,
                           const double *ng, const double *nu, int rows,
                           int F)
{
    for (int r = 0; r < rows; r++) {
        double a = 0, c = 0;
        for (int i = 0; i < F; i++) {
            double x = g[(size_t)r * F + i], sg = 1 / (1 + exp(-x));
            double dsi = sg * (1 + x * (1 - sg));
            a = fmax(a, fabs(dsi * up[(size_t)r * F + i]));
            c = fmax(c, fabs(x * sg));
        }
        nz[r] = a * ng[r] + c * nu[r];
    }
}
static int ref_ffn(double *y, double *ey, double *ny, const double *x,
                   const double *ex, const double *nx,
                   const rope_minimind_ffn *f, int rows, int D, int F,
                   const rope_minimind_ref_budget *b, int n_threads)
{
    size_t cnt = (size_t)rows * F;
    double *g = malloc(cnt * sizeof *g), *eg = malloc(cnt * sizeof *eg);
    double *up = malloc(cnt * sizeof *up), *eu = malloc(cnt * sizeof *eu);
    double *ng = malloc(2 * (size_t)rows * sizeof *ng), *nu = ng + rows;
    double sg = rope_minimind_ref_sigma(f->gate_proj, F, D, n_threads);
    double su = rope_minimind_ref_sigma(f->up_proj, F, D, n_threads);
    double sd = rope_minimind_ref_sigma(f->down_proj, D, F, n_threads);
    int err = g == NULL || eg == NULL || up == NULL || eu == NULL
              || ng == NULL || sg < 0 || su < 0 || sd < 0;
    if (!err)
        err = ref_linear(g, eg, x, ex, f->gate_proj, rows, D, F, b,
                         n_threads)
              || ref_linear(up, eu, x, ex, f->up_proj, rows, D, F, b,
                            n_threads);
    if (!err) {
        for (int r = 0; r < rows; r++) {
            ng[r] = sg * nx[r];
            nu[r] = su * nx[r];
        }
        ref_fold(eg, ng, rows, F);
        ref_fold(eu, nu, rows, F);
        ref_swiglu_lip(ny, g, up, ng, nu, rows, F);
        ref_swiglu(g, eg, up, eu, cnt, b);
        ref_fold(eg, ny, rows, F);
        for (int r = 0; r < rows; r++)
            ny[r] *= sd;
        err = ref_linear(y, ey, g, eg, f->down_proj, rows, F, D, b,
                         n_threads);
    }
    free(g);
    free(eg);
    free(up);
    free(eu);
    free(ng);
    return err ? -1 : 0;
}
typedef struct ref_moe_ctx {
    const rope_minimind_config *c;
    const rope_minimind_ref_budget *b;
    int *undecided; /* [n] */
    rope_minimind_ref_stats *st;
} ref_moe_ctx;

static void ref_route(const ref_moe_ctx *x, const double *z,
                      const double *ez, double *w, double *ew, int r,
                      double *p)
{
    const rope_minimind_ref_budget *b = x->b;
    int E = x->c->num_experts, k = x->c->num_experts_per_tok;
    double *ep = p + E, zmax = -INFINITY, sum = 0, avg = 0, P = 0, EP = 0;
    for (int e = 0; e < E; e++)
        zmax = z[e] > zmax ? z[e] : zmax;
    for (int e = 0; e < E; e++) {
        p[e] = exp(z[e] - zmax);
        sum += p[e];
    }
    for (int e = 0; e < E; e++) {
        p[e] /= sum;
        ep[e] = ez[e] + b->exp_rel + b->u * fabs(z[e] - zmax); /* a_e */
        avg += p[e] * ep[e];
        x->st->max_rel = ep[e] > x->st->max_rel ? ep[e] : x->st->max_rel;
    }
    for (int e = 0; e < E; e++)
        ep[e] = p[e] * (ep[e] + avg + ref_gamma(b, E) + b->u);
    for (int e = 0; e < E; e++)
        w[e] = -1;
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < E; e++)
            if (w[e] < 0 && (best < 0 || p[e] > p[best]))
                best = e;
        w[best] = p[best];
        P += p[best];
        EP += ep[best];
    }
    for (int a = 0; a < E; a++)
        for (int e = 0; e < E; e++)
            if (w[a] >= 0 && w[e] < 0) {
                double ratio = (p[a] - p[e]) / (ep[a] + ep[e]);
                if (ratio < x->st->min_margin)
                    x->st->min_margin = ratio;
                if (!(ratio > 1))
                    x->undecided[r] = 1;
            }
    for (int e = 0; e < E; e++) {
        if (w[e] < 0)
            ew[e] = 0;
        else if (!x->c->norm_topk_prob)
            ew[e] = ep[e];
        else if (k == 1) {
            w[e] = p[e] / (P + 1e-20); /* 1: P + 1e-20 rounds to P */
            ew[e] = 0;
        } else {
            w[e] = p[e] / (P + 1e-20);
            ew[e] = ep[e] / P + p[e] * EP / (P * P)
                    + (ref_gamma(b, k - 1) + b->u) * w[e];
        }
    }
}
static int ref_moe(double *y, double *ey, double *ny, const double *x,
                   const double *ex, const double *nx,
                   const rope_minimind_layer *L, int n,
                   const ref_moe_ctx *mc, int n_threads)
{
    const rope_minimind_config *c = mc->c;
    int D = c->hidden_size, E = c->num_experts, F = c->moe_intermediate_size;
    double kg = ref_gamma(mc->b, c->num_experts_per_tok);
    size_t nd = (size_t)n * D, ne = (size_t)n * E;
    double *z = malloc(ne * sizeof *z), *ez = malloc(ne * sizeof *ez);
    double *w = malloc(ne * sizeof *w), *ew = malloc(ne * sizeof *ew);
    double *buf = malloc((4 * nd + 2 * (size_t)E) * sizeof *buf);
    double *nb = malloc((2 * (size_t)n + E) * sizeof *nb);
    int *rows = malloc((size_t)n * sizeof *rows), err = -1;
    if (z && ez && w && ew && buf && nb && rows
        && ref_linear(z, ez, x, ex, L->gate, n, D, E, mc->b, n_threads) == 0) {
        for (int e = 0; e < E; e++) {
            double ss = 0;
            for (int k = 0; k < D; k++)
                ss += (double)L->gate[(size_t)e * D + k] * L->gate[(size_t)e * D + k];
            nb[2 * n + e] = sqrt(ss);
        }
        for (int r = 0; r < n; r++)
            for (int e = 0; e < E; e++)
                ez[(size_t)r * E + e] += nb[2 * n + e] * nx[r];
        for (int r = 0; r < n; r++)
            ref_route(mc, z + (size_t)r * E, ez + (size_t)r * E,
                      w + (size_t)r * E, ew + (size_t)r * E, r,
                      buf + 4 * nd);
        memset(y, 0, nd * sizeof *y);
        memset(ey, 0, nd * sizeof *ey);
        memset(ny, 0, (size_t)n * sizeof *ny);
        err = 0;
        for (int e = 0; e < E && !err; e++) {
            double *xe = buf, *exe = buf + nd, *fe = buf + 2 * nd, *efe = buf + 3 * nd;
            double *nxe = nb, *nfe = nb + n;
            int cnt = 0;
            for (int r = 0; r < n; r++)
                if (w[(size_t)r * E + e] >= 0) {
                    memcpy(xe + (size_t)cnt * D, x + (size_t)r * D, D * sizeof *xe);
                    memcpy(exe + (size_t)cnt * D, ex + (size_t)r * D, D * sizeof *xe);
                    nxe[cnt] = nx[r];
                    rows[cnt++] = r;
                }
            if (cnt > 0 && (err = ref_ffn(fe, efe, nfe, xe, exe, nxe, &L->experts[e],
                                          cnt, D, F, mc->b, n_threads)) == 0)
                ref_fold(efe, nfe, cnt, D);
            for (int j = 0; j < cnt && !err; j++) {
                double we = w[(size_t)rows[j] * E + e], ewe = ew[(size_t)rows[j] * E + e];
                double *yr = y + (size_t)rows[j] * D, *eyr = ey + (size_t)rows[j] * D;
                const double *f = fe + (size_t)j * D;
                double fn = 0;
                for (int i = 0; i < D; i++) {
                    yr[i] += we * f[i];
                    eyr[i] += kg * fabs(we * f[i]);
                    fn += f[i] * f[i];
                }
                ny[rows[j]] += fabs(we) * nfe[j] + ewe * sqrt(fn);
            }
        }
    }
    free(z);
    free(ez);
    free(w);
    free(ew);
    free(buf);
    free(nb);
    free(rows);
    return err;
}
typedef struct ref_buffers {
    double *h, *eh, *a, *ea, *q, *eq, *k, *ek, *v, *ev, *o, *eo, *t, *et;
    double *nh, *na, *nq, *nk, *nv, *no, *nt; /* norm bounds */
} ref_buffers;

static int ref_buffers_alloc(ref_buffers *B, const rope_minimind_config *c,
                             int n)
{
    size_t nd = (size_t)n * c->hidden_size;
    size_t nq = (size_t)n * c->num_attention_heads * c->head_dim;
    size_t nk = (size_t)n * c->num_key_value_heads * c->head_dim;
    size_t H = c->num_attention_heads, Hk = c->num_key_value_heads;
    size_t size[21] = {nd, nd, nd, nd, nq, nq, nk, nk, nk, nk, nq, nq,
                       nd, nd, n, n, n * H, n * Hk, n * Hk, n * H, n};
    double **p = &B->h;
    int ok = 1;
    for (int i = 0; i < 21; i++)
        ok &= (p[i] = calloc(size[i], sizeof **p)) != NULL;
    return ok ? 0 : -1;
}

static void ref_buffers_free(ref_buffers *B)
{
    double **p = &B->h;
    for (int i = 0; i < 21; i++)
        free(p[i]);
}
static int ref_per_head(double *nh, const double *nx, const float *w,
                        int n, int heads, int d, int D, int n_threads)
{
    for (int h = 0; h < heads; h++) {
        double sg = rope_minimind_ref_sigma(w + (size_t)h * d * D, d, D,
                                            n_threads);
        if (sg < 0)
            return -1;
        for (int i = 0; i < n; i++)
            nh[(size_t)i * heads + h] = sg * nx[i];
    }
    return 0;
}

static int ref_block(ref_buffers *B, const rope_minimind *m, int l, int n,
                     const ref_moe_ctx *mc, int n_threads)
{
    const rope_minimind_config *c = &m->config;
    const rope_minimind_layer *L = &m->layers[l];
    const rope_minimind_ref_budget *b = mc->b;
    int D = c->hidden_size, H = c->num_attention_heads, d = c->head_dim;
    int Hk = c->num_key_value_heads, T = n_threads;
    double eps = c->rms_norm_eps;
    size_t nd = (size_t)n * D;
    ref_fold(B->eh, B->nh, n, D);
    ref_rmsnorm(B->a, B->ea, B->na, B->h, B->eh, B->nh, L->input_layernorm, n,
                D, eps, b);
    ref_fold(B->ea, B->na, n, D);
    if (ref_linear(B->q, B->eq, B->a, B->ea, L->q_proj, n, D, H * d, b, T)
        || ref_linear(B->k, B->ek, B->a, B->ea, L->k_proj, n, D, Hk * d, b, T)
        || ref_linear(B->v, B->ev, B->a, B->ea, L->v_proj, n, D, Hk * d, b, T)
        || ref_per_head(B->nq, B->na, L->q_proj, n, H, d, D, T)
        || ref_per_head(B->nk, B->na, L->k_proj, n, Hk, d, D, T)
        || ref_per_head(B->nv, B->na, L->v_proj, n, Hk, d, D, T))
        return -1;
    ref_fold(B->eq, B->nq, (size_t)n * H, d);
    ref_fold(B->ek, B->nk, (size_t)n * Hk, d);
    ref_fold(B->ev, B->nv, (size_t)n * Hk, d);
    ref_rmsnorm(B->q, B->eq, B->nq, B->q, B->eq, B->nq, L->q_norm, n * H, d,
                eps, b);
    ref_rmsnorm(B->k, B->ek, B->nk, B->k, B->ek, B->nk, L->k_norm, n * Hk, d,
                eps, b);
    ref_fold(B->eq, B->nq, (size_t)n * H, d);
    ref_fold(B->ek, B->nk, (size_t)n * Hk, d);
    for (int i = 0; i < n; i++) {
        double lip = ref_rope_lip(m, i);
        for (int h = 0; h < H; h++)
            B->nq[(size_t)i * H + h] *= lip;
        for (int h = 0; h < Hk; h++)
            B->nk[(size_t)i * Hk + h] *= lip;
    }
    ref_rope(B->q, B->eq, n, H, m, b);
    ref_rope(B->k, B->ek, n, Hk, m, b);
    ref_fold(B->eq, B->nq, (size_t)n * H, d);
    ref_fold(B->ek, B->nk, (size_t)n * Hk, d);
    if (ref_attention(B->o, B->eo, B->no, B->q, B->eq, B->nq, B->k, B->ek,
                      B->nk, B->v, B->ev, B->nv, m, n, b, T,
                      &mc->st->max_rel))
        return -1;
    ref_fold(B->eo, B->no, (size_t)n * H, d);
    double so = rope_minimind_ref_sigma(L->o_proj, D, H * d, T);
    for (int i = 0; i < n; i++) { /* the heads side by side, then o_proj */
        double ss = 0;
        for (int h = 0; h < H; h++)
            ss += B->no[(size_t)i * H + h] * B->no[(size_t)i * H + h];
        B->nt[i] = so * sqrt(ss);
    }
    if (so < 0 || ref_linear(B->t, B->et, B->o, B->eo, L->o_proj, n, H * d, D,
                             b, T))
        return -1;
    ref_fold(B->et, B->nt, n, D);
    for (int i = 0; i < n; i++)
        B->nh[i] += B->nt[i];
    ref_residual(B->h, B->eh, B->t, B->et, nd, b);
    ref_fold(B->eh, B->nh, n, D);
    ref_rmsnorm(B->a, B->ea, B->na, B->h, B->eh, B->nh,
                L->post_attention_layernorm, n, D, eps, b);
    ref_fold(B->ea, B->na, n, D);
    if (c->use_moe ? ref_moe(B->t, B->et, B->nt, B->a, B->ea, B->na, L, n, mc,
                             T)
                   : ref_ffn(B->t, B->et, B->nt, B->a, B->ea, B->na, &L->mlp,
                             n, D, c->intermediate_size, b, T))
        return -1;
    ref_fold(B->et, B->nt, n, D);
    for (int i = 0; i < n; i++)
        B->nh[i] += B->nt[i];
    ref_residual(B->h, B->eh, B->t, B->et, nd, b);
    return 0;
}
static int ref_head(ref_buffers *B, const rope_minimind *m, int n,
                    const rope_minimind_ref_budget *b, int n_threads,
                    double *logits, double *bound)
{
    const rope_minimind_config *c = &m->config;
    int D = c->hidden_size, V = c->vocab_size;
    double eps = c->rms_norm_eps;
    ref_fold(B->eh, B->nh, n, D);
    ref_rmsnorm(B->a, B->ea, B->na, B->h, B->eh, B->nh, m->norm, n, D, eps,
                b);
    ref_fold(B->ea, B->na, n, D);
    if (ref_linear(logits, bound, B->a, B->ea, m->embed_tokens, n, D, V, b,
                   n_threads))
        return -1;
    for (int v = 0; v < V; v++) {
        double ss = 0;
        for (int k = 0; k < D; k++)
            ss += (double)m->embed_tokens[(size_t)v * D + k]
                  * m->embed_tokens[(size_t)v * D + k];
        for (int i = 0; i < n; i++)
            bound[(size_t)i * V + v] += sqrt(ss) * B->na[i];
    }
    return 0;
}
int rope_minimind_reference_ex(const rope_minimind *m, const int *ids,
                               int n, const rope_minimind_ref_budget *b,
                               int n_threads, double *logits,
                               double *bound, rope_minimind_ref_stats *st)
{
    rope_minimind_ref_budget b0;
    rope_minimind_ref_stats s0;
    ref_buffers B;
    const rope_minimind_config *c = m == NULL ? NULL : &m->config;
    int err = 0, *und, D, V;
    if (c == NULL || ids == NULL || logits == NULL || bound == NULL
        || n < 1 || n > c->max_position_embeddings)
        return -1;
    D = c->hidden_size;
    V = c->vocab_size;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return -1;
    rope_minimind_ref_budget_default(&b0);
    b = b == NULL ? &b0 : b;
    st = st == NULL ? &s0 : st;
    *st = (rope_minimind_ref_stats){0, INFINITY, 0, -1};
    if ((und = calloc((size_t)n, sizeof *und)) == NULL)
        return -1;
    ref_moe_ctx mc = {c, b, und, st};
    if (ref_buffers_alloc(&B, c, n) == 0) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < D; j++) {
                B.h[(size_t)i * D + j] = m->embed_tokens[(size_t)ids[i] * D + j];
                B.eh[(size_t)i * D + j] = 0;
            }
        for (int l = 0; l < c->num_hidden_layers && err == 0; l++)
            err = ref_block(&B, m, l, n, &mc, n_threads);
        if (err == 0)
            err = ref_head(&B, m, n, b, n_threads, logits, bound);
    } else
        err = -1;
    ref_buffers_free(&B);
    if (err == 0) {
        for (int i = 0; i < n; i++)
            if (und[i]) {
                st->undecided++;
                st->first_undecided = st->first_undecided < 0 ? i
                                      : st->first_undecided;
            }
        for (int i = st->first_undecided < 0 ? n : st->first_undecided; i < n;
             i++)
            for (int v = 0; v < V; v++)
                bound[(size_t)i * V + v] = INFINITY;
        err = st->undecided ? ROPE_MINIMIND_REF_UNDECIDED : 0;
    }
    free(und);
    return err;
}

int rope_minimind_reference(const rope_minimind *m, const int *ids, int n,
                            double *logits, double *bound)
{
    return rope_minimind_reference_ex(m, ids, n, NULL, 1, logits, bound,
                                      NULL);
}
/* W8b.5 On the command line */
static FILE *ref_npy_open(const char *path, const int *shape, int ndim,
                          long *data_at, char *err, size_t errlen)
{
    char h[192];
    int k = snprintf(h, sizeof h, "{'descr': '<f8', 'fortran_order': "
                     "False, 'shape': (");
    for (int i = 0; i < ndim; i++)
        k += snprintf(h + k, sizeof h - k, "%s%d", i ? ", " : "", shape[i]);
    k += snprintf(h + k, sizeof h - k, "), }");
    while ((10 + k + 1) % 64 != 0)
        h[k++] = ' ';
    h[k++] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)k, 0};
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fwrite(pre, 1, sizeof pre, f);
    fwrite(h, 1, (size_t)k, f);
    *data_at = 10 + k;
    return f;
}
static void ref_npy_put(FILE *f, long data_at, size_t at, const double *x,
                        size_t count)
{
    fseek(f, data_at + 8 * (long)at, SEEK_SET);
    for (size_t i = 0; i < count; i++) {
        uint64_t v;
        unsigned char by[8];
        memcpy(&v, &x[i], sizeof v);
        for (int j = 0; j < 8; j++)
            by[j] = (unsigned char)(v >> (8 * j));
        fwrite(by, 1, 8, f);
    }
}

static int ref_npy_close(FILE *f, const char *path, int failed, char *err,
                         size_t errlen)
{
    if ((ferror(f) | fclose(f)) && !failed) {
        snprintf(err, errlen, "%s: write error", path);
        failed = 1;
    }
    if (failed)
        remove(path);
    return failed ? -1 : 0;
}

static int ref_npy_f64(const char *path, const double *x, size_t count,
                       int n, int V, char *err, size_t errlen)
{
    int shape[3] = {2, n, V};
    long at;
    FILE *f = ref_npy_open(path, shape, 3, &at, err, errlen);
    if (f == NULL)
        return -1;
    ref_npy_put(f, at, 0, x, count);
    return ref_npy_close(f, path, 0, err, errlen);
}
int rope_minimind_reference_npy(const rope_minimind *m, const int *ids,
                                int n, int n_threads, const char *path,
                                char *err, size_t errlen)
{
    rope_minimind_ref_stats st;
    size_t nv = (size_t)n * (m ? m->config.vocab_size : 0);
    double *x = nv ? malloc(2 * nv * sizeof *x) : NULL;
    int r;
    if (x == NULL) {
        snprintf(err, errlen, "reference: no tokens or no memory");
        return -1;
    }
    r = rope_minimind_reference_ex(m, ids, n, NULL, n_threads, x, x + nv,
                                   &st);
    if (r < 0)
        snprintf(err, errlen, "reference: a token id outside the "
                 "vocabulary, too many tokens, or no memory");
    else if (ref_npy_f64(path, x, 2 * nv, n, m->config.vocab_size, err,
                         errlen) != 0)
        r = -1;
    else if (r == ROPE_MINIMIND_REF_UNDECIDED)
        snprintf(err, errlen, "reference: the expert route of token %d "
                 "is undecided in float32; its bounds and later ones are "
                 "infinite", st.first_undecided);
    free(x);
    return r;
}
/* W8b.8 The check block by block */
static int ref_block_at(const rope_minimind *m, int layer, const float *x,
                        int n, int n_threads, double *out, double *bound,
                        double *norm, rope_minimind_ref_stats *st)
{
    rope_minimind_ref_budget b;
    ref_buffers B;
    const rope_minimind_config *c = m == NULL ? NULL : &m->config;
    int err = -1, *und;
    if (c == NULL || x == NULL || out == NULL || bound == NULL || n < 1
        || n > c->max_position_embeddings || layer < 0
        || layer > c->num_hidden_layers)
        return -1;
    size_t nd = (size_t)n * c->hidden_size;
    rope_minimind_ref_budget_default(&b);
    *st = (rope_minimind_ref_stats){0, INFINITY, 0, -1};
    if ((und = calloc((size_t)n, sizeof *und)) == NULL)
        return -1;
    ref_moe_ctx mc = {c, &b, und, st};
    if (ref_buffers_alloc(&B, c, n) == 0) {
        for (size_t i = 0; i < nd; i++) {
            B.h[i] = x[i];
            B.eh[i] = 0;
        }
        if (layer == c->num_hidden_layers)
            err = ref_head(&B, m, n, &b, n_threads, out, bound);
        else if ((err = ref_block(&B, m, layer, n, &mc, n_threads)) == 0) {
            memcpy(out, B.h, nd * sizeof *out);
            for (int i = 0; i < n; i++) {
                const double *e = B.eh + (size_t)i * c->hidden_size;
                double ss = 0;
                for (int j = 0; j < c->hidden_size; j++) {
                    bound[(size_t)i * c->hidden_size + j] = e[j] + B.nh[i];
                    ss += e[j] * e[j];
                }
                if (norm != NULL)
                    norm[i] = sqrt(ss) + B.nh[i];
            }
        }
    }
    ref_buffers_free(&B);
    for (int i = 0; i < n && err == 0; i++)
        if (und[i]) {
            st->undecided++;
            st->first_undecided = st->first_undecided < 0 ? i : st->first_undecided;
            for (int j = 0; j < c->hidden_size; j++)
                bound[(size_t)i * c->hidden_size + j] = INFINITY;
            if (norm != NULL)
                norm[i] = INFINITY;
        }
    free(und);
    return err == 0 && st->undecided ? ROPE_MINIMIND_REF_UNDECIDED : err;
}

int rope_minimind_reference_block(const rope_minimind *m, int layer,
                                  const float *x, int n, int n_threads,
                                  double *out, double *bound)
{
    rope_minimind_ref_stats st;
    return ref_block_at(m, layer, x, n, n_threads, out, bound, NULL, &st);
}

int rope_minimind_reference_block_norm(const rope_minimind *m, int layer,
                                       const float *x, int n,
                                       int n_threads, double *out,
                                       double *bound, double *norm)
{
    rope_minimind_ref_stats st;
    return ref_block_at(m, layer, x, n, n_threads, out, bound, norm, &st);
}
int rope_minimind_reference_blocks_npy(const rope_minimind *m,
                                       const float *states, int n,
                                       int n_threads, const char *prefix,
                                       char *err, size_t errlen)
{
    const rope_minimind_config *c = m == NULL ? NULL : &m->config;
    if (c == NULL || states == NULL || prefix == NULL || n < 1) {
        snprintf(err, errlen, "reference: no model, states or tokens");
        return -1;
    }
    int L = c->num_hidden_layers, D = c->hidden_size, V = c->vocab_size;
    int sb[4] = {2, L, n, D}, sh[3] = {2, n, V}, sn[2] = {L, n};
    int r = 0, bad = -1, tok = -1;
    size_t nd = (size_t)n * D, nv = (size_t)n * V, len = strlen(prefix);
    double *x = malloc((2 * (nd > nv ? nd : nv) + n) * sizeof *x);
    char *pb = malloc(len + 16), *ph = malloc(len + 16);
    char *pn = malloc(len + 16);
    long ab = 0, ah = 0, an = 0;
    FILE *fb = NULL, *fh = NULL, *fn = NULL;
    if (x && pb && ph && pn) {
        snprintf(pb, len + 16, "%s-blocks.npy", prefix);
        snprintf(ph, len + 16, "%s-head.npy", prefix);
        snprintf(pn, len + 16, "%s-norms.npy", prefix);
        if ((fb = ref_npy_open(pb, sb, 4, &ab, err, errlen)) != NULL
            && (fn = ref_npy_open(pn, sn, 2, &an, err, errlen)) != NULL)
            fh = ref_npy_open(ph, sh, 3, &ah, err, errlen);
    } else
        snprintf(err, errlen, "reference: no memory");
    r = fh == NULL ? -1 : 0;
    for (int l = 0; l <= L && r >= 0; l++) {
        rope_minimind_ref_stats st;
        size_t w = l < L ? nd : nv;
        double *nrm = x + 2 * (nd > nv ? nd : nv);
        int rl = ref_block_at(m, l, states + (size_t)l * nd, n, n_threads, x,
                              x + w, nrm, &st);
        if (rl < 0) {
            snprintf(err, errlen, "reference: block %d: a state of %d tokens "
                     "too long for the tables, or no memory", l, n);
            r = -1;
        } else if (l < L) {
            ref_npy_put(fb, ab, (size_t)l * nd, x, nd);
            ref_npy_put(fb, ab, (size_t)(L + l) * nd, x + nd, nd);
            ref_npy_put(fn, an, (size_t)l * n, nrm, n);
        } else {
            ref_npy_put(fh, ah, 0, x, 2 * nv);
        }
        if (rl == ROPE_MINIMIND_REF_UNDECIDED && bad < 0) {
            bad = l;
            tok = st.first_undecided;
        }
    }
    if (fb != NULL && ref_npy_close(fb, pb, r < 0, err, errlen) != 0)
        r = -1;
    if (fn != NULL && ref_npy_close(fn, pn, r < 0, err, errlen) != 0) {
        remove(pb);
        r = -1;
    }
    if (fh != NULL && ref_npy_close(fh, ph, r < 0, err, errlen) != 0) {
        remove(pb);
        remove(pn);
        r = -1;
    }
    if (r == 0 && bad >= 0) {
        snprintf(err, errlen, "reference: the expert route of token %d in "
                 "block %d is undecided in float32; its bound there is "
                 "infinite", tok, bad);
        r = ROPE_MINIMIND_REF_UNDECIDED;
    }
    free(x);
    free(pb);
    free(ph);
    free(pn);
    return r;
}
