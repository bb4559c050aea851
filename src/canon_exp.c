/* hmx_expf, hmx_sigmoidf, hmx_siluf: the canonical exp of the exact tier.
 *
 * hmx_expf is a fixed sequence of IEEE binary32 operations (fmaf, *, +, -,
 * comparisons/selects and integer operations on the bits of floats), with no
 * table and no libm call, so that every backend (AVX2, AVX-512, NEON, CUDA)
 * can mirror it op-for-op and get the same bits. docs/NUMERICS.md §E lists
 * the sequence step by step; keep the two in sync. Measured error (exhaustive,
 * tools/exp_check.c): see docs/NUMERICS.md; at most 1 ulp by design.
 *
 * Compile with -ffp-contract=off: every fused multiply-add below is an
 * explicit fmaf(), and no other operation may be fused.
 */
#include "hadamix.h"

#include <math.h> /* fmaf only: correctly rounded on every IEEE platform */
#include <stdint.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* Reduction constants (binary32). */
#define HMX_EXP_LOG2E 0x1.715476p+0f    /* log2(e) rounded to float */
#define HMX_EXP_SHIFT 0x1.8p+23f        /* 1.5 * 2^23: round-to-integer shifter */
#define HMX_EXP_LN2_HI 0x1.62e43p-1f    /* ln 2 rounded to float */
#define HMX_EXP_LN2_LO 0x1.05c61p-29f   /* -(ln 2 - LN2_HI) rounded to float (> 0) */
/* Polynomial: e^r ~= 1 + r + r^2 (C2 + C3 r + C4 r^2 + C5 r^3 + C6 r^4) on
 * |r| <= 0.3466, derived by tools/fit_exp_poly.py (weighted minimax of the
 * relative error, coefficients rounded to float one at a time). */
#define HMX_EXP_C2 0x1.fffffcp-2f  /* 0.49999994 */
#define HMX_EXP_C3 0x1.55548cp-3f  /* 0.166665167 */
#define HMX_EXP_C4 0x1.555858p-5f  /* 0.0416681021 */
#define HMX_EXP_C5 0x1.123dep-7f   /* 0.00836919248 */
#define HMX_EXP_C6 0x1.6ac74ep-10f /* 0.00138389028 */
/* Domain limits. */
#define HMX_EXP_XMAX 0x1.62e42ep+6f   /* largest x with exp(x) < FLT_MAX + ulp/2 */
#define HMX_EXP_XMIN -0x1.9fe368p+6f  /* smallest x with exp(x) > 2^-150 */

static inline uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

float hmx_expf(float x) {
  /* 1. n = round-to-nearest-even(x * log2e), by the shifter (one rounding). */
  const float z = fmaf(x, HMX_EXP_LOG2E, HMX_EXP_SHIFT);
  const float n = z - HMX_EXP_SHIFT; /* exact, integer valued */

  /* 2. Cody-Waite: r1 = x - n*LN2_HI is exact; rl = -n*(ln2 - LN2_HI) is
   *    the small correction; r = r1 + rl is the reduced argument used for
   *    the polynomial in Q only. */
  const float r1 = fmaf(n, -HMX_EXP_LN2_HI, x);
  const float rl = n * HMX_EXP_LN2_LO;
  const float r = r1 + rl;

  /* 3. Q(r) by Horner, highest degree first. */
  float q = fmaf(HMX_EXP_C6, r, HMX_EXP_C5);
  q = fmaf(q, r, HMX_EXP_C4);
  q = fmaf(q, r, HMX_EXP_C3);
  q = fmaf(q, r, HMX_EXP_C2);

  /* 4. (r1 + rl)^2 ~= r1^2 + 2 r1 rl, and c = r^2 Q + rl (the part of
   *    e^r - 1 other than r1). */
  const float m = (r1 + r1) * rl;
  const float r2 = fmaf(r1, r1, m);
  const float c = fmaf(r2, q, rl);

  /* 5. 1 + r1 as an exact sum w + e1 (Fast2Sum, |r1| < 1), then
   *    p = w + (e1 + c) ~= e^r rounded once, in [2^-0.5, 2^0.5]. */
  const float w = 1.0f + r1;
  const float wm1 = w - 1.0f;
  const float e1 = r1 - wm1;
  const float cc = e1 + c;
  const float p = w + cc;
  const float t = wm1 + cc; /* ~= e^r - 1, for the subnormal path */

  /* 6. Scale by 2^n. With k = n as an integer, a = 2^floor(k/2) and
   *    b = 2^(k - floor(k/2)) are normal for -150 <= k <= 128; the bits are
   *    built with unsigned arithmetic on the bits of z (z = 1.5*2^23 + k). */
  const uint32_t kb = f2u(z) - (0x4B400000u - 256u); /* k + 256 */
  const uint32_t k1 = kb >> 1;                        /* floor(k/2) + 128 */
  const uint32_t k2 = kb - k1;                        /* k - floor(k/2) + 128 */
  const float a = u2f((k1 - 1u) << 23);
  const float b = u2f((k2 - 1u) << 23);
  /* Normal results: p * 2^n, exact (and overflow-correct for k = 128). */
  const float y_norm = (p * a) * b;
  /* Subnormal results: there p * 2^n would round a second time. Instead
   * s = 2^k exactly (a subnormal for k < -126; 0 for k = -150), and
   * s + s*t is rounded once, directly to the subnormal grid. */
  const float s = a * b;
  const float y_sub = fmaf(s, t, s);
  float y = (y_norm < 0x1p-126f) ? y_sub : y_norm;
  /* k = -150 (and x >= XMIN): 2^-150 < exp(x) < 2^-149.5, rounds to 2^-149. */
  y = (n < -149.0f) ? 0x1p-149f : y;

  /* 7. Special cases, applied last (they override whatever came before). */
  y = (x > HMX_EXP_XMAX) ? INFINITY : y; /* overflow and +inf */
  y = (x < HMX_EXP_XMIN) ? 0.0f : y;     /* underflow to +0 and -inf */
  y = (x != x) ? x + x : y;              /* NaN in, quiet NaN out */
  return y;
}

float hmx_sigmoidf(float x) { return 1.0f / (1.0f + hmx_expf(-x)); }

float hmx_siluf(float x) { return x / (1.0f + hmx_expf(-x)); }
