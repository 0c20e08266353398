/* W4.3 The command line */
/* cli-scaling.c: the scaling options of chapter 4 for every command
   that takes the RoPE options. */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct {
    const char *flag;
    char kind; /* 'd' double, 'l' long */
    size_t offset; /* into rope_scaling */
} scaling_flag;

static const scaling_flag scaling_flags[] = {
#define SF(f, k, field) {f, k, offsetof(rope_scaling, field)}
    SF("--factor", 'd', factor),
    SF("--original-max-position-embeddings", 'l',
       original_max_position_embeddings),
    SF("--max-position-embeddings", 'l', max_position_embeddings),
    SF("--seq-len", 'l', seq_len),
    SF("--beta-fast", 'd', beta_fast),
    SF("--beta-slow", 'd', beta_slow),
    SF("--attention-factor", 'd', attention_factor),
    SF("--mscale", 'd', mscale),
    SF("--mscale-all-dim", 'd', mscale_all_dim),
    SF("--low-freq-factor", 'd', low_freq_factor),
    SF("--high-freq-factor", 'd', high_freq_factor),
#undef SF
};
static int parse_scaling_value(cli_rope_options *o,
                               const scaling_flag *f, const char *value)
{
    char *field = (char *)&o->scaling + f->offset;
    double d;
    long l;
    int rc;
    if (f->kind == 'l') {
        if ((rc = cli_parse_int(f->flag, value, 1, LONG_MAX, &l)) != 0)
            return rc;
        memcpy(field, &l, sizeof l);
        return 0;
    }
    if ((rc = cli_parse_double(f->flag, value, &d)) != 0)
        return rc;
    if (!(d > 0))
        return cli_error("%s must be positive, got %s", f->flag, value);
    memcpy(field, &d, sizeof d);
    return 0;
}
static const char *const scaling_names[] = {
    "default", "linear", "dynamic", "yarn", "llama3", "longrope"};

static int parse_scaling_word(cli_rope_options *o, const char *flag,
                              const char *value)
{
    if (strcmp(flag, "--yarn-flavor") == 0) {
        if (strcmp(value, "hf") != 0 && strcmp(value, "minimind") != 0)
            return cli_error("--yarn-flavor: '%s' is neither hf nor "
                             "minimind", value);
        o->scaling.yarn_flavor = value[0] == 'm' ? ROPE_YARN_MINIMIND
                                                 : ROPE_YARN_HF;
        return 0;
    }
    for (int k = 0; k <= ROPE_SCALING_LONGROPE; k++)
        if (strcmp(value, scaling_names[k]) == 0) {
            o->scaling.rope_type = (rope_scaling_type)k;
            return 0;
        }
    return cli_error("--scaling: '%s' is not one of default, linear, "
                     "dynamic, yarn, llama3, longrope", value);
}
static int parse_factor_list(cli_rope_options *o, const char *flag,
                             const char *value)
{
    double *v;
    size_t n;
    int rc, is_short = strcmp(flag, "--short-factor") == 0;
    if ((rc = cli_parse_double_list(flag, value, &v, &n)) != 0)
        return rc;
    if (n > CLI_MAX_HALF) {
        free(v);
        return cli_error("%s: %zu values, at most %d", flag, n,
                         CLI_MAX_HALF);
    }
    memcpy(is_short ? o->short_factor : o->long_factor, v,
           n * sizeof *v);
    if (is_short)
        o->scaling.n_short_factor = (int)n;
    else
        o->scaling.n_long_factor = (int)n;
    free(v);
    return 0;
}
int cli_scaling_parse_option(cli_rope_options *o, int argc, char **argv,
                             int *i)
{
    const char *flag = argv[*i];
    int rc;
    if (strcmp(flag, "--no-truncate") == 0) {
        o->no_truncate = 1;
        return 1;
    }
    for (size_t k = 0; k < sizeof scaling_flags / sizeof *scaling_flags;
         k++)
        if (strcmp(flag, scaling_flags[k].flag) == 0) {
            if ((rc = cli_need_value(argc, argv, *i)) != 0)
                return rc;
            rc = parse_scaling_value(o, &scaling_flags[k], argv[++*i]);
            return rc != 0 ? rc : 1;
        }
    if (strcmp(flag, "--scaling") == 0 || strcmp(flag, "--yarn-flavor") == 0
        || strcmp(flag, "--short-factor") == 0
        || strcmp(flag, "--long-factor") == 0) {
        if ((rc = cli_need_value(argc, argv, *i)) != 0)
            return rc;
        if (strstr(flag, "factor") != NULL)
            rc = parse_factor_list(o, flag, argv[++*i]);
        else
            rc = parse_scaling_word(o, flag, argv[++*i]);
        return rc != 0 ? rc : 1;
    }
    return 0;
}
static rope_scaling options_scaling(const cli_rope_options *o)
{
    rope_scaling s = o->scaling;
    s.truncate = !o->no_truncate;
    s.short_factor = o->short_factor;
    s.long_factor = o->long_factor;
    return s;
}
static int scaling_error(const rope_scaling *s, int head_dim, int err)
{
    const char *name = scaling_names[s->rope_type];
    switch (err) {
    case ROPE_SCALING_EFACTOR:
        return cli_error("--scaling %s: the factor must be >= 1 (--factor, "
                         "or --max-position-embeddings over "
                         "--original-max-position-embeddings)", name);
    case ROPE_SCALING_ENOFACTOR:
        return cli_error("--scaling %s needs --factor%s", name,
                         s->rope_type == ROPE_SCALING_YARN
                         || s->rope_type == ROPE_SCALING_LONGROPE
                             ? " (or --max-position-embeddings)" : "");
    case ROPE_SCALING_ENOORIGINAL:
        return cli_error("--scaling %s needs "
                         "--original-max-position-embeddings (or "
                         "--max-position-embeddings)", name);
    case ROPE_SCALING_ENOLENGTH:
        return cli_error("--scaling %s needs --max-position-embeddings",
                         name);
    case ROPE_SCALING_EBETA:
        return cli_error("--beta-fast must be greater than --beta-slow "
                         "(got %g and %g)",
                         s->beta_fast ? s->beta_fast : 32,
                         s->beta_slow ? s->beta_slow : 1);
    case ROPE_SCALING_EFREQ:
        return cli_error("--scaling llama3 needs 0 < --low-freq-factor < "
                         "--high-freq-factor");
    case ROPE_SCALING_ELIST:
        return cli_error("--short-factor and --long-factor need %d values "
                         "each (head_dim/2), got %d and %d", head_dim / 2,
                         s->n_short_factor, s->n_long_factor);
    case ROPE_SCALING_EATTENTION:
        return cli_error("--attention-factor (given, or computed from "
                         "--mscale and --mscale-all-dim) must be positive and "
                         "at most %g, the largest float", (double)FLT_MAX);
    default:
        break;
    }
    return cli_error("--scaling %s: %s", name,
                     rope_scaling_strerror(err));
}
#define USES(t) (1u << ROPE_SCALING_##t)
static int check_scaling_keys(const cli_rope_options *o)
{
    const rope_scaling *s = &o->scaling;
    const unsigned lengths = USES(DYNAMIC) | USES(YARN) | USES(LLAMA3)
                             | USES(LONGROPE);
    const struct { const char *flag; int given; unsigned uses; } keys[] = {
        {"--factor", s->factor != 0, lengths | USES(LINEAR)},
        {"--original-max-position-embeddings",
         s->original_max_position_embeddings != 0, lengths},
        {"--max-position-embeddings", s->max_position_embeddings != 0,
         lengths},
        {"--seq-len", s->seq_len != 0, USES(DYNAMIC) | USES(LONGROPE)},
        {"--beta-fast", s->beta_fast != 0, USES(YARN)},
        {"--beta-slow", s->beta_slow != 0, USES(YARN)},
        {"--attention-factor", s->attention_factor != 0,
         USES(YARN) | USES(LONGROPE)},
        {"--mscale", s->mscale != 0, USES(YARN)},
        {"--mscale-all-dim", s->mscale_all_dim != 0, USES(YARN)},
        {"--yarn-flavor", s->yarn_flavor == ROPE_YARN_MINIMIND,
         USES(YARN)},
        {"--no-truncate", o->no_truncate, USES(YARN)},
        {"--low-freq-factor", s->low_freq_factor != 0, USES(LLAMA3)},
        {"--high-freq-factor", s->high_freq_factor != 0, USES(LLAMA3)},
        {"--short-factor", s->n_short_factor > 0, USES(LONGROPE)},
        {"--long-factor", s->n_long_factor > 0, USES(LONGROPE)},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (!keys[k].given || (keys[k].uses & (1u << s->rope_type)))
            continue;
        if (s->rope_type == ROPE_SCALING_DEFAULT)
            return cli_error("%s needs --scaling (plain RoPE has no "
                             "such key)", keys[k].flag);
        return cli_error("%s means nothing with --scaling %s",
                         keys[k].flag, scaling_names[s->rope_type]);
    }
    return 0;
}
int cli_scaling_validate(const cli_rope_options *o)
{
    rope_scaling s = options_scaling(o);
    int err = check_scaling_keys(o);
    if (err != 0)
        return err;
    if (s.factor != 0 && s.factor < 1)
        return cli_error("--factor must be >= 1, got %g", s.factor);
    if (o->head_dim == 0)
        return 0;
    err = rope_scaling_check(&s, o->head_dim);
    if (err != ROPE_SCALING_OK)
        return scaling_error(&s, o->head_dim, err);
    return 0;
}
int cli_scaling_inv_freq(const cli_rope_options *o, float *inv_freq,
                         double *attention_factor)
{
    rope_scaling s = options_scaling(o);
    int err = rope_compute_inv_freq(inv_freq, attention_factor,
                                    o->head_dim, o->theta, &s);
    if (err != ROPE_SCALING_OK)
        return scaling_error(&s, o->head_dim, err);
    return 0;
}
int cli_scaling_print(const cli_rope_options *o, const char *what,
                      const float *inv_freq, double attention_factor,
                      int *done)
{
    rope_scaling s = options_scaling(o);
    float ramp[CLI_MAX_HALF];
    (void)inv_freq;
    if (strcmp(what, "attention_factor") == 0) {
        printf("%.16e\n", attention_factor);
        *done = 1;
    } else if (strcmp(what, "ramp") == 0) {
        if (s.rope_type != ROPE_SCALING_YARN)
            return cli_error("--print ramp needs --scaling yarn");
        rope_yarn_ramp(ramp, o->head_dim, o->theta, &s);
        for (int i = 0; i < o->head_dim / 2; i++)
            printf("%s%.9e", i ? " " : "", (double)ramp[i]);
        putchar('\n');
        *done = 1;
    }
    return 0;
}
