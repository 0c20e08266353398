/* The HTML edition / Interactive figures / The glue */
/* rope-wasm.h: the glue of the interactive figures */
#ifndef ROPE_WASM_H
#define ROPE_WASM_H
#if defined(__wasm__)
#define RW_EXPORT(name) __attribute__((export_name(name)))
#else
#define RW_EXPORT(name)
#endif
/* The HTML edition / Interactive figures / Figure: a query and a key turned by RoPE */
enum { RW_D = 96, RW_HALF = RW_D / 2, RW_NPOS = 1024 };
int rw_rope_setup(int base_exponent);
float *rw_rope_inv_freq(void);
float *rw_rope_q(void);
float *rw_rope_k(void);
double *rw_rope_curve(void);
double rw_rope_score(int m, int n);
double rw_rope_angle(int t, int i);
/* The HTML edition / Interactive figures / Figure: the clock hands of the sinusoidal encoding */
enum { RW_PE_D = 512 };
int rw_clock(int t);
double *rw_clock_row(void);
double rw_clock_omega(int i);
/* The HTML edition / Interactive figures / Figure: the wavelengths of a scaling method */
enum { RW_SC_NONE, RW_SC_PI, RW_SC_NTK, RW_SC_DYNAMIC, RW_SC_YARN_MM,
       RW_SC_YARN_HF, RW_SC_LLAMA3, RW_SC_METHODS };
enum { RW_SC_LTR = 768 };
int rw_scaling(int method, int factor, int original);
float *rw_scaling_inv_freq(void);
float *rw_scaling_omega(void);
double *rw_scaling_lambda(void);
double *rw_scaling_chi(void);
int *rw_scaling_out(void);
double rw_scaling_attention_factor(void);
/* The HTML edition / Interactive figures / Figure: the tiles and the items of a call */
enum { RW_AT_KV = 2, RW_AT_MAXN = 4096, RW_AT_MAXTH = 8,
       RW_AT_MAXITEMS = 256 };
/* the numbers of rw_tiles_shape(), in this order */
enum { RW_BQ, RW_NQB, RW_NTK, RW_NIB, RW_UNITS, RW_ITEMS, RW_THREADS,
       RW_FULL, RW_PARTIAL, RW_SKIPPED, RW_SPAN, RW_WORK, RW_SHAPE_N };
/* the numbers of each item in rw_tiles_items(), in this order */
enum { RW_IT_UNIT, RW_IT_B0, RW_IT_B1, RW_IT_COST, RW_IT_THREAD,
       RW_IT_START, RW_IT_N };
int rw_tiles(int n, int rep, int causal, int threads);
int *rw_tiles_shape(void);
unsigned char *rw_tiles_class(void);
int *rw_tiles_items(void);
/* The HTML edition / Interactive figures / The glue */
#endif
