/* The cuda backend's fast-tier attention (docs/NUMERICS.md, "Fast tier"):
 * a flash-attention kernel on TF32 tensor cores (nvcuda::wmma, m16n16k8,
 * f32 accumulators), with an online (blocked) softmax.
 *
 * One block of four warps per (64-query tile, query head, batch); each warp
 * owns 16 query rows. Per tile of 64 keys (the rescaling step of the bound):
 *   S = Q K^T on tensor cores (q and k rounded to TF32, f32 sums), stored
 *     to shared memory;
 *   per row: s = S * scale, keys the row may not see set to -inf, the
 *     running max m, p = exp(s - m) by the exact tier's exp (dev_expf, so
 *     every weight is within 1 ulp of exp of its computed argument), the
 *     running sum l, and the row of the output accumulator O (f32, shared
 *     memory) rescaled by exp(m_old - m_new);
 *   O += P V on tensor cores (p and v rounded to TF32, f32 sums).
 * At the end o = O / l, one IEEE division per element.
 *
 * Why O lives in shared memory: wmma's accumulator fragments have no
 * documented element-to-row mapping, so a per-row rescale cannot be applied
 * to them in registers; loading and storing the warp's 16 x D slice once per
 * key tile costs far less than the two products.
 *
 * Keys that a row does not see get p = 0 exactly. A tensor-core product
 * 0 * v is NaN when v is inf or NaN, which the exact result (built from the
 * visible keys only) need not be; so when a V tile holds a non-finite value
 * (one __syncthreads_or per tile tells), that tile's P V runs on the CUDA
 * cores over the visible keys only.
 *
 * Used for D = 64 and 128 with Sq >= 16 and 16-byte aligned q, k, v
 * (fast_eligible below); decode and everything else runs the exact kernels
 * (cuda/kernels.cu: the decode kernel is memory-bound and already at 81-87%
 * of the copy bandwidth), whose result obeys the same bound. */
#include <mma.h>

#include "cuda_kernels.h"
#include "dev_math.cuh"
#include "job.cuh"

extern "C" {
#include "fast.h"
}

using namespace hmx_cuda;
using namespace nvcuda;

namespace {

constexpr int kFQ = 64;       /* query rows per block, 16 per warp */
constexpr int kFK = 64;       /* keys per tile: one rescaling step */
constexpr int kFThreads = 128; /* four warps */

/* Shared memory, in floats. Row strides padded by 4 floats: a multiple of 4
 * as wmma wants, and rows 4 banks apart so a warp's 16 rows spread over the
 * banks; every fragment pointer stays 32-byte aligned. */
template <int D> struct FaLayout {
  /* D = 128: K and V take turns in one buffer (V is loaded once the scores
   * are done), so that two blocks fit in an SM's shared memory (85 KB each
   * instead of 119 KB); measured on the H100: see docs/CUDA.md */
  static constexpr bool share_kv = D > 64;
  static constexpr int ldk = D + 4;   /* K and V tiles: [key][d] */
  static constexpr int lds = kFK + 4; /* S / P: [row][key] */
  static constexpr int ldo = D + 4;   /* O: [row][d] */
  static constexpr int k_off = 0;
  static constexpr int v_off = share_kv ? k_off : k_off + kFK * ldk;
  static constexpr int s_off = v_off + kFK * ldk;
  static constexpr int o_off = s_off + kFQ * lds;
  static constexpr int l_off = o_off + kFQ * ldo;
  static constexpr size_t bytes = (size_t)(l_off + kFQ) * sizeof(float);
};

template <typename Frag> __device__ __forceinline__ void to_tf32(Frag &f) {
  for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
}

/* One tile of keys k0 .. k0 + 63 of K or V into dst ([key][d], stride ldk),
 * keys from kend on zero. Returns whether a loaded value is inf or NaN. */
template <int D>
__device__ __forceinline__ int load_tile(float *dst, const float *src, int64_t k0, int64_t kend,
                                         int64_t stride) {
  int bad = 0;
  for (int f = threadIdx.x; f < kFK * D / 4; f += kFThreads) {
    const int rr = f / (D / 4), c4 = f % (D / 4);
    const int64_t j = k0 + rr;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    if (j < kend) x = __ldg(reinterpret_cast<const float4 *>(src + j * stride) + c4);
    bad |= !(isfinite(x.x) && isfinite(x.y) && isfinite(x.z) && isfinite(x.w));
    *reinterpret_cast<float4 *>(dst + rr * FaLayout<D>::ldk + c4 * 4) = x;
  }
  return bad;
}

template <int D>
__global__ void __launch_bounds__(kFThreads)
fast_attention_tc(const float *__restrict__ q, const float *__restrict__ k,
                  const float *__restrict__ v, float *__restrict__ o, int sq, int skv, int hq,
                  int hkv, int causal, int64_t q_offset, float scale) {
  using L = FaLayout<D>;
  extern __shared__ __align__(128) float sm[];
  float *Ks = sm + L::k_off, *Vs = sm + L::v_off;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float *Sw = sm + L::s_off + warp * 16 * L::lds; /* this warp's 16 rows */
  float *Ow = sm + L::o_off + warp * 16 * L::ldo;
  float *lw = sm + L::l_off + warp * 16;
  /* longest rows first: with causal masking the last query tiles see the most keys */
  const int qt = (int)gridDim.x - 1 - (int)blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int g = h / (hq / hkv), q0 = qt * kFQ;
  const int64_t qstride = (int64_t)hq * D, kstride = (int64_t)hkv * D;
  const float *qb = q + ((int64_t)b * sq * hq + h) * D;
  const float *kb = k + ((int64_t)b * skv * hkv + g) * D;
  const float *vb = v + ((int64_t)b * skv * hkv + g) * D;

  /* the warp's 16 query rows through Ow (rows past Sq are zero), into
   * TF32 fragments kept in registers for the whole key loop */
  for (int f = lane; f < 16 * D / 4; f += 32) {
    const int r = f / (D / 4), c4 = f % (D / 4), qi = q0 + warp * 16 + r;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    if (qi < sq) x = __ldg(reinterpret_cast<const float4 *>(qb + qi * qstride) + c4);
    *reinterpret_cast<float4 *>(Ow + r * L::ldo + c4 * 4) = x;
  }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> qf[D / 8];
#pragma unroll
  for (int ks = 0; ks < D / 8; ks++) {
    wmma::load_matrix_sync(qf[ks], Ow + ks * 8, L::ldo);
    to_tf32(qf[ks]);
  }
  __syncwarp();
  for (int f = lane; f < 16 * L::ldo; f += 32) Ow[f] = 0.f;

  /* lane (r, half): row r of the warp, half of its keys and channels; the
   * rotation spreads the 32 lanes' shared-memory accesses over 32 banks */
  const int r = lane & 15, half = lane >> 4, rot = 2 * (r >> 3) + half;
  const int64_t qrow = q0 + warp * 16 + r;
  const int64_t lim = causal ? (q_offset + qrow + 1 < skv ? q_offset + qrow + 1 : skv) : skv;
  const int qlast = (q0 + kFQ < sq ? q0 + kFQ : sq) - 1;
  const int64_t kend = causal ? (q_offset + qlast + 1 < skv ? q_offset + qlast + 1 : skv) : skv;
  float m = -INFINITY, l = 0.f;

  for (int64_t k0 = 0; k0 < kend; k0 += kFK) {
    /* K and V tiles (keys past kend zero); is any V value inf or NaN? */
    int bad = 0;
    load_tile<D>(Ks, kb, k0, kend, kstride);
    if (!L::share_kv) bad = load_tile<D>(Vs, vb, k0, kend, kstride);
    bad = __syncthreads_or(bad);

    /* S = Q K^T: K [key][d] read as the column-major d x key operand */
#pragma unroll
    for (int nt = 0; nt < kFK / 16; nt++) {
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int ks = 0; ks < D / 8; ks++) {
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, Ks + nt * 16 * L::ldk + ks * 8, L::ldk);
        to_tf32(kf);
        wmma::mma_sync(acc, qf[ks], kf, acc);
      }
      wmma::store_matrix_sync(Sw + nt * 16, acc, L::lds, wmma::mem_row_major);
    }
    __syncwarp();

    /* the online softmax of row r over this tile (the lane pair r, r + 16) */
    float s[32], tmax = -INFINITY;
#pragma unroll
    for (int i = 0; i < 32; i++) {
      const int c = half * 32 + ((i + rot) & 31);
      const float x = __fmul_rn(Sw[r * L::lds + c], scale);
      s[i] = k0 + c < lim ? x : -INFINITY;
      tmax = s[i] > tmax ? s[i] : tmax;
    }
    const float omax = __shfl_xor_sync(0xffffffffu, tmax, 16);
    tmax = omax > tmax ? omax : tmax;
    const float mnew = tmax > m ? tmax : m;
    float alpha = 1.f, psum = 0.f;
    if (mnew != -INFINITY) { /* else the row has seen no key yet: p = 0 */
      alpha = dev_expf(__fsub_rn(m, mnew)); /* m = -inf: 0 */
#pragma unroll
      for (int i = 0; i < 32; i++) {
        s[i] = s[i] == -INFINITY ? 0.f : dev_expf(__fsub_rn(s[i], mnew));
        psum = __fadd_rn(psum, s[i]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; i++) s[i] = 0.f;
    }
#pragma unroll
    for (int i = 0; i < 32; i++) Sw[r * L::lds + half * 32 + ((i + rot) & 31)] = s[i];
    psum = __fadd_rn(psum, __shfl_xor_sync(0xffffffffu, psum, 16));
    l = __fmaf_rn(l, alpha, psum);
    m = mnew;
    if (alpha != 1.f)
      for (int i = 0; i < D / 2; i++) {
        float *x = Ow + r * L::ldo + half * (D / 2) + ((i + rot) & (D / 2 - 1));
        *x = __fmul_rn(*x, alpha);
      }
    __syncwarp();
    if (L::share_kv) { /* every warp is done with K: V into its buffer */
      __syncthreads();
      bad = __syncthreads_or(load_tile<D>(Vs, vb, k0, kend, kstride));
    }

    if (!bad) { /* O += P V on tensor cores */
#pragma unroll
      for (int dn = 0; dn < D / 16; dn++) {
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
        wmma::load_matrix_sync(acc, Ow + dn * 16, L::ldo, wmma::mem_row_major);
#pragma unroll
        for (int ks = 0; ks < kFK / 8; ks++) {
          wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> pf;
          wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> vf;
          wmma::load_matrix_sync(pf, Sw + ks * 8, L::lds);
          wmma::load_matrix_sync(vf, Vs + ks * 8 * L::ldk + dn * 16, L::ldk);
          to_tf32(pf);
          to_tf32(vf);
          wmma::mma_sync(acc, pf, vf, acc);
        }
        wmma::store_matrix_sync(Ow + dn * 16, acc, L::ldo, wmma::mem_row_major);
      }
    } else { /* a non-finite v: the visible keys only, on the CUDA cores */
      const int nvis = lim - k0 < kFK ? (int)(lim - k0) : kFK;
      for (int i = 0; i < D / 2; i++) {
        const int c = half * (D / 2) + i;
        float acc = Ow[r * L::ldo + c];
        for (int jj = 0; jj < nvis; jj++)
          acc = __fmaf_rn(Sw[r * L::lds + jj], Vs[jj * L::ldk + c], acc);
        Ow[r * L::ldo + c] = acc;
      }
    }
    __syncthreads(); /* the next tile overwrites K and V */
  }

  /* o = O / l, a whole warp per row so the stores are coalesced */
  if (half == 0) lw[r] = l;
  __syncwarp();
  for (int rr = 0; rr < 16; rr++) {
    const int qi = q0 + warp * 16 + rr;
    if (qi >= sq) break;
    const float lr = lw[rr];
    float *orow = o + ((int64_t)b * sq * hq + (int64_t)qi * hq + h) * D;
    for (int c = lane; c < D; c += 32) orow[c] = __fdiv_rn(Ow[rr * L::ldo + c], lr);
  }
}

/* The dynamic shared memory above 48 KB, asked once per kernel and device
 * (a refusal leaves the exact kernel to run). */
template <int D> int fa_smem_ok(void) {
  static volatile long long granted[kDeviceSlots];
  return FaLayout<D>::bytes <= att_smem_limit(fast_attention_tc<D>, FaLayout<D>::bytes, granted);
}

int fa_shape_ok(const hmx_attention_args *a) {
  return (a->d == 64 || a->d == 128) && a->sq >= 16 && a->sq <= INT32_MAX &&
         a->skv <= INT32_MAX && a->hq <= 65535 && a->b <= 65535 && a->hkv > 0 &&
         a->hq % a->hkv == 0 && (a->d == 64 ? fa_smem_ok<64>() : fa_smem_ok<128>());
}

void fa_body(Job *j, const hmx_attention_args *a) {
  const int64_t total = a->b * a->sq * a->hq * a->d, kv = a->b * a->skv * a->hkv * a->d;
  if (j->st != HMX_OK || total <= 0) return;
  const float *d_q = job_in(j, a->q, total);
  const float *d_k = job_in(j, a->k, kv);
  const float *d_v = job_in(j, a->v, kv);
  float *d_o = job_out(j, a->o, total);
  if (j->st != HMX_OK) return;
  dim3 grid((unsigned)((a->sq + kFQ - 1) / kFQ), (unsigned)a->hq, (unsigned)a->b);
  if (a->d == 64)
    fast_attention_tc<64><<<grid, kFThreads, FaLayout<64>::bytes, j->stream>>>(
        d_q, d_k, d_v, d_o, (int)a->sq, (int)a->skv, (int)a->hq, (int)a->hkv, a->causal,
        a->q_offset, a->scale);
  else
    fast_attention_tc<128><<<grid, kFThreads, FaLayout<128>::bytes, j->stream>>>(
        d_q, d_k, d_v, d_o, (int)a->sq, (int)a->skv, (int)a->hq, (int)a->hkv, a->causal,
        a->q_offset, a->scale);
  job_launched(j, "fast_attention_tc");
  job_out_done(j, a->o, d_o, total);
}

} // namespace

/* Host buffers: copied in and out like every host call of the backend. */
extern "C" hmx_status hmx_cuda_fast_attention(const hmx_attention_args *a) {
  if (!fa_shape_ok(a)) return hmx_cuda_attention(a);
  Job j;
  job_begin(&j, "attention");
  fa_body(&j, a);
  return job_end(&j);
}

/* Device buffers on c->stream; the float4 loads need 16-byte aligned q, k, v. */
extern "C" hmx_status hmx_cuda_fast_dev_attention(const hmx_attention_args *a,
                                                  const hmx_device_call *c) {
  if (!fa_shape_ok(a) || (((uintptr_t)a->q | (uintptr_t)a->k | (uintptr_t)a->v) & 15))
    return hmx_cuda_dev_attention(a, c);
  Job j;
  job_begin_device(&j, "attention", c->stream);
  fa_body(&j, a);
  return job_end(&j);
}
