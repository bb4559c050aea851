/* The fixed reduction tree of docs/NUMERICS.md §R and the FWHT normalizer. */
#include "canon.h"

#include <math.h>

float hmx_lane_tree(float l[HMX_REDUCE_LANES]) {
  /* 16 -> 8 -> 4 -> 2 -> 1: lane j absorbs lane j + half. One AVX-512
   * register, two AVX2, four NEON registers or 16 CUDA lanes map onto it. */
  for (int half = HMX_REDUCE_LANES / 2; half >= 1; half /= 2)
    for (int j = 0; j < half; j++) l[j] = l[j] + l[j + half];
  return l[0];
}

float hmx_lane_sum(const float *x, int64_t n) {
  float l[HMX_REDUCE_LANES] = {0};
  for (int64_t i = 0; i < n; i++) l[i % HMX_REDUCE_LANES] = l[i % HMX_REDUCE_LANES] + x[i];
  return hmx_lane_tree(l);
}

float hmx_lane_sumsq(const float *x, int64_t n) {
  float l[HMX_REDUCE_LANES] = {0};
  for (int64_t i = 0; i < n; i++) {
    int j = (int)(i % HMX_REDUCE_LANES);
    l[j] = fmaf(x[i], x[i], l[j]);
  }
  return hmx_lane_tree(l);
}

float hmx_lane_sumsq_centered(const float *x, int64_t n, float c) {
  float l[HMX_REDUCE_LANES] = {0};
  for (int64_t i = 0; i < n; i++) {
    int j = (int)(i % HMX_REDUCE_LANES);
    float d = x[i] - c;
    l[j] = fmaf(d, d, l[j]);
  }
  return hmx_lane_tree(l);
}

float hmx_inv_sqrt_n(int64_t n) {
  /* IEEE double sqrt and division are correctly rounded everywhere, so this
   * is the same float on every platform (exact for n a power of 4). */
  return (float)(1.0 / sqrt((double)n));
}
