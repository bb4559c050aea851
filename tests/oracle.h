/* Shared helpers of the oracle tests (tests/oracle_*.c, docs/ORACLE.md).
 *
 * The oracle tests check the scalar reference against independent float64
 * computations written here from the mathematical definitions in
 * include/hadamix.h, never from ref/ or src/ internals. Each comparison
 * asserts an error bound derived from the reference's documented evaluation
 * order (docs/ORACLE.md gives the derivations) and prints the largest
 * observed error as a fraction of its bound.
 *
 * Every helper is static inline so that each test file includes this header
 * alone and unused helpers cause no warnings. */
#ifndef HMX_TEST_ORACLE_H
#define HMX_TEST_ORACLE_H

#include "hadamix.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ constants */

/* Unit roundoff of binary32 with round-to-nearest: |fl(x) - x| <= U |x|. */
#define ORC_U 0x1p-24
/* Unit roundoff of binary64 (the oracle's own arithmetic). */
#define ORC_UD 0x1p-53
/* The smallest positive subnormal float: absolute error allowance for a
 * result that underflows (exp of a very negative argument). */
#define ORC_TINY 0x1p-149

/* gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability, Lemma 3.1):
 * a product of k factors (1 + d_i)^(+-1), |d_i| <= u, is 1 + t, |t| <= gamma_k. */
static inline double orc_gamma(double k) { return k * ORC_U / (1.0 - k * ORC_U); }
static inline double orc_gamma_d(double k) { return k * ORC_UD / (1.0 - k * ORC_UD); }

/* ------------------------------------------------------------------ context */

static inline hmx_context orc_ctx(void) {
  hmx_context ctx = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  return ctx;
}

/* ------------------------------------------------------------------ PRNG
 * xorshift64* (Vigna 2016): deterministic, platform independent. */
typedef struct orc_rng {
  uint64_t s;
} orc_rng;

static inline orc_rng orc_seed(uint64_t seed) {
  orc_rng r;
  r.s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (r.s == 0) r.s = 1;
  return r;
}

static inline uint64_t orc_next(orc_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double orc_unit(orc_rng *r) { return (double)(orc_next(r) >> 11) * 0x1p-53; }

/* Uniform float in [-a, a] (rounded once from double). */
static inline float orc_sym(orc_rng *r, double a) {
  return (float)((2.0 * orc_unit(r) - 1.0) * a);
}

/* Uniform integer in [0, n). */
static inline int64_t orc_below(orc_rng *r, int64_t n) {
  return (int64_t)(orc_next(r) % (uint64_t)n);
}

/* Fill x[0..n) with one of several input families:
 *   0: uniform in [-1, 1];
 *   1: wide dynamic range, sign * uniform(0.5, 1) * 2^e with e in [-20, 20];
 *   2: small integers in [-64, 64] (sums and products exact in float);
 *   3: uniform in [0.9, 1.1] plus an offset of 100 (large mean, small spread). */
static inline void orc_fill(orc_rng *r, float *x, int64_t n, int family) {
  for (int64_t i = 0; i < n; i++) {
    switch (family) {
    case 1: {
      double m = 0.5 + 0.5 * orc_unit(r);
      int e = (int)orc_below(r, 41) - 20;
      double s = (orc_next(r) & 1) ? -1.0 : 1.0;
      x[i] = (float)ldexp(s * m, e);
      break;
    }
    case 2: x[i] = (float)(orc_below(r, 129) - 64); break;
    case 3: x[i] = (float)(100.0 + 0.9 + 0.2 * orc_unit(r)); break;
    default: x[i] = orc_sym(r, 1.0); break;
    }
  }
}

static inline void *orc_alloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "oracle: out of memory (%zu x %zu)\n", n, size);
    exit(2);
  }
  return p;
}

/* ------------------------------------------------------------------ error bookkeeping
 * One orc_stat per family of comparisons: it keeps the largest observed
 * |computed - exact| / bound, counts elements over their bound and prints
 * the first few offenders. orc_stat_report() turns it into one CHECK. */
typedef struct orc_stat {
  char name[160];
  double worst_ratio; /* max over elements of err / bound */
  double worst_err, worst_bound;
  long count, over;
} orc_stat;

static inline void orc_stat_init(orc_stat *s, const char *name) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
}

/* err and bound are absolute; a NaN error counts as over the bound. */
static inline void orc_stat_add(orc_stat *s, double got, double want, double bound) {
  double err = fabs(got - want);
  s->count++;
  double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : INFINITY);
  if (!(err <= bound)) {
    s->over++;
    if (s->over <= 5)
      fprintf(stderr, "  %s: got %.9g want %.17g err %.3g > bound %.3g\n", s->name, got, want,
              err, bound);
    if (isnan(ratio)) ratio = INFINITY;
  }
  if (ratio > s->worst_ratio || s->count == 1) {
    s->worst_ratio = ratio;
    s->worst_err = err;
    s->worst_bound = bound;
  }
}

/* Prints "name: N values, max err/bound = r" and CHECKs that none exceeded. */
static inline void orc_stat_report(const orc_stat *s) {
  printf("  %-58s %8ld values  max err/bound = %.3e  (err %.3e, bound %.3e)\n", s->name,
         s->count, s->worst_ratio, s->worst_err, s->worst_bound);
  CHECK(s->over == 0 && s->count > 0, "%s: %ld of %ld values exceed their bound", s->name,
        s->over, s->count);
}

/* Status check with a non-empty message on failure. */
#define ORC_OK(call)                                                                      \
  do {                                                                                    \
    hmx_status st_ = (call);                                                              \
    CHECK(st_ == HMX_OK, "%s -> %s (%s)", #call, hmx_status_string(st_), hmx_last_error()); \
  } while (0)

/* ------------------------------------------------------------------ float bits */

static inline uint32_t orc_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float orc_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Spacing of floats at |x| (the ulp of float x, 2^-149 for subnormals). */
static inline double orc_ulpf(double x) {
  x = fabs(x);
  if (x < 0x1p-126) return 0x1p-149;
  int e;
  frexp(x, &e); /* x = f * 2^e, f in [0.5, 1) */
  return ldexp(1.0, e - 24);
}

#endif
