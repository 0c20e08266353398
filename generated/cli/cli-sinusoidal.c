/* W2.6 The command line */
/* cli-sinusoidal.c: `rope pe', chapter 2's command. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "tables.h"

#define PE_MAX_POSITION 9007199254740992L /* 2^53 */
#define PE_MAX_DMODEL 1048576L

int cmd_pe(int argc, char **argv)
{
    long d_model = 0, *positions = NULL;
    size_t n = 0;
    double base = 1e4;
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--d-model") == 0) {
            if ((rc = cli_need_value(argc, argv, i)) == 0)
                rc = cli_parse_int(flag, argv[++i], 1, PE_MAX_DMODEL, &d_model);
        } else if (strcmp(flag, "--positions") == 0) {
            free(positions);
            positions = NULL;
            if ((rc = cli_need_value(argc, argv, i)) == 0)
                rc = cli_parse_int_list(flag, argv[++i], 0, PE_MAX_POSITION,
                                        &positions, &n);
        } else if (strcmp(flag, "--base") == 0) {
            if ((rc = cli_need_value(argc, argv, i)) == 0)
                rc = cli_parse_double(flag, argv[++i], &base);
        } else {
            rc = cli_error("pe: unknown argument '%s' (try rope --help)", flag);
        }
    }
    if (rc == 0 && d_model == 0)
        rc = cli_error("pe: --d-model is required");
    if (rc == 0 && positions == NULL)
        rc = cli_error("pe: --positions is required");
    if (rc == 0 && d_model % 2 != 0)
        rc = cli_error("--d-model must be even, got %ld", d_model);
    if (rc == 0 && !(base > 1.0))
        rc = cli_error("--base must be greater than 1, got %g", base);
    if (rc == 0 && !cli_parse_only
        && table_print_pe_rows(stdout, positions, n, (int)d_model, base)
               != ROPE_PE_OK) {
        cli_error("pe: cannot allocate a row of %ld values", d_model);
        rc = 1;
    }
    free(positions);
    return rc;
}
