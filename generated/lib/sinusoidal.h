/* 2.1.1 The interface */
/* sinusoidal.h: the sinusoidal position encoding (chapter 2) */
#ifndef ROPE_SINUSOIDAL_H
#define ROPE_SINUSOIDAL_H
#include <stddef.h>
#include <stdint.h>
/* W2.2 The errors of the interface */
/* chapter 2: pi, and the errors of the sinusoidal encoding */
#define ROPE_PE_PI 3.14159265358979323846
enum {
    ROPE_PE_OK = 0,
    ROPE_PE_EDMODEL = 1, /* d_model odd or not positive */
    ROPE_PE_EBASE = 2, /* base not finite or not > 1 */
    ROPE_PE_ELEN = 3 /* negative number of positions */
};
/* 2.1.1 The interface */
/* chapter 2: the sinusoidal position encoding */
double rope_pe_omega(int i, int d_model, double base);
int rope_pe_row(double *row, long t, int d_model, double base);
int rope_pe_table(double *pe, long seq_len, int d_model, double base);
int rope_pe_table_float(float *pe, long seq_len, int d_model,
                        float base);
void rope_pe_rotation(double m[4], double omega, long r);
double rope_pe_dot(long m, long n, int d_model, double base);
double rope_pe_offset_dot(long r, int d_model, double base);
int rope_pe_score_terms(const double *x, const double *pe,
                        const double *wq, const double *wk, int n,
                        int d_model, int d, double *s, double *terms);
double rope_pe_wavelength(int i, int d_model, double base);
double rope_pe_half_turn(int i, int d_model, double base);
/* 2.4.2 The code */
void rope_pe_draw_example(uint64_t seed, int n, int d_model, int d,
                          double *x, double *wq, double *wk);
double rope_pe_rms(const double *a, size_t len);
/* W2.2 The errors of the interface */
int rope_pe_check(int d_model, double base);
/* 2.1.1 The interface */
#endif
