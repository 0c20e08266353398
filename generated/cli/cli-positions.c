/* W1.3 The demonstrations */
/* cli-positions.c: `rope demo NAME', chapter 1's demonstrations. */
#include <string.h>
#include "cli.h"
#include "tables.h"

int cmd_demo(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*print)(FILE *, int);
    } demos[] = {
        {"permutation", table_print_catdog},
        {"integer", table_print_integer},
        {"normalized", table_print_normalized},
    };
    if (argc != 2)
        return cli_error("demo needs one NAME: permutation, integer, "
                         "normalized");
    for (size_t i = 0; i < sizeof demos / sizeof demos[0]; i++)
        if (strcmp(argv[1], demos[i].name) == 0) {
            if (!cli_parse_only)
                demos[i].print(stdout, 0);
            return 0;
        }
    return cli_error("demo: unknown NAME '%s' (permutation, integer, "
                     "normalized)", argv[1]);
}
