/* 16-lane canonical exp, sigmoid and SiLU for AVX-512 (docs/NUMERICS.md §E).
 *
 * hmx_v16_expf mirrors hmx_expf (src/canon_exp.c) op for op: every fmaf is
 * _mm512_fmadd_ps, every * + - the plain vector operation, lines 19-23 are
 * 32-bit integer operations on the bits, and lines 27-31 are the same selects
 * in the same order with ordered quiet compares (unordered for the NaN test).
 * So each lane is bit-identical to hmx_expf, subnormal results, overflow,
 * -inf and NaN included (only the NaN payload is free, §C).
 *
 * Header-only (static inline); include it from a file compiled with the
 * avx512 flags. Compile with -ffp-contract=off (the project does): the
 * vector + and * below must not be fused.
 */
#ifndef HMX_VEXP_AVX512_H
#define HMX_VEXP_AVX512_H

#include <immintrin.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* §E exp: one lane = hmx_expf. The line numbers are those of NUMERICS.md. */
static inline __m512 hmx_v16_expf(__m512 x) {
  const __m512 shift = _mm512_set1_ps(0x1.8p+23f);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);  /* 1 */
  const __m512 n = _mm512_sub_ps(z, shift);                                     /* 2 */
  const __m512 r1 = _mm512_fmadd_ps(n, _mm512_set1_ps(-0x1.62e43p-1f), x);     /* 3 */
  const __m512 rl = _mm512_mul_ps(n, _mm512_set1_ps(0x1.05c61p-29f));          /* 4 */
  const __m512 r = _mm512_add_ps(r1, rl);                                       /* 5 */
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.6ac74ep-10f), r, _mm512_set1_ps(0x1.123dep-7f)); /* 6 */
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.555858p-5f));                   /* 7 */
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.55548cp-3f));                   /* 8 */
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.fffffcp-2f));                   /* 9 */
  const __m512 m = _mm512_mul_ps(_mm512_add_ps(r1, r1), rl);                    /* 10 */
  const __m512 r2 = _mm512_fmadd_ps(r1, r1, m);                                 /* 11 */
  const __m512 c = _mm512_fmadd_ps(r2, q, rl);                                  /* 12 */
  const __m512 w = _mm512_add_ps(one, r1);                                      /* 13 */
  const __m512 wm1 = _mm512_sub_ps(w, one);                                     /* 14 */
  const __m512 e1 = _mm512_sub_ps(r1, wm1);                                     /* 15 */
  const __m512 cc = _mm512_add_ps(e1, c);                                       /* 16 */
  const __m512 p = _mm512_add_ps(w, cc);                                        /* 17 */
  const __m512 t = _mm512_add_ps(wm1, cc);                                      /* 18 */
  const __m512i kb = _mm512_sub_epi32(_mm512_castps_si512(z), _mm512_set1_epi32(0x4B3FFF00)); /* 19 */
  const __m512i k1 = _mm512_srli_epi32(kb, 1);                                  /* 20 */
  const __m512i k2 = _mm512_sub_epi32(kb, k1);                                  /* 21 */
  const __m512i ione = _mm512_set1_epi32(1);
  const __m512 a = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(k1, ione), 23)); /* 22 */
  const __m512 b = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(k2, ione), 23)); /* 23 */
  const __m512 yn = _mm512_mul_ps(_mm512_mul_ps(p, a), b);                      /* 24 */
  const __m512 s = _mm512_mul_ps(a, b);                                         /* 25 */
  const __m512 ys = _mm512_fmadd_ps(s, t, s);                                   /* 26 */
  __m512 y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(yn, _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ), yn, ys); /* 27 */
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, _mm512_set1_ps(-149.0f), _CMP_LT_OQ), y,
                           _mm512_set1_ps(0x1p-149f));                          /* 28 */
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.62e42ep+6f), _CMP_GT_OQ), y,
                           _mm512_set1_ps(__builtin_inff()));                   /* 29 */
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-0x1.9fe368p+6f), _CMP_LT_OQ), y,
                           _mm512_setzero_ps());                                /* 30 */
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x)); /* 31 */
  return y;
}

/* -x, exactly (sign flip, as C's unary minus). */
static inline __m512 hmx_v16_negf(__m512 x) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
}

/* §E sigmoid: 1 / (1 + exp(-x)), one add and one IEEE division. */
static inline __m512 hmx_v16_sigmoidf(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, hmx_v16_expf(hmx_v16_negf(x))));
}

/* §E SiLU: x / (1 + exp(-x)), one add and one IEEE division. */
static inline __m512 hmx_v16_siluf(__m512 x) {
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), hmx_v16_expf(hmx_v16_negf(x))));
}

#endif
