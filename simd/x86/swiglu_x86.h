/* SwiGLU for the x86 SIMD backends (docs/NUMERICS.md §swiglu), bit-identical
 * to ref/swiglu.c for every block size; shared by simd/avx512/swiglu_avx512.c
 * (16 lanes) and simd/avx2/swiglu_avx2.c (8 lanes). Header only: the includer
 * first includes its ISA's exp (vexp_<isa>.h, which brings the xv_
 * primitives), then defines
 *
 *   XS_TT            tokens per register tile (4 with 32 registers, 2 with 16)
 *   XS_SWIGLU_FN     the name of the kernel
 *
 * The result does not depend on the block size (y[j] accumulates over
 * u = 0..h-1 in order whatever the blocking), so this kernel uses its own
 * blocking: super-tiles of 64 tokens x 512 hidden units.
 *   phase 1 (gate): tiles of XS_TT tokens x 2*XV_W hidden units;
 *     W1[p][u..u+XV_W-1] is contiguous, so a_u, b_u for XV_W units are
 *     vector chains acc = fma(broadcast x[p], W1[p][u..], acc) over
 *     p = 0..d-1 in order; g = silu(a) * b with the exact vector SiLU
 *     (xv_siluf: IEEE division).
 *   phase 2 (down): tiles of XS_TT tokens x 4*XV_W output columns;
 *     y[j..j+XV_W-1] = fma(broadcast g_u, W2[u][j..], y) for u in increasing
 *     order, carried in registers inside a super-tile and through y (in
 *     memory, exact) from one super-tile of units to the next.
 * Threads split phase 1 over (token tile, unit tile) and phase 2 over
 * (token tile, column tile): never the u or p sums, so no bit depends on the
 * thread count.
 */
#ifndef HMX_SWIGLU_X86_H
#define HMX_SWIGLU_X86_H

#include "backend.h"
#include "internal.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define XS_TOKENS 64 /* tokens per super-tile */
#define XS_UNITS 512 /* hidden units per super-tile */
#define XS_GU (2 * XV_W) /* hidden units per phase-1 tile */
#define XS_DJ (4 * XV_W) /* output columns per phase-2 tile */

_Static_assert(XS_TT == 2 || XS_TT == 4, "token tiles of 4, 2 or 1 rows");

/* Phase 1 for TT tokens (1, 2 or 4) and XS_GU hidden units u .. (`un` of
 * them valid): g[t][u'] = silu(a) * b, a and b sequential over p. The
 * accumulators are named variables, one block per token row written out
 * (rows t >= TT fold away): with arrays, gcc kept a copy of every
 * accumulator on the stack and stored it on each p (measured 4x slower). */
#define XS_GATE_ROW_DECL(t) xv_v a##t##0 = xv_zero(), a##t##1 = xv_zero(), \
                               b##t##0 = xv_zero(), b##t##1 = xv_zero()
#define XS_GATE_ROW_FMA(t)                                                  \
  if (TT > t) {                                                             \
    const xv_v xp = xv_bcast(x + t * ldx + p);                              \
    a##t##0 = xv_fma(xp, w10, a##t##0);                                     \
    a##t##1 = xv_fma(xp, w11, a##t##1);                                     \
    b##t##0 = xv_fma(xp, w30, b##t##0);                                     \
    b##t##1 = xv_fma(xp, w31, b##t##1);                                     \
  }
#define XS_GATE_ROW_STORE(t)                                                          \
  if (TT > t) { /* §swiglu, §E: g = silu(a) * b */                                    \
    xv_storen(g + t * ldg, m0, xv_mul(xv_siluf(a##t##0), b##t##0));                   \
    if (un > XV_W) xv_storen(g + t * ldg + XV_W, m1, xv_mul(xv_siluf(a##t##1), b##t##1)); \
  }
XV_INLINE void xs_gate_tile(const int TT, const float *x, int64_t ldx, const float *w1,
                            const float *w3, int64_t ldw, int64_t d, int64_t un, float *g,
                            int64_t ldg) {
  const xv_m m0 = xv_lanes_clamped(un), m1 = xv_lanes_clamped(un - XV_W);
  XS_GATE_ROW_DECL(0);
  XS_GATE_ROW_DECL(1);
  XS_GATE_ROW_DECL(2);
  XS_GATE_ROW_DECL(3);
  for (int64_t p = 0; p < d; p++) { /* §swiglu: a, b sequential over p from +0 */
    const xv_v w10 = xv_loadn(w1 + p * ldw, m0), w11 = xv_loadn(w1 + p * ldw + XV_W, m1);
    const xv_v w30 = xv_loadn(w3 + p * ldw, m0), w31 = xv_loadn(w3 + p * ldw + XV_W, m1);
    XS_GATE_ROW_FMA(0)
    XS_GATE_ROW_FMA(1)
    XS_GATE_ROW_FMA(2)
    XS_GATE_ROW_FMA(3)
  }
  XS_GATE_ROW_STORE(0)
  XS_GATE_ROW_STORE(1)
  XS_GATE_ROW_STORE(2)
  XS_GATE_ROW_STORE(3)
}

/* Phase 2 for TT tokens (1, 2 or 4) and XS_DJ output columns j .. (`jn`
 * valid): y = fma(g_u, W2[u][j..], y) for u = 0..un-1 in increasing order,
 * starting from +0 (first) or from y as left by the previous units. */
XV_INLINE void xs_down_tile(const int TT, const float *g, int64_t ldg, const float *w2,
                            int64_t dout, int64_t un, int first, float *y, int64_t ldy,
                            int64_t jn) {
  xv_v acc[XS_TT][4];
  xv_m mk[4];
  for (int c = 0; c < 4; c++) mk[c] = xv_lanes_clamped(jn - XV_W * c);
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      acc[t][c] = first ? xv_zero() : xv_loadn(y + t * ldy + XV_W * c, mk[c]);
  for (int64_t u = 0; u < un; u++) { /* §swiglu: y accumulates over u in order */
    const float *wr = w2 + u * dout;
    const xv_v v0 = xv_loadn(wr, mk[0]), v1 = xv_loadn(wr + XV_W, mk[1]);
    const xv_v v2 = xv_loadn(wr + 2 * XV_W, mk[2]), v3 = xv_loadn(wr + 3 * XV_W, mk[3]);
    for (int t = 0; t < TT; t++) {
      const xv_v gv = xv_bcast(g + t * ldg + u);
      acc[t][0] = xv_fma(gv, v0, acc[t][0]);
      acc[t][1] = xv_fma(gv, v1, acc[t][1]);
      acc[t][2] = xv_fma(gv, v2, acc[t][2]);
      acc[t][3] = xv_fma(gv, v3, acc[t][3]);
    }
  }
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      if (jn > XV_W * c) xv_storen(y + t * ldy + XV_W * c, mk[c], acc[t][c]);
}

/* Packs the W1 and W3 columns u0 .. u0+un-1 into unit tiles of XS_GU
 * columns, p-major and contiguous (tile uc: wp[(uc*d + p)*XS_GU + u']): the
 * gate tiles then read consecutive lines instead of d rows h floats apart
 * (which share L1 sets when h is a power of two). Exact copies, zero padded. */
static void xs_pack_units(const float *w, int64_t h, int64_t d, int64_t u0, int64_t un, float *wp,
                          int threads) {
  const int64_t nuc = (un + XS_GU - 1) / XS_GU;
  const int nt = hmx_thread_count(threads, d / 64 + 1);
  HMX_OMP_FOR(nt)
  for (int64_t p = 0; p < d; p++)
    for (int64_t uc = 0; uc < nuc; uc++) {
      const int64_t n = un - uc * XS_GU < XS_GU ? un - uc * XS_GU : XS_GU;
      float *dst = wp + (uc * d + p) * XS_GU;
      memcpy(dst, w + p * h + u0 + uc * XS_GU, (size_t)n * sizeof(float));
      if (n < XS_GU) memset(dst + n, 0, (size_t)(XS_GU - n) * sizeof(float));
    }
}

/* Phase 1 for one token (decode): g[u] for u in [u0, u0+un). Each thread
 * owns a range of units and streams W1 and W3 row by row (p = 0 .. d-1:
 * contiguous runs of its range, which the prefetchers follow), with a and b
 * for its units held in the scratch ab (L1-sized: stores and reloads are
 * exact), so each a[u], b[u] is still one fma per p in increasing order from
 * +0 (§swiglu). Memory-bound: the extra L1 traffic is free. */
static void xs_gate_gemv(const float *x, const float *w1, const float *w3, int64_t h, int64_t d,
                         int64_t u0, int64_t un, float *g, float *ab, int threads) {
  const int64_t nvec = (un + XV_W - 1) / XV_W;
  /* Place a and b 2 KiB (mod 4 KiB) away from the weights' addresses: a
   * load from W1 or W3 at the same address mod 4 KiB as a recent store to a
   * or b is held back by the CPU's store-to-load alias check ("4K
   * aliasing"), and with h a power of two every row lines up. ab has 1024
   * spare floats for this shift. */
  {
    const uintptr_t want = ((uintptr_t)(w1 + u0) + 2048u) & 4095u, have = (uintptr_t)ab & 4095u;
    ab += ((want - have) & 4095u) / sizeof(float);
  }
  const int nt = hmx_thread_count(threads, (nvec + 7) / 8);
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++) { /* unit ranges: independent */
    const int64_t v0 = nvec * t / nt, v1 = nvec * (t + 1) / nt;
    float *a_s = ab + v0 * XV_W, *b_s = ab + (nvec + v0) * XV_W;
    const int64_t c0 = v0 * XV_W, w = (v1 * XV_W < un ? v1 * XV_W : un) - c0;
    const int64_t full = w / XV_W;
    const xv_m tail = xv_lanes_clamped(w - full * XV_W);
    for (int64_t p = 0; p < d; p++) { /* §swiglu: p in increasing order */
      const xv_v xp = xv_bcast(x + p);
      const float *r1 = w1 + p * h + u0 + c0, *r3 = w3 + p * h + u0 + c0;
      if (p == 0) { /* from +0 */
        for (int64_t v = 0; v < full; v++) {
          xv_store(a_s + v * XV_W, xv_fma(xp, xv_load(r1 + v * XV_W), xv_zero()));
          xv_store(b_s + v * XV_W, xv_fma(xp, xv_load(r3 + v * XV_W), xv_zero()));
        }
        if (full * XV_W < w) {
          xv_store(a_s + full * XV_W, xv_fma(xp, xv_loadn(r1 + full * XV_W, tail), xv_zero()));
          xv_store(b_s + full * XV_W, xv_fma(xp, xv_loadn(r3 + full * XV_W, tail), xv_zero()));
        }
        continue;
      }
      for (int64_t v = 0; v < full; v++) {
        xv_store(a_s + v * XV_W, xv_fma(xp, xv_load(r1 + v * XV_W), xv_load(a_s + v * XV_W)));
        xv_store(b_s + v * XV_W, xv_fma(xp, xv_load(r3 + v * XV_W), xv_load(b_s + v * XV_W)));
      }
      if (full * XV_W < w) {
        const int64_t o = full * XV_W;
        xv_store(a_s + o, xv_fma(xp, xv_loadn(r1 + o, tail), xv_load(a_s + o)));
        xv_store(b_s + o, xv_fma(xp, xv_loadn(r3 + o, tail), xv_load(b_s + o)));
      }
    }
    for (int64_t v = 0; v * XV_W < w; v++) { /* §swiglu, §E: g = silu(a) * b */
      const xv_m mk = xv_lanes_clamped(w - v * XV_W);
      xv_storen(g + c0 + v * XV_W, mk,
                xv_mul(xv_siluf(xv_load(a_s + v * XV_W)), xv_load(b_s + v * XV_W)));
    }
  }
}

hmx_status XS_SWIGLU_FN(const hmx_swiglu_args *s) {
  const int64_t T = s->t, d = s->d, h = s->h, dout = s->d_out;
  if (T <= 0 || dout <= 0) return HMX_OK;
  if (h <= 0) { /* no hidden unit: y stays +0 (§swiglu) */
    memset(s->y, 0, (size_t)(T * dout) * sizeof(float));
    return HMX_OK;
  }
  const int64_t ts = T < XS_TOKENS ? T : XS_TOKENS;
  const int64_t us = h < XS_UNITS ? h : XS_UNITS;
  const int64_t nuc_max = (us + XS_GU - 1) / XS_GU;
  /* decode (one token) reads the weights in place; otherwise each unit
   * block of W1, W3 is packed once and used by every token tile */
  const int pack = T > 1;
  float *gbuf = hmx_alloc_array((size_t)(ts * us), sizeof(float));
  float *wp = pack ? hmx_alloc_array((size_t)(2 * nuc_max * XS_GU * d), sizeof(float))
                   : hmx_alloc_array((size_t)(2 * (us + XV_W) + 1024), sizeof(float));
  if (!gbuf || !wp) {
    free(gbuf);
    free(wp);
    return HMX_ERR_NO_MEMORY;
  }
  float *w1p = wp, *w3p = wp + nuc_max * XS_GU * d;
  /* §swiglu: unit blocks in increasing order; for each token, y carries its
   * sums from one unit block to the next (token blocks are independent) */
  for (int64_t u0 = 0; u0 < h; u0 += us) {
    const int64_t un = h - u0 < us ? h - u0 : us;
    if (pack) {
      xs_pack_units(s->w1, h, d, u0, un, w1p, s->threads);
      xs_pack_units(s->w3, h, d, u0, un, w3p, s->threads);
    }
    for (int64_t t0 = 0; t0 < T; t0 += ts) {
      const int64_t tn = T - t0 < ts ? T - t0 : ts, ntt = (tn + XS_TT - 1) / XS_TT;
      const float *x = s->x + t0 * d;
      float *y = s->y + t0 * dout;
      /* Phase 1: g for tn tokens x un units; items (unit tile, token tile). */
      const int64_t nuc = (un + XS_GU - 1) / XS_GU, items1 = nuc * ntt;
      if (!pack) {
        xs_gate_gemv(x, s->w1, s->w3, h, d, u0, un, gbuf, wp, s->threads);
      } else {
        const int nt1 = hmx_thread_count(s->threads, items1);
        HMX_OMP_FOR(nt1)
        for (int64_t idx = 0; idx < items1; idx++) {
          const int64_t uc = idx / ntt, t = (idx % ntt) * XS_TT;
          const int64_t rows = tn - t < XS_TT ? tn - t : XS_TT;
          const int64_t len = un - uc * XS_GU;
          const float *xt = x + t * d;
          const float *p1 = w1p + uc * d * XS_GU, *p3 = w3p + uc * d * XS_GU;
          float *g = gbuf + t * us + uc * XS_GU;
          if (rows == XS_TT) xs_gate_tile(XS_TT, xt, d, p1, p3, XS_GU, d, len, g, us);
          else if (XS_TT > 2 && rows >= 2) xs_gate_tile(2, xt, d, p1, p3, XS_GU, d, len, g, us);
          else xs_gate_tile(1, xt, d, p1, p3, XS_GU, d, len, g, us);
          if (XS_TT > 2 && rows == 3) /* the third token alone */
            xs_gate_tile(1, xt + 2 * d, d, p1, p3, XS_GU, d, len, g + 2 * us, us);
        }
      }
      /* Phase 2: y for tn tokens x dout columns; items (column tile, token tile). */
      const int64_t njc = (dout + XS_DJ - 1) / XS_DJ, items2 = njc * ntt;
      const int nt2 = hmx_thread_count(s->threads, items2);
      HMX_OMP_FOR(nt2)
      for (int64_t idx = 0; idx < items2; idx++) {
        const int64_t jc = idx / ntt, t = (idx % ntt) * XS_TT;
        const int64_t rows = tn - t < XS_TT ? tn - t : XS_TT;
        const int64_t j = jc * XS_DJ, jn = dout - j;
        const float *g = gbuf + t * us, *w2 = s->w2 + u0 * dout + j;
        float *yt = y + t * dout + j;
        const int first = u0 == 0;
        if (rows == XS_TT) xs_down_tile(XS_TT, g, us, w2, dout, un, first, yt, dout, jn);
        else if (XS_TT > 2 && rows >= 2) xs_down_tile(2, g, us, w2, dout, un, first, yt, dout, jn);
        else xs_down_tile(1, g, us, w2, dout, un, first, yt, dout, jn);
        if (XS_TT > 2 && rows == 3) /* the third token alone */
          xs_down_tile(1, g + 2 * us, us, w2, dout, un, first, yt + 2 * dout, dout, jn);
      }
    }
  }
  free(gbuf);
  free(wp);
  return HMX_OK;
}

#endif
