/* gemv_slab: C = A B^T (+ bias) for a few rows of A (M <= kSlabRows: a
 * decode step), B [N, K] given as f32 rows or as a kept matrix's float G16
 * bytes (F32, BF16, F16: [N/16][K][16], read as stored, no decode pass).
 * cuda/gemv_slab.cu says how and why. */
#ifndef HMX_CUDA_GEMV_SLAB_CUH
#define HMX_CUDA_GEMV_SLAB_CUH

#include "job.cuh"

namespace hmx_cuda {

constexpr int kSlabRows = 4;

/* Whether gemv_slab reads a kept matrix of ggml type `type` in `layout` as
 * stored (the float types in G16). */
bool gemv_slab_takes(uint32_t type, int layout);

/* C [M, N] = A [M, K] B^T (+ bias [N]) on device buffers. rows: B as f32
 * rows [N][K] (g16 NULL); or g16: the G16 bytes of a kept matrix of ggml
 * type kept_type (gemv_slab_takes; rows NULL). Each output: from bias[j] (or
 * +0), one __fmaf_rn per k in increasing k: gemm_kernel's bits. Returns
 * false, launching nothing, for a form it does not take (M > kSlabRows,
 * K < 1; rows: K not a multiple of 4 or B not 16-byte aligned; g16: B not
 * 16-byte aligned); true once launched (errors in j->st). */
bool gemv_slab(Job *j, const float *A, const float *rows, const void *g16, uint32_t kept_type,
               const float *bias, float *C, int64_t m, int64_t n, int64_t k);

} // namespace hmx_cuda

#endif
