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
 * and a static schedule, or without OpenMP only a statement that uses n (no
 * unknown-pragma or unused-variable warnings; so never directly after an
 * unbraced if). The loop's iterations must be independent. */
#define HMX_PRAGMA(x) _Pragma(#x)
#if defined(_OPENMP)
#define HMX_OMP_FOR(n) HMX_PRAGMA(omp parallel for num_threads(n) schedule(static))
#else
#define HMX_OMP_FOR(n) (void)(n); /* a statement: n is then used, with no warning */
#endif

/* `HMX_OMP_FOR_CHUNKS(n, chunk)` before a for loop: as HMX_OMP_FOR, but the
 * iterations go `chunk` at a time to whichever thread is free (for loops
 * whose chunks share data, e.g. one weight panel per chunk, and where a
 * fixed split ends apart when one CPU runs slower).
 *
 * A team of n threads sharing work through OpenMP's work-sharing loops:
 * `HMX_OMP_PARALLEL(n) { ... }` runs the block on n threads; inside it,
 * `HMX_OMP_FOR_DYNAMIC` before a for loop hands its iterations out one at a
 * time to whichever thread is free, and ends in a barrier that every thread
 * of the team reaches (so every thread must reach the loop). Without OpenMP
 * the block runs once and every loop runs whole, in order.
 * `HMX_OMP_FOR_STATIC_NOWAIT` hands them out in one fixed range per thread,
 * thread t's range the same in every call (so that what a thread's cache
 * holds from the last call, e.g. its columns of B, is its own again), and
 * has no barrier at its end: for the team's last loop, whose end the
 * region's end waits for anyway (a parallel for costs one barrier, and so
 * does this). hmx_thread_num(): this thread's number in the team (0 without
 * OpenMP). */
#if defined(_OPENMP)
#define HMX_OMP_FOR_CHUNKS(n, chunk) \
  HMX_PRAGMA(omp parallel for num_threads(n) schedule(dynamic, chunk))
#define HMX_OMP_PARALLEL(n) HMX_PRAGMA(omp parallel num_threads(n))
#define HMX_OMP_FOR_DYNAMIC HMX_PRAGMA(omp for schedule(dynamic, 1))
#define HMX_OMP_FOR_STATIC_NOWAIT HMX_PRAGMA(omp for schedule(static) nowait)
#else
#define HMX_OMP_FOR_CHUNKS(n, chunk) (void)(n), (void)(chunk);
#define HMX_OMP_PARALLEL(n) (void)(n);
#define HMX_OMP_FOR_DYNAMIC
#define HMX_OMP_FOR_STATIC_NOWAIT
#endif
int hmx_thread_num(void);

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
