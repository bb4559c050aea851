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
 * walks K in slabs of kSlabK. All kSlabThreads threads load the next slab
 * (16 x kSlabK weights, and the A rows' kSlabK values) into registers
 * while 16 x M of them run the chains over the current slab from shared
 * memory; then the loaded slab is stored to the other buffer. A G16 slab is
 * one contiguous run of memory (16 outputs' values of one k side by side),
 * so its loads are 16-byte vectors of whole lines; rows are 16 runs of
 * kSlabK values. BF16 and F16 are widened on load (exact), so the chains see
 * the f32 values the decoders would have written: the same bits, without
 * the f32 copy of the matrix. Each chain: acc = bias[j] or +0, then
 * acc = __fmaf_rn(a[i][k], b[j][k], acc) for k = 0 .. K-1. */
#include "gemv_slab.cuh"

#include <cuda_fp16.h>

extern "C" {
#include "gemm_quant.h"
#include "gguf.h"
}

namespace {

using hmx_cuda::kSlabRows;

constexpr int kSlabK = 256, kSlabThreads = 128;

enum class Form { RowsF32, G16F32, G16BF16, G16F16 };

/* 16-byte vectors of one slab each thread loads (at most): an f32 slab is
 * kSlabK * 16 * 4 bytes, a 16-bit one half that. */
constexpr int kVecs = kSlabK * 16 * 4 / 16 / kSlabThreads;
constexpr int kAVals = kSlabRows * kSlabK / kSlabThreads;

__device__ __forceinline__ float widen_bf16(unsigned h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ float widen_f16(unsigned h) {
  return __half2float(__ushort_as_half((unsigned short)h)); /* exact, subnormals kept */
}

/* Which 16 bytes of a rows slab a load slot takes: row r, vector c (floats
 * 4c .. 4c + 3). A warp covers 8 rows x 4 neighbouring vectors: 64 bytes
 * of each row (two whole sectors), and its transposed stores to shared
 * memory meet at most 4 to a bank. */
__device__ __forceinline__ void rows_slot(int slot, int *r, int *c) {
  *r = (slot / 4) % 16;
  *c = slot % 4 + 4 * (slot / 64);
}

struct Staged {
  uint4 v[kVecs];
  float a[kAVals];
};

/* Slab [k0, k0 + kc) of the group's B and of A's rows into registers. */
template <Form F>
__device__ __forceinline__ void load_slab(Staged &s, const float *__restrict__ A,
                                          const void *__restrict__ B, int M, int64_t N,
                                          int64_t K, int64_t g, int64_t k0, int kc) {
  const int t = threadIdx.x;
  if constexpr (F == Form::RowsF32) {
    /* 16 rows of kc floats (K a multiple of 4, B 16-byte aligned) */
    const int per_row = kc / 4;
#pragma unroll
    for (int q = 0; q < kVecs; q++) {
      int r, c;
      rows_slot(t + q * kSlabThreads, &r, &c);
      const int64_t row = g * 16 + r;
      s.v[q] = c < per_row && row < N
                   ? *reinterpret_cast<const uint4 *>((const float *)B + row * K + k0 + 4 * c)
                   : make_uint4(0, 0, 0, 0);
    }
  } else {
    /* one run of kc * 16 elements: the group's values for k0 .. k0 + kc */
    constexpr int es = F == Form::G16F32 ? 4 : 2;
    const uint4 *run = reinterpret_cast<const uint4 *>((const unsigned char *)B +
                                                       (size_t)(g * K + k0) * 16 * es);
    const int vecs = kc * 16 * es / 16;
#pragma unroll
    for (int q = 0; q < kVecs; q++) {
      const int slot = t + q * kSlabThreads;
      if (es == 4 || q < kVecs / 2) s.v[q] = slot < vecs ? run[slot] : make_uint4(0, 0, 0, 0);
    }
  }
#pragma unroll
  for (int q = 0; q < kAVals; q++) {
    const int slot = t + q * kSlabThreads, i = slot / kSlabK, kk = slot % kSlabK;
    s.a[q] = i < M && kk < kc ? A[(int64_t)i * K + k0 + kk] : 0.0f;
  }
}

/* The registers of load_slab to shared memory: Bs[kk * 16 + r] is output
 * r's weight for k0 + kk, As[i * kSlabK + kk] row i's value. */
template <Form F>
__device__ __forceinline__ void store_slab(const Staged &s, float *Bs, float *As) {
  const int t = threadIdx.x;
  if constexpr (F == Form::RowsF32) {
#pragma unroll
    for (int q = 0; q < kVecs; q++) {
      int r, c;
      rows_slot(t + q * kSlabThreads, &r, &c);
      Bs[(4 * c + 0) * 16 + r] = __uint_as_float(s.v[q].x);
      Bs[(4 * c + 1) * 16 + r] = __uint_as_float(s.v[q].y);
      Bs[(4 * c + 2) * 16 + r] = __uint_as_float(s.v[q].z);
      Bs[(4 * c + 3) * 16 + r] = __uint_as_float(s.v[q].w);
    }
  } else if constexpr (F == Form::G16F32) {
#pragma unroll
    for (int q = 0; q < kVecs; q++)
      reinterpret_cast<uint4 *>(Bs)[t + q * kSlabThreads] = s.v[q];
  } else {
#pragma unroll
    for (int q = 0; q < kVecs / 2; q++) {
      const unsigned w[4] = {s.v[q].x, s.v[q].y, s.v[q].z, s.v[q].w};
      float *dst = Bs + (size_t)(t + q * kSlabThreads) * 8;
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const unsigned lo = w[e] & 0xffffu, hi = w[e] >> 16;
        dst[2 * e] = F == Form::G16BF16 ? widen_bf16(lo) : widen_f16(lo);
        dst[2 * e + 1] = F == Form::G16BF16 ? widen_bf16(hi) : widen_f16(hi);
      }
    }
  }
#pragma unroll
  for (int q = 0; q < kAVals; q++) As[t + q * kSlabThreads] = s.a[q];
}

template <Form F>
__global__ void __launch_bounds__(kSlabThreads)
gemv_slab_kernel(const float *__restrict__ A, const void *__restrict__ B,
                 const float *__restrict__ bias, float *__restrict__ C, int M, int64_t N,
                 int64_t K) {
  __shared__ __align__(16) float Bs[2][kSlabK * 16];
  __shared__ float As[2][kSlabRows * kSlabK];
  const int64_t g = blockIdx.x;
  const int r = threadIdx.x % 16, i = threadIdx.x / 16; /* chain: output 16 g + r, row i */
  const int64_t col = g * 16 + r;
  const bool chain = i < M;
  float acc = chain && bias && col < N ? bias[col] : 0.0f;
  Staged s;
  load_slab<F>(s, A, B, M, N, K, g, 0, (int)(K < kSlabK ? K : kSlabK));
  store_slab<F>(s, Bs[0], As[0]);
  __syncthreads();
  int cur = 0;
  for (int64_t k0 = 0; k0 < K; k0 += kSlabK) {
    const int kc = (int)(K - k0 < kSlabK ? K - k0 : kSlabK);
    const int64_t k1 = k0 + kSlabK;
    const bool more = k1 < K;
    if (more) /* in flight while the chains run */
      load_slab<F>(s, A, B, M, N, K, g, k1, (int)(K - k1 < kSlabK ? K - k1 : kSlabK));
    if (chain) {
      const float *bs = Bs[cur] + r, *as = As[cur] + i * kSlabK;
#pragma unroll 8
      for (int kk = 0; kk < kc; kk++) acc = __fmaf_rn(as[kk], bs[kk * 16], acc);
    }
    /* the other buffer was last read before the previous barrier */
    if (more) store_slab<F>(s, Bs[cur ^ 1], As[cur ^ 1]);
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
