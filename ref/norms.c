/* Reference RMSNorm and LayerNorm (docs/NUMERICS.md §rmsnorm, §layernorm).
 * Row sums use the fixed 16-lane tree of §R; sqrt and division are IEEE. */
#include "ref.h"
#include "canon.h"

#include <math.h>

hmx_status hmx_ref_rmsnorm(const hmx_norm_args *a) {
  for (int64_t r = 0; r < a->rows; r++) {
    const float *x = a->x + r * a->n;
    float *y = a->y + r * a->n;
    float mean_sq = hmx_lane_sumsq(x, a->n) / (float)a->n;
    float inv = 1.0f / sqrtf(mean_sq + a->eps);
    for (int64_t i = 0; i < a->n; i++) y[i] = (x[i] * inv) * a->weight[i];
  }
  return HMX_OK;
}

hmx_status hmx_ref_layernorm(const hmx_norm_args *a) {
  for (int64_t r = 0; r < a->rows; r++) {
    const float *x = a->x + r * a->n;
    float *y = a->y + r * a->n;
    float mean = hmx_lane_sum(x, a->n) / (float)a->n;
    float var = hmx_lane_sumsq_centered(x, a->n, mean) / (float)a->n;
    float inv = 1.0f / sqrtf(var + a->eps);
    for (int64_t i = 0; i < a->n; i++) {
      float z = (x[i] - mean) * inv;
      y[i] = a->bias ? fmaf(z, a->weight[i], a->bias[i]) : z * a->weight[i];
    }
  }
  return HMX_OK;
}
