/* Device staging of 16-bit tensors (src/dev_stage.c): stream-ordered scratch
 * and the dtype conversions, for the ops whose device kernels take f32
 * (every op but fwht and hadamard_mix, which read and write 16-bit in their
 * kernels). The rule is the host staging's (src/ops_stage.h, NUMERICS §D):
 * bf16 / f16 -> f32 is exact; f32 -> bf16 / f16 rounds to nearest even with
 * no flush (cvt.rn), which is hmx_f32_to_bf16 / hmx_f32_to_f16 for every
 * non-NaN value; a NaN stays a NaN (its payload is not part of the
 * contract, NUMERICS §C). These are the conversions of fwht_impl.cuh's Io. */
#include "job.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

__device__ __forceinline__ float widen(unsigned short h, bool bf16) {
  return bf16 ? __uint_as_float((unsigned)h << 16) : __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ unsigned short narrow(float f, bool bf16) {
  return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(f)) : __half_as_ushort(__float2half_rn(f));
}

__global__ void widen_kernel(float *dst, const unsigned short *src, int64_t n, bool bf16) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = widen(src[i], bf16);
}

__global__ void narrow_kernel(unsigned short *dst, const float *src, int64_t n, bool bf16) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = narrow(src[i], bf16);
}

} // namespace

using namespace hmx_cuda;

extern "C" hmx_status hmx_cuda_stage_alloc(void **p, size_t bytes, void *stream) {
  Job j;
  job_begin_device(&j, "staging", stream);
  *p = NULL;
  if (j.st == HMX_OK && bytes > 0)
    check(&j, cudaMallocAsync(p, bytes, j.stream), "cudaMallocAsync (16-bit staging)");
  return j.st;
}

extern "C" hmx_status hmx_cuda_stage_free(void *p, void *stream) {
  Job j;
  job_begin_device(&j, "staging", stream);
  if (j.st == HMX_OK && p) check(&j, cudaFreeAsync(p, j.stream), "cudaFreeAsync (16-bit staging)");
  return j.st;
}

/* n elements from src (sdt) to dst (ddt): f32 <- bf16 / f16 or bf16 / f16 <- f32. */
extern "C" hmx_status hmx_cuda_convert(void *dst, hmx_dtype ddt, const void *src, hmx_dtype sdt,
                                       int64_t n, void *stream) {
  Job j;
  job_begin_device(&j, "staging", stream);
  if (j.st != HMX_OK || n <= 0) return j.st;
  if (ddt == HMX_F32 && (sdt == HMX_BF16 || sdt == HMX_F16)) {
    widen_kernel<<<grid_for(n, 256), 256, 0, j.stream>>>((float *)dst, (const unsigned short *)src,
                                                        n, sdt == HMX_BF16);
    job_launched(&j, "widen_kernel");
  } else if (sdt == HMX_F32 && (ddt == HMX_BF16 || ddt == HMX_F16)) {
    narrow_kernel<<<grid_for(n, 256), 256, 0, j.stream>>>((unsigned short *)dst, (const float *)src,
                                                         n, ddt == HMX_BF16);
    job_launched(&j, "narrow_kernel");
  } else {
    j.st = hmx_fail(HMX_ERR_INTERNAL, "cuda staging: no conversion from %s to %s",
                    hmx_dtype_name(sdt), hmx_dtype_name(ddt));
  }
  return job_end(&j);
}
