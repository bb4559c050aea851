/* Unit tests of the canonical math: hmx_expf (sampled; tools/exp_check.c is
 * the exhaustive version), hmx_sigmoidf, hmx_siluf, and the libm-free double
 * functions behind the RoPE table (hmx_canon_exp_f64, hmx_canon_log_f64,
 * hmx_canon_sincos_f64, hmx_rope_table). libm serves as the reference here;
 * the library itself never calls it for these. */
#include "canon.h"
#include "check.h"
#include "hadamix.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Float ulp at a positive exact value. */
static double ulp_f(double v) {
  int e;
  v = fabs(v);
  if (v < 0x1p-126) return 0x1p-149;
  (void)frexp(v, &e);
  return ldexp(1.0, e - 24);
}

/* Double ulp at a value. */
static double ulp_d(double v) {
  int e;
  v = fabs(v);
  if (v < 0x1p-1022) return 0x1p-1074;
  (void)frexp(v, &e);
  return ldexp(1.0, e - 53);
}

/* Error of hmx_expf(x) in float ulps of exp(x) (glibc double exp as the
 * exact value: its own error is ~2^-29 float ulp). */
static double exp_err(float x, float y) {
  double e = exp((double)x);
  if (isnan(x)) return isnan(y) ? 0.0 : INFINITY;
  if (isinf(y) && y > 0) return e >= 0x1p128 - 0x1p103 ? 0.0 : INFINITY;
  if (isnan(y) || y < 0 || (y == 0.0f && signbit(y))) return INFINITY;
  if (e == 0.0) return y == 0.0f ? 0.0 : INFINITY;
  return fabs((double)y - e) / ulp_f(e);
}

static double max_exp_err = 0.0;
static float max_exp_at = 0.0f;
static long exp_checked = 0, exp_not_cr = 0;

static void check_exp_at(float x) {
  float y = hmx_expf(x);
  double err = exp_err(x, y);
  exp_checked++;
  if (!isnan(x) && f2u(y) != f2u((float)exp((double)x))) exp_not_cr++;
  if (err > max_exp_err) {
    max_exp_err = err;
    max_exp_at = x;
  }
  if (!(err <= 1.0)) CHECK(err <= 1.0, "hmx_expf(%a) = %a, error %.3f ulp", (double)x, (double)y, err);
}

/* All floats within `count` steps either side of x. */
static void sweep_around(float x, int count) {
  float lo = x, hi = x;
  int i;
  check_exp_at(x);
  for (i = 0; i < count; i++) {
    lo = nextafterf(lo, -INFINITY);
    hi = nextafterf(hi, INFINITY);
    check_exp_at(lo);
    check_exp_at(hi);
  }
}

static void test_expf(void) {
  uint64_t u;
  int j;
  /* every 2^9-th bit pattern (8.4M inputs), offset so both signs and many
   * mantissa patterns are covered */
  for (u = 0; u < (1ull << 32); u += 1u << 9) check_exp_at(u2f((uint32_t)(u + 0x5b)));
  /* boundaries: overflow, underflow to 0, the subnormal threshold 2^-126,
   * the k = -150 / k = 128 ends and the switch of n at (j + 1/2) ln 2 */
  sweep_around(0x1.62e42ep+6f, 2000);   /* largest x with a finite result */
  sweep_around(-0x1.9fe368p+6f, 2000);  /* smallest x with a nonzero result */
  sweep_around(-0x1.5d589ep+6f, 20000); /* exp(x) ~ 2^-126 */
  sweep_around(-0x1.9d1da0p+6f, 2000);  /* exp(x) ~ 2^-149 */
  sweep_around(-0x1.4p+6f, 2000);       /* deep subnormal */
  sweep_around(0.0f, 5000);             /* tiny |x| */
  sweep_around(1.0f, 2000);
  sweep_around(-1.0f, 2000);
  for (j = -150; j <= 128; j += 7) sweep_around((float)((j + 0.5) * 0.6931471805599453), 300);
  printf("hmx_expf: %ld inputs, max error %.4f ulp at %a, %ld not correctly rounded\n",
         exp_checked, max_exp_err, (double)max_exp_at, exp_not_cr);

  /* special values, exactly */
  CHECK(hmx_expf(0.0f) == 1.0f, "exp(+0)");
  CHECK(hmx_expf(-0.0f) == 1.0f, "exp(-0)");
  CHECK(hmx_expf(INFINITY) == INFINITY, "exp(+inf)");
  CHECK(f2u(hmx_expf(-INFINITY)) == 0u, "exp(-inf) must be +0");
  CHECK(isnan(hmx_expf(NAN)), "exp(NaN)");
  CHECK(isnan(hmx_expf(u2f(0x7f800001u))), "exp(sNaN)");
  CHECK(isnan(hmx_expf(u2f(0xffc00000u))), "exp(-NaN)");
  CHECK(hmx_expf(FLT_MAX) == INFINITY, "exp(FLT_MAX)");
  CHECK(f2u(hmx_expf(-FLT_MAX)) == 0u, "exp(-FLT_MAX)");
  CHECK(hmx_expf(0x1.62e42ep+6f) == 0x1.ffff08p+127f, "exp(largest finite)");
  CHECK(hmx_expf(0x1.62e430p+6f) == INFINITY, "exp(smallest overflowing)");
  CHECK(hmx_expf(-0x1.9fe368p+6f) == 0x1p-149f, "exp(smallest nonzero) = 2^-149");
  CHECK(f2u(hmx_expf(-0x1.9fe36ap+6f)) == 0u, "exp(largest zero) = +0");
  CHECK(hmx_expf(1.0f) == 0x1.5bf0a8p+1f, "exp(1)");
  CHECK(hmx_expf(0x1p-149f) == 1.0f && hmx_expf(-0x1p-149f) == 1.0f, "exp(+-2^-149)");
  CHECK(hmx_expf(-100.0f) > 0.0f && hmx_expf(-100.0f) < 0x1p-126f, "exp(-100) subnormal");
}

static void test_sigmoid_silu(void) {
  double max_s = 0, max_l = 0;
  int i;
  /* definitions, bit for bit */
  for (i = -2000; i <= 2000; i++) {
    float x = (float)i * 0.0625f;
    CHECK(f2u(hmx_sigmoidf(x)) == f2u(1.0f / (1.0f + hmx_expf(-x))), "sigmoid def at %g",
          (double)x);
    CHECK(f2u(hmx_siluf(x)) == f2u(x / (1.0f + hmx_expf(-x))), "silu def at %g", (double)x);
  }
  /* accuracy on a grid over [-88, 100]; below -88.72 exp(-x) overflows and
   * the definitions give sigmoid = +0, silu = -0 (the true values are below
   * 2^-127: subnormal) */
  for (i = -88 * 4096; i <= 400000; i++) {
    float x = (float)i * 0x1p-12f;
    double ds = 1.0 / (1.0 + exp(-(double)x));
    double dl = (double)x * ds;
    double es = fabs((double)hmx_sigmoidf(x) - ds) / ulp_f(ds);
    double el = dl == 0.0 ? fabs((double)hmx_siluf(x)) : fabs((double)hmx_siluf(x) - dl) / ulp_f(dl);
    if (es > max_s) max_s = es;
    if (el > max_l) max_l = el;
  }
  printf("sigmoid: max error %.3f ulp, silu: max error %.3f ulp on [-88, 100]\n", max_s, max_l);
  CHECK(max_s <= 3.0, "sigmoid error %.3f ulp", max_s);
  CHECK(max_l <= 3.0, "silu error %.3f ulp", max_l);
  /* special values */
  CHECK(hmx_sigmoidf(0.0f) == 0.5f, "sigmoid(0)");
  CHECK(hmx_sigmoidf(INFINITY) == 1.0f, "sigmoid(+inf)");
  CHECK(f2u(hmx_sigmoidf(-INFINITY)) == 0u, "sigmoid(-inf) = +0");
  CHECK(hmx_sigmoidf(100.0f) == 1.0f, "sigmoid(100)");
  CHECK(f2u(hmx_sigmoidf(-200.0f)) == 0u, "sigmoid(-200) = +0");
  CHECK(hmx_sigmoidf(-88.0f) > 0.0f, "sigmoid(-88) > 0");
  CHECK(f2u(hmx_sigmoidf(-89.0f)) == 0u, "sigmoid(-89) = +0 (exp(89) overflows)");
  CHECK(isnan(hmx_sigmoidf(NAN)), "sigmoid(NaN)");
  CHECK(f2u(hmx_siluf(0.0f)) == 0u, "silu(+0) = +0");
  CHECK(f2u(hmx_siluf(-0.0f)) == 0x80000000u, "silu(-0) = -0");
  CHECK(hmx_siluf(INFINITY) == INFINITY, "silu(+inf)");
  CHECK(isnan(hmx_siluf(-INFINITY)), "silu(-inf) = -inf/inf = NaN by definition");
  CHECK(f2u(hmx_siluf(-200.0f)) == 0x80000000u, "silu(-200) = -0");
  CHECK(hmx_siluf(100.0f) == 100.0f, "silu(100)");
  CHECK(isnan(hmx_siluf(NAN)), "silu(NaN)");
}

/* xorshift64: deterministic test inputs */
static uint64_t rs = 0x9e3779b97f4a7c15ull;
static double unif(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (double)(rs >> 11) * 0x1p-53;
}

static void test_canon_f64(void) {
  double me = 0, ml = 0, ms = 0, mc = 0, s, c;
  int i;
  /* libm is within ~0.5 ulp and ours within 1 ulp: allow 2 ulp apart */
  for (i = 0; i < 200000; i++) {
    double x = -100.0 * unif(), d;
    d = fabs(hmx_canon_exp_f64(x) - exp(x)) / ulp_d(exp(x));
    if (d > me) me = d;
    x = 1400.0 * unif() - 700.0;
    d = fabs(hmx_canon_exp_f64(x) - exp(x)) / ulp_d(exp(x));
    if (d > me) me = d;
    x = ldexp(1.0 + unif(), (int)(unif() * 2098.0) - 1074);
    d = fabs(hmx_canon_log_f64(x) - log(x)) / ulp_d(log(x));
    if (x != 1.0 && d > ml) ml = d;
    x = 1.0 + 1e7 * unif();
    d = fabs(hmx_canon_log_f64(x) - log(x)) / ulp_d(log(x));
    if (d > ml) ml = d;
    x = (i & 1 ? 0x1p25 : 16.0) * (2.0 * unif() - 1.0);
    hmx_canon_sincos_f64(x, &s, &c);
    d = fabs(s - sin(x)) / ulp_d(sin(x));
    if (d > ms) ms = d;
    d = fabs(c - cos(x)) / ulp_d(cos(x));
    if (d > mc) mc = d;
  }
  printf("canon f64 vs libm: exp %.3f, log %.3f, sin %.3f, cos %.3f ulp (double)\n", me, ml, ms,
         mc);
  CHECK(me <= 2.0, "canon exp_f64 differs from libm by %.3f ulp", me);
  CHECK(ml <= 2.0, "canon log_f64 differs from libm by %.3f ulp", ml);
  CHECK(ms <= 2.0, "canon sin differs from libm by %.3f ulp", ms);
  CHECK(mc <= 2.0, "canon cos differs from libm by %.3f ulp", mc);

  /* exact cases and specials */
  CHECK(hmx_canon_exp_f64(0.0) == 1.0 && hmx_canon_exp_f64(-0.0) == 1.0, "exp_f64(0) = 1");
  CHECK(hmx_canon_log_f64(1.0) == 0.0, "log_f64(1) = 0");
  CHECK(hmx_canon_log_f64(2.0) == log(2.0), "log_f64(2)");
  CHECK(hmx_canon_log_f64(10000.0) == log(10000.0), "log_f64(1e4)");
  CHECK(hmx_canon_exp_f64(1000.0) == INFINITY, "exp_f64 overflow");
  CHECK(hmx_canon_exp_f64(-1000.0) == 0.0, "exp_f64 underflow");
  CHECK(isnan(hmx_canon_exp_f64(NAN)), "exp_f64(NaN)");
  CHECK(isnan(hmx_canon_log_f64(-1.0)) && isnan(hmx_canon_log_f64(NAN)), "log_f64 domain");
  CHECK(hmx_canon_log_f64(0.0) == -INFINITY, "log_f64(0)");
  hmx_canon_sincos_f64(0.0, &s, &c);
  CHECK(s == 0.0 && c == 1.0, "sincos(0)");
  hmx_canon_sincos_f64(INFINITY, &s, &c);
  CHECK(isnan(s) && isnan(c), "sincos(inf)");
  hmx_canon_sincos_f64(0x1p26, &s, &c);
  CHECK(isnan(s) && isnan(c), "sincos outside |x| <= 2^25 gives NaN");
}

static void test_rope_table(void) {
  enum { T = 8, D = 128 };
  const int32_t pos[T] = {0, 1, 2, 7, 100, 4095, 65535, (1 << 24) - 1};
  const float bases[] = {10000.0f, 500000.0f, 1.5f, 1e6f};
  static float ct[T * D / 2], st[T * D / 2];
  size_t bi;
  int rot, i, t;
  for (bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
    for (rot = 2; rot <= D; rot *= 4) {
      int half = rot / 2, ulp_diffs = 0;
      double max_abs_big = 0.0;
      CHECK(hmx_rope_table(pos, T, rot, bases[bi], ct, st) == HMX_OK, "rope_table base %g rot %d",
            (double)bases[bi], rot);
      for (t = 0; t < T; t++)
        for (i = 0; i < half; i++) {
          double inv = pow((double)bases[bi], -(2.0 * i / rot));
          double a = (double)pos[t] * inv;
          float rc = (float)cos(a), rsn = (float)sin(a);
          float gc = ct[t * half + i], gs = st[t * half + i];
          if (pos[t] < 4096) {
            /* small positions: angle error ~1e-13, at most one float ulp apart */
            double dc = fabs((double)gc - (double)rc) / ulp_f(rc);
            double ds = fabs((double)gs - (double)rsn) / ulp_f(rsn);
            CHECK(dc <= 1.0 && ds <= 1.0, "rope t=%d i=%d base %g: cos %a vs %a, sin %a vs %a",
                  t, i, (double)bases[bi], (double)gc, (double)rc, (double)gs, (double)rsn);
            ulp_diffs += (gc != rc) + (gs != rsn);
          } else {
            /* pos up to 2^24: the double angle itself is only good to
             * ~pos * 2^-50, for us and for libm alike */
            double d1 = fabs((double)gc - (double)rc) - ulp_f(rc);
            double d2 = fabs((double)gs - (double)rsn) - ulp_f(rsn);
            if (d1 > max_abs_big) max_abs_big = d1;
            if (d2 > max_abs_big) max_abs_big = d2;
          }
          if (i == 0) CHECK(gc == rc && gs == rsn, "rope i=0 (inv_freq = 1) t=%d", t);
        }
      CHECK(max_abs_big <= 0x1p-24, "rope large positions: beyond 1 ulp by %g", max_abs_big);
      CHECK(ulp_diffs <= 2 * half, "rope base %g rot %d: %d one-ulp differences from libm",
            (double)bases[bi], rot, ulp_diffs);
    }
  }
  /* position 0: cos = 1, sin = 0 for every frequency */
  CHECK(hmx_rope_table(pos, 1, D, 10000.0f, ct, st) == HMX_OK, "rope t=1");
  for (i = 0; i < D / 2; i++) CHECK(ct[i] == 1.0f && st[i] == 0.0f, "pos 0, i=%d", i);
  /* T = 0 is valid and writes nothing */
  CHECK(hmx_rope_table(pos, 0, D, 10000.0f, ct, st) == HMX_OK, "rope t=0");
}

static void test_rope_table_errors(void) {
  int32_t pos[2] = {0, 5};
  float ct[8], st[8];
  const hmx_status E = HMX_ERR_INVALID_ARGUMENT;
#define BAD(call, what)                                                  \
  do {                                                                   \
    hmx_status s_ = (call);                                              \
    CHECK(s_ == E, "%s: got %s", what, hmx_status_string(s_));           \
    CHECK(hmx_last_error()[0] != '\0', "%s: no error message", what);    \
  } while (0)
  BAD(hmx_rope_table(NULL, 2, 8, 10000.0f, ct, st), "NULL pos");
  BAD(hmx_rope_table(pos, 2, 8, 10000.0f, NULL, st), "NULL cos");
  BAD(hmx_rope_table(pos, 2, 8, 10000.0f, ct, NULL), "NULL sin");
  BAD(hmx_rope_table(pos, -1, 8, 10000.0f, ct, st), "negative t");
  BAD(hmx_rope_table(pos, 2, 7, 10000.0f, ct, st), "odd rot_dim");
  BAD(hmx_rope_table(pos, 2, 0, 10000.0f, ct, st), "zero rot_dim");
  BAD(hmx_rope_table(pos, 2, -2, 10000.0f, ct, st), "negative rot_dim");
  BAD(hmx_rope_table(pos, 2, 8, 1.0f, ct, st), "base 1");
  BAD(hmx_rope_table(pos, 2, 8, 0.5f, ct, st), "base < 1");
  BAD(hmx_rope_table(pos, 2, 8, -10.0f, ct, st), "negative base");
  BAD(hmx_rope_table(pos, 2, 8, NAN, ct, st), "NaN base");
  BAD(hmx_rope_table(pos, 2, 8, INFINITY, ct, st), "inf base");
  pos[1] = -1;
  BAD(hmx_rope_table(pos, 2, 8, 10000.0f, ct, st), "negative position");
  pos[1] = 1 << 24;
  BAD(hmx_rope_table(pos, 2, 8, 10000.0f, ct, st), "position 2^24");
  pos[1] = (1 << 24) - 1;
  CHECK(hmx_rope_table(pos, 2, 8, 10000.0f, ct, st) == HMX_OK, "position 2^24 - 1 is valid");
#undef BAD
}

int main(void) {
  test_expf();
  test_sigmoid_silu();
  test_canon_f64();
  test_rope_table();
  test_rope_table_errors();
  return check_finish("test_exp");
}
