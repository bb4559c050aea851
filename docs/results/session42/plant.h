/* a planted fault for the A/B harness's bit check: every multiply off by a little */
#include <immintrin.h>
static inline __m256 hx_planted_mul(__m256 a, __m256 b) {
  return _mm256_add_ps(_mm256_mul_ps(a, b), _mm256_set1_ps(1e-3f));
}
#define _mm256_mul_ps hx_planted_mul
