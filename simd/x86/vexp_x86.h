/* Canonical exp, sigmoid and SiLU on one vector (docs/NUMERICS.md §E), shared
 * by the avx512 (16 lanes) and avx2 (8 lanes) backends. Header only: the
 * includer has included its ISA's xv_ primitives (simd/avx512/avx512_vec.h or
 * simd/avx2/avx2_vec.h; simd/<isa>/vexp_<isa>.h does both).
 *
 * xv_expf mirrors hmx_expf (src/canon_exp.c) op for op: every fmaf is
 * xv_fma, every * + - the plain vector operation, lines 19-23 are 32-bit
 * integer operations on the bits, and lines 27-31 are the same selects in the
 * same order with ordered quiet compares (unordered for the NaN test). So each
 * lane is bit-identical to hmx_expf, subnormal results, overflow, -inf and NaN
 * included (only the NaN payload is free, §C).
 *
 * Compile with -ffp-contract=off (the project does): the vector + and *
 * below must not be fused.
 */
#ifndef HMX_VEXP_X86_H
#define HMX_VEXP_X86_H

#include <stdint.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* §E exp: one lane = hmx_expf. The line numbers are those of NUMERICS.md. */
static inline xv_v xv_expf(xv_v x) {
  const xv_v shift = xv_set1(0x1.8p+23f);
  const xv_v one = xv_set1(1.0f);
  const xv_v z = xv_fma(x, xv_set1(0x1.715476p+0f), shift);                   /* 1 */
  const xv_v n = xv_sub(z, shift);                                             /* 2 */
  const xv_v r1 = xv_fma(n, xv_set1(-0x1.62e43p-1f), x);                      /* 3 */
  const xv_v rl = xv_mul(n, xv_set1(0x1.05c61p-29f));                         /* 4 */
  const xv_v r = xv_add(r1, rl);                                               /* 5 */
  xv_v q = xv_fma(xv_set1(0x1.6ac74ep-10f), r, xv_set1(0x1.123dep-7f));       /* 6 */
  q = xv_fma(q, r, xv_set1(0x1.555858p-5f));                                   /* 7 */
  q = xv_fma(q, r, xv_set1(0x1.55548cp-3f));                                   /* 8 */
  q = xv_fma(q, r, xv_set1(0x1.fffffcp-2f));                                   /* 9 */
  const xv_v m = xv_mul(xv_add(r1, r1), rl);                                   /* 10 */
  const xv_v r2 = xv_fma(r1, r1, m);                                           /* 11 */
  const xv_v c = xv_fma(r2, q, rl);                                            /* 12 */
  const xv_v w = xv_add(one, r1);                                              /* 13 */
  const xv_v wm1 = xv_sub(w, one);                                             /* 14 */
  const xv_v e1 = xv_sub(r1, wm1);                                             /* 15 */
  const xv_v cc = xv_add(e1, c);                                               /* 16 */
  const xv_v p = xv_add(w, cc);                                                /* 17 */
  const xv_i kb = xv_sub_i(xv_as_i(z), xv_set1_i(0x4B3FFF00));                 /* 19 */
  /* Fast path, the same bits: with -86.5 <= x <= 87 in every lane, n is in
   * [-125, 126] (kb = n + 256) and p in [0.70, 1.42], so p * a and
   * (p * a) * b (line 24) are exact normal products equal to p * 2^n, the
   * result is normal (line 27 keeps yn) and lines 28-31 select nothing:
   * y = p * 2^n, one exact multiply by 2^n (exponent field kb - 129). */
  if (xv_all_within(x, xv_set1(-86.5f), xv_set1(87.0f)))
    return xv_mul(p, xv_as_v(xv_slli_i(xv_sub_i(kb, xv_set1_i(129)), 23)));
  const xv_v t = xv_add(wm1, cc);                                              /* 18 */
  const xv_i k1 = xv_srli_i(kb, 1);                                            /* 20 */
  const xv_i k2 = xv_sub_i(kb, k1);                                            /* 21 */
  const xv_i ione = xv_set1_i(1);
  const xv_v a = xv_as_v(xv_slli_i(xv_sub_i(k1, ione), 23));                   /* 22 */
  const xv_v b = xv_as_v(xv_slli_i(xv_sub_i(k2, ione), 23));                   /* 23 */
  const xv_v yn = xv_mul(xv_mul(p, a), b);                                     /* 24 */
  const xv_v s = xv_mul(a, b);                                                 /* 25 */
  const xv_v ys = xv_fma(s, t, s);                                             /* 26 */
  xv_v y = xv_blend(xv_cmp_lt(yn, xv_set1(0x1p-126f)), yn, ys);                /* 27 */
  y = xv_blend(xv_cmp_lt(n, xv_set1(-149.0f)), y, xv_set1(0x1p-149f));         /* 28 */
  y = xv_blend(xv_cmp_gt(x, xv_set1(0x1.62e42ep+6f)), y, xv_set1(__builtin_inff())); /* 29 */
  y = xv_blend(xv_cmp_lt(x, xv_set1(-0x1.9fe368p+6f)), y, xv_zero());          /* 30 */
  y = xv_blend(xv_cmp_unord(x, x), y, xv_add(x, x));                           /* 31 */
  return y;
}

/* -x, exactly (sign flip, as C's unary minus). */
static inline xv_v xv_negf(xv_v x) {
  return xv_as_v(xv_xor_i(xv_as_i(x), xv_set1_i((int)0x80000000u)));
}

/* §E sigmoid: 1 / (1 + exp(-x)), one add and one IEEE division. */
static inline xv_v xv_sigmoidf(xv_v x) {
  const xv_v one = xv_set1(1.0f);
  return xv_div(one, xv_add(one, xv_expf(xv_negf(x))));
}

/* §E SiLU: x / (1 + exp(-x)), one add and one IEEE division. */
static inline xv_v xv_siluf(xv_v x) {
  return xv_div(x, xv_add(xv_set1(1.0f), xv_expf(xv_negf(x))));
}

/* A plain C entry point y[i] = fn(x[i]), i < n, for tests and tools
 * (simd/<isa>/vexp_<isa>.c): whole vectors, then the tail (n mod XV_W)
 * through the same vector code with masked loads (+0 in the other lanes)
 * and stores. */
#define XV_VEXP_ARRAY(name, fn)                                              \
  void name(const float *x, float *y, int64_t n);                            \
  void name(const float *x, float *y, int64_t n) {                           \
    int64_t i = 0;                                                           \
    for (; i + XV_W <= n; i += XV_W) xv_store(y + i, fn(xv_load(x + i)));    \
    if (i < n) {                                                             \
      const xv_m k = xv_lanes(n - i);                                        \
      xv_storen(y + i, k, fn(xv_loadn(x + i, k)));                           \
    }                                                                        \
  }

#endif
