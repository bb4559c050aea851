/* See parallel.h. */
#include "parallel.h"
#include "hadamix.h"
#include "internal.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

int hmx_has_threads(void) {
#if defined(_OPENMP)
  return 1;
#else
  return 0;
#endif
}

int hmx_thread_count(int requested, int64_t work) {
  int n = requested;
  if (n <= 0) {
#if defined(_OPENMP)
    n = omp_get_max_threads();
#else
    n = 1;
#endif
  }
  if (work < n) n = work < 1 ? 1 : (int)work;
  return n < 1 ? 1 : n;
}

int hmx_thread_num(void) {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* The largest team of the regions this thread started since its last reset
 * (the test hook of parallel.h). */
static HMX_THREAD_LOCAL int team_max;

void hmx_team_reset(void) { team_max = 0; }

int hmx_team_max(void) { return team_max; }

int hmx_team_note(void) {
#if defined(_OPENMP)
  /* thread 0 is the thread that started the region: its own record */
  if (omp_get_thread_num() == 0 && omp_get_num_threads() > team_max)
    team_max = omp_get_num_threads();
#endif
  return 1;
}
