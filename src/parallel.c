/* See parallel.h. */
#include "parallel.h"
#include "hadamix.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

int hmx_has_threads(void) {
#if defined(_OPENMP)
  return 1;
#else
  return 0;
#endif
}

int hmx_thread_count(int requested, int64_t work) {
  int n = requested;
  if (n <= 0) {
#if defined(_OPENMP)
    n = omp_get_max_threads();
#else
    n = 1;
#endif
  }
  if (work < n) n = work < 1 ? 1 : (int)work;
  return n < 1 ? 1 : n;
}

int hmx_thread_num(void) {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}
