/* hmx bench's peer for the avx2 vector exp: SLEEF's 8-lane
 * Sleef_expf8_u10avx2 over an array (compiled with the avx2 flags; called
 * only when the CPU has AVX2 + FMA). Whole vectors, then the tail through
 * one padded vector. */
#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

void hmx_bench_sleef_expf8(const float *x, float *y, int64_t n);
void hmx_bench_sleef_expf8(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Sleef_expf8_u10avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float t[8] = {0};
    memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
    _mm256_storeu_ps(t, Sleef_expf8_u10avx2(_mm256_loadu_ps(t)));
    memcpy(y + i, t, (size_t)(n - i) * sizeof(float));
  }
}
