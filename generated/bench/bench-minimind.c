/* W8c.8 The benchmark */
/* bench-minimind.c: prefill and decode tokens/s of MiniMind's default
   model in C and, in the same run, in PyTorch (workshop W8c).
   usage: bench-minimind PYTHON SCRIPT [DIR COMMIT]: with DIR, the
   numbers and their provenance are recorded into DIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "bench-harness.h"
#include "rope.h"
enum {
    MMB_PROMPT = 512, /* prefill: tokens of the prompt */
    MMB_DECODE_PROMPT = 64, /* decode: the prompt before it */
    MMB_DECODE = 128, /* decode: tokens, one per call */
    MMB_REPS = 5 /* timed runs; the best counts */
};
/* two threads' FMA peak over one thread's, at least, for a run whose
   second core was free (chapter 5's gate, BENCH_SCALING_GATE) */
#define MMB_SCALING BENCH_SCALING_GATE
typedef struct mmb_side {
    double prefill[2], decode[2]; /* tokens/s, [threads - 1] */
    double rss_mib; /* peak resident memory */
    char torch[256], blas[256]; /* PyTorch's version, BLAS library */
} mmb_side;
static double mmb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
typedef struct mmb_machine {
    double peak[2]; /* FMA peak, GFLOP/s, 1 and 2 threads */
    double bw; /* one core reading the weights, GB/s */
    double mib; /* weights read per decoded token */
    double prefill_gflop; /* linear layers of one prefill */
} mmb_machine;
static volatile uint64_t mmb_sink; /* the reads' result is kept */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static uint64_t
mmb_read_avx2(const uint64_t *a, size_t lines) /* 64 bytes a line */
{
    __m256i x0 = _mm256_setzero_si256(), x1 = x0;
    for (size_t i = 0; i < lines; i++) {
        const __m256i *p = (const __m256i *)(a + 8 * i);
        x0 = _mm256_xor_si256(x0, _mm256_loadu_si256(p));
        x1 = _mm256_xor_si256(x1, _mm256_loadu_si256(p + 1));
    }
    return (uint64_t)_mm256_extract_epi64(_mm256_xor_si256(x0, x1), 0);
}
#endif
static uint64_t mmb_read(const uint64_t *a, size_t lines)
{
    uint64_t x = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2"))
        return mmb_read_avx2(a, lines);
#endif
    for (size_t i = 0; i < 8 * lines; i++)
        x ^= a[i];
    return x;
}
static double mmb_read_gbs(size_t bytes)
{
    size_t lines = bytes / 64;
    uint64_t *a = malloc(lines * 64);
    double best = 0;
    if (a == NULL) return 0;
    for (size_t i = 0; i < 8 * lines; i++) a[i] = i;
    for (int rep = 0; rep < 5; rep++) {
        double t = mmb_now();
        mmb_sink = mmb_read(a, lines);
        t = mmb_now() - t;
        best = 64e-9 * (double)lines / t > best ? 64e-9 * (double)lines / t
                                                 : best;
    }
    free(a);
    return best;
}
static void mmb_measure(const rope_minimind_config *c, mmb_machine *m)
{
    double D = c->hidden_size, F = c->intermediate_size;
    double qd = (double)c->num_attention_heads * c->head_dim;
    double kvd = (double)c->num_key_value_heads * c->head_dim;
    double layer = D * qd * 2 + D * kvd * 2 + 3 * D * F; /* floats */
    double head = D * c->vocab_size;
    m->mib = (c->num_hidden_layers * layer + head) * 4 / 1048576;
    m->prefill_gflop = (2.0 * MMB_PROMPT * c->num_hidden_layers * layer
                        + 2 * head) / 1e9;
    rope_simd s = rope_simd_resolve(ROPE_SIMD_AUTO);
    m->peak[0] = rope_fma_peak(s, 1, 0.5);
    m->peak[1] = rope_fma_peak(s, 2, 0.5);
    m->bw = mmb_read_gbs((size_t)(m->mib * 1048576));
}
static float *mmb_weights(const rope_minimind_config *c)
{
    int nt = rope_minimind_tensor_list(c, NULL);
    rope_minimind_tensor *t = malloc(sizeof *t * (size_t)nt);
    float *data = malloc(sizeof(float) * rope_minimind_n_floats(c));
    uint64_t seed = 41;
    if (t == NULL || data == NULL) {
        free(t);
        free(data);
        return NULL;
    }
    rope_minimind_tensor_list(c, t);
    for (int k = 0; k < nt; k++) {
        float *x = data + t[k].offset;
        long n = t[k].ndim == 2 ? t[k].shape[0] * t[k].shape[1]
                                : t[k].shape[0];
        double a = t[k].ndim == 2 ? 1 / sqrt((double)t[k].shape[1]) : 0;
        for (long i = 0; i < n; i++)
            x[i] = t[k].ndim == 2 ? (float)(a * (2.0 * (double)(
                       rope_splitmix64(&seed) >> 11) * 0x1p-53 - 1))
                                  : 1.0f;
    }
    free(t);
    return data;
}
static int mmb_time_c(const rope_minimind *m, int threads, double *prefill,
                      double *decode)
{
    rope_minimind_state s;
    int V = m->config.vocab_size, ids[MMB_PROMPT], err = 0;
    float *logits = malloc(sizeof(float) * (size_t)V);
    uint64_t seed = 7;
    for (int i = 0; i < MMB_PROMPT; i++)
        ids[i] = (int)(rope_splitmix64(&seed) % (uint64_t)V);
    if (logits == NULL
        || rope_minimind_state_init(&s, m, MMB_PROMPT, threads) != 0) {
        free(logits);
        return -1;
    }
    *prefill = *decode = 0;
    for (int rep = -1; rep < MMB_REPS && !err; rep++) {
        rope_minimind_state_reset(&s);
        double t0 = mmb_now();
        err |= rope_minimind_forward(m, &s, ids, MMB_PROMPT, logits, 0);
        double t1 = mmb_now();
        rope_minimind_state_reset(&s);
        err |= rope_minimind_forward(m, &s, ids, MMB_DECODE_PROMPT, logits, 0);
        double t2 = mmb_now();
        for (int k = 0; k < MMB_DECODE && !err; k++)
            err |= rope_minimind_forward(m, &s, &ids[MMB_DECODE_PROMPT + k], 1,
                                         logits, 0);
        double t3 = mmb_now();
        if (rep >= 0 && MMB_PROMPT / (t1 - t0) > *prefill)
            *prefill = MMB_PROMPT / (t1 - t0);
        if (rep >= 0 && MMB_DECODE / (t3 - t2) > *decode)
            *decode = MMB_DECODE / (t3 - t2);
    }
    rope_minimind_state_free(&s);
    free(logits);
    return err;
}
static void mmb_time_torch(const char *py, const char *script, int threads,
                           mmb_side *t)
{
    char cmd[2048], line[512], v[256];
    double x;
    snprintf(cmd, sizeof cmd, "%s %s --threads %d --prompt %d "
             "--decode-prompt %d --decode %d --reps %d 2>&1", py, script,
             threads, MMB_PROMPT, MMB_DECODE_PROMPT, MMB_DECODE, MMB_REPS);
    FILE *p = popen(cmd, "r");
    while (p && fgets(line, sizeof line, p)) {
        if (sscanf(line, "prefill %lf", &x) == 1)
            t->prefill[threads - 1] = x;
        else if (sscanf(line, "decode %lf", &x) == 1)
            t->decode[threads - 1] = x;
        else if (sscanf(line, "rss_mib %lf", &x) == 1)
            t->rss_mib = x > t->rss_mib ? x : t->rss_mib;
        else if (sscanf(line, "torch %255s", v) == 1)
            snprintf(t->torch, sizeof t->torch, "%s", v);
        else if (sscanf(line, "blas %255s", v) == 1)
            snprintf(t->blas, sizeof t->blas, "%s", v);
        else
            printf("  PyTorch: %s", line);
    }
    if (p) pclose(p);
}
static void mmb_print_row(const mmb_side *cs, const mmb_side *ts,
                          int threads)
{
    for (int k = 0; k < 2; k++) {
        int i = threads - 1;
        double a = k ? cs->decode[i] : cs->prefill[i];
        double b = k ? ts->decode[i] : ts->prefill[i];
        printf("  %-7s %d thread%s: C %8.1f tokens/s",
               k ? "decode" : "prefill", threads, threads > 1 ? "s" : " ", a);
        if (b > 0)
            printf("   PyTorch %8.1f tokens/s   C / PyTorch %6.2f\n", b,
                   a / b);
        else
            printf("   PyTorch not measured\n");
    }
}
/* W8c.9 Recording the numbers */
static void mmb_tex(char *out, size_t n, const char *s) /* escape _ % & # */
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        if (strchr("_%&#", *s)) out[k++] = '\\';
        out[k++] = *s;
    }
    out[k] = '\0';
}
static void mmb_cpu(char *model, size_t n)
{
    char line[1024];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(model, n, "unknown");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, n, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
}
static int mmb_record(const char *dir, const char *commit,
                      const rope_minimind_config *c, const mmb_side *cs,
                      const mmb_side *ts, const mmb_machine *mach)
{
    char path[4096], cpu[256], tcpu[512], date[32], blas[512], tv[128];
    time_t now = time(NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *simd = rope_simd_name(rope_simd_resolve(ROPE_SIMD_AUTO));
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    mmb_cpu(cpu, sizeof cpu);
    mmb_tex(tcpu, sizeof tcpu, cpu);
    const char *base = strrchr(ts->blas, '/'); /* the file's name */
    mmb_tex(blas, sizeof blas, base ? base + 1 : ts->blas[0] ? ts->blas
                                                             : "none");
    mmb_tex(tv, sizeof tv, ts->torch[0] ? ts->torch : "none");
    (void)c;
    snprintf(path, sizeof path, "%s/mm-provenance.txt", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) { perror(path); return -1; }
    fprintf(f, "command make bench RECORD=1 (build/bench-minimind)\n"
            "commit %s\ndate %s\ncpu %s\ncores %ld\nsimd %s\ntorch %s\n"
            "blas %s\n", commit, date, cpu, cores, simd,
            ts->torch[0] ? ts->torch : "none", ts->blas[0] ? ts->blas : "none");
    if (fclose(f) != 0) { perror(path); return -1; }
    snprintf(path, sizeof path, "%s/mm-measured.tex", dir);
    if ((f = fopen(path, "w")) == NULL) { perror(path); return -1; }
    fprintf(f, "%% measured by build/bench-minimind (make bench RECORD=1)\n");
    #define MMB_DEF(key, ...) \
        (fprintf(f, "\\ropedef{" key "}{"), fprintf(f, __VA_ARGS__), \
         fprintf(f, "}\n"))
    MMB_DEF("mm-prov-commit", "%s", commit);
    MMB_DEF("mm-prov-date", "%s", date);
    MMB_DEF("mm-prov-cpu", "%s", tcpu);
    MMB_DEF("mm-prov-cores", "%ld", cores);
    MMB_DEF("mm-prov-simd", "%s", simd);
    MMB_DEF("mm-prov-torch", "%s", tv);
    MMB_DEF("mm-prov-blas", "%s", blas);
    for (int i = 0; i < 2; i++) {
        const char *th = i ? "2" : "1";
        fprintf(f, "\\ropedef{mm-prefill-c-%s}{%.0f}\n", th, cs->prefill[i]);
        fprintf(f, "\\ropedef{mm-decode-c-%s}{%.1f}\n", th, cs->decode[i]);
        fprintf(f, "\\ropedef{mm-prefill-torch-%s}{%.1f}\n", th,
                ts->prefill[i]);
        fprintf(f, "\\ropedef{mm-decode-torch-%s}{%.1f}\n", th, ts->decode[i]);
        fprintf(f, "\\ropedef{mm-prefill-ratio-%s}{%.1f}\n", th,
                ts->prefill[i] > 0 ? cs->prefill[i] / ts->prefill[i] : 0);
        fprintf(f, "\\ropedef{mm-decode-ratio-%s}{%.1f}\n", th,
                ts->decode[i] > 0 ? cs->decode[i] / ts->decode[i] : 0);
        fprintf(f, "\\ropedef{mm-peak-%s}{%.0f}\n", th, mach->peak[i]);
        double gf = mach->prefill_gflop * cs->prefill[i] / MMB_PROMPT;
        fprintf(f, "\\ropedef{mm-prefill-gflops-%s}{%.0f}\n", th, gf);
        fprintf(f, "\\ropedef{mm-prefill-pct-%s}{%.0f}\n", th,
                100 * gf / mach->peak[i]);
        fprintf(f, "\\ropedef{mm-decode-gbs-%s}{%.1f}\n", th,
                cs->decode[i] * mach->mib * 1048576 / 1e9);
    }
    MMB_DEF("mm-two-cores", "%d", mach->peak[1] >= MMB_SCALING * mach->peak[0]);
    MMB_DEF("mm-bw", "%.1f", mach->bw);
    MMB_DEF("mm-decode-mib", "%.1f", mach->mib);
    MMB_DEF("mm-balance", "%.0f", mach->peak[0] / mach->bw);
    MMB_DEF("mm-roof-1", "%.0f", mach->bw * 1e9 / (mach->mib * 1048576));
    MMB_DEF("mm-rss-c", "%.0f", cs->rss_mib);
    MMB_DEF("mm-rss-torch", "%.0f", ts->rss_mib);
    #undef MMB_DEF
    if (fclose(f) != 0) { perror(path); return -1; }
    snprintf(path, sizeof path, "%s/mm-speed.tex", dir);
    if ((f = fopen(path, "w")) == NULL) { perror(path); return -1; }
    fprintf(f, "\\begin{tabular}{lrrr}\n"
            "tokens per second & C & PyTorch & C / PyTorch\\\\\\hline\n");
    for (int k = 0; k < 4; k++) {
        int i = k % 2, dec = k / 2;
        double a = dec ? cs->decode[i] : cs->prefill[i];
        double b = dec ? ts->decode[i] : ts->prefill[i];
        fprintf(f, "%s, %d thread%s & %.1f & %.1f & %.1f\\\\\n",
                dec ? "decode" : "prefill of 512 tokens", i + 1, i ? "s" : "",
                a, b, b > 0 ? a / b : 0);
    }
    fprintf(f, "\\hline\npeak memory, MiB & %.0f & %.0f &\\\\\n"
            "\\end{tabular}\n", cs->rss_mib, ts->rss_mib);
    if (fclose(f) != 0) { perror(path); return -1; }
    return 0;
}
/* W8c.8 The benchmark */
int main(int argc, char **argv)
{
    const char *py = argc > 1 ? argv[1] : "/usr/bin/python3";
    const char *script = argc > 2 ? argv[2] : "python/bench-minimind.py";
    const char *dir = argc > 4 ? argv[3] : NULL;
    rope_minimind_config c;
    rope_minimind m;
    mmb_side cs = {{0, 0}, {0, 0}, 0, "", ""}, ts = cs;
    rope_minimind_config_defaults(&c);
    float *data = mmb_weights(&c);
    if (data == NULL || rope_minimind_bind(&m, &c, data) != 0) {
        fprintf(stderr, "bench-minimind: cannot build the model\n");
        return 1;
    }
    printf("MiniMind's default model (chapter 8), float32, random weights:"
           "\nprefill of %d tokens, decode of %d after %d; best of %d\n",
           MMB_PROMPT, MMB_DECODE, MMB_DECODE_PROMPT, MMB_REPS);
    for (int threads = 1; threads <= 2; threads++) {
        if (mmb_time_c(&m, threads, &cs.prefill[threads - 1],
                       &cs.decode[threads - 1]) != 0) {
            fprintf(stderr, "bench-minimind: the forward pass failed\n");
            return 1;
        }
        mmb_time_torch(py, script, threads, &ts);
        mmb_print_row(&cs, &ts, threads);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cs.rss_mib = (double)ru.ru_maxrss / 1024;
    mmb_machine mach;
    mmb_measure(&c, &mach);
    printf("  memory: C %.0f MiB, PyTorch %.0f MiB (peak resident)\n",
           cs.rss_mib, ts.rss_mib);
    printf("  PyTorch %s, BLAS %s\n", ts.torch[0] ? ts.torch : "?",
           ts.blas[0] ? ts.blas : "?");
    printf("  weights read per decoded token %.1f MiB; one core reads %.1f "
           "GB/s: "
           "at most %.1f tokens/s\n", mach.mib, mach.bw,
           mach.bw * 1e9 / (mach.mib * 1048576));
    if (mach.peak[1] < MMB_SCALING * mach.peak[0])
        printf("  the second core was busy: two threads' FMA peak is only "
               "%.2f times one thread's\n", mach.peak[1] / mach.peak[0]);
    for (int i = 0; i < 2; i++)
        printf("  prefill, %d thread%s: %.1f GFLOP/s in the linear layers, "
               "%.0f%% of the FMA peak %.1f\n", i + 1, i ? "s" : "",
               mach.prefill_gflop * cs.prefill[i] / MMB_PROMPT,
               100 * mach.prefill_gflop * cs.prefill[i] / MMB_PROMPT
                   / mach.peak[i], mach.peak[i]);
    if (dir != NULL && mmb_record(dir, argv[4], &c, &cs, &ts, &mach) != 0)
        return 1;
    rope_minimind_free(&m);
    free(data);
    return 0;
}
