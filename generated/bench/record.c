/* W5c.3.2 Recording the measurements */
/* record.c: make bench RECORD=1 runs "record DIR COMMIT": the
   measurements that the book prints, with their provenance */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bookdata.h"
#include "record.h"

static const struct {
    const char *name;
    int (*record)(const char *dir);
} recorders[] = {
    {"attention", record_attention},
    {"decode", record_decode},
    /* W6.6 The numbers of chapter 6 */
    {"ring", record_ring},
    /* W5c.3.2 Recording the measurements */
    {NULL, NULL}
};
const char *record_commit = "unknown";

int record_provenance(const char *dir, const char *commit,
                      const char *stem)
{
    static const char *const flags[] = {"avx2", "fma", "avx512f",
        "avx512dq", "avx512_bf16", "amx_tile", "amx_bf16", NULL};
    char line[8192], model[256] = "unknown", have[256] = "";
    FILE *ci = fopen("/proc/cpuinfo", "r");
    int named = 0, flagged = 0;
    while (ci && fgets(line, sizeof line, ci)) {
        char *c = strchr(line, ':');
        if (!c) continue;
        if (!named && !strncmp(line, "model name", 10)) {
            snprintf(model, sizeof model, "%s", c + 2);
            model[strcspn(model, "\n")] = '\0';
            named = 1;
        }
        if (!flagged && !strncmp(line, "flags", 5)) {
            for (int i = 0; flags[i]; i++) {
                char pat[32];
                snprintf(pat, sizeof pat, " %s ", flags[i]);
                line[strcspn(line, "\n")] = ' ';
                if (strstr(c, pat))
                    snprintf(have + strlen(have), sizeof have - strlen(have),
                             "%s%s", have[0] ? " " : "", flags[i]);
            }
            flagged = 1;
        }
    }
    if (ci) fclose(ci);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char name[64], key[64];
    const char *dash = stem[0] ? "-" : "";
    snprintf(name, sizeof name, "%s%sprovenance.txt", stem, dash);
    FILE *t = bd_open(dir, name);
    fprintf(t, "command %s%s\ncommit %s\ndate %s\n"
            "cpu %s\nflags %s\ncores %ld\n", stem[0]
            ? "build/record DIR COMMIT " : "make bench RECORD=1", stem,
            commit, date, model, have, cores);
    bd_close(t);
    snprintf(name, sizeof name, "%s%sprovenance.tex", stem, dash);
    FILE *f = bd_open(dir, name);
    snprintf(key, sizeof key, "%s%smeasured-commit", stem, dash);
    bd_def(f, key, "%s", commit);
    snprintf(key, sizeof key, "%s%smeasured-date", stem, dash);
    bd_def(f, key, "%s", date);
    char tex[512] = ""; /* the flags with LaTeX's underscores */
    for (size_t i = 0, k = 0; have[i] && k + 3 < sizeof tex; i++) {
        if (have[i] == '_') tex[k++] = '\\';
        tex[k++] = have[i];
        tex[k] = '\0';
    }
    snprintf(key, sizeof key, "%s%smeasured-flags", stem, dash);
    bd_def(f, key, "%s", tex);
    snprintf(key, sizeof key, "%s%smeasured-cores", stem, dash);
    bd_def(f, key, "%ld", cores);
    bd_close(f);
    return 0;
}

static int record_named(int argc, char **argv, const char *name)
{
    for (int a = 3; a < argc; a++)
        if (!strcmp(argv[a], name)) return 1;
    return argc == 3; /* no names: every recorder */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: record DIR COMMIT [RECORDER...]  (make "
                "bench RECORD=1 runs them all)\n");
        return 2;
    }
    for (int a = 3; a < argc; a++) {
        int known = 0;
        for (int i = 0; recorders[i].name != NULL; i++)
            known |= !strcmp(argv[a], recorders[i].name);
        if (!known) {
            fprintf(stderr, "record: no recorder %s\n", argv[a]);
            return 2;
        }
    }
    record_commit = argv[2];
    setenv("ROPE_RECORD_COMMIT", argv[2], 1); /* for the ring's ranks */
    if (argc == 3 && record_provenance(argv[1], argv[2], "")) return 1;
    for (int i = 0; recorders[i].name != NULL; i++) {
        if (!record_named(argc, argv, recorders[i].name)) continue;
        fprintf(stderr, "record: %s\n", recorders[i].name);
        if (recorders[i].record(argv[1]) != 0) {
            fprintf(stderr, "record: %s failed\n", recorders[i].name);
            return 1;
        }
    }
    fprintf(stderr, "record: done; commit %s/ with the change\n", argv[1]);
    return 0;
}
