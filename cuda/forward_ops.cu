/* The data movement of a forward pass that keeps its activations and KV
 * cache on the GPU (src/model_forward.c, docs/MODEL.md "The forward pass on
 * the GPU"): host -> device copies of the step's embedding rows, device ->
 * device copies of column blocks (Q, K, V out of the fused projection; K and
 * V into the cache), and the residual additions. Each is queued on the
 * caller's stream and returns without waiting (src/dispatch.h,
 * hmx_device_ops). The addition is one f32 add per element, x[i] + y[i]
 * rounded once (__fadd_rn, which -fmad=false would not contract anyway), as
 * the host loop it replaces (docs/NUMERICS.md §1: one IEEE operation, round
 * to nearest even; elementwise, so any split over threads gives the same
 * bits). */
#include "job.cuh"

using namespace hmx_cuda;

namespace {

__global__ void add_kernel(float *__restrict__ x, const float *__restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    x[i] = __fadd_rn(x[i], y[i]);
}

} // namespace

/* bytes of host memory to device memory in the order of stream. A pageable
 * source is staged by the driver before the call returns, so the caller may
 * reuse it at once. */
extern "C" hmx_status hmx_cuda_to_device(void *dst, const void *src, size_t bytes, void *stream) {
  Job j;
  job_begin_device(&j, "to_device", stream);
  if (j.st == HMX_OK && bytes > 0)
    check(&j, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, j.stream),
          "cudaMemcpyAsync (to device)");
  return job_end(&j);
}

/* rows rows of width bytes, device to device, pitches in bytes. */
extern "C" hmx_status hmx_cuda_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                      size_t width, size_t rows, void *stream) {
  Job j;
  job_begin_device(&j, "copy", stream);
  if (j.st == HMX_OK && width > 0 && rows > 0)
    check(&j, cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToDevice,
                                j.stream),
          "cudaMemcpy2DAsync (device to device)");
  return job_end(&j);
}

/* x[i] += y[i] for i < n (device f32). */
extern "C" hmx_status hmx_cuda_add(float *x, const float *y, int64_t n, void *stream) {
  Job j;
  job_begin_device(&j, "add", stream);
  if (j.st == HMX_OK && n > 0) {
    add_kernel<<<grid_for(n, 256), 256, 0, j.stream>>>(x, y, n);
    job_launched(&j, "add_kernel");
  }
  return job_end(&j);
}
