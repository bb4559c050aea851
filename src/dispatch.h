/* Shared plumbing of the public entry points: argument checks, backend
 * resolution, and the f32/bf16/f16 <-> contiguous f32 staging that lets
 * kernels see only contiguous f32 buffers. */
#ifndef HMX_DISPATCH_H
#define HMX_DISPATCH_H

#include "backend.h"
#include "internal.h"

/* Resolved execution context. */
typedef struct hmx_exec {
  const hmx_backend *be;
  int threads;
  int fallback; /* ops the backend lacks run on ref */
} hmx_exec;

hmx_status hmx_exec_resolve(const hmx_context *ctx, const char *op, hmx_exec *ex);

/* Pick the kernel `field` of the resolved backend. When the backend leaves it
 * NULL and fallback is allowed, take it from the highest-priority available
 * backend that has it (ref at worst: every backend gives the same bits). */
#define HMX_PICK(ex, field, out)                                               \
  do {                                                                         \
    (out) = (ex).be->field;                                                    \
    if (!(out)) {                                                              \
      if (!(ex).fallback)                                                      \
        return hmx_fail(HMX_ERR_NOT_IMPLEMENTED, "%s: backend '%s' does not implement it", \
                        #field, (ex).be->name);                                \
      int prio_ = -1;                                                          \
      for (int i_ = 0; i_ < hmx_backends_count; i_++) {                        \
        const hmx_backend *b_ = hmx_backends[i_];                              \
        if (b_->field && b_->priority > prio_ && hmx_backend_available(b_)) {  \
          (out) = b_->field;                                                   \
          prio_ = b_->priority;                                                \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* A float tensor of exactly `rank` dims (f32, bf16 or f16) with valid shape
 * and strides; `optional` allows t == NULL. */
hmx_status hmx_check_float(const char *op, const char *name, const hmx_tensor *t, int rank);
hmx_status hmx_check_int32(const char *op, const char *name, const hmx_tensor *t, int rank);
/* Shape equality of dimension i of t with `want`. */
hmx_status hmx_check_dim(const char *op, const char *name, const hmx_tensor *t, int i,
                         int64_t want, const char *what);
/* Reject output `out` overlapping input `in` in memory, unless `in_place_ok`
 * and the two are the same view. in may be NULL. */
hmx_status hmx_check_alias(const char *op, const char *out_name, const hmx_tensor *out,
                           const char *in_name, const hmx_tensor *in, int in_place_ok);

/* A contiguous f32 staging buffer: either the caller's memory or owned. */
typedef struct hmx_fbuf {
  float *p;
  int owned;
  int64_t n;
} hmx_fbuf;

hmx_status hmx_stage_in(const hmx_tensor *t, hmx_fbuf *b);  /* t may be NULL -> p NULL */
hmx_status hmx_stage_out(const hmx_tensor *t, hmx_fbuf *b);
/* Write the staged result to t (no-op when b is t's own memory). */
void hmx_commit_out(const hmx_tensor *t, const hmx_fbuf *b);
void hmx_fbuf_release(hmx_fbuf *b);

/* Element offsets of a (possibly strided) tensor, in row-major order. */
int hmx_tensor_is_contiguous(const hmx_tensor *t);

#endif
