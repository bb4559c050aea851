/* avx512 RoPE angle table (docs/NUMERICS.md §E "RoPE angles"): the body of
 * simd/x86/rope_table_x86.h on 8 doubles a zmm register. */
#include "avx512_rowops.h"

#include "avx512_vec.h"

#define XD_W 8
#define XD_TABLE_FN hmx_avx512_rope_table
typedef __m512d xd_v;
#define xd_set1(d) _mm512_set1_pd(d)
#define xd_load(p) _mm512_loadu_pd(p)
#define xd_add(a, b) _mm512_add_pd((a), (b))
#define xd_sub(a, b) _mm512_sub_pd((a), (b))
#define xd_mul(a, b) _mm512_mul_pd((a), (b))
#define xd_fma(a, b, c) _mm512_fmadd_pd((a), (b), (c))
XV_INLINE xd_v xd_neg(xd_v a) { /* the sign bit flipped: exact, as C's unary minus */
  const __m512i sign = _mm512_set1_epi64(INT64_MIN);
  return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), sign));
}
/* The scalar's switch on q = bits(z) & 3: (s, c) = (sr, cr), (cr, -sr),
 * (-sr, -cr), (-cr, sr): swapped where q is odd, s negated where q & 2, c
 * where (q + 1) & 2 (q = 1, 2); only bits move. */
XV_INLINE void xd_quadrant(xd_v z, xd_v sr, xd_v cr, xd_v *so, xd_v *co) {
  const __m512i one = _mm512_set1_epi64(1), two = _mm512_set1_epi64(2);
  const __m512i q = _mm512_and_si512(_mm512_castpd_si512(z), _mm512_set1_epi64(3));
  const __mmask8 odd = _mm512_test_epi64_mask(q, one);
  const __m512i ns = _mm512_slli_epi64(_mm512_and_si512(q, two), 62); /* bit 1 -> sign */
  const __m512i nc = _mm512_slli_epi64(_mm512_and_si512(_mm512_add_epi64(q, one), two), 62);
  *so = _mm512_castsi512_pd(
      _mm512_xor_si512(_mm512_castpd_si512(_mm512_mask_blend_pd(odd, sr, cr)), ns));
  *co = _mm512_castsi512_pd(
      _mm512_xor_si512(_mm512_castpd_si512(_mm512_mask_blend_pd(odd, cr, sr)), nc));
}
/* rounded to float as the C cast (MXCSR's round to nearest even) */
#define xd_store_f32(p, v) _mm256_storeu_ps((p), _mm512_cvtpd_ps(v))

#include "../x86/rope_table_x86.h"
