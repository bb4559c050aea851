/* For the fuzz targets that compare backends (fuzz_model_gguf.c,
 * fuzz_op_file.c): which backend they check against ref, and the check.
 * The backend is HMX_FUZZ_BACKEND when set (e.g. "cuda" on a GPU machine,
 * where the best backend is a CPU one), else the best backend of the machine.
 * An unknown or unavailable name aborts the run: a comparison asked for and
 * silently skipped would pass without checking. */
#ifndef HMX_FUZZ_BACKEND_H
#define HMX_FUZZ_BACKEND_H

#include "compare.h"
#include "hadamix.h"

#include <stdio.h>
#include <stdlib.h>

static const hmx_backend *fuzz_backend(void) {
  const char *name = getenv("HMX_FUZZ_BACKEND");
  if (!name || !*name) return hmx_backend_best();
  const hmx_backend *b = hmx_backend_find(name);
  if (!b || !hmx_backend_available(b)) {
    fprintf(stderr, "HMX_FUZZ_BACKEND=%s: %s\n", name,
            b ? hmx_backend_unavailable_reason(b) : "no such backend");
    abort();
  }
  return b;
}

/* The exact-tier rule between a reference tensor and another backend's
 * (hmx_compare: same bits, any NaN equal to any NaN); on a difference, says
 * where (`what` names the two) before the caller's FUZZ_ASSERT aborts. */
static int fuzz_same_bits(const hmx_tensor *ref_out, const hmx_tensor *other, const char *what) {
  hmx_diff_stats st;
  const hmx_status s = hmx_compare(other, ref_out, &st);
  if (s == HMX_OK && st.differing == 0) return 1;
  fprintf(stderr, "%s: %s, %lld elements differ, the first at %lld\n", what,
          hmx_status_string(s), (long long)st.differing, (long long)st.first_index);
  return 0;
}
#endif
