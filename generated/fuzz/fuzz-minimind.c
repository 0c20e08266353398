/* W8.6 Fuzzing the weight file's reader */
/* fuzz-minimind.c: libFuzzer target of the weight file's reader. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "minimind.h"

static char mm_path[64];
static int mm_fd = -1;

static void remove_mm_file(void)
{
    unlink(mm_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rope_minimind m;
    char err[512];
    if (mm_fd < 0) {
        strcpy(mm_path, "/dev/shm/rope-fuzz-mm-XXXXXX");
        mm_fd = mkstemp(mm_path);
        if (mm_fd < 0) {
            strcpy(mm_path, "/tmp/rope-fuzz-mm-XXXXXX");
            mm_fd = mkstemp(mm_path);
        }
        if (mm_fd < 0)
            abort();
        atexit(remove_mm_file);
    }
    if (ftruncate(mm_fd, 0) != 0
        || (size > 0 && pwrite(mm_fd, data, size, 0) != (ssize_t)size))
        abort();
    memset(&m, 0, sizeof m);
    err[0] = '\0';
    if (rope_minimind_load(&m, mm_path, err, sizeof err) == 0)
        rope_minimind_free(&m);
    else if (err[0] == '\0' || strchr(err, '\n') != NULL)
        abort(); /* a refusal is one line */
    return 0;
}
