/* Reference blocked SwiGLU (docs/NUMERICS.md §swiglu). For each token, the
 * hidden units are visited in blocks of `block`; inside a block
 *   a_u = sum_p x_p W1[p][u],  b_u = sum_p x_p W3[p][u]   (fmaf over p from +0)
 *   g_u = hmx_siluf(a_u) * b_u
 * and then y_j = fmaf(g_u, W2[u][j], y_j) for u in the block, in order.
 * Because y_j accumulates over u = 0..h-1 sequentially whatever the block
 * size, the result is bit-identical for every block size: only the memory
 * for the hidden activations (one block) changes. */
#include "ref.h"
#include "canon.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

hmx_status hmx_ref_swiglu(const hmx_swiglu_args *s) {
  float *g = hmx_alloc_array((size_t)s->block, sizeof *g);
  if (!g) return HMX_ERR_NO_MEMORY;
  for (int64_t t = 0; t < s->t; t++) {
    const float *x = s->x + t * s->d;
    float *y = s->y + t * s->d_out;
    for (int64_t j = 0; j < s->d_out; j++) y[j] = 0.0f;
    for (int64_t u0 = 0; u0 < s->h; u0 += s->block) {
      int64_t len = s->h - u0 < s->block ? s->h - u0 : s->block;
      for (int64_t u = 0; u < len; u++) {
        float a = 0.0f, b = 0.0f;
        for (int64_t p = 0; p < s->d; p++) {
          a = fmaf(x[p], s->w1[p * s->h + u0 + u], a);
          b = fmaf(x[p], s->w3[p * s->h + u0 + u], b);
        }
        g[u] = hmx_siluf(a) * b;
      }
      for (int64_t u = 0; u < len; u++)
        for (int64_t j = 0; j < s->d_out; j++)
          y[j] = fmaf(g[u], s->w2[(u0 + u) * s->d_out + j], y[j]);
    }
  }
  free(g);
  return HMX_OK;
}
