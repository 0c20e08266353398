/* W6.4 The command rope ring-plan */
/* cli-ring.c: `rope ring-plan', chapter 6's shards and work. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cmd_ring_plan(int argc, char **argv)
{
    long n = 0, ranks = 0;
    int causal = 0, rc = 0;
    rope_ring_layout layout = ROPE_RING_ZIGZAG;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--causal")) { causal = 1; continue; }
        if (strcmp(f, "--n") && strcmp(f, "--ranks") && strcmp(f, "--layout"))
            return cli_error("ring-plan: unexpected argument '%s'", f);
        if ((rc = cli_need_value(argc, argv, i)) != 0) return rc;
        const char *val = argv[++i];
        if (!strcmp(f, "--n"))
            rc = cli_parse_int(f, val, 1, ROPE_MAX_POSITION, &n);
        else if (!strcmp(f, "--ranks"))
            rc = cli_parse_int(f, val, 1, 4096, &ranks);
        else if (!strcmp(val, "contiguous") || !strcmp(val, "zigzag"))
            layout = val[0] == 'z' ? ROPE_RING_ZIGZAG : ROPE_RING_CONTIGUOUS;
        else
            rc = cli_error("--layout: expected contiguous or zigzag, got '%s'",
                           val);
    }
    if (rc) return rc;
    if (n == 0 || ranks == 0)
        return cli_error("ring-plan: --n N and --ranks P are required");
    if (n < rope_ring_n_chunks(layout, (int)ranks))
        return cli_error("ring-plan: %ld ranks need at least %d tokens with "
                         "the %s layout, got %ld", ranks,
                         rope_ring_n_chunks(layout, (int)ranks),
                         layout == ROPE_RING_ZIGZAG ? "zigzag" : "contiguous",
                         n);
    double hi = 0, lo = -1;
    for (int r = 0; r < ranks; r++) {
        rope_ring_shard s;
        rope_ring_shard_of(&s, layout, (int)ranks, r, n);
        double w = rope_ring_rank_pairs(layout, (int)ranks, r, n, causal);
        printf("rank %d: tokens", r);
        for (int c = 0; c < s.n_chunks; c++)
            printf(" %ld-%ld", s.start[c], s.start[c] + s.len[c] - 1);
        printf(" (%ld tokens), pairs %.0f\n", s.tokens, w);
        hi = w > hi ? w : hi;
        lo = lo < 0 || w < lo ? w : lo;
    }
    printf("work ratio (largest / smallest): %.3f\n", hi / lo);
    return 0;
}
