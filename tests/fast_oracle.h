/* The fast tier's error bounds (docs/NUMERICS.md, "Fast tier"), computed
 * next to a float64 oracle of each op. Each oracle fills want[] (the exact
 * result, in binary64) and bound[] (the largest |fast - want| the fast tier
 * may give for that element); tests/test_fast_tier.c checks the fast kernels
 * against them, and that the check catches a planted error. Written from the
 * definitions in include/hadamix.h, not from the kernels. */
#ifndef HMX_TEST_FAST_ORACLE_H
#define HMX_TEST_FAST_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define FO_U 0x1p-24 /* binary32 unit roundoff */
static inline double fo_gamma(double k) { return k * FO_U / (1.0 - k * FO_U); }
/* gamma_k with unit roundoff uu (2u for adders that may truncate) */
static inline double fo_gamma_u(double k, double uu) { return k * uu / (1.0 - k * uu); }

/* gemm: c = a b + bias (b [K, N], or [N, K] when trans_b). Any summation
 * order, with or without fma: |c^ - c| <= gamma_{K+2} (sum |a||b| + |bias|)
 * (K + 1 terms; one more u for the rounding of the stored result). */
static inline void fo_gemm(const double *a, const double *b, const double *bias, int64_t m,
                           int64_t n, int64_t k, int trans_b, double *want, double *bound) {
  const double g = fo_gamma((double)k + 2);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = bias ? bias[j] : 0.0, mag = bias ? fabs(bias[j]) : 0.0;
      for (int64_t p = 0; p < k; p++) {
        double bv = trans_b ? b[j * k + p] : b[p * n + j];
        s += a[i * k + p] * bv;
        mag += fabs(a[i * k + p] * bv);
      }
      want[i * n + j] = s;
      bound[i * n + j] = g * mag;
    }
}

/* gemm whose inputs are rounded before an exact product: each input of a is
 * within a relative ea of its value, each of b within eb (to nearest, or by
 * hardware that may truncate); the product of two rounded inputs is exact in
 * f32; the sums are f32 by adders that may truncate, so gamma is taken with
 * 2u, and a subnormal input, product or partial sum may be flushed:
 *   |c^ - c| <= ((1 + ea)(1 + eb)(1 + g) - 1) sum |a||b| + g |bias|
 *               + 2^-126 (2K + 2 + sum_p (|a_ip| + |b_pj|)),   g = gamma^(2u)_{K+2}.
 * bound = INFINITY (no bound) where an intermediate may overflow in some
 * order, or an input may round past FLT_MAX (docs/NUMERICS.md, "Overflow
 * and NaN"). Two users: */
static inline void fo_gemm_rounded(const double *a, const double *b, const double *bias,
                                   int64_t m, int64_t n, int64_t k, int trans_b, double ea,
                                   double eb, double *want, double *bound) {
  const double kk = (double)k + 2, g = kk * 2 * FO_U / (1.0 - kk * 2 * FO_U);
  const double f = (1 + ea) * (1 + eb) * (1 + g) - 1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = bias ? bias[j] : 0.0, mag = 0.0, under = 2.0 * (double)k + 2;
      for (int64_t p = 0; p < k; p++) {
        double bv = trans_b ? b[j * k + p] : b[p * n + j];
        s += a[i * k + p] * bv;
        mag += fabs(a[i * k + p] * bv);
        under += fabs(a[i * k + p]) + fabs(bv);
      }
      want[i * n + j] = s;
      /* + underflow: a subnormal input, product or partial sum flushed to
       * zero loses at most 2^-126 times the other factor (or 1) */
      bound[i * n + j] = f * mag + g * (bias ? fabs(bias[j]) : 0.0) + 0x1p-126 * under;
      /* no bound where some evaluation order may overflow: an input that
       * rounds past FLT_MAX, or a partial sum that can reach it */
      int may_overflow =
          (1 + ea) * (1 + eb) * mag * (1 + g) + (bias ? fabs(bias[j]) : 0.0) >= 0x1.fffffep127;
      for (int64_t p = 0; p < k && (ea > 0 || eb > 0) && !may_overflow; p++)
        may_overflow = fabs(a[i * k + p]) * (1 + ea) >= 0x1.fffffep127 ||
                       fabs(trans_b ? b[j * k + p] : b[p * n + j]) * (1 + eb) >= 0x1.fffffep127;
      if (may_overflow) bound[i * n + j] = INFINITY;
    }
}

/* 1. gemm on tensor cores (the cuda fast tier, cuBLASLt): each f32 input is
 * rounded to TF32 (10 stored mantissa bits: to nearest that is within
 * u_tf32 = 2^-11, but the hardware may truncate, so within 2 u_tf32 = 2^-10
 * here); bf16 and f16 inputs (tf32 = 0) enter unrounded. */
static inline void fo_gemm_tc(const double *a, const double *b, const double *bias, int64_t m,
                              int64_t n, int64_t k, int trans_b, int tf32, double *want,
                              double *bound) {
  const double e = tf32 ? 0x1p-10 : 0.0;
  fo_gemm_rounded(a, b, bias, m, n, k, trans_b, e, e, want, bound);
}

/* 2. gemm with bf16 weights on a CPU with AVX512_BF16 (the CPU fast tier,
 * oneDNN's bf16 matmul): a is rounded to bf16 (to nearest even: within
 * 2^-8), b is bf16 already; the hardware's dot-product instruction
 * (vdpbf16ps) flushes subnormals. */
static inline void fo_gemm_bf16(const double *a, const double *b, const double *bias, int64_t m,
                                int64_t n, int64_t k, int trans_b, double *want, double *bound) {
  fo_gemm_rounded(a, b, bias, m, n, k, trans_b, 0x1p-8, 0.0, want, bound);
}

/* attention, per query and channel: with s_j = scale q.k_j and the oracle's
 * p_j = softmax(s)_j, o = sum p_j v_j. A score carries an error of at most
 * D_j = gamma_{D+1} scale sum|q||k_j|; shifting it by the running max and
 * exp (1 ulp, SLEEF u10) perturb each weight by a factor within
 * exp(D_j + u|s_j - max|) (1 + 2u); each of the nb = ceil(Skv / 64) block
 * rescalings multiplies numerator and denominator alike (their errors
 * cancel but for one rounding each); the sums of Skv terms add gamma_Skv.
 * With eps = max_j (exp(D_j + u|s_j - max|)(1 + 2u) - 1) + gamma_{Skv+nb+2}:
 *   |o^ - o| <= eps (sum_j p_j |v_j| + |o|) / (1 - eps) + u |o|.
 *
 * On tensor cores (tc = 1, the cuda fast tier: TF32 inputs, f32 sums by
 * adders that may truncate, subnormals that may flush; the gemm bound
 * above): D_j = scale (((1 + e)^2 (1 + g'_{D+2}) - 1) sum|q||k_j|
 * + 2^-126 (2D + 2 + sum(|q| + |k_j|))); every term p_j v_j of the
 * numerator also takes TF32's (1 + e)^2, so with eta the weight factor as
 * above, eps = (1 + eta)(1 + e)^2 (1 + g'_{Skv+nb+2}) - 1, and a flushed
 * p, product or partial sum adds 2^-126 (2 Skv + 2 + sum_j |v_j|) / (1 - eps)
 * (the denominator is at least 1 - eps: the largest weight is 1). Where
 * eps >= 1 only the trivial bound holds: o^ is a weighted mean of the v_j. */
static inline void fo_attention_arith(const double *q, const double *k, const double *v,
                                      int64_t B, int64_t sq, int64_t skv, int64_t hq, int64_t hkv,
                                      int64_t d, int causal, int64_t q_offset, double scale,
                                      int tc, double *want, double *bound) {
  double *s = malloc((size_t)(skv ? skv : 1) * 2 * sizeof(double));
  double *err = s + skv;
  const int64_t groups = hq / hkv, nb = (skv + 63) / 64;
  const double e = tc ? 0x1p-10 : 0.0, u_sum = tc ? 2 * FO_U : FO_U;
  const double gq = tc ? (1 + e) * (1 + e) * (1 + fo_gamma_u((double)d + 2, u_sum)) - 1
                       : fo_gamma((double)d + 1);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < sq; i++)
      for (int64_t h = 0; h < hq; h++) {
        const int64_t g = h / groups;
        const int64_t lim = causal ? q_offset + i + 1 : skv;
        const double *qi = q + ((b * sq + i) * hq + h) * d;
        double mx = -INFINITY;
        for (int64_t j = 0; j < lim; j++) {
          const double *kj = k + ((b * skv + j) * hkv + g) * d;
          double dot = 0, mag = 0, under = 2.0 * (double)d + 2;
          for (int64_t c = 0; c < d; c++) {
            dot += qi[c] * kj[c];
            mag += fabs(qi[c] * kj[c]);
            under += fabs(qi[c]) + fabs(kj[c]);
          }
          s[j] = scale * dot;
          err[j] = fabs(scale) * (gq * mag + (tc ? 0x1p-126 * under : 0.0));
          if (s[j] > mx) mx = s[j];
        }
        double sum = 0, eta = 0;
        for (int64_t j = 0; j < lim; j++) {
          double ej = exp(err[j] + FO_U * fabs(s[j] - mx)) * (1 + 2 * FO_U) - 1;
          if (ej > eta) eta = ej;
          s[j] = exp(s[j] - mx);
          sum += s[j];
        }
        const double gs = fo_gamma_u((double)lim + (double)nb + 2, u_sum);
        const double eps = tc ? (1 + eta) * (1 + e) * (1 + e) * (1 + gs) - 1 : eta + gs;
        for (int64_t c = 0; c < d; c++) {
          double o = 0, mag = 0, vabs = 0, vmax = 0;
          for (int64_t j = 0; j < lim; j++) {
            double vj = v[((b * skv + j) * hkv + g) * d + c];
            o += s[j] / sum * vj;
            mag += s[j] / sum * fabs(vj);
            vabs += fabs(vj);
            vmax = fabs(vj) > vmax ? fabs(vj) : vmax;
          }
          int64_t at = ((b * sq + i) * hq + h) * d + c;
          const double flush = tc ? 0x1p-126 * (2.0 * (double)lim + 2 + vabs) : 0.0;
          want[at] = o;
          /* whatever the weights, o^ is a weighted mean of the (TF32-rounded)
           * v_j, off by the two sums' roundings and the final division; used
           * where it is smaller, and always where eps >= 1 (peaked scores
           * with large errors, e.g. |s| ~ 1e4 on TF32: the bound above is
           * then void) */
          const double mean = (vmax * (1 + e) * (1 + gs) + flush) / (1 - gs) * (1 + FO_U) + fabs(o);
          const double full = eps * (mag + fabs(o)) / (1 - eps) + FO_U * fabs(o) + flush / (1 - eps);
          bound[at] = eps < 1 && full < mean ? full : mean;
        }
      }
  free(s);
}

/* swiglu, per token: a = x W1, b = x W3 with Ea, Eb = gamma_{d+1} sum|x||W|
 * (the GEMM bound); g = silu(a) b with |silu'| <= 1.1 and silu computed to
 * within 6u (exp 2u, the add, the division, the product):
 *   Eg = 1.1 Ea (|b| + Eb) + (|silu(a)| + 1.1 Ea) Eb + 6u (|silu(a)| + 1.1 Ea)(|b| + Eb);
 * y = g W2: Ey = sum_j Eg_j |W2_j| + gamma_{h+1} sum_j (|g_j| + Eg_j) |W2_j|.
 * With rounded inputs (mode FO_TC: tensor cores, TF32 x, W and g; mode
 * FO_BF16: bf16 weights on AVX512_BF16, x and g rounded to bf16) the three
 * products take fo_gemm_rounded's bound instead of gamma:
 * ((1 + ea)(1 + eb)(1 + g'_{K+2}) - 1) sum|.||.| plus 2^-126 (2K + 2 +
 * sum(|.| + |.|)) (K = d for a, b; K = h for y, with |g_j| + Eg_j for g). */
enum { FO_F32 = 0, FO_TC = 1, FO_BF16 = 2 };
static inline void fo_swiglu_arith(const double *x, const double *w1, const double *w3,
                                   const double *w2, int64_t t, int64_t d, int64_t h,
                                   int64_t dout, int mode, double *want, double *bound) {
  double *g = malloc((size_t)(h ? h : 1) * 2 * sizeof(double));
  double *eg = g + h;
  const int rounded = mode != FO_F32;
  /* the relative rounding of the activations (x, g) and of the weights */
  const double ex = mode == FO_TC ? 0x1p-10 : mode == FO_BF16 ? 0x1p-8 : 0.0;
  const double ew = mode == FO_TC ? 0x1p-10 : 0.0;
  const double uu = rounded ? 2 * FO_U : FO_U, fl = rounded ? 0x1p-126 : 0.0;
  const double gd = rounded ? (1 + ex) * (1 + ew) * (1 + fo_gamma_u((double)d + 2, uu)) - 1
                            : fo_gamma((double)d + 1);
  const double gh = rounded ? (1 + ex) * (1 + ew) * (1 + fo_gamma_u((double)h + 2, uu)) - 1
                            : fo_gamma((double)h + 1);
  for (int64_t r = 0; r < t; r++) {
    for (int64_t j = 0; j < h; j++) {
      double a = 0, b = 0, ma = 0, mb = 0, ua = 2.0 * (double)d + 2, ub = ua;
      for (int64_t c = 0; c < d; c++) {
        double xv = x[r * d + c];
        a += xv * w1[c * h + j];
        b += xv * w3[c * h + j];
        ma += fabs(xv * w1[c * h + j]);
        mb += fabs(xv * w3[c * h + j]);
        ua += fabs(xv) + fabs(w1[c * h + j]);
        ub += fabs(xv) + fabs(w3[c * h + j]);
      }
      double ea = gd * ma + fl * ua, eb = gd * mb + fl * ub;
      double sa = a / (1 + exp(-a));
      g[j] = sa * b;
      double ms = fabs(sa) + 1.1 * ea, mbb = fabs(b) + eb;
      eg[j] = 1.1 * ea * mbb + ms * eb + 6 * FO_U * ms * mbb;
    }
    for (int64_t c = 0; c < dout; c++) {
      double y = 0, e1 = 0, mag = 0, under = 2.0 * (double)h + 2;
      for (int64_t j = 0; j < h; j++) {
        double w = w2[j * dout + c];
        y += g[j] * w;
        e1 += eg[j] * fabs(w);
        mag += (fabs(g[j]) + eg[j]) * fabs(w);
        under += fabs(g[j]) + eg[j] + fabs(w);
      }
      want[r * dout + c] = y;
      bound[r * dout + c] = e1 + gh * mag + fl * under;
    }
  }
  free(g);
}

#endif
