/* Fast-tier swiglu (docs/NUMERICS.md, "Fast tier", swiglu): the two input
 * GEMMs and the output GEMM through oneDNN's matmul (fast_gemm_dnnl.c),
 * silu through SLEEF's expf. Unlike the exact kernel it materializes the
 * hidden activations, for a chunk of tokens at a time (bounded memory).
 * BF16 weights are taken as stored where the matmul runs them natively
 * (hmx_fast_gemm_bf16_ok; x and g are then rounded to bf16 by it). */
#include "cpu_fast.h"
#include "internal.h"

#include <stdlib.h>

/* Tokens per chunk: large enough for GEMM efficiency, small enough that two
 * [chunk, h] buffers stay modest (h = 4096: 4 MiB). */
#define SWIGLU_TOKENS 128

hmx_status hmx_fast_swiglu(const hmx_swiglu_args *a) {
  const int bf16 = a->wdt == HMX_BF16 && a->w1_16 && a->w3_16 && a->w2_16;
  if (a->wdt != HMX_F32 && !bf16)
    return hmx_fail(HMX_ERR_INTERNAL, "swiglu (fast): weights must be f32 or bf16");
  const void *w1 = bf16 ? (const void *)a->w1_16 : (const void *)a->w1;
  const void *w3 = bf16 ? (const void *)a->w3_16 : (const void *)a->w3;
  const void *w2 = bf16 ? (const void *)a->w2_16 : (const void *)a->w2;
  if (a->t == 0 || a->d_out == 0) return HMX_OK;
  const int64_t rows = a->t < SWIGLU_TOKENS ? a->t : SWIGLU_TOKENS;
  float *g = hmx_alloc_array((size_t)rows * (size_t)(a->h ? a->h : 1), 2 * sizeof(float));
  if (!g) return hmx_fail(HMX_ERR_NO_MEMORY, "swiglu (fast): out of memory");
  float *u = g + rows * a->h;
  const hmx_fast_kernels *fk = hmx_fast_kernels_pick();
  hmx_status s = HMX_OK;
  for (int64_t t0 = 0; t0 < a->t && s == HMX_OK; t0 += rows) {
    int64_t n = a->t - t0 < rows ? a->t - t0 : rows;
    const float *x = a->x + t0 * a->d;
    s = hmx_fast_matmul(x, w1, a->wdt, g, n, a->h, a->d, 0, a->threads);
    if (s == HMX_OK) s = hmx_fast_matmul(x, w3, a->wdt, u, n, a->h, a->d, 0, a->threads);
    if (s == HMX_OK) {
      fk->silu_mul(g, u, n * a->h);
      s = hmx_fast_matmul(g, w2, a->wdt, a->y + t0 * a->d_out, n, a->d_out, a->h, 0,
                          a->threads);
    }
  }
  free(g);
  return s;
}
