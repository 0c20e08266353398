/* W7.10 The trainer's linear layers, vectorised */
/* linear-f32.c: the float32 linear layers of chapter 7's trainer,
   vectorised; the same sums in the same order as evidence-f32.c */
#include <stdlib.h>
#include <string.h>
#include "evidence-f32.h"

static void axpy_generic(float *restrict y, float a,
                         const float *restrict w, int n)
{
    for (int j = 0; j < n; j++)
        y[j] += a * w[j];
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void
axpy_avx2(float *restrict y, float a, const float *restrict w, int n)
{
    for (int j = 0; j < n; j++)
        y[j] += a * w[j];
}
__attribute__((target("avx512f"))) static void
axpy_avx512(float *restrict y, float a, const float *restrict w, int n)
{
    for (int j = 0; j < n; j++)
        y[j] += a * w[j];
}
#endif
typedef void (*axpy_fn)(float *restrict, float, const float *restrict, int);
static axpy_fn axpy_chosen;

static axpy_fn axpy(void)
{
    axpy_fn f = __atomic_load_n(&axpy_chosen, __ATOMIC_ACQUIRE);
    if (f != NULL)
        return f;
    f = axpy_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        f = axpy_avx512;
    else if (__builtin_cpu_supports("avx2"))
        f = axpy_avx2;
#endif
    __atomic_store_n(&axpy_chosen, f, __ATOMIC_RELEASE);
    return f;
}

void rope_f32_axpy(float *y, float a, const float *w, int n)
{
    axpy()(y, a, w, n);
}
int rope_f32_linear_fast(const float *x, const float *w, float *y, int rows,
                         int in, int out)
{
    axpy_fn f = axpy();
    float *wt = malloc((size_t)in * out * sizeof *wt);
    if (wt == NULL)
        return -1;
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++)
            wt[(size_t)i * out + o] = w[(size_t)o * in + i];
    for (int r = 0; r < rows; r++) {
        float *yr = y + (size_t)r * out;
        const float *xr = x + (size_t)r * in;
        memset(yr, 0, (size_t)out * sizeof *yr);
        for (int i = 0; i < in; i++)
            f(yr, xr[i], wt + (size_t)i * out, out);
    }
    free(wt);
    return 0;
}
