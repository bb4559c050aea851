/* fwht and hadamard_mix kernels of the cuda backend (docs/NUMERICS.md
 * §fwht, §hadamard_mix, §D), bit-exact with ref/fwht.c. Included by
 * fwht_f32.cu, fwht_bf16.cu and fwht_f16.cu, which each instantiate
 * fwht_run<dtype> (three files compile in parallel); cuda/fwht.cu holds the
 * entry points.
 *
 * One pass over memory for every row of at most 32768 elements (n = 2^k or
 * m * 2^k), and for the longer rows of fwht_cluster: a row is read once,
 * transformed in registers and shared memory, and written once, so the
 * kernel moves the bytes of a copy. f32, bf16 and
 * f16 rows are read and written directly (device-memory calls); compute is
 * always f32.
 *
 * The order (NUMERICS §fwht; the only freedom used is which thread does
 * which independent butterfly):
 *   1. butterflies h = 1, 2, 4, ... p/2, in that order. A thread holds E =
 *      2^e elements of one p-block in registers (E = 32 or 16 in fwht_pow2,
 *      p elements when p < 32). Their indices differ in a "window" of e
 *      consecutive index bits starting at bit w; the other bits come from
 *      the thread index. Stage h = 2^s with s inside the window pairs two
 *      registers of one thread: (a, b) -> (a + b, a - b), a the lower index.
 *      Phase 0 has the window at bit 0 (each thread reads E consecutive
 *      elements: 16-byte loads) and runs stages 0 .. e-1; each later phase
 *      moves the window up through shared memory (a transpose) and runs the
 *      next e stages. The last window is [L-e, L) and runs only the stages
 *      not done yet. So every
 *      element goes through stage s only after stage s-1, for both elements
 *      of every pair: each output has exactly ref's tree of additions.
 *   2. m-point transform (m > 1): the butterflied row goes to shared memory
 *      and one thread per column j computes the m outputs: acc_r = +-u[0],
 *      then acc_r = acc_r +- u[c] for c = 1 .. m-1 in order (the signs of
 *      H_m are compile-time constants here, so each step is one FADD or FSUB).
 *   3. y = v * scale (one multiply), and for hadamard_mix fma(y, alpha, beta);
 *      then the only narrowing to bf16/f16 (RNE).
 * fwht_pow2 is that kernel with everything known at compile time (p = 2^L
 * >= 32 and m: every shared-memory and global address is a register plus an
 * immediate; for long f32 m-point rows persistent, prefetching the next rows,
 * see HMX_FWHT_PF); fwht_rows is the same schedule with L at run time (p < 32).
 * Long f32 m-point rows, 16-byte aligned: fwht_colsplit (fwht_colsplit.cuh;
 * 12 * 2048, 20 * 1024, 28 * 1024 by one CTA a row, 12 * 4096 and 28 * 2048
 * by a cluster of two). Rows longer than 32768 elements: fwht_cluster (one
 * pass, a cluster of CTAs sharing the row through distributed shared
 * memory) where cluster_log has a cluster for the size; the others take two passes through an f32 buffer
 * (the output itself when it is f32, else a scratch of at most
 * HMX_FWHT_SCRATCH_MIB that the batch goes through in chunks of rows): the
 * butterflies per block of at most 32768 elements, then fwht_cols (m = 1,
 * the remaining stages) or fwht_factor (m > 1), with the epilogue. */
#ifndef HMX_CUDA_FWHT_IMPL_CUH
#define HMX_CUDA_FWHT_IMPL_CUH

#include "job.cuh"

#include <atomic>
#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" {
#include "canon.h"
#include "ref.h"
}

namespace hmx_cuda {
namespace fw {

/* ------------------------------------------------------------------ dtypes (NUMERICS §D) */

enum class Dt { F32, BF16, F16 };

template <Dt D> struct Io;

template <> struct Io<Dt::F32> {
  using T = float;
  static constexpr int kVec = 4; /* elements per 16-byte access */
  __device__ static float narrow(float v) { return v; }
  __device__ static float widen(float v) { return v; }
  __device__ static void unpack(uint4 u, float *v) {
    v[0] = __uint_as_float(u.x);
    v[1] = __uint_as_float(u.y);
    v[2] = __uint_as_float(u.z);
    v[3] = __uint_as_float(u.w);
  }
};

/* bf16 -> f32 is exact (the top 16 bits of the f32). f32 -> bf16 is IEEE
 * round to nearest even (cvt.rn.bf16.f32, no flush), which is what
 * hmx_f32_to_bf16 computes for every non-NaN input; a NaN stays a NaN (its
 * payload is not part of the contract, NUMERICS §C). */
template <> struct Io<Dt::BF16> {
  using T = unsigned short;
  static constexpr int kVec = 8;
  __device__ static float widen(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
  __device__ static unsigned short narrow(float f) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  }
  /* narrow(lo) | narrow(hi) << 16 in one cvt.rn.bf16x2.f32 (each half
   * rounded on its own, RNE, as narrow) */
  __device__ static unsigned narrow2(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return (unsigned)__bfloat16_as_ushort(h.x) | (unsigned)__bfloat16_as_ushort(h.y) << 16;
  }
  __device__ static void unpack(uint4 u, float *v) {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++) { /* little endian: element 2i is the low half */
      v[2 * i] = __uint_as_float(w[i] << 16);
      v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
};

/* f16 -> f32 is exact (cvt.f32.f16, subnormals included). f32 -> f16 is
 * IEEE RNE (cvt.rn.f16.f32, no flush): >= 65520 to inf, f16 subnormals on
 * the 2^-24 grid, exactly hmx_f32_to_f16 for every non-NaN input. */
template <> struct Io<Dt::F16> {
  using T = unsigned short;
  static constexpr int kVec = 8;
  __device__ static float widen(unsigned short h) { return __half2float(__ushort_as_half(h)); }
  __device__ static unsigned short narrow(float f) { return __half_as_ushort(__float2half_rn(f)); }
  /* narrow(lo) | narrow(hi) << 16 in one cvt.rn.f16x2.f32 (each half
   * rounded on its own, RNE, as narrow) */
  __device__ static unsigned narrow2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return (unsigned)__half_as_ushort(h.x) | (unsigned)__half_as_ushort(h.y) << 16;
  }
  __device__ static void unpack(uint4 u, float *v) {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
      v[2 * i] = widen((unsigned short)(w[i] & 0xffffu));
      v[2 * i + 1] = widen((unsigned short)(w[i] >> 16));
    }
  }
};

/* ------------------------------------------------------------------ layout */

/* Resident threads per SM that fwht_pow2 asks of the register allocator
 * (registers per thread = 65536 / that). 1024 (64 registers: no spills,
 * 40 to 48 used) measured faster on the H100 than 1536 (40 registers and
 * 16-byte spills): f32 n = 1024 93.3% vs 80.0% of copy bandwidth, bf16
 * 100.6% vs 97.6% (docs/CUDA.md). -D to override. */
#ifndef HMX_FWHT_MIN_THREADS
#define HMX_FWHT_MIN_THREADS 1024
#endif

constexpr int kMaxRow = 32768; /* elements of a row done by one CTA (2^15) */
constexpr int kLogMaxRow = 15;
#ifndef HMX_FWHT_CTA_THREADS /* -D for experiments */
#define HMX_FWHT_CTA_THREADS 256
#endif
constexpr int kCtaThreads = HMX_FWHT_CTA_THREADS; /* CTA size aimed at when rows are short */

/* Index (inside its p-block) of register k of thread tau when the window
 * starts at bit w: tau's bits below w stay, k's 5 (or e) bits go to w ..,
 * tau's remaining bits move above the window. */
__host__ __device__ __forceinline__ int win_index(int tau, int k, int w, int e) {
  return (tau & ((1 << w) - 1)) | (k << w) | ((tau >> w) << (w + e));
}
/* One float of padding per 32: the phase-0 transpose (thread tau writes 32
 * consecutive elements) and the later ones (lanes read consecutive elements)
 * are both free of bank conflicts. pad_index(a + b) = pad_index(a) +
 * pad_index(b) whenever (a mod 32) + (b mod 32) < 32, which holds for the
 * thread part and the register part of every win_index. */
__host__ __device__ __forceinline__ constexpr int pad_index(int i) { return i + (i >> 5); }
__host__ __device__ __forceinline__ constexpr int row_stride(int n) { return n + ((n + 31) >> 5); }

constexpr size_t kMaxSmem = (size_t)(kMaxRow + kMaxRow / 32) * sizeof(float); /* 135168 */

enum { EPI_NONE = 0, EPI_SCALE = 1, EPI_MIX = 2 };

/* NUMERICS §fwht step 3 and §hadamard_mix: one multiply, then one fma. */
__device__ __forceinline__ float epilogue(float v, int epi, float scale, const float *alpha,
                                          const float *beta, int col) {
  if (epi == EPI_NONE) return v;
  float o = __fmul_rn(v, scale);
  if (epi == EPI_MIX) o = __fmaf_rn(o, alpha[col], beta[col]);
  return o;
}

/* Butterfly stages s = w + b for window bits b = b0 .. e-1, in increasing b
 * (NUMERICS §fwht step 1): registers k and k + 2^b hold the pair
 * (j, j + 2^s), j the lower index: (a, b) -> (a + b, a - b). */
template <int EMAX>
__device__ __forceinline__ void reg_stages(float (&v)[EMAX], int b0, int e) {
#pragma unroll
  for (int b = 0; (1 << b) < EMAX; b++) {
    if (b < b0 || b >= e) continue; /* uniform over the CTA (constant in fwht_pow2) */
#pragma unroll
    for (int k = 0; k < EMAX; k++) {
      if (k & (1 << b)) continue;
      const float lo = v[k], hi = v[k | (1 << b)];
      v[k] = __fadd_rn(lo, hi);
      v[k | (1 << b)] = __fsub_rn(lo, hi);
    }
  }
}

/* ------------------------------------------------------------------ H_m */

/* Row r of H_m as a bit mask (bit c set where H_m[r][c] = +1), the matrices
 * of src/hadamard_factors.c (NUMERICS appendix). Compile-time constants, so
 * after unrolling every sign is folded into an FADD or FSUB; factors_ok()
 * checks them against hmx_hadamard_factor_entry before the first launch. */
__host__ __device__ constexpr unsigned long long hrow(int m, int r) {
  constexpr unsigned long long h12[12] = {0xffdull, 0x554ull, 0xc37ull, 0x691ull, 0xdfull, 0xa45ull,
                                          0x373ull, 0x919ull, 0xdc3ull, 0x469ull, 0x70full, 0x1a5ull};
  constexpr unsigned long long h20[20] = {
      0x6cc21ull, 0xd1c42ull, 0xab884ull, 0x5f108ull, 0xb6610ull, 0x9c83eull, 0x3945dull,
      0x7289bull, 0xe5117ull, 0xca60full, 0xf05acull, 0xe8b58ull, 0xd92b1ull, 0xba163ull,
      0x7c2c6ull, 0x8592ull,  0x10b05ull, 0x2122aull, 0x42074ull, 0x840c9ull};
  constexpr unsigned long long h28[28] = {
      0x3296181ull, 0x6528382ull, 0xc854704ull, 0x92a8e08ull, 0x2751c10ull, 0x4ca7820ull,
      0x994b0c0ull, 0x4b980bcull, 0x9534178ull, 0x2a6c271ull, 0x54d8463ull, 0xa9b0847ull,
      0x536500full, 0xa4ce01eull, 0x7804cdaull, 0xf009935ull, 0xe21326aull, 0xc6224d5ull,
      0x8e409abull, 0x1e81356ull, 0x3d0262dull, 0x30ed66ull,  0x41dacdull,  0x83b51bull,
      0x1072ab6ull, 0x20e15ecull, 0x41c2b59ull, 0x81856b3ull};
  constexpr unsigned long long h40[40] = {
      0x100001ull,     0x9ea1b9ea1bull, 0x3d4373d437ull, 0x7a86d7a86dull, 0xf50d9f50d9ull,
      0xea1b3ea1b3ull, 0xd4367d4367ull, 0xa86cfa86cfull, 0x50d9f50d9full, 0xa1b3da1b3dull,
      0x4367b4367bull, 0x86cf586cf5ull, 0xd9eb0d9ebull,  0x1b3d51b3d5ull, 0x367a9367a9ull,
      0x6cf516cf51ull, 0xd9ea1d9ea1ull, 0xb3d43b3d43ull, 0x67a8767a87ull, 0xcf50dcf50dull,
      0xffffe00001ull, 0x615e49ea1bull, 0xc2bc83d437ull, 0x857927a86dull, 0xaf26f50d9ull,
      0x15e4cea1b3ull, 0x2bc98d4367ull, 0x57930a86cfull, 0xaf26050d9full, 0x5e4c2a1b3dull,
      0xbc9844367bull, 0x7930a86cf5ull, 0xf26140d9ebull, 0xe4c2a1b3d5ull, 0xc9856367a9ull,
      0x930ae6cf51ull, 0x2615ed9ea1ull, 0x4c2bcb3d43ull, 0x9857867a87ull, 0x30af2cf50dull};
  return m == 12 ? h12[r] : m == 20 ? h20[r] : m == 28 ? h28[r] : m == 40 ? h40[r] : 1ull;
}

/* The tables above equal hmx_hadamard_factor_entry (once per process). */
inline bool factors_ok() {
  static const bool ok = [] {
    static const int ms[4] = {12, 20, 28, 40};
    for (int i = 0; i < 4; i++)
      for (int r = 0; r < ms[i]; r++)
        for (int c = 0; c < ms[i]; c++)
          if (((hrow(ms[i], r) >> c) & 1ull) != (hmx_hadamard_factor_entry(ms[i], r, c) > 0 ? 1ull : 0ull))
            return false;
    return true;
  }();
  return ok;
}

/* NUMERICS §fwht step 2 for one column, all M outputs at once: acc_r =
 * +-u(0), then for c = 1 .. M-1 in order acc_r = acc_r +- u(c). Each output
 * keeps ref's order; the M chains are independent (the scheduler's
 * parallelism, with M + 1 live registers) and u(c) is read once. */
template <int M, typename U>
__device__ __forceinline__ void factor_column(U u, float (&acc)[M]) {
  const float u0 = u(0);
#pragma unroll
  for (int r = 0; r < M; r++) acc[r] = (hrow(M, r) & 1ull) ? u0 : -u0;
#pragma unroll
  for (int c = 1; c < M; c++) {
    const float uc = u(c);
#pragma unroll
    for (int r = 0; r < M; r++)
      acc[r] = ((hrow(M, r) >> c) & 1ull) ? __fadd_rn(acc[r], uc) : __fsub_rn(acc[r], uc);
  }
}

/* factor_column for the K outputs r = G0 * K .. G0 * K + K - 1 only (the
 * same chain for each: +-u(0), then +-u(c) for c = 1 .. M-1 in order), then
 * st(r, acc_r). */
template <int M, int K, int G0, typename U, typename St>
__device__ __forceinline__ void factor_rows(U u, St st) {
  float acc[K];
  const float u0 = u(0);
#pragma unroll
  for (int i = 0; i < K; i++) acc[i] = (hrow(M, G0 * K + i) & 1ull) ? u0 : -u0;
#pragma unroll
  for (int c = 1; c < M; c++) {
    const float uc = u(c);
#pragma unroll
    for (int i = 0; i < K; i++)
      acc[i] = ((hrow(M, G0 * K + i) >> c) & 1ull) ? __fadd_rn(acc[i], uc) : __fsub_rn(acc[i], uc);
  }
#pragma unroll
  for (int i = 0; i < K; i++) st(G0 * K + i, acc[i]);
}

/* Pass g (run time, uniform over a warp) of M / K: factor_rows with the
 * signs of that pass's rows as compile-time constants. */
template <int M, int K, int G0 = 0, typename U, typename St>
__device__ __forceinline__ void factor_pass(int g, U u, St st) {
  if constexpr (G0 < M / K) {
    if (g == G0) factor_rows<M, K, G0>(u, st);
    else factor_pass<M, K, G0 + 1>(g, u, st);
  }
}

/* ------------------------------------------------------------------ fwht_pow2 */

/* Elements per thread of fwht_pow2: 16 or 32. 16 halves the registers
 * per thread (32 instead of 40-48) and doubles the threads, so twice the
 * warps are resident per SM; it needs n / 16 <= 1024 (one CTA per row).
 * Measured on the H100 (docs/CUDA.md, docs/results/h100/fwht_ab_*.txt),
 * % of the device-to-device copy: f32 n = 256 ... 16384 and 12 * 2^k
 * 91-93% -> 98.3-100%, 20 * 2^k up to 10240, 28 * 2^k up to 7168, 40 * 2^k
 * up to 5120 91-93% -> 97-101% (but 28 * 512 and 40 * 256, whose CTAs of
 * 896 and 640 threads run one per SM at <= 64 registers: 91.6 -> 72-77%, so
 * for M >= 28 only CTAs of <= 512 threads), hadamard_mix f32 768 / 4096
 * 83 / 61% -> 95 / 87%;
 * for 16-bit rows it wins at n <= 4096 (256: 95 -> 100%, hadamard_mix 4096:
 * 71 -> 86%) and loses above (8192: 101 -> 88%, 12 * 2^k: 97-101 -> 76-99%)
 * and for M >= 20 except the two sizes of HMX_FWHT_E16_M20_SMALL_P (M = 28:
 * -1 ... -20 pt, M = 40: -0 ... -27 pt). -D to override. */
#ifndef HMX_FWHT_E16_F32_MAX_M /* f32: 16 elements when M <= this */
#define HMX_FWHT_E16_F32_MAX_M 40
#endif
#ifndef HMX_FWHT_E16_16_MAX_N /* bf16/f16: 16 elements when M = 1 and n <= this */
#define HMX_FWHT_E16_16_MAX_N 4096
#endif
#ifndef HMX_FWHT_E16_16_MIN_M /* bf16/f16: also when M >= this (99: never) */
#define HMX_FWHT_E16_16_MIN_M 99
#endif
/* M >= this (and M < 32) gives the CTA one thread per column (p per row
 * instead of M * p / 32): the m-point sums, the long part for M = 20, 28,
 * are then one column per thread with no second, partial round; the extra
 * threads idle through the butterflies. Before session 26 off (99), since it
 * measured no gain where it matters (16-bit M = 28: -4 ... +3 pt; 16-bit
 * M = 20: -9 ... -27 pt, fewer rows per CTA; f32 M = 20, 28 up to 10240:
 * +0.5 ... +3 pt, 20480 and 28672: -2.4 and -6.6 pt); now M = 28 ... */
#ifndef HMX_FWHT_ONE_COLUMN_MIN_M
#define HMX_FWHT_ONE_COLUMN_MIN_M 28
#endif
/* ... but only for p <= 2^this: session 26 (lane stages on, register caps
 * on; docs/results/h100/fwht_ab_12/) measured one column per thread for
 * 16-bit 28 * 32 87 -> 90-91% of copy and 28 * 64 88.5 -> 81, 28 * 128 -4,
 * 28 * 512 -3 pt: so M = 28 with p = 32 only (f32 28 * 32 has 16 elements
 * per thread: not affected). */
#ifndef HMX_FWHT_ONE_COLUMN_MAX_L
#define HMX_FWHT_ONE_COLUMN_MAX_L 5
#endif
/* 1: output stores with the evict-first hint (st.global.cs): measured
 * 0.5-2 pt slower for f32 and up to 25 pt for 16-bit m-point rows, so off. */
#ifndef HMX_FWHT_STCS
#define HMX_FWHT_STCS 0
#endif

/* bf16/f16 M = 20 with p = 64, 128 (n = 1280, 2560): 16 elements measured
 * 88 -> 94% of copy; at p = 32 and p >= 256 it loses (an extra transpose,
 * or a window at bit 4, where 16-element windows meet 2-way bank
 * conflicts). 0: off. */
#ifndef HMX_FWHT_E16_M20_SMALL_P
#define HMX_FWHT_E16_M20_SMALL_P 1
#endif
/* The m-point sum of 16-bit rows with 16 elements per thread and M >= 20
 * in this many passes over the column (each pass M / that outputs, the
 * column re-read from shared memory each pass): fewer accumulators live,
 * so fewer registers (2 passes: 40, 4 passes: 32) and more resident warps.
 * Measured slower everywhere (M = 28: 78 -> 73-74%, M = 40 n = 1280: 81 ->
 * 63 / 47%), so 1: one pass. */
#ifndef HMX_FWHT_MPOINT_GROUPS
#define HMX_FWHT_MPOINT_GROUPS 1
#endif
/* resident threads asked of the register allocator for those kernels
 * (0: 1024 for M >= 28, 2048 for M = 20) */
#ifndef HMX_FWHT_MPOINT_WANT
#define HMX_FWHT_MPOINT_WANT 0
#endif

/* The same choice for a GPU whose memory is fast for its SMs (FM:
 * hmx_cuda_fast_memory, cuda/device_balance.cu; the H200). There more rows
 * wait on the instruction issue than on memory, and 32 elements a thread do
 * fewer instructions an element (one transpose fewer, and for p <= 1024 a
 * p-block's threads are one warp's lanes, whose barriers are __syncwarp).
 * Measured on the H200 (session 38, docs/results/h200/knobs/, % of the
 * copy, 16 -> 32 elements): 16-bit m = 1 512 86.7 -> 96.7, 1024 80.5 ->
 * 99.7, 2048 80.3 -> 84.9, 4096 78.9 -> 84.3; f32 8192 86.9 -> 89.5, 16384
 * 76.8 -> 83.4, 12 * 1024 79.9 -> 88.1, 20 * 512 83.9 -> 88.0, but f32
 * rows of up to 6144 elements 98-99 -> 87-90 (7168: +1, noise). So with
 * FM: 16-bit m = 1 rows take 16 elements only up to this n, f32 rows only
 * up to the next. */
#ifndef HMX_FWHT_E16_16_MAX_N_FM
#define HMX_FWHT_E16_16_MAX_N_FM 256
#endif
#ifndef HMX_FWHT_E16_F32_MAX_N_FM
#define HMX_FWHT_E16_F32_MAX_N_FM 7168
#endif
/* ... and f32 rows with M >= 28 only up to this n. Measured on the H200
 * (session 39, docs/results/h200/split_store/ab4/, two rounds, 16 -> 32
 * elements): f32 40 * 128 84.7 -> 86.0, 28 * 256 85.5 -> 86.7, while 12 *
 * 512 92.8 -> 89.7 and 20 * 256 98.4 -> 88.9 (so only M >= 28). */
#ifndef HMX_FWHT_E16_F32_M28_MAX_N_FM
#define HMX_FWHT_E16_F32_M28_MAX_N_FM 4096
#endif
template <Dt D, int M, int L, bool FM = false> __host__ __device__ constexpr int pow2_log_e() {
  return ((M << L) >> 4) <= 1024 &&
                 (D == Dt::F32 ? M <= HMX_FWHT_E16_F32_MAX_M && (M < 28 || ((M << L) >> 4) <= 512) &&
                                     (!FM || (M << L) <= (M >= 28 ? HMX_FWHT_E16_F32_M28_MAX_N_FM
                                                               : HMX_FWHT_E16_F32_MAX_N_FM))
                               : (M == 1 && (1 << L) <= (FM ? HMX_FWHT_E16_16_MAX_N_FM
                                                            : HMX_FWHT_E16_16_MAX_N)) ||
                                     M >= HMX_FWHT_E16_16_MIN_M ||
                                     (HMX_FWHT_E16_M20_SMALL_P && M == 20 && (L == 6 || L == 7)))
             ? 4
             : 5;
}

/* passes of the m-point sum (see HMX_FWHT_MPOINT_GROUPS) */
template <int M, int LE> __host__ __device__ constexpr int mpoint_groups() {
  return LE == 4 && M >= 20 && M % HMX_FWHT_MPOINT_GROUPS == 0 ? HMX_FWHT_MPOINT_GROUPS : 1;
}

/* 16-bit m-point rows: the m-point sum two neighbouring columns a thread
 * (pow2_group), so that each output pair is rounded by one cvt (Io::narrow2)
 * and written by one 32-bit store, for M <= this (0: never; M > 1 and one
 * pass, HMX_FWHT_MPOINT_GROUPS). Same additions in the same order. Measured
 * on the H200 (session 40, docs/results/h200/mpoint_pairs/, two rounds, %
 * of the copy, bf16 / f16): M = 12, every p, +3.5 ... +6.7 pt (384: 86.9 ->
 * 93.2 / 86.5 -> 93.2; 1536: 76.6 -> 81.2; 12288: 73.0 -> 77.8); Nsight
 * Compute counted 28.3 -> 24.9 thread instructions an element at 12 * 64.
 * M = 20: 20 * 64 and 20 * 128 (16 elements a thread, 32 registers) spill
 * and lose 10 pt, the rest +0 ... +2; M = 28, 40: 2 * M accumulators cost
 * occupancy, -1 ... -26 pt. So M = 12 only. */
#ifndef HMX_FWHT_MPOINT_PAIRS_MAX_M
#define HMX_FWHT_MPOINT_PAIRS_MAX_M 12
#endif
/* the same for f32 output (one 8-byte store a pair): measured slower (f32 12
 * * 32 ... 12 * 256 99 -> 78-88%, 20 * 2^k 99 -> 53%), so never */
#ifndef HMX_FWHT_MPOINT_PAIRS_F32_MAX_M
#define HMX_FWHT_MPOINT_PAIRS_F32_MAX_M 0
#endif
template <Dt DO, int M, int LE> __host__ __device__ constexpr bool pow2_mpoint_pairs() {
  return M > 1 && mpoint_groups<M, LE>() == 1 &&
         M <= (DO == Dt::F32 ? HMX_FWHT_MPOINT_PAIRS_F32_MAX_M : HMX_FWHT_MPOINT_PAIRS_MAX_M);
}

/* CTA size aimed at by fwht_pow2 (rows per CTA = that / threads per row),
 * per row shape; -D for experiments. Session 23 on the H100 (A/B, two rounds,
 * docs/results/h100/fwht_ab_10/), % of copy: M = 40 with 32 elements per
 * thread (16-bit 40 * 32, 40 * 64): 192 instead of 256 (4 rows of 40 threads
 * instead of 6, 2 of 80 instead of 3) 81-83 -> 90.5-91.6% and 69-70 ->
 * 84-85%; 128: 88-90 / 77%. M = 20 with 16 elements (16-bit 20 * 64, f32
 * 20 * 32 and 20 * 64): 192 (2 rows of 80 threads instead of 3, 4 of 40
 * instead of 6) 93 -> 97.5%, f32 99.0 -> 99.6%. M = 28 with 32 elements
 * (16-bit 28 * 32 ... 28 * 256): 256 is best; 192, 384 and 512 each lost
 * 2-10 pt at 896 ... 3584 (and 512 10 pt at 7168). */
#ifndef HMX_FWHT_CTA_M20_E16
#define HMX_FWHT_CTA_M20_E16 192
#endif
#ifndef HMX_FWHT_CTA_M28_E32
#define HMX_FWHT_CTA_M28_E32 kCtaThreads
#endif
#ifndef HMX_FWHT_CTA_M40_E32
#define HMX_FWHT_CTA_M40_E32 192
#endif
/* m = 1 with 32 elements a thread, n <= 4096 (only on GPUs with fast memory,
 * pow2_log_e; above, a row fills a CTA of 256): 128 instead of 256 measured
 * on the H200 (session 38, docs/results/h200/pf_m1/, % of the copy, bf16 /
 * f16) 2048 84.1 -> 86.3 / 83.8 -> 85.4, 4096 83.1 -> 85.5 / 83.1 -> 85.5,
 * 512 and 1024 +0.4 ... -0.4 */
#ifndef HMX_FWHT_CTA_M1_E32
#define HMX_FWHT_CTA_M1_E32 128
#endif
__host__ __device__ constexpr int pow2_cta(int M, int LE) {
  return M == 1 && LE == 5    ? HMX_FWHT_CTA_M1_E32
         : M == 20 && LE == 4 ? HMX_FWHT_CTA_M20_E16
         : M == 28 && LE == 5 ? HMX_FWHT_CTA_M28_E32
         : M == 40 && LE == 5 ? HMX_FWHT_CTA_M40_E32
                              : kCtaThreads;
}

/* Rows of n = M * 2^L <= 32768 (L >= 5), everything at compile time:
 * E = 2^LE elements per thread, TP = 2^(L-LE) threads per p-block, M * TP
 * butterfly threads per row (trow_all >= that threads per row), R rows per
 * CTA. */
template <int M, int L, int LE> struct Pow2 {
  static constexpr int E = 1 << LE;
  static constexpr int p = 1 << L, n = M * p;
  static constexpr int tp = p / E, trow = M * tp;
  static constexpr bool one_col =
      M > 1 && M < 32 && M >= HMX_FWHT_ONE_COLUMN_MIN_M && L <= HMX_FWHT_ONE_COLUMN_MAX_L && LE == 5;
  static constexpr int trow_all = one_col ? p : trow;
  static constexpr int cta = pow2_cta(M, LE);
  static constexpr int R = trow_all >= cta ? 1 : cta / trow_all;
  static constexpr int threads = R * trow_all;
  static constexpr int bs = p + p / 32;          /* one p-block in shared memory */
  static constexpr int S = M * bs;               /* one row */
  static constexpr int phases = (L + LE - 1) / LE; /* windows 0, E, .., L-LE */
  static constexpr bool smem = phases > 1 || M > 1;
  /* resident threads asked of the register allocator (registers = 65536 /
   * that); the long m-point sums of M = 28, 40 keep 64 registers */
  static constexpr int want =
      LE == 4 && M >= 20 && HMX_FWHT_MPOINT_WANT > 0 ? HMX_FWHT_MPOINT_WANT
      : M >= 28                                     ? 1024
      : LE == 4                                     ? 2048
                                                    : HMX_FWHT_MIN_THREADS;
  /* no more CTAs than the SM's 64 warps hold (a CTA of 80 threads takes 3) */
  static constexpr int warps = (threads + 31) / 32;
  static constexpr int min_blocks_want = want / threads > 0 ? want / threads : 1;
  static constexpr int min_blocks =
      min_blocks_want * warps <= 64 ? min_blocks_want : 64 / warps; /* warps <= 32 */
};

/* Persistent fwht_pow2 (HMX_FWHT_PF, m > 1): as many CTAs as are resident,
 * each looping over groups of R rows; once the CTA's butterflies are done,
 * its threads copy the next group's input into a shared-memory stage
 * (cp.async, 16-byte aligned input), so those loads overlap the m-point
 * sums and stores of this group. Same arithmetic as the plain kernel (only
 * where the input is read from). Measured on the H100 (docs/CUDA.md,
 * docs/results/h100/fwht_ab_7.txt), % of copy: f32 40 * 512 82.4 -> 86.5,
 * 28 * 512 92.0 -> 94.7, 12 * 2048 90.4 -> 91.4, 20 * 1024 91.5 -> 91.8;
 * in an earlier run (fwht_ab_7/run2_table.txt) 40 * 256 91.1 -> 88.9 (the
 * stage leaves 2 CTAs per SM instead of 3) and 16-bit rows slower at every
 * m > 1 size (-1 ... -22 pt: their m-point phase is issue-bound, and the
 * copies and the extra barrier cost more than the overlap gains). So: f32
 * rows of n >= 14336 where the stage fits (28 * 1024's does not). 0: off. */
#ifndef HMX_FWHT_PF
#define HMX_FWHT_PF 1
#endif
#ifndef HMX_FWHT_PF_MIN_N /* only for n >= this */
#define HMX_FWHT_PF_MIN_N 14336
#endif
/* m = 40 rows from this n. Measured on the H200 (session 39, once the
 * persistent kernel used LDS / STS, docs/results/h200/split_store/, % of
 * the copy, two rounds): f32 40 * 256 80.5 -> 87.7; at the same time 12 *
 * 1024 88.9 -> 86.3 and 20 * 512 even, and most 16-bit m-point rows
 * persistent lost 3 ... 14 pt (as on the H100). Only on fast-memory GPUs
 * (pow2_prefetch_fm_only). */
#ifndef HMX_FWHT_PF_MIN_N_M40
#define HMX_FWHT_PF_MIN_N_M40 10240
#endif
#ifndef HMX_FWHT_PF_SHARED_OFFSET /* see pow2_body; 2: m > 1 only, 1: all, 0: none */
#define HMX_FWHT_PF_SHARED_OFFSET 2
#endif
#ifndef HMX_FWHT_PF_DT /* 1: f32 rows, 2: 16-bit rows, 3: both */
#define HMX_FWHT_PF_DT 1
#endif
/* sm_90 shared memory: the most a CTA may opt in to (227 KB), an SM's
 * (228 KB), and what the SM reserves per resident CTA (1 KB). */
constexpr size_t kMaxSmemOptIn = 232448;
constexpr size_t kSmemPerSm = 233472, kSmemReservedPerCta = 1024;

/* Where the stage starts in shared memory (floats, 16-byte aligned): after
 * the R row buffers. */
template <int M, int L, int LE> __host__ __device__ constexpr int pow2_stage_at() {
  using G = Pow2<M, L, LE>;
  return G::smem ? (G::R * G::S + 3) / 4 * 4 : 0;
}
/* Dynamic shared memory of fwht_pow2, with or without the stage. */
template <Dt DI, int M, int L, int LE> __host__ __device__ constexpr size_t pow2_smem(bool pf) {
  using G = Pow2<M, L, LE>;
  return pf ? (size_t)pow2_stage_at<M, L, LE>() * sizeof(float) +
                  (size_t)G::R * G::n * sizeof(typename Io<DI>::T)
            : G::smem ? (size_t)G::R * G::S * sizeof(float)
                      : 0;
}
/* CTAs per SM asked of the register allocator: the plain kernel's, or for
 * the persistent one as many as its shared memory lets be resident: no more
 * registers than leave that occupancy, and no fewer. */
template <Dt DI, int M, int L, int LE, bool PF>
__host__ __device__ constexpr int pow2_min_blocks() {
  using G = Pow2<M, L, LE>;
  constexpr int by_smem = (int)(kSmemPerSm / (pow2_smem<DI, M, L, LE>(true) + kSmemReservedPerCta));
  constexpr int by_threads = 2048 / G::threads;
  constexpr int pf = by_smem < by_threads ? by_smem : by_threads;
  return PF ? (pf > 0 ? pf : 1) : G::min_blocks;
}
/* The persistent kernel for m = 1 rows too (1: f32, 2: 16-bit, 3: both; 0:
 * off) of at least HMX_FWHT_PF_M1_MIN_N elements, with 32 elements a thread
 * (so on the H200, not the H100: pow2_log_e): each group's stage is
 * refilled as soon as every thread has loaded its elements from it, so the
 * next rows' copies overlap this group's butterflies and stores. Measured
 * on the H200 (session 38, docs/results/h200/pf_m1/, % of the copy): f32
 * 16384 83.2 -> 90.0, though one CTA of 512 threads a SM instead of two;
 * f32 8192 89.2 -> 85.5 (3 CTAs instead of 4), 16-bit 2048 ... 32768 -7 ...
 * -17 pt. So f32 from 16384. */
#ifndef HMX_FWHT_PF_M1
#define HMX_FWHT_PF_M1 1
#endif
#ifndef HMX_FWHT_PF_M1_MIN_N
#define HMX_FWHT_PF_M1_MIN_N 16384
#endif
template <Dt DI, Dt DO, int M, int L, int LE> __host__ __device__ constexpr bool pow2_prefetch() {
  return HMX_FWHT_PF && DI == DO &&
         LE == 5 && /* the 16-element kernels run at 97-101% already */
         (M > 1 ? !Pow2<M, L, 5>::one_col && (M << L) >= (M == 40 ? HMX_FWHT_PF_MIN_N_M40 : HMX_FWHT_PF_MIN_N) &&
                      (HMX_FWHT_PF_DT & (DI == Dt::F32 ? 1 : 2))
                : (1 << L) >= HMX_FWHT_PF_M1_MIN_N && (HMX_FWHT_PF_M1 & (DI == Dt::F32 ? 1 : 2))) &&
         pow2_smem<DI, M, L, LE>(true) <= kMaxSmemOptIn;
}

/* The stages above the register window by lane shuffles (lane_stages)
 * instead of shared memory, for fwht_pow2 with M > 1 when there are at most
 * this many of them (a p-block of at most 2^that threads); 0: off. One such
 * stage (p = 2E: 16-bit 12 * 64 ... 40 * 64, f32 12 * 32 ... 40 * 32) costs a
 * shuffle and an fma an element where shared memory cost a store, a load, an
 * add and two barriers: measured on the H100 (docs/results/h100/fwht_ab_12/,
 * % of copy, two rounds) 16-bit 28 * 64 86-87 -> 91, 40 * 64 86-87 -> 89,
 * hadamard_mix 768 81 -> 84-85; f32 and the other sizes +-1 (noise). Two
 * stages (p = 4E): as many instructions as the shared-memory trip, measured
 * 28 * 128 -1.5 pt, so 1. */
#ifndef HMX_FWHT_LANE_STAGES
#define HMX_FWHT_LANE_STAGES 1
#endif
static_assert(HMX_FWHT_LANE_STAGES <= 5, "a p-block's threads must be lanes of one warp");
/* 1 (default): in fwht_pow2, the barriers of a p-block's butterflies
 * (block_stages) as __syncwarp where its threads are lanes of one warp
 * (tp <= 32), and none between the butterflies and the write-back of the
 * last window; 0: CTA barriers for both. Measured on the H100 (session 36,
 * docs/results/h100/fwht_pow2_warpsync/, % of the copy, 0 -> 1, one round
 * of every fwht size each, same run; bf16 / f16): 20 * 512 89.6 -> 91.7 /
 * 88.7 -> 92.9, 28 * 128 86.7 -> 87.4 / 86.1 -> 86.8, 28 * 256 86.2 ->
 * 87.3 / 85.3 -> 87.0, 28 * 512 76.0 -> 80.5 / 75.7 -> 80.1, 40 * 256 79.3
 * -> 81.7 / 79.9 -> 81.6, 20 * 1024 86.4 -> 89.7 / 83.7 -> 88.3; f32
 * 28 * 256 96.1 -> 100.3, the other f32 rows +0.1 ... +1; 16-bit powers of
 * two up to 512 100.4 ... 101.4 -> 100.1 ... 100.4. */
#ifndef HMX_FWHT_POW2_WARP_SYNC
#define HMX_FWHT_POW2_WARP_SYNC 1
#endif
template <int M, int L, int LE> __host__ __device__ constexpr bool pow2_lane_stages() {
  return M > 1 && L > LE && L - LE <= HMX_FWHT_LANE_STAGES;
}
__host__ __device__ constexpr int window(int q, int L, int e) {
  return e * q < L - e ? e * q : L - e;
}

/* The part of win_index that comes from the thread (the register part is
 * k << w, a compile-time offset once unrolled). */
__device__ __forceinline__ int tau_part(int tau, int w, int e) {
  return (tau & ((1 << w) - 1)) | ((tau >> w) << (w + e));
}

/* The split last window of an m = 1 row (HMX_FWHT_SPLIT_LAST): instead of
 * index bits [LB - LE, LB), the last phase's window is bits [0, LA) and
 * [LB - LE + LA, LB). Bits below LA had their stages in phase 0, so this
 * works when the last phase has at most LE - LA stages left; the thread's
 * bits then fill [LA, LB - LE + LA) (thread part tau << LA), and register
 * k stands for index split_offset(k): its low LA bits in place, the others
 * above the thread's. So the thread ends holding runs of 2^LA consecutive
 * outputs, and lane tau's run sits next to lane tau + 1's: one 4-, 8- or
 * 16-byte store a run instead of one store an element, and for 16-bit
 * output one conversion a pair (cvt.rn.bf16x2.f32 / f16x2). The last
 * phase's shared-memory reads stay scalar and free of bank conflicts: for
 * a fixed k the 32 lanes of a p-block of >= 32 threads read pad_index(2^LA
 * * lane + c), c < 2^LA, which fall in 32 different banks for LA <= 3. */
__host__ __device__ constexpr int split_offset(int k, int LB, int LE, int LA) {
  return (k & ((1 << LA) - 1)) | ((k >> LA) << (LB - LE + LA));
}
/* Low index bits kept in fwht_pow2's last window for an m = 1 row (0: the
 * plain window [L - LE, L)): as many as a 16-byte store holds (8 16-bit or
 * 4 f32 elements), at most HMX_FWHT_SPLIT_LAST and at most the last
 * phase's slack (LE * phases - L); only with 32 elements a thread and
 * p-blocks of >= 32 threads (fewer put two rows in one warp, whose reads
 * would meet 2-way bank conflicts). Where, as measured on the H200
 * (session 39, docs/results/h200/split_store/, % of the copy, two rounds
 * each):
 * - the plain kernel, 16-bit rows whose runs fill 16 bytes
 *   (HMX_FWHT_SPLIT_MIN_BYTES): bf16 / f16 2048 87.4 -> 91.1 / 86.7 -> 90.9,
 *   4096 86.7 -> 94.3 / 86.5 -> 93.6. Shorter runs lose: 8192 (8-byte runs)
 *   82.9 -> 79.0, 16384 (4-byte) 75.4 -> 70.0, at 48 registers as at 56;
 *   f32 8192 (16-byte runs) 89.2 -> 88.6, so not f32;
 * - the persistent kernel (HMX_FWHT_SPLIT_PF; f32 16384, 8-byte runs):
 *   90.4 -> 93.3. */
#ifndef HMX_FWHT_SPLIT_LAST
#define HMX_FWHT_SPLIT_LAST 3
#endif
#ifndef HMX_FWHT_SPLIT_MIN_BYTES
#define HMX_FWHT_SPLIT_MIN_BYTES 16
#endif
#ifndef HMX_FWHT_SPLIT_PF
#define HMX_FWHT_SPLIT_PF 1
#endif
template <Dt DO, int M, int L, int LE, bool PF>
__host__ __device__ constexpr int pow2_split_bits() {
  constexpr int phases = (L + LE - 1) / LE, slack = LE * phases - L;
  constexpr int vec = DO == Dt::F32 ? 2 : 3, es = DO == Dt::F32 ? 4 : 2;
  constexpr int la0 = vec < slack ? vec : slack;
  constexpr int la = la0 < HMX_FWHT_SPLIT_LAST ? la0 : HMX_FWHT_SPLIT_LAST;
  constexpr bool where = PF ? HMX_FWHT_SPLIT_PF
                            : DO != Dt::F32 && (es << la) >= HMX_FWHT_SPLIT_MIN_BYTES;
  return M == 1 && LE == 5 && L - LE >= 5 && phases > 1 && la > 0 && where ? la : 0;
}

/* The output stores (optionally evict-first: the output is never read
 * again by this kernel). */
template <typename T> __device__ __forceinline__ void st_out(T *p, T v) {
#if HMX_FWHT_STCS
  __stcs(p, v);
#else
  *p = v;
#endif
}

/* Step 3's store of 2^LA consecutive outputs o (already through the
 * epilogue) at y, aligned to their size: f32 as one float2 / float4,
 * 16-bit rounded a pair at a time (Io::narrow2) into one 4-, 8- or 16-byte
 * store. */
template <Dt DO, int LA>
__device__ __forceinline__ void store_run(typename Io<DO>::T *y, const float (&o)[1 << LA]) {
  if constexpr (DO == Dt::F32) {
    static_assert(LA == 1 || LA == 2, "f32 runs of 2 or 4");
    if constexpr (LA == 2) st_out(reinterpret_cast<float4 *>(y), make_float4(o[0], o[1], o[2], o[3]));
    else st_out(reinterpret_cast<float2 *>(y), make_float2(o[0], o[1]));
  } else {
    static_assert(LA >= 1 && LA <= 3, "16-bit runs of 2, 4 or 8");
    unsigned w[(1 << LA) / 2];
#pragma unroll
    for (int i = 0; i < (1 << LA) / 2; i++) w[i] = Io<DO>::narrow2(o[2 * i], o[2 * i + 1]);
    if constexpr (LA == 3) st_out(reinterpret_cast<uint4 *>(y), make_uint4(w[0], w[1], w[2], w[3]));
    else if constexpr (LA == 2) st_out(reinterpret_cast<uint2 *>(y), make_uint2(w[0], w[1]));
    else st_out(reinterpret_cast<unsigned *>(y), w[0]);
  }
}

/* Phase 0's load: this thread's E consecutive input elements at x, widened
 * to f32 (16-byte loads when vec). */
template <Dt DI, int E>
__device__ __forceinline__ void load_run(float (&v)[E], const typename Io<DI>::T *x, int vec) {
  if (vec) {
    constexpr int kv = Io<DI>::kVec;
#pragma unroll
    for (int q = 0; q < E / kv; q++)
      Io<DI>::unpack(reinterpret_cast<const uint4 *>(x)[q], v + q * kv);
  } else {
#pragma unroll
    for (int k = 0; k < E; k++) v[k] = Io<DI>::widen(x[k]);
  }
}

/* Step 1 (NUMERICS §fwht) of one p-block, p = 2^LB, E = 2^LE elements per
 * thread: phase 0's stages in registers, then each later phase moves the
 * window up through sblk (the block in shared memory) and runs the next
 * stages. active: whether this thread holds elements (fwht_pow2's one_col
 * threads do not, but take part in the barriers). Ends with the window at
 * bit LB - LE (at 0 when a single phase). sync(): a barrier over every
 * thread of the p-block (and whichever others take part). */
template <int LB, int LE, int LA = 0, typename Sync>
__device__ __forceinline__ void block_stages(float (&v)[1 << LE], float *sblk, int tau,
                                             bool active, Sync sync) {
  constexpr int E = 1 << LE, phases = (LB + LE - 1) / LE;
  static_assert(LA == 0 || (phases > 1 && LA <= LE * phases - LB),
                "the split last window keeps only index bits whose stages are done");
  reg_stages<E>(v, 0, LE);
#pragma unroll
  for (int q = 1; q < phases; q++) { /* window window(q-1) -> window(q) */
    const int w0 = window(q - 1, LB, LE), w1 = window(q, LB, LE);
    if (q > 1) sync(); /* the previous phase's reads are done */
    if (active) {
      float *s0 = sblk + pad_index(tau_part(tau, w0, LE));
#pragma unroll
      for (int k = 0; k < E; k++) s0[pad_index(k << w0)] = v[k];
    }
    sync();
    /* the last window split (LA > 0): register bits b >= LA still stand for
     * index bits w1 + b, so the stages left are the same register bits */
    const bool split = LA > 0 && q == phases - 1;
    if (active) {
      const float *s1 = sblk + pad_index(split ? tau << LA : tau_part(tau, w1, LE));
#pragma unroll
      for (int k = 0; k < E; k++)
        v[k] = s1[pad_index(split ? split_offset(k, LB, LE, LA) : k << w1)];
    }
    reg_stages<E>(v, LE * q - w1, LE);
  }
}
/* A named barrier (bar.sync id, n): waits for n threads (whole warps) of the
 * CTA that use the same id, e.g. one p-block's, so the other blocks of the
 * CTA need not wait for each other (id 0 is __syncthreads'). */
__device__ __forceinline__ void named_barrier(unsigned id, unsigned n) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
/* block_stages with CTA barriers (every thread of the CTA takes part) */
template <int LB, int LE, int LA = 0>
__device__ __forceinline__ void block_stages(float (&v)[1 << LE], float *sblk, int tau,
                                             bool active) {
  block_stages<LB, LE, LA>(v, sblk, tau, active, [] { __syncthreads(); });
}

/* Lane stages (HMX_FWHT_LANE_STAGES): the stages s = LE .. LB - 1 of a
 * p-block whose tp = 2^(LB - LE) threads are lanes tau of one warp, done by
 * shuffles instead of a trip through shared memory. In phase 0's layout
 * thread tau holds elements tau * E + k, so the pair (j, j + 2^s) of stage
 * s = LE + t is register k of lanes tau and tau ^ 2^t (a p-block's threads
 * are tp consecutive lanes, tp-aligned). Each lane takes its partner's
 * value; the lower lane keeps lo + hi, the upper lo - hi, both as one fma
 * whose product is exact: fma(+1, lo, hi) = RN(lo + hi) and fma(-1, hi, lo)
 * = RN(lo - hi) (NUMERICS §fwht step 1: the same rounding as FADD / FSUB,
 * signed zeros included: a + b = b + a and a - b = a + (-b) in IEEE 754).
 * Every lane of the warp takes part (idle threads on zeros); mask: the
 * lanes that exist in this warp of a CTA of `threads`. */
template <int LB, int LE>
__device__ __forceinline__ void lane_stages(float (&v)[1 << LE], int tau, unsigned mask) {
  constexpr int E = 1 << LE;
  reg_stages<E>(v, 0, LE);
#pragma unroll
  for (int t = 0; t < LB - LE; t++) {
    const float sgn = (tau >> t) & 1 ? -1.0f : 1.0f;
#pragma unroll
    for (int k = 0; k < E; k++) v[k] = __fmaf_rn(sgn, v[k], __shfl_xor_sync(mask, v[k], 1 << t));
  }
}

/* One group of G::R rows of fwht_pow2 (rows grp * R .. grp * R + R - 1) by
 * thread tid, sm the dynamic shared memory: load(v, x) fills the thread's E
 * elements for phase 0 (x: its first input element); when M > 1,
 * butterflies_done() runs once every thread of the CTA has finished its
 * butterflies (after the barrier before the m-point sums). */
template <Dt DI, Dt DO, int M, int L, int LE, bool PF = false, typename Load, typename F>
__device__ __forceinline__ void pow2_group(int64_t grp, unsigned tid, float *sm, const void *xv,
                                           void *yv, int64_t rows, float scale, int epi,
                                           const float *alpha, const float *beta, int y_align,
                                           Load load, F butterflies_done) {
  using G = Pow2<M, L, LE>;
  constexpr int E = G::E;
  using TI = typename Io<DI>::T;
  using TO = typename Io<DO>::T;
  const int rloc = tid / G::trow_all, tr = tid - rloc * G::trow_all;
  const int c = tr / G::tp, tau = tr - c * G::tp;
  const int64_t row = grp * G::R + rloc;
  const bool valid = row < rows;
  /* a butterfly thread (all of them unless one_col adds idle ones) */
  const bool bf = !G::one_col || tr < G::trow;
  float *sblk = sm + rloc * G::S + c * G::bs; /* this thread's p-block */

  float v[E];
#pragma unroll
  for (int k = 0; k < E; k++) v[k] = 0.0f;
  if (valid && bf) /* phase 0: window at bit 0, thread tau holds tau*E .. tau*E+E-1 */
    load(v, (const TI *)xv + row * G::n + c * G::p + tau * E);
  if constexpr (PF && M == 1) { /* the stage is read: the next group's copies start now */
    __syncthreads();
    butterflies_done();
  }
  constexpr bool lanes = pow2_lane_stages<M, L, LE>();
  constexpr int LA = pow2_split_bits<DO, M, L, LE, PF>();
  /* the lanes of this warp that exist (a constant for CTAs of whole warps) */
  auto warp_lanes = [tid] {
    const unsigned wb = tid & ~31u;
    return G::threads % 32 == 0 || wb + 32 <= (unsigned)G::threads
               ? 0xffffffffu
               : (1u << (G::threads - wb)) - 1u;
  };
  if constexpr (lanes) {
    lane_stages<L, LE>(v, tau, warp_lanes());
  } else if constexpr (HMX_FWHT_POW2_WARP_SYNC && G::tp <= 32) {
    /* the p-block's tp threads are lanes of one warp (blocks start at
     * multiples of tp, a power of two): its barriers are the warp's */
    const unsigned mask = warp_lanes();
    block_stages<L, LE, LA>(v, sblk, tau, bf, [mask] { __syncwarp(mask); });
  } else {
    block_stages<L, LE, LA>(v, sblk, tau, bf);
  }
  /* the last window (0 after lane stages: phase 0's layout) */
  constexpr int wl = G::phases > 1 && !lanes ? L - LE : 0;

  if (M == 1) { /* step 3 */
    TO *y = (TO *)yv + row * G::n;
    if constexpr (LA > 0) { /* the split last window: runs of 2^LA consecutive outputs */
      constexpr int run = 1 << LA;
      const int t0 = tau << LA;
      if (!valid) return;
      if (y_align >= (int)sizeof(TO) * run) { /* uniform */
#pragma unroll
        for (int h = 0; h < E / run; h++) {
          const int at = t0 + split_offset(h * run, L, LE, LA);
          float o[run];
#pragma unroll
          for (int i = 0; i < run; i++) o[i] = epilogue(v[h * run + i], epi, scale, alpha, beta, at + i);
          store_run<DO, LA>(y + at, o);
        }
      } else {
#pragma unroll
        for (int k = 0; k < E; k++) {
          const int at = t0 + split_offset(k, L, LE, LA);
          st_out(y + at, (TO)Io<DO>::narrow(epilogue(v[k], epi, scale, alpha, beta, at)));
        }
      }
      return;
    }
    const int t0 = tau_part(tau, wl, LE);
    if constexpr (sizeof(TO) == 2 && wl >= 1 && wl <= 3) {
      /* 16-bit output with a window below bit 4 (n = 64 .. 256): lanes tau and
       * tau ^ 1 hold neighbouring elements (index bit 0 is tau's bit 0), so
       * they swap halves and each writes 2 adjacent elements (32 bits): a
       * lane group then covers whole 32-byte sectors. Every element is
       * rounded by the thread that computed it; only the 16-bit results move.
       * y_align >= 4 (4-byte aligned output) is uniform; invalid rows still
       * take part in the shuffle (both lanes of a pair are in one row). */
      if (y_align >= 4) {
        const bool odd = tau & 1;
#pragma unroll
        for (int i = 0; i < E / 2; i++) {
          const int k0 = 2 * i, k1 = 2 * i + 1;
          const unsigned h0 = Io<DO>::narrow(epilogue(v[k0], epi, scale, alpha, beta, t0 + (k0 << wl)));
          const unsigned h1 = Io<DO>::narrow(epilogue(v[k1], epi, scale, alpha, beta, t0 + (k1 << wl)));
          const unsigned got = __shfl_xor_sync(0xffffffffu, odd ? h0 : h1, 1);
          /* even lane: (own k0, partner k0) at t0 + (k0 << wl); odd lane:
           * (partner k1, own k1) at t0 - 1 + (k1 << wl) */
          const unsigned lo = odd ? got : h0, hi = odd ? h1 : got;
          const int at = (odd ? t0 - 1 : t0) + ((odd ? k1 : k0) << wl);
          if (valid) st_out(reinterpret_cast<unsigned *>(y + at), lo | (hi << 16));
        }
        return;
      }
    }
    if (!valid) return;
#pragma unroll
    for (int k = 0; k < E; k++) /* for each k, the lanes write consecutive elements */
      st_out(y + t0 + (k << wl),
             (TO)Io<DO>::narrow(epilogue(v[k], epi, scale, alpha, beta, t0 + (k << wl))));
    return;
  }
  /* step 2 through shared memory. Each thread writes back exactly the
   * positions its own last window read (window wl), so no barrier is needed
   * before (HMX_FWHT_POW2_WARP_SYNC; as HMX_FWHT_COLSPLIT_WB_SYNC) */
  if (G::phases > 1 && !lanes && !HMX_FWHT_POW2_WARP_SYNC)
    __syncthreads(); /* block_stages' reads of sblk are done */
  if (bf) {
    float *s0 = sblk + pad_index(tau_part(tau, wl, LE));
#pragma unroll
    for (int k = 0; k < E; k++) s0[pad_index(k << wl)] = v[k];
  }
  __syncthreads();
  butterflies_done();
  /* every thread of the CTA takes (row, pass, column j) triples, q = (row *
   * NG + pass) * p + j, so that a warp covers 32 consecutive j of one row
   * and one pass (p is a multiple of 32): its stores for each r are whole
   * lines, and the pass (which outputs) is uniform over the warp. Element
   * c * p + j of a row sits at c * bs + pad_index(j). With one_col and NG
   * = 1, threads = R * p: one column each. */
  constexpr int NG = mpoint_groups<M, LE>();
  if constexpr (pow2_mpoint_pairs<DO, M, LE>()) {
    if (y_align >= 2 * (int)sizeof(TO)) { /* uniform: every pair's store is aligned */
      /* thread q takes the columns j, j + 1 of one row (j even: both in one
       * 32-float line of the padding, so the second is at s + 1): the same
       * two chains per output as below, then one store for the pair (16-bit:
       * rounded by one cvt, Io::narrow2), where single columns take two. */
      constexpr int hp = G::p / 2;
      for (int q = tid; q < G::R * hp; q += G::threads) {
        const int rl = q / hp, j = 2 * (q - rl * hp);
        const int64_t grow = grp * G::R + rl;
        if (grow >= rows) break; /* q only grows, and so does the row */
        const float *col = sm + rl * G::S + pad_index(j);
        float a0[M], a1[M];
        factor_column<M>([&](int cc) { return col[cc * G::bs]; }, a0);
        factor_column<M>([&](int cc) { return col[cc * G::bs + 1]; }, a1);
        TO *y = (TO *)yv + grow * G::n + j;
#pragma unroll
        for (int r = 0; r < M; r++) {
          const float o[2] = {epilogue(a0[r], epi, scale, alpha, beta, r * G::p + j),
                              epilogue(a1[r], epi, scale, alpha, beta, r * G::p + j + 1)};
          store_run<DO, 1>(y + r * G::p, o);
        }
      }
      return;
    }
  }
  for (int q = tid; q < G::R * NG * G::p; q += G::threads) {
    const int rl = q / (NG * G::p), rem = q - rl * (NG * G::p);
    const int g = rem / G::p, j = rem - g * G::p;
    const int64_t grow = grp * G::R + rl;
    if (grow >= rows) break; /* q only grows, and so does the row */
    const float *col = sm + rl * G::S + pad_index(j);
    TO *y = (TO *)yv + grow * G::n + j;
    factor_pass<M, M / NG>(
        g, [&](int cc) { return col[cc * G::bs]; },
        [&](int r, float a) {
          st_out(y + r * G::p, (TO)Io<DO>::narrow(epilogue(a, epi, scale, alpha, beta, r * G::p + j)));
        });
  }
}

/* The body of the two fwht_pow2 kernels below (they differ only in how the
 * register allocator is bounded). */
template <Dt DI, Dt DO, int M, int L, int LE, bool PF>
__device__ __forceinline__ void pow2_body(const void *xv, void *yv, int64_t rows, float scale,
                                          int epi, const float *alpha, const float *beta, int vec,
                                          int y_align) {
  using G = Pow2<M, L, LE>;
  constexpr int E = G::E;
  using TI = typename Io<DI>::T;
  extern __shared__ float sm[];
  if constexpr (!PF) { /* one group of rows per CTA */
    pow2_group<DI, DO, M, L, LE>(
        blockIdx.x, threadIdx.x, sm, xv, yv, rows, scale, epi, alpha, beta, y_align,
        [&](float (&v)[E], const TI *x) { load_run<DI>(v, x, vec); }, [] {});
  } else { /* persistent: groups blockIdx.x, + gridDim.x, ..., the next one prefetched */
    /* A group's input is R * n contiguous elements (thread t's E of them at
     * t * E), in 16-byte pieces: thread t copies pieces t, t + threads, ..
     * (a warp's copies are 512 contiguous bytes) into the stage. Piece q of
     * thread t (P per thread) sits in slot t * P + (q ^ swz(t)): the owner's
     * P pieces stay together, and the swizzle spreads the 8 lanes of each
     * 16-byte shared-memory access over all 32 banks (lanes t read slots at a
     * stride of P; swz(t) = t mod 8 when P = 8, (t / 2) mod 4 when P = 4). */
    constexpr int kv = Io<DI>::kVec, P = E / kv, LP = P == 8 ? 3 : P == 4 ? 2 : 1;
    static_assert((1 << LP) == P && P >= 4, "pieces per thread");
    auto slot = [](unsigned t, int q) { return t * P + (q ^ ((t >> (3 - LP)) & (P - 1))); };
    const int64_t groups = (rows + G::R - 1) / G::R;
    auto prefetch = [&](int64_t grp, unsigned tid, float *smg) {
      if (!vec) return; /* unaligned input: each thread loads its own directly */
      if (grp < groups) {
        uint4 *stage = reinterpret_cast<uint4 *>(smg + pow2_stage_at<M, L, LE>());
        const uint4 *src = reinterpret_cast<const uint4 *>((const TI *)xv + grp * (G::R * G::n));
        const int64_t left = (rows - grp * G::R) * (G::n / kv); /* pieces up to the last row */
        const unsigned have = left < G::threads * P ? (unsigned)left : (unsigned)(G::threads * P);
#pragma unroll
        for (int k = 0; k < P; k++) {
          const unsigned i = tid + k * G::threads;
          if (i < have) __pipeline_memcpy_async(stage + slot(i >> LP, i & (P - 1)), src + i, 16);
        }
      }
      __pipeline_commit();
    };
    prefetch(blockIdx.x, threadIdx.x, sm);
#pragma unroll 1
    for (int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
      if (vec) __pipeline_wait_prior(0); /* this thread's copies have landed */
      __syncthreads(); /* everyone's, and the last group's reads of sm are done */
      /* the thread's addresses made anew for each group: hoisted out of the
       * loop they stay live through the m-point sums and spill. For m > 1
       * (HMX_FWHT_PF_SHARED_OFFSET) what the empty asm hides is an offset
       * into sm, not the pointer: a pointer out of an asm has lost its
       * address space, so every shared-memory access through it is a
       * generic LD / ST (64-bit addresses) instead of LDS / STS. Measured
       * on the H200 (session 39, docs/results/h200/split_store/, % of the
       * copy): f32 28 * 512 72.1 -> 80.6 (56 registers instead of 72),
       * 40 * 512 76.0 -> 87.4 (64 instead of 80); but f32 16384 (m = 1, one
       * CTA an SM either way) 93.3 -> 90.1, so m = 1 keeps the pointer. */
      unsigned tid = threadIdx.x;
      float *smg;
      if constexpr (HMX_FWHT_PF_SHARED_OFFSET == 1 || (HMX_FWHT_PF_SHARED_OFFSET == 2 && M > 1)) {
        unsigned soff = 0;
        asm volatile("" : "+r"(tid), "+r"(soff));
        smg = sm + soff;
      } else {
        smg = sm;
        asm volatile("" : "+r"(tid), "+l"(smg));
      }
      pow2_group<DI, DO, M, L, LE, true>(
          grp, tid, smg, xv, yv, rows, scale, epi, alpha, beta, y_align,
          [&](float (&v)[E], const TI *x) {
            if (vec) {
              const uint4 *stage = reinterpret_cast<const uint4 *>(smg + pow2_stage_at<M, L, LE>());
#pragma unroll
              for (int q = 0; q < P; q++) Io<DI>::unpack(stage[slot(tid, q)], v + q * kv);
            } else {
              load_run<DI>(v, x, 0);
            }
          },
          /* every thread has read its part of the stage: it takes the next group */
          [&] { prefetch(grp + gridDim.x, tid, smg); });
    }
    __pipeline_wait_prior(0); /* no copy outlives the CTA */
  }
}

/* Registers per thread for some 16-bit m-point rows with 32 elements per
 * thread (0: no cap, the launch bound's). An SM's registers are four
 * banks of 16384, one per scheduler, and a CTA's warps are dealt out over
 * the four, so at 48 registers a scheduler holds 10 warps: CTAs of 7 warps
 * (28 * 64 ... 28 * 256: 224 threads) fit 5 to an SM, of 14 warps (28 * 512)
 * 2; at 40 registers (12 warps) 6 and 3. M = 40 needs 56-64 registers (5
 * warps: 7 CTAs; 40 * 512, 20 warps: 1); at 48, 8 and 2 (Nsight Compute's
 * block limits agree). Measured on the H100 (docs/CUDA.md, session 25, two
 * rounds, % of copy, bf16 / f16 alike): the cap wins where the plain kernel
 * keeps at most 35 warps per SM: 28 * 64 ... 28 * 256 78 -> 85-86, 28 * 512
 * 67 -> 75, 40 * 32 ... 40 * 512 +2 ... +11.5 (40 * 256 73 -> 79), 20 * 256 /
 * 20 * 512 +2.5 / +1, 12 * 2048 68 -> 74; it loses where the plain kernel
 * already keeps 36-40 (12 * 32 ... 12 * 1024 -1 ... -7, 20 * 32 -8, 28 * 32
 * -4) or gains no CTA (28 * 1024 -3: 28 warps either way). So only there. */
#ifndef HMX_FWHT_MAXREG_16 /* M = 12, 20, 28 */
#define HMX_FWHT_MAXREG_16 40
#endif
#ifndef HMX_FWHT_MAXREG_16_M40 /* M = 40: at 40, 790 bytes of spills */
#define HMX_FWHT_MAXREG_16_M40 48
#endif
/* M = 12 up to 12 * 1024 (L <= 10; 0: no cap), on every GPU: for
 * experiments (session 40's A/B of the caps that pow2_maxreg_fm takes). */
#ifndef HMX_FWHT_MAXREG_16_M12
#define HMX_FWHT_MAXREG_16_M12 0
#endif
template <Dt DI, int M, int L, int LE> __host__ __device__ constexpr int pow2_maxreg() {
  return DI == Dt::F32 || LE != 5 ? 0
         : M == 40                ? HMX_FWHT_MAXREG_16_M40
         : M == 12 && L <= 10 && HMX_FWHT_MAXREG_16_M12 > 0 ? HMX_FWHT_MAXREG_16_M12
         : (M == 28 && L >= 6 && L <= 9) || (M == 20 && (L == 8 || L == 9)) || (M == 12 && L == 11)
             ? HMX_FWHT_MAXREG_16
             : 0;
}

/* The cap on a GPU whose memory is fast for its SMs (hmx_cuda_fast_memory,
 * the H200), where it differs: 16-bit 12 * 64 at 48 registers (the plain
 * kernel takes 64, 4 CTAs of 240 threads an SM; 48 gives 5) and 12 * 1024
 * at 40 (CTAs of 384 threads: 3 an SM at 48 registers, 4 at 40).
 * Measured on the H200 (session 40, docs/results/h200/mpoint_pairs/ab3/,
 * two rounds, % of the copy, bf16 / f16, with the paired columns): 12 * 64
 * 84.9 -> 89.2 / 84.8 -> 88.9, 12 * 1024 77.5 -> 79.0 / 77.2 -> 79.2; the
 * other 12 * 2^k rows lost 0 ... 1 pt at 48 and up to 11 at 40 (spills).
 * The H100 measured a 40-register cap on the 12 * 2^k rows slower (session
 * 25, before the paired columns), so it keeps pow2_maxreg. */
#ifndef HMX_FWHT_MAXREG_16_M12_P64_FM
#define HMX_FWHT_MAXREG_16_M12_P64_FM 48
#endif
#ifndef HMX_FWHT_MAXREG_16_M12_P1024_FM
#define HMX_FWHT_MAXREG_16_M12_P1024_FM 40
#endif
template <Dt DI, int M, int L, int LE> __host__ __device__ constexpr int pow2_maxreg_fm() {
  constexpr int fm = DI == Dt::F32 || LE != 5 || M != 12 ? 0
                     : L == 6                           ? HMX_FWHT_MAXREG_16_M12_P64_FM
                     : L == 10                          ? HMX_FWHT_MAXREG_16_M12_P1024_FM
                                                        : 0;
  return fm > 0 ? fm : pow2_maxreg<DI, M, L, LE>();
}

template <Dt DI, Dt DO, int M, int L, int LE = pow2_log_e<DI, M, L>(),
          bool PF = pow2_prefetch<DI, DO, M, L, LE>()>
__global__ void __launch_bounds__(Pow2<M, L, LE>::threads, pow2_min_blocks<DI, M, L, LE, PF>())
fwht_pow2(const void *xv, void *yv, int64_t rows, float scale, int epi, const float *alpha,
          const float *beta, int vec, int y_align) {
  pow2_body<DI, DO, M, L, LE, PF>(xv, yv, rows, scale, epi, alpha, beta, vec, y_align);
}

/* fwht_pow2 with its registers capped at pow2_maxreg (plain, not persistent;
 * FM: at pow2_maxreg_fm) */
template <Dt DI, Dt DO, int M, int L, int LE = pow2_log_e<DI, M, L>(), bool FM = false>
__global__ void __launch_bounds__(Pow2<M, L, LE>::threads)
__maxnreg__((FM ? pow2_maxreg_fm<DI, M, L, LE>() : pow2_maxreg<DI, M, L, LE>()))
fwht_pow2_capped(const void *xv, void *yv, int64_t rows, float scale, int epi, const float *alpha,
                 const float *beta, int vec, int y_align) {
  pow2_body<DI, DO, M, L, LE, false>(xv, yv, rows, scale, epi, alpha, beta, vec, y_align);
}

/* A shared-memory address of this CTA as the 32-bit shared::cluster address
 * of the same location in CTA q of the cluster. */
__device__ __forceinline__ unsigned cluster_addr(const void *p, int q) {
  unsigned r;
  asm("mapa.shared::cluster.u32 %0, %1, %2;"
      : "=r"(r)
      : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(q));
  return r;
}

#include "fwht_colsplit.cuh"

/* ------------------------------------------------------------------ fwht_cluster */

/* Rows longer than one CTA takes (n > 32768: 2^16, 2^17, 12 * 4096,
 * 20 * 2048, 28 * 2048, 40 * 1024, 40 * 2048; f32 12 * 4096 and 28 * 2048
 * since session 34 by fwht_colsplit_cl, 16-byte aligned), in one pass by a thread-block
 * cluster of CL = 2^LCL CTAs (sm_90 distributed shared memory) instead of
 * two passes through memory. The row is NB blocks of PB = 2^LB elements: the
 * M p-blocks when M > 1; CL chunks of n / CL when M = 1. CTA r of the cluster:
 *   a. loads blocks r * NC .. r * NC + NC - 1 (NC = NB / CL) and does their
 *      butterflies exactly as fwht_pow2 (same windows, its own shared memory);
 *   b. after a cluster barrier (every CTA's reads of its own shared memory
 *      are done), writes each butterflied element to the CTA that owns its
 *      column: CTA q owns columns q * PC .. q * PC + PC - 1 (PC = PB / CL) of
 *      every block, [NB][PC] in q's shared memory (cluster_send); or, for the
 *      sizes that pull (cluster_pull: M = 1, 12, 20), into its own shared
 *      memory laid out by owner, for the owners to read after one barrier;
 *   c. after a second cluster barrier (all of those writes are visible), takes
 *      its own columns: the m-point sums (NUMERICS §fwht step 2) when M > 1;
 *      when M = 1 the stages h = PB, 2 PB, .. n / 2, in that order (the CL
 *      values of a column are the pairs of those stages), then step 3.
 * Each output has ref's tree of additions: only which thread does which
 * independent operation differs. A CTA is 1/CL of a row (<= 16384 elements),
 * so 2-4 of them share an SM and one's loads overlap another's work.
 * Tried and not kept (docs/CUDA.md): persistent clusters, each CTA copying
 * its part of the next row into shared memory (cp.async) while working on
 * this one: 40 * 1024 f32 50.6% of copy against 72.6% without it (same run). */
#ifndef HMX_FWHT_CLUSTER /* 0: the kernels before (two passes above 32768) */
#define HMX_FWHT_CLUSTER 1
#endif

/* Elements a CTA of fwht_cluster is aimed at: the smallest cluster whose
 * CTAs hold at most this many (else the largest that fits). 5120 elements
 * and 32 per thread make 160 threads. Of the cluster sizes only 40 * 1024
 * depends on it (2^16, 2^17 and 40 * 2048 take 8 CTAs, 12 * 4096, 20 * 2048
 * and 28 * 2048 4 CTAs either way): 8 CTAs of 160 threads instead of 4 of
 * 320 (10240, before session 22) measured f32 73.7 -> 75.7% of the copy
 * bandwidth and bf16 / f16 44.5 -> 45.8% (H100, two rounds each, every
 * round +2-3%; docs/CUDA.md): more, smaller CTAs wait less at the two
 * cluster barriers. */
#ifndef HMX_FWHT_CLUSTER_CTA_MAX
#define HMX_FWHT_CLUSTER_CTA_MAX 5120
#endif

/* Whether a cluster of 2^lcl CTAs can take rows of M * 2^L: the blocks split
 * evenly over the CTAs, at most 16384 elements (512 threads) per CTA, and each
 * CTA's column range a multiple of 32. */
__host__ __device__ constexpr bool cluster_fits(int M, int L, int lcl) {
  return M > 1 ? M % (1 << lcl) == 0 && (M << L) >> lcl <= 16384 && L - lcl >= 5
               : L - lcl >= 5 + lcl && (1 << (L - lcl)) <= 16384;
}

/* log2 of the cluster size for M * 2^L (-1: none): only rows that fwht_pow2
 * cannot take (n > 32768), with 2 .. 8 CTAs (8 is the portable cluster
 * size). Measured on the H100 (docs/CUDA.md): 40 * 512 and 28 * 1024, which
 * fwht_pow2 does with one CTA per SM, were no faster in f32 (82 -> 80-83%,
 * 87 -> 81%) and slower in bf16/f16 (58 -> 50%, 63 -> 50%). */
__host__ __device__ constexpr int cluster_log(int M, int L) {
  int best = -1;
  if ((M << L) <= kMaxRow) return -1;
  for (int lcl = 1; lcl <= 3; lcl++)
    if (cluster_fits(M, L, lcl) && (best < 0 || ((M << L) >> best) > HMX_FWHT_CLUSTER_CTA_MAX))
      best = lcl;
  return best;
}

/* Step b's stores (cluster_send): 1 (default) two neighbouring columns per
 * 8-byte st.shared::cluster, 0 one generic 4-byte store per element (the
 * kernel before session 28) */
#ifndef HMX_FWHT_CLUSTER_PAIRS
#define HMX_FWHT_CLUSTER_PAIRS 1
#endif

/* Step b by pulling instead of pushing: each CTA writes its butterflied
 * values into its own shared memory, laid out by owner (a CTA barrier, not a
 * cluster barrier, guards step a's reads of it), one cluster barrier
 * publishes them, and each owner reads its columns from the CTAs that hold
 * them (distributed shared memory loads, in step c's order); a CTA then
 * waits, at its very end, until the others are done reading it (an arrive
 * after its reads, the wait before it exits). One blocking cluster barrier
 * instead of two, but the remote loads' latency wants registers. Measured on
 * the H100 (session 29, docs/results/h100/fwht_ab_16, % of the copy, f32 /
 * bf16): 2^16 83.3 -> 86.7 / 67.5 -> 75.2, 2^17 74.3 -> 77.8 / 57.2 -> 62.5,
 * 12 * 4096 80.7 -> 84.0 / 63.4 -> 69.3, 20 * 2048 80.5 -> 83.7 (f32
 * uncapped; 72.8 at its cap of 40) / 60.1 -> 61.9; slower for M = 28 and 40
 * (71.1 -> 69.5, 72.5 -> 66.6, 40 * 1024 82.3 -> 80.7 even uncapped, the
 * m-point sums' M accumulators and the loads in flight spill). So by size:
 * -1 (default) pull for M = 1, 12, 20; 0 never; 1 always. */
#ifndef HMX_FWHT_CLUSTER_PULL
#define HMX_FWHT_CLUSTER_PULL -1
#endif
__host__ __device__ constexpr bool cluster_pull(int M) {
  return HMX_FWHT_CLUSTER_PULL < 0 ? M == 1 || M == 12 || M == 20 : HMX_FWHT_CLUSTER_PULL > 0;
}

/* log2 of the elements per thread in step a of fwht_cluster: 5 (32, the
 * default) or 4 (16: twice the threads, half the registers for v). Measured
 * on the H100 (session 30, docs/results/h100/fwht_ab_17, % of the copy,
 * against 5 in the same run): f32 2^16 87.0 -> 89.6 and 2^17 77.9 -> 78.9,
 * but 12 * 4096 84.1 -> 78.5, 20 * 2048 83.4 -> 75.6, 28 * 2048 72.2 ->
 * 50.1, 40 * 2048 72.6 -> 64.0 and every 16-bit size 12-22 pt lower (M = 28
 * keeps one CTA per SM: 896 threads at 40 registers). So 5. */
#ifndef HMX_FWHT_CLUSTER_LE
#define HMX_FWHT_CLUSTER_LE 5
#endif

/* 1 (default): fwht_cluster's step a synchronises each block's butterflies
 * over its own threads only (__syncwarp for blocks within a warp, else a
 * named barrier over the block's tp threads), as fwht_colsplit's
 * HMX_FWHT_COLSPLIT_BLOCK_BAR; the CTA (or cluster) barrier of step b still
 * orders the blocks before anything crosses them. 0: CTA barriers. Only
 * the m-point rows with several blocks a CTA change (NC > 1). Measured on
 * the H100 (session 37, docs/results/h100/fwht_cluster_blockbar/, % of the
 * copy, CTA -> block barriers, same run, median of two rounds): f32
 * 40 * 1024 82.1 -> 82.7, 40 * 2048 72.6 -> 73.1; bf16 / f16 40 * 1024
 * 59.9 -> 60.7 / 58.8 -> 60.9, 40 * 2048 49.2 -> 49.3 / 49.3 -> 49.5,
 * 12 * 4096 69.1 -> 69.8 / 69.1 -> 70.5, 28 * 2048 51.0 -> 52.4 / 51.0 ->
 * 53.0; rows without m-point blocks within 0.2. */
#ifndef HMX_FWHT_CLUSTER_BLOCK_BAR
#define HMX_FWHT_CLUSTER_BLOCK_BAR 1
#endif
template <int M, int L, int LCL> struct Clu {
  static constexpr int LE = HMX_FWHT_CLUSTER_LE, E = 1 << LE; /* elements per thread in step a */
  static constexpr int lcl = LCL, CL = 1 << LCL;
  static constexpr int NB = M > 1 ? M : CL;
  static constexpr int LB = M > 1 ? L : L - LCL;
  static constexpr int PB = 1 << LB, n = NB * PB;
  static constexpr int NC = NB / CL, PC = PB / CL;
  static constexpr int tp = PB / E, threads = NC * tp;
  static constexpr int bs = PB + PB / 32;  /* a block in step a */
  /* a block's PC columns in step c; padded only for the one-element stores
   * (step b's and c's accesses are runs of consecutive words either way,
   * and the pair stores need 8-byte alignment) */
  static constexpr int bsc = HMX_FWHT_CLUSTER_PAIRS ? PC : PC + PC / 32;
  __device__ static int cidx(int i) { return HMX_FWHT_CLUSTER_PAIRS ? i : pad_index(i); }
  static constexpr int S = NC * bs > NB * bsc ? NC * bs : NB * bsc;
  static constexpr int phases = (LB + LE - 1) / LE;
  static constexpr int wl = phases > 1 ? LB - LE : 0; /* the last window */
  /* 64 registers per thread, as fwht_pow2 with 32 elements */
  static constexpr int min_blocks = 1024 / threads > 0 ? 1024 / threads : 1;
  static_assert(LCL >= 1 && NB % CL == 0 && PC >= 32 && LB >= LE && threads <= 1024,
                "cluster layout");
};

/* Step b of fwht_cluster: this thread's E butterflied values (block c of the
 * row; in the last window register k holds column t0 + (k << wl), t0 < 2^wl
 * the lane's part) to the CTAs that own their columns: the owner of register
 * k is k >> (LE - LCL), known at compile time, and the lanes of a warp hold
 * consecutive columns. Every element crosses the cluster's SM-to-SM network
 * once (the row's size in f32 for every dtype), and the number of store
 * requests, not the bytes, is what costs: with HMX_FWHT_CLUSTER_PAIRS lanes
 * t0 and t0 ^ 1 swap one of registers k, k + 1 (a shuffle) and each stores
 * two neighbouring columns of one register with one 8-byte store, half the
 * requests of one store per element (H100, docs/results/h100/fwht_ab_15:
 * f32 +1.6 .. +11 pt of the copy bandwidth, bf16 / f16 +6 .. +13 pt; the
 * same stores one element at a time at 32-bit cluster addresses gained
 * nothing). Quads of columns (two rounds of swaps, 16-byte stores) were
 * slower again: the swaps cost more instructions than the requests save. */
template <class G>
__device__ __forceinline__ void cluster_send(const float (&v)[G::E], float *sm,
                                             cooperative_groups::cluster_group &cluster, int c,
                                             int t0) {
  constexpr int LE = G::LE, LCL = G::lcl, wl = G::wl;
  static_assert(G::threads % 32 == 0 && wl >= 1 && LE - LCL >= 1,
                "full warps; lanes t0, t0 ^ 1 of one block; pairs of registers per owner");
#pragma unroll
  for (int q = 0; q < G::CL; q++) {
    if constexpr (HMX_FWHT_CLUSTER_PAIRS) {
      const unsigned a = cluster_addr(sm + c * G::bsc, q);
      const bool odd = t0 & 1;
#pragma unroll
      for (int k = q << (LE - LCL); k < (q + 1) << (LE - LCL); k += 2) {
        /* the even lane stores register k of t0, t0 + 1; the odd lane
         * register k + 1 of t0 - 1, t0 */
        const float got = __shfl_xor_sync(0xffffffffu, odd ? v[k] : v[k + 1], 1);
        const float lo = odd ? got : v[k], hi = odd ? v[k + 1] : got;
        const int col = ((t0 & ~1) + ((k + (odd ? 1 : 0)) << wl)) & (G::PC - 1);
        asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(a + 4u * (unsigned)col),
                     "f"(lo), "f"(hi)
                     : "memory"); /* stays before the cluster barrier that publishes it */
      }
    } else {
      float *dst = cluster.map_shared_rank(sm, q) + c * G::bsc;
#pragma unroll
      for (int k = q << (LE - LCL); k < (q + 1) << (LE - LCL); k++)
        dst[G::cidx((t0 + (k << wl)) & (G::PC - 1))] = v[k];
    }
  }
}

/* Step c for column jl of this CTA's range (j in the block), either way
 * step b went: u(cc) is block cc's butterflied value in that column. The
 * m-point sums when M > 1; when M = 1 the stages PB, 2 PB, .. (bit b of the
 * chunk index); then the epilogue and the stores. */
template <class G, Dt DO, int M, typename U>
__device__ __forceinline__ void cluster_column(U u, typename Io<DO>::T *y, int jl, int j,
                                               float scale, int epi, const float *alpha,
                                               const float *beta) {
  constexpr int R = M > 1 ? M : G::CL;
  float a[R];
  if constexpr (M > 1) {
    factor_column<M>(u, a);
  } else {
#pragma unroll
    for (int r = 0; r < R; r++) a[r] = u(r);
    reg_stages<R>(a, 0, G::lcl);
  }
#pragma unroll
  for (int r = 0; r < R; r++)
    st_out(y + r * G::PB + jl,
           (typename Io<DO>::T)Io<DO>::narrow(epilogue(a[r], epi, scale, alpha, beta, r * G::PB + j)));
}

template <Dt DI, Dt DO, int M, int L, int LCL>
__device__ __forceinline__ void cluster_body(const void *xv, void *yv, float scale, int epi,
                                             const float *alpha, const float *beta, int vec) {
  using G = Clu<M, L, LCL>;
  constexpr int E = G::E, LE = G::LE;
  using TI = typename Io<DI>::T;
  using TO = typename Io<DO>::T;
  extern __shared__ float sm[];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const int64_t row = (int64_t)(blockIdx.x >> LCL);
  const int cl = threadIdx.x / G::tp, tau = threadIdx.x - cl * G::tp;
  const int c = rank * G::NC + cl; /* this thread's block of the row */

  /* a. load (window at bit 0: E consecutive elements) and butterflies */
  float v[E];
  load_run<DI>(v, (const TI *)xv + row * G::n + (int64_t)c * G::PB + tau * E, vec);
  if constexpr (HMX_FWHT_CLUSTER_BLOCK_BAR && G::NC > 1 && G::tp <= 32) {
    /* a block's threads are lanes of one warp (tp a power of two, blocks at
     * multiples of tp; threads = NC tp, a multiple of 32 here) */
    static_assert(G::threads % 32 == 0, "whole warps");
    block_stages<G::LB, LE>(v, sm + cl * G::bs, tau, true, [] { __syncwarp(); });
  } else if constexpr (HMX_FWHT_CLUSTER_BLOCK_BAR && G::NC > 1 && G::NC <= 15) {
    /* a named barrier over block cl's tp threads (whole warps) */
    static_assert(G::tp % 32 == 0, "whole warps a block");
    block_stages<G::LB, LE>(v, sm + cl * G::bs, tau, true,
                            [cl] { named_barrier(1 + cl, G::tp); });
  } else {
    block_stages<G::LB, LE>(v, sm + cl * G::bs, tau, true);
  }

  if constexpr (cluster_pull(M)) {
    /* b. into this CTA's own shared memory, by owner: owner q's columns of
     * local block cl at [q][cl][PC] (after step a's reads of it) */
    static_assert(G::CL * G::NC * G::PC <= G::S, "pull layout");
    __syncthreads();
    const int t0 = tau_part(tau, G::wl, LE);
#pragma unroll
    for (int k = 0; k < E; k++) {
      const int q = k >> (LE - LCL), col = (t0 + (k << G::wl)) & (G::PC - 1);
      sm[(q * G::NC + cl) * G::PC + col] = v[k];
    }
    cluster.sync(); /* everyone's values are in place */
    /* c. this CTA's columns, read from the CTAs that hold them: block cc
     * (of the row) is local block cc % NC of CTA cc / NC */
    TO *y = (TO *)yv + row * G::n + rank * G::PC;
    const float *mine = sm + rank * G::NC * G::PC;
    for (int jl = threadIdx.x; jl < G::PC; jl += G::threads) {
      const int j = rank * G::PC + jl;
      auto u = [&](int cc) { /* 32-bit cluster addresses: no 64-bit pointers held */
        float x;
        asm("ld.shared::cluster.f32 %0, [%1];"
            : "=f"(x)
            : "r"(cluster_addr(mine + (cc % G::NC) * G::PC + jl, cc / G::NC))
            : "memory");
        return x;
      };
      cluster_column<G, DO, M>(u, y, jl, j, scale, epi, alpha, beta);
    }
    /* this CTA's shared memory stays until every CTA is done reading it */
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    return;
  }

  /* b. to the owners of the columns, after a cluster barrier (every CTA's
   * reads of its own shared memory are done) */
  cluster.sync();
  cluster_send<G>(v, sm, cluster, c, tau_part(tau, G::wl, LE));
  cluster.sync();

  /* c. this CTA's columns, from its own shared memory */
  TO *y = (TO *)yv + row * G::n + rank * G::PC;
  for (int jl = threadIdx.x; jl < G::PC; jl += G::threads) {
    const float *col = sm + G::cidx(jl);
    cluster_column<G, DO, M>([&](int cc) { return col[cc * G::bsc]; }, y, jl,
                             rank * G::PC + jl, scale, epi, alpha, beta);
  }
}

/* Registers per thread of fwht_cluster, per size and dtype (0: the launch
 * bound's: 56-80). The cap buys resident CTAs (an SM's registers are four
 * banks of 16384, one per scheduler, over which a CTA's warps are dealt:
 * 40 * 1024, 5 warps, at 64 registers 6 CTAs, at 48 8) at the price of
 * some spills (28-118 bytes at 48; at 40 up to 164, and 900-1064 for
 * M = 40). Measured on the H100 (session 25, docs/CUDA.md; two rounds, 1 GiB,
 * % of copy, f32 / bf16): 40 * 1024 76.2 -> 79.5 / 45.3 -> 52.2 at 48,
 * 40 * 2048 60.4 -> 69.8 / 35.5 -> 41.9 at 48, 12 * 4096 69.0 -> 79.0 at 48
 * / 44.6 -> 54.8 at 40, 2^16 77.2 -> 80.5 at 48 / 48.1 -> 57.6 at 40,
 * 2^17 62.7 -> 63.5 at 48 / 37.3 -> 43.9 at 40, 28 * 2048 65.3 (base) /
 * 37.7 -> 44.6 at 40, 20 * 2048 74.3 (base; 72.3 at 48) / 46.1 -> 54.0 at 48;
 * f16 as bf16. -DHMX_FWHT_CLUSTER_MAXREG=N: N for every size and dtype. */
#ifndef HMX_FWHT_CLUSTER_MAXREG
#define HMX_FWHT_CLUSTER_MAXREG -1
#endif
/* f32 20 * 2048 and 28 * 2048 when they push (step b): 40 since session 28's
 * pair stores, which left registers to spare: 77.2 -> 80.7 and 67.2 -> 72.1%
 * of the copy bandwidth (48: 80.0, 66.8); 0 (uncapped) before, when 48 had
 * lost 1-3 pt. f32 20 * 2048 pulling (cluster_pull): uncapped, 72.8 -> 83.7
 * (session 29). */
#ifndef HMX_FWHT_CLUSTER_F32_M20_28_MAXREG
#define HMX_FWHT_CLUSTER_F32_M20_28_MAXREG 40
#endif
template <Dt DI, int M, int L> __host__ __device__ constexpr int cluster_maxreg() {
  if (HMX_FWHT_CLUSTER_MAXREG >= 0) return HMX_FWHT_CLUSTER_MAXREG;
  if (M == 40) return 48;
  if (DI == Dt::F32 && M == 20 && cluster_pull(M)) return 0;
  if (DI == Dt::F32) return M == 20 || M == 28 ? HMX_FWHT_CLUSTER_F32_M20_28_MAXREG : 48;
  return M == 20 ? 48 : 40;
}

template <Dt DI, Dt DO, int M, int L, int LCL>
__global__ void __cluster_dims__(1 << LCL, 1, 1)
__launch_bounds__(Clu<M, L, LCL>::threads, Clu<M, L, LCL>::min_blocks)
fwht_cluster(const void *xv, void *yv, float scale, int epi, const float *alpha,
             const float *beta, int vec) {
  cluster_body<DI, DO, M, L, LCL>(xv, yv, scale, epi, alpha, beta, vec);
}

/* fwht_cluster with its registers capped at cluster_maxreg (__maxnreg__ and
 * __launch_bounds__ do not go together) */
template <Dt DI, Dt DO, int M, int L, int LCL>
__global__ void __cluster_dims__(1 << LCL, 1, 1) __maxnreg__((cluster_maxreg<DI, M, L>()))
fwht_cluster_capped(const void *xv, void *yv, float scale, int epi, const float *alpha,
                    const float *beta, int vec) {
  cluster_body<DI, DO, M, L, LCL>(xv, yv, scale, epi, alpha, beta, vec);
}

/* ------------------------------------------------------------------ fwht_rows */

/* The same schedule with L at run time: one CTA does R rows of n = M * 2^L
 * elements (R * M * 2^L / E threads). Launched with EMAX = 16 only (p <= 16,
 * E = p: one thread per p-block, a single phase); the EMAX = 32 branches
 * (p >= 32, several phases) are the general form that fwht_pow2 unrolls. */
template <Dt DI, Dt DO, int M, int EMAX>
__global__ void __launch_bounds__(1024)
fwht_rows(const void *xv, void *yv, int64_t rows, int L, int R, float scale, int epi,
          const float *alpha, const float *beta, int vec) {
  using TI = typename Io<DI>::T;
  using TO = typename Io<DO>::T;
  extern __shared__ float sm[];
  const int e = L < 5 ? L : 5; /* EMAX == 32 exactly when e == 5 */
  const int E = 1 << e;
  const int p = 1 << L;
  const int n = M * p;
  const int tp = p >> e;   /* threads per p-block */
  const int trow = M * tp; /* threads per row */
  const int rloc = threadIdx.x / trow, tr = threadIdx.x - rloc * trow;
  const int c = tr / tp, tau = tr - c * tp;
  const int64_t row = (int64_t)blockIdx.x * R + rloc;
  const bool valid = row < rows;
  float *srow = sm + rloc * row_stride(n);

  float v[EMAX];
#pragma unroll
  for (int k = 0; k < EMAX; k++) v[k] = 0.0f;
  if (valid) { /* phase 0: window at bit 0, thread tau holds tau*E .. tau*E+E-1 */
    const TI *x = (const TI *)xv + row * n + c * p + tau * E;
    if (EMAX == 32 && vec) {
      constexpr int kv = Io<DI>::kVec;
#pragma unroll
      for (int q = 0; q < EMAX / kv; q++)
        Io<DI>::unpack(reinterpret_cast<const uint4 *>(x)[q], v + q * kv);
    } else {
#pragma unroll
      for (int k = 0; k < EMAX; k++)
        if (EMAX == 32 || k < E) v[k] = Io<DI>::widen(x[k]);
    }
  }
  reg_stages<EMAX>(v, 0, e);
  int done = e, w = 0;
  while (done < L) { /* the same trip count in every thread */
    const int w2 = done < L - e ? done : L - e;
    __syncthreads(); /* the previous phase's reads of srow are done */
#pragma unroll
    for (int k = 0; k < EMAX; k++)
      if (EMAX == 32 || k < E) srow[pad_index(c * p + win_index(tau, k, w, e))] = v[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < EMAX; k++)
      if (EMAX == 32 || k < E) v[k] = srow[pad_index(c * p + win_index(tau, k, w2, e))];
    reg_stages<EMAX>(v, done - w2, e);
    done = w2 + e;
    w = w2;
  }

  TO *y = (TO *)yv + row * n;
  if (M == 1) {
    if (!valid) return;
#pragma unroll
    for (int k = 0; k < EMAX; k++)
      if (EMAX == 32 || k < E) {
        const int idx = win_index(tau, k, w, e);
        y[idx] = Io<DO>::narrow(epilogue(v[k], epi, scale, alpha, beta, idx));
      }
    return;
  }
  /* step 2 through shared memory: thread tr takes columns tr, tr + trow, ... */
  __syncthreads();
#pragma unroll
  for (int k = 0; k < EMAX; k++)
    if (EMAX == 32 || k < E) srow[pad_index(c * p + win_index(tau, k, w, e))] = v[k];
  __syncthreads();
  /* column j is read and rewritten by one thread only. With p >= 32 (EMAX
   * 32), p is a multiple of 32 and pad_index(c * p + j) = c * bs + pad_index(j). */
  const int bs = p + (p >> 5);
  for (int j = tr; j < p; j += trow) {
    float acc[M];
    if (EMAX == 32) {
      float *col = srow + pad_index(j);
      factor_column<M>([&](int cc) { return col[cc * bs]; }, acc);
#pragma unroll
      for (int r = 0; r < M; r++) col[r * bs] = acc[r];
    } else {
      factor_column<M>([&](int cc) { return srow[pad_index(cc * p + j)]; }, acc);
#pragma unroll
      for (int r = 0; r < M; r++) srow[pad_index(r * p + j)] = acc[r];
    }
  }
  __syncthreads();
  if (!valid) return;
  /* step 3 and the store: lanes write consecutive elements */
  for (int i = tr; i < n; i += trow)
    y[i] = Io<DO>::narrow(epilogue(srow[pad_index(i)], epi, scale, alpha, beta, i));
}

/* ------------------------------------------------------------------ second passes */

/* m = 1, n = C * 32768 (C = 2^Lc <= 32): the first 15 stages are done in
 * y32; thread (b, j) holds elements j + k * 32768, k < C, runs stages
 * 15 .. 15 + Lc - 1 in order, then the epilogue. y may be y32. */
template <Dt DO>
__global__ void __launch_bounds__(256)
fwht_cols(const float *y32, void *yv, int64_t batch, int Lc, float scale, int epi,
          const float *alpha, const float *beta) {
  using TO = typename Io<DO>::T;
  const int C = 1 << Lc;
  const int64_t n = (int64_t)C << kLogMaxRow;
  const int64_t total = batch << kLogMaxRow;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = idx >> kLogMaxRow;
    const int j = (int)(idx & (kMaxRow - 1));
    const float *src = y32 + b * n + j;
    float v[32];
#pragma unroll
    for (int k = 0; k < 32; k++) v[k] = k < C ? src[(int64_t)k << kLogMaxRow] : 0.0f;
    reg_stages<32>(v, 0, Lc);
    TO *y = (TO *)yv + b * n + j;
#pragma unroll
    for (int k = 0; k < 32; k++)
      if (k < C)
        y[(int64_t)k << kLogMaxRow] =
            Io<DO>::narrow(epilogue(v[k], epi, scale, alpha, beta, (k << kLogMaxRow) + j));
  }
}

/* m > 1 when m * p > 32768: butterflies done in y32; one thread per column
 * (b, j) does step 2 and the epilogue. y may be y32. */
template <int M, Dt DO>
__global__ void __launch_bounds__(256)
fwht_factor(const float *y32, void *yv, int64_t cols, int64_t p, float scale, int epi,
            const float *alpha, const float *beta) {
  using TO = typename Io<DO>::T;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < cols;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = idx / p, j = idx % p;
    const int64_t base = b * M * p + j;
    float acc[M];
    factor_column<M>([&](int c) { return y32[base + c * p]; }, acc); /* reads all first */
    TO *y = (TO *)yv + base;
#pragma unroll
    for (int r = 0; r < M; r++)
      y[r * p] = Io<DO>::narrow(epilogue(acc[r], epi, scale, alpha, beta, (int)(r * p + j)));
  }
}

/* f32 scratch of the two-pass 16-bit rows (two_pass_rows), MiB: the batch
 * goes through it in chunks of rows (docs/results/h100/scratch_pool/). */
#ifndef HMX_FWHT_SCRATCH_MIB
#define HMX_FWHT_SCRATCH_MIB 256
#endif

/* ------------------------------------------------------------------ launches */

inline int log2_exact(int64_t p) {
  int l = 0;
  while (((int64_t)1 << l) < p) l++;
  return l;
}

/* Kernels above 48 KB of shared memory must opt in; always the same
 * (largest) value, so concurrent callers never undo each other. */
template <typename K> bool smem_opt_in(Job *j, K kern, size_t smem) {
  if (smem <= 48 * 1024) return true;
  return check(j, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)kMaxSmem),
               "cudaFuncSetAttribute");
}

/* An occupancy answer for the persistent kernel kern, asked once per kernel
 * and device (the shared-memory opt-in, then ask(&n), a CUDA occupancy
 * query named `what`) and kept in cached[kDeviceSlots] (cuda/device_slots.cuh)
 * as n + 1, 0 meaning not yet asked. The answer: > 0, or 0 when the opt-in is
 * refused or nothing fits (a tool such as compute-sanitizer may keep some
 * shared memory; the caller then runs another kernel, which gives the same
 * bits). -1 and j->st set when the query fails. Two first calls racing both
 * ask the same: benign. Before session 61 one answer was kept per process. */
template <typename K, typename Ask>
int occupancy_once(Job *j, K kern, size_t smem, std::atomic<int> *cached, const char *what,
                   Ask ask) {
  int dev;
  const int slot = current_device_slot(&dev);
  if (slot >= 0) {
    const int kept = cached[slot].load(std::memory_order_relaxed);
    if (kept > 0) return kept - 1;
  }
  int n = 0;
  if (smem <= 48 * 1024 || cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)kMaxSmemOptIn) == cudaSuccess) {
    if (!check(j, ask(&n), what)) return -1;
  } else {
    (void)cudaGetLastError(); /* the refusal is not this call's error */
  }
  if (slot >= 0) cached[slot].store(n + 1, std::memory_order_relaxed);
  return n;
}

/* CTAs of the persistent kernel kern that one SM holds (occupancy_once). */
template <typename K>
int persistent_per_sm(Job *j, K kern, int threads, size_t smem, std::atomic<int> *cached) {
  return occupancy_once(j, kern, smem, cached, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                        [&](int *n) {
                          return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, kern, threads,
                                                                               smem);
                        });
}

/* elements a thread of the last fwht_pow2 launch, and whether it was the
 * persistent kernel (cuda/fwht.cu; tests) */
extern std::atomic<int> pow2_last_elems, pow2_last_persistent;

/* Rows that take the persistent kernel only on a GPU whose memory is fast
 * for its SMs (hmx_cuda_fast_memory): those below HMX_FWHT_PF_MIN_N, whose
 * threshold was measured on the H200 alone (the H100 measured f32 40 * 256
 * slower persistent, in session 14's form). */
template <Dt DI, Dt DO, int M, int L, int LE> __host__ __device__ constexpr bool pow2_prefetch_fm_only() {
  return pow2_prefetch<DI, DO, M, L, LE>() && M > 1 && (M << L) < HMX_FWHT_PF_MIN_N;
}

/* fwht_pow2 with E = 2^LE; fast_memory: hmx_cuda_fast_memory's answer for
 * the current device (launch_pow2 asks it only where it matters). */
template <Dt DI, Dt DO, int M, int L, int LE>
void launch_pow2_le(Job *j, const void *x, void *y, int64_t rows, float scale, int epi,
                    const float *alpha, const float *beta, bool fast_memory) {
  constexpr bool PF = pow2_prefetch<DI, DO, M, L, LE>();
  pow2_last_elems.store(1 << LE, std::memory_order_relaxed);
  pow2_last_persistent.store(0, std::memory_order_relaxed);
  using G = Pow2<M, L, LE>;
  static_assert(G::n <= kMaxRow && G::threads <= 1024, "row too long for one CTA");
  const int64_t blocks = (rows + G::R - 1) / G::R;
  if (blocks > INT32_MAX) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: too many rows", j->op);
    return;
  }
  const int vec = (uintptr_t)x % 16 == 0;
  const int y_align = (uintptr_t)y % 16 == 0 ? 16 : (uintptr_t)y % 8 == 0 ? 8 : (uintptr_t)y % 4 == 0 ? 4 : 0;
  if constexpr (PF) { /* as many CTAs as are resident on the current device */
    if (!pow2_prefetch_fm_only<DI, DO, M, L, LE>() || fast_memory) {
      static std::atomic<int> per_sm_cached[kDeviceSlots]; /* occupancy_once */
      auto kern = fwht_pow2<DI, DO, M, L, LE, true>;
      const size_t smem = pow2_smem<DI, M, L, LE>(true);
      const int per_sm = persistent_per_sm(j, kern, G::threads, smem, per_sm_cached);
      int dev = 0, sms = 0;
      if (per_sm < 0 || !check(j, cudaGetDevice(&dev), "cudaGetDevice") ||
          !check(j, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                 "cudaDeviceGetAttribute"))
        return;
      const int64_t resident = (int64_t)sms * per_sm;
      if (resident > 0) {
        kern<<<(unsigned)(blocks < resident ? blocks : resident), G::threads, smem, j->stream>>>(
            x, y, rows, scale, epi, alpha, beta, vec, y_align);
        pow2_last_persistent.store(1, std::memory_order_relaxed);
        job_launched(j, "fwht_pow2 (persistent)");
        return;
      }
    }
  }
  void (*kern)(const void *, void *, int64_t, float, int, const float *, const float *, int, int);
  if constexpr (pow2_maxreg<DI, M, L, LE>() > 0) kern = fwht_pow2_capped<DI, DO, M, L, LE>;
  else kern = fwht_pow2<DI, DO, M, L, LE, false>;
  if constexpr (pow2_maxreg_fm<DI, M, L, LE>() != pow2_maxreg<DI, M, L, LE>())
    if (fast_memory) kern = fwht_pow2_capped<DI, DO, M, L, LE, true>;
  const size_t smem = pow2_smem<DI, M, L, LE>(false);
  if (!smem_opt_in(j, kern, smem)) return;
  kern<<<(unsigned)blocks, G::threads, smem, j->stream>>>(x, y, rows, scale, epi, alpha, beta, vec,
                                                          y_align);
  job_launched(j, "fwht_pow2");
}

/* fwht_pow2 as suits the current device: where the row's kernel depends on
 * whether its memory is fast for its SMs (pow2_log_e's elements a thread,
 * pow2_prefetch_fm_only's persistent kernel, pow2_maxreg_fm's register
 * cap), hmx_cuda_fast_memory decides, asked once here (every choice gives
 * the same bits). */
template <Dt DI, Dt DO, int M, int L>
void launch_pow2(Job *j, const void *x, void *y, int64_t rows, float scale, int epi,
                 const float *alpha, const float *beta) {
  constexpr int LE = pow2_log_e<DI, M, L>(), LE_FM = pow2_log_e<DI, M, L, true>();
  bool fm = false;
  if constexpr (LE != LE_FM || pow2_prefetch_fm_only<DI, DO, M, L, LE>() ||
                pow2_prefetch_fm_only<DI, DO, M, L, LE_FM>() ||
                pow2_maxreg_fm<DI, M, L, LE>() != pow2_maxreg<DI, M, L, LE>()) {
    int dev = 0;
    if (!check(j, cudaGetDevice(&dev), "cudaGetDevice")) return;
    fm = hmx_cuda_fast_memory(dev, NULL) != 0;
  }
  if (fm) launch_pow2_le<DI, DO, M, L, LE_FM>(j, x, y, rows, scale, epi, alpha, beta, true);
  else launch_pow2_le<DI, DO, M, L, LE>(j, x, y, rows, scale, epi, alpha, beta, false);
}

template <Dt DI, Dt DO, int M, int EMAX>
void launch_rows_e(Job *j, const void *x, void *y, int64_t rows, int L, float scale, int epi,
                   const float *alpha, const float *beta) {
  const int e = L < 5 ? L : 5;
  const int trow = M * (1 << (L - e));
  const int R = trow >= kCtaThreads ? 1 : kCtaThreads / trow;
  const int n = M << L;
  const size_t smem = (M > 1 || L > e) ? (size_t)R * row_stride(n) * sizeof(float) : 0;
  const int64_t blocks = (rows + R - 1) / R;
  if (blocks > INT32_MAX) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: too many rows", j->op);
    return;
  }
  const int vec = EMAX == 32 && (uintptr_t)x % 16 == 0;
  auto kern = fwht_rows<DI, DO, M, EMAX>;
  if (!smem_opt_in(j, kern, smem)) return;
  kern<<<(unsigned)blocks, R * trow, smem, j->stream>>>(x, y, rows, L, R, scale, epi, alpha, beta,
                                                        vec);
  job_launched(j, "fwht_rows");
}

/* Rows of M * 2^L: fwht_pow2 when p >= 32, else fwht_rows. */
template <Dt DI, Dt DO, int M>
void launch_rows(Job *j, const void *x, void *y, int64_t rows, int L, float scale, int epi,
                 const float *alpha, const float *beta) {
  if (j->st != HMX_OK || rows <= 0) return;
  {
    switch (L) {
#define HMX_POW2_CASE(LL)                                                                        \
  case LL:                                                                                       \
    if constexpr ((M << LL) <= kMaxRow) {                                                        \
      launch_pow2<DI, DO, M, LL>(j, x, y, rows, scale, epi, alpha, beta);                        \
      return;                                                                                    \
    }                                                                                            \
    break;
      HMX_POW2_CASE(5) HMX_POW2_CASE(6) HMX_POW2_CASE(7) HMX_POW2_CASE(8) HMX_POW2_CASE(9)
      HMX_POW2_CASE(10) HMX_POW2_CASE(11) HMX_POW2_CASE(12) HMX_POW2_CASE(13) HMX_POW2_CASE(14)
      HMX_POW2_CASE(15)
#undef HMX_POW2_CASE
    default: break;
    }
  }
  if (L < 5) launch_rows_e<DI, DO, M, 16>(j, x, y, rows, L, scale, epi, alpha, beta);
  else j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: no kernel for %d * 2^%d", j->op, M, L);
}

template <Dt DI, Dt DO, int M, int L>
void launch_cluster_ml(Job *j, const void *x, void *y, int64_t rows, float scale, int epi,
                       const float *alpha, const float *beta) {
  constexpr int LCL = cluster_log(M, L);
  using G = Clu<M, L, LCL>;
  const size_t smem = (size_t)G::S * sizeof(float);
  if (rows > (INT32_MAX >> LCL)) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: too many rows", j->op);
    return;
  }
  const int vec = (uintptr_t)x % 16 == 0;
  void (*kern)(const void *, void *, float, int, const float *, const float *, int);
  if constexpr (cluster_maxreg<DI, M, L>() > 0) kern = fwht_cluster_capped<DI, DO, M, L, LCL>;
  else kern = fwht_cluster<DI, DO, M, L, LCL>;
  if (!smem_opt_in(j, kern, smem)) return;
  /* the cluster shape is the kernel's (__cluster_dims__): CL CTAs per row */
  kern<<<(unsigned)(rows << LCL), G::threads, smem, j->stream>>>(x, y, scale, epi, alpha, beta,
                                                                  vec);
  job_launched(j, "fwht_cluster");
}

/* f32 rows of M * 2^L by fwht_colsplit (S = 1: as many CTAs as are
 * resident) or fwht_colsplit_cl (S = 2: as many clusters of S as are
 * resident); false: not launched (nothing fits), the caller takes another
 * kernel. */
template <int M, int L>
bool launch_colsplit_ml(Job *j, const float *x, float *y, int64_t rows, float scale, int epi,
                        const float *alpha, const float *beta) {
  constexpr int S = colsplit_ctas(M, L);
  using C = Cs<M, L, S>;
  static_assert(S >= 1 && C::G >= 1 && C::G <= C::GMAX && C::KC >= 1 &&
                    C::KC * C::T * S == C::p && C::G * C::NR >= C::MB &&
                    C::smem <= kMaxSmemOptIn,
                "colsplit layout");
  if constexpr (S == 1) {
    static std::atomic<int> per_sm_cached[kDeviceSlots]; /* occupancy_once */
    auto kern = fwht_colsplit<Dt::F32, M, L>;
    const int per_sm = persistent_per_sm(j, kern, C::T, C::smem, per_sm_cached);
    int dev = 0, sms = 0;
    if (per_sm < 0 || !check(j, cudaGetDevice(&dev), "cudaGetDevice") ||
        !check(j, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
               "cudaDeviceGetAttribute"))
      return true; /* j->st says why */
    if (per_sm == 0) return false;
    const int64_t resident = (int64_t)sms * per_sm;
    kern<<<(unsigned)(rows < resident ? rows : resident), C::T, C::smem, j->stream>>>(
        x, y, rows, scale, epi, alpha, beta);
    job_launched(j, "fwht_colsplit");
  } else {
    static std::atomic<int> resident_cached[kDeviceSlots]; /* occupancy_once */
    auto kern = fwht_colsplit_cl<Dt::F32, M, L, S>;
    /* clusters resident at once */
    const int resident = occupancy_once(
        j, kern, C::smem, resident_cached, "cudaOccupancyMaxActiveClusters", [&](int *n) {
          cudaLaunchConfig_t cfg = {};
          cfg.gridDim = dim3(S, 1, 1);
          cfg.blockDim = dim3(C::T, 1, 1);
          cfg.dynamicSmemBytes = C::smem;
          return cudaOccupancyMaxActiveClusters(n, kern, &cfg);
        });
    if (resident < 0) return true; /* j->st says why */
    if (resident == 0) return false;
    kern<<<(unsigned)((rows < resident ? rows : resident) * S), C::T, C::smem, j->stream>>>(
        x, y, rows, scale, epi, alpha, beta);
    job_launched(j, "fwht_colsplit_cl");
  }
  return true;
}

/* f32 rows by fwht_colsplit where colsplit_ctas takes the size and the input
 * is 16-byte aligned (then true: launched, or j->st says why not). */
template <Dt D>
bool launch_colsplit(Job *j, const void *x, void *y, int64_t rows, int m, int L, float scale,
                     int epi, const float *alpha, const float *beta) {
  if constexpr (D != Dt::F32) return false;
  if (!HMX_FWHT_COLSPLIT || (uintptr_t)x % 16 != 0) return false;
#define HMX_COLSPLIT_CASE(MM, LL)                                                                \
  if constexpr (colsplit_ctas(MM, LL) > 0)                                                      \
    if (m == MM && L == LL)                                                                      \
      return launch_colsplit_ml<MM, LL>(j, (const float *)x, (float *)y, rows, scale, epi,       \
                                        alpha, beta);
  /* every size the knobs of fwht_colsplit.cuh can give it (by default 12 * 2048,
   * 20 * 1024, 28 * 1024 one CTA a row, 12 * 4096, 20 * 2048 and 28 * 2048 two;
   * the others compile to nothing) */
  HMX_COLSPLIT_CASE(12, 11) HMX_COLSPLIT_CASE(12, 12) HMX_COLSPLIT_CASE(20, 10)
  HMX_COLSPLIT_CASE(20, 11) HMX_COLSPLIT_CASE(28, 10) HMX_COLSPLIT_CASE(28, 11)
  HMX_COLSPLIT_CASE(40, 9) HMX_COLSPLIT_CASE(40, 10) HMX_COLSPLIT_CASE(40, 11)
#undef HMX_COLSPLIT_CASE
  return false;
}

/* Rows of m * 2^L by fwht_cluster when cluster_log has a cluster for them
 * (then true: launched, or j->st says why not). */
template <Dt D>
bool launch_cluster(Job *j, const void *x, void *y, int64_t rows, int m, int L, float scale,
                    int epi, const float *alpha, const float *beta) {
  if (!HMX_FWHT_CLUSTER) return false;
#define HMX_CLUSTER_CASE(MM, LL)                                                                 \
  if constexpr (cluster_log(MM, LL) > 0)                                                         \
    if (m == MM && L == LL) {                                                                    \
      launch_cluster_ml<D, D, MM, LL>(j, x, y, rows, scale, epi, alpha, beta);                   \
      return true;                                                                               \
    }
  /* every size cluster_log takes (the others are -1: no kernel compiled) */
  HMX_CLUSTER_CASE(1, 16) HMX_CLUSTER_CASE(1, 17) HMX_CLUSTER_CASE(12, 12)
  HMX_CLUSTER_CASE(20, 11) HMX_CLUSTER_CASE(28, 11) HMX_CLUSTER_CASE(40, 10)
  HMX_CLUSTER_CASE(40, 11)
#undef HMX_CLUSTER_CASE
  return false;
}

template <Dt DO, int M>
void launch_factor(Job *j, const float *y32, void *y, int64_t batch, int64_t p, float scale,
                   int epi, const float *alpha, const float *beta) {
  if (j->st != HMX_OK) return;
  const int64_t cols = batch * p;
  fwht_factor<M, DO><<<grid_for(cols, 256), 256, 0, j->stream>>>(y32, y, cols, p, scale, epi,
                                                                alpha, beta);
  job_launched(j, "fwht_factor");
}

/* Rows longer than one CTA takes and no cluster has (n > 32768): two passes
 * through y32 (f32, rows * n; may be y): the butterflies per block of at
 * most 32768 elements, then fwht_cols (m = 1, the remaining stages) or
 * fwht_factor (m > 1), with the epilogue. */
template <Dt D>
void two_pass_rows(Job *j, const void *x, void *y, float *y32, int64_t rows, int m, int64_t p,
                   int L, float scale, int epi, const float *alpha, const float *beta) {
  if (j->st != HMX_OK) return;
  if (m == 1) {
    launch_rows<D, Dt::F32, 1>(j, x, y32, rows * (p >> kLogMaxRow), kLogMaxRow, 1.0f, EPI_NONE,
                               NULL, NULL);
    if (j->st != HMX_OK) return;
    fwht_cols<D><<<grid_for(rows * kMaxRow, 256), 256, 0, j->stream>>>(
        y32, y, rows, L - kLogMaxRow, scale, epi, alpha, beta);
    job_launched(j, "fwht_cols");
    return;
  }
  launch_rows<D, Dt::F32, 1>(j, x, y32, rows * m, L, 1.0f, EPI_NONE, NULL, NULL);
  switch (m) {
  case 12: launch_factor<D, 12>(j, y32, y, rows, p, scale, epi, alpha, beta); return;
  case 20: launch_factor<D, 20>(j, y32, y, rows, p, scale, epi, alpha, beta); return;
  case 28: launch_factor<D, 28>(j, y32, y, rows, p, scale, epi, alpha, beta); return;
  case 40: launch_factor<D, 40>(j, y32, y, rows, p, scale, epi, alpha, beta); return;
  default: break;
  }
  if (j->st == HMX_OK) j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: factor %d", j->op, m);
}

/* The whole transform: x ([batch, n] of D) -> y (of D), on j's stream. */
template <Dt D>
void fwht_run(Job *j, const void *x, void *y, int64_t batch, int64_t n, int m, int64_t p,
              float scale, int mix, const float *alpha, const float *beta) {
  if (j->st != HMX_OK || batch <= 0) return;
  if (!factors_ok()) {
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: the compiled H_m tables differ from "
                     "src/hadamard_factors.c", j->op);
    return;
  }
  const int L = log2_exact(p);
  const int epi = mix ? EPI_MIX : EPI_SCALE;
  if (launch_colsplit<D>(j, x, y, batch, m, L, scale, epi, alpha, beta)) return;
  if (launch_cluster<D>(j, x, y, batch, m, L, scale, epi, alpha, beta)) return;
  if (n <= kMaxRow) { /* one pass */
    switch (m) {
    case 1: launch_rows<D, D, 1>(j, x, y, batch, L, scale, epi, alpha, beta); return;
    case 12: launch_rows<D, D, 12>(j, x, y, batch, L, scale, epi, alpha, beta); return;
    case 20: launch_rows<D, D, 20>(j, x, y, batch, L, scale, epi, alpha, beta); return;
    case 28: launch_rows<D, D, 28>(j, x, y, batch, L, scale, epi, alpha, beta); return;
    case 40: launch_rows<D, D, 40>(j, x, y, batch, L, scale, epi, alpha, beta); return;
    default: break;
    }
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: factor %d", j->op, m);
    return;
  }
  /* two passes through an f32 buffer: y itself when it is f32; for 16-bit
   * rows a scratch of at most HMX_FWHT_SCRATCH_MIB (at least one row), the
   * batch taken in chunks of rows that it holds, one after the other on the
   * stream (rows are independent, §fwht: the same bits) */
  int64_t chunk = batch;
  if (D != Dt::F32) {
    chunk = ((int64_t)HMX_FWHT_SCRATCH_MIB << 20) / (n * (int64_t)sizeof(float));
    if (chunk < 1) chunk = 1;
    if (chunk > batch) chunk = batch;
  }
  float *scratch = D == Dt::F32 ? NULL : job_alloc(j, chunk * n);
  using T = typename Io<D>::T;
  for (int64_t r0 = 0; r0 < batch && j->st == HMX_OK; r0 += chunk) {
    const int64_t rows = batch - r0 < chunk ? batch - r0 : chunk;
    const T *xr = (const T *)x + r0 * n;
    T *yr = (T *)y + r0 * n;
    two_pass_rows<D>(j, xr, yr, D == Dt::F32 ? (float *)yr : scratch, rows, m, p, L, scale, epi,
                     alpha, beta);
  }
}

} // namespace fw
} // namespace hmx_cuda

#endif
