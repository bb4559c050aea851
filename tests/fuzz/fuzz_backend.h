/* The backend that the fuzz targets which compare backends (fuzz_model_gguf.c,
 * fuzz_op_file.c) check against ref: HMX_FUZZ_BACKEND when set (e.g. "cuda"
 * on a GPU machine, where the best backend is a CPU one), else the best
 * backend of the machine. An unknown or unavailable name aborts the run: a
 * comparison asked for and silently skipped would pass without checking. */
#ifndef HMX_FUZZ_BACKEND_H
#define HMX_FUZZ_BACKEND_H

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
#endif
