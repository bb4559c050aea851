/* The fast kernels for AVX2 + FMA CPUs: compiled with AVX2 flags (the
 * portable C of fast_kernels_impl.h vectorizes 8 wide, with fma contraction
 * allowed in this fast-tier file only) and exp through SLEEF's 8-lane
 * Sleef_expf8_u10avx2 (max error 1.0 ulp). Built only with SLEEF. */
#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>

#define FK_ISA "avx2+sleef"
static void fk_vexp(float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, Sleef_expf8_u10avx2(_mm256_loadu_ps(x + i)));
  for (; i < n; i++) x[i] = Sleef_expf_u10(x[i]);
}

#define FK_NAME hmx_fast_kernels_avx2
#include "fast_kernels_impl.h"
