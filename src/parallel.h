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

#endif
