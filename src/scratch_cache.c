/* The kept scratch block (src/scratch_cache.h): one slot, swapped with an
 * atomic exchange, so concurrent callers never share a block and no lock is
 * needed. Each block carries its size in a 64-byte header.
 *
 * A compiler without C11 atomics (__STDC_NO_ATOMICS__; or HMX_SCRATCH_NO_KEEP
 * defined, which tests/t_dispatch.cmake uses to test this path) keeps nothing:
 * every take allocates and every give frees, as the kernels did before the
 * slot existed: slower where pages come back fresh, never wrong. */
#include "scratch_cache.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__STDC_NO_ATOMICS__) && !defined(HMX_SCRATCH_NO_KEEP)
#define HMX_SCRATCH_NO_KEEP 1
#endif

#ifndef HMX_SCRATCH_KEEP_MAX
#define HMX_SCRATCH_KEEP_MAX ((size_t)64 << 20) /* larger blocks are freed at once */
#endif
#define HEADER 64 /* the block's size, and the buffer's 64-byte alignment */

/* A new block of at least `bytes` after its header, or NULL. */
static void *fresh_block(size_t bytes) {
  const size_t cap = (bytes + HEADER - 1) / HEADER * HEADER;
  unsigned char *base = aligned_alloc(HEADER, HEADER + (cap ? cap : HEADER));
  if (!base) return NULL;
  *(size_t *)base = cap;
  return base + HEADER;
}

#ifdef HMX_SCRATCH_NO_KEEP

int hmx_scratch_keeps(void) { return 0; }

void *hmx_scratch_take(size_t bytes) {
  if (bytes > SIZE_MAX - 2 * HEADER) return NULL;
  return fresh_block(bytes);
}

void hmx_scratch_give(void *p) {
  if (p) free((unsigned char *)p - HEADER);
}

#else
#include <stdatomic.h>

static _Atomic(unsigned char *) kept; /* a block's base (header), or NULL */

static size_t capacity_of(const unsigned char *base) { return *(const size_t *)base; }

int hmx_scratch_keeps(void) { return 1; }

void *hmx_scratch_take(size_t bytes) {
  if (bytes > SIZE_MAX - 2 * HEADER) return NULL;
  unsigned char *base = atomic_exchange(&kept, NULL);
  if (base && capacity_of(base) >= bytes) return base + HEADER;
  free(base);
  return fresh_block(bytes);
}

void hmx_scratch_give(void *p) {
  if (!p) return;
  unsigned char *base = (unsigned char *)p - HEADER;
  if (capacity_of(base) > HMX_SCRATCH_KEEP_MAX) {
    free(base);
    return;
  }
  unsigned char *old = atomic_exchange(&kept, base);
  if (!old) return;
  if (capacity_of(old) <= capacity_of(base)) {
    free(old);
    return;
  }
  /* The one we took out is larger: keep it instead, if the slot still holds
   * ours (else another caller has taken or replaced ours: drop the old). */
  unsigned char *expect = base;
  if (atomic_compare_exchange_strong(&kept, &expect, old)) free(base);
  else free(old);
}
#endif
