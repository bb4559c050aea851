/* Plain C entry points to the AVX2 canonical exp/sigmoid/SiLU (vexp_avx2.h),
 * for tests and tools: compiled with the avx2 flags, so call them only when
 * hmx_cpu_detect().avx2_fma is set. The tail (n mod 8) goes through the same
 * vector code on a zero-padded copy. */
#include "vexp_avx2.h"

#include <stdint.h>
#include <string.h>

void hmx_avx2_expf_array(const float *x, float *y, int64_t n);
void hmx_avx2_sigmoidf_array(const float *x, float *y, int64_t n);
void hmx_avx2_siluf_array(const float *x, float *y, int64_t n);

#define HMX_V8_ARRAY(name, fn)                                             \
  void name(const float *x, float *y, int64_t n) {                         \
    int64_t i = 0;                                                         \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, fn(_mm256_loadu_ps(x + i))); \
    if (i < n) {                                                           \
      float tx[8] = {0}, ty[8];                                            \
      memcpy(tx, x + i, (size_t)(n - i) * sizeof(float));                  \
      _mm256_storeu_ps(ty, fn(_mm256_loadu_ps(tx)));                       \
      memcpy(y + i, ty, (size_t)(n - i) * sizeof(float));                  \
    }                                                                      \
  }

HMX_V8_ARRAY(hmx_avx2_expf_array, hmx_v8_expf)
HMX_V8_ARRAY(hmx_avx2_sigmoidf_array, hmx_v8_sigmoidf)
HMX_V8_ARRAY(hmx_avx2_siluf_array, hmx_v8_siluf)
