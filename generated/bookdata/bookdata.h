/* The frame of the workshop / Numbers for the prose */
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
/* W1.4 The numbers of chapter 1 */
int bookdata_positions(const char *dir);
/* W2.8 The numbers of the chapter */
int bookdata_sinusoidal(const char *dir);
/* W3.5 Numbers for the prose */
int bookdata_rotary(const char *dir);
/* W4.5 Numbers and figures for the prose */
int bookdata_scaling(const char *dir);
/* W5c.3 The numbers of chapter 5 */
int bookdata_attention(const char *dir);
/* W6.6 The numbers of chapter 6 */
int bookdata_ring(const char *dir);
/* W7.5 The book's data */
int bookdata_evidence(const char *dir);
/* W7.8 The King James corpus */
int bookdata_corpus(const char *dir);
/* W8.7 The code of the exercises */
int bookdata_minimind(const char *dir);
/* The frame of the workshop / Numbers for the prose */
#endif
