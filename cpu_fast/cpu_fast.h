/* The CPU fast tier (docs/NUMERICS.md, "Fast tier"): internal declarations
 * shared by the files of cpu_fast/. Built only on a host CPU build; each
 * library it uses (oneDNN, SLEEF) is optional at build time. */
#ifndef HMX_CPU_FAST_H
#define HMX_CPU_FAST_H

#include "backend.h"

/* oneDNN matmul (fast_gemm_dnnl.c, HMX_HAVE_DNNL builds only): c = a b + bias
 * with one primitive per shape, created on first use and cached; M = 1
 * through dnnl_sgemm. */
hmx_status hmx_fast_gemm_dnnl(const hmx_gemm_args *a);
/* A plain row-major c[m, n] = a[m, k] b[k, n] (ldb = n) or b[n, k]^T
 * (trans_b) through the cached primitives, for the fast swiglu; b is f32
 * (wdt HMX_F32) or, where hmx_fast_gemm_bf16_ok, bf16 (HMX_BF16; a is then
 * rounded to bf16 first). */
hmx_status hmx_fast_matmul(const float *a, const void *b, hmx_dtype wdt, float *c, int64_t m,
                           int64_t n, int64_t k, int trans_b, int threads);
/* Whether oneDNN runs bf16 matmuls in AVX512_BF16 code here (asked once):
 * then the fast gemm and swiglu take bf16 weights as stored. */
int hmx_fast_gemm_bf16_ok(void);
/* fast_bf16_g16.c (HMX_WITH_FAST_BF16 builds; run only where the CPU has
 * AVX512_BF16): c[m, n] = a[m, k] B^T for B [n, k] bf16 in the G16 layout,
 * a rounded to bf16; and swiglu with w1, w3, w2 bf16 in G16
 * (HMX_WG16_SWIGLU's layout) through it. */
hmx_status hmx_fast_gemm_g16_bf16(const float *a, const uint16_t *b, float *c, int64_t m,
                                  int64_t n, int64_t k, int threads);
hmx_status hmx_fast_swiglu_g16_bf16(const hmx_swiglu_args *a);
/* Attention with S = Q K^T and O += P V through dnnl_sgemm, the online
 * softmax between them (fast_attention_dnnl.c, HMX_HAVE_DNNL builds only). */
hmx_status hmx_fast_attention_dnnl(const hmx_attention_args *a);
/* Primitives in the cache (tests: created once per shape, not per call). */
int hmx_fast_gemm_cache_size(void);

/* The elementwise and attention kernels, compiled once per ISA from
 * fast_kernels_impl.h (base: baseline flags; avx512: with AVX-512 flags and
 * SLEEF's 16-lane expf). `vexp` = x[i] <- exp(x[i]); `silu_mul` =
 * g[i] <- silu(g[i]) * u[i]; attention: online softmax (fast_kernels_impl.h). */
typedef struct hmx_fast_kernels {
  const char *isa;
  void (*vexp)(float *x, int64_t n);
  void (*silu_mul)(float *g, const float *u, int64_t n);
  hmx_status (*attention)(const hmx_attention_args *a);
  /* The row work of fast_attention_dnnl.c between its sgemm calls, compiled
   * here per ISA (fast_kernels_impl.h says what each does): one key block's
   * online-softmax step, P V over the keys not every row takes, and
   * out = acc / l. */
  void (*att_block)(float *s, int64_t lds, int64_t rows, int64_t *nr, float *acc, int64_t d,
                    float *m, float *l);
  void (*att_pv_tail)(const float *p, int64_t lds, int64_t rows, const int64_t *nr, int64_t j0,
                      const float *v, int64_t ldv, float *acc, int64_t d);
  void (*att_finish)(const float *acc, const float *l, int64_t rows, int64_t d, float *const *out);
  /* dst <- x rounded to bf16 (nearest even), for the bf16 matmul */
  void (*to_bf16)(uint16_t *dst, const float *x, int64_t n);
} hmx_fast_kernels;

extern const hmx_fast_kernels hmx_fast_kernels_base;
#if defined(HMX_WITH_CPU_FAST_AVX2)
extern const hmx_fast_kernels hmx_fast_kernels_avx2;
#endif
#if defined(HMX_WITH_CPU_FAST_AVX512)
extern const hmx_fast_kernels hmx_fast_kernels_avx512;
#endif
/* The best set this CPU runs (cpu_fast/fast_table.c). */
const hmx_fast_kernels *hmx_fast_kernels_pick(void);

/* Key block of the online softmax (keys per rescaling step). */
#define HMX_FAST_ATT_KEY_BLOCK 64
/* Query rows that share one pass over a key block (reuse of K, V in cache). */
#define HMX_FAST_ATT_QUERY_TILE 16

#endif
