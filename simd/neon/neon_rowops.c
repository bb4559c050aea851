/* neon rmsnorm, layernorm (docs/NUMERICS.md §rmsnorm, §layernorm, §R) and rope
 * (§rope). Rows (tokens x heads for rope) are independent: threads split them.
 * Row sums use the 16-lane tree on four registers (neon_math.h); sqrt and
 * division are the scalar IEEE operations, once per row. */
#include "neon_rowops.h"
#include "neon_math.h"
#include "parallel.h"

#include <math.h>

hmx_status hmx_neon_rmsnorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) {
    const float *x = a->x + r * a->n;
    float *y = a->y + r * a->n;
    const int64_t n = a->n;
    float ms = hmx_neon_lane_sumsq(x, n, 0, 0.0f) / (float)n;
    float inv = 1.0f / sqrtf(ms + a->eps);
    const float32x4_t vi = vdupq_n_f32(inv);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) /* (x * inv) * w: two roundings, no fma */
      vst1q_f32(y + i, vmulq_f32(vmulq_f32(vld1q_f32(x + i), vi), vld1q_f32(a->weight + i)));
    for (; i < n; i++) y[i] = (x[i] * inv) * a->weight[i];
  }
  return HMX_OK;
}

hmx_status hmx_neon_layernorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) {
    const float *x = a->x + r * a->n;
    float *y = a->y + r * a->n;
    const int64_t n = a->n;
    float mean = hmx_neon_lane_sum(x, n) / (float)n;
    float var = hmx_neon_lane_sumsq(x, n, 1, mean) / (float)n;
    float inv = 1.0f / sqrtf(var + a->eps);
    const float32x4_t vm = vdupq_n_f32(mean), vi = vdupq_n_f32(inv);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      float32x4_t z = vmulq_f32(vsubq_f32(vld1q_f32(x + i), vm), vi);
      float32x4_t w = vld1q_f32(a->weight + i);
      vst1q_f32(y + i, a->bias ? vfmaq_f32(vld1q_f32(a->bias + i), z, w) : vmulq_f32(z, w));
    }
    for (; i < n; i++) {
      float z = (x[i] - mean) * inv;
      y[i] = a->bias ? fmaf(z, a->weight[i], a->bias[i]) : z * a->weight[i];
    }
  }
  return HMX_OK;
}

/* y0 = fma(x0, c, -(x1 * s)), y1 = fma(x0, s, x1 * c). */
static inline void rot4(float32x4_t x0, float32x4_t x1, float32x4_t c, float32x4_t s,
                        float32x4_t *y0, float32x4_t *y1) {
  *y0 = vfmaq_f32(vnegq_f32(vmulq_f32(x1, s)), x0, c);
  *y1 = vfmaq_f32(vmulq_f32(x1, c), x0, s);
}

hmx_status hmx_neon_rope(const hmx_rope_args *a) {
  const int64_t half = a->rot_dim / 2, rows = a->t * a->h;
  int nt = hmx_thread_count(a->threads, rows);
  HMX_OMP_FOR(nt)
  for (int64_t row = 0; row < rows; row++) {
    const int64_t t = row / a->h;
    const float *x = a->x + row * a->d;
    float *y = a->y + row * a->d;
    const float *ct = a->cos_tab + t * half, *st = a->sin_tab + t * half;
    int64_t i = 0;
    if (a->style == HMX_ROPE_HALF) {
      for (; i + 4 <= half; i += 4) {
        float32x4_t y0, y1;
        rot4(vld1q_f32(x + i), vld1q_f32(x + i + half), vld1q_f32(ct + i), vld1q_f32(st + i),
             &y0, &y1);
        vst1q_f32(y + i, y0);
        vst1q_f32(y + i + half, y1);
      }
    } else {
      for (; i + 4 <= half; i += 4) { /* ld2/st2 de-interleave the pairs (2i, 2i+1) */
        float32x4x2_t v = vld2q_f32(x + 2 * i), o;
        rot4(v.val[0], v.val[1], vld1q_f32(ct + i), vld1q_f32(st + i), &o.val[0], &o.val[1]);
        vst2q_f32(y + 2 * i, o);
      }
    }
    for (; i < half; i++) {
      int64_t i0 = a->style == HMX_ROPE_HALF ? i : 2 * i;
      int64_t i1 = a->style == HMX_ROPE_HALF ? i + half : 2 * i + 1;
      float c = ct[i], s = st[i], x0 = x[i0], x1 = x[i1];
      float y0 = fmaf(x0, c, -(x1 * s));
      float y1 = fmaf(x0, s, x1 * c);
      y[i0] = y0;
      y[i1] = y1;
    }
    if (y != x)
      for (int64_t i2 = a->rot_dim; i2 < a->d; i2++) y[i2] = x[i2];
  }
  return HMX_OK;
}
