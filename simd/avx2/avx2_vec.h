/* The AVX2 instance of the xv_ vector primitives (8-lane ymm registers, 16
 * of them) that simd/x86/vexp_x86.h, rowops_x86.h, attention_x86.h and
 * swiglu_x86.h are written against; simd/avx512/avx512_vec.h is the 16-lane
 * instance. Include it first, from a file compiled with the avx2 flags.
 * Every primitive is one IEEE operation per lane (or moves bits only), so
 * the shared bodies round exactly as written whatever the instance. */
#ifndef HMX_AVX2_VEC_H
#define HMX_AVX2_VEC_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define XV_INLINE static inline __attribute__((always_inline))

#define XV_W 8 /* lanes per register */
#define XV_R 2 /* registers holding the 16 lanes of §R: lanes 0-7, 8-15 */

typedef __m256 xv_v;   /* 8 floats */
typedef __m256i xv_i;  /* 8 int32 (the bit operations of §E exp) */
typedef __m256i xv_m;  /* lane mask: all ones in the selected lanes */

#define xv_zero() _mm256_setzero_ps()
#define xv_set1(f) _mm256_set1_ps(f)
#define xv_bcast(p) _mm256_broadcast_ss(p)
#define xv_load(p) _mm256_loadu_ps(p)
#define xv_store(p, v) _mm256_storeu_ps((p), (v))
/* Non-temporal store (p aligned to the vector) and the fence that orders such
 * stores before what follows (rowops_x86.h: outputs far larger than the caches). */
#define xv_stream(p, v) _mm256_stream_ps((p), (v))
#define xv_fence() _mm_sfence()
#define xv_add(a, b) _mm256_add_ps((a), (b))
#define xv_sub(a, b) _mm256_sub_ps((a), (b))
#define xv_mul(a, b) _mm256_mul_ps((a), (b))
#define xv_div(a, b) _mm256_div_ps((a), (b))
#define xv_max(a, b) _mm256_max_ps((a), (b)) /* b when either is NaN */
#define xv_fma(a, b, c) _mm256_fmadd_ps((a), (b), (c))  /* fma(a, b, c) */
#define xv_fms(a, b, c) _mm256_fmsub_ps((a), (b), (c))  /* fma(a, b, -c) */

/* 8 bf16 / f16 values, converted exactly to f32 (weights16_x86.h; f16
 * needs F16C, which the avx2 probe requires). */
#define xv_load_bf16(p) \
  _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define xv_load_f16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))

/* Lanes 0 .. n-1, 0 <= n <= 8. */
XV_INLINE xv_m xv_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* Lanes 0 .. n-1 for any n (none when n <= 0, all when n >= 8). */
XV_INLINE xv_m xv_lanes_clamped(int64_t n) { return xv_lanes(n < 0 ? 0 : n > 8 ? 8 : n); }
/* Masked load (other lanes +0; nothing past them is read) and store. */
#define xv_loadn(p, m) _mm256_maskload_ps((p), (m))
#define xv_storen(p, m, v) _mm256_maskstore_ps((p), (m), (v))
/* b in the lanes of m, a elsewhere. */
#define xv_blend(m, a, b) _mm256_blendv_ps((a), (b), _mm256_castsi256_ps(m))

/* Ordered quiet compares (unordered for the NaN test), as masks. */
#define xv_cmp_lt(a, b) _mm256_castps_si256(_mm256_cmp_ps((a), (b), _CMP_LT_OQ))
#define xv_cmp_gt(a, b) _mm256_castps_si256(_mm256_cmp_ps((a), (b), _CMP_GT_OQ))
#define xv_cmp_unord(a, b) _mm256_castps_si256(_mm256_cmp_ps((a), (b), _CMP_UNORD_Q))
/* 1 when lo <= a <= hi in every lane (ordered: 0 if any lane is NaN). */
#define xv_all_within(a, lo, hi)                                                  \
  (_mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps((a), (lo), _CMP_GE_OQ),           \
                                    _mm256_cmp_ps((a), (hi), _CMP_LE_OQ))) == 0xFF)

/* 32-bit integer operations on the bits. */
#define xv_as_i(v) _mm256_castps_si256(v)
#define xv_as_v(i) _mm256_castsi256_ps(i)
#define xv_set1_i(k) _mm256_set1_epi32(k)
#define xv_sub_i(a, b) _mm256_sub_epi32((a), (b))
#define xv_xor_i(a, b) _mm256_xor_si256((a), (b))
#define xv_srli_i(a, k) _mm256_srli_epi32((a), (k))
#define xv_srai_i(a, k) _mm256_srai_epi32((a), (k)) /* arithmetic: sign bits in */
#define xv_slli_i(a, k) _mm256_slli_epi32((a), (k))
#define xv_srlv_i(a, k) _mm256_srlv_epi32((a), (k)) /* per-lane counts */
#define xv_and_i(a, b) _mm256_and_si256((a), (b))
#define xv_or_i(a, b) _mm256_or_si256((a), (b))
/* GGUF block decode (weights16_x86.h): 8 bytes at p, zero- or
 * sign-extended to int32 lanes, and int32 -> f32 (exact below 2^24). */
#define xv_u8_i(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define xv_i8_i(p) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define xv_u16_i(p) _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))) /* VL uint16 at p */
#define xv_cvt_i(a) _mm256_cvtepi32_ps(a)
/* The 16 int8 values at t in both 128-bit halves (xv_lut16_bytes' table). */
#define XV_HAS_LUT16_BYTES 1
XV_INLINE __m256i xv_lut16_table(const int8_t *t) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)t));
}
/* Every byte b of x (bit 7 clear, bits 4-6 ignored) replaced by tab[b & 15]
 * (vpshufb: 32 lookups in one operation). */
#define xv_lut16_bytes(x, tab) _mm256_shuffle_epi8((tab), (x))
/* t[idx & 15] in each lane (IQ4's table, weights16_x86.h); the bits of idx
 * above bit 3 are ignored: two 8-entry permutes (bits 0-2) and a blend on
 * bit 3. */
XV_INLINE __m256 xv_lut16(__m256i idx, const float *t) {
  const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t), idx);
  const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 8), idx);
  return _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
}

/* §R tree over l[0] = lanes 0-7, l[1] = lanes 8-15: l[j] += l[j+8] (lo + hi),
 * then +4, +2, +1 (hmx_lane_tree). */
XV_INLINE float xv_tree16(const xv_v *l) {
  __m256 h8 = _mm256_add_ps(l[0], l[1]);                                           /* j < 8 */
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)); /* j < 4 */
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));                                /* j < 2 */
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));                            /* j = 0 */
  return _mm_cvtss_f32(h1);
}

/* The largest lane by `>` from -inf (§attention's max: exact, so any order;
 * v holds no NaN where it is used). */
XV_INLINE float xv_hmax(xv_v v) {
  float mx[8], m = -INFINITY;
  _mm256_storeu_ps(mx, v);
  for (int i = 0; i < 8; i++)
    if (mx[i] > m) m = mx[i];
  return m;
}

#endif
