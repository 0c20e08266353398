/* The frame of the workshop / Fuzzing: inputs nobody thought of */
/* fuzz-cli.c: libFuzzer target of the command line (make fuzz). */
#define main rope_main
#include "rope-cli.c"
#undef main
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define FUZZ_MAX_WORDS 64
static int scratch = -1, null_fd = -1, saved_out = -1, saved_err = -1;

static void redirect_output(void)
{
    if (scratch < 0) {
        FILE *f = tmpfile();
        scratch = f ? dup(fileno(f)) : -1;
        null_fd = open("/dev/null", O_WRONLY);
        saved_out = dup(1);
        saved_err = dup(2);
        if (f == NULL || scratch < 0 || null_fd < 0)
            abort();
        fclose(f);
    }
    fflush(stdout);
    if (ftruncate(scratch, 0) != 0 || lseek(scratch, 0, SEEK_SET) != 0)
        abort();
    dup2(null_fd, 1);
    dup2(scratch, 2);
}

static void restore_output(void)
{
    fflush(stdout);
    clearerr(stdout);
    if (saved_out >= 0) dup2(saved_out, 1);
    if (saved_err >= 0) dup2(saved_err, 2);
}
static void check_one_line(int rc)
{
    char text[4096];
    ssize_t n = pread(scratch, text, sizeof text - 1, 0);
    if (n < 0)
        abort();
    text[n] = '\0';
    const char *newline = strchr(text, '\n');
    if (rc == 0 && n == 0)
        return;
    if (rc == 2 && strncmp(text, "rope: error: ", 13) == 0
        && newline == text + n - 1)
        return;
    abort(); /* another status, or not exactly one line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char prog[] = "rope";
    char *argv[FUZZ_MAX_WORDS + 2], *words = malloc(size + 1);
    int argc = 0;
    if (words == NULL)
        return 0;
    memcpy(words, data, size);
    words[size] = '\0';
    argv[argc++] = prog;
    for (char *w = words; w < words + size && argc <= FUZZ_MAX_WORDS;
         w += strlen(w) + 1)
        argv[argc++] = w;
    argv[argc] = NULL;
    cli_parse_only = 1;
    redirect_output();
    int rc = run_command(argc, argv);
    restore_output();
    check_one_line(rc);
    free(words);
    return 0;
}
