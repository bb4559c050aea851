/* The RoPE angle table and the double-precision pieces it is built from:
 * hmx_canon_exp_f64, hmx_canon_log_f64, hmx_canon_sincos_f64.
 *
 * Why not libm: glibc, macOS, MSVC and CUDA give different last bits for
 * exp/log/pow/sin/cos, and a RoPE table computed with them would make the
 * rope op (and every model output) differ between platforms. These functions
 * use only IEEE double +, -, *, / and explicit fma(), plus integer operations
 * on the bits of doubles, in a fixed order; the result is therefore the same
 * on every IEEE-754 platform (compiled with -ffp-contract=off: no implicit
 * contraction). The accuracy is ~1-2 ulp of double, far below the final
 * rounding to float. docs/NUMERICS.md §E (RoPE angles) lists the exact sequence.
 */
#include "canon.h"
#include "canon_sincos.h"
#include "internal.h"

#include <math.h> /* fma only (correctly rounded everywhere) */
#include <stdint.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static inline uint64_t d2u(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static inline double u2d(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* ------------------------------------------------------------------ shared constants */

#define SHIFT52 HMX_SC_SHIFT52
/* ln 2 = LN2_HI + LN2_LO; LN2_HI has 30 significant bits, so k * LN2_HI is
 * exact for |k| < 2^23. */
#define LN2_HI 0x1.62e42ffp-1
#define LN2_LO (-0x1.718432a1b0e26p-35)

/* ------------------------------------------------------------------ exp */

#define LOG2E 0x1.71547652b82fep+0
/* Taylor coefficients 1/j!, j = 2..13 (|r| <= 0.347: truncation < 2^-60). */
static const double exp_c[12] = {
    0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,
    0x1.1111111111111p-7,  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
    0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
    0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

double hmx_canon_exp_f64(double x) {
  double z, k, r, q, t, p, a, b;
  uint64_t kb, k1, k2;
  int j;
  if (x != x) return x + x;
  if (x > 0x1.62e42fefa39efp+9) return HUGE_VAL; /* > ln(DBL_MAX) */
  if (x < -0x1.74910d52d3052p+9) return 0.0;     /* < ln(2^-1075): rounds to +0 */
  z = fma(x, LOG2E, SHIFT52);
  k = z - SHIFT52;              /* round-to-nearest-even(x * log2e) */
  r = fma(-k, LN2_HI, x);       /* exact */
  r = fma(-k, LN2_LO, r);       /* r = x - k ln2, |r| <= 0.3466 */
  q = exp_c[11];
  for (j = 10; j >= 0; j--) q = fma(q, r, exp_c[j]); /* Horner, 1/13! first */
  t = fma(r * r, q, r);         /* e^r - 1 */
  p = 1.0 + t;
  /* 2^k as 2^floor(k/2) * 2^(k - floor(k/2)) (both normal for |k| <= 1075),
   * built from the low bits of z = 1.5 * 2^52 + k. */
  kb = d2u(z) - (0x4338000000000000ull - 2048u); /* k + 2048 */
  k1 = kb >> 1;                                  /* floor(k/2) + 1024 */
  k2 = kb - k1;
  a = u2d((k1 - 1u) << 52);
  b = u2d((k2 - 1u) << 52);
  return (p * a) * b;
}

/* ------------------------------------------------------------------ log */

/* 2 / (2j + 1), j = 1..11: log(1+f) = 2 atanh(s) = 2s + s R(s^2). */
static const double log_c[11] = {
    0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3,
    0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4,
    0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4,
};

double hmx_canon_log_f64(double x) {
  uint64_t hx;
  int64_t e;
  double m, f, s, z, R, hfsq, dk;
  int j;
  if (x != x) return x + x;
  if (x < 0.0) return (x - x) / (x - x); /* NaN */
  if (x == 0.0) return -HUGE_VAL;
  if (x == HUGE_VAL) return x;
  hx = d2u(x);
  e = 0;
  if (hx < 0x0010000000000000ull) { /* subnormal: scale by 2^54 (exact) */
    x *= 0x1p54;
    hx = d2u(x);
    e = -54;
  }
  e += (int64_t)(hx >> 52) - 1023;
  hx &= 0x000fffffffffffffull;
  /* m = 1.mantissa in [1, 2); if m > sqrt(2) use m/2 in [sqrt(2)/2, 1). */
  if (hx > 0x6a09e667f3bcdull) {
    hx |= 0x3fe0000000000000ull;
    e += 1;
  } else {
    hx |= 0x3ff0000000000000ull;
  }
  m = u2d(hx);
  f = m - 1.0;            /* exact, |f| <= 0.4143 */
  s = f / (2.0 + f);      /* |s| <= 0.1716 */
  z = s * s;
  R = log_c[10];
  for (j = 9; j >= 0; j--) R = fma(R, z, log_c[j]); /* Horner, 2/23 first */
  R = z * R;
  hfsq = 0.5 * f * f;
  dk = (double)e;
  /* log x = e ln2 + f - hfsq + s (hfsq + R), in fdlibm's order. */
  return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
}

/* ------------------------------------------------------------------ sin, cos */

/* The constants (canon_sincos.h, shared with the SIMD mirrors of the table) */
const double hmx_canon_sin_c[9] = {
    -0x1.5555555555555p-3, 0x1.1111111111111p-7,  -0x1.a01a01a01a01ap-13,
    0x1.71de3a556c734p-19, -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
    -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49,  -0x1.2f49b46814157p-57,
};
const double hmx_canon_cos_c[8] = {
    0x1.5555555555555p-5,  -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16,
    -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29,  -0x1.93974a8c07c9dp-37,
    0x1.ae7f3e733b81fp-45,  -0x1.6827863b97d97p-53,
};

void hmx_canon_sincos_f64(double x, double *s_out, double *c_out) {
  double z, k, r1, p2, rh, bb, e2, tl, h, l, r2, ez, hz, ps, pc, sr, cr, w, ew, ci, sv, cv;
  uint64_t q;
  int j;
  if (!(x >= -HMX_SC_MAX_ARG && x <= HMX_SC_MAX_ARG)) { /* NaN, inf, or outside the domain */
    double nan = (x - x) / (x - x);
    if (x != x) nan = x + x;
    if (s_out) *s_out = nan;
    if (c_out) *c_out = nan;
    return;
  }
  /* Reduction: x = k pi/2 + (h + l), |h| <= pi/4 (+tiny), |l| <= ulp(h)/2. */
  z = fma(x, HMX_SC_TWO_OVER_PI, SHIFT52);
  k = z - SHIFT52;               /* round-to-nearest-even(x * 2/pi), |k| < 2^25 */
  q = d2u(z) & 3u;               /* k mod 4 (two's complement) */
  r1 = fma(-k, HMX_SC_PIO2_1, x);       /* exact */
  p2 = k * HMX_SC_PIO2_2;               /* exact */
  rh = r1 - p2;                  /* TwoSum: rh + e2 = r1 - p2 exactly */
  bb = rh - r1;
  e2 = (r1 - (rh - bb)) + (-p2 - bb);
  tl = fma(-k, HMX_SC_PIO2_3, e2);      /* the small tail, |tl| < 2^-34 */
  h = rh + tl;                   /* Fast2Sum: h + l = rh + tl */
  l = tl - (h - rh);
  /* Kernels on h + l; r2 + ez = h^2 exactly, hz = r2/2. */
  r2 = h * h;
  ez = fma(h, h, -r2);
  hz = 0.5 * r2;
  /* sin(h + l) ~= h + h r2 S(r2) + l (1 - r2/2) */
  ps = hmx_canon_sin_c[8];
  for (j = 7; j >= 0; j--) ps = fma(ps, r2, hmx_canon_sin_c[j]);
  sr = h + fma(h * r2, ps, fma(-hz, l, l));
  /* cos(h + l) ~= w + ((1 - w) - hz - ez/2 - h l + r2^2 C(r2)), w = 1 - hz */
  pc = hmx_canon_cos_c[7];
  for (j = 6; j >= 0; j--) pc = fma(pc, r2, hmx_canon_cos_c[j]);
  w = 1.0 - hz;
  ew = (1.0 - w) - hz;           /* exact */
  ci = fma(-0.5, ez, ew);
  ci = fma(-h, l, ci);
  ci = fma(r2 * r2, pc, ci);
  cr = w + ci;
  switch (q) {
    case 0: sv = sr; cv = cr; break;
    case 1: sv = cr; cv = -sr; break;
    case 2: sv = -sr; cv = -cr; break;
    default: sv = -cr; cv = sr; break;
  }
  if (s_out) *s_out = sv;
  if (c_out) *c_out = cv;
}

/* ------------------------------------------------------------------ the table */

hmx_status hmx_rope_table_check(const int32_t *pos, int64_t t, int rot_dim, float base,
                                const float *cos_tab, const float *sin_tab) {
  if (!pos || !cos_tab || !sin_tab)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope_table: NULL pointer");
  if (t < 0) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope_table: negative length %lld",
                             (long long)t);
  if (rot_dim < 2 || rot_dim % 2 != 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope_table: rot_dim %d must be even and >= 2",
                    rot_dim);
  if (!(base > 1.0f) || !(base <= 0x1.fffffep127f))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope_table: base %g must be finite and > 1",
                    (double)base);
  if (t > INT64_MAX / (rot_dim / 2))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope_table: table size overflows");
  for (int64_t j = 0; j < t; j++)
    if (pos[j] < 0 || pos[j] >= (1 << 24))
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                      "rope_table: position %ld at index %lld is outside [0, 2^24)",
                      (long)pos[j], (long long)j);
  return HMX_OK;
}

double hmx_rope_inv_freq(int i, int rot_dim, double log_base) {
  /* inv_freq_i = base^(-2i/rot_dim) = exp(-(2i/rot_dim) * ln(base)) */
  return hmx_canon_exp_f64(-(2.0 * (double)i / (double)rot_dim) * log_base);
}

hmx_status hmx_rope_table(const int32_t *pos, int64_t t, int rot_dim, float base,
                          float *cos_tab, float *sin_tab) {
  hmx_status s = hmx_rope_table_check(pos, t, rot_dim, base, cos_tab, sin_tab);
  if (s != HMX_OK) return s;
  const int64_t half = rot_dim / 2;
  const double lb = hmx_canon_log_f64((double)base);
  for (int64_t i = 0; i < half; i++) {
    const double inv_freq = hmx_rope_inv_freq((int)i, rot_dim, lb);
    for (int64_t j = 0; j < t; j++) {
      double sv, cv;
      hmx_canon_sincos_f64((double)pos[j] * inv_freq, &sv, &cv);
      cos_tab[j * half + i] = (float)cv;
      sin_tab[j * half + i] = (float)sv;
    }
  }
  return HMX_OK;
}
