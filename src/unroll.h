/* HMX_UNROLL(n): unroll the next loop completely. For the vector kernels'
 * loops over registers, stages and tiles whose trip counts are compile-time
 * constants once the always-inline helpers are inlined (at most n), so that
 * their arrays of vector registers stay in registers.
 *
 * GCC: `#pragma GCC unroll n` does exactly that. Clang reads the same
 * pragma as "unroll by n", and applies it to an always-inline helper's
 * loop before the caller's constants reach it: a partial unroll with a
 * run-time remainder, after which the register arrays stayed on the stack
 * (the avx512 fwht object built with clang 14 had 8313 stack loads and
 * stores of zmm registers against GCC's 2332; its fwht ran at 0.6-1.0x
 * FFHT's speed for n >= 1024 and the avx2 one at 0.3-0.5x, where the GCC
 * build runs at 1.9-2.8x and 1.3-2.0x: docs/results/session27).
 * `clang loop unroll(full)` waits until the trip count is known. Neither
 * changes any arithmetic. */
#ifndef HMX_UNROLL_H
#define HMX_UNROLL_H

#include "parallel.h" /* HMX_PRAGMA */

#if defined(__clang__)
#define HMX_UNROLL(n) HMX_PRAGMA(clang loop unroll(full))
#elif defined(__GNUC__)
#define HMX_UNROLL(n) HMX_PRAGMA(GCC unroll n)
#else
#define HMX_UNROLL(n)
#endif

/* HMX_UNROLL_BY(n): unroll the next loop, whose trip count is known only at
 * run time, by n (a remainder loop does the rest): for hot loops whose body
 * is short beside their counter and branch. No change of arithmetic. */
#if defined(__clang__)
#define HMX_UNROLL_BY(n) HMX_PRAGMA(clang loop unroll_count(n))
#elif defined(__GNUC__)
#define HMX_UNROLL_BY(n) HMX_PRAGMA(GCC unroll n)
#else
#define HMX_UNROLL_BY(n)
#endif

#endif
