/* Device staging of 16-bit tensors (src/dev_stage.c): stream-ordered scratch
 * and the dtype conversions, for the ops whose device kernels take f32
 * (every op but fwht and hadamard_mix, which read and write 16-bit in their
 * kernels). The rule is the host staging's (src/ops_stage.h, NUMERICS §D):
 * bf16 / f16 -> f32 is exact; f32 -> bf16 / f16 rounds to nearest even with
 * no flush (cvt.rn), which is hmx_f32_to_bf16 / hmx_f32_to_f16 for every
 * non-NaN value; a NaN stays a NaN (its payload is not part of the
 * contract, NUMERICS §C): fwht_impl.cuh's Io<D>::widen and ::narrow, the
 * conversions of the fwht kernels' loads and stores. */
#include "fwht_impl.cuh" /* fw::Io, fw::Dt */
#include "weights_in.cuh"

namespace {

using hmx_cuda::fw::Dt;
using hmx_cuda::fw::Io;

template <Dt D>
__global__ void widen_kernel(float *dst, const typename Io<D>::T *src, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = Io<D>::widen(src[i]);
}

template <Dt D>
__global__ void narrow_kernel(typename Io<D>::T *dst, const float *src, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = Io<D>::narrow(src[i]);
}

} // namespace

using namespace hmx_cuda;

/* also the widening of 16-bit weights that host calls pass as they are
 * (cuda/weights_in.cuh) */
void hmx_cuda::widen16_device(Job *j, float *dst, const uint16_t *src, hmx_dtype dt, int64_t n) {
  if (j->st != HMX_OK || n <= 0) return;
  const unsigned grid = grid_for(n, 256);
  if (dt == HMX_BF16) widen_kernel<Dt::BF16><<<grid, 256, 0, j->stream>>>(dst, src, n);
  else widen_kernel<Dt::F16><<<grid, 256, 0, j->stream>>>(dst, src, n);
  job_launched(j, "widen_kernel");
}

extern "C" hmx_status hmx_cuda_stage_alloc(void **p, size_t bytes, void *stream) {
  Job j;
  job_begin_device(&j, "staging", stream);
  *p = NULL;
  if (j.st == HMX_OK && bytes > 0)
    check(&j, scratch_malloc(p, bytes, j.stream), "cudaMalloc(FromPool)Async (16-bit staging)");
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
  const unsigned grid = grid_for(n, 256);
  const float *fs = (const float *)src;
  unsigned short *hd = (unsigned short *)dst;
  if (ddt == HMX_F32 && (sdt == HMX_BF16 || sdt == HMX_F16)) {
    widen16_device(&j, (float *)dst, (const uint16_t *)src, sdt, n);
  } else if (sdt == HMX_F32 && ddt == HMX_BF16) {
    narrow_kernel<Dt::BF16><<<grid, 256, 0, j.stream>>>(hd, fs, n);
    job_launched(&j, "narrow_kernel");
  } else if (sdt == HMX_F32 && ddt == HMX_F16) {
    narrow_kernel<Dt::F16><<<grid, 256, 0, j.stream>>>(hd, fs, n);
    job_launched(&j, "narrow_kernel");
  } else {
    j.st = hmx_fail(HMX_ERR_INTERNAL, "cuda staging: no conversion from %s to %s",
                    hmx_dtype_name(sdt), hmx_dtype_name(ddt));
  }
  return job_end(&j);
}
