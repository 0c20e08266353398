/* record.h: the recorders of the book's measurements */
#ifndef ROPE_RECORD_H
#define ROPE_RECORD_H
int record_attention(const char *dir);
/* recorders of the later chapters */
int record_ring(const char *dir);
#endif
