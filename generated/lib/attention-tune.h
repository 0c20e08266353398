/* W5.3 The other micro-kernels */
/* attention-tune.h: the switches of the attention kernel's
   measurements (internal: for the benchmark, the book's recorder and
   the tests; not exported from librope.so) */
#ifndef ROPE_ATTENTION_TUNE_H
#define ROPE_ATTENTION_TUNE_H
enum { ROPE_TUNE_STEP, ROPE_TUNE_TAYLOR, ROPE_TUNE_ITEM_BLOCKS,
       ROPE_TUNE_ROWS, ROPE_TUNE_PACK, ROPE_TUNE_REDUCE, ROPE_TUNE_SIX,
       ROPE_TUNE_PREFETCH, ROPE_TUNE_SPIN };
__attribute__((visibility("hidden")))
int rope_attention_tune(int knob, int value);
__attribute__((visibility("hidden")))
void rope_attention_env_reload(void); /* read ROPE_SIMD, ROPE_BF16 again */
#endif
