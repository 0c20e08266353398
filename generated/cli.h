/* cli.h: the subcommands of the rope program and their helpers. */
#ifndef ROPE_CLI_H
#define ROPE_CLI_H
#include <stdio.h>
#include "rope.h"

typedef int (*cli_command_fn)(int argc, char **argv);
typedef struct cli_command {
    const char *name;   /* the word after `rope' */
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
/* subcommands: chapters 1-5 */
int cmd_demo(int argc, char **argv);
int cmd_pe(int argc, char **argv);
#endif
