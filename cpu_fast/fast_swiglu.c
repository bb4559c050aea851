/* Fast-tier swiglu (docs/NUMERICS.md, "Fast tier", swiglu): the two input
 * GEMMs and the output GEMM through oneDNN's matmul (fast_gemm_dnnl.c),
 * silu through SLEEF's expf. Unlike the exact kernel it materializes the
 * hidden activations, for a chunk of tokens at a time (bounded memory). */
#include "cpu_fast.h"
#include "internal.h"

#include <stdlib.h>

/* Tokens per chunk: large enough for GEMM efficiency, small enough that two
 * [chunk, h] buffers stay modest (h = 4096: 4 MiB). */
#define SWIGLU_TOKENS 128

hmx_status hmx_fast_swiglu(const hmx_swiglu_args *a) {
  if (a->wdt != HMX_F32)
    return hmx_fail(HMX_ERR_INTERNAL, "swiglu (fast): weights must be staged to f32");
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
    s = hmx_fast_matmul(x, a->w1, g, n, a->h, a->d, 0, a->threads);
    if (s == HMX_OK) s = hmx_fast_matmul(x, a->w3, u, n, a->h, a->d, 0, a->threads);
    if (s == HMX_OK) {
      fk->silu_mul(g, u, n * a->h);
      s = hmx_fast_matmul(g, a->w2, a->y + t0 * a->d_out, n, a->d_out, a->h, 0, a->threads);
    }
  }
  free(g);
  return s;
}
