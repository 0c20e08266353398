/* W6.6 The numbers of chapter 6 */
/* record-ring.c: the measurements of chapter 6, for
   make bench RECORD=1 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bookdata.h"
#include "record.h"

static double ring_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double ring_kernel_speed(int h, int hkv, int d)
{
    const int n = 2048;
    rope_attention_params p;
    uint64_t st = 61;
    size_t nq = (size_t)n * h * d, nk = (size_t)n * hkv * d;
    float *q = malloc(sizeof(float) * nq), *o = malloc(sizeof(float) * nq);
    float *k = malloc(sizeof(float) * nk), *v = malloc(sizeof(float) * nk);
    double best = 1e30;
    if (!q || !o || !k || !v) exit(1);
    for (size_t i = 0; i < nq; i++) q[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) k[i] = (float)rope_uniform(&st) - 0.5f;
    for (size_t i = 0; i < nk; i++) v[i] = (float)rope_uniform(&st) - 0.5f;
    rope_attention_defaults(&p);
    p.seq_len = p.kv_len = n; p.n_heads = h; p.n_kv_heads = hkv;
    p.head_dim = d; p.causal = 1;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = ring_now();
        if (rope_attention(o, q, k, v, &p)) exit(1);
        best = fmin(best, ring_now() - t0);
    }
    free(q); free(o); free(k); free(v);
    return 2.0 * n * n * d * h / best;
}
static void ring_popen(const char *env, int n_ranks, const char *args,
                       const char *word, char *line, size_t size)
{
    const char *prog = getenv(env);
    char cmd[1024];
    if (prog == NULL) {
        fprintf(stderr, "record: %s is not set (run make bench RECORD=1)\n",
                env);
        exit(1);
    }
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun "
             "--oversubscribe -np %d %s %s", n_ranks, prog, args);
    FILE *p = popen(cmd, "r");
    int found = 0;
    while (p != NULL && fgets(line, (int)size, p) != NULL)
        if (strncmp(line, word, strlen(word)) == 0 || word[0] == '\0') {
            found = 1;
            break;
        }
    if (p == NULL || pclose(p) != 0 || !found) {
        fprintf(stderr, "record: '%s' failed\n", cmd);
        exit(1);
    }
}

int record_ring(const char *dir)
{
    FILE *f = bd_open(dir, "ring-measured-numbers.tex");
    double sigma = ring_kernel_speed(8, 4, 96);
    FILE *sg = bd_open(dir, "ring-sigma.txt");
    fprintf(sg, "%.6g\n", sigma);
    bd_close(sg);
    fprintf(f, "%% measured by make bench RECORD=1 (record-ring.c)\n");
    bd_def(f, "ring-kernel-gflops", "%.1f", sigma / 1e9);
    bd_def(f, "ring-cores", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    static const char *const lay[2] = {"contiguous", "zigzag"};
    double ms[2][6];
    FILE *tm = bd_open(dir, "ring-measured.tex");
    fprintf(tm, "\\begin{tabular}{lrrrrr}\\toprule\nlayout & compute & wait & "
            "communication & total & work ratio \\\\\n\\midrule\n");
    for (int l = 0; l < 2; l++) {
        char args[128], line[512];
        snprintf(args, sizeof args, "bench --n 4096 --layout %s --causal "
                 "--reps 5", lay[l]);
        ring_popen("ROPE_RING", 2, args, "", line, sizeof line);
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &ms[l][0], &ms[l][1],
                   &ms[l][2], &ms[l][3], &ms[l][4], &ms[l][5]) != 6)
            exit(1);
        fprintf(tm, "%s & %.1f & %.2f & %.2f & %.1f & %.2f \\\\\n", lay[l],
                ms[l][0], ms[l][1], ms[l][2], ms[l][3], ms[l][4] / ms[l][5]);
    }
    fprintf(tm, "\\bottomrule\\end{tabular}\n");
    bd_close(tm);
    bd_def(f, "ring-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-zz-compute-ms", "%.1f", ms[1][0]);
    bd_def(f, "ring-zz-wait-ms", "%.2f", ms[1][1]);
    bd_def(f, "ring-step-compute-ms", "%.1f", ms[1][0] / 2);
    bd_def(f, "ring-step-comm-ms", "%.2f", ms[1][2]);
    bd_def(f, "ring-overlap-pct", "%.0f",
           100 * fmax(0, 1 - ms[1][1] / ms[1][2]));
    bd_def(f, "ring-zz-speedup", "%.2f", ms[0][3] / ms[1][3]);
    bd_def(f, "ring-pred-speedup", "%.2f", ms[0][4] / ms[1][4]);
    char line[512], e1[64];
    double ek, er;
    ring_popen("ROPE_RING_TEST", 3, "sweep", "max relative error", line,
               sizeof line);
    if (sscanf(line, "max relative error %lf against the kernel, %lf",
               &ek, &er) != 2)
        exit(1);
    bd_sci(e1, sizeof e1, fmax(fmax(ek, er), 1e-12), 2);
    bd_def(f, "ring-test-maxerr", "%s", e1);
    bd_close(f);
    return 0;
}
