/* Status codes and the per-thread error message. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

static HMX_THREAD_LOCAL char last_error[512];

static const char *const status_names[HMX_STATUS_COUNT] = {
    [HMX_OK] = "ok",
    [HMX_ERR_INVALID_ARGUMENT] = "invalid argument",
    [HMX_ERR_SHAPE] = "shape mismatch",
    [HMX_ERR_DTYPE] = "unsupported dtype",
    [HMX_ERR_UNSUPPORTED] = "unsupported",
    [HMX_ERR_NO_MEMORY] = "out of memory",
    [HMX_ERR_IO] = "I/O error",
    [HMX_ERR_FORMAT] = "malformed file",
    [HMX_ERR_NOT_FOUND] = "not found",
    [HMX_ERR_NOT_IMPLEMENTED] = "not implemented by this backend",
    [HMX_ERR_BACKEND_UNAVAILABLE] = "backend not available on this machine",
    [HMX_ERR_INTERNAL] = "internal error",
};

const char *hmx_status_string(hmx_status s) {
  if ((int)s < 0 || s >= HMX_STATUS_COUNT) return "unknown status";
  return status_names[s];
}

const char *hmx_last_error(void) { return last_error; }

void hmx_clear_error(void) { last_error[0] = '\0'; }

hmx_status hmx_fail(hmx_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

int hmx_mul_size(size_t a, size_t b, size_t *out) {
  if (a != 0 && b > (size_t)-1 / a) return 0;
  *out = a * b;
  return 1;
}

void *hmx_alloc_array(size_t n, size_t size) {
  size_t bytes;
  if (!hmx_mul_size(n, size, &bytes)) return NULL;
  return malloc(bytes ? bytes : 1);
}
