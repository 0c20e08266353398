/* bookdata-main.c: bookdata DIR writes the data of every chapter. */
#include <stdio.h>
#include "bookdata.h"

static const struct {
    const char *name;
    int (*write)(const char *dir);
} writers[] = {
    /* {name, writer}, chapter by chapter */
    {"positions", bookdata_positions},
    {"sinusoidal", bookdata_sinusoidal},
    {"rotary", bookdata_rotary},
    {"scaling", bookdata_scaling},
    {"attention", bookdata_attention},
    {"ring", bookdata_ring},
    {"evidence", bookdata_evidence},
    {NULL, NULL}
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bookdata DIR\n");
        return 2;
    }
    FILE *all = bd_open(argv[1], "numbers.tex");
    for (int i = 0; writers[i].name != NULL; i++) {
        fprintf(stderr, "bookdata: %s\n", writers[i].name);
        if (writers[i].write(argv[1]) != 0) {
            fprintf(stderr, "bookdata: %s failed\n", writers[i].name);
            return 1;
        }
        fprintf(all, "\\input{\\datadir %s-numbers.tex}\n",
                writers[i].name);
    }
    bd_close(all);
    return 0;
}
