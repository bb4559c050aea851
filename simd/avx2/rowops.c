/* avx2 row operations: rmsnorm, layernorm, rope (docs/NUMERICS.md §R,
 * §rmsnorm, §layernorm, §rope), and the FMA-peak probe used by `hmx bench`:
 * the bodies of simd/x86/rowops_x86.h on 8-lane ymm registers (§R's 16 lanes
 * are two registers, lanes 0-7 and 8-15), plus the rope pair shuffles. */
#include "avx2_rowops.h"

#include "avx2_vec.h"

#define XR_RMSNORM_FN hmx_avx2_rmsnorm
#define XR_LAYERNORM_FN hmx_avx2_layernorm
#define XR_ROPE_FN hmx_avx2_rope
#define XR_FMA_PEAK_FN hmx_avx2_fma_peak_gflops

/* Even and odd elements of the 16 floats a, b (moves bits only):
 * [a0 a2 b0 b2 | a4 a6 b4 b6] -> [a0 a2 a4 a6 b0 b2 b4 b6], the same for odd. */
XV_INLINE void xr_deinterleave(__m256 a, __m256 b, __m256 *e, __m256 *o) {
  *e = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
  *o = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* The inverse (moves bits only): [e0 e1 e4 e5 | e2 e3 e6 e7], the same for
 * odd, then unpack. */
XV_INLINE void xr_interleave(__m256 e, __m256 o, __m256 *a, __m256 *b) {
  const __m256 p0 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  const __m256 p1 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
  *a = _mm256_unpacklo_ps(p0, p1);
  *b = _mm256_unpackhi_ps(p0, p1);
}

#include "../x86/rowops_x86.h"
