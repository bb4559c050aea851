/* FUZZ_ASSERT(cond): a property of a fuzz target. A violation prints the
 * condition, where it is, and hadamix's last error message, then aborts,
 * which libFuzzer reports as a crash (and fuzz_replay.c as a failed test). */
#ifndef HMX_FUZZ_ASSERT_H
#define HMX_FUZZ_ASSERT_H

#include "hadamix.h"

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d: property failed: %s (last error: %s)\n", __FILE__, __LINE__,   \
              #cond, hmx_last_error());                                                      \
      abort();                                                                               \
    }                                                                                        \
  } while (0)

#endif
