/* 8-lane canonical exp, sigmoid and SiLU for AVX2 (docs/NUMERICS.md §E).
 *
 * hmx_v8_expf mirrors hmx_expf (src/canon_exp.c) op for op: every fmaf is
 * _mm256_fmadd_ps, every * + - the plain vector operation, lines 19-23 are
 * 32-bit integer operations on the bits, and lines 27-31 are the same selects
 * in the same order with ordered quiet compares (unordered for the NaN test).
 * So each lane is bit-identical to hmx_expf, subnormal results, overflow,
 * -inf and NaN included (only the NaN payload is free, §C).
 *
 * Header-only (static inline); include it from a file compiled with the
 * avx2 flags (-mavx2 -mfma). Selects are _mm256_blendv_ps on compare masks.
 * Compile with -ffp-contract=off (the project does): the vector + and *
 * below must not be fused.
 */
#ifndef HMX_VEXP_AVX2_H
#define HMX_VEXP_AVX2_H

#include <immintrin.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* §E exp: one lane = hmx_expf. The line numbers are those of NUMERICS.md. */
static inline __m256 hmx_v8_expf(__m256 x) {
  const __m256 shift = _mm256_set1_ps(0x1.8p+23f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);  /* 1 */
  const __m256 n = _mm256_sub_ps(z, shift);                                     /* 2 */
  const __m256 r1 = _mm256_fmadd_ps(n, _mm256_set1_ps(-0x1.62e43p-1f), x);     /* 3 */
  const __m256 rl = _mm256_mul_ps(n, _mm256_set1_ps(0x1.05c61p-29f));          /* 4 */
  const __m256 r = _mm256_add_ps(r1, rl);                                       /* 5 */
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.6ac74ep-10f), r, _mm256_set1_ps(0x1.123dep-7f)); /* 6 */
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.555858p-5f));                   /* 7 */
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.55548cp-3f));                   /* 8 */
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.fffffcp-2f));                   /* 9 */
  const __m256 m = _mm256_mul_ps(_mm256_add_ps(r1, r1), rl);                    /* 10 */
  const __m256 r2 = _mm256_fmadd_ps(r1, r1, m);                                 /* 11 */
  const __m256 c = _mm256_fmadd_ps(r2, q, rl);                                  /* 12 */
  const __m256 w = _mm256_add_ps(one, r1);                                      /* 13 */
  const __m256 wm1 = _mm256_sub_ps(w, one);                                     /* 14 */
  const __m256 e1 = _mm256_sub_ps(r1, wm1);                                     /* 15 */
  const __m256 cc = _mm256_add_ps(e1, c);                                       /* 16 */
  const __m256 p = _mm256_add_ps(w, cc);                                        /* 17 */
  const __m256 t = _mm256_add_ps(wm1, cc);                                      /* 18 */
  const __m256i kb = _mm256_sub_epi32(_mm256_castps_si256(z), _mm256_set1_epi32(0x4B3FFF00)); /* 19 */
  const __m256i k1 = _mm256_srli_epi32(kb, 1);                                  /* 20 */
  const __m256i k2 = _mm256_sub_epi32(kb, k1);                                  /* 21 */
  const __m256i ione = _mm256_set1_epi32(1);
  const __m256 a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(k1, ione), 23)); /* 22 */
  const __m256 b = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(k2, ione), 23)); /* 23 */
  const __m256 yn = _mm256_mul_ps(_mm256_mul_ps(p, a), b);                      /* 24 */
  const __m256 s = _mm256_mul_ps(a, b);                                         /* 25 */
  const __m256 ys = _mm256_fmadd_ps(s, t, s);                                   /* 26 */
  __m256 y = _mm256_blendv_ps(yn, ys, _mm256_cmp_ps(yn, _mm256_set1_ps(0x1p-126f), _CMP_LT_OQ)); /* 27 */
  y = _mm256_blendv_ps(y, _mm256_set1_ps(0x1p-149f),
                       _mm256_cmp_ps(n, _mm256_set1_ps(-149.0f), _CMP_LT_OQ));                          /* 28 */
  y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()),
                       _mm256_cmp_ps(x, _mm256_set1_ps(0x1.62e42ep+6f), _CMP_GT_OQ));                   /* 29 */
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(),
                       _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.9fe368p+6f), _CMP_LT_OQ));                                /* 30 */
  y = _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); /* 31 */
  return y;
}

/* -x, exactly (sign flip, as C's unary minus). */
static inline __m256 hmx_v8_negf(__m256 x) {
  return _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(x), _mm256_set1_epi32((int)0x80000000u)));
}

/* §E sigmoid: 1 / (1 + exp(-x)), one add and one IEEE division. */
static inline __m256 hmx_v8_sigmoidf(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, hmx_v8_expf(hmx_v8_negf(x))));
}

/* §E SiLU: x / (1 + exp(-x)), one add and one IEEE division. */
static inline __m256 hmx_v8_siluf(__m256 x) {
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), hmx_v8_expf(hmx_v8_negf(x))));
}

#endif
