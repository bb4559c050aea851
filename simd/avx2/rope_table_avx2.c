/* avx2 RoPE angle table (docs/NUMERICS.md §E "RoPE angles"): the body of
 * simd/x86/rope_table_x86.h on 4 doubles a ymm register. */
#include "avx2_rowops.h"

#include "avx2_vec.h"

#define XD_W 4
#define XD_TABLE_FN hmx_avx2_rope_table
typedef __m256d xd_v;
#define xd_set1(d) _mm256_set1_pd(d)
#define xd_load(p) _mm256_loadu_pd(p)
#define xd_add(a, b) _mm256_add_pd((a), (b))
#define xd_sub(a, b) _mm256_sub_pd((a), (b))
#define xd_mul(a, b) _mm256_mul_pd((a), (b))
#define xd_fma(a, b, c) _mm256_fmadd_pd((a), (b), (c))
XV_INLINE xd_v xd_neg(xd_v a) { /* the sign bit flipped: exact, as C's unary minus */
  return _mm256_xor_pd(a, _mm256_set1_pd(-0.0));
}
/* The scalar's switch on q = bits(z) & 3: (s, c) = (sr, cr), (cr, -sr),
 * (-sr, -cr), (-cr, sr): swapped where q is odd (blendv reads the sign bit
 * of the mask), s negated where q & 2, c where (q + 1) & 2 (q = 1, 2); only
 * bits move. */
XV_INLINE void xd_quadrant(xd_v z, xd_v sr, xd_v cr, xd_v *so, xd_v *co) {
  const __m256i one = _mm256_set1_epi64x(1), two = _mm256_set1_epi64x(2);
  const __m256i q = _mm256_and_si256(_mm256_castpd_si256(z), _mm256_set1_epi64x(3));
  const __m256d odd = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(q, one), 63));
  const __m256d ns = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(q, two), 62));
  const __m256d nc = _mm256_castsi256_pd(
      _mm256_slli_epi64(_mm256_and_si256(_mm256_add_epi64(q, one), two), 62));
  *so = _mm256_xor_pd(_mm256_blendv_pd(sr, cr, odd), ns);
  *co = _mm256_xor_pd(_mm256_blendv_pd(cr, sr, odd), nc);
}
/* rounded to float as the C cast (MXCSR's round to nearest even) */
#define xd_store_f32(p, v) _mm_storeu_ps((p), _mm256_cvtpd_ps(v))

#include "../x86/rope_table_x86.h"
