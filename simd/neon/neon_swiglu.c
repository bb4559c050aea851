/* neon blocked SwiGLU (docs/NUMERICS.md §swiglu). Per token, hidden units in
 * blocks of `block`:
 *   a_u = fma over p of x[p] * W1[p][u] from +0, likewise b_u with W3: 16 (then
 *         4) units at a time, one unit per lane (vfmaq_n_f32), p in order;
 *   g_u = silu(a_u) * b_u, with the vector canonical exp and vdivq_f32;
 *   y_j = fma(g_u, W2[u][j], y_j), u increasing: vectorized over j.
 * y accumulates over u = 0 .. h-1 in order whatever the block, as in the
 * reference. Threads split the tokens; each thread has its own g buffer. */
#include "neon_swiglu.h"
#include "neon_math.h"
#include "parallel.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

static void token(const hmx_swiglu_args *s, const float *x, float *y, float *g) {
  const int64_t d = s->d, h = s->h, dout = s->d_out;
  for (int64_t j = 0; j < dout; j++) y[j] = 0.0f;
  for (int64_t u0 = 0; u0 < h; u0 += s->block) {
    const int64_t len = h - u0 < s->block ? h - u0 : s->block;
    int64_t u = 0;
    for (; u + 16 <= len; u += 16) {
      float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
      float32x4_t b0 = a0, b1 = a0, b2 = a0, b3 = a0;
      const float *w1 = s->w1 + u0 + u, *w3 = s->w3 + u0 + u;
      for (int64_t p = 0; p < d; p++, w1 += h, w3 += h) {
        const float xp = x[p];
        a0 = vfmaq_n_f32(a0, vld1q_f32(w1), xp);
        a1 = vfmaq_n_f32(a1, vld1q_f32(w1 + 4), xp);
        a2 = vfmaq_n_f32(a2, vld1q_f32(w1 + 8), xp);
        a3 = vfmaq_n_f32(a3, vld1q_f32(w1 + 12), xp);
        b0 = vfmaq_n_f32(b0, vld1q_f32(w3), xp);
        b1 = vfmaq_n_f32(b1, vld1q_f32(w3 + 4), xp);
        b2 = vfmaq_n_f32(b2, vld1q_f32(w3 + 8), xp);
        b3 = vfmaq_n_f32(b3, vld1q_f32(w3 + 12), xp);
      }
      vst1q_f32(g + u, vmulq_f32(hmx_neon_siluf(a0), b0));
      vst1q_f32(g + u + 4, vmulq_f32(hmx_neon_siluf(a1), b1));
      vst1q_f32(g + u + 8, vmulq_f32(hmx_neon_siluf(a2), b2));
      vst1q_f32(g + u + 12, vmulq_f32(hmx_neon_siluf(a3), b3));
    }
    for (; u + 4 <= len; u += 4) {
      float32x4_t a0 = vdupq_n_f32(0.0f), b0 = a0;
      const float *w1 = s->w1 + u0 + u, *w3 = s->w3 + u0 + u;
      for (int64_t p = 0; p < d; p++, w1 += h, w3 += h) {
        a0 = vfmaq_n_f32(a0, vld1q_f32(w1), x[p]);
        b0 = vfmaq_n_f32(b0, vld1q_f32(w3), x[p]);
      }
      vst1q_f32(g + u, vmulq_f32(hmx_neon_siluf(a0), b0));
    }
    if (u < len) { /* last 1-3 units: scalar dots, silu on a (partly unused) vector */
      float ga[4] = {0}, gb[4] = {0};
      for (int64_t k = 0; u + k < len; k++) {
        float av = 0.0f, bv = 0.0f;
        for (int64_t p = 0; p < d; p++) {
          av = fmaf(x[p], s->w1[p * h + u0 + u + k], av);
          bv = fmaf(x[p], s->w3[p * h + u0 + u + k], bv);
        }
        ga[k] = av;
        gb[k] = bv;
      }
      float gv[4];
      vst1q_f32(gv, vmulq_f32(hmx_neon_siluf(vld1q_f32(ga)), vld1q_f32(gb)));
      for (int64_t k = 0; u + k < len; k++) g[u + k] = gv[k];
    }
    /* y_j = fma(g_u, W2[u][j], y_j), u in order */
    int64_t j = 0;
    for (; j + 16 <= dout; j += 16) {
      float32x4_t y0 = vld1q_f32(y + j), y1 = vld1q_f32(y + j + 4);
      float32x4_t y2 = vld1q_f32(y + j + 8), y3 = vld1q_f32(y + j + 12);
      const float *w2 = s->w2 + u0 * dout + j;
      for (int64_t k = 0; k < len; k++, w2 += dout) {
        const float gk = g[k];
        y0 = vfmaq_n_f32(y0, vld1q_f32(w2), gk);
        y1 = vfmaq_n_f32(y1, vld1q_f32(w2 + 4), gk);
        y2 = vfmaq_n_f32(y2, vld1q_f32(w2 + 8), gk);
        y3 = vfmaq_n_f32(y3, vld1q_f32(w2 + 12), gk);
      }
      vst1q_f32(y + j, y0);
      vst1q_f32(y + j + 4, y1);
      vst1q_f32(y + j + 8, y2);
      vst1q_f32(y + j + 12, y3);
    }
    for (; j + 4 <= dout; j += 4) {
      float32x4_t y0 = vld1q_f32(y + j);
      const float *w2 = s->w2 + u0 * dout + j;
      for (int64_t k = 0; k < len; k++, w2 += dout) y0 = vfmaq_n_f32(y0, vld1q_f32(w2), g[k]);
      vst1q_f32(y + j, y0);
    }
    for (; j < dout; j++) {
      float acc = y[j];
      for (int64_t k = 0; k < len; k++) acc = fmaf(g[k], s->w2[(u0 + k) * dout + j], acc);
      y[j] = acc;
    }
  }
}

hmx_status hmx_neon_swiglu(const hmx_swiglu_args *s) {
  int nt = hmx_thread_count(s->threads, s->t);
  float *gbuf = hmx_alloc_array((size_t)(nt * s->block), sizeof *gbuf);
  if (!gbuf) return HMX_ERR_NO_MEMORY;
  HMX_OMP_FOR(nt)
  for (int c = 0; c < nt; c++) {
    int64_t lo, hi;
    hmx_neon_chunk(s->t, nt, c, &lo, &hi);
    for (int64_t t = lo; t < hi; t++) token(s, s->x + t * s->d, s->y + t * s->d_out, gbuf + c * s->block);
  }
  free(gbuf);
  return HMX_OK;
}
