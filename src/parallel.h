/* Threading for the SIMD backends (never the reference). Threads split
 * independent work only (rows, heads, output tiles), so no bit depends on the
 * thread count (docs/NUMERICS.md, "What a backend may and may not do"). */
#ifndef HMX_PARALLEL_H
#define HMX_PARALLEL_H

#include <stdint.h>

/* Threads to use for `requested` (0 = the default: OpenMP's maximum, or 1
 * without OpenMP), never more than `work` items, never less than 1. */
int hmx_thread_count(int requested, int64_t work);

#endif
