/* fwht_colsplit: long f32 m-point rows (M > 1, n = M * 2^L above 16384
 * elements) by one CTA a row that keeps the m-point sums in registers
 * instead of the butterflied row in shared memory. Included by
 * fwht_impl.cuh.
 *
 * fwht_pow2 holds a whole butterflied row in shared memory before its
 * m-point sums, at one CTA per SM for these sizes (its persistent form
 * stages the next row's input meanwhile). Here each of the T threads keeps
 * the M sums of its column(s) in registers (n / T of them), the p-blocks go
 * through shared memory G at a time (G * p = T * E elements: one round),
 * and the next round's input is copied into a second stage buffer
 * (cp.async) while this round computes, so the loads stay in flight
 * through the whole row.
 *
 * The arithmetic is fwht_pow2's, operation for operation (NUMERICS §fwht):
 *   1. each p-block's butterflies by block_stages, E = 16 (or 8) elements a
 *      thread, windows 0, E, ... (the same stages in the same order);
 *   2. the m-point sums of column j: acc_r = +-u(0), then acc_r +- u(c) for
 *      c = 1 .. M-1 in order: round k brings blocks c = k * G .. k * G + G-1,
 *      and each is added in increasing c (the M chains are the registers'
 *      own, carried from round to round);
 *   3. the epilogue (one multiply, one fma for hadamard_mix).
 * So the bits are fwht_pow2's and ref's.
 *
 * Measured on the H100 (session 33, docs/results/h100/fwht_colsplit/, % of
 * the copy against the persistent fwht_pow2 in the same run, two runs):
 * 28 * 1024 87.0 -> 91.3 / 92.2, 20 * 1024 91.4 -> 93.6 / 92.4 -> 93.7,
 * 12 * 2048 91.7 -> 91.0 / 91.7 -> 91.7 (no gain; it is left under the rule
 * that takes the other two rather than made an exception).
 *
 * Tried first (session 33, H100, % of the copy against the kernels before,
 * same run): S = 2 or 4 CTAs a row, each doing all the butterflies and
 * keeping the sums of 1/S of the columns (the row read S times, the later
 * reads from the L2): 12 * 4096 83.6 -> 73.8, 20 * 2048 83.2 -> 65.3,
 * 40 * 1024 82.1 -> 55.7, 28 * 2048 71.6 -> 63.7, 40 * 2048 72.5 -> 36.2:
 * the repeated butterflies cost more than the cluster exchange they save. */
#ifndef HMX_CUDA_FWHT_COLSPLIT_CUH
#define HMX_CUDA_FWHT_COLSPLIT_CUH

#include <type_traits>

/* 1: fwht_colsplit for the f32 sizes colsplit_le takes (12 * 2048,
 * 20 * 1024, 28 * 1024); 0: off, fwht_pow2 takes them */
#ifndef HMX_FWHT_COLSPLIT
#define HMX_FWHT_COLSPLIT 1
#endif
#ifndef HMX_FWHT_COLSPLIT_T /* threads per CTA */
#define HMX_FWHT_COLSPLIT_T 1024
#endif
/* m-point sums a thread may keep in registers with 16 elements per thread
 * in the butterflies, and with 8 (one more window, half the registers).
 * 8 elements and 40 sums (0 bytes of spills at 64 registers) measured
 * slower than the cluster kernel (H100, session 33, % of the copy, same
 * run): 20 * 2048 83.9 -> 76.2, 40 * 1024 82.4 -> 72.5; 48 sums for
 * 12 * 4096 spill (208 bytes): 84.4 -> 63.2. So 0: E = 16 only. */
#ifndef HMX_FWHT_COLSPLIT_MAXACC16
#define HMX_FWHT_COLSPLIT_MAXACC16 28
#endif
#ifndef HMX_FWHT_COLSPLIT_MAXACC8
#define HMX_FWHT_COLSPLIT_MAXACC8 0
#endif
/* 1: the same number of p-blocks in every round of a row (12 * 2048: 6 + 6
 * instead of 8 + 4, 20 * 1024: 10 + 10, 28 * 1024: 14 + 14; the threads
 * past G * p / E idle in the butterflies). Measured on the H100 (session
 * 33, docs/results/h100/fwht_colsplit/balance/, % of the copy, three
 * rounds each, same run): 12 * 2048 92.2 / 92.2 / 92.2 -> 93.5 / 92.7 /
 * 93.6, 20 * 1024 93.9-94.4 -> 94.3-94.4, 28 * 1024 92.4-92.7 -> 92.0-92.8.
 * 0: as many blocks a round as the threads hold, the last round short. */
#ifndef HMX_FWHT_COLSPLIT_BALANCE
#define HMX_FWHT_COLSPLIT_BALANCE 1
#endif
#ifndef HMX_FWHT_COLSPLIT_MIN_N /* only rows longer than this */
#define HMX_FWHT_COLSPLIT_MIN_N 16384
#endif

/* log2 of the elements per thread in the butterflies of fwht_colsplit for
 * f32 rows of M * 2^L (-1: not this kernel): the CTA's T threads keep the
 * row's M * p sums, n / T each, next to 16 (or 8) butterfly registers; a
 * thread takes whole columns (p a multiple of T).
 * Rows with fewer columns than threads would split a column's outputs over
 * threads; for 40 * 512 (two groups, rows r = 2i + g: interleaved, since
 * rows r and r + 20 of H_40 share sign prefixes that the compiler computes
 * once: 28.4 adds an element against 36.5 for the halves r < 20, r >= 20)
 * that measured 89.0 -> 85.2% of the copy, so they stay on fwht_pow2. */
__host__ __device__ constexpr int colsplit_le(int M, int L) {
  if (!HMX_FWHT_COLSPLIT || M == 1 || (M << L) <= HMX_FWHT_COLSPLIT_MIN_N) return -1;
  const int T = HMX_FWHT_COLSPLIT_T, p = 1 << L, n = M << L;
  if (p < T || p % T != 0) return -1;
  return n / T <= HMX_FWHT_COLSPLIT_MAXACC16 && p / 16 <= T  ? 4
         : n / T <= HMX_FWHT_COLSPLIT_MAXACC8 && p / 8 <= T ? 3
                                                             : -1;
}

/* The layout for M * 2^L: thread t takes columns j = t, t + T, .. (KC of
 * them, M sums each: n / T in all). */
template <int M, int L> struct Cs {
  static constexpr int T = HMX_FWHT_COLSPLIT_T, LE = colsplit_le(M, L), E = 1 << LE;
  static constexpr int P = E / 4, LP = LE - 2; /* 16-byte pieces a thread */
  static constexpr int p = 1 << L, n = M * p;
  static constexpr int tp = p / E;            /* threads per p-block */
  static constexpr int GMAX = T / tp;         /* p-blocks the threads hold at once */
  static constexpr int NR = (M + GMAX - 1) / GMAX; /* rounds per row */
  static constexpr int G = HMX_FWHT_COLSPLIT_BALANCE ? (M + NR - 1) / NR : GMAX; /* per round */
  static constexpr int KC = p / T;            /* columns per thread */
  static constexpr int bs = p + p / 32;       /* a p-block in shared memory */
  static constexpr int stage = G * p;         /* floats per stage buffer */
  static constexpr size_t smem = (size_t)(2 * stage + G * bs) * sizeof(float);
};

/* Blocks c = C0 .. C0 + G - 1 (those < M) into the M sums of one column
 * (col: its element in block C0's slot; slots bs apart), in increasing c. */
template <int M, int C0, int G>
__device__ __forceinline__ void colsplit_add(float (&a)[M], const float *col, int bs) {
#pragma unroll
  for (int bb = 0; bb < G; bb++) {
    const int c = C0 + bb; /* a constant once unrolled */
    if (c < M) {
      const float u = col[bb * bs];
#pragma unroll
      for (int i = 0; i < M; i++) {
        const bool plus = (hrow(M, i) >> c) & 1ull;
        a[i] = c == 0 ? (plus ? u : -u) : plus ? __fadd_rn(a[i], u) : __fsub_rn(a[i], u);
      }
    }
  }
}

/* f(integral_constant<int, K>) for K = K0 .. N - 1, in order */
template <int K0, int N, typename F> __device__ __forceinline__ void colsplit_rounds(F &&f) {
  if constexpr (K0 < N) {
    f(std::integral_constant<int, K0>{});
    colsplit_rounds<K0 + 1, N>(f);
  }
}

/* Persistent: as many CTAs as are resident, each looping over rows. */
template <Dt DO, int M, int L>
__global__ void __launch_bounds__(HMX_FWHT_COLSPLIT_T, 1)
fwht_colsplit(const float *x, void *yv, int64_t rows, float scale, int epi, const float *alpha,
              const float *beta) {
  using C = Cs<M, L>;
  constexpr int LE = C::LE, P = C::P, LP = C::LP;
  using TO = typename Io<DO>::T;
  extern __shared__ __align__(16) float smc[];
  float *const sblk_all = smc + 2 * C::stage;
  const unsigned tid = threadIdx.x;
  const int b = tid / C::tp, tau = tid % C::tp;
  /* thread t's E elements are the P pieces (16 bytes) P t .. P t + P - 1 of
   * the round's contiguous input; piece q of thread t sits in slot P t +
   * (q ^ swz(t)), so that each 8 lanes' 16-byte reads of their own pieces
   * cover all 32 banks (as fwht_pow2's stage) */
  auto slot = [](unsigned t, int q) { return t * P + (q ^ ((t >> (3 - LP)) & (P - 1))); };
  auto prefetch = [&](int64_t row, int k, float *buf) {
    if (row < rows) {
      const int nb = M - k * C::G < C::G ? M - k * C::G : C::G;
      const uint4 *src = reinterpret_cast<const uint4 *>(x + row * C::n + (int64_t)k * C::G * C::p);
      uint4 *dst = reinterpret_cast<uint4 *>(buf);
      const unsigned have = (unsigned)(nb * C::p / 4);
#pragma unroll
      for (int q = 0; q < P; q++) {
        const unsigned i = tid + q * C::T;
        if (i < have) __pipeline_memcpy_async(dst + slot(i >> LP, i & (P - 1)), src + i, 16);
      }
    }
    __pipeline_commit();
  };
  int par = 0;
  prefetch(blockIdx.x, 0, smc);
#pragma unroll 1
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float acc[C::KC][M];
    /* round k: blocks k * G .. k * G + G - 1 */
    colsplit_rounds<0, C::NR>([&](auto kc_) {
      constexpr int k = decltype(kc_)::value;
      float *cur = smc + par * C::stage, *nxt = smc + (par ^ 1) * C::stage;
      __pipeline_wait_prior(0); /* this thread's copies of round k have landed */
      __syncthreads();          /* everyone's; the last round's reads of both buffers are done */
      if (k + 1 < C::NR) prefetch(row, k + 1, nxt);
      else prefetch(row + gridDim.x, 0, nxt);
      par ^= 1;
      /* b < GMAX always; b >= G only with HMX_FWHT_COLSPLIT_BALANCE */
      const bool has_block = C::G == C::GMAX || b < C::G;
      const bool active = has_block && k * C::G + b < M;
      float v[C::E];
      const uint4 *st = reinterpret_cast<const uint4 *>(cur);
      if (has_block) {
#pragma unroll
        for (int q = 0; q < P; q++) Io<Dt::F32>::unpack(st[slot(tid, q)], v + 4 * q);
      } else { /* no block this round (HMX_FWHT_COLSPLIT_BALANCE) */
#pragma unroll
        for (int e = 0; e < C::E; e++) v[e] = 0.0f;
      }
      float *sblk = sblk_all + b * C::bs;
      block_stages<L, LE>(v, sblk, tau, active); /* NUMERICS §fwht step 1 */
      constexpr int wl = L - LE;                  /* the last window */
      __syncthreads(); /* block_stages' reads of sblk are done */
      if (active) {
        float *s0 = sblk + pad_index(tau_part(tau, wl, LE));
#pragma unroll
        for (int e = 0; e < C::E; e++) s0[pad_index(e << wl)] = v[e];
      }
      __syncthreads();
      /* step 2: this round's blocks into each column's sums, in increasing c */
#pragma unroll
      for (int kc = 0; kc < C::KC; kc++)
        colsplit_add<M, k * C::G, C::G>(acc[kc], sblk_all + pad_index(kc * C::T + (int)tid), C::bs);
    });
    /* step 3: each column's M outputs; a warp's 32 consecutive j make whole lines */
    TO *y = (TO *)yv + row * C::n;
#pragma unroll
    for (int kc = 0; kc < C::KC; kc++) {
      const int j = kc * C::T + (int)tid;
#pragma unroll
      for (int i = 0; i < M; i++) {
        const int at = i * C::p + j;
        st_out(y + at, (TO)Io<DO>::narrow(epilogue(acc[kc][i], epi, scale, alpha, beta, at)));
      }
    }
  }
  __pipeline_wait_prior(0); /* no copy outlives the CTA */
}

#endif
