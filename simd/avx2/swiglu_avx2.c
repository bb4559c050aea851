/* AVX2 SwiGLU (docs/NUMERICS.md §swiglu), bit-identical to ref/swiglu.c for
 * every block size. The same design as simd/avx512/swiglu_avx512.c with
 * 8-lane registers (16 of them, hence smaller register tiles):
 *   super-tiles of 64 tokens x 512 hidden units (the result does not depend
 *   on the block size, so the kernel picks its own);
 *   phase 1 (gate): tiles of 2 tokens x 16 hidden units; a_u, b_u are vector
 *     chains acc = fma(broadcast x[p], W1[p][u..u+7], acc) over p = 0..d-1 in
 *     order, g = silu(a) * b with the exact vector SiLU (IEEE division);
 *   phase 2 (down): tiles of 2 tokens x 32 output columns;
 *     y[j..j+7] = fma(broadcast g_u, W2[u][j..], y) for u in increasing order,
 *     carried in registers within a super-tile and through y (in memory,
 *     exact) from one super-tile of units to the next.
 * Threads split phase 1 over (token tile, unit tile) and phase 2 over
 * (token tile, column tile): never the u or p sums, so no bit depends on the
 * thread count.
 */
#include "avx2_swiglu.h"

#include "backend.h"
#include "internal.h"
#include "parallel.h"
#include "vexp_avx2.h"

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

/* All-ones in lanes 0 .. r-1 (r may be <= 0 or >= 8). */
static inline __m256i lanes_upto(int64_t r) {
  int v = r < 0 ? 0 : r > 8 ? 8 : (int)r;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Phase 1 for TT tokens (1 or 2) and 16 hidden units u .. u+15 (`un` of them
 * valid): g[t][u'] = silu(a) * b, a and b sequential over p. */
static HMX_ALWAYS_INLINE void gate_tile(int TT, const float *x, int64_t ldx, const float *w1,
                                        const float *w3, int64_t h, int64_t d, int64_t un,
                                        float *g, int64_t ldg) {
  __m256 a[2][2], b[2][2];
  const __m256i m0 = lanes_upto(un), m1 = lanes_upto(un - 8);
  for (int t = 0; t < TT; t++) a[t][0] = a[t][1] = b[t][0] = b[t][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < d; p++) { /* §swiglu: a, b sequential over p from +0 */
    const __m256 w10 = _mm256_maskload_ps(w1 + p * h, m0), w11 = _mm256_maskload_ps(w1 + p * h + 8, m1);
    const __m256 w30 = _mm256_maskload_ps(w3 + p * h, m0), w31 = _mm256_maskload_ps(w3 + p * h + 8, m1);
    for (int t = 0; t < TT; t++) {
      const __m256 xv = _mm256_broadcast_ss(x + t * ldx + p);
      a[t][0] = _mm256_fmadd_ps(xv, w10, a[t][0]);
      a[t][1] = _mm256_fmadd_ps(xv, w11, a[t][1]);
      b[t][0] = _mm256_fmadd_ps(xv, w30, b[t][0]);
      b[t][1] = _mm256_fmadd_ps(xv, w31, b[t][1]);
    }
  }
  for (int t = 0; t < TT; t++) { /* §swiglu, §E: g = silu(a) * b */
    _mm256_maskstore_ps(g + t * ldg, m0, _mm256_mul_ps(hmx_v8_siluf(a[t][0]), b[t][0]));
    if (un > 8) _mm256_maskstore_ps(g + t * ldg + 8, m1, _mm256_mul_ps(hmx_v8_siluf(a[t][1]), b[t][1]));
  }
}

/* Phase 2 for TT tokens (1 or 2) and 32 output columns j .. j+31 (`jn`
 * valid): y = fma(g_u, W2[u][j..], y) for u = 0..un-1 in increasing order,
 * from +0 (first) or from y as left by the previous units. */
static HMX_ALWAYS_INLINE void down_tile(int TT, const float *g, int64_t ldg, const float *w2,
                                        int64_t dout, int64_t un, int first, float *y,
                                        int64_t ldy, int64_t jn) {
  __m256 acc[2][4];
  __m256i mk[4];
  for (int c = 0; c < 4; c++) mk[c] = lanes_upto(jn - 8 * c);
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      acc[t][c] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + t * ldy + 8 * c, mk[c]);
  for (int64_t u = 0; u < un; u++) { /* §swiglu: y accumulates over u in order */
    const float *wr = w2 + u * dout;
    const __m256 v0 = _mm256_maskload_ps(wr, mk[0]), v1 = _mm256_maskload_ps(wr + 8, mk[1]);
    const __m256 v2 = _mm256_maskload_ps(wr + 16, mk[2]), v3 = _mm256_maskload_ps(wr + 24, mk[3]);
    for (int t = 0; t < TT; t++) {
      const __m256 gv = _mm256_broadcast_ss(g + t * ldg + u);
      acc[t][0] = _mm256_fmadd_ps(gv, v0, acc[t][0]);
      acc[t][1] = _mm256_fmadd_ps(gv, v1, acc[t][1]);
      acc[t][2] = _mm256_fmadd_ps(gv, v2, acc[t][2]);
      acc[t][3] = _mm256_fmadd_ps(gv, v3, acc[t][3]);
    }
  }
  for (int t = 0; t < TT; t++)
    for (int c = 0; c < 4; c++)
      if (jn > 8 * c) _mm256_maskstore_ps(y + t * ldy + 8 * c, mk[c], acc[t][c]);
}

hmx_status hmx_avx2_swiglu(const hmx_swiglu_args *s) {
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
    const int64_t tn = T - t0 < ts ? T - t0 : ts, ntt = (tn + 1) / 2;
    const float *x = s->x + t0 * d;
    float *y = s->y + t0 * dout;
    for (int64_t u0 = 0; u0 < h; u0 += us) { /* §swiglu: unit blocks in increasing order */
      const int64_t un = h - u0 < us ? h - u0 : us;
      /* Phase 1: g for tn tokens x un units; items (unit tile, token tile). */
      const int64_t nuc = (un + 15) / 16, items1 = nuc * ntt;
      const int nt1 = hmx_thread_count(s->threads, items1);
      HMX_OMP_FOR(nt1)
      for (int64_t idx = 0; idx < items1; idx++) {
        const int64_t uc = idx / ntt, t = (idx % ntt) * 2;
        const int64_t u = u0 + uc * 16, len = un - uc * 16;
        const float *xt = x + t * d;
        float *g = gbuf + t * us + uc * 16;
        if (tn - t >= 2) gate_tile(2, xt, d, s->w1 + u, s->w3 + u, h, d, len, g, us);
        else gate_tile(1, xt, d, s->w1 + u, s->w3 + u, h, d, len, g, us);
      }
      /* Phase 2: y for tn tokens x dout columns; items (column tile, token tile). */
      const int64_t njc = (dout + 31) / 32, items2 = njc * ntt;
      const int nt2 = hmx_thread_count(s->threads, items2);
      HMX_OMP_FOR(nt2)
      for (int64_t idx = 0; idx < items2; idx++) {
        const int64_t jc = idx / ntt, t = (idx % ntt) * 2;
        const int64_t j = jc * 32, jn = dout - j;
        const float *g = gbuf + t * us, *w2 = s->w2 + u0 * dout + j;
        float *yt = y + t * dout + j;
        if (tn - t >= 2) down_tile(2, g, us, w2, dout, un, u0 == 0, yt, dout, jn);
        else down_tile(1, g, us, w2, dout, un, u0 == 0, yt, dout, jn);
      }
    }
  }
  free(gbuf);
  return HMX_OK;
}
