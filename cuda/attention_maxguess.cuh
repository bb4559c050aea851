/* The row maxima of an exact prefill, guessed on tensor cores and checked
 * (included by cuda/kernels.cu, inside its anonymous namespace, after the
 * cp.async helpers, cp_rows_async and tile_ready).
 *
 * docs/NUMERICS.md §attention needs the exact row maximum m before any
 * e = exp(s - m). attention_tiled used to find it by a first pass that
 * computes every score with the exact fma chain: a third of the prefill's
 * arithmetic, spent on one number a row. Here the scores are only ranked:
 *
 *   1. attention_max_guess (this file): S = (scale Q) Kᵀ on TF32 tensor
 *      cores (mma.sync m16n8k8, operands truncated to TF32, f32
 *      accumulators); per row the two visible keys with the largest of these
 *      approximate scores; then each of the two again by the exact chain
 *      (+0, __fmaf_rn over d in order, __fmul_rn by scale: the same bits as
 *      attention_tiled's scores), and the guess g = their exact maximum.
 *   2. attention_tiled's pass 2 with m = g, keeping the exact maximum mx of
 *      the scores it computes anyway (every visible key, exact bits). Where
 *      some row of the tile has mx != g, the tile runs pass 2 again with
 *      m = mx, which is then the exact maximum by construction.
 *
 * So the bits never depend on the guess: a wrong guess costs one more pass
 * over that tile's keys, never a different result. g is the exact score of
 * a visible key, so g <= mx; it is wrong only where the true maximum ranked
 * third or lower in the approximate order (two keys within TF32's error of
 * the true maximum's score), or where scores are not finite (NaN never
 * wins either maximum; ±inf and overflow are caught by the same test).
 * g == mx as floats accepts -0 for +0, which §attention allows.
 *
 * HMX_CUDA_ATT_MAX (read per call): "exact" runs pass 1 as before (no
 * guess); "spoil" moves every guess one float down, so that every tile with
 * a visible key takes the second pass (the test of that path); anything
 * else, or unset, guesses. */

/* Tiles that ran pass 2 a second time (a guess was wrong) since the process
 * started: read by hmx_cuda_attention_reruns. */
__device__ unsigned long long att_reruns;

/* mma.sync m16n8k8, TF32 inputs (f32 bit patterns, not rounded to TF32
 * first: however the tensor core shortens them only moves the
 * approximation), f32 accumulators, c += a b. Fragment of lane
 * (g = lane / 4, t = lane % 4): a = A[g][t], A[g+8][t], A[g][t+4],
 * A[g+8][t+4]; b = B[t][g], B[t+4][g] (B is k x n); c = C[g][2t],
 * C[g][2t+1], C[g+8][2t], C[g+8][2t+1] (PTX ISA, "Matrix Fragments for
 * mma.m16n8k8"). */
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The two largest (v1 >= v2) of the values offered, with their keys (-1:
 * none yet). NaN never enters (`>`), as in the exact maximum. */
struct Top2 {
  float v1, v2;
  int j1, j2;
  __device__ __forceinline__ void offer(float v, int j) { /* selects, no branches */
    const bool above1 = v > v1, above2 = v > v2;
    v2 = above1 ? v1 : above2 ? v : v2;
    j2 = above1 ? j1 : above2 ? j : j2;
    v1 = above1 ? v : v1;
    j1 = above1 ? j : j1;
  }
};

/* Warps per block of attention_max_guess: 8 for D = 64 (128 query rows a
 * block, so each K tile read from L2 serves twice the rows of
 * attention_tiled's 64), 4 for D = 128 (its Q fragments take 64 registers
 * a thread: 8 warps would leave one block of 8 warps per SM). */
template <int D> __host__ __device__ constexpr int guess_warps() { return D == 64 ? 8 : 4; }

/* One block of guess_warps<D>() warps per (16 * warps query rows, head,
 * batch), longest rows first; warp w ranks rows 16w .. 16w+15 of the block
 * against their visible keys, in tiles of att_kt<D>() keys through shared
 * memory (double-buffered cp.async). Writes mg[(b * hq + h) * sq + i].
 *
 * The k index of the mma is d permuted within each 16 d (both operands the
 * same way, so the product is the same): in the two k-steps 2p and 2p+1,
 * lane t's "k = t" and "k = t + 4" are d = 16p + 4t + 2h and its successor
 * (h = 0, 1), so one 16-byte shared read gives a lane its B fragments of two
 * k-steps. Rows of Ks are padded to D + 16 floats: the 8 lanes of a quarter
 * warp (keys g and g + 1, four d groups t) then cover the 32 banks once.
 * Q is multiplied by scale once (an approximation: only the ranking uses it). */
template <int D>
__global__ void __launch_bounds__(32 * guess_warps<D>())
attention_max_guess(const float *__restrict__ q, const float *__restrict__ k, float *__restrict__ mg,
                    int64_t sq, int64_t skv, int64_t hq, int64_t hkv, int causal, int64_t q_offset,
                    float scale, int spoil) {
  constexpr int W = guess_warps<D>(), NTH = 32 * W, RQ = 16 * W;
  constexpr int KT = att_kt<D>(), NT = KT / 8, KP = D / 16, LD = D + 16;
  __shared__ __align__(16) float Ks[2][KT][LD];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32, g = lane / 4, tq = lane % 4;
  const int64_t qt = (int64_t)gridDim.x - 1 - blockIdx.x; /* the longest rows first */
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t i0 = qt * RQ;
  const int nq = (int)(sq - i0 < RQ ? sq - i0 : RQ);
  const int64_t kvh = h / (hq / hkv), ldq = hq * D, ldk = hkv * D;
  const float *qb = q + ((b * sq + i0) * hq + h) * D;
  const float *kb = k + (b * skv * hkv + kvh) * D;
  auto nvis = [&](int r) -> int64_t {
    if (r >= nq) return 0;
    return causal ? q_offset + i0 + r + 1 : skv;
  };
  const int64_t ntiles = (nvis(nq - 1) + KT - 1) / KT;
  /* this lane's two rows (local) and how many keys each sees */
  const int r0 = 16 * warp + g, r1 = r0 + 8;
  const int64_t n0 = nvis(r0), n1 = nvis(r1);
  const int64_t n_lo = nvis(16 * warp); /* the warp's fewest visible keys */
  const int64_t n_hi = nvis(16 * warp + 15 < nq ? 16 * warp + 15 : nq - 1); /* and most */

  unsigned a[2 * KP][4]; /* scale * Q, fragments of the warp's 16 rows, all of d */
#pragma unroll
  for (int p = 0; p < KP; p++) {
    const int d = 16 * p + 4 * tq;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f), y = x;
    if (r0 < nq) x = __ldg(reinterpret_cast<const float4 *>(qb + r0 * ldq + d));
    if (r1 < nq) y = __ldg(reinterpret_cast<const float4 *>(qb + r1 * ldq + d));
    a[2 * p][0] = __float_as_uint(__fmul_rn(x.x, scale));
    a[2 * p][1] = __float_as_uint(__fmul_rn(y.x, scale));
    a[2 * p][2] = __float_as_uint(__fmul_rn(x.y, scale));
    a[2 * p][3] = __float_as_uint(__fmul_rn(y.y, scale));
    a[2 * p + 1][0] = __float_as_uint(__fmul_rn(x.z, scale));
    a[2 * p + 1][1] = __float_as_uint(__fmul_rn(y.z, scale));
    a[2 * p + 1][2] = __float_as_uint(__fmul_rn(x.w, scale));
    a[2 * p + 1][3] = __float_as_uint(__fmul_rn(y.w, scale));
  }
  auto load_k = [&](int64_t j0, int buf) {
    cp_rows_async<KT, D, LD, NTH>(Ks[buf], kb, nullptr, nullptr, false, j0, skv, ldk, t);
    cp_async_commit();
  };

  const float ninf = -__uint_as_float(0x7F800000u);
  Top2 top0 = {ninf, ninf, -1, -1}, top1 = {ninf, ninf, -1, -1}; /* rows r0, r1 */
  if (ntiles > 0) load_k(0, 0);
  for (int64_t kt = 0; kt < ntiles; kt++) {
    const int64_t j0 = kt * KT;
    const int buf = tile_ready(kt, ntiles, [&](int64_t k1, int b1) { load_k(k1 * KT, b1); });
    const bool full = j0 + KT <= n_lo; /* every key of the tile visible to the warp */
    if (16 * warp < nq && j0 < n_hi) { /* warp-uniform: mma.sync takes all 32 lanes */
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        float c[4] = {0.f, 0.f, 0.f, 0.f};
        const float *kr = &Ks[buf][8 * nt + g][4 * tq];
#pragma unroll
        for (int p = 0; p < KP; p++) {
          const float4 x = *reinterpret_cast<const float4 *>(kr + 16 * p);
          mma_tf32(c, a[2 * p], __float_as_uint(x.x), __float_as_uint(x.y));
          mma_tf32(c, a[2 * p + 1], __float_as_uint(x.z), __float_as_uint(x.w));
        }
        const int j = (int)j0 + 8 * nt + 2 * tq;
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int jj = j + (e & 1);
          const int64_t n = e < 2 ? n0 : n1;
          if (full || jj < n) (e < 2 ? top0 : top1).offer(c[e], jj);
        }
      }
    }
    __syncthreads(); /* Ks[buf] free for tile kt + 2 */
  }
  /* the quad's four lanes hold disjoint keys of the same two rows: merge */
  auto merge = [](Top2 &tp) {
#pragma unroll
    for (int off = 1; off < 4; off *= 2) {
      const float v1 = __shfl_xor_sync(0xffffffffu, tp.v1, off);
      const float v2 = __shfl_xor_sync(0xffffffffu, tp.v2, off);
      const int j1 = __shfl_xor_sync(0xffffffffu, tp.j1, off);
      const int j2 = __shfl_xor_sync(0xffffffffu, tp.j2, off);
      if (j1 >= 0) tp.offer(v1, j1);
      if (j2 >= 0) tp.offer(v2, j2);
    }
  };
  merge(top0);
  merge(top1);
  /* lane tq scores candidate tq / 2 of row tq % 2 by the exact chain */
  const int rr = tq % 2, row = rr ? r1 : r0;
  const int jc = rr ? (tq / 2 ? top1.j2 : top1.j1) : (tq / 2 ? top0.j2 : top0.j1);
  float s = ninf;
  if (jc >= 0 && row < nq) { /* (rows past Sq: offered keys of full tiles, no Q row) */
    const float4 *qr = reinterpret_cast<const float4 *>(qb + row * ldq);
    const float4 *kr = reinterpret_cast<const float4 *>(kb + jc * ldk);
    float dot = 0.0f;
#pragma unroll 4
    for (int d4 = 0; d4 < D / 4; d4++) {
      const float4 x = __ldg(qr + d4), y = __ldg(kr + d4);
      dot = __fmaf_rn(x.x, y.x, dot);
      dot = __fmaf_rn(x.y, y.y, dot);
      dot = __fmaf_rn(x.z, y.z, dot);
      dot = __fmaf_rn(x.w, y.w, dot);
    }
    s = __fmul_rn(dot, scale);
  }
  const float s2 = __shfl_xor_sync(0xffffffffu, s, 2); /* the row's other candidate */
  float m = ninf;
  if (s > m) m = s;
  if (s2 > m) m = s2;
  if (spoil && m == m) m = nextafterf(m, ninf);
  if (tq < 2 && row < nq) mg[(b * hq + h) * sq + i0 + row] = m;
}
