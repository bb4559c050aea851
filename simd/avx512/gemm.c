/* avx512 gemm (docs/NUMERICS.md §gemm): the loop nest of simd/x86/gemm_x86.h
 * with 16-lane zmm vectors and an 8 x 32 microkernel (16 zmm accumulators,
 * 2 zmm of B, 1 broadcast of A; 12 x 32 makes gcc 12 spill in the p loop).
 * Every output: acc = bias[j] or +0, then fma over p = 0 .. K-1 in order. */
#include "unroll.h"
#include "avx512_gemm.h"
#include "avx512_vec.h" /* xv_ loads of 16-bit weights (weights16_x86.h) */

#include <immintrin.h>

#define GX_VL 16
#define GX_NV 2
#ifndef GX_MR
#define GX_MR 8
#endif
typedef __m512 gx_v;

#define gx_loadu(p) _mm512_loadu_ps(p)
#define gx_storeu(p, v) _mm512_storeu_ps((p), (v))
#define gx_bcast(p) _mm512_set1_ps(*(p))
#define gx_zero() _mm512_setzero_ps()
#define gx_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c)) /* one IEEE fma per lane */

/* First n lanes (0 <= n <= 16): masked, so nothing past them is touched. */
static inline __mmask16 gx_lanes(int n) { return (__mmask16)((1u << n) - 1u); }
#define gx_loadu_n(p, n) _mm512_maskz_loadu_ps(gx_lanes(n), (p))
#define gx_storeu_n(p, v, n) _mm512_mask_storeu_ps((p), gx_lanes(n), (v))

/* r[t] <- lane t of the old r[0..15] (a 16 x 16 transpose in registers):
 * unpack ps, unpack pd, then a 4 x 4 transpose of 128-bit lanes. Copies
 * only, no arithmetic. The loops are unrolled so that r and t stay in
 * registers. */
static inline void gx_transpose_cols(__m512 r[16]) {
  __m512 t[16];
  HMX_UNROLL(8)
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4g + e]: rows 4g..4g+3, column 4L+e in 128-bit lane L. */
  HMX_UNROLL(4)
  for (int g = 0; g < 4; g++) {
    __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
    __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
    r[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    r[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    r[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    r[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  HMX_UNROLL(4)
  for (int e = 0; e < 4; e++) {
    __m512 v0 = _mm512_shuffle_f32x4(r[e], r[4 + e], 0x88);
    __m512 v1 = _mm512_shuffle_f32x4(r[e], r[4 + e], 0xDD);
    __m512 v2 = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0x88);
    __m512 v3 = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0xDD);
    t[0 + e] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    t[8 + e] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    t[4 + e] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    t[12 + e] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
  HMX_UNROLL(16)
  for (int i = 0; i < 16; i++) r[i] = t[i];
}

#include "../x86/gemm_x86.h"

GX_KERNEL_ROWS(1)
GX_KERNEL_ROWS(2)
GX_KERNEL_ROWS(3)
GX_KERNEL_ROWS(4)
GX_KERNEL_ROWS(5)
GX_KERNEL_ROWS(6)
#if GX_MR > 6
GX_KERNEL_ROWS(7)
GX_KERNEL_ROWS(8)
#endif
#if GX_MR > 8
GX_KERNEL_ROWS(9)
GX_KERNEL_ROWS(10)
GX_KERNEL_ROWS(11)
GX_KERNEL_ROWS(12)
#endif
#if GX_MR > 12
#error "add kernels for GX_MR > 12"
#endif

static gx_kernel_fn const gx_kernels[GX_MR] = {
    gx_kernel_1, gx_kernel_2, gx_kernel_3, gx_kernel_4, gx_kernel_5, gx_kernel_6,
#if GX_MR > 6
    gx_kernel_7, gx_kernel_8,
#endif
#if GX_MR > 8
    gx_kernel_9, gx_kernel_10, gx_kernel_11, gx_kernel_12,
#endif
};

hmx_status hmx_avx512_gemm(const hmx_gemm_args *a) { return gx_gemm(a, gx_kernels); }
