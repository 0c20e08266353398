/* W7.8 The King James corpus */
/* corpus.h: the text of chapter 7's experiments, split and tokenized */
#ifndef ROPE_CORPUS_H
#define ROPE_CORPUS_H
#include <stddef.h>
#include <stdint.h>
typedef enum {
    ROPE_CORPUS_TRAIN, ROPE_CORPUS_VALIDATION, ROPE_CORPUS_TEST
} rope_corpus_part;
enum { ROPE_CORPUS_UNKNOWN = 0 }; /* the id of a character not trained */
#define ROPE_CORPUS_UNKNOWN_CHAR '\x1a' /* what the unknown id prints */
typedef struct rope_corpus_doc {
    char name[16]; /* the book's abbreviation, "Ge" */
    size_t offset, len; /* its bytes: text + offset, len of them */
    rope_corpus_part part;
} rope_corpus_doc;
typedef struct rope_corpus {
    char source[128]; /* the package and its version */
    char *text; /* the documents' bytes, one after the other */
    size_t text_len;
    int n_docs;
    rope_corpus_doc *docs;
    int vocab_size; /* the unknown id and the training characters */
    int id_of[256]; /* byte -> id */
    unsigned char char_of[256]; /* id -> byte */
} rope_corpus;
typedef struct rope_corpus_split {
    rope_corpus_part part;
    int n_docs;
    int *doc; /* each document's index in the corpus */
    int **ids; /* each document's token ids */
    size_t *len; /* each document's number of tokens */
    size_t tokens; /* their sum */
    size_t unknown; /* how many of them are ROPE_CORPUS_UNKNOWN */
} rope_corpus_split;
rope_corpus_part rope_corpus_part_of(int position);
int rope_corpus_parse(const char *buf, size_t n, rope_corpus *c,
                      char *err, size_t errlen);
int rope_corpus_load(const char *path, rope_corpus *c, char *err,
                     size_t errlen);
void rope_corpus_free(rope_corpus *c);
size_t rope_corpus_encode(const rope_corpus *c, const char *text,
                          size_t n, int *ids);
void rope_corpus_decode(const rope_corpus *c, const int *ids, size_t n,
                        char *text);
int rope_corpus_split_make(const rope_corpus *c, rope_corpus_part part,
                           size_t min_len, rope_corpus_split *s,
                           char *err, size_t errlen);
void rope_corpus_split_free(rope_corpus_split *s);
int rope_corpus_window(const rope_corpus_split *s, size_t len,
                       uint64_t *state, int *ids, int *doc,
                       size_t *start);
#endif
