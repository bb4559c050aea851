/* Long-lived GPU memory: the copies of a model's weights that
 * hmx_model_prepare makes for the cuda backend's host-memory calls
 * (docs/MODEL.md "Weights on the GPU"; src/dispatch.h, hmx_device_ops).
 *
 * Why not the scratch pool: these bytes live as long as the model, not one
 * call, and the pool keeps freed memory mapped for the next call's scratch
 * (cuda/scratch_pool.cu); plain cudaMalloc / cudaFree keep the two apart. */
#include "job.cuh"

using namespace hmx_cuda;

extern "C" hmx_status hmx_cuda_resident_alloc(void **p, size_t bytes) {
  Job j;
  job_init(&j, "weights to the GPU");
  *p = NULL;
  if (j.st == HMX_OK && bytes > 0) check(&j, cudaMalloc(p, bytes), "cudaMalloc");
  return j.st;
}

/* Synchronous: the host bytes may change or go once it returns, and the
 * copy has landed, so any stream's next kernel reads it. Why not cudaMemcpy:
 * from pageable memory it returns once the bytes are staged, while the DMA
 * to dst may still run on the legacy stream, which does not order the
 * non-blocking streams of later host calls (job_begin): a gemm_quant on the
 * copy read a part not yet written, once in a few runs of ctest -j8 (session
 * 59). So: the copy on this job's stream, then job_end waits for it. */
extern "C" hmx_status hmx_cuda_upload(void *dst, const void *src, size_t bytes) {
  Job j;
  job_begin(&j, "weights to the GPU");
  if (j.st == HMX_OK && bytes > 0)
    check(&j, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, j.stream),
          "cudaMemcpyAsync (to the GPU)");
  return job_end(&j);
}

extern "C" void hmx_cuda_resident_free(void *p) {
  /* no status: called from hmx_model_free; an error here (a broken
   * context) has been or will be reported by the call that caused it */
  if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

/* Whether p is device memory of the calling thread's current GPU. */
extern "C" int hmx_cuda_on_current_device(const void *p) {
  cudaPointerAttributes at;
  int dev = -1;
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return at.type == cudaMemoryTypeDevice && at.device == dev;
}
