/* The cuda backend's kernels (issue 5) other than fwht (cuda/fwht.cu),
 * bit-exact with ref/ under the exact tier of docs/NUMERICS.md. Compiled
 * with -fmad=false -ftz=false -prec-div=true -prec-sqrt=true
 * (cuda/backend.cmake), and every operation whose rounding matters is
 * written as its _rn intrinsic (__fadd_rn, __fsub_rn, __fmul_rn, __fmaf_rn,
 * __fdiv_rn, __fsqrt_rn), which nvcc never contracts or reassociates
 * whatever the flags.
 *
 * Host side (cuda/job.cuh): host-memory calls copy their inputs to the
 * device, run, copy the output back and wait; device-memory calls run on the
 * caller's buffers and stream and return at once. Every CUDA call is
 * checked. The `threads` argument is ignored.
 */
#include "dev_math.cuh"
#include "job.cuh"
#include "weights_in.cuh"
#include "gemv_slab.cuh"

#include <cuda_pipeline.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "canon.h"
#include "ref.h"
}

/* Device -> host copy ordered after the work on `stream`, and a wait for it
 * (rope's positions, src/ops.c). */
extern "C" hmx_status hmx_cuda_to_host(void *dst, const void *src, size_t bytes, void *stream) {
  hmx_cuda::Job j;
  hmx_cuda::job_begin_device(&j, "to_host", stream);
  if (j.st == HMX_OK && bytes > 0) {
    hmx_cuda::check(&j, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, j.stream),
                    "cudaMemcpyAsync (to host)");
    if (j.st == HMX_OK) hmx_cuda::check(&j, cudaStreamSynchronize(j.stream), "cudaStreamSynchronize");
  }
  return hmx_cuda::job_end(&j);
}

using namespace hmx_cuda;

namespace {

/* ------------------------------------------------------------------ rmsnorm, layernorm */

/* docs/NUMERICS.md §R, §rmsnorm, §layernorm: one block per row. Threads
 * 0..15 are the 16 lanes: lane l accumulates x[l], x[l+16], ... in index
 * order; thread 0 then runs the fixed tree (+8, +4, +2, +1) on them. The
 * elementwise part uses the whole block.
 *
 * The row comes into shared memory kNormChunk floats at a time, read by the
 * whole block at once, and the lanes' chains read it there. Before session
 * 60 each lane read its 48 values of a 768-float row from global memory one
 * after the other, every read waiting for the last: 5.5 us a row under ncu,
 * 11% of an f32 decode step's GPU time (25 rows a step); now 3.9 us. A row
 * of at most kNormChunk floats stays in shared memory for the later passes,
 * its weights (and bias) copied in beside it at the start. */
constexpr int kNormThreads = 256;
constexpr int kNormChunk = 2048; /* a multiple of 16: lane l's elements stay l mod 16 */

__device__ float lane_tree(float *l) { /* l[16] in shared memory, thread 0 only */
  for (int half = 8; half >= 1; half /= 2)
    for (int k = 0; k < half; k++) l[k] = __fadd_rn(l[k], l[k + half]);
  return l[0];
}

/* Copy src[0 .. cn) into shared memory at dst by cp.async, the block's
 * threads striding (4-byte copies: rows need not be 16-byte aligned). Each
 * thread's copies are all in flight at once; the caller commits and waits. */
__device__ __forceinline__ void stage_async(float *dst, const float *src, int64_t cn) {
  for (int64_t i = threadIdx.x; i < cn; i += blockDim.x)
    __pipeline_memcpy_async(dst + i, src + i, 4);
}

/* The 16 lanes of §R over the row xr[0 .. n) (ends in a barrier; lanes[l]
 * then holds lane l): Kind 0, l + x (layernorm's mean); 1, fma(x, x, l)
 * (rmsnorm); 2, d = x - mean, fma(d, d, l) (layernorm's variance). xs:
 * kNormChunk floats of shared memory; a row that fits is left there (and
 * Kind 2 finds it there). The first chunk's copies wait together with any
 * the caller queued before (the weights of a row that fits). */
template <int Kind>
__device__ void norm_lanes(const float *xr, int64_t n, float mean, float *xs, float *lanes) {
  const int t = threadIdx.x;
  float l = 0.0f;
  for (int64_t c0 = 0; c0 < n; c0 += kNormChunk) {
    const int cn = (int)(n - c0 < kNormChunk ? n - c0 : kNormChunk);
    if (c0 > 0 || Kind != 2 || n > kNormChunk) { /* else: still there from Kind 0 */
      __syncthreads(); /* the last chunk's reads are done */
      stage_async(xs, xr + c0, cn);
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    if (t < 16) {
      for (int i = t; i < cn; i += 16) {
        const float v = xs[i];
        if (Kind == 0) l = __fadd_rn(l, v);
        else if (Kind == 1) l = __fmaf_rn(v, v, l);
        else {
          const float d = __fsub_rn(v, mean);
          l = __fmaf_rn(d, d, l);
        }
      }
    }
  }
  if (t < 16) lanes[t] = l;
  __syncthreads();
}

/* x and y may be one buffer (in place, device memory): no __restrict__ on
 * them. Every read of the row precedes the barrier that precedes the
 * writes, and a row longer than kNormChunk is read again from x by the
 * thread that then writes the same element. The weights of a row that fits
 * are copied in beside it, at the start (ws), so the last pass waits for no
 * read of global memory (under ncu, one more 1 us wait). */
__global__ void rmsnorm_kernel(const float *x, const float *__restrict__ w, float *y, int64_t n,
                               float fn, float eps) {
  __shared__ __align__(16) float xs[kNormChunk], ws[kNormChunk];
  __shared__ float lanes[16];
  __shared__ float inv_s;
  const float *xr = x + (int64_t)blockIdx.x * n;
  float *yr = y + (int64_t)blockIdx.x * n;
  const int t = threadIdx.x;
  const bool kept = n <= kNormChunk;
  if (kept) stage_async(ws, w, n);
  norm_lanes<1>(xr, n, 0.0f, xs, lanes);
  if (t == 0) {
    float ms = __fdiv_rn(lane_tree(lanes), fn);
    inv_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(ms, eps)));
  }
  __syncthreads();
  const float inv = inv_s;
  if (kept)
    for (int64_t i = t; i < n; i += blockDim.x) yr[i] = __fmul_rn(__fmul_rn(xs[i], inv), ws[i]);
  else
    for (int64_t i = t; i < n; i += blockDim.x) yr[i] = __fmul_rn(__fmul_rn(xr[i], inv), w[i]);
}

__global__ void layernorm_kernel(const float *x, const float *__restrict__ w,
                                 const float *__restrict__ bias, float *y, int64_t n,
                                 float fn, float eps) {
  __shared__ __align__(16) float xs[kNormChunk], ws[kNormChunk], bs[kNormChunk];
  __shared__ float lanes[16];
  __shared__ float mean_s, inv_s;
  const float *xr = x + (int64_t)blockIdx.x * n;
  float *yr = y + (int64_t)blockIdx.x * n;
  const int t = threadIdx.x;
  const bool kept = n <= kNormChunk;
  if (kept) {
    stage_async(ws, w, n);
    if (bias) stage_async(bs, bias, n);
  }
  norm_lanes<0>(xr, n, 0.0f, xs, lanes);
  if (t == 0) mean_s = __fdiv_rn(lane_tree(lanes), fn);
  __syncthreads();
  const float mean = mean_s;
  norm_lanes<2>(xr, n, mean, xs, lanes);
  if (t == 0) {
    float var = __fdiv_rn(lane_tree(lanes), fn);
    inv_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(var, eps)));
  }
  __syncthreads();
  const float inv = inv_s;
  for (int64_t i = t; i < n; i += blockDim.x) {
    const float xi = kept ? xs[i] : xr[i], wi = kept ? ws[i] : w[i];
    const float z = __fmul_rn(__fsub_rn(xi, mean), inv);
    yr[i] = bias ? __fmaf_rn(z, wi, kept ? bs[i] : bias[i]) : __fmul_rn(z, wi);
  }
}

/* ------------------------------------------------------------------ rope */

/* docs/NUMERICS.md §rope: one block per (t, head) row; the table comes from
 * the host (hmx_rope_table). y0 = fma(x0, c, -(x1*s)), y1 = fma(x0, s, x1*c). */
__global__ void rope_kernel(const float *x, float *y, /* may be one buffer */
                            const float *__restrict__ cos_tab, const float *__restrict__ sin_tab,
                            int64_t heads, int64_t d, int rot_dim, int half_style) {
  int64_t row = blockIdx.x;
  int64_t t = row / heads;
  int half = rot_dim / 2;
  const float *xr = x + row * d;
  float *yr = y + row * d;
  const float *ct = cos_tab + t * half, *st = sin_tab + t * half;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    int i0 = half_style ? i : 2 * i;
    int i1 = half_style ? i + half : 2 * i + 1;
    float c = ct[i], s = st[i];
    float x0 = xr[i0], x1 = xr[i1];
    yr[i0] = __fmaf_rn(x0, c, -__fmul_rn(x1, s));
    yr[i1] = __fmaf_rn(x0, s, __fmul_rn(x1, c));
  }
  for (int64_t i = rot_dim + threadIdx.x; i < d; i += blockDim.x) yr[i] = xr[i];
}

/* exp and silu: dev_expf, dev_siluf (cuda/dev_math.cuh) */

/* ------------------------------------------------------------------ attention */

/* docs/NUMERICS.md §attention: one block per (b, i, h) row (the row index is
 * the output row ((b*Sq + i)*Hq + h)). Threads over keys compute the scores
 * (dot sequential over d with __fmaf_rn from +0, then * scale) and the exact
 * maximum (`if (s > m) m = s`, per thread, then thread 0 over the threads:
 * the maximum is exact, so its order does not matter). Keys are then walked in
 * chunks of kAttChunk (a multiple of 16): threads over keys write e_j =
 * exp(s_j - m) into shared memory (the scores of a single-chunk row were kept
 * there by the first pass; longer rows recompute them, same bits); threads
 * 0..15 are the §R lanes (lane l adds e_j, j = l mod 16, in index order,
 * carried across chunks); threads over d carry acc_d = fma(e_j, v_jd, acc_d)
 * over j in increasing order (kept in o between chunks, each element by one
 * thread). At the end thread 0 runs the +8,+4,+2,+1 tree and every o_d is
 * divided once by the sum. Only visible keys j < n are visited. */
constexpr int kAttThreads = 128;
/* Keys per chunk (a multiple of 16). Rows with n <= kAttChunk keep their
 * scores in shared memory; longer rows recompute them chunk by chunk (1.5x
 * the dot products). 256 is small enough that the vectors with Skv = 257
 * exercise the recompute path (two chunks, the last of one key). */
constexpr int kAttChunk = 256;

__device__ __forceinline__ float att_score(const float *__restrict__ q,
                                           const float *__restrict__ k, int64_t d, float scale) {
  float dot = 0.0f;
  for (int64_t c = 0; c < d; c++) dot = __fmaf_rn(q[c], k[c], dot);
  return __fmul_rn(dot, scale);
}

__global__ void __launch_bounds__(kAttThreads)
attention_kernel(const float *__restrict__ q, const float *__restrict__ k,
                 const float *__restrict__ v, float *__restrict__ o, int64_t sq, int64_t skv,
                 int64_t hq, int64_t hkv, int64_t d, int causal, int64_t q_offset, float scale) {
  __shared__ float e[kAttChunk];
  __shared__ float red[kAttThreads];
  __shared__ float lanes[16];
  __shared__ float m_s, sum_s;
  const int64_t row = blockIdx.x;
  const int64_t h = row % hq, bi = row / hq;
  const int64_t i = bi % sq, b = bi / sq;
  const int64_t kvh = h / (hq / hkv);
  const int64_t ld = hkv * d; /* key j of this (b, kv head) at base + j * ld */
  const float *qr = q + row * d;
  float *orow = o + row * d;
  const float *kb = k + (b * skv * hkv + kvh) * d;
  const float *vb = v + (b * skv * hkv + kvh) * d;
  const int64_t n = causal ? q_offset + i + 1 : skv;
  const int t = threadIdx.x;
  const int one = n <= kAttChunk;

  float m = -__uint_as_float(0x7F800000u);
  for (int64_t j = t; j < n; j += kAttThreads) {
    float s = att_score(qr, kb + j * ld, d, scale);
    if (one) e[j] = s;
    if (s > m) m = s; /* NaN never wins */
  }
  red[t] = m;
  __syncthreads();
  if (t == 0) {
    float mm = red[0];
    for (int r = 1; r < kAttThreads; r++)
      if (red[r] > mm) mm = red[r];
    m_s = mm;
  }
  __syncthreads();
  m = m_s;

  float lane = 0.0f; /* threads 0..15 */
  for (int64_t c0 = 0; c0 < n; c0 += kAttChunk) {
    const int len = (int)(n - c0 < kAttChunk ? n - c0 : kAttChunk);
    for (int jj = t; jj < len; jj += kAttThreads) {
      float s = one ? e[jj] : att_score(qr, kb + (c0 + jj) * ld, d, scale);
      e[jj] = dev_expf(__fsub_rn(s, m));
    }
    __syncthreads();
    if (t < 16)
      for (int jj = t; jj < len; jj += 16) lane = __fadd_rn(lane, e[jj]);
    for (int64_t dd = t; dd < d; dd += kAttThreads) {
      float acc = c0 == 0 ? 0.0f : orow[dd];
      const float *vp = vb + c0 * ld + dd;
      for (int jj = 0; jj < len; jj++) acc = __fmaf_rn(e[jj], vp[(int64_t)jj * ld], acc);
      orow[dd] = acc;
    }
    __syncthreads();
  }
  if (t < 16) lanes[t] = lane;
  __syncthreads();
  if (t == 0) sum_s = lane_tree(lanes);
  __syncthreads();
  const float sum = sum_s;
  for (int64_t dd = t; dd < d; dd += kAttThreads) orow[dd] = __fdiv_rn(orow[dd], sum);
}


/* ---- attention, tiled (prefill; D = 64 or 128): one block (256 threads) per
 * (query tile of kAQ = 64 rows, head, batch). Two passes over the visible
 * keys in tiles of kAK = att_kt<D>() keys (64, or 32 for D = 128) through
 * shared memory, double-buffered with cp.async (the
 * next tile is in flight while the current one is used)
 * (docs/NUMERICS.md §attention: the row
 * maximum comes first, no online rescaling):
 *   pass 1 (only with mg == NULL, HMX_CUDA_ATT_MAX=exact; otherwise mg holds
 *           each row's guessed maximum, from attention_max_guess, and pass 2
 *           checks it: cuda/attention_maxguess.cuh):
 *           S = Q K^T for the tile (thread (ty, tx) owns rows
 *           4ty..4ty+3 and keys tx + 16c, c < kAK / 16; each score a sequential
 *           __fmaf_rn chain over d from +0, then * scale); per-row exact
 *           maximum over the visible keys (`if (s > m) m = s`, combined over
 *           the 16 threads of a row the same way: the maximum is exact, so
 *           its order does not matter);
 *   pass 2: the same scores again (same bits), e = exp(s - m) into shared
 *           memory, then the §R lane sums (thread t: row t/4, lanes
 *           4(t%4) .. +3, lane l adds e_j for j = l mod 16 in increasing j,
 *           carried across tiles: tiles start at multiples of 16) and
 *           acc[r][d] = fma(e_j, v_jd, acc) with the thread owning rows
 *           4ty..+3, d = 4tx..+3 (and 64 + 4tx..+3 for D = 128), over j in
 *           increasing order, carried across tiles. With guessed maxima it
 *           also keeps each row's exact maximum of the scores it computes;
 *           where a row's differs from its guess, pass 2 runs again with
 *           the exact one (and so gives the same bits as after pass 1).
 * Then the tree (+8, +4, +2, +1) per row and one __fdiv_rn per output. Only
 * keys j < n_r of each row enter the max, the sums and P·V (partial tiles
 * test j < n_r; full tiles do not need to). */
constexpr int kAQ = 64, kAThreads = 256;

/* Keys per tile: 64 for D = 64; 32 for D = 128, so that two blocks still
 * share an SM (111 KB of shared memory each, the per-row scratch of the
 * tree aliased into Ps; 64-key tiles would leave one block of 8 warps).
 * Tiles start at multiples of 16 either way (the §R lanes). With D = 128 a
 * thread owns d = 4tx .. +3 and 64 + 4tx .. +3 of its rows in P·V. */
template <int D> __host__ __device__ constexpr int att_kt() { return D == 64 ? 64 : 32; }

/* Whether D = 128 prefills (Sq >= 16) take attention_tiled<128> (1,
 * default) or attention_row<128> as before (0): for A/B runs. */
#ifndef HMX_ATT_TILED_D128
#define HMX_ATT_TILED_D128 1
#endif

/* cp.async (sm_80+): copy 16 bytes global -> shared without passing
 * through registers; with in == false nothing is read and the destination
 * is zero-filled (source size 0). */
__device__ __forceinline__ void cp_async16(float *dst, const float *src, bool in) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(in ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Rows j0 .. j0+ROWS-1 (D floats each, ld floats apart; rows from n on are
 * zero-filled, none read) into a[ROWS][LD] by the NTH threads of a block
 * (t: this one), 16 bytes per cp.async; with_b: the same rows of bsrc
 * into b too, in the same loop. The caller commits the group. */
template <int ROWS, int D, int LD, int NTH>
__device__ __forceinline__ void cp_rows_async(float (*a)[LD], const float *asrc, float (*b)[LD],
                                              const float *bsrc, bool with_b, int64_t j0,
                                              int64_t n, int64_t ld, int t) {
  static_assert(ROWS * D / 4 % NTH == 0, "whole 16-byte pieces per thread");
#pragma unroll
  for (int p = 0; p < ROWS * D / 4 / NTH; p++) {
    const int f = t + NTH * p;
    const int j = f / (D / 4), d4 = (f % (D / 4)) * 4;
    const bool in = j0 + j < n;
    const int64_t off = (in ? (j0 + j) * ld : 0) + d4;
    cp_async16(&a[j][d4], asrc + off, in);
    if (with_b) cp_async16(&b[j][d4], bsrc + off, in);
  }
}

/* Double-buffered tiles of a block's loop: tile kt is in buffer kt & 1
 * (returned). load_next(kt + 1, other buffer) puts the next tile in flight
 * (one cp.async commit group), then the wait leaves only that group
 * pending, and after the barrier tile kt is visible to all and the previous
 * tile's buffer free. The loop issued tile 0 before its first call. */
template <typename LoadNext>
__device__ __forceinline__ int tile_ready(int64_t kt, int64_t ntiles, LoadNext load_next) {
  const int buf = (int)(kt & 1);
  if (kt + 1 < ntiles) {
    load_next(kt + 1, buf ^ 1);
    cp_async_wait<1>();
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
  return buf;
}

#include "attention_maxguess.cuh"

template <int D>
constexpr size_t att_tiled_smem() {
  return sizeof(float) * ((size_t)D * (kAQ + 4) + 4 * (size_t)att_kt<D>() * (D + 4) +
                          (size_t)att_kt<D>() * (kAQ + 4));
}

template <int D>
__global__ void __launch_bounds__(kAThreads, 2)
attention_tiled(const float *__restrict__ q, const float *__restrict__ k,
                const float *__restrict__ v, float *__restrict__ o, int64_t sq, int64_t skv,
                int64_t hq, int64_t hkv, int causal, int64_t q_offset, float scale,
                const float *__restrict__ mg) {
  static_assert(D == 64 || D == 128, "attention_tiled: the thread layout is for D = 64, 128");
  constexpr int kAK = att_kt<D>(), KC = kAK / 16, DC = D / 64; /* keys, d groups a thread */
  extern __shared__ __align__(16) float att_sm[];
  /* Qs[d][q]; Ks[buf][d][j] and Vs[buf][j][d], two buffers each (cp.async
   * fills one while the other is used); Ps[j][q] = e */
  float(*Qs)[kAQ + 4] = reinterpret_cast<float(*)[kAQ + 4]>(att_sm);
  float(*Ks)[kAK][D + 4] = reinterpret_cast<float(*)[kAK][D + 4]>(att_sm + D * (kAQ + 4));
  float(*Vs)[kAK][D + 4] =
      reinterpret_cast<float(*)[kAK][D + 4]>(att_sm + D * (kAQ + 4) + 2 * kAK * (D + 4));
  float(*Ps)[kAQ + 4] = reinterpret_cast<float(*)[kAQ + 4]>(
      att_sm + D * (kAQ + 4) + 4 * kAK * (D + 4));
  /* the row maxima of pass 1 (mred) and the lane sums' tree (lanes, rsum):
   * their own arrays for D = 64; for D = 128 in Ps, which is unused while
   * they are (mred is read before pass 2's first barrier, Ps written after
   * it; lanes after the last tile's closing barrier) */
  constexpr bool alias = D != 64;
  static_assert(!alias || kAK * (kAQ + 4) >= kAQ * 17 + kAQ, "tree scratch in Ps");
  __shared__ float lanes_own[alias ? 1 : kAQ][17];
  __shared__ float rsum_own[alias ? 1 : kAQ];
  __shared__ float mred_own[alias ? 1 : kAQ][4];
  float(*lanes)[17] = alias ? reinterpret_cast<float(*)[17]>(&Ps[0][0]) : lanes_own;
  float *rsum = alias ? &Ps[0][0] + kAQ * 17 : rsum_own;
  float(*mred)[4] = alias ? reinterpret_cast<float(*)[4]>(&Ps[0][0]) : mred_own;

  /* thread -> (ty, tx), 16 x 16: a warp holds 8 ty x 4 tx, so each 16-byte
   * shared read of Q / P (by ty) and of K / V (by tx) is one wavefront */
  const int t = threadIdx.x, lane_id = t % 32, warp = t / 32;
  const int tx = (warp % 4) * 4 + lane_id % 4, ty = (warp / 4) * 8 + lane_id / 4;
  const int64_t qt = (int64_t)gridDim.x - 1 - blockIdx.x; /* the longest rows first */
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t i0 = qt * kAQ;
  const int nq = (int)(sq - i0 < kAQ ? sq - i0 : kAQ);
  const int64_t kvh = h / (hq / hkv);
  const int64_t ldq = hq * D, ldk = hkv * D;
  const float *qb = q + ((b * sq + i0) * hq + h) * D;
  const float *kb = k + (b * skv * hkv + kvh) * D;
  const float *vb = v + (b * skv * hkv + kvh) * D;
  /* visible keys of local row r: n(r) (0 for rows past Sq) */
  auto nvis = [&](int r) -> int64_t {
    if (r >= nq) return 0;
    return causal ? q_offset + i0 + r + 1 : skv;
  };
  const int64_t n_lo = nvis(0), n_hi = nvis(nq - 1);
  const int64_t ntiles = (n_hi + kAK - 1) / kAK;

  /* Q tile, transposed: Qs[d][r]; rows past Sq are zero */
  for (int f = t; f < kAQ * D / 4; f += kAThreads) {
    const int r = f / (D / 4), d4 = (f % (D / 4)) * 4;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    if (r < nq) x = __ldg(reinterpret_cast<const float4 *>(qb + r * ldq + d4));
    Qs[d4][r] = x.x; Qs[d4 + 1][r] = x.y; Qs[d4 + 2][r] = x.z; Qs[d4 + 3][r] = x.w;
  }
  int64_t nr[4];
#pragma unroll
  for (int i = 0; i < 4; i++) nr[i] = nvis(4 * ty + i);

  /* K and V tile j0 .. j0+63 into Ks[buf], Vs[buf] ([j][d], rows padded to
   * D + 4 floats) by 16-byte cp.async (L2 -> shared, no registers); keys
   * past Skv are zero-filled (source size 0). One commit group per call. */
  auto load_kv = [&](int64_t j0, int buf, bool with_v) {
    cp_rows_async<kAK, D, D + 4, kAThreads>(Ks[buf], kb, Vs[buf], vb, with_v, j0, skv, ldk, t);
    cp_async_commit();
  };
  /* tile kt of a pass in Ks/Vs[buf] (returned), tile kt + 1 in flight */
  auto kv_ready = [&](int64_t kt, bool with_v) -> int {
    return tile_ready(kt, ntiles, [&](int64_t k1, int b1) { load_kv(k1 * kAK, b1, with_v); });
  };
  /* s[i][c] = score of row 4ty+i, key j0 + tx + 16c (c < KC): a sequential fma chain
   * over d = 0 .. D-1 (four d per step from one 16-byte read of the key row;
   * a quarter warp reads 8 rows 68 floats apart: no bank conflict) */
  auto scores = [&](float (&s)[4][KC], int buf) {
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int c = 0; c < KC; c++) s[i][c] = 0.0f;
#pragma unroll
    for (int d4 = 0; d4 < D; d4 += 4) {
      float kv[KC][4];
#pragma unroll
      for (int c = 0; c < KC; c++) {
        const float4 x = *reinterpret_cast<const float4 *>(&Ks[buf][tx + 16 * c][d4]);
        kv[c][0] = x.x; kv[c][1] = x.y; kv[c][2] = x.z; kv[c][3] = x.w;
      }
#pragma unroll
      for (int u = 0; u < 4; u++) {
        const float4 a = *reinterpret_cast<const float4 *>(&Qs[d4 + u][4 * ty]);
        const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
          for (int c = 0; c < KC; c++) s[i][c] = __fmaf_rn(av[i], kv[c][u], s[i][c]);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int c = 0; c < KC; c++) s[i][c] = __fmul_rn(s[i][c], scale);
  };

  /* combine the 16 threads of each row's x (a maximum): the 4 of a warp by
   * shuffles, then the 4 warps through shared memory (mred) */
  auto row_max = [&](float (&x)[4]) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
#pragma unroll
      for (int off = 1; off < 4; off *= 2) {
        const float y = __shfl_xor_sync(0xffffffffu, x[i], off);
        if (y > x[i]) x[i] = y;
      }
      if (lane_id % 4 == 0) mred[4 * ty + i][warp % 4] = x[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; i++) {
      x[i] = mred[4 * ty + i][0];
#pragma unroll
      for (int w = 1; w < 4; w++)
        if (mred[4 * ty + i][w] > x[i]) x[i] = mred[4 * ty + i][w];
    }
  };

  /* ---- pass 1: row maxima (or their guesses, checked after pass 2) */
  const float ninf = -__uint_as_float(0x7F800000u);
  float m[4] = {ninf, ninf, ninf, ninf};
  if (mg) {
#pragma unroll
    for (int i = 0; i < 4; i++)
      if (4 * ty + i < nq) m[i] = mg[(b * hq + h) * sq + i0 + 4 * ty + i];
  } else {
    if (ntiles > 0) load_kv(0, 0, false);
    for (int64_t kt = 0; kt < ntiles; kt++) {
      const int64_t j0 = kt * kAK;
      const int buf = kv_ready(kt, false); /* (and Qs visible to all) */
      float s[4][KC];
      scores(s, buf);
      const bool full = j0 + kAK <= n_lo;
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int c = 0; c < KC; c++)
          if ((full || j0 + tx + 16 * c < nr[i]) && s[i][c] > m[i]) m[i] = s[i][c];
      __syncthreads(); /* Ks[buf] free for tile kt + 2 */
    }
    row_max(m);
  }

  /* ---- pass 2: e, lane sums, P·V; with guessed maxima, also the exact
   * maxima mx of the same scores, and pass 2 again where a guess was wrong */
  const int lrow = t / 4, lbase = (t % 4) * 4;
  const int64_t nl = nvis(lrow);
  float lane[4];
  float acc[4][4 * DC]; /* [i][4h + c]: d = 64h + 4tx + c */
  for (int attempt = 0;; attempt++) {
    float mx[4] = {ninf, ninf, ninf, ninf};
#pragma unroll
    for (int i = 0; i < 4; i++) {
      lane[i] = 0.0f;
#pragma unroll
      for (int c = 0; c < 4 * DC; c++) acc[i][c] = 0.0f;
    }
    if (ntiles > 0) load_kv(0, 0, true);
    for (int64_t kt = 0; kt < ntiles; kt++) {
      const int64_t j0 = kt * kAK;
      const int buf = kv_ready(kt, true); /* (and Ps free: the last P·V is done) */
      float s[4][KC];
      scores(s, buf);
      const bool full = j0 + kAK <= n_lo;
      if (mg && attempt == 0)
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
          for (int c = 0; c < KC; c++)
            if ((full || j0 + tx + 16 * c < nr[i]) && s[i][c] > mx[i]) mx[i] = s[i][c];
#pragma unroll
      for (int c = 0; c < KC; c++) {
        float e[4];
#pragma unroll
        for (int i = 0; i < 4; i++) e[i] = dev_expf(__fsub_rn(s[i][c], m[i]));
        *reinterpret_cast<float4 *>(&Ps[tx + 16 * c][4 * ty]) =
            make_float4(e[0], e[1], e[2], e[3]);
      }
      __syncthreads();
      if (full) {
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
          for (int w = 0; w < kAK / 16; w++)
            lane[u] = __fadd_rn(lane[u], Ps[lbase + u + 16 * w][lrow]);
#pragma unroll 16
        for (int jj = 0; jj < kAK; jj++) {
          const float4 p = *reinterpret_cast<const float4 *>(&Ps[jj][4 * ty]);
          const float pv[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
          for (int h = 0; h < DC; h++) {
            const float4 x = *reinterpret_cast<const float4 *>(&Vs[buf][jj][64 * h + 4 * tx]);
            const float xv[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
              for (int c = 0; c < 4; c++)
                acc[i][4 * h + c] = __fmaf_rn(pv[i], xv[c], acc[i][4 * h + c]);
          }
        }
      } else {
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
          for (int w = 0; w < kAK / 16; w++)
            if (j0 + lbase + u + 16 * w < nl)
              lane[u] = __fadd_rn(lane[u], Ps[lbase + u + 16 * w][lrow]);
        for (int jj = 0; jj < kAK; jj++) {
          const float4 p = *reinterpret_cast<const float4 *>(&Ps[jj][4 * ty]);
          const float pv[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
          for (int h = 0; h < DC; h++) {
            const float4 x = *reinterpret_cast<const float4 *>(&Vs[buf][jj][64 * h + 4 * tx]);
            const float xv[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
            for (int i = 0; i < 4; i++)
              if (j0 + jj < nr[i])
#pragma unroll
                for (int c = 0; c < 4; c++)
                  acc[i][4 * h + c] = __fmaf_rn(pv[i], xv[c], acc[i][4 * h + c]);
          }
        }
      }
      __syncthreads(); /* Ks/Vs[buf] and Ps free for the next tile's loads */
    }
    if (!mg || attempt > 0) break;
    /* the guesses against the exact maxima (g == mx: -0 for +0 is allowed);
     * rows past Sq have no guess (their scores, of zero rows, are unused) */
    row_max(mx);
    bool wrong = false;
#pragma unroll
    for (int i = 0; i < 4; i++) wrong |= 4 * ty + i < nq && !(mx[i] == m[i]);
    if (!__syncthreads_or(wrong)) break; /* (also: every read of mred done) */
#pragma unroll
    for (int i = 0; i < 4; i++) m[i] = mx[i];
    if (t == 0) atomicAdd(&att_reruns, 1ull);
  }
#pragma unroll
  for (int u = 0; u < 4; u++) lanes[lrow][lbase + u] = lane[u];
  __syncthreads();
  if (t < kAQ) {
    float *l = lanes[t];
    for (int half = 8; half >= 1; half /= 2)
      for (int kk = 0; kk < half; kk++) l[kk] = __fadd_rn(l[kk], l[kk + half]);
    rsum[t] = l[0];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int r = 4 * ty + i;
    if (r >= nq) continue;
    const float sum = rsum[r];
#pragma unroll
    for (int hh = 0; hh < DC; hh++) {
      float *op = o + ((b * sq + i0 + r) * hq + h) * D + 64 * hh + 4 * tx;
      *reinterpret_cast<float4 *>(op) =
          make_float4(__fdiv_rn(acc[i][4 * hh], sum), __fdiv_rn(acc[i][4 * hh + 1], sum),
                      __fdiv_rn(acc[i][4 * hh + 2], sum), __fdiv_rn(acc[i][4 * hh + 3], sum));
    }
  }
}

/* ---- attention, one row per block (decode, and short prefills): one block
 * (256 threads) per output row ((b*Sq + i)*Hq + h). Scores: a thread per key
 * (16-byte loads of k_j, the dot a sequential __fmaf_rn chain over d from +0,
 * then * scale) into shared memory, with the exact maximum (per thread, then
 * over warps: exact, any order); e_j = exp(s_j - m) in place; then the keys in
 * tiles of 64: the whole block loads the V tile into shared memory (16-byte
 * loads, the next tile already in registers while the current one is used),
 * threads d < D carry acc_d = fma(e_j, v_jd, acc_d) over j in increasing
 * order, and threads 224..239 are the §R lanes (lane l adds e_j, j = l mod 16,
 * in increasing j). Then the tree and one division per output. */
constexpr int kARThreads = 256, kARTile = 64;

template <int D>
__global__ void __launch_bounds__(kARThreads)
attention_row(const float *__restrict__ q, const float *__restrict__ k,
              const float *__restrict__ v, float *__restrict__ o, int64_t sq, int64_t skv,
              int64_t hq, int64_t hkv, int causal, int64_t q_offset, float scale) {
  static_assert(D % 4 == 0 && D <= kARThreads && (kARTile * D / 4) % kARThreads == 0, "D");
  extern __shared__ __align__(16) float att_sm[];
  float(*Vs)[D] = reinterpret_cast<float(*)[D]>(att_sm); /* [kARTile][D] */
  float *e = att_sm + kARTile * D;                       /* [n] */
  __shared__ __align__(16) float qs[D];
  __shared__ float red[kARThreads / 32];
  __shared__ float lanes[16];
  __shared__ float m_s, sum_s;
  const int64_t row = blockIdx.x;
  const int64_t h = row % hq, bi = row / hq;
  const int64_t i = bi % sq, b = bi / sq;
  const int64_t kvh = h / (hq / hkv);
  const int64_t ldk = hkv * D;
  const float *kb = k + (b * skv * hkv + kvh) * D;
  const float *vb = v + (b * skv * hkv + kvh) * D;
  const int n = (int)(causal ? q_offset + i + 1 : skv);
  const int t = threadIdx.x;
  if (t < D) qs[t] = q[row * D + t];
  __syncthreads();

  const float ninf = -__uint_as_float(0x7F800000u);
  float m = ninf;
  for (int j = t; j < n; j += kARThreads) {
    const float4 *kp = reinterpret_cast<const float4 *>(kb + (int64_t)j * ldk);
    float4 kv[D / 4];
#pragma unroll
    for (int c = 0; c < D / 4; c++) kv[c] = __ldg(kp + c);
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < D / 4; c++) {
      dot = __fmaf_rn(qs[4 * c], kv[c].x, dot);
      dot = __fmaf_rn(qs[4 * c + 1], kv[c].y, dot);
      dot = __fmaf_rn(qs[4 * c + 2], kv[c].z, dot);
      dot = __fmaf_rn(qs[4 * c + 3], kv[c].w, dot);
    }
    const float s = __fmul_rn(dot, scale);
    e[j] = s;
    if (s > m) m = s; /* NaN never wins */
  }
#pragma unroll
  for (int off = 16; off >= 1; off /= 2) {
    const float x = __shfl_xor_sync(0xffffffffu, m, off);
    if (x > m) m = x;
  }
  if (t % 32 == 0) red[t / 32] = m;
  __syncthreads();
  if (t == 0) {
    float mm = red[0];
    for (int w = 1; w < kARThreads / 32; w++)
      if (red[w] > mm) mm = red[w];
    m_s = mm;
  }
  __syncthreads();
  m = m_s;
  for (int j = t; j < n; j += kARThreads) e[j] = dev_expf(__fsub_rn(e[j], m));

  constexpr int kPer = kARTile * D / 4 / kARThreads; /* float4 per thread per V tile */
  float4 rv[kPer];
  auto load_v = [&](int j0) {
#pragma unroll
    for (int p = 0; p < kPer; p++) {
      const int f = t + kARThreads * p;
      const int j = f / (D / 4), d4 = (f % (D / 4)) * 4;
      rv[p] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (j0 + j < n) rv[p] = __ldg(reinterpret_cast<const float4 *>(vb + (int64_t)(j0 + j) * ldk + d4));
    }
  };
  load_v(0);
  float acc = 0.0f, lane = 0.0f;
  for (int j0 = 0; j0 < n; j0 += kARTile) {
    __syncthreads(); /* e written (first tile); Vs free (later tiles) */
#pragma unroll
    for (int p = 0; p < kPer; p++) {
      const int f = t + kARThreads * p;
      *reinterpret_cast<float4 *>(&Vs[f / (D / 4)][(f % (D / 4)) * 4]) = rv[p];
    }
    __syncthreads();
    if (j0 + kARTile < n) load_v(j0 + kARTile);
    const int len = n - j0 < kARTile ? n - j0 : kARTile;
    if (t < D) {
      if (len == kARTile) {
#pragma unroll 16
        for (int jj = 0; jj < kARTile; jj++) acc = __fmaf_rn(e[j0 + jj], Vs[jj][t], acc);
      } else {
        for (int jj = 0; jj < len; jj++) acc = __fmaf_rn(e[j0 + jj], Vs[jj][t], acc);
      }
    } else if (t >= 224 && t < 240) {
      for (int jj = t - 224; jj < len; jj += 16) lane = __fadd_rn(lane, e[j0 + jj]);
    }
  }
  if (t >= 224 && t < 240) lanes[t - 224] = lane;
  __syncthreads();
  if (t == 0) sum_s = lane_tree(lanes);
  __syncthreads();
  if (t < D) o[row * D + t] = __fdiv_rn(acc, sum_s);
}

/* ------------------------------------------------------------------ swiglu */

/* g = silu(a) * b: swiglu_gate (cuda/dev_math.cuh) */

/* ------------------------------------------------------------------ gemm */

/* docs/NUMERICS.md §gemm: SIMT, register-blocked. A block (256 threads)
 * computes a 128x128 tile of C; thread (ty, tx) = (t / 16, t % 16) owns the
 * 8x8 outputs at rows {4ty .. 4ty+3, 64+4ty .. 64+4ty+3} and the same columns
 * with tx, in 64 registers. K goes through shared memory 8 at a time, double
 * buffered: while the block computes tile kt from one buffer, the next tile
 * is already loaded from global memory into registers (16-byte loads when the
 * shapes and pointers allow: GemmVec) and is stored into the other buffer
 * after the compute; one barrier per tile. A and B^T (trans_b) are stored
 * transposed (k-major) so that each thread reads its 8 a and 8 b values of
 * one k with four 16-byte shared loads.
 *
 * Order kept: each accumulator starts from bias[j] (or +0) and takes one
 * __fmaf_rn per k, k = 0 .. K-1 in increasing order, carried from tile to
 * tile (every thread owns its outputs for the whole of K); the last K tile
 * stops at K (an extra fma with zeros would turn -0 into +0). No split-K, no
 * atomics, no tensor cores. Loads past M, N or K are zero-filled and never
 * reach an output. */
constexpr int kGBM = 128, kGBN = 128, kGBK = 8, kGPad = 4, kGThreads = 256;

template <bool VEC, bool TB>
__global__ void __launch_bounds__(kGThreads, 2)
gemm_kernel(const float *__restrict__ A, const float *__restrict__ B,
            const float *__restrict__ bias, float *__restrict__ C, int64_t M, int64_t N,
            int64_t K) {
  __shared__ __align__(16) float As[2][kGBK][kGBM + kGPad];
  __shared__ __align__(16) float Bs[2][kGBK][kGBN + kGPad];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int64_t row0 = (int64_t)blockIdx.x * kGBM, col0 = (int64_t)blockIdx.y * kGBN;
  /* global -> register mapping of one K tile: A (and B^T) 128 rows x 8 k,
   * thread t takes row t/2, k (t%2)*4 .. +3; B (K x N) 8 k x 128 columns,
   * thread t takes k t/32, columns (t%32)*4 .. +3 */
  const int lr = t / 2, lk = (t % 2) * 4;
  const int lbk = t / 32, lbc = (t % 32) * 4;
  /* per-thread sources of the current K tile, advanced by kGBK (A, B^T) or
   * kGBK rows (B) per tile; rows/columns past M or N never load */
  const bool a_in = row0 + lr < M;
  const float *pa = A + (a_in ? (row0 + lr) * K : 0) + lk;
  const bool b_in = TB ? col0 + lr < N : true;
  const float *pb = TB ? B + (b_in ? (col0 + lr) * K : 0) + lk : B + (int64_t)lbk * N + col0 + lbc;
  const int64_t b_step = TB ? kGBK : kGBK * N;
  int ncol_b = (int)(N - col0 - lbc < 4 ? N - col0 - lbc : 4); /* B[K][N]: columns in range */
  float ra[4], rb[4];

  /* load the K tile starting at k0 (pa, pb point at it) into ra, rb */
  auto load = [&](int64_t k0) {
    {
      const int64_t kl = K - (k0 + lk); /* k left from this thread's first */
      if (VEC) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (a_in && kl > 0) v = __ldg(reinterpret_cast<const float4 *>(pa));
        ra[0] = v.x; ra[1] = v.y; ra[2] = v.z; ra[3] = v.w;
      } else {
#pragma unroll
        for (int i = 0; i < 4; i++) ra[i] = (a_in && i < kl) ? __ldg(pa + i) : 0.0f;
      }
      if (TB) {
        if (VEC) {
          float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
          if (b_in && kl > 0) v = __ldg(reinterpret_cast<const float4 *>(pb));
          rb[0] = v.x; rb[1] = v.y; rb[2] = v.z; rb[3] = v.w;
        } else {
#pragma unroll
          for (int i = 0; i < 4; i++) rb[i] = (b_in && i < kl) ? __ldg(pb + i) : 0.0f;
        }
      }
    }
    if (!TB) { /* B[K][N] */
      const bool k_in = k0 + lbk < K;
      if (VEC) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (k_in && ncol_b > 0) v = __ldg(reinterpret_cast<const float4 *>(pb));
        rb[0] = v.x; rb[1] = v.y; rb[2] = v.z; rb[3] = v.w;
      } else {
#pragma unroll
        for (int i = 0; i < 4; i++) rb[i] = (k_in && i < ncol_b) ? __ldg(pb + i) : 0.0f;
      }
    }
    pa += kGBK;
    pb += b_step;
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 4; i++) As[buf][lk + i][lr] = ra[i];
    if (TB) {
#pragma unroll
      for (int i = 0; i < 4; i++) Bs[buf][lk + i][lr] = rb[i];
    } else {
      *reinterpret_cast<float4 *>(&Bs[buf][lbk][lbc]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
    }
  };

  float acc[8][8];
#pragma unroll
  for (int c = 0; c < 8; c++) {
    const int64_t col = col0 + (c < 4 ? 4 * tx + c : 64 + 4 * tx + c - 4);
    const float b0 = (bias && col < N) ? bias[col] : 0.0f;
#pragma unroll
    for (int r = 0; r < 8; r++) acc[r][c] = b0;
  }

  auto step = [&](int buf, int kk) {
    const float4 a0 = *reinterpret_cast<const float4 *>(&As[buf][kk][4 * ty]);
    const float4 a1 = *reinterpret_cast<const float4 *>(&As[buf][kk][64 + 4 * ty]);
    const float4 b0 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][4 * tx]);
    const float4 b1 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][64 + 4 * tx]);
    const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int r = 0; r < 8; r++)
#pragma unroll
      for (int c = 0; c < 8; c++) acc[r][c] = __fmaf_rn(a[r], b[c], acc[r][c]);
  };

  const int64_t ntiles = (K + kGBK - 1) / kGBK;
  load(0);
  store(0);
  __syncthreads();
  for (int64_t kt = 0; kt < ntiles; kt++) {
    const int cur = (int)(kt & 1);
    const int more = kt + 1 < ntiles;
    if (more) load((kt + 1) * kGBK);
    const int64_t left = K - kt * kGBK;
    if (left >= kGBK) {
#pragma unroll
      for (int kk = 0; kk < kGBK; kk++) step(cur, kk);
    } else {
      for (int kk = 0; kk < (int)left; kk++) step(cur, kk);
    }
    if (more) store(cur ^ 1);
    __syncthreads();
  }

  const int mrows = (int)(M - row0 < kGBM ? M - row0 : kGBM);
  const int ncols = (int)(N - col0 < kGBN ? N - col0 : kGBN);
  float *cb = C + row0 * N + col0;
#pragma unroll
  for (int r = 0; r < 8; r++) {
    const int lrow = r < 4 ? 4 * ty + r : 64 + 4 * ty + r - 4;
    if (lrow >= mrows) continue;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int lc = 64 * h + 4 * tx;
      float *p = cb + (int64_t)lrow * N + lc;
      if (VEC) {
        if (lc < ncols)
          *reinterpret_cast<float4 *>(p) = make_float4(acc[r][4 * h], acc[r][4 * h + 1],
                                                       acc[r][4 * h + 2], acc[r][4 * h + 3]);
      } else {
#pragma unroll
        for (int i = 0; i < 4; i++)
          if (lc + i < ncols) p[i] = acc[r][4 * h + i];
      }
    }
  }
}

/* Few rows of A (decode: one token per sequence): gemm_kernel's 128 x 128
 * tiles would leave most SMs idle (N / 128 blocks, each a chain of K / 8
 * barrier-separated steps: about 100 us for a 768 x 768 matrix on the H200,
 * session 57). Here one thread owns output column j for all M <= kGVRows
 * rows, with gemm_kernel's order: each accumulator starts from bias[j] (or
 * +0) and takes one __fmaf_rn per k, k = 0 .. K-1 increasing: the same bits.
 * The block stages kGVChunk values of each A row in shared memory (every
 * thread reads the same one: a broadcast); B's column j is read from global
 * memory: trans_b, row j of B [N][K], each thread its own row (the L1 keeps
 * the sector its neighbouring k read); else column j of B [K][N], a warp's 32
 * columns one 128-byte line per k. */
constexpr int kGVRows = 4, kGVThreads = 64, kGVChunk = 512;

template <bool TB>
__global__ void __launch_bounds__(kGVThreads)
gemv_kernel(const float *__restrict__ A, const float *__restrict__ B,
            const float *__restrict__ bias, float *__restrict__ C, int M, int64_t N, int64_t K) {
  __shared__ float As[kGVRows][kGVChunk];
  const int64_t j = (int64_t)blockIdx.x * kGVThreads + threadIdx.x;
  const bool live = j < N;
  float acc[kGVRows];
#pragma unroll
  for (int i = 0; i < kGVRows; i++) acc[i] = bias && live ? bias[j] : 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += kGVChunk) {
    const int kc = (int)(K - k0 < kGVChunk ? K - k0 : kGVChunk);
    __syncthreads(); /* the previous chunk's reads are done */
    for (int t = threadIdx.x; t < M * kc; t += kGVThreads)
      As[t / kc][t % kc] = A[(int64_t)(t / kc) * K + k0 + t % kc];
    __syncthreads();
    if (!live) continue;
    const float *b = TB ? B + j * K + k0 : B + k0 * N + j;
#pragma unroll 8
    for (int kk = 0; kk < kc; kk++) {
      const float w = TB ? b[kk] : b[(int64_t)kk * N];
#pragma unroll
      for (int i = 0; i < kGVRows; i++)
        if (i < M) acc[i] = __fmaf_rn(As[i][kk], w, acc[i]);
    }
  }
  if (live)
#pragma unroll
    for (int i = 0; i < kGVRows; i++)
      if (i < M) C[(int64_t)i * N + j] = acc[i];
}

/* ------------------------------------------------------------------ bodies
 * One body per op, shared by the host-memory and device-memory entry points:
 * job_in / job_out give the caller's device pointers or fresh copies. */

void norm_body(Job *j, const hmx_norm_args *a, int layer) {
  const int64_t total = a->rows * a->n;
  if (j->st != HMX_OK || total <= 0) return;
  if (a->rows > INT32_MAX) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: too many rows", j->op);
    return;
  }
  const float *d_x = job_in(j, a->x, total);
  const float *d_w = job_in(j, a->weight, a->n);
  const float *d_b = layer ? job_in(j, a->bias, a->n) : NULL;
  float *d_y = job_out(j, a->y, total);
  if (j->st != HMX_OK) return;
  const float fn = (float)a->n; /* exact: n <= 2^24 */
  /* in place (y == x, device memory) is safe: each row is read in full
   * before the barrier that precedes its writes, and every element is
   * written by the thread that read it last */
  if (layer)
    layernorm_kernel<<<(unsigned)a->rows, kNormThreads, 0, j->stream>>>(d_x, d_w, d_b, d_y, a->n,
                                                                       fn, a->eps);
  else
    rmsnorm_kernel<<<(unsigned)a->rows, kNormThreads, 0, j->stream>>>(d_x, d_w, d_y, a->n, fn,
                                                                     a->eps);
  job_launched(j, layer ? "layernorm_kernel" : "rmsnorm_kernel");
  job_out_done(j, a->y, d_y, total);
}

void rope_body(Job *j, const hmx_rope_args *a) {
  const int64_t rows = a->t * a->h, total = rows * a->d, tab = a->t * (a->rot_dim / 2);
  if (j->st != HMX_OK || total <= 0) return;
  if (rows > INT32_MAX) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda rope: too many rows");
    return;
  }
  const float *d_x = job_in(j, a->x, total);
  /* host memory, copied here, unless a device call says otherwise */
  const float *d_c = j->device && a->tab_on_device ? a->cos_tab : job_upload(j, a->cos_tab, tab);
  const float *d_s = j->device && a->tab_on_device ? a->sin_tab : job_upload(j, a->sin_tab, tab);
  float *d_y = job_out(j, a->y, total);
  if (j->st != HMX_OK) return;
  /* in place is safe: each pair is read and written by one thread */
  rope_kernel<<<(unsigned)rows, 64, 0, j->stream>>>(d_x, d_y, d_c, d_s, a->h, a->d, a->rot_dim,
                                                   a->style == HMX_ROPE_HALF);
  job_launched(j, "rope_kernel");
  job_out_done(j, a->y, d_y, total);
}

/* HMX_CUDA_GEMV=0 (a -D at build time) keeps gemm_kernel for M <= kGVRows
 * too: the A/B of session 57 (docs/results/session57/). */
#ifndef HMX_CUDA_GEMV
#define HMX_CUDA_GEMV 1
#endif

/* C[M][N] = A[M][K] * B (+ bias) on device buffers, by gemm_kernel (for
 * M <= kGVRows, with K > 0, by gemv_slab when B is [N][K] rows it takes,
 * else by gemv_kernel; K = 0 stays with gemm_kernel's bias-or-zero path):
 * each
 * output from bias[j] or +0, one __fmaf_rn per k in increasing k. The
 * 16-byte load/store variant needs K (and N for B[K][N], C) a multiple of 4
 * and 16-byte aligned A, B, C; otherwise the scalar variant (same order, same
 * bits). */
void gemm_device(Job *j, const float *d_a, const float *d_b, const float *d_bias, float *d_c,
                 int64_t m, int64_t n, int64_t k, int trans_b) {
  if (j->st != HMX_OK || m <= 0 || n <= 0) return;
  if (m <= kGVRows && k > 0 && HMX_CUDA_GEMV) {
    if (trans_b && gemv_slab(j, d_a, d_b, NULL, 0, d_bias, d_c, m, n, k)) return;
    const int64_t blocks = (n + kGVThreads - 1) / kGVThreads;
    if (blocks > INT32_MAX) {
      j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: N = %lld is too large", j->op,
                       (long long)n);
      return;
    }
    if (trans_b)
      gemv_kernel<true><<<(unsigned)blocks, kGVThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c,
                                                                       (int)m, n, k);
    else
      gemv_kernel<false><<<(unsigned)blocks, kGVThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c,
                                                                        (int)m, n, k);
    job_launched(j, "gemv_kernel");
    return;
  }
  const int64_t mt = (m + kGBM - 1) / kGBM, nt = (n + kGBN - 1) / kGBN;
  if (mt > INT32_MAX || nt > 65535) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: %lld x %lld is too large", j->op,
                     (long long)m, (long long)n);
    return;
  }
  const int vec = k % 4 == 0 && n % 4 == 0 &&
                  (((uintptr_t)d_a | (uintptr_t)d_b | (uintptr_t)d_c) & 15) == 0;
  dim3 grid((unsigned)mt, (unsigned)nt);
  if (vec && trans_b)
    gemm_kernel<true, true><<<grid, kGThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c, m, n, k);
  else if (vec)
    gemm_kernel<true, false><<<grid, kGThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c, m, n, k);
  else if (trans_b)
    gemm_kernel<false, true><<<grid, kGThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c, m, n, k);
  else
    gemm_kernel<false, false><<<grid, kGThreads, 0, j->stream>>>(d_a, d_b, d_bias, d_c, m, n, k);
  job_launched(j, "gemm_kernel");
}

/* Whether a host call passes 16-bit weights as they are stored (src/backend.h,
 * HMX_W16_*: wdt bf16 / f16 and the 16-bit pointer set), to be widened on the
 * device (cuda/weights_in.cuh); any other form is an internal error. Other
 * calls, and every device call, have f32 weights. */
bool weights_stored(Job *j, hmx_dtype wdt, const void *w16) {
  if (wdt == HMX_F32 && !w16) return false;
  if (j->device || (wdt != HMX_BF16 && wdt != HMX_F16) || !w16)
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: 16-bit weights in an unexpected form", j->op);
  return true;
}

/* C = A W^T (+ bias) for a kept matrix W [n, k] (host bytes h, or its GPU
 * copy dev; ggml type and layout): for a few rows, gemv_slab on the stored
 * bytes when it reads them (the float types in G16: no f32 copy of W);
 * else decoded to f32 scratch (cuda/weights_in.cuh) for gemm_device. The
 * same bits either way. */
void gemm_kept(Job *j, const float *d_a, const void *h, const void *dev, uint32_t type,
               int layout, const float *d_bias, float *d_c, int64_t m, int64_t n, int64_t k) {
  if (j->st != HMX_OK) return;
  if (m <= kGVRows && HMX_CUDA_GEMV && gemv_slab_takes(type, layout)) {
    const void *raw = job_kept_bytes(j, h, dev, type, layout, n, k);
    if (j->st != HMX_OK || gemv_slab(j, d_a, NULL, raw, type, d_bias, d_c, m, n, k)) return;
  }
  const float *d_b = job_in_blocks(j, h, dev, type, layout, n, k);
  gemm_device(j, d_a, d_b, d_bias, d_c, m, n, k, 1);
}

void gemm_body(Job *j, const hmx_gemm_args *g) {
  if (j->st != HMX_OK || g->m <= 0 || g->n <= 0) return;
  const float *d_a = job_in(j, g->a, g->m * g->k);
  const float *d_b;
  if (g->bq || g->bq_dev) { /* a kept matrix [N, K], in rows or in G16 */
    /* device calls pass its GPU copy only (src/gemm_quant.c) */
    if (!g->trans_b || (j->device && (g->bq || !g->bq_dev)))
      j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda gemm: GGUF weights in an unexpected form");
    const float *d_bias = job_in(j, g->bias, g->n);
    float *d_c = job_out(j, g->c, g->m * g->n);
    gemm_kept(j, d_a, g->bq, g->bq_dev, g->qtype, g->blayout, d_bias, d_c, g->m, g->n, g->k);
    job_out_done(j, g->c, d_c, g->m * g->n);
    return;
  } else if (weights_stored(j, g->wdt, g->b16)) {
    d_b = job_in16(j, g->b16, g->wdt, g->k * g->n);
  } else {
    d_b = job_in(j, g->b, g->k * g->n);
  }
  const float *d_bias = job_in(j, g->bias, g->n);
  float *d_c = job_out(j, g->c, g->m * g->n);
  if (j->st != HMX_OK) return;
  gemm_device(j, d_a, d_b, d_bias, d_c, g->m, g->n, g->k, g->trans_b);
  job_out_done(j, g->c, d_c, g->m * g->n);
}

/* a[i] = silu(a[i]) * b[i], i < n */
void swiglu_gate_run(Job *j, float *d_a, const float *d_b, int64_t n) {
  if (j->st != HMX_OK || n <= 0) return;
  swiglu_gate<<<grid_for(n, 256), 256, 0, j->stream>>>(d_a, d_b, n);
  job_launched(j, "swiglu_gate");
}

/* swiglu_body with the three matrices kept ones with GPU copies (W1^T, W3^T
 * [h, d], W2^T [d_out, h]): three gemm_kept and the gate between. */
void swiglu_kept(Job *j, const hmx_swiglu_args *s, const float *d_x) {
  const hmx_qmatrix *w1 = s->wq1, *w3 = s->wq3, *w2 = s->wq2;
  float *d_a = job_alloc(j, s->t * s->h);
  float *d_b = job_alloc(j, s->t * s->h);
  float *d_y = job_out(j, s->y, s->t * s->d_out);
  gemm_kept(j, d_x, NULL, w1->dev, w1->type, w1->layout, NULL, d_a, s->t, s->h, s->d);
  gemm_kept(j, d_x, NULL, w3->dev, w3->type, w3->layout, NULL, d_b, s->t, s->h, s->d);
  swiglu_gate_run(j, d_a, d_b, s->t * s->h);
  gemm_kept(j, d_a, NULL, w2->dev, w2->type, w2->layout, NULL, d_y, s->t, s->d_out, s->h);
  job_out_done(j, s->y, d_y, s->t * s->d_out);
}

/* docs/NUMERICS.md §swiglu. a = x W1 and b = x W3 ([T][h]) are two gemms
 * (a_u, b_u sequential over p from +0), g = silu(a) * b in place, and
 * y = g W2 a third gemm: y_j from +0, one fma per u in increasing u, which is
 * ref's order for every block size (`block` only bounds ref's memory).
 * Scratch: 2*T*h floats (scratch_malloc in device mode). */
void swiglu_body(Job *j, const hmx_swiglu_args *s) {
  if (j->st != HMX_OK || s->t <= 0 || s->d_out <= 0) return;
  const int64_t th = s->t * s->h;
  const float *d_x = job_in(j, s->x, s->t * s->d);
  const float *d_w1, *d_w3, *d_w2;
  if (s->wlayout != HMX_QLAYOUT_ROWS)
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda swiglu: weights in an unexpected layout");
  if (s->wq1) { /* GPU copies of kept matrices (src/swiglu_quant.c, resident_ok) */
    swiglu_kept(j, s, d_x);
    return;
  } else if (weights_stored(j, s->wdt, s->w1_16)) {
    d_w1 = job_in16(j, s->w1_16, s->wdt, s->d * s->h);
    d_w3 = job_in16(j, s->w3_16, s->wdt, s->d * s->h);
    d_w2 = job_in16(j, s->w2_16, s->wdt, s->h * s->d_out);
  } else {
    d_w1 = job_in(j, s->w1, s->d * s->h);
    d_w3 = job_in(j, s->w3, s->d * s->h);
    d_w2 = job_in(j, s->w2, s->h * s->d_out);
  }
  float *d_a = job_alloc(j, th);
  float *d_b = job_alloc(j, th);
  float *d_y = job_out(j, s->y, s->t * s->d_out);
  if (j->st != HMX_OK) return;
  gemm_device(j, d_x, d_w1, NULL, d_a, s->t, s->h, s->d, 0);
  gemm_device(j, d_x, d_w3, NULL, d_b, s->t, s->h, s->d, 0);
  swiglu_gate_run(j, d_a, d_b, th);
  gemm_device(j, d_a, d_w2, NULL, d_y, s->t, s->d_out, s->h, 0); /* h = 0: y = +0 */
  job_out_done(j, s->y, d_y, s->t * s->d_out);
}

/* att_smem_limit: cuda/dev_math.cuh */

/* Which kernel: attention_tiled for D = 64 or 128 and at least 16 query rows
 * per (batch, head); attention_row for D = 64 or 128 (decode, short prefills)
 * while the row's scores and a V tile fit in shared memory; else the
 * general attention_kernel. All three keep the order of docs/NUMERICS.md
 * §attention, so the choice changes no bit. The first two use 16-byte loads
 * and need 16-byte aligned q, k, v, o. */
constexpr size_t kARSmemMax = 200 * 1024;

/* HMX_CUDA_ATT_MAX (cuda/attention_maxguess.cuh): 0 "exact" (pass 1 finds
 * the maxima), 2 "spoil" (every guess wrong: the test of the second pass),
 * 1 otherwise (guess on tensor cores, check in pass 2). Read per call. */
int att_max_mode(void) {
  const char *e = getenv("HMX_CUDA_ATT_MAX");
  if (e && strcmp(e, "exact") == 0) return 0;
  if (e && strcmp(e, "spoil") == 0) return 2;
  return 1;
}

/* attention_tiled<D>, its maxima guessed first by attention_max_guess<D>
 * into a scratch of B * Hq * Sq floats (unless att_max_mode() == 0) */
template <int D>
void attention_tiled_run(Job *j, const hmx_attention_args *a, const float *d_q, const float *d_k,
                         const float *d_v, float *d_o) {
  const int mode = att_max_mode();
  dim3 grid((unsigned)((a->sq + kAQ - 1) / kAQ), (unsigned)a->hq, (unsigned)a->b);
  float *mg = NULL;
  if (mode != 0) {
    mg = job_alloc(j, a->b * a->hq * a->sq);
    if (j->st != HMX_OK) return;
    constexpr int rq = 16 * guess_warps<D>();
    dim3 ggrid((unsigned)((a->sq + rq - 1) / rq), (unsigned)a->hq, (unsigned)a->b);
    attention_max_guess<D><<<ggrid, 32 * guess_warps<D>(), 0, j->stream>>>(
        d_q, d_k, mg, a->sq, a->skv, a->hq, a->hkv, a->causal, a->q_offset, a->scale, mode == 2);
    job_launched(j, "attention_max_guess");
  }
  attention_tiled<D><<<grid, kAThreads, att_tiled_smem<D>(), j->stream>>>(
      d_q, d_k, d_v, d_o, a->sq, a->skv, a->hq, a->hkv, a->causal, a->q_offset, a->scale, mg);
  job_launched(j, "attention_tiled");
}

void attention_body(Job *j, const hmx_attention_args *a) {
  const int64_t rows = a->b * a->sq * a->hq, total = rows * a->d;
  const int64_t kv = a->b * a->skv * a->hkv * a->d;
  if (j->st != HMX_OK || total <= 0) return;
  if (rows > INT32_MAX) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda attention: too many rows");
    return;
  }
  const float *d_q = job_in(j, a->q, total);
  const float *d_k, *d_v;
  if (a->kblocks > 0)
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda attention: blocked keys (the table claims none)");
  if (weights_stored(j, a->kvdt, a->k16)) { /* a 16-bit KV cache */
    d_k = job_in16(j, a->k16, a->kvdt, kv);
    d_v = job_in16(j, a->v16, a->kvdt, kv);
  } else {
    d_k = job_in(j, a->k, kv);
    d_v = job_in(j, a->v, kv);
  }
  float *d_o = job_out(j, a->o, total);
  if (j->st != HMX_OK) return;
  const int aligned =
      (((uintptr_t)d_q | (uintptr_t)d_k | (uintptr_t)d_v | (uintptr_t)d_o) & 15) == 0;
  /* each device's shared-memory limits (att_smem_limit) */
  static volatile long long tiled_lim[kDeviceSlots], tiled128_lim[kDeviceSlots],
      row64_lim[kDeviceSlots], row128_lim[kDeviceSlots];
  /* attention_row's scores: Skv rounded up to 4 floats (the compiler reads
   * the last 1-3 of a P·V tile as one aligned 16-byte group) */
  const size_t row_sm = (size_t)(kARTile * a->d + (a->skv + 3) / 4 * 4) * sizeof(float);
  if (aligned && a->d == 64 && a->sq >= 16 && a->hq <= 65535 && a->b <= 65535 &&
      att_tiled_smem<64>() <= att_smem_limit(attention_tiled<64>, att_tiled_smem<64>(), tiled_lim)) {
    attention_tiled_run<64>(j, a, d_q, d_k, d_v, d_o);
  } else if (HMX_ATT_TILED_D128 && aligned && a->d == 128 && a->sq >= 16 && a->hq <= 65535 &&
             a->b <= 65535 &&
             att_tiled_smem<128>() <=
                 att_smem_limit(attention_tiled<128>, att_tiled_smem<128>(), tiled128_lim)) {
    attention_tiled_run<128>(j, a, d_q, d_k, d_v, d_o);
  } else if (aligned && a->d == 64 &&
             row_sm <= att_smem_limit(attention_row<64>, kARSmemMax, row64_lim)) {
    attention_row<64><<<(unsigned)rows, kARThreads, row_sm, j->stream>>>(
        d_q, d_k, d_v, d_o, a->sq, a->skv, a->hq, a->hkv, a->causal, a->q_offset, a->scale);
    job_launched(j, "attention_row");
  } else if (aligned && a->d == 128 &&
             row_sm <= att_smem_limit(attention_row<128>, kARSmemMax, row128_lim)) {
    attention_row<128><<<(unsigned)rows, kARThreads, row_sm, j->stream>>>(
        d_q, d_k, d_v, d_o, a->sq, a->skv, a->hq, a->hkv, a->causal, a->q_offset, a->scale);
    job_launched(j, "attention_row");
  } else {
    attention_kernel<<<(unsigned)rows, kAttThreads, 0, j->stream>>>(
        d_q, d_k, d_v, d_o, a->sq, a->skv, a->hq, a->hkv, a->d, a->causal, a->q_offset, a->scale);
    job_launched(j, "attention_kernel");
  }
  job_out_done(j, a->o, d_o, total);
}

} // namespace

/* ------------------------------------------------------------------ entry points */

#define HMX_CUDA_ENTRY(NAME, ARGS, BODY_CALL)                                           \
  extern "C" hmx_status hmx_cuda_##NAME(const ARGS *a) {                                \
    Job j;                                                                              \
    job_begin(&j, #NAME);                                                               \
    BODY_CALL;                                                                          \
    return job_end(&j);                                                                 \
  }                                                                                     \
  extern "C" hmx_status hmx_cuda_dev_##NAME(const ARGS *a, const hmx_device_call *c) {  \
    Job j;                                                                              \
    job_begin_device(&j, #NAME, c->stream);                                             \
    BODY_CALL;                                                                          \
    return job_end(&j);                                                                 \
  }

HMX_CUDA_ENTRY(rmsnorm, hmx_norm_args, norm_body(&j, a, 0))
HMX_CUDA_ENTRY(layernorm, hmx_norm_args, norm_body(&j, a, 1))
HMX_CUDA_ENTRY(rope, hmx_rope_args, rope_body(&j, a))
HMX_CUDA_ENTRY(gemm, hmx_gemm_args, gemm_body(&j, a))
HMX_CUDA_ENTRY(swiglu, hmx_swiglu_args, swiglu_body(&j, a))
HMX_CUDA_ENTRY(attention, hmx_attention_args, attention_body(&j, a))

/* Tiles whose guessed row maxima were wrong since the process started
 * (cuda/attention_maxguess.cuh): for tests and benchmarks; -1 on error. */
extern "C" long long hmx_cuda_attention_reruns(void) {
  unsigned long long n = 0;
  if (cudaMemcpyFromSymbol(&n, att_reruns, sizeof n) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return (long long)n;
}
