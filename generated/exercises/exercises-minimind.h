/* W8.7 The code of the exercises */
/* exercises-minimind.h: the functions of chapter 8's exercises. */
#ifndef ROPE_EXERCISES_MINIMIND_H
#define ROPE_EXERCISES_MINIMIND_H
long ex_kv_cache_floats(int num_hidden_layers, int num_key_value_heads,
                        int head_dim, long n_tokens);
int ex_top_p_count(const double *p_sorted, int n, double top_p);
#endif
