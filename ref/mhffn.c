/* Reference multi-head FFN, the naive form (docs/NUMERICS.md §mhffn).
 * Per token:
 *   q = x W_in                                       (fmaf over d from +0)
 *   per head i, with q_i = q[i*dh .. i*dh + dh):
 *     g_u = silu(q_i W1_i[:, u]) * (q_i W3_i[:, u])  for u < f (stored: naive)
 *     o_i[j] = sum_u g_u W2_i[u][j]                  (fmaf over u from +0)
 *   y = concat(o_0 .. o_{H-1}) W_out                 (fmaf over H*dh from +0)
 * Each head is exactly the swiglu op on q_i with one block of width f. */
#include "ref.h"
#include "canon.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* y[j] = sum_p x[p] w[p][j] over p < rows, fmaf chain from +0 (NUMERICS §gemm). */
static void rowvec_mat(const float *x, const float *w, int64_t rows, int64_t cols, float *y) {
  for (int64_t j = 0; j < cols; j++) {
    float acc = 0.0f;
    for (int64_t p = 0; p < rows; p++) acc = fmaf(x[p], w[p * cols + j], acc);
    y[j] = acc;
  }
}

hmx_status hmx_ref_mhffn(const hmx_mhffn_args *s) {
  int64_t hd = s->heads * s->dh;
  float *q = hmx_alloc_array((size_t)hd, sizeof *q);
  float *o = hmx_alloc_array((size_t)hd, sizeof *o);
  float *g = hmx_alloc_array((size_t)s->f, sizeof *g);
  if ((hd && (!q || !o)) || (s->f && !g)) {
    free(q); free(o); free(g);
    return HMX_ERR_NO_MEMORY;
  }
  for (int64_t t = 0; t < s->t; t++) {
    rowvec_mat(s->x + t * s->d, s->w_in, s->d, hd, q);
    for (int64_t i = 0; i < s->heads; i++) {
      const float *qi = q + i * s->dh;
      const float *w1 = s->w1 + i * s->dh * s->f, *w3 = s->w3 + i * s->dh * s->f;
      const float *w2 = s->w2 + i * s->f * s->dh;
      for (int64_t u = 0; u < s->f; u++) {
        float a = 0.0f, b = 0.0f;
        for (int64_t p = 0; p < s->dh; p++) {
          a = fmaf(qi[p], w1[p * s->f + u], a);
          b = fmaf(qi[p], w3[p * s->f + u], b);
        }
        g[u] = hmx_siluf(a) * b;
      }
      rowvec_mat(g, w2, s->f, s->dh, o + i * s->dh);
    }
    rowvec_mat(o, s->w_out, hd, s->d_out, s->y + t * s->d_out);
  }
  free(q); free(o); free(g);
  return HMX_OK;
}
