/* W8.7 The code of the exercises */
/* Your answers to the exercises of chapter 8. Fill in the bodies and
   run: make exercise CHAPTER=8 */
#include "exercises-minimind.h"

long ex_kv_cache_floats(int num_hidden_layers, int num_key_value_heads,
                        int head_dim, long n_tokens)
{
    (void)num_hidden_layers; (void)num_key_value_heads; (void)head_dim;
    (void)n_tokens;
    return -1;
}

int ex_top_p_count(const double *p_sorted, int n, double top_p)
{
    (void)p_sorted; (void)n; (void)top_p;
    return -1;
}
