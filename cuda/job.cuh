/* Host plumbing shared by the cuda backend's .cu files: one Job per call.
 *
 * Two modes (docs/CUDA.md, "Host and device memory"):
 *   - host memory (job_begin): the call owns a non-blocking stream, copies
 *     its inputs to device scratch, runs, copies the output back, gives the
 *     scratch back, synchronizes and destroys the stream, on every path;
 *   - device memory (job_begin_device): the caller's buffers are used as
 *     they are, the work is queued on the caller's stream, and nothing
 *     waits.
 * Scratch comes from hadamix's stream-ordered pool (scratch_malloc) in both
 * and goes back with cudaFreeAsync on the call's stream.
 * Every CUDA call is checked; the first error wins and is kept in j->st:
 * cudaErrorMemoryAllocation -> HMX_ERR_NO_MEMORY, anything else ->
 * HMX_ERR_INTERNAL, with the CUDA error name in hmx_last_error(). After an
 * error every later job_* step is a no-op except the cleanup in job_end. */
#ifndef HMX_CUDA_JOB_CUH
#define HMX_CUDA_JOB_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "backend.h"
#include "internal.h"
}
#include "cuda_kernels.h"
#include "device_slots.cuh"

namespace hmx_cuda {

struct Job {
  const char *op;
  cudaStream_t stream;
  int device;   /* 1: caller's device buffers and stream */
  int owns_stream;
  void *ptr[12]; /* device buffers to free at the end */
  int count;
  hmx_status st;
};

inline int check(Job *j, cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 1;
  /* The runtime keeps e as its last error; hmx reports it (the status and
   * hmx_last_error), so it is taken off, lest the caller's next
   * cudaGetLastError() blame their own work for it. (A sticky error, one
   * that breaks the context, stays whatever we do.) */
  (void)cudaGetLastError();
  if (j->st == HMX_OK)
    j->st = hmx_fail(e == cudaErrorMemoryAllocation ? HMX_ERR_NO_MEMORY : HMX_ERR_INTERNAL,
                     "cuda %s: %s failed: %s (%s)", j->op, what, cudaGetErrorString(e),
                     cudaGetErrorName(e));
  return 0;
}

inline void job_init(Job *j, const char *op) {
  j->op = op;
  j->stream = 0;
  j->device = 0;
  j->owns_stream = 0;
  j->count = 0;
  j->st = HMX_OK;
  if (!hmx_cuda_probe())
    j->st = hmx_fail(HMX_ERR_BACKEND_UNAVAILABLE, "cuda %s: %s", op, hmx_cuda_unavailable_reason());
}

/* Host-memory call: its own stream. */
inline void job_begin(Job *j, const char *op) {
  job_init(j, op);
  if (j->st != HMX_OK) return;
  cudaStream_t s;
  if (check(j, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate")) {
    j->stream = s;
    j->owns_stream = 1;
  }
}

/* Device-memory call: the caller's stream (NULL: the legacy default stream). */
inline void job_begin_device(Job *j, const char *op, void *stream) {
  job_init(j, op);
  j->device = 1;
  j->stream = (cudaStream_t)stream;
}

/* Stream-ordered device scratch from hadamix's pool of the current device,
 * which keeps freed scratch mapped between calls (cuda/scratch_pool.cu);
 * free it with cudaFreeAsync. */
cudaError_t scratch_malloc(void **p, size_t bytes, cudaStream_t stream);

/* Device scratch of `n` elements of `size` bytes (NULL for n == 0 or after
 * an error): scratch_malloc on the call's stream (the caller's for device
 * calls: no device-wide synchronization). Host calls took cudaMalloc until
 * session 56, and cudaFree at their end, which synchronizes the device and
 * unmaps: with weights copied as stored, that was most of a GGUF model's
 * decode step on the GPU (docs/CUDA.md, "Host and device memory"). */
inline void *job_alloc_bytes(Job *j, int64_t n, size_t size) {
  if (j->st != HMX_OK || n <= 0) return NULL;
  size_t bytes;
  if (!hmx_mul_size((size_t)n, size, &bytes)) {
    j->st = hmx_fail(HMX_ERR_NO_MEMORY, "cuda %s: size overflows", j->op);
    return NULL;
  }
  if (j->count == (int)(sizeof j->ptr / sizeof j->ptr[0])) {
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: too many device buffers", j->op);
    return NULL;
  }
  void *d = NULL;
  if (!check(j, scratch_malloc(&d, bytes, j->stream), "cudaMalloc(FromPool)Async")) return NULL;
  j->ptr[j->count++] = d;
  return d;
}

inline float *job_alloc(Job *j, int64_t n) { return (float *)job_alloc_bytes(j, n, sizeof(float)); }

/* Copy `bytes` bytes of host memory to new device memory, whatever the mode
 * (the rope angle table is host memory in both; weights passed as stored,
 * cuda/weights_in.cu). A pageable source is staged by the driver before
 * cudaMemcpyAsync returns, so the caller may free it right after the call.
 * NULL for 0 bytes or after an error. */
inline const void *job_upload_bytes(Job *j, const void *h, size_t bytes) {
  void *d = job_alloc_bytes(j, (int64_t)bytes, 1);
  if (j->st != HMX_OK || !d) return NULL;
  check(j, cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, j->stream),
        "cudaMemcpyAsync (to device)");
  return j->st == HMX_OK ? d : NULL;
}

/* n floats of host memory to new device memory (job_upload_bytes). */
inline const float *job_upload(Job *j, const float *h, int64_t n) {
  return n > 0 ? (const float *)job_upload_bytes(j, h, (size_t)n * sizeof(float)) : NULL;
}

/* An input buffer: device calls use the caller's pointer, host calls a copy. */
inline const float *job_in(Job *j, const float *p, int64_t n) {
  if (j->st != HMX_OK || !p || n <= 0) return NULL;
  return j->device ? p : job_upload(j, p, n);
}

/* An output buffer: the caller's pointer, or fresh device memory. */
inline float *job_out(Job *j, float *p, int64_t n) {
  if (j->st != HMX_OK || n <= 0) return NULL;
  return j->device ? p : job_alloc(j, n);
}

/* After the kernels: host calls copy the output back (d from job_out). */
inline void job_out_done(Job *j, float *h, const float *d, int64_t n) {
  if (j->st != HMX_OK || j->device || n <= 0) return;
  check(j, cudaMemcpyAsync(h, d, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost, j->stream),
        "cudaMemcpyAsync (to host)");
}

/* HMX_CUDA_TRACE=1: each kernel launch names itself on stderr ("hmx cuda:
 * OP: KERNEL"), to see which kernel a shape takes (the size rules of
 * docs/CUDA.md) or that a tool such as compute-sanitizer ran the one meant.
 * Read once per process. */
inline bool trace_launches() {
  static const bool on = [] {
    const char *e = getenv("HMX_CUDA_TRACE");
    return e && *e && strcmp(e, "0") != 0;
  }();
  return on;
}

/* Call right after a launch: a bad configuration shows up here. */
inline void job_launched(Job *j, const char *kernel) {
  if (j->st != HMX_OK) return;
  if (check(j, cudaGetLastError(), kernel) && trace_launches())
    fprintf(stderr, "hmx cuda: %s: %s\n", j->op, kernel);
}

/* Both: give the scratch back in stream order. Host calls then synchronize
 * and destroy the stream; device calls return at once. The first error
 * wins. */
inline hmx_status job_end(Job *j) {
  for (int i = 0; i < j->count; i++) check(j, cudaFreeAsync(j->ptr[i], j->stream), "cudaFreeAsync");
  j->count = 0;
  if (j->device) return j->st;
  if (j->owns_stream) check(j, cudaStreamSynchronize(j->stream), "cudaStreamSynchronize");
  if (j->owns_stream) check(j, cudaStreamDestroy(j->stream), "cudaStreamDestroy");
  j->stream = 0;
  j->owns_stream = 0;
  return j->st;
}

inline unsigned grid_for(int64_t work, int per_block) {
  int64_t b = (work + per_block - 1) / per_block;
  if (b < 1) b = 1;
  if (b > (int64_t)1 << 20) b = (int64_t)1 << 20; /* kernels loop grid-stride */
  return (unsigned)b;
}

} // namespace hmx_cuda

#endif
