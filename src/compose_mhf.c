/* mhffn and flashmhf on a backend's gemm and swiglu (docs/NUMERICS.md
 * §mhffn, §flashmhf; ref/mhffn.c, ref/flashmhf.c).
 *
 * Tokens are independent, so they go in chunks of CHUNK rows (bounding the
 * scratch); inside a chunk every product is a gemm over the chunk's rows:
 *   q = x W_in                     gemm: fma chain over d from +0 (§gemm)
 *   mhffn, head i                  swiglu on the contiguous copy of q_i with
 *                                  h = f: a, b fma chains over dh from +0,
 *                                  g = silu(a) * b, o = fma chain over u
 *                                  from +0 (§swiglu = ref/mhffn.c's head loop)
 *   flashmhf, head i
 *     z = q_i G_i                  gemm over dh from +0
 *     w_e = sigmoid(z_e) / S       scalar (E values per token; hmx_sigmoidf,
 *                                  S summed over e in order): not worth vectors
 *     a, b = q_i K_ie, q_i U_ie    gemm over dh from +0, one call per e
 *     h = (silu(a) * b) * w_e      the backend's vector gated_silu
 *     o_i = h V_i                  ONE gemm over the E*de hidden units (e, u)
 *                                  in order from +0: V_i [E, de, dh] is
 *                                  exactly the [E*de, dh] matrix, and the
 *                                  reference's accumulator runs over (e, u)
 *                                  in that order (blocks do not matter)
 *   y = concat(o) W_out            gemm over H*dh from +0
 * Each gemm call splits its rows/columns over the backend's threads. */
#include "compose.h"
#include "canon.h"
#include "internal.h"
#include "parallel.h"
#include "ref.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK = 256 };

static hmx_status gemm(const hmx_compose_kernels *k, const float *a, const float *b, float *c,
                       int64_t m, int64_t n, int64_t kk, int threads) {
  hmx_gemm_args g = {a, b, NULL, c, m, n, kk, 0, threads, HMX_F32, NULL};
  return k->gemm(&g);
}

/* dst[r][0..w) = src[r][c0 .. c0+w) for r < rows (src has ld columns). */
static void gather_cols(const float *src, int64_t ld, int64_t c0, int64_t w, int64_t rows,
                        float *dst) {
  for (int64_t r = 0; r < rows; r++)
    memcpy(dst + r * w, src + r * ld + c0, (size_t)w * sizeof(float));
}
static void scatter_cols(const float *src, int64_t w, int64_t rows, float *dst, int64_t ld,
                         int64_t c0) {
  for (int64_t r = 0; r < rows; r++)
    memcpy(dst + r * ld + c0, src + r * w, (size_t)w * sizeof(float));
}

hmx_status hmx_compose_mhffn(const hmx_mhffn_args *s, const hmx_compose_kernels *k) {
  const int64_t hd = s->heads * s->dh, dh = s->dh, f = s->f;
  if (s->t <= 0 || s->d <= 0 || hd <= 0 || f <= 0 || s->d_out <= 0) return hmx_ref_mhffn(s);
  const int64_t tc = s->t < CHUNK ? s->t : CHUNK;
  float *q = hmx_alloc_array((size_t)(tc * hd), sizeof *q);
  float *o = hmx_alloc_array((size_t)(tc * hd), sizeof *o);
  float *qi = hmx_alloc_array((size_t)(tc * dh), sizeof *qi);
  float *oi = hmx_alloc_array((size_t)(tc * dh), sizeof *oi);
  hmx_status st = q && o && qi && oi ? HMX_OK : HMX_ERR_NO_MEMORY;
  for (int64_t t0 = 0; t0 < s->t && st == HMX_OK; t0 += tc) {
    const int64_t rows = s->t - t0 < tc ? s->t - t0 : tc;
    st = gemm(k, s->x + t0 * s->d, s->w_in, q, rows, hd, s->d, s->threads);
    for (int64_t i = 0; i < s->heads && st == HMX_OK; i++) {
      gather_cols(q, hd, i * dh, dh, rows, qi);
      hmx_swiglu_args sw = {qi, s->w1 + i * dh * f, s->w3 + i * dh * f, s->w2 + i * f * dh, oi,
                            rows, dh, f, dh, f < 256 ? f : 256, s->threads, HMX_F32,
                            NULL, NULL, NULL};
      st = k->swiglu(&sw);
      scatter_cols(oi, dh, rows, o, hd, i * dh);
    }
    if (st == HMX_OK) st = gemm(k, o, s->w_out, s->y + t0 * s->d_out, rows, s->d_out, hd, s->threads);
  }
  free(q); free(o); free(qi); free(oi);
  return st;
}

hmx_status hmx_compose_flashmhf(const hmx_flashmhf_args *s, const hmx_compose_kernels *k) {
  const int64_t hd = s->heads * s->dh, dh = s->dh, E = s->e, de = s->de, ed = s->e * s->de;
  if (s->t <= 0 || s->d <= 0 || hd <= 0 || E <= 0 || de <= 0 || s->d_out <= 0)
    return hmx_ref_flashmhf(s);
  const int64_t tc = s->t < CHUNK ? s->t : CHUNK;
  float *q = hmx_alloc_array((size_t)(tc * hd), sizeof *q);
  float *o = hmx_alloc_array((size_t)(tc * hd), sizeof *o);
  float *qi = hmx_alloc_array((size_t)(tc * dh), sizeof *qi);
  float *oi = hmx_alloc_array((size_t)(tc * dh), sizeof *oi);
  float *w = hmx_alloc_array((size_t)(tc * E), sizeof *w);
  float *ab = hmx_alloc_array((size_t)(2 * tc * de), sizeof *ab);
  float *h = hmx_alloc_array((size_t)(tc * ed), sizeof *h);
  hmx_status st = q && o && qi && oi && w && ab && h ? HMX_OK : HMX_ERR_NO_MEMORY;
  float *av = ab, *bv = ab + tc * de;
  for (int64_t t0 = 0; t0 < s->t && st == HMX_OK; t0 += tc) {
    const int64_t rows = s->t - t0 < tc ? s->t - t0 : tc;
    st = gemm(k, s->x + t0 * s->d, s->w_in, q, rows, hd, s->d, s->threads);
    for (int64_t i = 0; i < s->heads && st == HMX_OK; i++) {
      gather_cols(q, hd, i * dh, dh, rows, qi);
      /* gate: z = q_i G_i (gemm), then per token sigmoid and the sum over e */
      st = gemm(k, qi, s->gate + i * dh * E, w, rows, E, dh, s->threads);
      for (int64_t r = 0; r < rows && st == HMX_OK; r++) {
        float *wr = w + r * E, sum = 0.0f;
        for (int64_t e = 0; e < E; e++) {
          wr[e] = hmx_sigmoidf(wr[e]);
          sum = sum + wr[e];
        }
        for (int64_t e = 0; e < E; e++) wr[e] = wr[e] / sum;
      }
      for (int64_t e = 0; e < E && st == HMX_OK; e++) {
        const int64_t off = (i * E + e) * dh * de;
        st = gemm(k, qi, s->wk + off, av, rows, de, dh, s->threads);
        if (st == HMX_OK) st = gemm(k, qi, s->wu + off, bv, rows, de, dh, s->threads);
        if (st != HMX_OK) break;
        const int nt = hmx_thread_count(s->threads, rows);
        HMX_OMP_FOR(nt)
        for (int64_t r = 0; r < rows; r++) /* rows independent: any split */
          k->gated_silu(av + r * de, bv + r * de, w[r * E + e], h + r * ed + e * de, de);
      }
      if (st == HMX_OK) st = gemm(k, h, s->wv + i * ed * dh, oi, rows, dh, ed, s->threads);
      scatter_cols(oi, dh, rows, o, hd, i * dh);
    }
    if (st == HMX_OK) st = gemm(k, o, s->w_out, s->y + t0 * s->d_out, rows, s->d_out, hd, s->threads);
  }
  free(q); free(o); free(qi); free(oi); free(w); free(ab); free(h);
  return st;
}
