/* Plain C entry points to the AVX-512 canonical exp/sigmoid/SiLU
 * (vexp_avx512.h), for tests and tools: compiled with the avx512 flags, so
 * call them only when hmx_cpu_detect().avx512 is set. The tail (n mod 16)
 * goes through the same vector code with masked loads and stores. */
#include "vexp_avx512.h"

#include <stdint.h>

void hmx_avx512_expf_array(const float *x, float *y, int64_t n);
void hmx_avx512_sigmoidf_array(const float *x, float *y, int64_t n);
void hmx_avx512_siluf_array(const float *x, float *y, int64_t n);

#define HMX_V16_ARRAY(name, fn)                                            \
  void name(const float *x, float *y, int64_t n) {                         \
    int64_t i = 0;                                                         \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, fn(_mm512_loadu_ps(x + i))); \
    if (i < n) {                                                           \
      __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);                     \
      _mm512_mask_storeu_ps(y + i, k, fn(_mm512_maskz_loadu_ps(k, x + i))); \
    }                                                                      \
  }

HMX_V16_ARRAY(hmx_avx512_expf_array, hmx_v16_expf)
HMX_V16_ARRAY(hmx_avx512_sigmoidf_array, hmx_v16_sigmoidf)
HMX_V16_ARRAY(hmx_avx512_siluf_array, hmx_v16_siluf)
