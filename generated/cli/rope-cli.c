/* The frame of the workshop / The command-line program */
/* rope-cli.c: the rope program. `rope --help' lists the subcommands. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const cli_command commands[] = {
    /* {name, function, usage, summary}, chapter by chapter */
    /* W1.3 The demonstrations */
    {"demo", cmd_demo, "demo NAME   (NAME: permutation, integer, normalized)",
     "chapter 1: print the table of a demonstration"},
    /* W2.6 The command line */
    {"pe", cmd_pe, "pe --d-model D --positions LIST [--base B]",
     "chapter 2: print the sinusoidal encoding of positions"},
    /* W3.4 The command-line tools */
    {"freqs", cmd_freqs, "freqs --head-dim D --theta B (--end N | "
     "--positions P1,P2,...) [--pairing half|interleaved] "
     "[--precision float|double]\n        [--print inv_freq|angles|cos|sin"
     "|attention_factor|ramp]\n        [--scaling default|linear|dynamic|"
     "yarn|llama3|longrope and the options of chapter 4]",
     "RoPE frequencies, angles or cos/sin tables, as MiniMind builds them"},
    {"apply", cmd_apply, "apply --q Q.npy --k K.npy --theta B "
     "--start-pos S --out-q OQ.npy --out-k OK.npy [--pairing ...] "
     "[--precision ...]",
     "rotate queries and keys stored as float32 .npy files"},
    /* W5.11 The attention command */
    {"attention", cmd_attention, "attention --q Q.npy --k K.npy --v V.npy "
     "--out O.npy [--causal] [--start-pos S] [--threads T] "
     "[--simd auto|scalar|avx2|avx512] [--kv-dtype f32|bf16] [--no-rope] "
     "[RoPE options]",
     "chapter 5: tiled attention with fused RoPE on .npy arrays; on a "
     "terminal, progress on stderr after ROPE_PROGRESS_AFTER (2) seconds"},
    /* W5.12 The decode command */
    {"decode", cmd_decode, "decode --q Q.npy --k K.npy --v V.npy "
     "--out O.npy [--prefill M] [--start-pos S] [--threads T] "
     "[--simd auto|scalar|avx2|avx512] [--no-rope] [RoPE options]",
     "chapter 5: causal attention as generation computes it, a prefill "
     "then one query per step against the key/value cache"},
    /* W6.4 The command rope ring-plan */
    {"ring-plan", cmd_ring_plan, "ring-plan --n N --ranks P "
     "[--layout contiguous|zigzag] [--causal]",
     "chapter 6: the shards and the work of each rank of a ring"},
    /* W7.3 The command rope evidence */
    {"evidence", cmd_evidence, "evidence --task copy|lag --pe nope|sin|rope "
     "--seed S [--steps N] [--len L] [--batch B] [--lr X] [--ft-steps N] "
     "[--eval-seqs N] | evidence --reference",
     "chapter 7: train a tiny model and measure it at longer lengths"},
    /* W7.12 The command rope lm */
    {"lm", cmd_lm, "lm --pe nope|sin|rope --seed S [--base B] [--tokens T] "
     "[--len L] [--batch B] [--lr X] [--factor s] [--ft-percent P] "
     "[--eval-tokens E] [--trials K] [--threads T] [--corpus FILE] "
     "[--ft-only]",
     "chapter 7: train a small language model on the King James text and "
     "measure it past its training length"},
    /* W8.4 The command rope generate */
    {"generate", cmd_generate, "generate --model FILE (--ids \"ID ID ...\" | "
     "--ids-file FILE) [--max-new N] [--temperature T] [--top-p P] "
     "[--top-k K] [--seed S] [--eos ID] [--yarn] [--threads N] "
     "[--logits OUT.npy] [--reference OUT.npy] [--prefill-chunk N] "
     "[--states IN.npy [--block-outputs OUT.npy] [--block-reference P]]",
     "chapter 8: run a MiniMind weight file on token ids and print the "
     "ids it generates"},
    /* The frame of the workshop / The command-line program */
    {NULL, NULL, NULL, NULL}
};

static void print_help(FILE *out)
{
    fprintf(out, "usage: rope COMMAND [OPTIONS]\n\n"
                 "commands:\n");
    for (const cli_command *c = commands; c->name != NULL; c++)
        fprintf(out, "  %s\n      %s\n", c->usage, c->summary);
    fprintf(out, "\nExit status: 0 on success, 2 on a usage error.\n");
}
static int run_command(int argc, char **argv)
{
    if (argc < 2)
        return cli_error("no command given (try rope --help)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_help(stdout);
        return 0;
    }
    for (const cli_command *c = commands; c->name != NULL; c++) {
        if (strcmp(argv[1], c->name) != 0)
            continue;
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--help") == 0
                || strcmp(argv[i], "-h") == 0) {
                printf("usage: rope %s\n    %s\n", c->usage, c->summary);
                return 0;
            }
        return c->run(argc - 1, argv + 1);
    }
    return cli_error("unknown command '%s' (try rope --help)", argv[1]);
}
int main(int argc, char **argv)
{
    signal(SIGXFSZ, SIG_IGN);
    int rc = run_command(argc, argv);
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    if (fclose(stdout) != 0 && errno != EBADF && !failed)
        failed = 1, err = errno;
    if (failed && rc == 0)
        rc = cli_error("cannot write the standard output: %s",
                       strerror(err));
    return failed ? 2 : rc;
}
