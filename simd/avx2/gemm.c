/* avx2 gemm (docs/NUMERICS.md §gemm): the loop nest of simd/x86/gemm_x86.h
 * with 8-lane ymm vectors and a 6 x 16 microkernel (12 ymm accumulators,
 * 2 ymm of B, 1 broadcast of A: 15 of the 16 ymm registers).
 * Every output: acc = bias[j] or +0, then fma over p = 0 .. K-1 in order. */
#include "unroll.h"
#include "avx2_gemm.h"
#include "avx2_vec.h" /* xv_ loads of 16-bit weights (weights16_x86.h) */

#include <immintrin.h>

#define GX_VL 8
#define GX_NV 2
#define GX_MR 6
typedef __m256 gx_v;

#define gx_loadu(p) _mm256_loadu_ps(p)
#define gx_storeu(p, v) _mm256_storeu_ps((p), (v))
#define gx_bcast(p) _mm256_broadcast_ss(p)
#define gx_zero() _mm256_setzero_ps()
#define gx_fma(a, b, c) _mm256_fmadd_ps((a), (b), (c)) /* one IEEE fma per lane */

/* First n lanes (0 <= n <= 8): maskload/maskstore touch nothing past them. */
static inline __m256i gx_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define gx_loadu_n(p, n) _mm256_maskload_ps((p), gx_lanes(n))
#define gx_storeu_n(p, v, n) _mm256_maskstore_ps((p), gx_lanes(n), (v))

/* r[t] <- lane t of the old r[0..7] (an 8 x 8 transpose in registers):
 * unpack ps, unpack pd, then swap 128-bit halves. Copies only, no
 * arithmetic. */
static inline void gx_transpose_cols(__m256 r[8]) {
  __m256 t[8];
  HMX_UNROLL(4)
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4g + e]: rows 4g..4g+3, column 4L+e in 128-bit lane L. */
  HMX_UNROLL(2)
  for (int g = 0; g < 2; g++) {
    __m256d t0 = _mm256_castps_pd(t[4 * g]), t1 = _mm256_castps_pd(t[4 * g + 1]);
    __m256d t2 = _mm256_castps_pd(t[4 * g + 2]), t3 = _mm256_castps_pd(t[4 * g + 3]);
    r[4 * g + 0] = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
    r[4 * g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
    r[4 * g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
    r[4 * g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
  }
  HMX_UNROLL(4)
  for (int e = 0; e < 4; e++) {
    t[e] = _mm256_permute2f128_ps(r[e], r[4 + e], 0x20);
    t[4 + e] = _mm256_permute2f128_ps(r[e], r[4 + e], 0x31);
  }
  HMX_UNROLL(8)
  for (int i = 0; i < 8; i++) r[i] = t[i];
}

#include "../x86/gemm_x86.h"

GX_KERNEL_ROWS(1)
GX_KERNEL_ROWS(2)
GX_KERNEL_ROWS(3)
GX_KERNEL_ROWS(4)
GX_KERNEL_ROWS(5)
GX_KERNEL_ROWS(6)

static gx_kernel_fn const gx_kernels[GX_MR] = {gx_kernel_1, gx_kernel_2, gx_kernel_3,
                                               gx_kernel_4, gx_kernel_5, gx_kernel_6};

hmx_status hmx_avx2_gemm(const hmx_gemm_args *a) { return gx_gemm(a, gx_kernels); }
