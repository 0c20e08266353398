/* W7.7 The training benchmark */
/* bench-evidence.c: training throughput of chapter 7's trainer, and the
   same model in PyTorch measured in the same run. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rope.h"

static double ev_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { B = 8, T = 256, STEPS = 8, V = 64 };

/* The best tokens/s of three blocks of STEPS training steps. */
static double ev_rate(int threads)
{
    rope_lm_config c;
    rope_lm m;
    rope_lm_buffers b;
    rope_lm_adamw o;
    static float cs[T * 16], sn[T * 16];
    uint64_t st = 5;
    double best = 0;
    rope_lm_config_defaults(&c);
    c.vocab_size = V;
    if (rope_lm_init(&m, &c, 1) != 0
        || rope_lm_buffers_make(&b, &m, B, T, threads) != 0
        || rope_lm_tables(ROPE_LM_M_ROPE, 1e4, 1, T, T,
                          c.block.head_dim, cs, sn) != 0)
        return 0;
    rope_lm_adamw_defaults(&o);
    for (int rep = -2; rep < 3 * STEPS; rep++) {
        double t0 = ev_now();
        for (int i = 0; i < B * T; i++) {
            b.tokens[i] = (int)(rope_splitmix64(&st) % V);
            b.targets[i] = (int)(rope_splitmix64(&st) % V);
        }
        rope_lm_forward(&m, &b, cs, sn);
        rope_lm_backward(&m, &b, cs, sn);
        rope_lm_adamw_step(&m, &o, 1e-3);
        static double block;
        if (rep < 0)
            continue;
        block += ev_now() - t0;
        if ((rep + 1) % STEPS == 0) {
            double rate = (double)STEPS * B * T / block;
            best = rate > best ? rate : best;
            block = 0;
        }
    }
    rope_lm_buffers_free(&b);
    rope_lm_free(&m);
    return best;
}

int main(int argc, char **argv)
{
    const char *py = argc > 1 ? argv[1] : "/usr/bin/python3";
    const char *script = argc > 2 ? argv[2] : "python/bench-evidence.py";
    printf("evidence training (chapter 7): the float32 model of the grid, "
           "batch %dx%d\n", B, T);
    for (int threads = 1; threads <= 2; threads++) {
        double best = ev_rate(threads);
        printf("  C, float32, %d thread%s:       %10.0f tokens/s\n", threads,
               threads > 1 ? "s" : "", best);
        {
            char cmd[1024], line[256];
            double torch_rate = 0;
            snprintf(cmd, sizeof cmd, "%s %s --steps %d --threads %d 2>&1", py,
                     script, STEPS, threads);
            FILE *p = popen(cmd, "r");
            while (p && fgets(line, sizeof line, p))
                if (sscanf(line, "tokens/s %lf", &torch_rate) != 1)
                    printf("  %s", line);
            if (p)
                pclose(p);
            if (torch_rate > 0)
                printf("  PyTorch, float32, %d thread%s: %10.0f tokens/s\n"
                       "  ratio C / PyTorch: %.2f\n", threads, threads > 1 ? "s" : "",
                       torch_rate, best / torch_rate);
            else
                printf("  PyTorch: not measured (see the line above); no ratio\n");
        }
    }
    return 0;
}
