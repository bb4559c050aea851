/* The fast kernels for any CPU (baseline flags): exp through SLEEF's SSE2
 * expf on x86-64 when SLEEF was found, else the exact tier's hmx_expf (both
 * within 1 ulp, the fast tier's bound for exp). */
#include <stdint.h>

#if defined(HMX_HAVE_SLEEF) && (defined(__x86_64__) || defined(_M_X64))
#include <emmintrin.h>
#include <sleef.h>
#define FK_ISA "sse2+sleef"
static void fk_vexp(float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, Sleef_expf4_u10sse2(_mm_loadu_ps(x + i)));
  for (; i < n; i++) x[i] = Sleef_expf_u10(x[i]);
}
#else
#include "hadamix.h"
#define FK_ISA "portable (hmx_expf)"
static void fk_vexp(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] = hmx_expf(x[i]);
}
#endif

#define FK_NAME hmx_fast_kernels_base
#include "fast_kernels_impl.h"
