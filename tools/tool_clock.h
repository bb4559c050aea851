/* The clock and the sort order that the standalone benchmark tools share
 * (tools/bench_layout.c, tools/bench_decode_ops.c, tools/x86/fwht_ab.c,
 * tools/x86/gemv_prefetch_ab.c, tools/x86/decode_next_ab.c,
 * tools/x86/read_order_probe.c, tools/x86/kernel_ab.c, tools/x86/store_probe.c).
 * Header only. */
#ifndef HMX_TOOLS_TOOL_CLOCK_H
#define HMX_TOOLS_TOOL_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (POSIX: the includer defines
 * _POSIX_C_SOURCE 200809L before any header). */
static inline double hmx_tool_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort's order for doubles, ascending. */
static inline int hmx_tool_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
