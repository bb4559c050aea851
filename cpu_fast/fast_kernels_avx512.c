/* The fast kernels for AVX-512 CPUs: compiled with AVX-512 flags (the
 * portable C of fast_kernels_impl.h vectorizes 16 wide, with fma contraction
 * allowed in this fast-tier file only) and exp through SLEEF's 16-lane
 * Sleef_expf16_u10avx512f (max error 1.0 ulp). Built only with SLEEF. */
#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>

#define FK_ISA "avx512+sleef"
static void fk_vexp(float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 k = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    __m512 v = Sleef_expf16_u10avx512f(_mm512_maskz_loadu_ps(k, x + i));
    _mm512_mask_storeu_ps(x + i, k, v);
  }
}

#define FK_NAME hmx_fast_kernels_avx512
#include "fast_kernels_impl.h"
