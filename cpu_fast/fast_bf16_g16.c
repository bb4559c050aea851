/* Fast-tier gemm on bf16 weights in the G16 layout, with AVX512_BF16
 * (docs/NUMERICS.md "Fast tier", gemm with bf16 weights): c = a B^T for an
 * [N, K] matrix B stored as src/gemm_quant.h's G16 ([N/16][K][16], the
 * layout GGUF BF16 matrices are kept in), read in place.
 *
 * Why not oneDNN here: its bf16 matmul reads [N, K] rows at ~360 GFLOP/s
 * (2 threads, Zen 4), but given G16 as a blocked operand it fell to its
 * reference kernel, and as a batch of [K, 16] panels it ran at half speed;
 * converting the model to rows would cost the exact decode its G16 speed.
 *
 * The arithmetic: a is rounded to bf16 (to nearest even, fk->to_bf16); each
 * vdpbf16ps adds two exact bf16 products per lane to an f32 accumulator
 * (denormals flushed, as the bound allows), pairs of k in order. Elements k
 * and k + 1 of a G16 group are 32 adjacent bf16 (16 columns each): one
 * vpermw interleaves them into the (k, k + 1) pairs the instruction takes,
 * and one register of them serves every row of the tile.
 *
 * Tiles: 32 columns (two G16 groups) by 12 rows: 24 accumulators, 2 weight
 * registers and a broadcast of the row's (k, k + 1) pair. Threads split the
 * column tiles. Measured (M = 64, K = 576 .. 1536, N = 576 .. 1536, 2
 * threads, Zen 4, a scratch harness of this tile code): 400-418 GFLOP/s,
 * oneDNN's bf16 matmul on rows 316-390 (docs/results/model/session15-bf16-fast). */
#include "unroll.h"
#include "cpu_fast.h"
#include "internal.h"
#include "parallel.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define GROUP 16 /* HMX_QG, the G16 group */

/* The loops over a tile's R rows unroll fully (R is a constant), which keeps
 * the accumulators in registers: without it gcc -O2 kept them in memory
 * (137-167 GFLOP/s in the harness instead of 400-418). */
#define UNROLL HMX_UNROLL(16) /* src/unroll.h */

/* the permutation putting 16 columns' element k and element k + 1 (the low
 * and high halves of a 32-value load) side by side: lane j = (k + j % 2,
 * column j / 2) */
static __m512i pair_perm(void) {
  return _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                          22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
}

static inline __mmask16 first_lanes(int64_t n) {
  return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

/* Every row i < R of the tile: its (k, k + 1) pair at p, broadcast, times
 * the two groups' interleaved pairs w0, w1, into its accumulators. */
#define PAIR_STEP(R, w0, w1)                                                                   \
  UNROLL for (int i = 0; i < R; i++) {                                                         \
    int32_t pair;                                                                              \
    memcpy(&pair, a16 + i * lda + p, sizeof pair);                                             \
    const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);                                     \
    acc0[i] = _mm512_dpbf16_ps(acc0[i], av, (__m512bh)(w0));                                   \
    acc1[i] = _mm512_dpbf16_ps(acc1[i], av, (__m512bh)(w1));                                   \
  }

/* c[0..R)[0..ncols) = a16 rows (lda apart, K rounded up to even, zero
 * padded) times the groups g0 = b, g1 = b1 (K x 16 each). */
#define DEFINE_TILE(R)                                                                         \
  static void tile_##R(const uint16_t *a16, int64_t lda, const uint16_t *b0,                   \
                       const uint16_t *b1, int64_t k, float *c, int64_t ldc, int64_t ncols) {  \
    const __m512i perm = pair_perm();                                                          \
    __m512 acc0[R], acc1[R];                                                                   \
    UNROLL for (int i = 0; i < R; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();                \
    int64_t p = 0;                                                                             \
    for (; p + 2 <= k; p += 2) {                                                               \
      const __m512i w0 = _mm512_permutexvar_epi16(perm, _mm512_loadu_si512(b0 + p * GROUP));   \
      const __m512i w1 = _mm512_permutexvar_epi16(perm, _mm512_loadu_si512(b1 + p * GROUP));   \
      PAIR_STEP(R, w0, w1);                                                                    \
    }                                                                                          \
    if (p < k) { /* odd K: the last element alone (its pair's second half zero) */             \
      const __m512i h0 = _mm512_maskz_loadu_epi16(0xffffu, b0 + p * GROUP);                   \
      const __m512i h1 = _mm512_maskz_loadu_epi16(0xffffu, b1 + p * GROUP);                   \
      const __m512i w0 = _mm512_permutexvar_epi16(perm, h0);                                   \
      const __m512i w1 = _mm512_permutexvar_epi16(perm, h1);                                   \
      PAIR_STEP(R, w0, w1);                                                                    \
    }                                                                                          \
    const __mmask16 m0 = first_lanes(ncols), m1 = first_lanes(ncols > 16 ? ncols - 16 : 0);   \
    for (int i = 0; i < R; i++) {                                                              \
      _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);                                         \
      if (m1) _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);                            \
    }                                                                                          \
  }
DEFINE_TILE(12)
DEFINE_TILE(4)
DEFINE_TILE(1)

hmx_status hmx_fast_gemm_g16_bf16(const float *a, const uint16_t *b, float *c, int64_t m,
                                  int64_t n, int64_t k, int threads) {
  if (m == 0 || n == 0) return HMX_OK;
  if (k == 0) {
    memset(c, 0, (size_t)(m * n) * sizeof *c);
    return HMX_OK;
  }
  /* a in bf16, rows of K rounded up to even with a zero (the odd K's pair) */
  const int64_t lda = k + (k & 1);
  uint16_t *a16 = hmx_alloc_array((size_t)m * (size_t)lda, sizeof *a16);
  if (!a16) return hmx_fail(HMX_ERR_NO_MEMORY, "gemm (fast, bf16): out of memory");
  const hmx_fast_kernels *fk = hmx_fast_kernels_pick();
  for (int64_t i = 0; i < m; i++) {
    fk->to_bf16(a16 + i * lda, a + i * k, k);
    if (lda > k) a16[i * lda + k] = 0;
  }
  const int64_t tiles = (n + 2 * GROUP - 1) / (2 * GROUP);
  const int nt = hmx_thread_count(threads, tiles);
  HMX_OMP_FOR(nt)
  for (int64_t t = 0; t < tiles; t++) {
    const int64_t n0 = t * 2 * GROUP, ncols = n - n0 < 2 * GROUP ? n - n0 : 2 * GROUP;
    const uint16_t *b0 = b + n0 * k;
    /* a last tile of one group reads that group twice (the copy not stored) */
    const uint16_t *b1 = ncols > GROUP ? b0 + GROUP * k : b0;
    int64_t i = 0;
    for (; i + 12 <= m; i += 12) tile_12(a16 + i * lda, lda, b0, b1, k, c + i * n + n0, n, ncols);
    for (; i + 4 <= m; i += 4) tile_4(a16 + i * lda, lda, b0, b1, k, c + i * n + n0, n, ncols);
    for (; i < m; i++) tile_1(a16 + i * lda, lda, b0, b1, k, c + i * n + n0, n, ncols);
  }
  free(a16);
  return HMX_OK;
}

/* Tokens per chunk of the swiglu: the hidden activations of a chunk are
 * materialized (two [chunk, h] f32 buffers), as in fast_swiglu.c. */
#define SWIGLU_TOKENS 128

hmx_status hmx_fast_swiglu_g16_bf16(const hmx_swiglu_args *a) {
  if (a->wdt != HMX_BF16 || a->wlayout != HMX_QLAYOUT_G16 || !a->w1_16 || !a->w3_16 || !a->w2_16)
    return hmx_fail(HMX_ERR_INTERNAL, "swiglu (fast, bf16): weights must be bf16 in G16");
  if (a->t == 0 || a->d_out == 0) return HMX_OK;
  const int64_t rows = a->t < SWIGLU_TOKENS ? a->t : SWIGLU_TOKENS;
  float *g = hmx_alloc_array((size_t)rows * (size_t)(a->h ? a->h : 1), 2 * sizeof(float));
  if (!g) return hmx_fail(HMX_ERR_NO_MEMORY, "swiglu (fast, bf16): out of memory");
  float *u = g + rows * a->h;
  const hmx_fast_kernels *fk = hmx_fast_kernels_pick();
  hmx_status s = HMX_OK;
  for (int64_t t0 = 0; t0 < a->t && s == HMX_OK; t0 += rows) {
    const int64_t n = a->t - t0 < rows ? a->t - t0 : rows;
    const float *x = a->x + t0 * a->d;
    /* W1^T and W3^T are the [h, d] G16 matrices, W2^T the [d_out, h] one */
    s = hmx_fast_gemm_g16_bf16(x, a->w1_16, g, n, a->h, a->d, a->threads);
    if (s == HMX_OK) s = hmx_fast_gemm_g16_bf16(x, a->w3_16, u, n, a->h, a->d, a->threads);
    if (s == HMX_OK) {
      fk->silu_mul(g, u, n * a->h);
      s = hmx_fast_gemm_g16_bf16(g, a->w2_16, a->y + t0 * a->d_out, n, a->d_out, a->h,
                                 a->threads);
    }
  }
  free(g);
  return s;
}
