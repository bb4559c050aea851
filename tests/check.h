/* Minimal test assertions: count failures, print where, never abort early. */
#ifndef HMX_TEST_CHECK_H
#define HMX_TEST_CHECK_H
#include <stdio.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    check_count++;                                                         \
    if (!(cond)) {                                                         \
      check_failures++;                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

/* Print the summary line and return the process exit code. */
static inline int check_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}
#endif
