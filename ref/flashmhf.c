/* Reference FlashMHF (docs/NUMERICS.md §flashmhf). Per token:
 *   q = x W_in                                       (fmaf over d from +0)
 *   per head i, with q_i = q[i*dh .. i*dh + dh):
 *     z_e = q_i G_i[:, e]  (fmaf over dh from +0),  g_e = sigmoid(z_e)
 *     S = (((+0 + g_0) + g_1) + ...) + g_{E-1},      w_e = g_e / S
 *     acc[j] = +0
 *     for e = 0 .. E-1, for the hidden units u of sub-network e in blocks:
 *       h_u = (silu(q_i K_{i,e}[:, u]) * (q_i U_{i,e}[:, u])) * w_e
 *       acc[j] = fmaf(h_u, V_{i,e}[u][j], acc[j])    (u increasing inside e)
 *     o_i = acc
 *   y = concat(o) W_out                              (fmaf over H*dh from +0)
 * The gate weight is folded into the hidden activation, so the E weighted
 * sub-network outputs sum into one accumulator in the fixed order (e, u):
 * one block of `block` hidden values is all that is ever stored, and the bits
 * do not depend on the block size. */
#include "ref.h"
#include "canon.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

hmx_status hmx_ref_flashmhf(const hmx_flashmhf_args *s) {
  int64_t hd = s->heads * s->dh, E = s->e, de = s->de, dh = s->dh;
  float *q = hmx_alloc_array((size_t)hd, sizeof *q);
  float *o = hmx_alloc_array((size_t)hd, sizeof *o);
  float *w = hmx_alloc_array((size_t)E, sizeof *w);
  float *h = hmx_alloc_array((size_t)s->block, sizeof *h);
  if (!q || !o || !w || !h) {
    free(q); free(o); free(w); free(h);
    return HMX_ERR_NO_MEMORY;
  }
  for (int64_t t = 0; t < s->t; t++) {
    const float *x = s->x + t * s->d;
    for (int64_t c = 0; c < hd; c++) {
      float acc = 0.0f;
      for (int64_t p = 0; p < s->d; p++) acc = fmaf(x[p], s->w_in[p * hd + c], acc);
      q[c] = acc;
    }
    for (int64_t i = 0; i < s->heads; i++) {
      const float *qi = q + i * dh;
      float *acc = o + i * dh;
      /* gate: sigmoid, normalized by its sum over the E sub-networks */
      const float *gate = s->gate + i * dh * E;
      float sum = 0.0f;
      for (int64_t e = 0; e < E; e++) {
        float z = 0.0f;
        for (int64_t p = 0; p < dh; p++) z = fmaf(qi[p], gate[p * E + e], z);
        w[e] = hmx_sigmoidf(z);
        sum = sum + w[e];
      }
      for (int64_t e = 0; e < E; e++) w[e] = w[e] / sum;
      for (int64_t j = 0; j < dh; j++) acc[j] = 0.0f;
      for (int64_t e = 0; e < E; e++) {
        const float *wk = s->wk + (i * E + e) * dh * de, *wu = s->wu + (i * E + e) * dh * de;
        const float *wv = s->wv + (i * E + e) * de * dh;
        for (int64_t u0 = 0; u0 < de; u0 += s->block) {
          int64_t len = de - u0 < s->block ? de - u0 : s->block;
          for (int64_t u = 0; u < len; u++) {
            float a = 0.0f, b = 0.0f;
            for (int64_t p = 0; p < dh; p++) {
              a = fmaf(qi[p], wk[p * de + u0 + u], a);
              b = fmaf(qi[p], wu[p * de + u0 + u], b);
            }
            h[u] = (hmx_siluf(a) * b) * w[e];
          }
          for (int64_t u = 0; u < len; u++)
            for (int64_t j = 0; j < dh; j++) acc[j] = fmaf(h[u], wv[(u0 + u) * dh + j], acc[j]);
        }
      }
    }
    float *y = s->y + t * s->d_out;
    for (int64_t j = 0; j < s->d_out; j++) {
      float a = 0.0f;
      for (int64_t c = 0; c < hd; c++) a = fmaf(o[c], s->w_out[c * s->d_out + j], a);
      y[j] = a;
    }
  }
  free(q); free(o); free(w); free(h);
  return HMX_OK;
}
