/* Reference GEMM (docs/NUMERICS.md §gemm): each output starts from the bias
 * (or +0) and takes one fmaf per term, k = 0, 1, ..., K-1 in order. */
#include "ref.h"

#include <math.h>

hmx_status hmx_ref_gemm(const hmx_gemm_args *g) {
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++) {
      float acc = g->bias ? g->bias[j] : 0.0f;
      for (int64_t p = 0; p < g->k; p++) {
        float b = g->trans_b ? g->b[j * g->k + p] : g->b[p * g->n + j];
        acc = fmaf(g->a[i * g->k + p], b, acc);
      }
      g->c[i * g->n + j] = acc;
    }
  return HMX_OK;
}
