/* What the tests on batches far larger than the caches share
 * (test_fwht_large.c, test_norm_large.c): the backend argument, the inputs,
 * and where a result first differs from ref's. */
#ifndef HMX_TEST_LARGE_BATCH_H
#define HMX_TEST_LARGE_BATCH_H

#include "hadamix.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The backend named by argv[1]; NULL with *code set to the exit code when
 * there is none (2: usage) or it cannot run here (77: ctest's skipped). */
static inline const hmx_backend *large_backend_arg(int argc, char **argv, const char *test,
                                                   int *code) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", test);
    *code = 2;
    return NULL;
  }
  const hmx_backend *be = hmx_backend_find(argv[1]);
  if (!be || !hmx_backend_available(be)) {
    printf("%s: backend %s not available here: skipped\n", test, argv[1]);
    *code = 77;
    return NULL;
  }
  return be;
}

/* x[0..n) uniform in [-1, 1) from `seed` (a 64-bit LCG). */
static inline void large_fill(float *x, int64_t n, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)(s >> 40) * 0x1p-23f - 1.0f;
  }
}

/* The first i < n where got[i] and want[i] differ in any bit, or -1. */
static inline int64_t large_first_diff(const float *got, const float *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0) return i;
  return -1;
}

#endif
