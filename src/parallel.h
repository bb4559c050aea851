/* Threading for the SIMD backends (never the reference). Threads split
 * independent work only (rows, heads, output tiles), so no bit depends on the
 * thread count (docs/NUMERICS.md, "What a backend may and may not do"). */
#ifndef HMX_PARALLEL_H
#define HMX_PARALLEL_H

#include <stdint.h>

/* Threads to use for `requested` (0 = the default: OpenMP's maximum, or 1
 * without OpenMP), never more than `work` items, never less than 1. */
int hmx_thread_count(int requested, int64_t work);

/* `HMX_OMP_FOR(n)` before a for loop: an OpenMP parallel for with n threads
 * and a static schedule, or nothing without OpenMP (no unknown-pragma
 * warnings). The loop's iterations must be independent. */
#define HMX_PRAGMA(x) _Pragma(#x)
#if defined(_OPENMP)
#define HMX_OMP_FOR(n) HMX_PRAGMA(omp parallel for num_threads(n) schedule(static))
#else
#define HMX_OMP_FOR(n)
#endif

/* `HMX_FOR_THREADS(n, t, body...)`: runs `body` for t = 0 .. n-1 like
 * `HMX_OMP_FOR(n) for (int t = 0; t < n; t++) { body }`, except that n = 1
 * runs it on the calling thread without entering a parallel region: libgomp
 * spends ~0.3 us on a one-thread region once a larger team exists (measured
 * on Zen 5), 6% of an fwht of 256 rows of 256 in L2. */
#define HMX_FOR_THREADS(n, t, ...)                                                                 \
  do {                                                                                             \
    const int hmx_nt_ = (n);                                                                       \
    if (hmx_nt_ <= 1) {                                                                            \
      const int t = 0;                                                                             \
      __VA_ARGS__                                                                                  \
    } else {                                                                                       \
      HMX_OMP_FOR(hmx_nt_)                                                                         \
      for (int t = 0; t < hmx_nt_; t++) {                                                          \
        __VA_ARGS__                                                                                \
      }                                                                                            \
    }                                                                                              \
  } while (0)

#endif
