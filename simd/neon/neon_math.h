/* Shared NEON pieces: the canonical exp / SiLU (docs/NUMERICS.md §E) mirrored
 * op for op on float32x4_t, and the 16-lane reduction of §R on four float32x4_t
 * registers (lanes 0-3, 4-7, 8-11, 12-15).
 *
 * Rules: vfmaq_f32 exactly where the contract has an fma (vfmaq_f32(c, a, b)
 * = fma(a, b, c), one rounding); vmulq/vaddq/vsubq everywhere else (never
 * vmlaq_f32); vdivq_f32 / vsqrtq_f32 / scalar sqrtf (IEEE), never the
 * vrecpe/vrsqrte estimates. AArch64 Linux runs with FPCR.FZ = 0, so subnormals
 * are kept (the canonical exp relies on that). */
#ifndef HMX_NEON_MATH_H
#define HMX_NEON_MATH_H

#include <arm_neon.h>
#include <math.h>
#include <stdint.h>

#if !defined(__aarch64__)
#error "the neon backend is AArch64 only (ARMv7 NEON flushes subnormals)"
#endif

/* ---------------------------------------------------------------- exp (§E) */
static inline float32x4_t hmx_neon_expf(float32x4_t x) {
  const float32x4_t shift = vdupq_n_f32(0x1.8p+23f);
  const float32x4_t one = vdupq_n_f32(1.0f);
  /*  1 */ const float32x4_t z = vfmaq_f32(shift, x, vdupq_n_f32(0x1.715476p+0f));
  /*  2 */ const float32x4_t n = vsubq_f32(z, shift);
  /*  3 */ const float32x4_t r1 = vfmaq_f32(x, n, vdupq_n_f32(-0x1.62e43p-1f));
  /*  4 */ const float32x4_t rl = vmulq_f32(n, vdupq_n_f32(0x1.05c61p-29f));
  /*  5 */ const float32x4_t r = vaddq_f32(r1, rl);
  /*  6 */ float32x4_t q = vfmaq_f32(vdupq_n_f32(0x1.123dep-7f), vdupq_n_f32(0x1.6ac74ep-10f), r);
  /*  7 */ q = vfmaq_f32(vdupq_n_f32(0x1.555858p-5f), q, r);
  /*  8 */ q = vfmaq_f32(vdupq_n_f32(0x1.55548cp-3f), q, r);
  /*  9 */ q = vfmaq_f32(vdupq_n_f32(0x1.fffffcp-2f), q, r);
  /* 10 */ const float32x4_t m = vmulq_f32(vaddq_f32(r1, r1), rl);
  /* 11 */ const float32x4_t r2 = vfmaq_f32(m, r1, r1);
  /* 12 */ const float32x4_t c = vfmaq_f32(rl, r2, q);
  /* 13 */ const float32x4_t w = vaddq_f32(one, r1);
  /* 14 */ const float32x4_t wm1 = vsubq_f32(w, one);
  /* 15 */ const float32x4_t e1 = vsubq_f32(r1, wm1);
  /* 16 */ const float32x4_t cc = vaddq_f32(e1, c);
  /* 17 */ const float32x4_t p = vaddq_f32(w, cc);
  /* 18 */ const float32x4_t t = vaddq_f32(wm1, cc);
  /* 19 */ const uint32x4_t kb = vsubq_u32(vreinterpretq_u32_f32(z), vdupq_n_u32(0x4B3FFF00u));
  /* 20 */ const uint32x4_t k1 = vshrq_n_u32(kb, 1);
  /* 21 */ const uint32x4_t k2 = vsubq_u32(kb, k1);
  /* 22 */ const float32x4_t a =
      vreinterpretq_f32_u32(vshlq_n_u32(vsubq_u32(k1, vdupq_n_u32(1u)), 23));
  /* 23 */ const float32x4_t b =
      vreinterpretq_f32_u32(vshlq_n_u32(vsubq_u32(k2, vdupq_n_u32(1u)), 23));
  /* 24 */ const float32x4_t yn = vmulq_f32(vmulq_f32(p, a), b);
  /* 25 */ const float32x4_t s = vmulq_f32(a, b);
  /* 26 */ const float32x4_t ys = vfmaq_f32(s, s, t);
  /* 27 */ float32x4_t y = vbslq_f32(vcltq_f32(yn, vdupq_n_f32(0x1p-126f)), ys, yn);
  /* 28 */ y = vbslq_f32(vcltq_f32(n, vdupq_n_f32(-149.0f)), vdupq_n_f32(0x1p-149f), y);
  /* 29 */ y = vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0x1.62e42ep+6f)), vdupq_n_f32(INFINITY), y);
  /* 30 */ y = vbslq_f32(vcltq_f32(x, vdupq_n_f32(-0x1.9fe368p+6f)), vdupq_n_f32(0.0f), y);
  /* 31 */ y = vbslq_f32(vceqq_f32(x, x), y, vaddq_f32(x, x));
  return y;
}

/* silu(x) = x / (1 + exp(-x)): negate, exp, one add, one IEEE division. */
static inline float32x4_t hmx_neon_siluf(float32x4_t x) {
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), hmx_neon_expf(vnegq_f32(x))));
}

/* ---------------------------------------------------------------- §R lanes */
/* The 16 lanes l[0..15] as four registers: l.v[0] = lanes 0-3, ..., l.v[3] =
 * lanes 12-15. */
typedef struct hmx_neon_lanes { float32x4_t v[4]; } hmx_neon_lanes;

static inline hmx_neon_lanes hmx_neon_lanes_zero(void) {
  hmx_neon_lanes l;
  for (int k = 0; k < 4; k++) l.v[k] = vdupq_n_f32(0.0f);
  return l;
}

/* The fixed tree: l[j] += l[j+8] (j < 8), += l[j+4] (j < 4), += l[j+2],
 * l[0] + l[1]. */
static inline float hmx_neon_lanes_tree(hmx_neon_lanes l) {
  float32x4_t a = vaddq_f32(l.v[0], l.v[2]); /* lanes 0-3 += 8-11 */
  float32x4_t b = vaddq_f32(l.v[1], l.v[3]); /* lanes 4-7 += 12-15 */
  a = vaddq_f32(a, b);                       /* lanes 0-3 += 4-7 */
  float32x2_t h = vadd_f32(vget_low_f32(a), vget_high_f32(a)); /* l0 += l2, l1 += l3 */
  return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
}

/* Tail: element i (i < 16) of the last partial group updates lane i only. */
static inline hmx_neon_lanes hmx_neon_lanes_from(const float s[16]) {
  hmx_neon_lanes l;
  for (int k = 0; k < 4; k++) l.v[k] = vld1q_f32(s + 4 * k);
  return l;
}
static inline void hmx_neon_lanes_store(hmx_neon_lanes l, float s[16]) {
  for (int k = 0; k < 4; k++) vst1q_f32(s + 4 * k, l.v[k]);
}

/* Lane sum of x[0..n-1]: l[i mod 16] += x[i]. */
static inline float hmx_neon_lane_sum(const float *x, int64_t n) {
  hmx_neon_lanes l = hmx_neon_lanes_zero();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; k++) l.v[k] = vaddq_f32(l.v[k], vld1q_f32(x + i + 4 * k));
  float s[16];
  hmx_neon_lanes_store(l, s);
  for (int j = 0; i + j < n; j++) s[j] = s[j] + x[i + j];
  return hmx_neon_lanes_tree(hmx_neon_lanes_from(s));
}

/* Sum of (x[i] - c)^2: d = x[i] - c, l[i mod 16] = fma(d, d, l). With
 * centered == 0: fma(x[i], x[i], l). */
static inline float hmx_neon_lane_sumsq(const float *x, int64_t n, int centered, float c) {
  hmx_neon_lanes l = hmx_neon_lanes_zero();
  const float32x4_t vc = vdupq_n_f32(c);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; k++) {
      float32x4_t d = vld1q_f32(x + i + 4 * k);
      if (centered) d = vsubq_f32(d, vc);
      l.v[k] = vfmaq_f32(l.v[k], d, d);
    }
  float s[16];
  hmx_neon_lanes_store(l, s);
  for (int j = 0; i + j < n; j++) {
    float d = centered ? x[i + j] - c : x[i + j];
    s[j] = fmaf(d, d, s[j]);
  }
  return hmx_neon_lanes_tree(hmx_neon_lanes_from(s));
}

/* Split `work` items into `chunks` contiguous ranges: [lo, hi) of chunk c. */
static inline void hmx_neon_chunk(int64_t work, int chunks, int c, int64_t *lo, int64_t *hi) {
  *lo = work * c / chunks;
  *hi = work * (c + 1) / chunks;
}

#endif
