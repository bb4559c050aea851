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
 * walks K in slabs of kSlabK, a ring of S slabs in shared memory: while
 * 16 x M of its threads run the chains over one, the next S - 1 are on their
 * way, copied global -> shared by cp.async (__pipeline_memcpy_async), which
 * holds no registers and lets every thread's copies be in flight at once. A
 * G16 slab is one contiguous run of memory (16 outputs' values of one k side
 * by side), copied as it is; BF16 and F16 are widened as the chains read them
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

#include <atomic>

extern "C" {
#include "gemm_quant.h"
#include "gguf.h"
}

namespace {

using hmx_cuda::kSlabRows;

/* Tuning (measured on the H200 under ncu, session 60: docs/results/session60/).
 * kSlabK: k a slab. A block's slabs are a ring of stages (a template
 * parameter): a small grid (kDeepGrid groups or fewer: every projection of a
 * layer) takes kDeepStages, so that its next slabs' copies are in flight
 * while the chains run (768 x 768 f32: 16.1 -> 15.0 us); the LM head's grid
 * (3144 groups) keeps two, since the shared memory of more leaves fewer of
 * its blocks on an SM (four: 53 -> 95 us). Eight or sixteen stages of 128 k
 * were slower for every shape (17.6, 18.2 us). */
#ifndef HMX_GEMV_SLAB_K
#define HMX_GEMV_SLAB_K 256
#endif
#ifndef HMX_GEMV_DEEP_STAGES
#define HMX_GEMV_DEEP_STAGES 4
#endif
constexpr int kSlabK = HMX_GEMV_SLAB_K, kDeepStages = HMX_GEMV_DEEP_STAGES, kSlabThreads = 128;
constexpr int64_t kDeepGrid = 1024;
static_assert(kSlabK % 4 == 0 && kDeepStages >= 2, "slabs of whole float4s, two at least");
constexpr int kRowPitch = kSlabK + 4; /* floats: a row of a rows slab in shared memory */

enum class Form { RowsF32, G16F32, G16BF16, G16F16 };

/* Bytes of one slab of B in shared memory. */
template <Form F> __host__ __device__ constexpr int slab_bytes() {
  return F == Form::RowsF32   ? 16 * kRowPitch * 4
         : F == Form::G16F32 ? kSlabK * 16 * 4
                             : kSlabK * 16 * 2;
}

/* Bytes of one stage: the slab of B, then A's rows for it. */
template <Form F> __host__ __device__ constexpr int stage_bytes() {
  return slab_bytes<F>() + kSlabRows * kSlabK * 4;
}

__device__ __forceinline__ float widen_bf16(unsigned h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ float widen_f16(unsigned h) {
  return __half2float(__ushort_as_half((unsigned short)h)); /* exact, subnormals kept */
}

/* Queue the copies of slab [k0, k0 + kc) of the group's B and of A's M rows
 * into Bs / As (one cp.async group, committed by the caller). Only what a
 * chain reads is copied: nothing past K, past N (a rows slab) or past M
 * (session 59's form zero-filled A's rows up to kSlabRows, 3 of every 4
 * copies at M = 1). a_vec: A's rows may be copied 16 bytes at a time (K a
 * multiple of 4, A 16-byte aligned), else 4. */
template <Form F>
__device__ __forceinline__ void copy_slab(unsigned char *Bs, float *As, const float *__restrict__ A,
                                          const void *__restrict__ B, int M, int64_t N,
                                          int64_t K, int64_t g, int64_t k0, int kc, bool a_vec) {
  const int t = threadIdx.x;
  if constexpr (F == Form::RowsF32) {
    /* 16 rows of kc floats (K a multiple of 4, B 16-byte aligned): chunk c
     * is row c / (kSlabK / 4)'s floats 4 (c % (kSlabK / 4)) .. + 3 */
    constexpr int chunks = 16 * kSlabK / 4;
#pragma unroll
    for (int c = t; c < chunks; c += kSlabThreads) {
      const int r = c / (kSlabK / 4), c4 = c % (kSlabK / 4);
      const int64_t row = g * 16 + r;
      if (row < N && 4 * c4 < kc)
        __pipeline_memcpy_async(Bs + (r * kRowPitch + 4 * c4) * 4,
                                (const float *)B + row * K + k0 + 4 * c4, 16);
    }
  } else {
    /* one run of kc * 16 elements: the group's values for k0 .. k0 + kc */
    constexpr int es = F == Form::G16F32 ? 4 : 2, chunks = kSlabK * 16 * es / 16;
    const unsigned char *run = (const unsigned char *)B + (size_t)(g * K + k0) * 16 * es;
    const int vecs = kc * es; /* kc * 16 * es bytes in 16-byte chunks */
#pragma unroll
    for (int c = t; c < chunks; c += kSlabThreads)
      if (c < vecs) __pipeline_memcpy_async(Bs + c * 16, run + (size_t)c * 16, 16);
  }
  if (a_vec) {
    for (int s = t; s < M * (kSlabK / 4); s += kSlabThreads) {
      const int i = s / (kSlabK / 4), c4 = s % (kSlabK / 4);
      if (4 * c4 < kc)
        __pipeline_memcpy_async(As + i * kSlabK + 4 * c4, A + (int64_t)i * K + k0 + 4 * c4, 16);
    }
  } else {
    for (int s = t; s < M * kSlabK; s += kSlabThreads) {
      const int i = s / kSlabK, kk = s % kSlabK;
      if (kk < kc) __pipeline_memcpy_async(As + s, A + (int64_t)i * K + k0 + kk, 4);
    }
  }
}

/* B's value for output r at slab offset k, as the f32 the decoders write
 * (bf16 and f16 widened exactly). */
template <Form F>
__device__ __forceinline__ float b_at(const unsigned char *Bs, int r, int k) {
  if constexpr (F == Form::RowsF32)
    return reinterpret_cast<const float *>(Bs)[r * kRowPitch + k];
  else if constexpr (F == Form::G16F32)
    return reinterpret_cast<const float *>(Bs)[k * 16 + r];
  else {
    const unsigned h = reinterpret_cast<const unsigned short *>(Bs)[k * 16 + r];
    return F == Form::G16BF16 ? widen_bf16(h) : widen_f16(h);
  }
}

/* The operands of 4 consecutive k from kk (a multiple of 4) of one chain. */
struct Quad {
  float4 a, b;
};
template <Form F>
__device__ __forceinline__ Quad quad_at(const unsigned char *Bs, const float *as, int r, int kk) {
  Quad q;
  q.a = *reinterpret_cast<const float4 *>(as + kk);
  if constexpr (F == Form::RowsF32)
    q.b = *reinterpret_cast<const float4 *>(reinterpret_cast<const float *>(Bs) +
                                            r * kRowPitch + kk);
  else
    q.b = make_float4(b_at<F>(Bs, r, kk), b_at<F>(Bs, r, kk + 1), b_at<F>(Bs, r, kk + 2),
                      b_at<F>(Bs, r, kk + 3));
  return q;
}
__device__ __forceinline__ float fma_quad(float acc, const Quad &q) {
  acc = __fmaf_rn(q.a.x, q.b.x, acc);
  acc = __fmaf_rn(q.a.y, q.b.y, acc);
  acc = __fmaf_rn(q.a.z, q.b.z, acc);
  return __fmaf_rn(q.a.w, q.b.w, acc);
}

/* One chain's slab: acc through k0 .. k0 + kc - 1, in increasing k, with
 * B's values for output r (Bs) and A's row i (as). Reading the operands
 * ahead of the fmas by hand was slower both times it was tried: 8 k ahead in
 * one step (session 59: 768 x 768 f32 15.9 -> 19.7 us under ncu), and two
 * quads ahead, one a quad (session 60: 15.0 -> 20.5 us). */
template <Form F>
__device__ __forceinline__ float chain_slab(float acc, const unsigned char *Bs, const float *as,
                                            int r, int kc) {
  int kk = 0;
#pragma unroll 4
  for (; kk + 4 <= kc; kk += 4) acc = fma_quad(acc, quad_at<F>(Bs, as, r, kk));
  for (; kk < kc; kk++) acc = __fmaf_rn(as[kk], b_at<F>(Bs, r, kk), acc);
  return acc;
}

/* S slab buffers, a ring: while the chains read slab s, the copies of
 * slabs s + 1 .. s + S - 1 are on their way. One barrier a slab: it orders
 * every thread's copies of slab s before its reads, and every read of slab
 * s - 1 before its buffer takes slab s + S - 1. (Session 59's form: two
 * buffers and two barriers a slab, every copy of A's kSlabRows rows made,
 * zero-filled past M.) */
template <Form F, int S>
__global__ void __launch_bounds__(kSlabThreads)
gemv_slab_kernel(const float *__restrict__ A, const void *__restrict__ B,
                 const float *__restrict__ bias, float *__restrict__ C, int M, int64_t N,
                 int64_t K, bool a_vec) {
  extern __shared__ __align__(16) unsigned char smem[]; /* S * stage_bytes<F>() */
  auto Bs = [&](int64_t s) { return smem + (s % S) * stage_bytes<F>(); };
  auto As = [&](int64_t s) { return reinterpret_cast<float *>(Bs(s) + slab_bytes<F>()); };
  const int64_t g = blockIdx.x;
  const int r = threadIdx.x % 16, i = threadIdx.x / 16; /* chain: output 16 g + r, row i */
  const int64_t col = g * 16 + r;
  const bool chain = i < M && col < N;
  float acc = chain && bias ? bias[col] : 0.0f;
  const int64_t slabs = (K + kSlabK - 1) / kSlabK;
  auto kc_of = [&](int64_t s) {
    return (int)(K - s * kSlabK < kSlabK ? K - s * kSlabK : kSlabK);
  };
  for (int s = 0; s < S - 1; s++) { /* one cp.async group a slab, empty past K */
    if (s < slabs) copy_slab<F>(Bs(s), As(s), A, B, M, N, K, g, s * kSlabK, kc_of(s), a_vec);
    __pipeline_commit();
  }
  for (int64_t s = 0; s < slabs; s++) {
    __pipeline_wait_prior(S - 2); /* this thread's copies of slab s have landed */
    __syncthreads();              /* and every thread's; slab s - 1 is read */
    const int64_t next = s + S - 1;
    if (next < slabs)
      copy_slab<F>(Bs(next), As(next), A, B, M, N, K, g, next * kSlabK, kc_of(next), a_vec);
    __pipeline_commit();
    if (chain) acc = chain_slab<F>(acc, Bs(s), As(s) + i * kSlabK, r, kc_of(s));
  }
  if (chain) C[(int64_t)i * N + col] = acc;
}

/* Launch form F's kernel with S stages of shared memory; above the 48 KiB
 * a block has without asking, the kernel's limit is raised first, once per
 * device (the attribute is the current device's): raised[d] is set once
 * slot d's limit is raised (cuda/device_slots.cuh; a device without a slot
 * asks at every launch). Before session 61 every launch asked, about 60
 * times a decode step. Two first launches racing both ask for the same
 * size: benign. */
template <Form F, int S>
void launch_stages(hmx_cuda::Job *j, unsigned grid, const float *A, const void *B,
                   const float *bias, float *C, int M, int64_t n, int64_t k, bool a_vec) {
  constexpr int bytes = S * stage_bytes<F>();
  if (bytes > 48 * 1024) {
    static std::atomic<int> raised[kDeviceSlots];
    int dev;
    const int slot = current_device_slot(&dev);
    if (slot < 0 || !raised[slot].load(std::memory_order_relaxed)) {
      if (!hmx_cuda::check(j, cudaFuncSetAttribute(gemv_slab_kernel<F, S>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   bytes),
                           "cudaFuncSetAttribute (gemv_slab)"))
        return;
      if (slot >= 0) raised[slot].store(1, std::memory_order_relaxed);
    }
  }
  gemv_slab_kernel<F, S><<<grid, kSlabThreads, bytes, j->stream>>>(A, B, bias, C, M, n, k, a_vec);
}

template <Form F>
void launch_slab(hmx_cuda::Job *j, unsigned grid, const float *A, const void *B, const float *bias,
                 float *C, int M, int64_t n, int64_t k, bool a_vec) {
  if (grid <= kDeepGrid) launch_stages<F, kDeepStages>(j, grid, A, B, bias, C, M, n, k, a_vec);
  else launch_stages<F, 2>(j, grid, A, B, bias, C, M, n, k, a_vec);
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
  const bool a_vec = k % 4 == 0 && ((uintptr_t)A & 15) == 0;
  if (rows_ok)
    launch_slab<Form::RowsF32>(j, grid, A, rows, bias, C, M, n, k, a_vec);
  else if (kept_type == HMX_GGML_F32)
    launch_slab<Form::G16F32>(j, grid, A, g16, bias, C, M, n, k, a_vec);
  else if (kept_type == HMX_GGML_BF16)
    launch_slab<Form::G16BF16>(j, grid, A, g16, bias, C, M, n, k, a_vec);
  else
    launch_slab<Form::G16F16>(j, grid, A, g16, bias, C, M, n, k, a_vec);
  if (j->st == HMX_OK) job_launched(j, "gemv_slab_kernel");
  return true;
}

} // namespace hmx_cuda
