/* The frame of the workshop / NumPy files */
/* npy.h: NumPy .npy files of float32 */
#ifndef ROPE_NPY_H
#define ROPE_NPY_H
#include <stddef.h>
#define ROPE_NPY_MAX_NDIM 8
typedef struct rope_npy {
    int ndim;
    long shape[ROPE_NPY_MAX_NDIM];
    size_t count; /* product of the shape */
    float *data; /* count floats, C order; free with rope_npy_free */
} rope_npy;
int rope_npy_parse(const unsigned char *buf, size_t n, rope_npy *a,
                   char *err, size_t errlen);
int rope_npy_read(const char *path, rope_npy *a, char *err,
                  size_t errlen);
int rope_npy_write(const char *path, const float *data, int ndim,
                   const long *shape, char *err, size_t errlen);
void rope_npy_free(rope_npy *a);
#endif
