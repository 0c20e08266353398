/* The frame of the workshop / Tables that the program and the book share */
/* tables.h: the tables that the rope program prints and the book
   shows, and the seed of the book's examples. */
#ifndef ROPE_TABLES_H
#define ROPE_TABLES_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { BOOK_SEED = 2024 }; /* the seed of the book's examples */
/* W1.3 The demonstrations */
/* chapter 1's tables and their helpers (workshop W1) */
void table_print_catdog(FILE *out, int latex);
void table_print_integer(FILE *out, int latex);
void table_print_normalized(FILE *out, int latex);
enum { CH1_DMODEL = 768 };
#define CH1_SIGMA 0.02
void table_two_embeddings(double *a, double *b, int d, double sigma,
                          uint64_t seed);
double table_cosine_at_position(const double *a, const double *b, int d,
                                double t);
/* W2.6 The command line */
int table_print_pe_rows(FILE *out, const long *positions, size_t n,
                        int d_model, double base);
/* The frame of the workshop / Tables that the program and the book share */
#endif
