/* AVX-512 SwiGLU (docs/NUMERICS.md §swiglu), bit-identical to ref/swiglu.c
 * for every block size.
 *
 * The result does not depend on the block size (y[j] accumulates over
 * u = 0..h-1 in order whatever the blocking), so this kernel uses its own
 * blocking: super-tiles of 64 tokens x 512 hidden units.
 *   phase 1 (gate): tiles of 4 tokens x 32 hidden units; W1[p][u..u+15] is
 *     contiguous, so a_u, b_u for 16 units are vector chains
 *     acc = fma(broadcast x[p], W1[p][u..], acc) over p = 0..d-1 in order;
 *     g = silu(a) * b with the exact vector SiLU (hmx_v16_siluf: IEEE div).
 *   phase 2 (down): tiles of 4 tokens x 64 output columns;
 *     y[j..j+15] = fma(broadcast g_u, W2[u][j..], y) for u in increasing
 *     order, carried in registers inside a super-tile and through y (in
 *     memory, exact) from one super-tile of units to the next.
 * Threads split phase 1 over (token tile, unit tile) and phase 2 over
 * (token tile, column tile): never the u or p sums, so no bit depends on the
 * thread count.
 */
#include "avx512_swiglu.h"

#include "backend.h"
#include "internal.h"
#include "parallel.h"
#include "vexp_avx512.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define HMX_SWG_TOKENS 64 /* tokens per super-tile */
#define HMX_SWG_UNITS 512 /* hidden units per super-tile */

#if defined(__GNUC__)
#define HMX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HMX_ALWAYS_INLINE inline
#endif

static inline __mmask16 lanes_upto(int64_t r) {
  return r <= 0 ? (__mmask16)0 : r >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1u);
}

/* Phase 1 for TT tokens (1, 2 or 4) and 32 hidden units u .. u+31 (`un`
 * of them valid): g[t][u'] = silu(a) * b, a and b sequential over p. */
static HMX_ALWAYS_INLINE void gate_tile(int TT, const float *x, int64_t ldx, const float *w1,
                                        const float *w3, int64_t h, int64_t d, int64_t un,
                                        float *g, int64_t ldg) {
  __m512 a[4][2], b[4][2];
  const __mmask16 m0 = lanes_upto(un), m1 = lanes_upto(un - 16);
  for (int t = 0; t < TT; t++) a[t][0] = a[t][1] = b[t][0] = b[t][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < d; p++) { /* §swiglu: a, b sequential over p from +0 */
    const __m512 w10 = _mm512_maskz_loadu_ps(m0, w1 + p * h), w11 = _mm512_maskz_loadu_ps(m1, w1 + p * h + 16);
    const __m512 w30 = _mm512_maskz_loadu_ps(m0, w3 + p * h), w31 = _mm512_maskz_loadu_ps(m1, w3 + p * h + 16);
    for (int t = 0; t < TT; t++) {
      const __m512 xv = _mm512_set1_ps(x[t * ldx + p]);
      a[t][0] = _mm512_fmadd_ps(xv, w10, a[t][0]);
      a[t][1] = _mm512_fmadd_ps(xv, w11, a[t][1]);
      b[t][0] = _mm512_fmadd_ps(xv, w30, b[t][0]);
      b[t][1] = _mm512_fmadd_ps(xv, w31, b[t][1]);
    }
  }
  for (int t = 0; t < TT; t++) { /* §swiglu, §E: g = silu(a) * b */
    _mm512_mask_storeu_ps(g + t * ldg, m0, _mm512_mul_ps(hmx_v16_siluf(a[t][0]), b[t][0]));
    if (m1) _mm512_mask_storeu_ps(g + t * ldg + 16, m1, _mm512_mul_ps(hmx_v16_siluf(a[t][1]), b[t][1]));
  }
}

/* Phase 2 for TT tokens (1, 2 or 4) and 64 output columns j .. j+63 (`jn`
 * valid): y = fma(g_u, W2[u][j..], y) for u = 0..un-1 in increasing order,
 * starting from +0 (first) or from y as left by the previous units. */
static HMX_ALWAYS_INLINE void down_tile(int TT, const float *g, int64_t ldg, const float *w2,
                                        int64_t dout, int64_t un, int first, float *y,
                                        int64_t ldy, int64_t jn) {
  __m512 acc[4][4];
  __mmask16 mk[4];
  for (int c = 0; c < 4; c++) mk[c] = lanes_upto(jn - 16 * c);
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      acc[t][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk[c], y + t * ldy + 16 * c);
  for (int64_t u = 0; u < un; u++) { /* §swiglu: y accumulates over u in order */
    const float *wr = w2 + u * dout;
    const __m512 v0 = _mm512_maskz_loadu_ps(mk[0], wr), v1 = _mm512_maskz_loadu_ps(mk[1], wr + 16);
    const __m512 v2 = _mm512_maskz_loadu_ps(mk[2], wr + 32), v3 = _mm512_maskz_loadu_ps(mk[3], wr + 48);
    for (int t = 0; t < TT; t++) {
      const __m512 gv = _mm512_set1_ps(g[t * ldg + u]);
      acc[t][0] = _mm512_fmadd_ps(gv, v0, acc[t][0]);
      acc[t][1] = _mm512_fmadd_ps(gv, v1, acc[t][1]);
      acc[t][2] = _mm512_fmadd_ps(gv, v2, acc[t][2]);
      acc[t][3] = _mm512_fmadd_ps(gv, v3, acc[t][3]);
    }
  }
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      if (mk[c]) _mm512_mask_storeu_ps(y + t * ldy + 16 * c, mk[c], acc[t][c]);
}

hmx_status hmx_avx512_swiglu(const hmx_swiglu_args *s) {
  const int64_t T = s->t, d = s->d, h = s->h, dout = s->d_out;
  if (T <= 0 || dout <= 0) return HMX_OK;
  if (h <= 0) { /* no hidden unit: y stays +0 (§swiglu) */
    memset(s->y, 0, (size_t)(T * dout) * sizeof(float));
    return HMX_OK;
  }
  const int64_t ts = T < HMX_SWG_TOKENS ? T : HMX_SWG_TOKENS;
  const int64_t us = h < HMX_SWG_UNITS ? h : HMX_SWG_UNITS;
  float *gbuf = hmx_alloc_array((size_t)(ts * us), sizeof(float));
  if (!gbuf) return HMX_ERR_NO_MEMORY;
  for (int64_t t0 = 0; t0 < T; t0 += ts) {
    const int64_t tn = T - t0 < ts ? T - t0 : ts, ntt = (tn + 3) / 4;
    const float *x = s->x + t0 * d;
    float *y = s->y + t0 * dout;
    for (int64_t u0 = 0; u0 < h; u0 += us) { /* §swiglu: unit blocks in increasing order */
      const int64_t un = h - u0 < us ? h - u0 : us;
      /* Phase 1: g for tn tokens x un units; items (unit tile, token tile). */
      const int64_t nuc = (un + 31) / 32, items1 = nuc * ntt;
      const int nt1 = hmx_thread_count(s->threads, items1);
      HMX_OMP_FOR(nt1)
      for (int64_t idx = 0; idx < items1; idx++) {
        const int64_t uc = idx / ntt, t = (idx % ntt) * 4, rows = tn - t < 4 ? tn - t : 4;
        const int64_t u = u0 + uc * 32, len = un - uc * 32;
        const float *xt = x + t * d;
        float *g = gbuf + t * us + uc * 32;
        if (rows == 4) gate_tile(4, xt, d, s->w1 + u, s->w3 + u, h, d, len, g, us);
        else if (rows >= 2) gate_tile(2, xt, d, s->w1 + u, s->w3 + u, h, d, len, g, us);
        else gate_tile(1, xt, d, s->w1 + u, s->w3 + u, h, d, len, g, us);
        if (rows == 3) gate_tile(1, xt + 2 * d, d, s->w1 + u, s->w3 + u, h, d, len, g + 2 * us, us);
      }
      /* Phase 2: y for tn tokens x dout columns; items (column tile, token tile). */
      const int64_t njc = (dout + 63) / 64, items2 = njc * ntt;
      const int nt2 = hmx_thread_count(s->threads, items2);
      HMX_OMP_FOR(nt2)
      for (int64_t idx = 0; idx < items2; idx++) {
        const int64_t jc = idx / ntt, t = (idx % ntt) * 4, rows = tn - t < 4 ? tn - t : 4;
        const int64_t j = jc * 64, jn = dout - j;
        const float *g = gbuf + t * us, *w2 = s->w2 + u0 * dout + j;
        float *yt = y + t * dout + j;
        const int first = u0 == 0;
        if (rows == 4) down_tile(4, g, us, w2, dout, un, first, yt, dout, jn);
        else if (rows >= 2) down_tile(2, g, us, w2, dout, un, first, yt, dout, jn);
        else down_tile(1, g, us, w2, dout, un, first, yt, dout, jn);
        if (rows == 3) down_tile(1, g + 2 * us, us, w2, dout, un, first, yt + 2 * dout, dout, jn);
      }
    }
  }
  free(gbuf);
  return HMX_OK;
}
