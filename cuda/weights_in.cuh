/* Weights that a host-memory call passes in their stored format (src/backend.h:
 * HMX_WQ_GEMM, HMX_WG16_GEMM, HMX_W16_GEMM, HMX_W16_SWIGLU, HMX_W16_ATTENTION in
 * the cuda table): the call copies the stored bytes over PCIe, not f32 (a Q4_K
 * matrix is 4.5 bits a weight, bf16 16), and widens them on the device into f32
 * scratch that the f32 kernels then read. Widening is exact for bf16 and
 * f16, and a GGUF block is decoded by the rule of docs/NUMERICS.md "GGUF
 * dequantization" with its operations in its order (cuda/weights_in.cu), so
 * the bits are those of the host's conversion followed by the f32 kernel.
 * Device-memory calls never get such weights (src/ops.c stages them). */
#ifndef HMX_CUDA_WEIGHTS_IN_CUH
#define HMX_CUDA_WEIGHTS_IN_CUH

#include "job.cuh"

namespace hmx_cuda {

/* n values of host 16-bit floats (dt HMX_BF16 or HMX_F16) to new device f32
 * scratch; NULL after an error. */
const float *job_in16(Job *j, const uint16_t *h, hmx_dtype dt, int64_t n);

/* A host [n, k] matrix of ggml type `type` kept as src/gemm_quant.h's
 * hmx_qmatrix: GGUF blocks in the file's rows (layout HMX_QLAYOUT_ROWS, k a
 * whole number of blocks), or the G16 layout of any type that has one
 * (F32, F16 and BF16 too), to new device f32 scratch [n][k]; NULL after an
 * error. With dev (the same bytes in the current GPU's memory: hmx_qmatrix.dev)
 * nothing is copied: the decode reads dev, and h may be NULL. */
const float *job_in_blocks(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k);

/* The device bytes of a kept matrix [n, k] of `type` in `layout`: its GPU
 * copy dev (checked to be memory of the current GPU), else the host bytes h
 * copied to device scratch, as stored. NULL after an error. */
const void *job_kept_bytes(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k);

/* n f32 at dst from n 16-bit floats at src (both device memory), on j's
 * stream: the widening of cuda/stage.cu's staging. */
void widen16_device(Job *j, float *dst, const uint16_t *src, hmx_dtype dt, int64_t n);

} // namespace hmx_cuda

#endif
