/* W7.3 The command rope evidence */
/* cli-evidence.c: `rope evidence', chapter 7's experiments. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char *const ev_method_names[] = {
    "plain", "pi", "ntk", "dynamic", "yarn-minimind", "yarn-hf"};
static const char *const ev_pe_names[] = {"nope", "sin", "rope"};

static int ev_print_reference(void)
{
    rope_ev_config c;
    rope_ev_model m;
    double loss[8];
    rope_ev_config_default(&c, ROPE_EV_ROPE);
    if (rope_ev_init(&m, &c, 1) != 0
        || rope_ev_train(&m, ROPE_EV_COPY, 16, 4, 8, 3e-3, 1, ROPE_EV_PLAIN,
                         1, 16, NULL, loss) != 0)
        return cli_error("evidence: the reduced run failed");
    printf("# losses of rope evidence --reference (test-evidence.c)\n");
    for (int i = 0; i < 8; i++)
        printf("%.17g\n", loss[i]);
    rope_ev_free(&m);
    return 0;
}
static int ev_no_memory(const rope_ev_model *m, int batch, int len,
                        const char *what)
{
    size_t mib = (rope_ev_workspace_bytes(m, batch, len)
                  + ((size_t)1 << 20) - 1) >> 20;
    return cli_error("out of memory: needs %zu MiB for the %s workspace "
                     "(batch %d of %d tokens)", mib, what, batch, len);
}
static int ev_eval_all(rope_ev_model *m, int task, int pe, long seed,
                       int len, int seqs, int method, double fixed,
                       const char *tag)
{
    for (int n = len; n <= 8 * len; n *= 2) {
        double acc, loss, s = fixed > 0 ? fixed : (double)n / len;
        int e = rope_ev_evaluate(m, (rope_ev_task)task, n, seqs,
                                 1000000 + (uint64_t)seed,
                                 (rope_ev_method)method, s, len, &acc, &loss);
        if (e == ROPE_EV_ENOMEM)
            return ev_no_memory(m, 8, n, "evaluation");
        if (e != 0)
            continue;
        printf("%s\t%s\t%ld\t%s\t%s\t%d\t%.6f\t%.6f\n",
               task == ROPE_EV_COPY ? "copy" : "lag", ev_pe_names[pe], seed,
               ev_method_names[method], tag, n, acc, loss);
        fflush(stdout);
    }
    return 0;
}

static int ev_run(int task, int pe, uint64_t seed, long steps, int len,
                  int batch, double lr, long ft, int seqs)
{
    rope_ev_config c;
    rope_ev_model m;
    rope_ev_config_default(&c, (rope_ev_pe)pe);
    if (rope_ev_init(&m, &c, seed) != 0)
        return cli_error("evidence: cannot allocate the model");
    int e = rope_ev_train(&m, (rope_ev_task)task, len, batch, steps, lr,
                          seed, ROPE_EV_PLAIN, 1, len, stderr, NULL), rc = 0;
    if (e != 0)
        rc = e == ROPE_EV_ENOMEM ? ev_no_memory(&m, batch, len, "training")
             : cli_error("evidence: training %s", e == ROPE_EV_EDIVERGED
                         ? "diverged" : "failed: no RoPE tables");
    for (int me = 0; rc == 0 && me <= (pe == ROPE_EV_ROPE ? ROPE_EV_YARN_HF
                                                          : 0); me++)
        rc = ev_eval_all(&m, task, pe, (long)seed, len, seqs, me, 0, "none");
    for (int k = 0; rc == 0 && pe == ROPE_EV_ROPE && k < 2; k++) {
        int me = k == 0 ? ROPE_EV_PI : ROPE_EV_YARN_HF, fb = batch / 4;
        rope_ev_model f;
        if (rope_ev_init(&f, &c, seed) != 0) {
            rope_ev_free(&m);
            return cli_error("evidence: cannot allocate the model");
        }
        memcpy(f.params, m.params, m.n_params * sizeof *f.params);
        e = rope_ev_train(&f, (rope_ev_task)task, 4 * len, fb > 0 ? fb : 1,
                          ft, lr / 3, seed + 77, (rope_ev_method)me, 4.0, len,
                          stderr, NULL);
        if (e == ROPE_EV_ENOMEM)
            rc = ev_no_memory(&f, fb > 0 ? fb : 1, 4 * len, "training");
        else if (e == 0)
            rc = ev_eval_all(&f, task, pe, (long)seed, len, seqs, me, 4.0,
                             "ft");
        rope_ev_free(&f);
    }
    rope_ev_free(&m);
    return rc;
}

int cmd_evidence(int argc, char **argv)
{
    long steps = 300, len = 32, batch = 16, seed = -1, ft = 15, seqs = 64;
    double lr = 3e-3;
    int task = -1, pe = -1, reference = 0, rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *f = argv[i];
        long *num = !strcmp(f, "--steps") ? &steps : !strcmp(f, "--len") ? &len
            : !strcmp(f, "--batch") ? &batch : !strcmp(f, "--seed") ? &seed
            : !strcmp(f, "--ft-steps") ? &ft : !strcmp(f, "--eval-seqs") ? &seqs
            : NULL;
        if (!strcmp(f, "--reference")) { reference = 1; continue; }
        if (!num && strcmp(f, "--task") && strcmp(f, "--pe") && strcmp(f, "--lr"))
            return cli_error("evidence: unexpected argument '%s'", f);
        if ((rc = cli_need_value(argc, argv, i)) != 0) return rc;
        const char *val = argv[++i];
        if (num)
            rc = cli_parse_int(f, val, num == &seed ? 0 : 1,
                               num == &len ? ROPE_EV_MAX_LEN / 8 : 1000000, num);
        else if (!strcmp(f, "--lr"))
            rc = cli_parse_double(f, val, &lr);
        else if (!strcmp(f, "--task") && (!strcmp(val, "copy") || !strcmp(val, "lag")))
            task = val[0] == 'c' ? ROPE_EV_COPY : ROPE_EV_LAG;
        else if (!strcmp(f, "--pe") && (!strcmp(val, "nope") || !strcmp(val, "sin")
                                        || !strcmp(val, "rope")))
            pe = val[0] == 'n' ? ROPE_EV_NOPE : val[0] == 's'
                 ? ROPE_EV_SINUSOIDAL : ROPE_EV_ROPE;
        else
            rc = cli_error("%s: unknown value '%s'", f, val);
    }
    if (rc) return rc;
    if (!reference && (task < 0 || pe < 0 || seed < 0))
        return cli_error("evidence: --task, --pe and --seed are required");
    if (!reference && (len % 2 != 0 || !(lr > 0 && lr < 1)))
        return cli_error("evidence: --len must be even and --lr in (0, 1)");
    if (cli_parse_only)
        return 0;
    if (reference)
        return ev_print_reference();
    return ev_run(task, pe, (uint64_t)seed, steps, (int)len, (int)batch,
                  lr, ft, (int)seqs);
}
