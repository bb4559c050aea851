/* neon gemm (docs/NUMERICS.md §gemm): c[i][j] = bias[j] (or +0), then
 * acc = fma(a[i][p], b[p][j], acc) for p = 0 .. K-1 in order, never split.
 *
 * Register blocking: a tile of 4 rows x 16 columns keeps 16 accumulators
 * (4 rows x 4 float32x4_t); for each p, one row of B (4 vectors) is loaded and
 * each row's a[i][p] is broadcast into vfmaq_n_f32 (fmla by element: one fma
 * per output per p, exactly the sequence of the contract). Narrower column
 * tails use 4-wide vectors, then scalar fmaf. trans_b packs B^T into a
 * [K][N] buffer first; GGUF blocks (g->bq, HMX_WQ_GEMM, always [N, K]) are
 * decoded row by row into that buffer by hmx_gguf_dequantize, the rule of
 * docs/NUMERICS.md "GGUF dequantization" itself, so the bits are those of
 * the dequantized f32 B; B in the G16 layout (HMX_WG16_GEMM) goes to
 * neon_gemm_g16.c, which reuses the tiles. Threads split the tiles
 * (independent outputs). */
#include "neon_gemm.h"
#include "neon_gemm_g16.h"
#include "neon_math.h"
#include "parallel.h"
#include "internal.h"
#include "gguf.h"

#include <math.h>
#include <stdlib.h>

#define MR HMX_NEON_GEMM_MR /* rows per tile (4) */
#define NR 16 /* columns per tile (4 vectors) */

/* Rows i0 .. i0+MR-1 x columns j0 .. j0+NR-1, B as [K][N]: 16 accumulators
 * in named registers (an array of them would be kept on the stack by gcc). */
static void tile_4x16(const float *a, const float *b, const float *bias, float *c, int64_t lda,
                      int64_t ldb, int64_t ldc, int64_t k) {
  float32x4_t z = vdupq_n_f32(0.0f);
  float32x4_t i0 = bias ? vld1q_f32(bias) : z, i1 = bias ? vld1q_f32(bias + 4) : z;
  float32x4_t i2 = bias ? vld1q_f32(bias + 8) : z, i3 = bias ? vld1q_f32(bias + 12) : z;
  float32x4_t c00 = i0, c01 = i1, c02 = i2, c03 = i3, c10 = i0, c11 = i1, c12 = i2, c13 = i3;
  float32x4_t c20 = i0, c21 = i1, c22 = i2, c23 = i3, c30 = i0, c31 = i1, c32 = i2, c33 = i3;
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  for (int64_t p = 0; p < k; p++) {
    const float *bp = b + p * ldb;
    const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
    const float32x4_t b2 = vld1q_f32(bp + 8), b3 = vld1q_f32(bp + 12);
    const float x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];
    c00 = vfmaq_n_f32(c00, b0, x0); c01 = vfmaq_n_f32(c01, b1, x0);
    c02 = vfmaq_n_f32(c02, b2, x0); c03 = vfmaq_n_f32(c03, b3, x0);
    c10 = vfmaq_n_f32(c10, b0, x1); c11 = vfmaq_n_f32(c11, b1, x1);
    c12 = vfmaq_n_f32(c12, b2, x1); c13 = vfmaq_n_f32(c13, b3, x1);
    c20 = vfmaq_n_f32(c20, b0, x2); c21 = vfmaq_n_f32(c21, b1, x2);
    c22 = vfmaq_n_f32(c22, b2, x2); c23 = vfmaq_n_f32(c23, b3, x2);
    c30 = vfmaq_n_f32(c30, b0, x3); c31 = vfmaq_n_f32(c31, b1, x3);
    c32 = vfmaq_n_f32(c32, b2, x3); c33 = vfmaq_n_f32(c33, b3, x3);
  }
  vst1q_f32(c, c00); vst1q_f32(c + 4, c01); vst1q_f32(c + 8, c02); vst1q_f32(c + 12, c03);
  c += ldc;
  vst1q_f32(c, c10); vst1q_f32(c + 4, c11); vst1q_f32(c + 8, c12); vst1q_f32(c + 12, c13);
  c += ldc;
  vst1q_f32(c, c20); vst1q_f32(c + 4, c21); vst1q_f32(c + 8, c22); vst1q_f32(c + 12, c23);
  c += ldc;
  vst1q_f32(c, c30); vst1q_f32(c + 4, c31); vst1q_f32(c + 8, c32); vst1q_f32(c + 12, c33);
}

/* One row x 16 columns (the last rows of M). */
static void tile_1x16(const float *a, const float *b, const float *bias, float *c, int64_t ldb,
                      int64_t k) {
  float32x4_t z = vdupq_n_f32(0.0f);
  float32x4_t c0 = bias ? vld1q_f32(bias) : z, c1 = bias ? vld1q_f32(bias + 4) : z;
  float32x4_t c2 = bias ? vld1q_f32(bias + 8) : z, c3 = bias ? vld1q_f32(bias + 12) : z;
  for (int64_t p = 0; p < k; p++) {
    const float *bp = b + p * ldb;
    const float x = a[p];
    c0 = vfmaq_n_f32(c0, vld1q_f32(bp), x);
    c1 = vfmaq_n_f32(c1, vld1q_f32(bp + 4), x);
    c2 = vfmaq_n_f32(c2, vld1q_f32(bp + 8), x);
    c3 = vfmaq_n_f32(c3, vld1q_f32(bp + 12), x);
  }
  vst1q_f32(c, c0); vst1q_f32(c + 4, c1); vst1q_f32(c + 8, c2); vst1q_f32(c + 12, c3);
}

void hmx_neon_gemm_tile(const float *a, const float *b, const float *bias, float *c, int64_t lda,
                        int64_t ldb, int64_t ldc, int64_t k, int mr) {
  if (mr == MR) {
    tile_4x16(a, b, bias, c, lda, ldb, ldc, k);
    return;
  }
  for (int r = 0; r < mr; r++) tile_1x16(a + r * lda, b, bias, c + r * ldc, ldb, k);
}

/* Columns j0 .. j0+nc-1 with nc < NR: 4-wide vectors, then scalars. */
static void tile_tail(const float *a, const float *b, const float *bias, float *c, int64_t lda,
                      int64_t ldb, int64_t ldc, int64_t k, int mr, int nc) {
  for (int r = 0; r < mr; r++) {
    const float *ar = a + r * lda;
    int j = 0;
    for (; j + 4 <= nc; j += 4) {
      float32x4_t acc = bias ? vld1q_f32(bias + j) : vdupq_n_f32(0.0f);
      for (int64_t p = 0; p < k; p++) acc = vfmaq_n_f32(acc, vld1q_f32(b + p * ldb + j), ar[p]);
      vst1q_f32(c + r * ldc + j, acc);
    }
    for (; j < nc; j++) {
      float acc = bias ? bias[j] : 0.0f;
      for (int64_t p = 0; p < k; p++) acc = fmaf(ar[p], b[p * ldb + j], acc);
      c[r * ldc + j] = acc;
    }
  }
}

hmx_status hmx_neon_gemm(const hmx_gemm_args *g) {
  if (g->bq && g->blayout == HMX_QLAYOUT_G16) return hmx_neon_gemm_g16(g);
  const int64_t m = g->m, n = g->n, k = g->k;
  const float *b = g->b;
  float *packed = NULL;
  if (g->bq && k > 0 && n > 0) { /* GGUF blocks [N][K] -> f32 [K][N] */
    int64_t block = 1, bytes = 0;
    hmx_gguf_type_block(g->qtype, &block, &bytes);
    const size_t row_bytes = (size_t)(k / block * bytes);
    packed = hmx_alloc_array((size_t)(k * n), sizeof *packed);
    const int ntp = hmx_thread_count(g->threads, n);
    float *rows = packed ? hmx_alloc_array((size_t)(ntp * k), sizeof *rows) : NULL;
    if (!rows) {
      free(packed);
      return HMX_ERR_NO_MEMORY;
    }
    HMX_OMP_FOR(ntp)
    for (int t = 0; t < ntp; t++) {
      float *row = rows + (int64_t)t * k;
      for (int64_t j = n * t / ntp; j < n * (t + 1) / ntp; j++) {
        (void)hmx_gguf_dequantize(g->qtype, (const char *)g->bq + (size_t)j * row_bytes, k, row);
        for (int64_t p = 0; p < k; p++) packed[p * n + j] = row[p];
      }
    }
    free(rows);
    b = packed;
  } else if (g->trans_b && k > 0 && n > 0) { /* B^T [N][K] -> [K][N] */
    packed = hmx_alloc_array((size_t)(k * n), sizeof *packed);
    if (!packed) return HMX_ERR_NO_MEMORY;
    int ntp = hmx_thread_count(g->threads, n);
    HMX_OMP_FOR(ntp)
    for (int64_t j = 0; j < n; j++)
      for (int64_t p = 0; p < k; p++) packed[p * n + j] = g->b[j * k + p];
    b = packed;
  }
  const int64_t row_tiles = (m + MR - 1) / MR, col_tiles = (n + NR - 1) / NR;
  const int64_t tiles = row_tiles * col_tiles;
  int nt = hmx_thread_count(g->threads, tiles);
  HMX_OMP_FOR(nt)
  for (int64_t t = 0; t < tiles; t++) {
    int64_t i0 = (t / col_tiles) * MR, j0 = (t % col_tiles) * NR;
    int mr = (int)(m - i0 < MR ? m - i0 : MR), nc = (int)(n - j0 < NR ? n - j0 : NR);
    const float *bias = g->bias ? g->bias + j0 : NULL;
    if (nc == NR)
      hmx_neon_gemm_tile(g->a + i0 * k, b + j0, bias, g->c + i0 * n + j0, k, n, n, k, mr);
    else
      tile_tail(g->a + i0 * k, b + j0, bias, g->c + i0 * n + j0, k, n, n, k, mr, nc);
  }
  free(packed);
  return HMX_OK;
}
