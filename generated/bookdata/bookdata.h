/* bookdata.h: helpers of the programs that write the book's data. */
#ifndef ROPE_BOOKDATA_H
#define ROPE_BOOKDATA_H
#include <stdio.h>
#include "rope.h"
#include "tables.h"

FILE *bd_open(const char *dir, const char *name);
FILE *bd_numbers_open(const char *dir, const char *chapter);
void bd_def(FILE *f, const char *key, const char *fmt, ...);
const char *bd_sci(char *buf, size_t size, double v, int digits);
void bd_def_sci(FILE *f, const char *key, double v, int digits);
void bd_close(FILE *f);
/* writers, chapter by chapter */
int bookdata_positions(const char *dir);
int bookdata_sinusoidal(const char *dir);
int bookdata_rotary(const char *dir);
int bookdata_scaling(const char *dir);
int bookdata_attention(const char *dir);
int bookdata_ring(const char *dir);
int bookdata_evidence(const char *dir);
#endif
