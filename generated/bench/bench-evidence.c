/* W7.7 The training benchmark */
/* bench-evidence.c: training throughput of chapter 7's model, and the
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

int main(int argc, char **argv)
{
    enum { B = 16, T = 32, STEPS = 10 };
    const char *py = argc > 1 ? argv[1] : "/usr/bin/python3";
    const char *script = argc > 2 ? argv[2] : "python/bench-evidence.py";
    rope_ev_config c;
    rope_ev_model m;
    double best = 0;
    rope_ev_config_default(&c, ROPE_EV_ROPE);
    if (rope_ev_init(&m, &c, 1) != 0) return 1;
    rope_ev_train(&m, ROPE_EV_COPY, T, B, 2, 3e-3, 1, ROPE_EV_PLAIN, 1, T,
                  NULL, NULL);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = ev_now();
        rope_ev_train(&m, ROPE_EV_COPY, T, B, STEPS, 3e-3, 2 + rep,
                      ROPE_EV_PLAIN, 1, T, NULL, NULL);
        double rate = (double)STEPS * B * T / (ev_now() - t0);
        best = rate > best ? rate : best;
    }
    printf("evidence training (chapter 7): %zu parameters, batch %dx%d, "
           "1 thread\n", m.n_params, B, T);
    rope_ev_free(&m);
    printf("  C, float64:       %10.0f tokens/s\n", best);
    {
        char cmd[1024], line[256];
        double torch_rate = 0;
        snprintf(cmd, sizeof cmd, "%s %s --steps %d 2>&1", py, script, STEPS);
        FILE *p = popen(cmd, "r");
        while (p && fgets(line, sizeof line, p))
            if (sscanf(line, "tokens/s %lf", &torch_rate) != 1)
                printf("  %s", line);
        if (p) pclose(p);
        if (torch_rate > 0)
            printf("  PyTorch, float64: %10.0f tokens/s\n"
                   "  ratio C / PyTorch: %.2f\n", torch_rate, best / torch_rate);
        else
            printf("  PyTorch: not measured (see the line above); no ratio\n");
    }
    return 0;
}
