/* The frame of the workshop / Numbers for the prose */
/* bookdata-main.c: bookdata DIR writes the data of every chapter. */
#include <stdio.h>
#include "bookdata.h"

static const struct {
    const char *name;
    int (*write)(const char *dir);
} writers[] = {
    /* {name, writer}, chapter by chapter */
    /* W1.4 The numbers of chapter 1 */
    {"positions", bookdata_positions},
    /* W2.8 The numbers of the chapter */
    {"sinusoidal", bookdata_sinusoidal},
    /* W3.5 Numbers for the prose */
    {"rotary", bookdata_rotary},
    /* W4.5 Numbers and figures for the prose */
    {"scaling", bookdata_scaling},
    /* W5c.3 The numbers of chapter 5 */
    {"attention", bookdata_attention},
    /* W6.6 The numbers of chapter 6 */
    {"ring", bookdata_ring},
    /* W7.5 The book's data */
    {"evidence", bookdata_evidence},
    /* W7.8 The King James corpus */
    {"corpus", bookdata_corpus},
    /* W8.7 The code of the exercises */
    {"minimind", bookdata_minimind},
    /* The frame of the workshop / Numbers for the prose */
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
