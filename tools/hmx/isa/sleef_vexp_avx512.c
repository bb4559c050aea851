/* hmx bench's peer for the avx512 vector exp: SLEEF's 16-lane
 * Sleef_expf16_u10avx512f over an array (compiled with the avx512 flags;
 * called only when the CPU has AVX-512). The same loop shape as
 * hmx_avx512_expf_array: whole vectors, then a masked tail. */
#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>

void hmx_bench_sleef_expf16(const float *x, float *y, int64_t n);
void hmx_bench_sleef_expf16(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 k = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, k, Sleef_expf16_u10avx512f(_mm512_maskz_loadu_ps(k, x + i)));
  }
}
