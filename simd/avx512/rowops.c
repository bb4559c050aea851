/* avx512 row operations: rmsnorm, layernorm, rope (docs/NUMERICS.md §R,
 * §rmsnorm, §layernorm, §rope), and the FMA-peak probe used by `hmx bench`:
 * the bodies of simd/x86/rowops_x86.h on 16-lane zmm registers (§R's 16
 * lanes are exactly one register), plus the rope pair shuffles. */
#include "avx512_rowops.h"

#include "avx512_vec.h"

#define XR_RMSNORM_FN hmx_avx512_rmsnorm
#define XR_LAYERNORM_FN hmx_avx512_layernorm
#define XR_ROPE_FN hmx_avx512_rope
#define XR_FMA_PEAK_FN hmx_avx512_fma_peak_gflops

/* Even and odd elements of the 32 floats a, b (moves bits only). */
XV_INLINE void xr_deinterleave(__m512 a, __m512 b, __m512 *e, __m512 *o) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  *e = _mm512_permutex2var_ps(a, even, b);
  *o = _mm512_permutex2var_ps(a, odd, b);
}

/* The inverse: a, b = e0 o0 e1 o1 ... (moves bits only). */
XV_INLINE void xr_interleave(__m512 e, __m512 o, __m512 *a, __m512 *b) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  *a = _mm512_permutex2var_ps(e, lo, o);
  *b = _mm512_permutex2var_ps(e, hi, o);
}

#include "../x86/rowops_x86.h"
