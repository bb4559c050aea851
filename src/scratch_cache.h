/* One kept scratch block for the SIMD backends: the pages of a buffer that a
 * kernel needs on every call stay mapped and touched between calls.
 *
 * Why: a buffer allocated and freed on every call can come back as fresh
 * pages each time (glibc gave an OpenMP worker's arena new pages on every
 * call), and on a VM each first touch of a page cost 2.6-3.3 us (session 60:
 * 96 faults, about 0.3 ms, on the worker of a two-thread 64 x 768 x 768
 * gemm that takes 0.5 ms). */
#ifndef HMX_SCRATCH_CACHE_H
#define HMX_SCRATCH_CACHE_H

#include <stddef.h>

/* A 64-byte aligned buffer of at least `bytes`, or NULL when none can be
 * had. It is the kept block when that is free and large enough (taken, so a
 * concurrent caller gets another), else a new one. */
void *hmx_scratch_take(size_t bytes);

/* Give back a buffer from hmx_scratch_take (NULL: nothing). The larger of it
 * and the kept block is kept, up to HMX_SCRATCH_KEEP_MAX bytes; the other is
 * freed. The kept block lives until the process ends. */
void hmx_scratch_give(void *p);

/* 1 when a block is kept between calls, 0 when this build keeps none (no
 * C11 atomics: every take allocates, every give frees). */
int hmx_scratch_keeps(void);

#endif
