/* Argument checks, backend resolution and dtype/stride staging. */
#include "dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- device memory */

/* Per thread, like CUDA's current device: a library call has no other place
 * to take it from (hmx_context has no stream field: each field added breaks
 * positional initialisers once more). */
static HMX_THREAD_LOCAL void *cuda_stream;

void hmx_set_cuda_stream(void *stream) { cuda_stream = stream; }
void *hmx_get_cuda_stream(void) { return cuda_stream; }

/* The device-memory kernels of each backend that has them: one line per
 * such backend, like src/backend_registry.c. */
#ifdef HMX_WITH_CUDA
extern const hmx_device_ops hmx_cuda_device_ops;
#endif
static const hmx_device_ops *const device_tables[] = {
#ifdef HMX_WITH_CUDA
    &hmx_cuda_device_ops,
#endif
    NULL};

const hmx_device_ops *hmx_device_ops_of(const hmx_backend *b) {
  for (int i = 0; device_tables[i]; i++)
    if (device_tables[i]->backend == b) return device_tables[i];
  return NULL;
}

static int backend_chosen(const hmx_context *ctx) {
  if (ctx && ctx->backend) return 1;
  const char *env = getenv("HMX_BACKEND");
  return env && *env && strcmp(env, "best") != 0;
}

hmx_status hmx_exec_place(const hmx_context *ctx, const char *op, hmx_exec *ex,
                          const hmx_tensor *const *ts, const char *const *names, int n,
                          unsigned lowp_ok) {
  ex->dev = NULL;
  ex->call.stream = NULL;
  ex->call.io_dtype = HMX_F32;
  int dev = -1, host = -1;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) continue;
    if (ts[i]->memory == HMX_MEMORY_CUDA) {
      if (dev < 0) dev = i;
    } else if (host < 0) {
      host = i;
    }
  }
  if (dev < 0) return HMX_OK;
  if (host >= 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "%s: tensor '%s' is in device memory but '%s' is on the host (one call "
                    "takes all its tensors from one place)", op, names[dev], names[host]);
  int have = 0;
  hmx_dtype io = HMX_F32;
  for (int i = 0; i < n; i++) {
    const hmx_tensor *t = ts[i];
    if (!t) continue;
    if (!hmx_tensor_is_contiguous(t))
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                      "%s: device tensor '%s' must be contiguous (strided views are staged on "
                      "the host only)", op, names[i]);
    size_t es = hmx_dtype_size(t->dtype);
    if (es && (uintptr_t)t->data % es)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                      "%s: device tensor '%s' is not aligned to its %zu-byte elements", op,
                      names[i], es);
    int low = t->dtype == HMX_BF16 || t->dtype == HMX_F16;
    if (lowp_ok == HMX_PLACE_STAGED) continue; /* each its own dtype, staged by the op */
    if (!(lowp_ok >> i & 1u)) {
      if (low && !(lowp_ok & HMX_PLACE_STAGE_REST))
        return hmx_fail(HMX_ERR_DTYPE,
                        "%s: device tensor '%s' is %s, which %s does not take in device "
                        "memory", op, names[i], hmx_dtype_name(t->dtype), op);
      continue;
    }
    if (!have) {
      io = t->dtype;
      have = 1;
    } else if (t->dtype != io) {
      return hmx_fail(HMX_ERR_DTYPE, "%s: device tensor '%s' is %s but x is %s (in device "
                      "memory x and y have one dtype)", op, names[i],
                      hmx_dtype_name(t->dtype), hmx_dtype_name(io));
    }
  }
  const hmx_device_ops *d = hmx_device_ops_of(ex->be);
  if (!d) {
    if (backend_chosen(ctx))
      return hmx_fail(HMX_ERR_UNSUPPORTED,
                      "%s: backend '%s' takes host memory only; device tensors need a backend "
                      "with device kernels (cuda)", op, ex->be->name);
    for (int i = 0; device_tables[i]; i++)
      if (hmx_backend_available(device_tables[i]->backend) &&
          (!d || device_tables[i]->backend->priority > d->backend->priority))
        d = device_tables[i];
    if (!d) {
      const char *why = device_tables[0]
                            ? hmx_backend_unavailable_reason(device_tables[0]->backend)
                            : "built without CUDA";
      return hmx_fail(HMX_ERR_BACKEND_UNAVAILABLE,
                      "%s: device tensors, but no backend that takes device memory can run "
                      "here (%s)", op, *why ? why : "no usable CUDA device");
    }
    ex->be = d->backend;
    /* the fast tier of the backend that runs the call, not the default's */
    ex->fast = ex->tier == HMX_TIER_FAST ? hmx_fast_ops_of(ex->be) : NULL;
  }
  ex->dev = d;
  ex->call.stream = cuda_stream;
  ex->call.io_dtype = io;
  return HMX_OK;
}

/* ---------------------------------------------------------------- checks */

int hmx_exec_reads_gpu_copies(const hmx_exec *ex) {
  return !ex->dev && (ex->be->weights16 & HMX_WQ_GEMM) && hmx_device_ops_of(ex->be) != NULL;
}

hmx_status hmx_exec_resolve(const hmx_context *ctx, const char *op, hmx_exec *ex) {
  hmx_clear_error();
  ex->dev = NULL;
  ex->call.stream = NULL;
  ex->call.io_dtype = HMX_F32;
  ex->be = ctx && ctx->backend ? ctx->backend : hmx_backend_default();
  if (!ex->be) return HMX_ERR_NOT_FOUND; /* message set by hmx_backend_default */
  if (!hmx_backend_available(ex->be)) {
    const char *why = hmx_backend_unavailable_reason(ex->be);
    return hmx_fail(HMX_ERR_BACKEND_UNAVAILABLE, "%s: backend '%s' cannot run on this machine%s%s",
                    op, ex->be->name, *why ? ": " : "", why);
  }
  ex->threads = ctx ? ctx->threads : 0;
  if (ex->threads < 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: threads must be >= 0 (got %d)", op,
                    ex->threads);
  ex->fallback = ctx ? ctx->allow_ref_fallback : 1;
  hmx_status ts = hmx_tier_resolve(ctx, &ex->tier);
  if (ts != HMX_OK) return ts;
  ex->fast = ex->tier == HMX_TIER_FAST ? hmx_fast_ops_of(ex->be) : NULL;
  return HMX_OK;
}

static int is_float(hmx_dtype d) { return d == HMX_F32 || d == HMX_BF16 || d == HMX_F16; }

static hmx_status check_common(const char *op, const char *name, const hmx_tensor *t, int rank) {
  if (!t) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: tensor '%s' is NULL", op, name);
  if ((int)t->dtype < 0 || t->dtype >= HMX_DTYPE_COUNT)
    return hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%s' has an invalid dtype (%d)", op, name,
                    (int)t->dtype);
  if (t->memory != HMX_MEMORY_HOST && t->memory != HMX_MEMORY_CUDA)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has an invalid memory kind (%d)",
                    op, name, (int)t->memory);
  if (t->ndim != rank)
    return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' must have %d dims, has %d", op, name, rank,
                    t->ndim);
  int64_t n = hmx_tensor_numel(t);
  if (n < 0)
    return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' has a negative or overflowing shape", op,
                    name);
  size_t bytes;
  if (!hmx_mul_size((size_t)n, hmx_dtype_size(t->dtype), &bytes))
    return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' is too large", op, name);
  int all_zero = 1;
  for (int i = 0; i < t->ndim; i++) all_zero &= t->stride[i] == 0;
  if (!all_zero)
    for (int i = 0; i < t->ndim; i++)
      if (t->stride[i] <= 0)
        return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                        "%s: tensor '%s' stride[%d] = %lld (strides must be positive, or all 0 "
                        "for contiguous)", op, name, i, (long long)t->stride[i]);
  if (n > 0 && !t->data)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has NULL data", op, name);
  return HMX_OK;
}

hmx_status hmx_check_float(const char *op, const char *name, const hmx_tensor *t, int rank) {
  hmx_status s = check_common(op, name, t, rank);
  if (s != HMX_OK) return s;
  if (!is_float(t->dtype))
    return hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%s' must be f32, bf16 or f16, is %s", op, name,
                    hmx_dtype_name(t->dtype));
  return HMX_OK;
}

hmx_status hmx_check_int32(const char *op, const char *name, const hmx_tensor *t, int rank) {
  hmx_status s = check_common(op, name, t, rank);
  if (s != HMX_OK) return s;
  if (t->dtype != HMX_I32)
    return hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%s' must be i32, is %s", op, name,
                    hmx_dtype_name(t->dtype));
  return HMX_OK;
}

hmx_status hmx_check_dim(const char *op, const char *name, const hmx_tensor *t, int i,
                         int64_t want, const char *what) {
  if (t->shape[i] != want)
    return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' dim %d is %lld, expected %lld (%s)", op,
                    name, i, (long long)t->shape[i], (long long)want, what);
  return HMX_OK;
}

int hmx_tensor_is_contiguous(const hmx_tensor *t) {
  int64_t expect = 1;
  int all_zero = 1;
  for (int i = 0; i < t->ndim; i++) all_zero &= t->stride[i] == 0;
  if (all_zero) return 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->stride[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

/* Byte range [lo, hi) that a tensor can touch. */
static void extent(const hmx_tensor *t, uintptr_t *lo, uintptr_t *hi) {
  size_t es = hmx_dtype_size(t->dtype);
  int64_t n = hmx_tensor_numel(t);
  *lo = (uintptr_t)t->data;
  if (n <= 0) { *hi = *lo; return; }
  int64_t last = 0;
  if (hmx_tensor_is_contiguous(t)) last = n - 1;
  else
    for (int i = 0; i < t->ndim; i++) last += (t->shape[i] - 1) * t->stride[i];
  *hi = *lo + (uintptr_t)((last + 1) * (int64_t)es);
}

static int same_view(const hmx_tensor *a, const hmx_tensor *b) {
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return hmx_tensor_is_contiguous(a) == hmx_tensor_is_contiguous(b) &&
         (hmx_tensor_is_contiguous(a) || memcmp(a->stride, b->stride, sizeof a->stride) == 0);
}

hmx_status hmx_check_alias(const char *op, const char *out_name, const hmx_tensor *out,
                           const char *in_name, const hmx_tensor *in, int in_place_ok) {
  if (!in || !out) return HMX_OK;
  uintptr_t a0, a1, b0, b1;
  extent(out, &a0, &a1);
  extent(in, &b0, &b1);
  if (a0 >= a1 || b0 >= b1 || a1 <= b0 || b1 <= a0) return HMX_OK;
  if (in_place_ok && same_view(out, in)) return HMX_OK;
  return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: output '%s' overlaps input '%s'%s", op,
                  out_name, in_name, in_place_ok ? " (only an identical view may be in place)" : "");
}

/* Element i (row-major order) of t, as a byte offset. */
static int64_t elem_offset(const hmx_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t idx = t->shape[d] ? i % t->shape[d] : 0;
    i = t->shape[d] ? i / t->shape[d] : 0;
    off += idx * t->stride[d];
  }
  return off;
}

static int direct_ok(const hmx_tensor *t) {
  return t->dtype == HMX_F32 && hmx_tensor_is_contiguous(t) &&
         ((uintptr_t)t->data % _Alignof(float)) == 0;
}

static float load_elem(const hmx_tensor *t, int64_t off) {
  const unsigned char *p = (const unsigned char *)t->data + off * (int64_t)hmx_dtype_size(t->dtype);
  switch (t->dtype) {
  case HMX_F32: { float f; memcpy(&f, p, 4); return f; }
  case HMX_BF16: { uint16_t h; memcpy(&h, p, 2); return hmx_bf16_to_f32(h); }
  case HMX_F16: { uint16_t h; memcpy(&h, p, 2); return hmx_f16_to_f32(h); }
  default: return 0.0f;
  }
}

static void store_elem(const hmx_tensor *t, int64_t off, float f) {
  unsigned char *p = (unsigned char *)t->data + off * (int64_t)hmx_dtype_size(t->dtype);
  switch (t->dtype) {
  case HMX_F32: memcpy(p, &f, 4); break;
  case HMX_BF16: { uint16_t h = hmx_f32_to_bf16(f); memcpy(p, &h, 2); break; }
  case HMX_F16: { uint16_t h = hmx_f32_to_f16(f); memcpy(p, &h, 2); break; }
  default: break;
  }
}

hmx_status hmx_stage_in(const hmx_tensor *t, hmx_fbuf *b) {
  memset(b, 0, sizeof *b);
  if (!t) return HMX_OK;
  b->n = hmx_tensor_numel(t);
  if (direct_ok(t)) { b->p = (float *)t->data; return HMX_OK; }
  b->p = hmx_alloc_array((size_t)b->n, sizeof(float));
  if (!b->p) return hmx_fail(HMX_ERR_NO_MEMORY, "cannot allocate %lld floats for staging",
                             (long long)b->n);
  b->owned = 1;
  int contig = hmx_tensor_is_contiguous(t);
  for (int64_t i = 0; i < b->n; i++) b->p[i] = load_elem(t, contig ? i : elem_offset(t, i));
  return HMX_OK;
}

hmx_status hmx_stage_out(const hmx_tensor *t, hmx_fbuf *b) {
  memset(b, 0, sizeof *b);
  b->n = hmx_tensor_numel(t);
  if (direct_ok(t)) { b->p = (float *)t->data; return HMX_OK; }
  b->p = hmx_alloc_array((size_t)b->n, sizeof(float));
  if (!b->p) return hmx_fail(HMX_ERR_NO_MEMORY, "cannot allocate %lld floats for staging",
                             (long long)b->n);
  b->owned = 1;
  return HMX_OK;
}

void hmx_commit_out(const hmx_tensor *t, const hmx_fbuf *b) {
  if (!b->owned) return;
  int contig = hmx_tensor_is_contiguous(t);
  for (int64_t i = 0; i < b->n; i++) store_elem(t, contig ? i : elem_offset(t, i), b->p[i]);
}

void hmx_fbuf_release(hmx_fbuf *b) {
  if (b->owned) free(b->p);
  memset(b, 0, sizeof *b);
}
