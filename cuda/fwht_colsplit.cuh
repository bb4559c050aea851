/* fwht_colsplit: long f32 m-point rows (M > 1, n = M * 2^L above 16384
 * elements) by one CTA a row that keeps the m-point sums in registers
 * instead of the butterflied row in shared memory. Included by
 * fwht_impl.cuh (after cluster_addr and the butterfly helpers it uses).
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
 * the repeated butterflies cost more than the cluster exchange they save.
 *
 * fwht_colsplit_cl (session 34): rows whose sums one CTA cannot hold
 * (n / T > 28: 12 * 4096, 28 * 2048) by a cluster of two CTAs, each
 * summing half the columns. Round k of a row brings 2 G p-blocks; CTA r
 * loads and butterflies G of them (blocks k * 2G + r * G ..) and sends
 * each butterflied element to the CTA that sums its column: the other
 * half into the other CTA's receive buffer by st.async, whose bytes
 * complete that CTA's mbarrier (no fence needed), its own half back into
 * the stage buffer the round was loaded from, which was its butterfly
 * scratch (since session 35; before, into its own receive buffer, which
 * then held both halves). A CTA then sums the round's 2 G blocks, its G and
 * the other's, in increasing c, as above. Two receive buffers: a CTA
 * fills the other's buffer i again only after the other CTA says (a
 * remote mbarrier arrival) it is done reading it.
 * Measured on the H100 (% of the copy): session 35's own columns in the
 * stage buffer below, at HMX_FWHT_COLSPLIT_CL_NRECV. Session 34
 * (docs/results/h100/fwht_colsplit_cl/, against fwht_cluster in the same
 * run):
 *   - this form with both halves in the receive buffers: 12 * 4096 84.1
 *     -> 91.4 (84.4 -> 90.2 in the call's first
 *     single round),
 *     28 * 2048 71.3 -> 74.1, 20 * 2048 83.6 -> 81.5 (so 20 * 2048 stayed
 *     on fwht_cluster until session 36's block barriers,
 *     HMX_FWHT_COLSPLIT_CLUSTER);
 *   - each CTA reading the other's butterflied blocks from its shared
 *     memory (distributed shared memory loads) after a cluster barrier a
 *     round (barrier.cluster.arrive.release): 12 * 4096 71.3-71.8,
 *     20 * 2048 67.9-68.1, 28 * 2048 60.8-62.5 (fwht_cluster 83.7-83.9,
 *     83.2-83.4, 71.7-72.0). Timing variants with wrong bits located the
 *     cost: local reads only 79.7 / 72.1 / 65.8, CTA barriers instead of
 *     cluster barriers 93.6 / 90.9 / 80.8. The release arrive waits for
 *     the thread's global memory operations in flight (the next round's
 *     cp.async): with a release fence restricted to shared::cta and a
 *     relaxed arrive, 88.3 / 81.1 / 73.6, but then the remote reads are
 *     not ordered before the next arrive (that fence covers only this
 *     CTA's own shared memory), which the pushes avoid: every read is of
 *     the reader's own shared memory;
 *   - the same reads a round late (three buffers, the barrier's wait after
 *     the next round's butterflies) with the release arrive: 66.4 / 67.8 /
 *     63.5; with the restricted fence 80.5 / 84.2 / 71.7 (12 * 4096 in
 *     rounds of 2 blocks, the three buffers' shared memory). */
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
/* Rows whose sums one CTA cannot hold by a cluster of two CTAs, each
 * summing half the columns (fwht_colsplit_cl): 2 (default) 12 * 4096,
 * 20 * 2048 and 28 * 2048; 1 not 20 * 2048; 0 none. fwht_cluster takes the
 * others. 20 * 2048 on fwht_colsplit_cl against fwht_cluster (H100, % of
 * the copy, same run): session 34 83.6 -> 81.5, session 36 with the block
 * barriers (HMX_FWHT_COLSPLIT_BLOCK_BAR) 83.5 -> 90.0 / 83.2 -> 86.3. */
#ifndef HMX_FWHT_COLSPLIT_CLUSTER
#define HMX_FWHT_COLSPLIT_CLUSTER 2
#endif
/* fwht_colsplit_cl: receive buffers (a CTA may run NRECV - 1 rounds ahead
 * of the other). Each holds the other CTA's blocks of a round; a CTA's own
 * columns stay in its stage buffer (since session 35: half the receive
 * buffers' shared memory, so 28 * 2048 takes 2 rounds of 7 blocks instead
 * of 3 of 5). Measured on the H100 (session 35,
 * docs/results/h100/fwht_colsplit_cl/own/, % of the copy, against both
 * halves in the receive buffers in the same run, three rounds; without the
 * write-back barrier): 28 * 2048 74.1-74.4 -> 84.6-84.8, 12 * 4096
 * 89.7-92.4 -> 92.3-92.8, 20 * 2048 83.2-83.5 (fwht_cluster 83.7-83.9: it
 * stays there). 3 buffers measured 84.6 -> 82.5% at 28 * 2048 (with the
 * write-back barrier). */
#ifndef HMX_FWHT_COLSPLIT_CL_NRECV
#define HMX_FWHT_COLSPLIT_CL_NRECV 2
#endif
/* 1: a CTA barrier between the butterflies and each thread's write of its
 * butterflied elements back into the block's scratch; 0 (default): none.
 * It is not needed: a thread writes exactly the positions its own last
 * window read (block_stages ends with the window at bit L - LE, the
 * columns t0 + (e << wl) the write-back takes), so no other thread reads
 * them in that phase (compute-sanitizer racecheck: 0 hazards). Measured on
 * the H100 (session 35, same run, % of the copy): fwht_colsplit_cl 28 *
 * 2048 84.3-84.6 -> 84.6-84.8, 20 * 2048 81.2-81.3 -> 83.2-83.5;
 * fwht_colsplit 12 * 2048 93.6-93.7 -> 93.8-93.9, others within 0.3. An
 * 8-byte st.async of two adjacent columns (lanes 2i and 2i + 1 swapping
 * one of each two registers) on top measured slower: 28 * 2048 83.2-84.5,
 * 12 * 4096 91.4-92.7. */
#ifndef HMX_FWHT_COLSPLIT_WB_SYNC
#define HMX_FWHT_COLSPLIT_WB_SYNC 0
#endif
/* Also tried (session 35, docs/results/h100/fwht_colsplit_cl/own/oc/, % of
 * the copy against this form in the same run): each thread copying its own
 * 16-byte input pieces (16 bytes at a 64-byte stride over a warp) and
 * reading them before the round's first barrier, to drop the barrier
 * before the butterflies overwrite the input: 28 * 2048 84.7 -> 79.1,
 * 12 * 4096 92.3 -> 85.9, 20 * 2048 83.9 (fwht_cluster) -> 78.3; the
 * pushes and sums compiled once for each rank (constant owners and
 * strides, 12 % more PTX lines for 12 * 4096, 28 % for 28 * 2048): 28 * 2048
 * 84.5 -> 79.0, 12 * 4096 92.5 -> 87.2 (own/rc/: the larger body costs
 * more than the instructions it saves). */
/* 1 (default): the barriers inside a p-block's butterflies (block_stages)
 * over that block's tp threads only (bar.sync 1 + b), so the CTA's G blocks
 * need not wait for each other (3 of a round's 5 CTA barriers, 4 of 6 with
 * S = 2); with S = 2 also the barrier before the butterflies overwrite the
 * input, whose blocks then sit at the scratch's stride and are copied by
 * the block's own threads. The CTA barriers left order the phases that
 * cross blocks: the round's input and the last round's sums before the
 * next copies, the butterflied blocks before the sums. 0: CTA barriers.
 * Measured on the H100 (session 36,
 * docs/results/h100/fwht_colsplit_cl/blockbar/, % of the copy, CTA ->
 * block barriers, two calls, each the median of two rounds):
 * fwht_colsplit_cl 28 * 2048 83.5 -> 90.6 / 84.3 -> 90.9, 12 * 4096 91.4 ->
 * 93.7 / 91.7 -> 93.0; fwht_colsplit 12 * 2048 93.5 -> 94.0 / 93.1 -> 93.3,
 * 20 * 1024 94.5 -> 94.3 / 93.7 -> 93.9, 28 * 1024 92.7 -> 93.1 / 92.2 ->
 * 92.4. A third stage buffer (the copies two rounds ahead, where it fits:
 * every size but 28 * 2048) measured within the noise and was removed:
 * with CTA barriers 12 * 2048 93.5 -> 93.8, 12 * 4096 91.4 -> 92.0, 20 *
 * 1024 94.5 -> 94.7; with block barriers 93.3 -> 92.9, 93.0 -> 93.1, 93.9
 * -> 91.4. */
#ifndef HMX_FWHT_COLSPLIT_BLOCK_BAR
#define HMX_FWHT_COLSPLIT_BLOCK_BAR 1
#endif
#ifndef HMX_FWHT_COLSPLIT_MIN_N /* only rows longer than this */
#define HMX_FWHT_COLSPLIT_MIN_N 16384
#endif

/* log2 of the elements per thread in the butterflies of fwht_colsplit for
 * f32 rows of M * 2^L taken by S CTAs (-1: not this kernel): each CTA's T
 * threads keep the sums of its M * p / S, n / (S T) each, next to 16 (or 8)
 * butterfly registers; a thread takes whole columns (p / S a multiple of T).
 * Rows with fewer columns than threads would split a column's outputs over
 * threads; for 40 * 512 (two groups, rows r = 2i + g: interleaved, since
 * rows r and r + 20 of H_40 share sign prefixes that the compiler computes
 * once: 28.4 adds an element against 36.5 for the halves r < 20, r >= 20)
 * that measured 89.0 -> 85.2% of the copy, so they stay on fwht_pow2.
 * Nor does a cluster: 40 * 1024 by fwht_colsplit_cl with two threads a
 * column (512 columns a CTA, each thread the 20 sums of rows 2i + h)
 * measured 82.4 -> 72.0% of the copy against fwht_cluster (H100, session
 * 35, docs/results/h100/fwht_colsplit_cl/own/h2/; bit-exact, racecheck
 * clean), and unbalanced rounds (16 + 4 blocks) 66.4; nor with CTAs of
 * 512 threads, each keeping the 40 sums of one column (128 registers, no
 * spills) and session 36's block barriers: 82.1 -> 75.6 (session 37,
 * docs/results/h100/fwht_cluster_blockbar/ab/; bit-exact, racecheck clean;
 * not merged). */
__host__ __device__ constexpr int colsplit_le_s(int M, int L, int S) {
  if (!HMX_FWHT_COLSPLIT || M == 1 || (M << L) <= HMX_FWHT_COLSPLIT_MIN_N || M % S != 0)
    return -1;
  const int T = HMX_FWHT_COLSPLIT_T, p = 1 << L, acc = (M << L) / S / T;
  if (p / S < T || (p / S) % T != 0) return -1;
  return acc <= HMX_FWHT_COLSPLIT_MAXACC16 && p / 16 <= T  ? 4
         : acc <= HMX_FWHT_COLSPLIT_MAXACC8 && p / 8 <= T ? 3
                                                           : -1;
}
__host__ __device__ constexpr int colsplit_le(int M, int L) { return colsplit_le_s(M, L, 1); }

/* CTAs a row of M * 2^L takes in fwht_colsplit: 1; 2, a cluster
 * (fwht_colsplit_cl), for the rows whose sums one CTA cannot hold that
 * HMX_FWHT_COLSPLIT_CLUSTER names; 0: not this kernel. 12 * 2048, which
 * both take, by the pair measured 93.5 -> 93.8% of the copy (H100, session
 * 36, three rounds; 12 * 4096 93.3 -> 92.7 and 28 * 2048 90.9 -> 90.4 in
 * the same run, unchanged code: the noise), so it stays on one CTA. */
__host__ __device__ constexpr int colsplit_ctas(int M, int L) {
  return colsplit_le_s(M, L, 1) >= 0 ? 1
         : colsplit_le_s(M, L, 2) >= 0 &&
                 (HMX_FWHT_COLSPLIT_CLUSTER >= 2 || (HMX_FWHT_COLSPLIT_CLUSTER == 1 && M != 20))
             ? 2
             : 0;
}

/* Shared memory of a CTA, for g p-blocks a round. One CTA a row (s = 1):
 * two stage buffers of the input (cp.async) and one of the butterflied
 * (padded) blocks. A cluster (s > 1): two stage buffers, each in turn the
 * round's butterfly scratch (padded) and then the home of the round's own
 * columns, NRECV receive buffers of the other CTAs' (s - 1) g blocks in
 * this CTA's p / s columns, and two mbarriers for each. */
__host__ __device__ constexpr size_t colsplit_smem(int p, int g, int s) {
  return s == 1 ? (size_t)(2 * g * p + g * (p + p / 32)) * sizeof(float)
                : (size_t)(2 * g * (p + p / 32) +
                           HMX_FWHT_COLSPLIT_CL_NRECV * (s - 1) * g * (p / s)) *
                          sizeof(float) +
                      2 * HMX_FWHT_COLSPLIT_CL_NRECV * 8;
}
/* Rounds a row: as few as the threads allow (mb blocks a CTA, gmax at
 * once), more while a round's buffers would not fit an SM. */
__host__ __device__ constexpr int colsplit_nr(int mb, int gmax, int p, int s) {
  int nr = (mb + gmax - 1) / gmax;
  while (nr < mb && colsplit_smem(p, (mb + nr - 1) / nr, s) > kMaxSmemOptIn) nr++;
  return nr;
}

/* The layout for M * 2^L over S CTAs: CTA r (its rank in the cluster) sums
 * the columns r * p / S .. (r + 1) * p / S - 1, thread t of it the columns
 * t, t + T, .. of that range (KC of them, M sums each). Round k of a row
 * takes the blocks k * S * G .. (k + 1) * S * G - 1; CTA r loads and
 * butterflies G of them, from k * S * G + r * G. */
template <int M, int L, int S = 1> struct Cs {
  static constexpr int T = HMX_FWHT_COLSPLIT_T, LE = colsplit_le_s(M, L, S), E = 1 << LE;
  static constexpr int P = E / 4, LP = LE - 2; /* 16-byte pieces a thread */
  static constexpr int p = 1 << L, n = M * p;
  static constexpr int MB = M / S;            /* p-blocks a CTA butterflies a row */
  static constexpr int tp = p / E;            /* threads per p-block */
  static constexpr int GMAX = T / tp;         /* p-blocks the threads hold at once */
  static constexpr int NR = colsplit_nr(MB, GMAX, p, S); /* rounds per row */
  static constexpr int G = /* p-blocks a CTA takes per round */
      HMX_FWHT_COLSPLIT_BALANCE || NR > (MB + GMAX - 1) / GMAX ? (MB + NR - 1) / NR : GMAX;
  static constexpr int PS = p / S;            /* columns a CTA sums */
  static constexpr int KC = PS / T;           /* columns per thread */
  static constexpr int bs = p + p / 32;       /* a p-block in shared memory */
  static constexpr int stage = S == 1 ? G * p : G * bs; /* floats per stage buffer */
  /* S > 1 with block barriers: p-block b's input at b * bs (its scratch) */
  static constexpr bool BB = HMX_FWHT_COLSPLIT_BLOCK_BAR != 0;
  static constexpr int in_stride = S > 1 && BB ? bs : p;
  static constexpr int NRECV = HMX_FWHT_COLSPLIT_CL_NRECV; /* receive buffers (S > 1) */
  static constexpr int recv = (S - 1) * G * PS; /* floats per receive buffer (S > 1) */
  static constexpr size_t smem = colsplit_smem(p, G, S);
};

/* Blocks c = C0 .. C0 + G - 1 (those < M) into the M sums of one column,
 * in increasing c: u(bb) reads block C0 + bb's element of the column. */
template <int M, int C0, int G, typename U>
__device__ __forceinline__ void colsplit_add(float (&a)[M], U u) {
#pragma unroll
  for (int bb = 0; bb < G; bb++) {
    const int c = C0 + bb; /* a constant once unrolled */
    if (c < M) {
      const float x = u(bb);
#pragma unroll
      for (int i = 0; i < M; i++) {
        const bool plus = (hrow(M, i) >> c) & 1ull;
        a[i] = c == 0 ? (plus ? x : -x) : plus ? __fadd_rn(a[i], x) : __fsub_rn(a[i], x);
      }
    }
  }
}

/* The mbarriers of fwht_colsplit_cl (PTX ISA 8.0+, sm_90; addresses are
 * 32-bit shared-memory addresses: this CTA's (shared::cta) or, from
 * cluster_addr, another CTA's of the cluster (shared::cluster)). */
__device__ __forceinline__ void colsplit_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/* this thread's arrival on its own CTA's barrier, announcing bytes to come
 * by st.async (their completions end the phase with the arrival) */
__device__ __forceinline__ void colsplit_mbar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
/* An arrival on another CTA's barrier, releasing this CTA's reads of its own
 * shared memory (all of its threads', ordered by the CTA barrier before it):
 * the release fence restricted to shared::cta operations, then a relaxed
 * arrive. A release arrive (barrier.cluster.arrive.release) also waits for
 * the thread's global loads and stores in flight: fwht_colsplit_cl's first
 * form (a cluster barrier a round) measured 61-72% of the copy with it,
 * 72-88% with this fence (H100, session 34, docs/results/h100/fwht_colsplit_cl/). */
__device__ __forceinline__ void colsplit_mbar_arrive_remote(unsigned bar_cluster) {
  asm volatile("fence.release.sync_restrict::shared::cta.cluster;\n\t"
               "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar_cluster)
               : "memory");
}
/* Wait for the phase of the given parity to complete (acquire, cluster
 * scope: the other CTA's st.async data or its release above). */
__device__ __forceinline__ void colsplit_mbar_wait(unsigned bar, unsigned parity) {
  asm volatile("{\n\t.reg .pred done;\n"
               "colsplit_wait:\n\t"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n\t"
               "@!done bra colsplit_wait;\n\t}" ::"r"(bar), "r"(parity)
               : "memory");
}
/* One element into another CTA's shared memory (both addresses
 * shared::cluster), its 4 bytes counted on that CTA's barrier. */
__device__ __forceinline__ void colsplit_st_async(unsigned addr, float v, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                   addr),
               "r"(__float_as_uint(v)), "r"(bar)
               : "memory");
}
/* f(integral_constant<int, K>) for K = K0 .. N - 1, in order */
template <int K0, int N, typename F> __device__ __forceinline__ void colsplit_rounds(F &&f) {
  if constexpr (K0 < N) {
    f(std::integral_constant<int, K0>{});
    colsplit_rounds<K0 + 1, N>(f);
  }
}

/* The kernel's body for S CTAs a row (S > 1: a cluster of S = 2).
 * Persistent: as many rows (clusters) as are resident, each looping over
 * rows. */
template <Dt DO, int M, int L, int S>
__device__ __forceinline__ void colsplit_body(const float *x, void *yv, int64_t rows, float scale,
                                              int epi, const float *alpha, const float *beta) {
  using C = Cs<M, L, S>;
  constexpr int LE = C::LE, P = C::P, LP = C::LP;
  static_assert(S == 1 || S == 2, "one CTA a row, or a pair");
  static_assert(!C::BB || C::G + (C::G < C::GMAX) <= 15,
                "a named barrier (1 .. 15) for each p-block and one for the idle threads");
  using TO = typename Io<DO>::T;
  extern __shared__ __align__(16) float smc[];
  const unsigned tid = threadIdx.x;
  const int rank = S > 1 ? (int)cooperative_groups::this_cluster().block_rank() : 0;
  const int b = tid / C::tp, tau = tid % C::tp;
  /* thread t's E elements are the P pieces (16 bytes) P t .. P t + P - 1 of
   * the round's contiguous input; piece q of thread t sits in slot P t +
   * (q ^ swz(t)), so that each 8 lanes' 16-byte reads of their own pieces
   * cover all 32 banks (as fwht_pow2's stage) */
  auto slot = [](unsigned t, int q) { return t * P + (q ^ ((t >> (3 - LP)) & (P - 1))); };
  /* the first block of CTA q in round k, and how many it takes */
  auto first = [](int k, int q) { return k * S * C::G + q * C::G; };
  auto count = [&](int k, int q) { return max(0, min(C::G, M - first(k, q))); };
  auto prefetch = [&](int64_t row, int k, float *buf) {
    const int nb = count(k, rank);
    if (row < rows && nb > 0) {
      const uint4 *src =
          reinterpret_cast<const uint4 *>(x + row * C::n + (int64_t)first(k, rank) * C::p);
      uint4 *dst = reinterpret_cast<uint4 *>(buf);
      if constexpr (C::in_stride != C::p) {
        /* block b's pieces by its own threads, at the scratch's stride */
        if (b < nb) {
#pragma unroll
          for (int q = 0; q < P; q++) {
            const unsigned i = (unsigned)tau + q * C::tp;
            __pipeline_memcpy_async(dst + b * (C::in_stride / 4) + slot(i >> LP, i & (P - 1)),
                                    src + b * (C::p / 4) + i, 16);
          }
        }
      } else {
        const unsigned have = (unsigned)(nb * C::p / 4);
#pragma unroll
        for (int q = 0; q < P; q++) {
          const unsigned i = tid + q * C::T;
          if (i < have) __pipeline_memcpy_async(dst + slot(i >> LP, i & (P - 1)), src + i, 16);
        }
      }
    }
    __pipeline_commit();
  };
  /* S > 1: NRECV receive buffers and their barriers. full[i]: receive
   * buffer i holds the round's blocks of the other CTA (its st.async bytes,
   * and this CTA's thread 0's arrival); empty[i]: the other CTA is done
   * reading its own receive buffer i (so this CTA may write it again). */
  constexpr int NRECV = C::NRECV;
  float *const recv = smc + 2 * C::stage;
  uint64_t *const bars = reinterpret_cast<uint64_t *>(recv + NRECV * C::recv);
  const int other = rank ^ 1;
  unsigned full0 = 0, empty0 = 0, o_recv = 0, o_full0 = 0, o_empty0 = 0;
  if constexpr (S > 1) {
    full0 = (unsigned)__cvta_generic_to_shared(bars), empty0 = full0 + 8 * NRECV;
    o_recv = cluster_addr(recv, other);
    o_full0 = cluster_addr(bars, other), o_empty0 = cluster_addr(bars + NRECV, other);
    if (tid == 0) {
      for (int i = 0; i < 2 * NRECV; i++) colsplit_mbar_init(full0 + 8 * i, 1);
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cooperative_groups::this_cluster().sync(); /* both CTAs' barriers exist before either uses them */
  }
  const int64_t row0 = blockIdx.x / S, rstep = gridDim.x / S;
  int par = 0;
  unsigned g = 0; /* rounds so far (S > 1: receive buffer g % NRECV, its use g / NRECV) */
  prefetch(row0, 0, smc);
  /* the barrier over p-block b's threads (block_stages; with S > 1 also
   * before the butterflies overwrite the input). The threads without a
   * block (b >= G) pass as many barriers, all of them on barrier 15: every
   * thread then counts the same barriers at the same point of the code,
   * which compute-sanitizer's racecheck needs (with idle threads skipping
   * them it reported false hazards between a write before a CTA barrier and
   * a read after it) */
  /* b < GMAX always; b >= G only with HMX_FWHT_COLSPLIT_BALANCE (no block in any round) */
  const bool has_block = C::G == C::GMAX || b < C::G;
  const unsigned bar_id = has_block ? 1 + b : 15,
                 bar_n = has_block ? C::tp : (C::GMAX - C::G) * C::tp;
  auto block_sync = [&] {
    if (C::BB) named_barrier(bar_id, bar_n);
    else __syncthreads();
  };
#pragma unroll 1
  for (int64_t row = row0; row < rows; row += rstep) {
    float acc[C::KC][M];
    /* round k: blocks k * S * G .. (k + 1) * S * G - 1, this CTA's G from first(k, rank) */
    colsplit_rounds<0, C::NR>([&](auto kc_) {
      constexpr int k = decltype(kc_)::value;
      float *cur = smc + par * C::stage, *nxt = smc + (par ^ 1) * C::stage;
      [[maybe_unused]] const unsigned bi = g % NRECV, use = g / NRECV; /* S > 1 */
      __pipeline_wait_prior(0); /* this thread's copies of round k have landed */
      __syncthreads();          /* everyone's; the last round's reads of both buffers are done */
      if constexpr (S > 1) {
        if (tid == 0) {
          /* the last round's reads of its receive buffer are done: the
           * other CTA may fill it again */
          if (g > 0) colsplit_mbar_arrive_remote(o_empty0 + 8 * ((bi + NRECV - 1) % NRECV));
          /* this round's bytes from the other CTA, into receive buffer bi */
          colsplit_mbar_expect(full0 + 8 * bi, (unsigned)(count(k, other) * C::PS * 4));
        }
      }
      if (k + 1 < C::NR) prefetch(row, k + 1, nxt);
      else prefetch(row + rstep, 0, nxt);
      par ^= 1;
      const bool active = has_block && first(k, rank) + b < M;
      float v[C::E];
      const uint4 *st = reinterpret_cast<const uint4 *>(cur);
      if (has_block) {
#pragma unroll
        for (int q = 0; q < P; q++) /* block b's pieces start at b * in_stride */
          Io<Dt::F32>::unpack(st[b * (C::in_stride / 4) + slot(tau, q)], v + 4 * q);
      } else { /* no block this round (HMX_FWHT_COLSPLIT_BALANCE) */
#pragma unroll
        for (int e = 0; e < C::E; e++) v[e] = 0.0f;
      }
      constexpr int wl = L - LE; /* the last window: register e holds column t0 + (e << wl) */
      const int t0 = tau_part(tau, wl, LE);
      /* the butterflied elements back into the block's scratch blk (padded,
       * column order), the positions this thread's last window read: all
       * (S = 1) or those of column half `half`, this CTA's (S = 2: registers
       * half * E / 2 .. + E / 2 - 1) */
      auto write_back = [&](float *blk, int half) {
        if (HMX_FWHT_COLSPLIT_WB_SYNC) __syncthreads(); /* block_stages' reads of blk are done */
        if (active) {
          float *s0 = blk + pad_index(t0);
#pragma unroll
          for (int e = 0; e < C::E; e++)
            if (S == 1 || e / (C::E / 2) == half) s0[pad_index(e << wl)] = v[e];
        }
      };
      if constexpr (S == 1) {
        float *const sblk_all = smc + 2 * C::stage;
        float *sblk = sblk_all + b * C::bs;
        block_stages<L, LE>(v, sblk, tau, active, block_sync); /* NUMERICS §fwht step 1 */
        write_back(sblk, 0);
        __syncthreads();
        /* step 2: this round's blocks into each column's sums, in increasing c */
#pragma unroll
        for (int kc = 0; kc < C::KC; kc++) {
          const float *col = sblk_all + pad_index(kc * C::T + (int)tid);
          colsplit_add<M, k * C::G, C::G>(acc[kc], [&](int bb) { return col[bb * C::bs]; });
        }
      } else {
        block_sync(); /* every thread has its input: cur becomes the butterfly scratch */
        block_stages<L, LE>(v, cur + b * C::bs, tau, active, block_sync); /* NUMERICS §fwht step 1 */
        /* the other CTA is done reading its receive buffer bi (use - 1) */
        if (use > 0) colsplit_mbar_wait(empty0 + 8 * bi, (use - 1) & 1);
        /* each column to the CTA that sums it (registers e < E / 2 hold
         * columns < p / 2): the other CTA's into block slot b of its receive
         * buffer bi, this CTA's own back into the scratch (cur) */
        const int at = (int)bi * C::recv + b * C::PS + t0;
        if (active) {
#pragma unroll
          for (int e = 0; e < C::E; e++)
            if (e / (C::E / 2) != rank)
              colsplit_st_async(o_recv + 4u * (unsigned)(at + ((e << wl) & (C::PS - 1))), v[e],
                                o_full0 + 8 * bi);
        }
        write_back(cur + b * C::bs, rank);
        __syncthreads();                         /* this CTA's own columns are in place */
        colsplit_mbar_wait(full0 + 8 * bi, use & 1); /* and the other CTA's */
        /* step 2: the round's S * G blocks, in increasing c, into each column's sums */
        const float *rb = recv + bi * C::recv;
#pragma unroll
        for (int kc = 0; kc < C::KC; kc++) {
          const int j = kc * C::T + (int)tid; /* the column, of this CTA's PS */
          /* blocks k * 2G .. + G - 1 are CTA 0's, the next G CTA 1's */
          const float *mine = cur + pad_index(rank * C::PS + j), *theirs = rb + j;
          const float *lo = rank == 0 ? mine : theirs, *hi = rank == 0 ? theirs : mine;
          const int los = rank == 0 ? C::bs : C::PS, his = rank == 0 ? C::PS : C::bs;
          colsplit_add<M, k * S * C::G, S * C::G>(acc[kc], [&](int bb) {
            return bb < C::G ? lo[bb * los] : hi[(bb - C::G) * his];
          });
        }
        g++;
      }
    });
    /* step 3: each column's M outputs; a warp's 32 consecutive j make whole lines */
    TO *y = (TO *)yv + row * C::n;
#pragma unroll
    for (int kc = 0; kc < C::KC; kc++) {
      const int j = rank * C::PS + kc * C::T + (int)tid;
#pragma unroll
      for (int i = 0; i < M; i++) {
        const int at = i * C::p + j;
        st_out(y + at, (TO)Io<DO>::narrow(epilogue(acc[kc][i], epi, scale, alpha, beta, at)));
      }
    }
  }
  __pipeline_wait_prior(0); /* no copy outlives the CTA */
  /* nor a CTA the other's st.async into it or arrivals on its barriers */
  if constexpr (S > 1) cooperative_groups::this_cluster().sync();
}

/* One CTA a row. */
template <Dt DO, int M, int L>
__global__ void __launch_bounds__(HMX_FWHT_COLSPLIT_T, 1)
fwht_colsplit(const float *x, void *yv, int64_t rows, float scale, int epi, const float *alpha,
              const float *beta) {
  colsplit_body<DO, M, L, 1>(x, yv, rows, scale, epi, alpha, beta);
}

/* A cluster of S = 2 CTAs a row: each butterflies half of the row's
 * p-blocks and sums half of its columns, the other half's elements pushed
 * to the other CTA (st.async). */
template <Dt DO, int M, int L, int S>
__global__ void __cluster_dims__(S, 1, 1) __launch_bounds__(HMX_FWHT_COLSPLIT_T, 1)
fwht_colsplit_cl(const float *x, void *yv, int64_t rows, float scale, int epi, const float *alpha,
                 const float *beta) {
  colsplit_body<DO, M, L, S>(x, yv, rows, scale, epi, alpha, beta);
}

#endif
