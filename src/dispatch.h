/* Shared plumbing of the public entry points: argument checks, backend
 * resolution, and the f32/bf16/f16 <-> contiguous f32 staging that lets
 * kernels see only contiguous f32 buffers. */
#ifndef HMX_DISPATCH_H
#define HMX_DISPATCH_H

#include "backend.h"
#include "fast.h"
#include "internal.h"

/* Device memory (include/hadamix.h, "device memory"). A backend whose kernels
 * take CUDA device buffers also fills one hmx_device_ops (listed in
 * src/dispatch.c). Its kernels get the same argument structs as the host
 * ones, but every pointer in them is device memory, except the rope angle
 * table (host memory, which the backend copies, unless
 * hmx_rope_args.tab_on_device says otherwise), and the call is queued on
 * c->stream without waiting. For fwht and hadamard_mix, x and y point to
 * elements of c->io_dtype (f32, bf16 or f16; the float * type is then only
 * a carrier); every other buffer is f32. */
typedef struct hmx_device_call {
  void *stream;        /* cudaStream_t; NULL: the legacy default stream */
  hmx_dtype io_dtype;  /* fwht, hadamard_mix: dtype of x and y */
} hmx_device_call;

typedef struct hmx_device_ops {
  const hmx_backend *backend; /* the table whose kernels these are */
  /* Copy device memory to the host, ordered after the work queued on stream,
   * and wait for it (rope positions). */
  hmx_status (*to_host)(void *dst, const void *src, size_t bytes, void *stream);
  /* The data movement of a forward pass on the GPU (src/model_forward.c),
   * queued on stream without waiting: host memory to the device (the source
   * may be reused when it returns); a device-to-device copy of `rows` rows
   * of `width` bytes (pitches in bytes); x[i] += y[i] for i < n, one f32
   * addition each (device f32). */
  hmx_status (*to_device)(void *dst, const void *src, size_t bytes, void *stream);
  hmx_status (*copy2d)(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t rows, void *stream);
  hmx_status (*add)(float *x, const float *y, int64_t n, void *stream);
  /* Long-lived device memory of the current GPU (a model's weights copied by
   * hmx_model_prepare, read by the backend's host calls: hmx_qmatrix.dev):
   * allocated, filled from host memory before upload returns, freed. */
  hmx_status (*resident_alloc)(void **p, size_t bytes);
  hmx_status (*upload)(void *dst, const void *src, size_t bytes);
  void (*resident_free)(void *p);
  /* Whether p is memory of the calling thread's current GPU (a pass on the
   * GPU must not start with another device current: its kernels would read
   * memory they cannot reach) */
  int (*on_current_device)(const void *p);
  /* 16-bit tensors of the ops whose device kernels take f32 are staged on
   * the device (src/dev_stage.h): f32 scratch allocated and freed in the
   * order of stream, and n elements converted between f32 and bf16 / f16
   * (exact widening; rounding to nearest even, as hmx_f32_to_bf16 / _f16). */
  hmx_status (*stage_alloc)(void **p, size_t bytes, void *stream);
  hmx_status (*stage_free)(void *p, void *stream);
  hmx_status (*convert)(void *dst, hmx_dtype ddt, const void *src, hmx_dtype sdt, int64_t n,
                        void *stream);
  hmx_status (*fwht)(const hmx_fwht_args *a, const hmx_device_call *c);
  hmx_status (*hadamard_mix)(const hmx_hadamard_mix_args *a, const hmx_device_call *c);
  hmx_status (*gemm)(const hmx_gemm_args *a, const hmx_device_call *c);
  hmx_status (*rmsnorm)(const hmx_norm_args *a, const hmx_device_call *c);
  hmx_status (*layernorm)(const hmx_norm_args *a, const hmx_device_call *c);
  hmx_status (*rope)(const hmx_rope_args *a, const hmx_device_call *c);
  hmx_status (*attention)(const hmx_attention_args *a, const hmx_device_call *c);
  hmx_status (*swiglu)(const hmx_swiglu_args *a, const hmx_device_call *c);
} hmx_device_ops;

/* The device kernels of backend b, or NULL when it takes host memory only. */
const hmx_device_ops *hmx_device_ops_of(const hmx_backend *b);

/* Resolved execution context. */
typedef struct hmx_exec {
  const hmx_backend *be;
  int threads;
  int fallback; /* ops the backend lacks run on ref */
  const hmx_device_ops *dev; /* non-NULL: the call's tensors are device memory */
  hmx_device_call call;      /* with dev: stream and I/O dtype */
  hmx_tier tier;             /* resolved: HMX_TIER_EXACT or HMX_TIER_FAST */
  const hmx_fast_ops *fast;  /* fast tier on a backend that has one, else NULL */
} hmx_exec;

hmx_status hmx_exec_resolve(const hmx_context *ctx, const char *op, hmx_exec *ex);

/* Whether a call resolved to ex reads kept matrices from their GPU copies
 * (hmx_qmatrix.dev; hmx_model_prepare makes them for it): a host-memory
 * call on a backend with device kernels that decodes GGUF blocks (cuda). */
int hmx_exec_reads_gpu_copies(const hmx_exec *ex);

/* Where the call's tensors live (after their shapes and dtypes are checked).
 * ts[0..n-1] (NULL entries skipped) are all host or all device memory. For
 * device memory: each contiguous and element-aligned, float tensors f32
 * except those whose bit (1u << i) is set in lowp_ok, which may be bf16 or
 * f16 (and then all of one dtype, stored in ex->call.io_dtype); with
 * lowp_ok = HMX_PLACE_STAGED every float tensor may be bf16 or f16, each of
 * its own dtype (the op stages them, src/dev_stage.h; io_dtype stays f32);
 * with HMX_PLACE_STAGE_REST or'ed into a mask, the float tensors whose bit
 * is not set may be bf16 or f16 too, each of its own dtype, staged by the op
 * (hadamard_mix's alpha and beta).
 * The backend must take device memory (picked here when the caller chose
 * none). Sets ex->dev (NULL for host memory). */
#define HMX_PLACE_STAGED 0x80000000u
#define HMX_PLACE_STAGE_REST 0x40000000u
hmx_status hmx_exec_place(const hmx_context *ctx, const char *op, hmx_exec *ex,
                          const hmx_tensor *const *ts, const char *const *names, int n,
                          unsigned lowp_ok);

/* The device kernel `field` of ex->dev, or HMX_ERR_NOT_IMPLEMENTED (device
 * calls never fall back: the other backends cannot read device memory). */
#define HMX_PICK_DEVICE(ex, field, out)                                        \
  do {                                                                         \
    (out) = (ex).dev->field;                                                   \
    if (!(out))                                                                \
      return hmx_fail(HMX_ERR_NOT_IMPLEMENTED,                                 \
                      "%s: backend '%s' has no device-memory kernel for it",    \
                      #field, (ex).be->name);                                  \
  } while (0)

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

/* In the fast tier, replace the host kernel `out` by the backend's fast
 * kernel `field` when it has one (src/fast.h) and the call has more than
 * the table's exact_rows rows (`rows`: gemm M, swiglu T; INT64_MAX where
 * the rule does not apply); otherwise keep the exact one. Sets `is_fast`
 * (an int) to 1 when the fast kernel was taken. */
#define HMX_PICK_FAST(ex, field, out, is_fast, rows)                           \
  do {                                                                         \
    (is_fast) = 0;                                                             \
    if ((ex).fast && (ex).fast->field && (int64_t)(rows) > (int64_t)(ex).fast->exact_rows) { \
      (out) = (ex).fast->field;                                                \
      (is_fast) = 1;                                                           \
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
