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
#include "job.cuh"

#include <stdint.h>
#include <string.h>

extern "C" {
#include "canon.h"
#include "ref.h"
}

/* ------------------------------------------------------------------ probe */

/* cudaGetDeviceCount once; no GPU (or no driver) is 0, never an error. The
 * race of two first calls is benign: both store the same value. */
static volatile int probe_cache = -1;

extern "C" int hmx_cuda_probe(void) {
  int v = probe_cache;
  if (v < 0) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError(); /* clear it: no device is not an error */
      count = 0;
    }
    v = count > 0;
    probe_cache = v;
  }
  return v;
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
 * elementwise part uses the whole block. */
constexpr int kNormThreads = 256;

__device__ float lane_tree(float *l) { /* l[16] in shared memory, thread 0 only */
  for (int half = 8; half >= 1; half /= 2)
    for (int k = 0; k < half; k++) l[k] = __fadd_rn(l[k], l[k + half]);
  return l[0];
}

/* x and y may be one buffer (in place, device memory): no __restrict__ on them */
__global__ void rmsnorm_kernel(const float *x, const float *__restrict__ w, float *y, int64_t n,
                               float fn, float eps) {
  __shared__ float lanes[16];
  __shared__ float inv_s;
  const float *xr = x + (int64_t)blockIdx.x * n;
  float *yr = y + (int64_t)blockIdx.x * n;
  int t = threadIdx.x;
  if (t < 16) {
    float l = 0.0f;
    for (int64_t i = t; i < n; i += 16) l = __fmaf_rn(xr[i], xr[i], l);
    lanes[t] = l;
  }
  __syncthreads();
  if (t == 0) {
    float ms = __fdiv_rn(lane_tree(lanes), fn);
    inv_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(ms, eps)));
  }
  __syncthreads();
  float inv = inv_s;
  for (int64_t i = t; i < n; i += blockDim.x) yr[i] = __fmul_rn(__fmul_rn(xr[i], inv), w[i]);
}

__global__ void layernorm_kernel(const float *x, const float *__restrict__ w,
                                 const float *__restrict__ bias, float *y, int64_t n,
                                 float fn, float eps) {
  __shared__ float lanes[16];
  __shared__ float mean_s, inv_s;
  const float *xr = x + (int64_t)blockIdx.x * n;
  float *yr = y + (int64_t)blockIdx.x * n;
  int t = threadIdx.x;
  if (t < 16) {
    float l = 0.0f;
    for (int64_t i = t; i < n; i += 16) l = __fadd_rn(l, xr[i]);
    lanes[t] = l;
  }
  __syncthreads();
  if (t == 0) mean_s = __fdiv_rn(lane_tree(lanes), fn);
  __syncthreads();
  float mean = mean_s;
  if (t < 16) {
    float l = 0.0f;
    for (int64_t i = t; i < n; i += 16) {
      float d = __fsub_rn(xr[i], mean);
      l = __fmaf_rn(d, d, l);
    }
    lanes[t] = l;
  }
  __syncthreads();
  if (t == 0) {
    float var = __fdiv_rn(lane_tree(lanes), fn);
    inv_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(var, eps)));
  }
  __syncthreads();
  float inv = inv_s;
  for (int64_t i = t; i < n; i += blockDim.x) {
    float z = __fmul_rn(__fsub_rn(xr[i], mean), inv);
    yr[i] = bias ? __fmaf_rn(z, w[i], bias[i]) : __fmul_rn(z, w[i]);
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

/* ------------------------------------------------------------------ exp, silu */

/* docs/NUMERICS.md §E: hmx_expf (src/canon_exp.c) op for op. Every rounding is
 * its _rn intrinsic, the 2^n bits are built on the bits of z, and the selects
 * of lines 27-31 come last, in order, with ordered compares (NaN test last).
 * -ftz=false keeps the subnormal path (lines 25-26) exact. */
__device__ __forceinline__ float dev_expf(float x) {
  const float z = __fmaf_rn(x, 0x1.715476p+0f, 0x1.8p+23f); /*  1 */
  const float n = __fsub_rn(z, 0x1.8p+23f);                  /*  2 */
  const float r1 = __fmaf_rn(n, -0x1.62e43p-1f, x);          /*  3 */
  const float rl = __fmul_rn(n, 0x1.05c61p-29f);             /*  4 */
  const float r = __fadd_rn(r1, rl);                         /*  5 */
  float q = __fmaf_rn(0x1.6ac74ep-10f, r, 0x1.123dep-7f);    /*  6 */
  q = __fmaf_rn(q, r, 0x1.555858p-5f);                       /*  7 */
  q = __fmaf_rn(q, r, 0x1.55548cp-3f);                       /*  8 */
  q = __fmaf_rn(q, r, 0x1.fffffcp-2f);                       /*  9 */
  const float m = __fmul_rn(__fadd_rn(r1, r1), rl);          /* 10 */
  const float r2 = __fmaf_rn(r1, r1, m);                     /* 11 */
  const float c = __fmaf_rn(r2, q, rl);                      /* 12 */
  const float w = __fadd_rn(1.0f, r1);                       /* 13 */
  const float wm1 = __fsub_rn(w, 1.0f);                      /* 14 */
  const float e1 = __fsub_rn(r1, wm1);                       /* 15 */
  const float cc = __fadd_rn(e1, c);                         /* 16 */
  const float p = __fadd_rn(w, cc);                          /* 17 */
  const float t = __fadd_rn(wm1, cc);                        /* 18 */
  const unsigned kb = __float_as_uint(z) - 0x4B3FFF00u;      /* 19 */
  const unsigned k1 = kb >> 1;                               /* 20 */
  const unsigned k2 = kb - k1;                               /* 21 */
  const float a = __uint_as_float((k1 - 1u) << 23);          /* 22 */
  const float b = __uint_as_float((k2 - 1u) << 23);          /* 23 */
  const float yn = __fmul_rn(__fmul_rn(p, a), b);            /* 24 */
  const float s = __fmul_rn(a, b);                           /* 25 */
  const float ys = __fmaf_rn(s, t, s);                       /* 26 */
  float y = (yn < 0x1p-126f) ? ys : yn;                      /* 27 */
  y = (n < -149.0f) ? 0x1p-149f : y;                         /* 28 */
  y = (x > 0x1.62e42ep+6f) ? __uint_as_float(0x7F800000u) : y; /* 29: +inf */
  y = (x < -0x1.9fe368p+6f) ? 0.0f : y;                      /* 30 */
  y = (x != x) ? __fadd_rn(x, x) : y;                        /* 31 */
  return y;
}

/* silu(x) = x / (1 + exp(-x)): negate (exact), exp, one add, one division. */
__device__ __forceinline__ float dev_siluf(float x) {
  return __fdiv_rn(x, __fadd_rn(1.0f, dev_expf(-x)));
}

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

/* ------------------------------------------------------------------ swiglu */

/* g = silu(a) * b elementwise, in place in a. */
__global__ void swiglu_gate(float *__restrict__ a, const float *__restrict__ b, int64_t total) {
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x)
    a[idx] = __fmul_rn(dev_siluf(a[idx]), b[idx]);
}

/* ------------------------------------------------------------------ gemm */

/* docs/NUMERICS.md §gemm: SIMT, a 64x64 tile of C per block, 4x4 outputs per
 * thread (rows ty + 16r, columns tx + 16c), K through shared memory 16 at a
 * time. Each accumulator starts from bias[j] (or +0) and takes one __fmaf_rn
 * per k, k = 0 .. K-1 in order, carried from tile to tile; the last K tile
 * stops at K (an extra fma with zeros would turn -0 into +0). No split-K, no
 * atomics, no tensor cores. */
constexpr int kTile = 64, kTk = 16;

__global__ void __launch_bounds__(256)
gemm_kernel(const float *__restrict__ A, const float *__restrict__ B,
            const float *__restrict__ bias, float *__restrict__ C, int64_t M, int64_t N,
            int64_t K, int trans_b) {
  __shared__ float As[kTk][kTile + 1];
  __shared__ float Bs[kTk][kTile + 1];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int64_t row0 = (int64_t)blockIdx.x * kTile, col0 = (int64_t)blockIdx.y * kTile;
  float acc[4][4];
#pragma unroll
  for (int c = 0; c < 4; c++) {
    int64_t col = col0 + tx + 16 * c;
    float b0 = (bias && col < N) ? bias[col] : 0.0f;
#pragma unroll
    for (int r = 0; r < 4; r++) acc[r][c] = b0;
  }
  for (int64_t k0 = 0; k0 < K; k0 += kTk) {
    for (int e = threadIdx.x; e < kTile * kTk; e += 256) {
      /* A tile: consecutive threads read consecutive k of one row */
      int kk = e % kTk, rr = e / kTk;
      int64_t gr = row0 + rr, gk = k0 + kk;
      As[kk][rr] = (gr < M && gk < K) ? A[gr * K + gk] : 0.0f;
      int64_t gc;
      if (trans_b) { /* B[N][K]: consecutive threads read consecutive k */
        gc = col0 + rr;
        Bs[kk][rr] = (gc < N && gk < K) ? B[gc * K + gk] : 0.0f;
      } else { /* B[K][N]: consecutive threads read consecutive columns */
        int cc = e % kTile, k2 = e / kTile;
        gc = col0 + cc;
        gk = k0 + k2;
        Bs[k2][cc] = (gc < N && gk < K) ? B[gk * N + gc] : 0.0f;
      }
    }
    __syncthreads();
    int kmax = (int)(K - k0 < kTk ? K - k0 : kTk);
    for (int kk = 0; kk < kmax; kk++) {
      float a[4], b[4];
#pragma unroll
      for (int r = 0; r < 4; r++) a[r] = As[kk][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < 4; c++) b[c] = Bs[kk][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = __fmaf_rn(a[r], b[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 4; r++) {
    int64_t gr = row0 + ty + 16 * r;
    if (gr >= M) continue;
#pragma unroll
    for (int c = 0; c < 4; c++) {
      int64_t gc = col0 + tx + 16 * c;
      if (gc < N) C[gr * N + gc] = acc[r][c];
    }
  }
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
  const float *d_c = job_upload(j, a->cos_tab, tab); /* host memory in both modes */
  const float *d_s = job_upload(j, a->sin_tab, tab);
  float *d_y = job_out(j, a->y, total);
  if (j->st != HMX_OK) return;
  /* in place is safe: each pair is read and written by one thread */
  rope_kernel<<<(unsigned)rows, 64, 0, j->stream>>>(d_x, d_y, d_c, d_s, a->h, a->d, a->rot_dim,
                                                   a->style == HMX_ROPE_HALF);
  job_launched(j, "rope_kernel");
  job_out_done(j, a->y, d_y, total);
}

/* C[M][N] = A[M][K] * B (+ bias) on device buffers, by gemm_kernel: each
 * output from bias[j] or +0, one __fmaf_rn per k in increasing k. */
void gemm_device(Job *j, const float *d_a, const float *d_b, const float *d_bias, float *d_c,
                 int64_t m, int64_t n, int64_t k, int trans_b) {
  if (j->st != HMX_OK || m <= 0 || n <= 0) return;
  const int64_t mt = (m + kTile - 1) / kTile, nt = (n + kTile - 1) / kTile;
  if (mt > INT32_MAX || nt > 65535) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: %lld x %lld is too large", j->op,
                     (long long)m, (long long)n);
    return;
  }
  dim3 grid((unsigned)mt, (unsigned)nt);
  gemm_kernel<<<grid, 256, 0, j->stream>>>(d_a, d_b, d_bias, d_c, m, n, k, trans_b);
  job_launched(j, "gemm_kernel");
}

void gemm_body(Job *j, const hmx_gemm_args *g) {
  if (j->st != HMX_OK || g->m <= 0 || g->n <= 0) return;
  const float *d_a = job_in(j, g->a, g->m * g->k);
  const float *d_b = job_in(j, g->b, g->k * g->n);
  const float *d_bias = job_in(j, g->bias, g->n);
  float *d_c = job_out(j, g->c, g->m * g->n);
  if (j->st != HMX_OK) return;
  gemm_device(j, d_a, d_b, d_bias, d_c, g->m, g->n, g->k, g->trans_b);
  job_out_done(j, g->c, d_c, g->m * g->n);
}

/* docs/NUMERICS.md §swiglu. a = x W1 and b = x W3 ([T][h]) are two gemms
 * (a_u, b_u sequential over p from +0), g = silu(a) * b in place, and
 * y = g W2 a third gemm: y_j from +0, one fma per u in increasing u, which is
 * ref's order for every block size (`block` only bounds ref's memory).
 * Scratch: 2*T*h floats (cudaMallocAsync in device mode). */
void swiglu_body(Job *j, const hmx_swiglu_args *s) {
  if (j->st != HMX_OK || s->t <= 0 || s->d_out <= 0) return;
  const int64_t th = s->t * s->h;
  const float *d_x = job_in(j, s->x, s->t * s->d);
  const float *d_w1 = job_in(j, s->w1, s->d * s->h);
  const float *d_w3 = job_in(j, s->w3, s->d * s->h);
  const float *d_w2 = job_in(j, s->w2, s->h * s->d_out);
  float *d_a = job_alloc(j, th);
  float *d_b = job_alloc(j, th);
  float *d_y = job_out(j, s->y, s->t * s->d_out);
  if (j->st != HMX_OK) return;
  gemm_device(j, d_x, d_w1, NULL, d_a, s->t, s->h, s->d, 0);
  gemm_device(j, d_x, d_w3, NULL, d_b, s->t, s->h, s->d, 0);
  if (j->st == HMX_OK && th > 0) {
    swiglu_gate<<<grid_for(th, 256), 256, 0, j->stream>>>(d_a, d_b, th);
    job_launched(j, "swiglu_gate");
  }
  gemm_device(j, d_a, d_w2, NULL, d_y, s->t, s->d_out, s->h, 0); /* h = 0: y = +0 */
  job_out_done(j, s->y, d_y, s->t * s->d_out);
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
  const float *d_k = job_in(j, a->k, kv);
  const float *d_v = job_in(j, a->v, kv);
  float *d_o = job_out(j, a->o, total);
  if (j->st != HMX_OK) return;
  attention_kernel<<<(unsigned)rows, kAttThreads, 0, j->stream>>>(
      d_q, d_k, d_v, d_o, a->sq, a->skv, a->hq, a->hkv, a->d, a->causal, a->q_offset, a->scale);
  job_launched(j, "attention_kernel");
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
