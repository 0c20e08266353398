/* W5c.3.2 Recording the measurements */
/* record.h: the recorders of the book's measurements */
#ifndef ROPE_RECORD_H
#define ROPE_RECORD_H
int record_attention(const char *dir);
/* recorders of the later chapters */
int record_decode(const char *dir); /* the decode sweep */
extern const char *record_commit; /* the second argument */
int record_provenance(const char *dir, const char *commit,
                      const char *stem);
/* W6.6 The numbers of chapter 6 */
int record_ring(const char *dir);
/* W5c.3.2 Recording the measurements */
#endif
