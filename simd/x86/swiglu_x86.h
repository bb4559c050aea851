/* SwiGLU for the x86 SIMD backends (docs/NUMERICS.md §swiglu), bit-identical
 * to ref/swiglu.c for every block size; shared by simd/avx512/swiglu_avx512.c
 * (16 lanes) and simd/avx2/swiglu_avx2.c (8 lanes). Header only: the includer
 * first includes its ISA's exp (vexp_<isa>.h, which brings the xv_
 * primitives), then defines
 *
 *   XS_TT            tokens per register tile (4 or 2)
 *   XS_UV            vectors of hidden units per phase-1 tile (1 or 2)
 *   XS_CV            vectors of output columns per phase-2 tile (1 .. 4)
 *                    (2 * XS_TT * XS_UV and XS_TT * XS_CV accumulators: 16
 *                    of avx512's 32 registers, 8 of avx2's 16)
 *   XS_SWIGLU_FN     the name of the kernel
 *
 * The result does not depend on the block size (y[j] accumulates over
 * u = 0..h-1 in order whatever the blocking), so this kernel uses its own
 * blocking: super-tiles of 64 tokens x 512 hidden units.
 *   phase 1 (gate): tiles of XS_TT tokens x XS_UV*XV_W hidden units;
 *     W1[p][u..u+XV_W-1] is contiguous, so a_u, b_u for XV_W units are
 *     vector chains acc = fma(broadcast x[p], W1[p][u..], acc) over
 *     p = 0..d-1 in order; g = silu(a) * b with the exact vector SiLU
 *     (xv_siluf: IEEE division).
 *   phase 2 (down): tiles of XS_TT tokens x XS_CV*XV_W output columns;
 *     y[j..j+XV_W-1] = fma(broadcast g_u, W2[u][j..], y) for u in increasing
 *     order, carried in registers inside a super-tile and through y (in
 *     memory, exact) from one super-tile of units to the next. W2's rows of
 *     the super-tile are packed into contiguous 4*XV_W-column panels first
 *     (read in place they thrash L1: 170 -> 320 GFLOP/s at T = 512, d = 768,
 *     h = 2048, 2 threads, avx512).
 * One token (decode) takes its own path (xs_decode): three row-streaming
 * GEMVs over the weights in place. Weights may be f32, bf16 or f16
 * (weights16_x86.h): they are widened exactly when packed or loaded.
 * They may also come in the G16 layout of their transposes (wlayout,
 * src/backend.h HMX_WG16_SWIGLU: 16 columns' values of one row adjacent):
 * a group's [K][16] block is already a contiguous panel, so the tiles read
 * them in place (xs_wview; no packing, 16-bit values widened as loaded, all
 * units in one super-tile), and one token takes xs_decode_g16, which streams
 * each group of 16 outputs' weights as one contiguous block. Same values,
 * same chains, same bits. (Packing per call cost 19% of a 64-token SmolLM2
 * prefill with bf16 weights: 645 -> 760 tokens/s without it, Zen 4.)
 * Threads split phase 1 over (token tile, unit tile) and phase 2 over
 * (token tile, column tile): never the u or p sums, so no bit depends on the
 * thread count.
 */
#ifndef HMX_SWIGLU_X86_H
#define HMX_SWIGLU_X86_H

#include "unroll.h"
#include "backend.h"
#include "internal.h"
#include "parallel.h"
#include "weights16_x86.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define XS_TOKENS 64 /* tokens per super-tile */
#define XS_UNITS 512 /* hidden units per super-tile */
#define XS_GU (XS_UV * XV_W) /* hidden units per phase-1 tile */
#define XS_DJ (XS_CV * XV_W) /* output columns per phase-2 tile */

_Static_assert(XS_TT == 2 || XS_TT == 4, "token tiles of 4, 2 or 1 rows");
_Static_assert(XS_UV >= 1 && XS_UV <= 2 && XS_CV >= 1 && XS_CV <= 4, "tile widths");

/* Element index of W[r][c] of a [K][N] weight (K rows r of N columns c) in
 * the G16 form of W^T, where the 16 columns of a group are adjacent for each
 * row: group c / 16 is one [K][16] block, so a run of XV_W columns starting
 * at a multiple of XV_W is contiguous. */
XV_INLINE int64_t xs_g16_at(int64_t r, int64_t c, int64_t K) {
  return ((c / HMX_QG) * K + r) * HMX_QG + c % HMX_QG;
}

/* Where a tile reads its weights: vector v's lanes at step k (p in phase 1,
 * u in phase 2) are elements off[v] + k * ld of w, stored as wt. Two views
 * of the same values: the packed f32 panels (ld = the tile's lanes, off[v] =
 * v * XV_W) and G16 weights read in place (ld = 16, off[v] = the start of the
 * block of vector v's group, xs_g16_at). A vector past the last column (G16,
 * h or d_out a multiple of 16 but not of the tile) repeats vector 0: it is
 * computed and never stored. */
typedef struct xs_wview {
  const void *w;
  int64_t ld, off[4];
} xs_wview;

/* Phase 1 for TT tokens (4, 2 or 1: at most XS_TT) and XS_GU hidden
 * units u .. (`un` of them valid): g[t][u'] = silu(a) * b, a and b
 * sequential over p. W3 has W1's view (w1) at w3. Every loop over tokens
 * and vectors is unrolled (TT a constant after inlining), so that the
 * 2 * TT * XS_UV accumulators are registers: with a loop left rolled, gcc
 * kept a copy of every accumulator on the stack and stored it on each p
 * (measured 4x slower). */
XV_INLINE void xs_gate_tile(const int TT, const float *x, int64_t ldx, const xs_wview *w1,
                            const void *w3, int64_t d, int64_t un, float *g, int64_t ldg,
                            const int wt) {
  const void *w = w1->w;
  const int64_t ld = w1->ld;
  xv_v a[XS_TT][XS_UV], b[XS_TT][XS_UV];
  HMX_UNROLL(4)
  for (int t = 0; t < TT; t++)
    HMX_UNROLL(2)
    for (int v = 0; v < XS_UV; v++) a[t][v] = b[t][v] = xv_zero();
  for (int64_t p = 0; p < d; p++) { /* §swiglu: a, b sequential over p from +0 */
    xv_v w1v[XS_UV], w3v[XS_UV];
    HMX_UNROLL(2)
    for (int v = 0; v < XS_UV; v++) {
      w1v[v] = xw_load(w, w1->off[v] + p * ld, wt);
      w3v[v] = xw_load(w3, w1->off[v] + p * ld, wt);
    }
    HMX_UNROLL(4)
    for (int t = 0; t < TT; t++) {
      const xv_v xp = xv_bcast(x + t * ldx + p);
      HMX_UNROLL(2)
      for (int v = 0; v < XS_UV; v++) {
        a[t][v] = xv_fma(xp, w1v[v], a[t][v]);
        b[t][v] = xv_fma(xp, w3v[v], b[t][v]);
      }
    }
  }
  HMX_UNROLL(4)
  for (int t = 0; t < TT; t++) /* §swiglu, §E: g = silu(a) * b */
    HMX_UNROLL(2)
    for (int v = 0; v < XS_UV; v++)
      if (un > v * XV_W)
        xv_storen(g + t * ldg + v * XV_W, xv_lanes_clamped(un - v * XV_W),
                  xv_mul(xv_siluf(a[t][v]), b[t][v]));
}

/* xs_gate_tile for `rows` tokens (1 .. XS_TT), weights stored as wt: the
 * widest tiles first. */
XV_INLINE void xs_gate_rows_w(const float *x, int64_t ldx, const xs_wview *w1, const void *w3,
                              int64_t d, int64_t un, float *g, int64_t ldg, int64_t rows,
                              const int wt) {
  int64_t t = 0;
  if (XS_TT >= 4)
    for (; t + 4 <= rows; t += 4) xs_gate_tile(4, x + t * ldx, ldx, w1, w3, d, un, g + t * ldg, ldg, wt);
  for (; t + 2 <= rows; t += 2) xs_gate_tile(2, x + t * ldx, ldx, w1, w3, d, un, g + t * ldg, ldg, wt);
  if (t < rows) xs_gate_tile(1, x + t * ldx, ldx, w1, w3, d, un, g + t * ldg, ldg, wt);
}

/* The storage type is switched on inside each parallel loop's body (here and
 * below): OpenMP outlines a loop body before inlining, so a type passed in
 * from outside it would not be a constant there. */
static void xs_gate_rows(const float *x, int64_t ldx, const xs_wview *w1, const void *w3,
                         int64_t d, int64_t un, float *g, int64_t ldg, int64_t rows, int wt) {
  switch (wt) {
  case XW_BF16: xs_gate_rows_w(x, ldx, w1, w3, d, un, g, ldg, rows, XW_BF16); break;
  case XW_F16: xs_gate_rows_w(x, ldx, w1, w3, d, un, g, ldg, rows, XW_F16); break;
  default: xs_gate_rows_w(x, ldx, w1, w3, d, un, g, ldg, rows, XW_F32); break;
  }
}

/* Phase 2 for TT tokens (4, 2 or 1: at most XS_TT) and XS_DJ output
 * columns j .. (`jn` valid): y = fma(g_u, W2[u][j..], y) for u = 0..un-1 in
 * increasing order, starting from +0 (first) or from y as left by the
 * previous units. Loops unrolled as in xs_gate_tile. */
XV_INLINE void xs_down_tile(const int TT, const float *g, int64_t ldg, const xs_wview *w2,
                            int64_t un, int first, float *y, int64_t ldy, int64_t jn,
                            const int wt) {
  xv_v acc[XS_TT][XS_CV];
  xv_m mk[XS_CV];
  const void *w = w2->w;
  const int64_t ld = w2->ld;
  HMX_UNROLL(4)
  for (int c = 0; c < XS_CV; c++) mk[c] = xv_lanes_clamped(jn - XV_W * c);
  HMX_UNROLL(4)
  for (int t = 0; t < TT; t++)
    HMX_UNROLL(4)
    for (int c = 0; c < XS_CV; c++)
      acc[t][c] = first ? xv_zero() : xv_loadn(y + t * ldy + XV_W * c, mk[c]);
  for (int64_t u = 0; u < un; u++) { /* §swiglu: y accumulates over u in order */
    /* W2[u][j .. j+XS_DJ) (+0 past jn when packed; a repeat of vector 0 in G16) */
    xv_v v[XS_CV];
    HMX_UNROLL(4)
    for (int c = 0; c < XS_CV; c++) v[c] = xw_load(w, w2->off[c] + u * ld, wt);
    HMX_UNROLL(4)
    for (int t = 0; t < TT; t++) {
      const xv_v gv = xv_bcast(g + t * ldg + u);
      HMX_UNROLL(4)
      for (int c = 0; c < XS_CV; c++) acc[t][c] = xv_fma(gv, v[c], acc[t][c]);
    }
  }
  HMX_UNROLL(4)
  for (int t = 0; t < TT; t++)
    HMX_UNROLL(4)
    for (int c = 0; c < XS_CV; c++)
      if (jn > XV_W * c) xv_storen(y + t * ldy + XV_W * c, mk[c], acc[t][c]);
}

/* xs_down_tile for `rows` tokens (1 .. XS_TT), weights stored as wt: the
 * widest tiles first. */
XV_INLINE void xs_down_rows_w(const float *g, int64_t ldg, const xs_wview *w2, int64_t un,
                              int first, float *y, int64_t ldy, int64_t jn, int64_t rows,
                              const int wt) {
  int64_t t = 0;
  if (XS_TT >= 4)
    for (; t + 4 <= rows; t += 4) xs_down_tile(4, g + t * ldg, ldg, w2, un, first, y + t * ldy, ldy, jn, wt);
  for (; t + 2 <= rows; t += 2) xs_down_tile(2, g + t * ldg, ldg, w2, un, first, y + t * ldy, ldy, jn, wt);
  if (t < rows) xs_down_tile(1, g + t * ldg, ldg, w2, un, first, y + t * ldy, ldy, jn, wt);
}

static void xs_down_rows(const float *g, int64_t ldg, const xs_wview *w2, int64_t un, int first,
                         float *y, int64_t ldy, int64_t jn, int64_t rows, int wt) {
  switch (wt) { /* a constant inside each instance (see xs_gate_rows) */
  case XW_BF16: xs_down_rows_w(g, ldg, w2, un, first, y, ldy, jn, rows, XW_BF16); break;
  case XW_F16: xs_down_rows_w(g, ldg, w2, un, first, y, ldy, jn, rows, XW_F16); break;
  default: xs_down_rows_w(g, ldg, w2, un, first, y, ldy, jn, rows, XW_F32); break;
  }
}

/* One row u of xs_pack_down for weights stored as wt (a constant). */
XV_INLINE void xs_pack_down_row_w(const void *w2, int64_t dout, int64_t u0, int64_t un, float *wp,
                                  int64_t u, const int wt) {
  const int64_t njc = (dout + XS_DJ - 1) / XS_DJ;
  for (int64_t jc = 0; jc < njc; jc++) {
    float *dst = wp + (jc * un + u) * XS_DJ;
    const int64_t n = dout - jc * XS_DJ;
    for (int64_t i = 0; i < XS_DJ; i += XV_W) { /* converted to f32; +0 past dout */
      const int64_t src = (u0 + u) * dout + jc * XS_DJ + i; /* W2[u0+u][j] */
      xv_store(dst + i, xw_loadn(w2, src, n - i < 0 ? 0 : n - i, wt));
    }
  }
}

static void xs_pack_down_row(const void *w2, int64_t dout, int64_t u0, int64_t un, float *wp,
                             int64_t u, int wt) {
  switch (wt) { /* a constant inside each instance (see xs_gate_rows) */
  case XW_BF16: xs_pack_down_row_w(w2, dout, u0, un, wp, u, XW_BF16); break;
  case XW_F16: xs_pack_down_row_w(w2, dout, u0, un, wp, u, XW_F16); break;
  default: xs_pack_down_row_w(w2, dout, u0, un, wp, u, XW_F32); break;
  }
}

/* Packs the rows u0 .. u0+un-1 of a row-major W2 ([h][dout]) into column
 * panels of XS_DJ, u-major and contiguous (panel jc: wp[(jc*un + u)*XS_DJ +
 * j']): the down tiles then read
 * consecutive lines, where the rows of W2 (dout floats apart; 3 KiB at
 * d = 768) fall into a quarter of the L1 sets and thrash it. Exact copies
 * (16-bit weights converted to f32), zero padded past dout. */
static void xs_pack_down(const void *w2, int64_t dout, int64_t u0, int64_t un, float *wp,
                         int threads, int wt) {
  const int nt = hmx_thread_count(threads, un / 64 + 1);
  HMX_OMP_FOR(nt)
  for (int64_t u = 0; u < un; u++) xs_pack_down_row(w2, dout, u0, un, wp, u, wt);
}

/* One row p of xs_pack_units for weights stored as wt (a constant). */
XV_INLINE void xs_pack_row_w(const void *w, int64_t h, int64_t d, int64_t u0, int64_t un,
                             float *wp, int64_t p, const int wt) {
  const int64_t nuc = (un + XS_GU - 1) / XS_GU;
  for (int64_t uc = 0; uc < nuc; uc++) {
    const int64_t n = un - uc * XS_GU < XS_GU ? un - uc * XS_GU : XS_GU;
    float *dst = wp + (uc * d + p) * XS_GU;
    for (int64_t i = 0; i < XS_GU; i += XV_W) { /* converted to f32; +0 past n */
      const int64_t src = p * h + u0 + uc * XS_GU + i; /* W[p][u] */
      xv_store(dst + i, xw_loadn(w, src, n - i < 0 ? 0 : n - i, wt));
    }
  }
}

static void xs_pack_row(const void *w, int64_t h, int64_t d, int64_t u0, int64_t un, float *wp,
                        int64_t p, int wt) {
  switch (wt) { /* a constant inside each instance (see xs_gate_rows) */
  case XW_BF16: xs_pack_row_w(w, h, d, u0, un, wp, p, XW_BF16); break;
  case XW_F16: xs_pack_row_w(w, h, d, u0, un, wp, p, XW_F16); break;
  default: xs_pack_row_w(w, h, d, u0, un, wp, p, XW_F32); break;
  }
}

/* Packs the columns u0 .. u0+un-1 of a row-major W1 or W3 ([d][h]) into unit
 * tiles of XS_GU columns, p-major and contiguous (tile uc: wp[(uc*d + p)*XS_GU
 * + u']): the gate tiles then read consecutive lines instead of d rows h
 * floats apart (which share L1 sets when h is a power of two). Exact copies,
 * zero padded. (G16 weights need no packing: the tiles read them in place.) */
static void xs_pack_units(const void *w, int64_t h, int64_t d, int64_t u0, int64_t un, float *wp,
                          int threads, int wt) {
  const int nt = hmx_thread_count(threads, d / 64 + 1);
  HMX_OMP_FOR(nt)
  for (int64_t p = 0; p < d; p++) xs_pack_row(w, h, d, u0, un, wp, p, wt);
}

/* ---- One token (decode): three row-streaming GEMVs, the weights read once,
 * in place, at the memory's pace. */

/* acc[c] = sum over r = 0 .. n_rows-1, in increasing order, of
 * fma(xs[r], w[r*ldw + c], acc[c]) from acc[c] = +0, for c < cols: one fma
 * per row per output, in order (§swiglu), whatever the grouping below.
 * Rows are taken eight per pass over acc where cols is whole vectors (else
 * four): one load and one store of acc per eight fmas, and eight runs of the
 * weights in flight (measured: four rows 34 -> 42 GB/s over one row per
 * pass, d = 768, h = 2048; eight over four +4% f32, +8% bf16 from memory,
 * Zen 4, 2 threads; software prefetching of the next rows was slower). acc
 * holds cols floats rounded up to whole vectors; it is L1-resident scratch,
 * so its stores and reloads are exact and cheap. */
/* Columns o .. o+n-1 (n <= XV_W) of rows w0 .. w0+3*ldw, four fmas in row
 * order into acc (from +0 when first). n == XV_W: whole-vector loads. */
XV_INLINE void xs_rows4_vec(const void *w, int64_t w0, int64_t ldw, int64_t o, int64_t n,
                            xv_v x0, xv_v x1, xv_v x2, xv_v x3, int first, float *acc,
                            const int wt) {
  xv_v a = first ? xv_zero() : xv_load(acc + o);
  if (n == XV_W) {
    a = xv_fma(x0, xw_load(w, w0 + o, wt), a); /* rows r .. r+3 in order */
    a = xv_fma(x1, xw_load(w, w0 + ldw + o, wt), a);
    a = xv_fma(x2, xw_load(w, w0 + 2 * ldw + o, wt), a);
    a = xv_fma(x3, xw_load(w, w0 + 3 * ldw + o, wt), a);
  } else {
    a = xv_fma(x0, xw_loadn(w, w0 + o, n, wt), a);
    a = xv_fma(x1, xw_loadn(w, w0 + ldw + o, n, wt), a);
    a = xv_fma(x2, xw_loadn(w, w0 + 2 * ldw + o, n, wt), a);
    a = xv_fma(x3, xw_loadn(w, w0 + 3 * ldw + o, n, wt), a);
  }
  xv_store(acc + o, a);
}

/* Eight rows, whole vectors (n == XV_W): rows r .. r+7 in order. */
XV_INLINE void xs_rows8_vec(const void *w, int64_t w0, int64_t ldw, int64_t o, const xv_v *x,
                            int first, float *acc, const int wt) {
  xv_v a = first ? xv_zero() : xv_load(acc + o);
  HMX_UNROLL(8)
  for (int i = 0; i < 8; i++) a = xv_fma(x[i], xw_load(w, w0 + i * ldw + o, wt), a);
  xv_store(acc + o, a);
}

XV_INLINE void xs_rows(const float *xs, const void *w, int64_t wo, int64_t ldw, int64_t n_rows,
                       int64_t cols, float *acc, const int wt) {
  const int64_t full = cols / XV_W * XV_W, tail = cols - full; /* whole vectors, then lanes */
  if (n_rows <= 0) { /* no term: every output is +0 */
    for (int64_t o = 0; o < cols; o += XV_W) xv_store(acc + o, xv_zero());
    return;
  }
  int64_t r = 0;
  for (; r + 8 <= n_rows && full == cols; r += 8) {
    xv_v x[8];
    for (int i = 0; i < 8; i++) x[i] = xv_bcast(xs + r + i);
    const int64_t w0 = wo + r * ldw;
    for (int64_t o = 0; o < full; o += XV_W) xs_rows8_vec(w, w0, ldw, o, x, r == 0, acc, wt);
  }
  for (; r + 4 <= n_rows; r += 4) {
    const xv_v x0 = xv_bcast(xs + r), x1 = xv_bcast(xs + r + 1);
    const xv_v x2 = xv_bcast(xs + r + 2), x3 = xv_bcast(xs + r + 3);
    const int64_t w0 = wo + r * ldw;
    for (int64_t o = 0; o < full; o += XV_W)
      xs_rows4_vec(w, w0, ldw, o, XV_W, x0, x1, x2, x3, r == 0, acc, wt);
    if (tail) xs_rows4_vec(w, w0, ldw, full, tail, x0, x1, x2, x3, r == 0, acc, wt);
  }
  for (; r < n_rows; r++) { /* the last rows, one per pass, still in order */
    const xv_v x0 = xv_bcast(xs + r);
    const int64_t w0 = wo + r * ldw;
    for (int64_t o = 0; o < cols; o += XV_W) {
      const int64_t n = cols - o < XV_W ? cols - o : XV_W;
      xv_store(acc + o, xv_fma(x0, xw_loadn(w, w0 + o, n, wt), r == 0 ? xv_zero() : xv_load(acc + o)));
    }
  }
}

static void xs_rows_any(const float *xs, const void *w, int64_t wo, int64_t ldw,
                        int64_t n_rows, int64_t cols, float *acc, int wt) {
  switch (wt) { /* a constant inside each instance (see xs_gate_rows) */
  case XW_BF16: xs_rows(xs, w, wo, ldw, n_rows, cols, acc, XW_BF16); break;
  case XW_F16: xs_rows(xs, w, wo, ldw, n_rows, cols, acc, XW_F16); break;
  default: xs_rows(xs, w, wo, ldw, n_rows, cols, acc, XW_F32); break;
  }
}

/* Scratch for xs_rows: `floats` floats (whole vectors) starting 2 KiB away
 * (mod 4 KiB) from `w`. A load from the weights at the same address mod 4 KiB
 * as a recent store to the scratch is held back by the CPU's store-to-load
 * alias check ("4K aliasing"), and with power-of-two row lengths every row
 * lines up with the scratch. `base` has 1024 + 16 spare floats. */
static float *xs_scratch_for(float *base, const void *w) {
  const uintptr_t want = ((uintptr_t)w + 2048u) & 4095u, have = (uintptr_t)base & 4095u;
  return base + ((want - have) & 4095u) / sizeof(float);
}

/* Thread t's share of n outputs (nv vectors): whole vectors, from *c0, *w of
 * them (the last share ends at n). */
static void xs_thread_range(int64_t nv, int64_t n, int t, int nt, int64_t *c0, int64_t *w) {
  const int64_t v0 = nv * t / nt, v1 = nv * (t + 1) / nt;
  *c0 = v0 * XV_W;
  *w = (v1 * XV_W < n ? v1 * XV_W : n) - *c0;
}

/* The whole op for T = 1. Phase 1: each thread owns a range of hidden units
 * (whole vectors) and computes a = x W1, b = x W3 for them (xs_rows, p in
 * order from +0), then g = silu(a) * b. Phase 2: each thread owns a range of
 * output columns and computes y = g W2 (u in order from +0). No sum is split,
 * so no bit depends on the thread count; the sums are the same chains as in
 * the blocked path, so the bits equal ref for every block size. */
static hmx_status xs_decode(const hmx_swiglu_args *s, const void *w1, const void *w3,
                            const void *w2, int wt) {
  const size_t es = wt == XW_F32 ? sizeof(float) : sizeof(uint16_t);
  const int64_t d = s->d, h = s->h, dout = s->d_out;
  const int64_t hv = (h + XV_W - 1) / XV_W, ov = (dout + XV_W - 1) / XV_W;
  const int nt1 = hmx_thread_count(s->threads, (hv + 15) / 16);
  const int nt2 = hmx_thread_count(s->threads, (ov + 15) / 16);
  const int nt = nt1 > nt2 ? nt1 : nt2;
  /* per thread: a, b (or y) for its range, plus the alignment slack */
  const int64_t per = 2 * (hv > ov ? hv : ov) * XV_W + 1024 + 64;
  float *g = hmx_alloc_array((size_t)(hv * XV_W), sizeof(float));
  float *scratch = hmx_alloc_array((size_t)(per * nt), sizeof(float));
  if (!g || !scratch) {
    free(g);
    free(scratch);
    return HMX_ERR_NO_MEMORY;
  }
  HMX_OMP_FOR(nt1)
  for (int t = 0; t < nt1; t++) { /* unit ranges: independent */
    int64_t c0, w;
    xs_thread_range(hv, h, t, nt1, &c0, &w);
    if (w <= 0) continue;
    float *a = xs_scratch_for(scratch + per * t, (const char *)w1 + (size_t)c0 * es);
    float *b = a + (w + XV_W - 1) / XV_W * XV_W;
    xs_rows_any(s->x, w1, c0, h, d, w, a, wt); /* §swiglu: a = sum_p x[p] W1[p][u] */
    xs_rows_any(s->x, w3, c0, h, d, w, b, wt); /* b = sum_p x[p] W3[p][u] */
    for (int64_t o = 0; o < w; o += XV_W) /* §swiglu, §E: g = silu(a) * b */
      xv_store(g + c0 + o, xv_mul(xv_siluf(xv_load(a + o)), xv_load(b + o)));
  }
  HMX_OMP_FOR(nt2)
  for (int t = 0; t < nt2; t++) { /* column ranges: independent */
    int64_t c0, w;
    xs_thread_range(ov, dout, t, nt2, &c0, &w);
    if (w <= 0) continue;
    float *y = xs_scratch_for(scratch + per * t, (const char *)w2 + (size_t)c0 * es);
    xs_rows_any(g, w2, c0, dout, h, w, y, wt); /* §swiglu: y = sum_u g[u] W2[u][j] */
    memcpy(s->y + c0, y, (size_t)w * sizeof(float));
  }
  free(g);
  free(scratch);
  return HMX_OK;
}

/* ---- One token, weights in G16 (wlayout): a group of 16 outputs' weights
 * is one contiguous [K][16] block, so the group's outputs are XS_UV vector
 * chains acc = fma(x[p], W[g][p][..], acc) over p = 0 .. K-1 in order from
 * +0 (§swiglu), one vector load per element and per vector: no transpose, no
 * scratch round trip. XS_NG groups go side by side (independent chains and
 * streams: enough loads in flight for the memory's pace). */
#define XS_GV (HMX_QG / XV_W) /* vectors per group: 1 (16 lanes) or 2 (8 lanes) */
#define XS_NG 4               /* groups per pass */

/* Element p of xs_g16_dot: acc = fma(x[p], W[g][p][..], acc) for its ng
 * groups. */
XV_INLINE void xs_g16_element(xv_v acc[XS_NG][XS_GV], const float *x, const void *w, int64_t K,
                              int64_t g0, const int ng, int64_t p, const int wt) {
  const xv_v xp = xv_bcast(x + p); /* §swiglu: one chain per output, p in order */
  for (int gi = 0; gi < ng; gi++)
    for (int v = 0; v < XS_GV; v++)
      acc[gi][v] = xv_fma(xp, xw_load(w, ((g0 + gi) * K + p) * HMX_QG + v * XV_W, wt), acc[gi][v]);
}

/* out[16 gi + l] for the ng groups g0 .. g0+ng-1 (ng <= XS_NG and wt
 * constants in each instance) of a G16 matrix of K elements per output.
 * pf: each group's stream prefetches that many bytes ahead
 * (xw_g16_pf_bytes; 0: none), once per cache line (`step` elements), until
 * xw_g16_pf_end. */
XV_INLINE void xs_g16_dot(const float *x, const void *w, int64_t K, int64_t g0, const int ng,
                          int64_t pf, float *out, const int wt) {
  xv_v acc[XS_NG][XS_GV];
  for (int gi = 0; gi < ng; gi++)
    for (int v = 0; v < XS_GV; v++) acc[gi][v] = xv_zero();
  const int64_t es = wt == XW_F32 ? 4 : 2, step = 64 / (HMX_QG * es);
  const int64_t pf_end = xw_g16_pf_end(K, es, pf);
  int64_t p = 0;
  for (; p + step <= pf_end; p += step) {
    for (int gi = 0; gi < ng; gi++)
      _mm_prefetch((const char *)w + ((g0 + gi) * K + p) * HMX_QG * es + pf, _MM_HINT_T0);
    for (int e = 0; e < step; e++) xs_g16_element(acc, x, w, K, g0, ng, p + e, wt);
  }
  for (; p < K; p++) xs_g16_element(acc, x, w, K, g0, ng, p, wt);
  for (int gi = 0; gi < ng; gi++)
    for (int v = 0; v < XS_GV; v++) xv_store(out + gi * HMX_QG + v * XV_W, acc[gi][v]);
}

/* Groups g0 .. g1-1 into out (16 floats per group), XS_NG at a time. */
XV_INLINE void xs_g16_dots_w(const float *x, const void *w, int64_t K, int64_t g0, int64_t g1,
                             int64_t pf, float *out, const int wt) {
  int64_t g = g0;
  for (; g + XS_NG <= g1; g += XS_NG)
    xs_g16_dot(x, w, K, g, XS_NG, pf, out + (g - g0) * HMX_QG, wt);
  for (; g < g1; g++) xs_g16_dot(x, w, K, g, 1, pf, out + (g - g0) * HMX_QG, wt);
}

static void xs_g16_dots(const float *x, const void *w, int64_t K, int64_t g0, int64_t g1,
                        int64_t pf, float *out, int wt) {
  switch (wt) { /* a constant inside each instance (see xs_gate_rows) */
  case XW_BF16: xs_g16_dots_w(x, w, K, g0, g1, pf, out, XW_BF16); break;
  case XW_F16: xs_g16_dots_w(x, w, K, g0, g1, pf, out, XW_F16); break;
  default: xs_g16_dots_w(x, w, K, g0, g1, pf, out, XW_F32); break;
  }
}

/* The whole op for T = 1 with G16 weights (h, d_out multiples of 16).
 * Phase 1: each thread owns a range of unit groups: a = x W1, b = x W3 for
 * them, then g = silu(a) * b. Phase 2: each thread owns a range of output
 * groups: y = g W2. No sum is split (the chains of xs_decode). */
static hmx_status xs_decode_g16(const hmx_swiglu_args *s, const void *w1, const void *w3,
                                const void *w2, int wt) {
  const int64_t d = s->d, h = s->h, hg = h / HMX_QG, og = s->d_out / HMX_QG;
  const int nt1 = hmx_thread_count(s->threads, (hg + 7) / 8);
  const int nt2 = hmx_thread_count(s->threads, (og + 7) / 8);
  float *g = hmx_alloc_array((size_t)(3 * h), sizeof(float));
  if (!g) return HMX_ERR_NO_MEMORY;
  float *a = g + h, *b = a + h;
  const int64_t es = wt == XW_F32 ? 4 : 2; /* prefetch distances by each matrix's bytes */
  const int64_t pf1 = xw_g16_pf_bytes(d * h * es), pf2 = xw_g16_pf_bytes(h * s->d_out * es);
  HMX_OMP_FOR(nt1)
  for (int t = 0; t < nt1; t++) { /* unit groups: independent */
    const int64_t g0 = hg * t / nt1, g1 = hg * (t + 1) / nt1;
    /* §swiglu: a = sum_p x[p] W1[p][u], b = sum_p x[p] W3[p][u] */
    xs_g16_dots(s->x, w1, d, g0, g1, pf1, a + g0 * HMX_QG, wt);
    xs_g16_dots(s->x, w3, d, g0, g1, pf1, b + g0 * HMX_QG, wt);
    for (int64_t o = g0 * HMX_QG; o < g1 * HMX_QG; o += XV_W) /* §swiglu, §E: g = silu(a) * b */
      xv_store(g + o, xv_mul(xv_siluf(xv_load(a + o)), xv_load(b + o)));
  }
  HMX_OMP_FOR(nt2)
  for (int t = 0; t < nt2; t++) { /* output groups: independent */
    const int64_t g0 = og * t / nt2, g1 = og * (t + 1) / nt2;
    /* §swiglu: y = sum_u g[u] W2[u][j] */
    xs_g16_dots(g, w2, h, g0, g1, pf2, s->y + g0 * HMX_QG, wt);
  }
  free(g);
  return HMX_OK;
}

hmx_status XS_SWIGLU_FN(const hmx_swiglu_args *s) {
  const int wt = xw_type(s->wdt); /* how the weights are stored */
  const void *w1 = wt == XW_F32 ? (const void *)s->w1 : (const void *)s->w1_16;
  const void *w3 = wt == XW_F32 ? (const void *)s->w3 : (const void *)s->w3_16;
  const void *w2 = wt == XW_F32 ? (const void *)s->w2 : (const void *)s->w2_16;
  const int64_t T = s->t, d = s->d, h = s->h, dout = s->d_out;
  const int g16 = s->wlayout == HMX_QLAYOUT_G16;
  if (g16 && (h % HMX_QG || dout % HMX_QG)) return HMX_ERR_INVALID_ARGUMENT; /* the caller checks */
  if (T <= 0 || dout <= 0) return HMX_OK;
  if (h <= 0) { /* no hidden unit: y stays +0 (§swiglu) */
    memset(s->y, 0, (size_t)(T * dout) * sizeof(float));
    return HMX_OK;
  }
  if (T == 1) return g16 ? xs_decode_g16(s, w1, w3, w2, wt) : xs_decode(s, w1, w3, w2, wt);
  const int64_t ts = T < XS_TOKENS ? T : XS_TOKENS;
  /* G16 weights are read in place (their [K][16] blocks are already
   * contiguous panels), so one super-tile holds every unit; row-major ones
   * are packed one super-tile of units at a time */
  const int64_t us = g16 || h < XS_UNITS ? h : XS_UNITS;
  const int64_t nuc_max = (us + XS_GU - 1) / XS_GU;
  /* each unit block of W1, W3 and W2 is packed once and used by every token tile */
  const int64_t njc = (dout + XS_DJ - 1) / XS_DJ;
  float *gbuf = hmx_alloc_array((size_t)(ts * us), sizeof(float));
  float *wp = g16 ? NULL
            : hmx_alloc_array((size_t)(2 * nuc_max * XS_GU * d + njc * XS_DJ * us), sizeof(float));
  if (!gbuf || (!g16 && !wp)) {
    free(gbuf);
    free(wp);
    return HMX_ERR_NO_MEMORY;
  }
  float *w1p = wp, *w3p = g16 ? NULL : wp + nuc_max * XS_GU * d;
  float *w2p = g16 ? NULL : w3p + nuc_max * XS_GU * d;
  const int vt = g16 ? wt : XW_F32; /* what the tiles read: the weights or the f32 panels */
  /* §swiglu: unit blocks in increasing order; for each token, y carries its
   * sums from one unit block to the next (token blocks are independent) */
  for (int64_t u0 = 0; u0 < h; u0 += us) {
    const int64_t un = h - u0 < us ? h - u0 : us;
    if (!g16) {
      xs_pack_units(w1, h, d, u0, un, w1p, s->threads, wt);
      xs_pack_units(w3, h, d, u0, un, w3p, s->threads, wt);
      xs_pack_down(w2, dout, u0, un, w2p, s->threads, wt);
    }
    for (int64_t t0 = 0; t0 < T; t0 += ts) {
      const int64_t tn = T - t0 < ts ? T - t0 : ts, ntt = (tn + XS_TT - 1) / XS_TT;
      const float *x = s->x + t0 * d;
      float *y = s->y + t0 * dout;
      /* Phase 1: g for tn tokens x un units; items (unit tile, token tile). */
      const int64_t nuc = (un + XS_GU - 1) / XS_GU, items1 = nuc * ntt;
      const int nt1 = hmx_thread_count(s->threads, items1);
      /* a unit tile's token tiles (ntt items, one weight panel) per chunk,
       * to whichever thread is free */
      HMX_OMP_FOR_CHUNKS(nt1, ntt)
      for (int64_t idx = 0; idx < items1; idx++) {
        const int64_t uc = idx / ntt, t = (idx % ntt) * XS_TT;
        const int64_t rows = tn - t < XS_TT ? tn - t : XS_TT;
        const int64_t len = un - uc * XS_GU;
        xs_wview v1 = {w1, HMX_QG, {0, 0, 0, 0}};
        const void *v3 = w3;
        if (g16) { /* W1[p][u] of this tile's units, in place */
          const int64_t u = u0 + uc * XS_GU;
          for (int v = 0; v < XS_UV; v++)
            v1.off[v] = len > XV_W * v ? xs_g16_at(0, u + XV_W * v, d) : xs_g16_at(0, u, d);
        } else { /* the packed tile */
          v1 = (xs_wview){w1p + uc * d * XS_GU, XS_GU, {0, 0, 0, 0}};
          for (int v = 0; v < XS_UV; v++) v1.off[v] = XV_W * v;
          v3 = w3p + uc * d * XS_GU;
        }
        xs_gate_rows(x + t * d, d, &v1, v3, d, len, gbuf + t * us + uc * XS_GU, us, rows, vt);
      }
      /* Phase 2: y for tn tokens x dout columns; items (column tile, token tile). */
      const int64_t items2 = njc * ntt;
      const int nt2 = hmx_thread_count(s->threads, items2);
      HMX_OMP_FOR_CHUNKS(nt2, ntt) /* a column tile's token tiles per chunk */
      for (int64_t idx = 0; idx < items2; idx++) {
        const int64_t jc = idx / ntt, t = (idx % ntt) * XS_TT;
        const int64_t rows = tn - t < XS_TT ? tn - t : XS_TT;
        const int64_t j = jc * XS_DJ, jn = dout - j;
        xs_wview v2 = {w2, HMX_QG, {0, 0, 0, 0}};
        if (g16) /* W2[u0 + u][j ..], in place */
          for (int c = 0; c < XS_CV; c++)
            v2.off[c] = jn > XV_W * c ? xs_g16_at(u0, j + XV_W * c, h) : xs_g16_at(u0, j, h);
        else { /* the packed panel */
          v2 = (xs_wview){w2p + jc * un * XS_DJ, XS_DJ, {0, 0, 0, 0}};
          for (int c = 0; c < XS_CV; c++) v2.off[c] = XV_W * c;
        }
        xs_down_rows(gbuf + t * us, us, &v2, un, u0 == 0, y + t * dout + j, dout, jn, rows, vt);
      }
    }
  }
  free(gbuf);
  free(wp);
  return HMX_OK;
}

#endif
