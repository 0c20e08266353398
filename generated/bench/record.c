/* W5c.3.1 Recording the measurements */
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
    /* W6.6 The numbers of chapter 6 */
    {"ring", record_ring},
    /* W5c.3.1 Recording the measurements */
    {NULL, NULL}
};

static int record_provenance(const char *dir, const char *commit)
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
    FILE *t = bd_open(dir, "provenance.txt");
    fprintf(t, "command make bench RECORD=1\ncommit %s\ndate %s\n"
            "cpu %s\nflags %s\ncores %ld\n", commit, date, model,
            have, cores);
    bd_close(t);
    FILE *f = bd_open(dir, "provenance.tex");
    bd_def(f, "measured-commit", "%s", commit);
    bd_def(f, "measured-date", "%s", date);
    char tex[512] = ""; /* the flags with LaTeX's underscores */
    for (size_t i = 0, k = 0; have[i] && k + 3 < sizeof tex; i++) {
        if (have[i] == '_') tex[k++] = '\\';
        tex[k++] = have[i];
        tex[k] = '\0';
    }
    bd_def(f, "measured-flags", "%s", tex);
    bd_def(f, "measured-cores", "%ld", cores);
    bd_close(f);
    return 0;
}

int main(int argc, char **argv)
{
    int ran = 0;
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: record DIR COMMIT [RECORDER]  (make bench "
                "RECORD=1 runs them all)\n");
        return 2;
    }
    setenv("ROPE_RECORD_COMMIT", argv[2], 1);
    if (argc == 3 && record_provenance(argv[1], argv[2])) return 1;
    for (int i = 0; recorders[i].name != NULL; i++) {
        if (argc == 4 && strcmp(argv[3], recorders[i].name) != 0)
            continue; /* one recorder alone keeps its own provenance */
        ran++;
        fprintf(stderr, "record: %s\n", recorders[i].name);
        if (recorders[i].record(argv[1]) != 0) {
            fprintf(stderr, "record: %s failed\n", recorders[i].name);
            return 1;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "record: no recorder named '%s'\n", argv[3]);
        return 2;
    }
    fprintf(stderr, "record: done; commit %s/ with the change\n", argv[1]);
    return 0;
}
