/* gemv_slab (cuda/gemv_slab.cuh): the few-row gemm of a decode step.
 *
 * Why: the order of docs/NUMERICS.md §gemm makes each output one chain of K
 * fused multiply-adds (from bias or +0, k increasing), so a decode step's
 * 768 x 768 projection has only 768 independent chains. gemv_kernel (one
 * thread an output, each reading its own row of B from global memory) kept
 * too few bytes in flight: 150 us for that matrix on the H200, 16 GB/s, and
 * its gemvs were 7 of a decode step's 8.3 ms of GPU time (session 58, ncu).
 *
 * How: a block owns one group of 16 outputs (the G16 layout's group) and
 * walks K in slabs of kSlabK, two slabs in shared memory: while 16 x M of
 * its threads run the chains over one, the next is on its way, copied
 * global -> shared by cp.async (__pipeline_memcpy_async), which holds no
 * registers and lets every thread's copies be in flight at once. A G16 slab
 * is one contiguous run of memory (16 outputs' values of one k side by
 * side), copied as it is; BF16 and F16 are widened as the chains read them
 * (exact), so the chains see the f32 values the decoders would have
 * written: the same bits, without the f32 copy of the matrix. A rows slab
 * is 16 runs of kSlabK floats, kept as rows (a pitch of kRowPitch floats,
 * so 8 neighbouring rows' 16-byte reads meet no bank twice), and a chain
 * reads 4 k at a time. Each chain: acc = bias[j] or +0, then
 * acc = __fmaf_rn(a[i][k], b[j][k], acc) for k = 0 .. K-1.
 *
 * Session 58's version staged each slab through registers (32 16-byte
 * vectors a thread): with 108 registers the compiler could not keep a slab
 * in flight during the chains, and a block spent most of its time waiting
 * (ncu: 0.14 instructions issued a cycle per scheduler, 11.5 us for a
 * 768 x 768 f32 matrix). */
#include "gemv_slab.cuh"

#include <cuda_fp16.h>
#include <cuda_pipeline.h>

extern "C" {
#include "gemm_quant.h"
#include "gguf.h"
}

namespace {

using hmx_cuda::kSlabRows;

constexpr int kSlabK = 256, kSlabThreads = 128;
constexpr int kRowPitch = kSlabK + 4; /* floats: a row of a rows slab in shared memory */

enum class Form { RowsF32, G16F32, G16BF16, G16F16 };

/* Bytes of one slab of B in shared memory. */
template <Form F> __host__ __device__ constexpr int slab_bytes() {
  return F == Form::RowsF32   ? 16 * kRowPitch * 4
         : F == Form::G16F32 ? kSlabK * 16 * 4
                             : kSlabK * 16 * 2;
}

__device__ __forceinline__ float widen_bf16(unsigned h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ float widen_f16(unsigned h) {
  return __half2float(__ushort_as_half((unsigned short)h)); /* exact, subnormals kept */
}

/* Queue the copies of slab [k0, k0 + kc) of the group's B and of A's rows
 * into Bs / As (one cp.async group, committed by the caller). Bytes past K,
 * past N or past M are zero-filled (no read); the chains never use them. */
template <Form F>
__device__ __forceinline__ void copy_slab(unsigned char *Bs, float *As, const float *__restrict__ A,
                                          const void *__restrict__ B, int M, int64_t N,
                                          int64_t K, int64_t g, int64_t k0, int kc) {
  const int t = threadIdx.x;
  if constexpr (F == Form::RowsF32) {
    /* 16 rows of kc floats (K a multiple of 4, B 16-byte aligned): chunk c
     * is row c / 64's floats 4 (c % 64) .. + 3 */
    constexpr int chunks = 16 * kSlabK / 4;
#pragma unroll
    for (int c = t; c < chunks; c += kSlabThreads) {
      const int r = c / (kSlabK / 4), c4 = c % (kSlabK / 4);
      const int64_t row = g * 16 + r;
      const bool in = row < N && 4 * c4 < kc;
      const float *src = in ? (const float *)B + row * K + k0 + 4 * c4 : (const float *)B;
      __pipeline_memcpy_async(Bs + (r * kRowPitch + 4 * c4) * 4, src, 16, in ? 0 : 16);
    }
  } else {
    /* one run of kc * 16 elements: the group's values for k0 .. k0 + kc */
    constexpr int es = F == Form::G16F32 ? 4 : 2, chunks = kSlabK * 16 * es / 16;
    const unsigned char *run = (const unsigned char *)B + (size_t)(g * K + k0) * 16 * es;
    const int vecs = kc * es; /* kc * 16 * es bytes in 16-byte chunks */
#pragma unroll
    for (int c = t; c < chunks; c += kSlabThreads) {
      const bool in = c < vecs;
      __pipeline_memcpy_async(Bs + c * 16, in ? run + (size_t)c * 16 : run, 16, in ? 0 : 16);
    }
  }
#pragma unroll
  for (int s = t; s < kSlabRows * kSlabK; s += kSlabThreads) {
    const int i = s / kSlabK, kk = s % kSlabK;
    const bool in = i < M && kk < kc;
    __pipeline_memcpy_async(As + s, in ? A + (int64_t)i * K + k0 + kk : A, 4, in ? 0 : 4);
  }
}

/* One chain's slab: acc through k0 .. k0 + kc - 1, in increasing k, with
 * B's values for output r (bs) and A's row i (as). Reading the next 8 k's
 * operands into registers while the current 8's fmas ran (by hand) was
 * slower: f32 768 x 768 15.9 -> 19.7 us under ncu (session 59). */
template <Form F>
__device__ __forceinline__ float chain_slab(float acc, const unsigned char *Bs, const float *as,
                                            int r, int kc) {
  int kk = 0;
  if constexpr (F == Form::RowsF32) {
    const float *b = reinterpret_cast<const float *>(Bs) + r * kRowPitch;
#pragma unroll 4
    for (; kk + 4 <= kc; kk += 4) {
      const float4 bv = *reinterpret_cast<const float4 *>(b + kk);
      const float4 av = *reinterpret_cast<const float4 *>(as + kk);
      acc = __fmaf_rn(av.x, bv.x, acc);
      acc = __fmaf_rn(av.y, bv.y, acc);
      acc = __fmaf_rn(av.z, bv.z, acc);
      acc = __fmaf_rn(av.w, bv.w, acc);
    }
    for (; kk < kc; kk++) acc = __fmaf_rn(as[kk], b[kk], acc);
  } else if constexpr (F == Form::G16F32) {
    const float *b = reinterpret_cast<const float *>(Bs) + r;
#pragma unroll 4
    for (; kk + 4 <= kc; kk += 4) {
      const float4 av = *reinterpret_cast<const float4 *>(as + kk);
      acc = __fmaf_rn(av.x, b[(kk + 0) * 16], acc);
      acc = __fmaf_rn(av.y, b[(kk + 1) * 16], acc);
      acc = __fmaf_rn(av.z, b[(kk + 2) * 16], acc);
      acc = __fmaf_rn(av.w, b[(kk + 3) * 16], acc);
    }
    for (; kk < kc; kk++) acc = __fmaf_rn(as[kk], b[kk * 16], acc);
  } else {
    const unsigned short *b = reinterpret_cast<const unsigned short *>(Bs) + r;
    auto w = [&](int k) {
      return F == Form::G16BF16 ? widen_bf16(b[k * 16]) : widen_f16(b[k * 16]);
    };
#pragma unroll 4
    for (; kk + 4 <= kc; kk += 4) {
      const float4 av = *reinterpret_cast<const float4 *>(as + kk);
      acc = __fmaf_rn(av.x, w(kk + 0), acc);
      acc = __fmaf_rn(av.y, w(kk + 1), acc);
      acc = __fmaf_rn(av.z, w(kk + 2), acc);
      acc = __fmaf_rn(av.w, w(kk + 3), acc);
    }
    for (; kk < kc; kk++) acc = __fmaf_rn(as[kk], w(kk), acc);
  }
  return acc;
}

template <Form F>
__global__ void __launch_bounds__(kSlabThreads)
gemv_slab_kernel(const float *__restrict__ A, const void *__restrict__ B,
                 const float *__restrict__ bias, float *__restrict__ C, int M, int64_t N,
                 int64_t K) {
  __shared__ __align__(16) unsigned char Bs[2][slab_bytes<F>()];
  __shared__ __align__(16) float As[2][kSlabRows * kSlabK];
  const int64_t g = blockIdx.x;
  const int r = threadIdx.x % 16, i = threadIdx.x / 16; /* chain: output 16 g + r, row i */
  const int64_t col = g * 16 + r;
  const bool chain = i < M;
  float acc = chain && bias && col < N ? bias[col] : 0.0f;
  copy_slab<F>(Bs[0], As[0], A, B, M, N, K, g, 0, (int)(K < kSlabK ? K : kSlabK));
  __pipeline_commit();
  int cur = 0;
  for (int64_t k0 = 0; k0 < K; k0 += kSlabK) {
    const int kc = (int)(K - k0 < kSlabK ? K - k0 : kSlabK);
    const int64_t k1 = k0 + kSlabK;
    /* the other buffer was last read before the previous iteration's
     * closing barrier: the next slab goes there while this one is read */
    if (k1 < K)
      copy_slab<F>(Bs[cur ^ 1], As[cur ^ 1], A, B, M, N, K, g, k1,
                   (int)(K - k1 < kSlabK ? K - k1 : kSlabK));
    __pipeline_commit(); /* possibly empty: one group an iteration */
    __pipeline_wait_prior(1); /* this thread's copies of slab k0 have landed */
    __syncthreads();          /* and every thread's */
    if (chain) acc = chain_slab<F>(acc, Bs[cur], As[cur] + i * kSlabK, r, kc);
    __syncthreads();
    cur ^= 1;
  }
  if (chain && col < N) C[(int64_t)i * N + col] = acc;
}

} // namespace

namespace hmx_cuda {

bool gemv_slab_takes(uint32_t type, int layout) {
  return layout == HMX_QLAYOUT_G16 &&
         (type == HMX_GGML_F32 || type == HMX_GGML_BF16 || type == HMX_GGML_F16);
}

bool gemv_slab(Job *j, const float *A, const float *rows, const void *g16, uint32_t kept_type,
               const float *bias, float *C, int64_t m, int64_t n, int64_t k) {
  const int64_t groups = (n + 15) / 16;
  const bool rows_ok = rows && k % 4 == 0 && ((uintptr_t)rows & 15) == 0;
  const bool g16_ok = g16 && gemv_slab_takes(kept_type, HMX_QLAYOUT_G16) &&
                      ((uintptr_t)g16 & 15) == 0;
  if (m > kSlabRows || k < 1 || groups > INT32_MAX || (!rows_ok && !g16_ok)) return false;
  if (j->st != HMX_OK || m <= 0 || n <= 0) return true;
  const unsigned grid = (unsigned)groups;
  const int M = (int)m;
  if (rows_ok)
    gemv_slab_kernel<Form::RowsF32><<<grid, kSlabThreads, 0, j->stream>>>(A, rows, bias, C, M, n, k);
  else if (kept_type == HMX_GGML_F32)
    gemv_slab_kernel<Form::G16F32><<<grid, kSlabThreads, 0, j->stream>>>(A, g16, bias, C, M, n, k);
  else if (kept_type == HMX_GGML_BF16)
    gemv_slab_kernel<Form::G16BF16><<<grid, kSlabThreads, 0, j->stream>>>(A, g16, bias, C, M, n, k);
  else
    gemv_slab_kernel<Form::G16F16><<<grid, kSlabThreads, 0, j->stream>>>(A, g16, bias, C, M, n, k);
  job_launched(j, "gemv_slab_kernel");
  return true;
}

} // namespace hmx_cuda
