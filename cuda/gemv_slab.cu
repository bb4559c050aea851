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
#include "kept_decode.cuh"

#include <cuda_fp16.h>

namespace {

using hmx_cuda::kSlabRows;

constexpr int kSlabK = 256, kSlabThreads = 128;

enum class Form { RowsF32, G16F32, G16BF16, G16F16, G16Q8_0, G16Q4_0, G16Q4_1, G16Packed };

/* Forms whose slab is decoded element by element straight into shared
 * memory (the block types in G16), and what their decoders need. */
__host__ __device__ constexpr bool decodes(Form F) { return F >= Form::G16Q8_0; }
struct KeptArgs {
  int B, S;          /* G16Q*: elements and bytes of a block */
  uint32_t type;     /* G16Packed: the ggml type and its geometry */
  hmx_packed_geom g;
};

/* Weight (j, p) of a block-type form: the decoders of the f32 scratch path
 * (cuda/kept_decode.cuh), so the chains see the same values. */
template <Form F>
__device__ __forceinline__ float kept_at(const unsigned char *q, int64_t j, int64_t p, int64_t K,
                                         const KeptArgs &ka) {
  using namespace hmx_cuda::kd;
  if constexpr (F == Form::G16Q8_0) return g16_block_at<HMX_GGML_Q8_0>(q, j, p, K, ka.B, ka.S);
  else if constexpr (F == Form::G16Q4_0) return g16_block_at<HMX_GGML_Q4_0>(q, j, p, K, ka.B, ka.S);
  else if constexpr (F == Form::G16Q4_1) return g16_block_at<HMX_GGML_Q4_1>(q, j, p, K, ka.B, ka.S);
  else return packed_at(q, j, p, K, ka.type, ka.g);
}

/* Slab [k0, k0 + kc) of a block-type form decoded into Bs (element slot s:
 * k0 + s / 16 of output 16 g + s % 16, Bs's own order, so the stores meet
 * no bank twice), and A's rows into As. */
template <Form F>
__device__ __forceinline__ void decode_slab(float *Bs, float *As, const float *__restrict__ A,
                                            const void *__restrict__ B, int M, int64_t K,
                                            int64_t g, int64_t k0, int kc, const KeptArgs &ka) {
  const int t = threadIdx.x;
  const unsigned char *q = (const unsigned char *)B;
  for (int slot = t; slot < kSlabK * 16; slot += kSlabThreads) {
    const int kk = slot / 16;
    Bs[slot] = kk < kc ? kept_at<F>(q, g * 16 + slot % 16, k0 + kk, K, ka) : 0.0f;
  }
  for (int slot = t; slot < kSlabRows * kSlabK; slot += kSlabThreads) {
    const int i = slot / kSlabK, kk = slot % kSlabK;
    As[slot] = i < M && kk < kc ? A[(int64_t)i * K + k0 + kk] : 0.0f;
  }
}

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
                 int64_t K, KeptArgs ka) {
  __shared__ __align__(16) float Bs[2][kSlabK * 16];
  __shared__ float As[2][kSlabRows * kSlabK];
  const int64_t g = blockIdx.x;
  const int r = threadIdx.x % 16, i = threadIdx.x / 16; /* chain: output 16 g + r, row i */
  const int64_t col = g * 16 + r;
  const bool chain = i < M;
  float acc = chain && bias && col < N ? bias[col] : 0.0f;
  [[maybe_unused]] Staged s; /* the forms that load as stored */
  if constexpr (decodes(F)) {
    decode_slab<F>(Bs[0], As[0], A, B, M, K, g, 0, (int)(K < kSlabK ? K : kSlabK), ka);
  } else {
    load_slab<F>(s, A, B, M, N, K, g, 0, (int)(K < kSlabK ? K : kSlabK));
    store_slab<F>(s, Bs[0], As[0]);
  }
  __syncthreads();
  int cur = 0;
  for (int64_t k0 = 0; k0 < K; k0 += kSlabK) {
    const int kc = (int)(K - k0 < kSlabK ? K - k0 : kSlabK);
    const int64_t k1 = k0 + kSlabK;
    const bool more = k1 < K;
    const int kc1 = (int)(K - k1 < kSlabK ? K - k1 : kSlabK);
    /* the other buffer was last read before the previous barrier: a decoded
     * slab goes there at once; loads stay in flight while the chains run */
    if constexpr (decodes(F)) {
      if (more) decode_slab<F>(Bs[cur ^ 1], As[cur ^ 1], A, B, M, K, g, k1, kc1, ka);
    } else if (more) {
      load_slab<F>(s, A, B, M, N, K, g, k1, kc1);
    }
    if (chain) {
      const float *bs = Bs[cur] + r, *as = As[cur] + i * kSlabK;
#pragma unroll 8
      for (int kk = 0; kk < kc; kk++) acc = __fmaf_rn(as[kk], bs[kk * 16], acc);
    }
    if constexpr (!decodes(F))
      if (more) store_slab<F>(s, Bs[cur ^ 1], As[cur ^ 1]);
    __syncthreads();
    cur ^= 1;
  }
  if (chain && col < N) C[(int64_t)i * N + col] = acc;
}

} // namespace

namespace hmx_cuda {

bool gemv_slab_takes(uint32_t type, int layout) {
  /* every type with a G16 form: the float ones read as stored, the block
   * types decoded into the slab */
  return layout == HMX_QLAYOUT_G16 && hmx_qlayout_g16_ok(type);
}

bool gemv_slab(Job *j, const float *A, const float *rows, const void *g16, uint32_t kept_type,
               const float *bias, float *C, int64_t m, int64_t n, int64_t k) {
  const int64_t groups = (n + 15) / 16;
  const bool rows_ok = rows && k % 4 == 0 && ((uintptr_t)rows & 15) == 0;
  const bool g16_ok = g16 && gemv_slab_takes(kept_type, HMX_QLAYOUT_G16) &&
                      ((uintptr_t)g16 & 15) == 0;
  int64_t block = 1, bytes = 0; /* a block type's block: K must be whole blocks */
  if (g16_ok && !hmx_qtype_is_float(kept_type) && !hmx_gguf_type_block(kept_type, &block, &bytes))
    return false;
  if (m > kSlabRows || k < 1 || k % block || groups > INT32_MAX || (!rows_ok && !g16_ok))
    return false;
  if (j->st != HMX_OK || m <= 0 || n <= 0) return true;
  KeptArgs ka = {};
  if (g16_ok && !hmx_qtype_is_float(kept_type)) {
    ka.B = (int)block, ka.S = (int)bytes, ka.type = kept_type;
    if (kept_type != HMX_GGML_Q8_0 && kept_type != HMX_GGML_Q4_0 && kept_type != HMX_GGML_Q4_1)
      hmx_packed_geometry(kept_type, &ka.g);
  }
  const unsigned grid = (unsigned)groups;
  const int M = (int)m;
#define HMX_SLAB(F, b) \
  gemv_slab_kernel<Form::F><<<grid, kSlabThreads, 0, j->stream>>>(A, b, bias, C, M, n, k, ka)
  if (rows_ok) HMX_SLAB(RowsF32, rows);
  else if (kept_type == HMX_GGML_F32) HMX_SLAB(G16F32, g16);
  else if (kept_type == HMX_GGML_BF16) HMX_SLAB(G16BF16, g16);
  else if (kept_type == HMX_GGML_F16) HMX_SLAB(G16F16, g16);
  else if (kept_type == HMX_GGML_Q8_0) HMX_SLAB(G16Q8_0, g16);
  else if (kept_type == HMX_GGML_Q4_0) HMX_SLAB(G16Q4_0, g16);
  else if (kept_type == HMX_GGML_Q4_1) HMX_SLAB(G16Q4_1, g16);
  else HMX_SLAB(G16Packed, g16);
#undef HMX_SLAB
  job_launched(j, "gemv_slab_kernel");
  return true;
}

} // namespace hmx_cuda
