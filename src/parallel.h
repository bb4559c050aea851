/* Threading for the SIMD backends (never the reference). Threads split
 * independent work only (rows, heads, output tiles), so no bit depends on the
 * thread count (docs/NUMERICS.md, "What a backend may and may not do"). */
#ifndef HMX_PARALLEL_H
#define HMX_PARALLEL_H

#include <stdint.h>

/* Threads to use for `requested` (0 = the default: OpenMP's maximum, or 1
 * without OpenMP), never more than `work` items, never less than 1. */
int hmx_thread_count(int requested, int64_t work);

/* Test hook, for tests that compare 1 thread with several
 * (tests/test_differential.c): hmx_team_max() is the largest team that a
 * parallel region of the macros below, started by the calling thread, had
 * since the thread's last hmx_team_reset(), as omp_get_num_threads() said
 * inside the region; 0 when none ran (always without OpenMP). A run asked
 * for 2 threads may run on one (hmx_thread_count caps the count to the work;
 * OMP_THREAD_LIMIT or OMP_DYNAMIC may give a region fewer threads than it
 * asks for), and comparing it with the 1-thread run then compares nothing.
 * Kept per thread, written only by a team's thread 0 (the thread that
 * started the region), so callers on other threads do not mix in, and a
 * region costs one call per thread more. hmx_team_note(): what the regions
 * call to record it; returns 1. */
void hmx_team_reset(void);
int hmx_team_max(void);
int hmx_team_note(void);

/* `HMX_OMP_FOR(n)` before a for loop: an OpenMP parallel for with n threads
 * and a static schedule, or without OpenMP only a statement that uses n (no
 * unknown-pragma or unused-variable warnings; so never directly after an
 * unbraced if). The loop's iterations must be independent. */
#define HMX_PRAGMA(x) _Pragma(#x)
#if defined(_OPENMP)
/* Every region of these macros starts as HMX_OMP_TEAM_(n): a parallel region
 * whose block is a loop of one pass that first calls hmx_team_note (above),
 * so that each thread runs it once inside the region. A parallel for is then
 * that region around an `omp for ... nowait`: the region's end is the one
 * barrier that the combined construct had, and the loop's iterations, their
 * schedule and so every value are as before. */
#define HMX_OMP_TEAM_(n)                                                                           \
  HMX_PRAGMA(omp parallel num_threads(n))                                                          \
  for (int hmx_once_ = hmx_team_note(); hmx_once_; hmx_once_ = 0)
#define HMX_OMP_FOR(n) HMX_OMP_TEAM_(n) HMX_PRAGMA(omp for schedule(static) nowait)
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
  HMX_OMP_TEAM_(n) HMX_PRAGMA(omp for schedule(dynamic, chunk) nowait)
#define HMX_OMP_PARALLEL(n) HMX_OMP_TEAM_(n)
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
