/* A.8 Chapter 8: MiniMind in C */
/* exercises-minimind-solution.c: the book's answers to chapter 8. */
#include "exercises-minimind.h"

long ex_kv_cache_floats(int num_hidden_layers, int num_key_value_heads,
                        int head_dim, long n_tokens)
{
    return 2L * num_hidden_layers * num_key_value_heads * head_dim
           * n_tokens;
}
int ex_top_p_count(const double *p_sorted, int n, double top_p)
{
    double before = 0;
    int keep = n > 0;
    if (top_p >= 1)
        return n;
    for (int i = 1; i < n; i++) {
        before += p_sorted[i - 1];
        if (before > top_p)
            break;
        keep++;
    }
    return keep;
}
