/* The frame of the workshop / Fuzzing: inputs nobody thought of */
/* fuzz-npy.c: libFuzzer target of the .npy reader (make fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "npy.h"

static char npy_path[64];
static int npy_fd = -1;

static void remove_npy_file(void)
{
    unlink(npy_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rope_npy a, b;
    char err[512];
    int pa = rope_npy_parse(data, size, &a, err, sizeof err);
    if (npy_fd < 0) {
        strcpy(npy_path, "/dev/shm/rope-fuzz-npy-XXXXXX");
        npy_fd = mkstemp(npy_path);
        if (npy_fd < 0) {
            strcpy(npy_path, "/tmp/rope-fuzz-npy-XXXXXX");
            npy_fd = mkstemp(npy_path);
        }
        if (npy_fd < 0)
            abort();
        atexit(remove_npy_file);
    }
    if (ftruncate(npy_fd, 0) != 0
        || (size > 0 && pwrite(npy_fd, data, size, 0) != (ssize_t)size))
        abort();
    int pb = rope_npy_read(npy_path, &b, err, sizeof err);
    if ((pa == 0) != (pb == 0))
        abort(); /* one reader accepts what the other refuses */
    if (pa == 0) {
        size_t count = 1;
        for (int j = 0; j < a.ndim; j++)
            count *= (size_t)a.shape[j];
        if (a.ndim != b.ndim || a.count != b.count || count != a.count
            || a.count * 4 > size
            || memcmp(a.shape, b.shape, sizeof a.shape) != 0
            || memcmp(a.data, b.data, a.count * 4) != 0
            || memcmp(a.data, data + size - a.count * 4, a.count * 4) != 0)
            abort();
    }
    if (pa == 0) rope_npy_free(&a);
    if (pb == 0) rope_npy_free(&b);
    return 0;
}
