/* Reference multi-head attention (docs/NUMERICS.md §attention).
 * For each (batch, query head, query):
 *   s_j = dot(q, k_j) * scale       dot: fmaf over d = 0..D-1 from +0
 *   m   = max_j s_j                 exact (NaN scores are skipped)
 *   e_j = hmx_expf(s_j - m)
 *   sum = lane_sum(e)               the 16-lane tree of §R
 *   o_d = (sum_j e_j v_jd) / sum    fmaf over j = 0..n-1 from +0, one division
 * over the visible keys j < n (n = q_offset + i + 1 when causal, else Skv). */
#include "ref.h"
#include "canon.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

hmx_status hmx_ref_attention(const hmx_attention_args *a) {
  float *e = hmx_alloc_array((size_t)a->skv, sizeof *e);
  if (!e) return HMX_ERR_NO_MEMORY;
  int64_t group = a->hq / a->hkv;
  for (int64_t b = 0; b < a->b; b++)
    for (int64_t h = 0; h < a->hq; h++)
      for (int64_t i = 0; i < a->sq; i++) {
        int64_t kvh = h / group;
        const float *q = a->q + ((b * a->sq + i) * a->hq + h) * a->d;
        float *o = a->o + ((b * a->sq + i) * a->hq + h) * a->d;
        int64_t n = a->causal ? a->q_offset + i + 1 : a->skv;
        float m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
          const float *k = a->k + ((b * a->skv + j) * a->hkv + kvh) * a->d;
          float dot = 0.0f;
          for (int64_t d = 0; d < a->d; d++) dot = fmaf(q[d], k[d], dot);
          e[j] = dot * a->scale;
          if (e[j] > m) m = e[j];
        }
        for (int64_t j = 0; j < n; j++) e[j] = hmx_expf(e[j] - m);
        float sum = hmx_lane_sum(e, n);
        for (int64_t d = 0; d < a->d; d++) {
          float acc = 0.0f;
          for (int64_t j = 0; j < n; j++) {
            const float *v = a->v + ((b * a->skv + j) * a->hkv + kvh) * a->d;
            acc = fmaf(e[j], v[d], acc);
          }
          o[d] = acc / sum;
        }
      }
  free(e);
  return HMX_OK;
}
