/* The AVX-512 instance of the xv_ vector primitives (16-lane zmm registers,
 * 32 of them, and mask registers) that simd/x86/vexp_x86.h, rowops_x86.h,
 * attention_x86.h and swiglu_x86.h are written against;
 * simd/avx2/avx2_vec.h is the 8-lane instance. Include it first, from a file
 * compiled with the avx512 flags. Every primitive is one IEEE operation per
 * lane (or moves bits only), so the shared bodies round exactly as written
 * whatever the instance. */
#ifndef HMX_AVX512_VEC_H
#define HMX_AVX512_VEC_H

#include <immintrin.h>
#include <stdint.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define XV_INLINE static inline __attribute__((always_inline))

#define XV_W 16 /* lanes per register */
#define XV_R 1  /* registers holding the 16 lanes of §R: exactly one */

typedef __m512 xv_v;     /* 16 floats */
typedef __m512i xv_i;    /* 16 int32 (the bit operations of §E exp) */
typedef __mmask16 xv_m;  /* lane mask */

#define xv_zero() _mm512_setzero_ps()
#define xv_set1(f) _mm512_set1_ps(f)
#define xv_bcast(p) _mm512_set1_ps(*(p))
#define xv_load(p) _mm512_loadu_ps(p)
#define xv_store(p, v) _mm512_storeu_ps((p), (v))
/* Non-temporal store (p aligned to the vector) and the fence that orders such
 * stores before what follows (rowops_x86.h: outputs far larger than the caches). */
#define xv_stream(p, v) _mm512_stream_ps((p), (v))
#define xv_fence() _mm_sfence()
#define xv_add(a, b) _mm512_add_ps((a), (b))
#define xv_sub(a, b) _mm512_sub_ps((a), (b))
#define xv_mul(a, b) _mm512_mul_ps((a), (b))
#define xv_div(a, b) _mm512_div_ps((a), (b))
#define xv_max(a, b) _mm512_max_ps((a), (b)) /* b when either is NaN */
#define xv_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c))  /* fma(a, b, c) */
#define xv_fms(a, b, c) _mm512_fmsub_ps((a), (b), (c))  /* fma(a, b, -c) */

/* 16 bf16 / f16 values, converted exactly to f32 (weights16_x86.h). */
#define xv_load_bf16(p) \
  _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define xv_load_f16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))

/* Lanes 0 .. n-1, 0 <= n <= 16. */
XV_INLINE xv_m xv_lanes(int64_t n) { return (__mmask16)((1u << n) - 1u); }
/* Lanes 0 .. n-1 for any n (none when n <= 0, all when n >= 16). */
XV_INLINE xv_m xv_lanes_clamped(int64_t n) {
  return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}
/* Masked load (other lanes +0; nothing past them is read) and store. */
#define xv_loadn(p, m) _mm512_maskz_loadu_ps((m), (p))
#define xv_storen(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
/* b in the lanes of m, a elsewhere. */
#define xv_blend(m, a, b) _mm512_mask_blend_ps((m), (a), (b))

/* Ordered quiet compares (unordered for the NaN test), as masks. */
#define xv_cmp_lt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_LT_OQ)
#define xv_cmp_gt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ)
#define xv_cmp_unord(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_UNORD_Q)
/* 1 when lo <= a <= hi in every lane (ordered: 0 if any lane is NaN). */
#define xv_all_within(a, lo, hi)                                                  \
  ((__mmask16)(_mm512_cmp_ps_mask((a), (lo), _CMP_GE_OQ) &                         \
               _mm512_cmp_ps_mask((a), (hi), _CMP_LE_OQ)) == (__mmask16)0xFFFF)

/* 32-bit integer operations on the bits. */
#define xv_as_i(v) _mm512_castps_si512(v)
#define xv_as_v(i) _mm512_castsi512_ps(i)
#define xv_set1_i(k) _mm512_set1_epi32(k)
#define xv_sub_i(a, b) _mm512_sub_epi32((a), (b))
#define xv_xor_i(a, b) _mm512_xor_si512((a), (b))
#define xv_srli_i(a, k) _mm512_srli_epi32((a), (k))
#define xv_srai_i(a, k) _mm512_srai_epi32((a), (k)) /* arithmetic: sign bits in */
#define xv_slli_i(a, k) _mm512_slli_epi32((a), (k))
#define xv_srlv_i(a, k) _mm512_srlv_epi32((a), (k)) /* per-lane counts */
#define xv_and_i(a, b) _mm512_and_si512((a), (b))
#define xv_or_i(a, b) _mm512_or_si512((a), (b))
/* GGUF block decode (weights16_x86.h): 16 bytes at p, zero- or
 * sign-extended to int32 lanes, and int32 -> f32 (exact below 2^24). */
#define xv_u8_i(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define xv_i8_i(p) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define xv_u16_i(p) _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))) /* VL uint16 at p */
#define xv_cvt_i(a) _mm512_cvtepi32_ps(a)
/* t[idx & 15] in each lane (IQ4's table, weights16_x86.h); the bits of idx
 * above bit 3 are ignored: one 16-entry permute. */
XV_INLINE __m512 xv_lut16(__m512i idx, const float *t) {
  return _mm512_permutexvar_ps(idx, _mm512_loadu_ps(t));
}

/* §R tree on one register: l[j] += l[j+8], then +4, +2, +1 (hmx_lane_tree). */
XV_INLINE float xv_tree16(const xv_v *l) {
  __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(l[0]),             /* j < 8: l[j] + l[j+8] */
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(l[0]), 1)));
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)); /* +4 */
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));                  /* j < 2: l[j] + l[j+2] */
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));              /* l[0] + l[1] */
  return _mm_cvtss_f32(h1);
}

/* The largest lane (§attention's max: exact, so any order; v holds no NaN
 * where it is used). */
XV_INLINE float xv_hmax(xv_v v) { return _mm512_reduce_max_ps(v); }

#endif
