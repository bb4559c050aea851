/* The thread counts a test compares for bit-equality (1 against more). */
#ifndef HMX_TEST_THREADS_H
#define HMX_TEST_THREADS_H
#include "hadamix.h"

#include <stdio.h>

/* `want`, the most threads a test runs next to 1, where this build can run a
 * call on several threads; 1 where it cannot (built without OpenMP: a run
 * "with 2 threads" would be one thread again, and comparing it with the
 * first could not fail). The first call there says so on stdout. */
static inline int test_thread_max(int want) {
  static int said = 0;
  if (hmx_has_threads()) return want;
  if (!said) {
    printf("threads: built without OpenMP: the comparisons of 1 with %d threads are not run\n",
           want);
    said = 1;
  }
  return 1;
}
#endif
