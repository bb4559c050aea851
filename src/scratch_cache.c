/* The kept scratch block (src/scratch_cache.h): one slot, swapped with an
 * atomic exchange, so concurrent callers never share a block and no lock is
 * needed. Each block carries its size in a 64-byte header. */
#include "scratch_cache.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef HMX_SCRATCH_KEEP_MAX
#define HMX_SCRATCH_KEEP_MAX ((size_t)64 << 20) /* larger blocks are freed at once */
#endif
#define HEADER 64 /* the block's size, and the buffer's 64-byte alignment */

static _Atomic(unsigned char *) kept; /* a block's base (header), or NULL */

static size_t capacity_of(const unsigned char *base) { return *(const size_t *)base; }

void *hmx_scratch_take(size_t bytes) {
  if (bytes > SIZE_MAX - 2 * HEADER) return NULL;
  unsigned char *base = atomic_exchange(&kept, NULL);
  if (base && capacity_of(base) >= bytes) return base + HEADER;
  free(base);
  const size_t cap = (bytes + HEADER - 1) / HEADER * HEADER;
  base = aligned_alloc(HEADER, HEADER + (cap ? cap : HEADER));
  if (!base) return NULL;
  *(size_t *)base = cap;
  return base + HEADER;
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
