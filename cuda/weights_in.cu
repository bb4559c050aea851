/* Weights in their stored format, widened on the device (cuda/weights_in.cuh).
 *
 * GGUF blocks: one thread an element, grid-stride. Element e of a block is
 * hmx_gguf_quant_at's operations (src/gguf_dequant.c, docs/NUMERICS.md
 * "GGUF dequantization") in its order, each written as its _rn intrinsic so
 * that nothing is contracted whatever the flags: f16 scales widen exactly
 * (cvt.f32.f16, subnormals kept), small integers convert exactly, and each
 * product or sum rounds to nearest even. So every element has the host
 * rule's bits (a NaN scale gives a NaN, its payload not part of the
 * contract: NUMERICS §C), and the gemm on them is "dequantize, then the f32
 * gemm". The same element code reads GGUF's rows and, through a byte
 * accessor, the G16 interleaved blocks of Q8_0 / Q4_0 / Q4_1; the packed G16
 * form of the other block types follows hmx_packed_row's operations
 * (src/gemm_quant_packed.c), and F32 / F16 / BF16 G16 groups are widened.
 * The threads of a warp read neighbouring bytes of one or two blocks (or
 * groups) and write 32 consecutive floats. */
#include "weights_in.cuh"
#include "kept_decode.cuh"

#include <cuda_fp16.h>

extern "C" {
#include "gemm_quant.h"
#include "gguf.h"
}

namespace {

using namespace hmx_cuda::kd;

/* w[i] = element i of the row-major matrix at q: rows are whole blocks back
 * to back (B elements in S bytes each: hmx_gguf_type_block), so element i is
 * element i % B of block i / B. */
template <uint32_t T>
__global__ void decode_rows(const uchar *__restrict__ q, float *__restrict__ w, int64_t total,
                            int B, int S) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    w[i] = element<T>(RowBlock{q + (i / B) * S}, (int)(i % B));
}

/* The same from the G16 layout of Q8_0, Q4_0, Q4_1 (k elements a row):
 * element p of row j is element p % B of block p / B of row j % 16 of
 * group j / 16, whose blocks are 16 S bytes each. */
template <uint32_t T>
__global__ void decode_g16(const uchar *__restrict__ q, float *__restrict__ w, int64_t total,
                           int64_t k, int B, int S) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    w[i] = g16_block_at<T>(q, i / k, i % k, k, B, S);
}

/* F32, F16, BF16 in G16 ([N/16][K][16]): element p of row j at
 * ((j / 16) k + p) 16 + j % 16, widened exactly. */
template <uint32_t T>
__global__ void decode_g16_float(const uchar *__restrict__ q, float *__restrict__ w,
                                 int64_t total, int64_t k) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = i / k, p = i % k, at = ((j / HMX_QG) * k + p) * HMX_QG + j % HMX_QG;
    if constexpr (T == HMX_GGML_F32) {
      w[i] = reinterpret_cast<const float *>(q)[at];
    } else {
      const unsigned h = reinterpret_cast<const unsigned short *>(q)[at];
      w[i] = T == HMX_GGML_BF16 ? __uint_as_float(h << 16) : f16_bits(h);
    }
  }
}

/* The packed G16 form of Q2_K .. Q6_K, Q5_0, Q5_1, IQ4_NL, IQ4_XS: each
 * element by packed_at (cuda/kept_decode.cuh). */
__global__ void decode_packed(const uchar *__restrict__ q, float *__restrict__ w, int64_t total,
                              int64_t k, uint32_t type, hmx_packed_geom g) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    w[i] = packed_at(q, i / k, i % k, k, type, g);
}

/* The kernel for a block type in its layout; B elements in S bytes a block. */
template <uint32_t T>
void launch(hmx_cuda::Job *j, const uchar *q, float *w, int64_t total, int64_t k, int g16, int B,
            int S) {
  const unsigned grid = hmx_cuda::grid_for(total, 256);
  if (!g16) {
    decode_rows<T><<<grid, 256, 0, j->stream>>>(q, w, total, B, S);
    hmx_cuda::job_launched(j, "decode_rows");
  } else if constexpr (T == HMX_GGML_Q8_0 || T == HMX_GGML_Q4_0 || T == HMX_GGML_Q4_1) {
    decode_g16<T><<<grid, 256, 0, j->stream>>>(q, w, total, k, B, S);
    hmx_cuda::job_launched(j, "decode_g16");
  } else {
    hmx_packed_geom g;
    hmx_packed_geometry(T, &g);
    decode_packed<<<grid, 256, 0, j->stream>>>(q, w, total, k, T, g);
    hmx_cuda::job_launched(j, "decode_packed");
  }
}

template <uint32_t T>
void launch_float(hmx_cuda::Job *j, const uchar *q, float *w, int64_t total, int64_t k) {
  decode_g16_float<T><<<hmx_cuda::grid_for(total, 256), 256, 0, j->stream>>>(q, w, total, k);
  hmx_cuda::job_launched(j, "decode_g16_float");
}

} // namespace

namespace hmx_cuda {

const float *job_in16(Job *j, const uint16_t *h, hmx_dtype dt, int64_t n) {
  if (j->st != HMX_OK || !h || n <= 0) return NULL;
  const uint16_t *d16 = (const uint16_t *)job_upload_bytes(j, h, (size_t)n * sizeof(uint16_t));
  float *d = job_alloc(j, n);
  widen16_device(j, d, d16, dt, n);
  return j->st == HMX_OK ? d : NULL;
}

const void *job_kept_bytes(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k) {
  if (j->st != HMX_OK) return NULL;
  /* a resident copy (hmx_qmatrix.dev) is read where it is: it must be
   * memory of this call's GPU */
  if (dev && !hmx_cuda_on_current_device(dev)) {
    j->st = hmx_fail(HMX_ERR_INVALID_ARGUMENT, "cuda %s: the weights' GPU copy is not memory "
                     "of the current GPU (hmx_model_prepare ran with another device current)",
                     j->op);
    return NULL;
  }
  return dev ? dev : job_upload_bytes(j, h, hmx_qlayout_bytes(type, layout, n, k));
}

const float *job_in_blocks(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k) {
  int64_t block, bytes;
  if (j->st != HMX_OK || (!h && !dev) || n <= 0 || k <= 0) return NULL;
  const int g16 = layout == HMX_QLAYOUT_G16;
  if (!hmx_gguf_type_block(type, &block, &bytes) || k % block ||
      (layout != HMX_QLAYOUT_ROWS && !g16) || (g16 && !hmx_qlayout_g16_ok(type)) ||
      (!g16 && hmx_qtype_is_float(type))) {
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: ggml type %u, layout %d with K = %lld is not "
                     "a form this backend decodes", j->op, type, layout, (long long)k);
    return NULL;
  }
  const int64_t total = n * k;
  const uchar *dq = (const uchar *)job_kept_bytes(j, h, dev, type, layout, n, k);
  float *d = job_alloc(j, total);
  if (j->st != HMX_OK) return NULL;
  const int B = (int)block, S = (int)bytes;
  switch (type) {
  case HMX_GGML_F32: launch_float<HMX_GGML_F32>(j, dq, d, total, k); break;
  case HMX_GGML_F16: launch_float<HMX_GGML_F16>(j, dq, d, total, k); break;
  case HMX_GGML_BF16: launch_float<HMX_GGML_BF16>(j, dq, d, total, k); break;
  case HMX_GGML_Q8_0: launch<HMX_GGML_Q8_0>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q4_0: launch<HMX_GGML_Q4_0>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q4_1: launch<HMX_GGML_Q4_1>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q5_0: launch<HMX_GGML_Q5_0>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q5_1: launch<HMX_GGML_Q5_1>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_IQ4_NL: launch<HMX_GGML_IQ4_NL>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q2_K: launch<HMX_GGML_Q2_K>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q3_K: launch<HMX_GGML_Q3_K>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q4_K: launch<HMX_GGML_Q4_K>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q5_K: launch<HMX_GGML_Q5_K>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_Q6_K: launch<HMX_GGML_Q6_K>(j, dq, d, total, k, g16, B, S); break;
  case HMX_GGML_IQ4_XS: launch<HMX_GGML_IQ4_XS>(j, dq, d, total, k, g16, B, S); break;
  default:
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: no device decoder for %s weights", j->op,
                     hmx_gguf_type_name(type));
    return NULL;
  }
  return j->st == HMX_OK ? d : NULL;
}

} // namespace hmx_cuda
