/* Internal helpers shared by the core, the reference and the backends. */
#ifndef HMX_INTERNAL_H
#define HMX_INTERNAL_H

#include "hadamix.h"
#include <stdarg.h>

#if defined(__GNUC__) || defined(__clang__)
#define HMX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HMX_PRINTF(a, b)
#endif

/* Per-thread storage (C11's _Thread_local; MSVC spells it its own way). */
#if defined(_MSC_VER)
#define HMX_THREAD_LOCAL __declspec(thread)
#else
#define HMX_THREAD_LOCAL _Thread_local
#endif

/* Record a detail message for hmx_last_error() and return `s`. */
hmx_status hmx_fail(hmx_status s, const char *fmt, ...) HMX_PRINTF(2, 3);
/* Clear the thread's error message (called on entry to public functions). */
void hmx_clear_error(void);

/* Overflow-checked size arithmetic: return 0 on overflow. */
int hmx_mul_size(size_t a, size_t b, size_t *out);
/* malloc of n * size bytes, NULL on overflow or failure (never for n == 0). */
void *hmx_alloc_array(size_t n, size_t size);

#endif
