/* The frame of the workshop / The command-line program */
/* cli.h: the subcommands of the rope program and their helpers. */
#ifndef ROPE_CLI_H
#define ROPE_CLI_H
#include <stdio.h>
#include "rope.h"

/* types and constants, chapter by chapter */
/* W4.3 The command line */
#define CLI_MAX_HALF 2048 /* longest factor list the CLI stores */

/* The frame of the workshop / The command-line program */
typedef int (*cli_command_fn)(int argc, char **argv);
typedef struct cli_command {
    const char *name; /* the word after `rope' */
    cli_command_fn run; /* gets argv from the command word on */
    const char *usage;
    const char *summary;
} cli_command;

int cli_error(const char *fmt, ...);
int cli_need_value(int argc, char **argv, int i);
int cli_parse_int(const char *flag, const char *s, long lo, long hi,
                  long *out);
int cli_parse_double(const char *flag, const char *s, double *out);
int cli_parse_int_list(const char *flag, const char *s, long lo,
                       long hi, long **out, size_t *n);
int cli_parse_double_list(const char *flag, const char *s,
                          double **out, size_t *n);
double cli_now(void);
extern int cli_parse_only;
/* W3.4 The command-line tools */
typedef struct cli_rope_options {
    int head_dim; /* 0: not given (apply takes it from q) */
    double theta; /* the base b; MiniMind's rope_theta */
    rope_pairing pairing;
    rope_precision precision;
    /* chapter 4 appends the fields of its scaling options here */
    /* W4.3 The command line */
    rope_scaling scaling; /* chapter 4: --scaling and its keys */
    int no_truncate; /* --no-truncate given */
    double short_factor[CLI_MAX_HALF], long_factor[CLI_MAX_HALF];
/* W3.4 The command-line tools */
} cli_rope_options;
void cli_rope_defaults(cli_rope_options *o);
int cli_rope_parse_option(cli_rope_options *o, int argc, char **argv,
                          int *i);
int cli_rope_validate(const cli_rope_options *o);
int cli_rope_inv_freq(const cli_rope_options *o, float *inv_freq,
                      double *attention_factor_out);
int cli_rope_table(const cli_rope_options *o, long start, long end,
                   float **freqs_cos, float **freqs_sin);
int cli_check_files(int n_in, int n, const char *const *flags,
                    const char *const *paths);
int cli_write_npys(int n, const char *const *flags,
                   const char *const *paths, const rope_npy *arrays);
/* The frame of the workshop / The command-line program */
/* subcommands, chapter by chapter */
/* W1.3 The demonstrations */
int cmd_demo(int argc, char **argv);
/* W2.6 The command line */
int cmd_pe(int argc, char **argv);
/* W3.4 The command-line tools */
int cmd_freqs(int argc, char **argv);
int cmd_apply(int argc, char **argv);
/* W4.3 The command line */
int cli_scaling_parse_option(cli_rope_options *o, int argc, char **argv,
                             int *i);
int cli_scaling_validate(const cli_rope_options *o);
int cli_scaling_inv_freq(const cli_rope_options *o, float *inv_freq,
                         double *attention_factor);
int cli_scaling_print(const cli_rope_options *o, const char *what,
                      const float *inv_freq, double attention_factor,
                      int *done);
/* W5.11 The attention command */
int cmd_attention(int argc, char **argv);
typedef struct cli_attention_options {
    const char *cmd; /* "attention" or "ring attention", in messages */
    const char *path[4]; /* q, k, v, out */
    int causal, no_rope;
    long threads, start_pos;
    rope_simd simd;
    rope_dtype kv_dtype; /* --kv-dtype f32 (default) or bf16 */
} cli_attention_options;
extern const char *const cli_attention_names[4];
void cli_attention_defaults(cli_attention_options *a, const char *cmd);
int cli_attention_flag(cli_attention_options *a, cli_rope_options *o,
                       int argc, char **argv, int *i);
int cli_attention_files(const cli_attention_options *a);
int cli_attention_read(const cli_attention_options *a, rope_npy *x);
int cli_attention_shapes(const rope_npy *x, cli_rope_options *o,
                         const cli_attention_options *a);
int cli_attention_kernel_error(int e, const rope_attention_params *p,
                               const rope_npy *x, const float *lse);
/* W5.12 The decode command */
int cmd_decode(int argc, char **argv);
/* W6.4 The command rope ring-plan */
int cmd_ring_plan(int argc, char **argv);
/* W7.3 The command rope evidence */
int cmd_evidence(int argc, char **argv);
/* W7.12 The command rope lm */
int cmd_lm(int argc, char **argv);
/* W8.4 The command rope generate */
int cmd_generate(int argc, char **argv);
/* The frame of the workshop / The command-line program */
#endif
