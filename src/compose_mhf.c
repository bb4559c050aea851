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
 * Threads: the heads of a chunk in parallel when there are enough of them
 * (each head's kernels then single-threaded), else every kernel call splits
 * its own rows/columns; no bit depends on which. */
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
  hmx_gemm_args g = {a, b, NULL, c, m, n, kk, 0, threads, HMX_F32, NULL, NULL, 0, 0, NULL};
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

/* Heads run in parallel when there are at least two threads' worth of them:
 * one parallel region per chunk, each head's kernels single-threaded on the
 * thread's own scratch (heads write disjoint columns of o). Otherwise the
 * heads run in turn and each kernel call splits its own work. Either way
 * every output is computed by the same operations in the same order. */
#if defined(_OPENMP)
#include <omp.h>
#define THREAD_ID() omp_get_thread_num()
#else
#define THREAD_ID() 0
#endif

/* mhffn head i of a chunk: swiglu on the contiguous copy of q_i. */
static hmx_status mhffn_head(const hmx_mhffn_args *s, const hmx_compose_kernels *k,
                             const float *q, float *o, int64_t rows, int64_t i, float *scratch,
                             int threads) {
  const int64_t hd = s->heads * s->dh, dh = s->dh, f = s->f;
  float *qi = scratch, *oi = scratch + rows * dh;
  gather_cols(q, hd, i * dh, dh, rows, qi);
  hmx_swiglu_args sw = {qi, s->w1 + i * dh * f, s->w3 + i * dh * f, s->w2 + i * f * dh, oi,
                        rows, dh, f, dh, f < 256 ? f : 256, threads, HMX_F32, NULL, NULL, NULL,
                        HMX_QLAYOUT_ROWS, NULL, NULL, NULL};
  hmx_status st = k->swiglu(&sw);
  scatter_cols(oi, dh, rows, o, hd, i * dh);
  return st;
}

/* flashmhf head i of a chunk (the steps of the file comment). */
static hmx_status flash_head(const hmx_flashmhf_args *s, const hmx_compose_kernels *k,
                             const float *q, float *o, int64_t rows, int64_t i, float *scratch,
                             int threads) {
  const int64_t hd = s->heads * s->dh, dh = s->dh, E = s->e, de = s->de, ed = s->e * s->de;
  float *qi = scratch, *oi = qi + rows * dh, *w = oi + rows * dh, *av = w + rows * E;
  float *bv = av + rows * de, *h = bv + rows * de;
  gather_cols(q, hd, i * dh, dh, rows, qi);
  /* gate: z = q_i G_i (gemm), then per token sigmoid and the sum over e */
  hmx_status st = gemm(k, qi, s->gate + i * dh * E, w, rows, E, dh, threads);
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
    st = gemm(k, qi, s->wk + off, av, rows, de, dh, threads);
    if (st == HMX_OK) st = gemm(k, qi, s->wu + off, bv, rows, de, dh, threads);
    for (int64_t r = 0; r < rows && st == HMX_OK; r++)
      k->gated_silu(av + r * de, bv + r * de, w[r * E + e], h + r * ed + e * de, de);
  }
  if (st == HMX_OK) st = gemm(k, h, s->wv + i * ed * dh, oi, rows, dh, ed, threads);
  scatter_cols(oi, dh, rows, o, hd, i * dh);
  return st;
}

typedef enum { MHF_NAIVE, MHF_FLASH } mhf_kind;

/* The shared skeleton: chunks of tokens, q = x W_in, the heads, y = o W_out. */
static hmx_status mhf_run(mhf_kind kind, const void *args, const hmx_compose_kernels *k,
                          const float *x, const float *w_in, const float *w_out, float *y,
                          int64_t t, int64_t d, int64_t heads, int64_t dh, int64_t d_out,
                          int64_t head_floats_per_row, int threads) {
  const int64_t hd = heads * dh, tc = t < CHUNK ? t : CHUNK;
  const int nth = hmx_thread_count(threads, heads);
  const int inner = nth > 1 ? 1 : threads; /* threads of each head's kernels */
  float *q = hmx_alloc_array((size_t)(tc * hd), sizeof *q);
  float *o = hmx_alloc_array((size_t)(tc * hd), sizeof *o);
  float *scratch = hmx_alloc_array((size_t)(nth * tc * head_floats_per_row), sizeof *scratch);
  hmx_status *hst = hmx_alloc_array((size_t)heads, sizeof *hst);
  hmx_status st = q && o && scratch && hst ? HMX_OK : HMX_ERR_NO_MEMORY;
  for (int64_t t0 = 0; t0 < t && st == HMX_OK; t0 += tc) {
    const int64_t rows = t - t0 < tc ? t - t0 : tc;
    st = gemm(k, x + t0 * d, w_in, q, rows, hd, d, threads);
    if (st != HMX_OK) break;
    HMX_OMP_FOR(nth)
    for (int64_t i = 0; i < heads; i++) { /* heads independent: any split */
      float *mine = scratch + (int64_t)(nth > 1 ? THREAD_ID() : 0) * tc * head_floats_per_row;
      hst[i] = kind == MHF_NAIVE ? mhffn_head(args, k, q, o, rows, i, mine, inner)
                                 : flash_head(args, k, q, o, rows, i, mine, inner);
    }
    for (int64_t i = 0; i < heads; i++)
      if (hst[i] != HMX_OK) st = hst[i];
    if (st == HMX_OK) st = gemm(k, o, w_out, y + t0 * d_out, rows, d_out, hd, threads);
  }
  free(q); free(o); free(scratch); free(hst);
  return st;
}

hmx_status hmx_compose_mhffn(const hmx_mhffn_args *s, const hmx_compose_kernels *k) {
  if (s->t <= 0 || s->d <= 0 || s->heads * s->dh <= 0 || s->f <= 0 || s->d_out <= 0)
    return hmx_ref_mhffn(s);
  return mhf_run(MHF_NAIVE, s, k, s->x, s->w_in, s->w_out, s->y, s->t, s->d, s->heads, s->dh,
                 s->d_out, 2 * s->dh, s->threads);
}

hmx_status hmx_compose_flashmhf(const hmx_flashmhf_args *s, const hmx_compose_kernels *k) {
  if (s->t <= 0 || s->d <= 0 || s->heads * s->dh <= 0 || s->e <= 0 || s->de <= 0 ||
      s->d_out <= 0)
    return hmx_ref_flashmhf(s);
  /* per row: q_i, o_i (dh each), the gate weights (E), a and b (de each),
   * the gated hidden values of all E sub-networks (E * de) */
  return mhf_run(MHF_FLASH, s, k, s->x, s->w_in, s->w_out, s->y, s->t, s->d, s->heads, s->dh,
                 s->d_out, 2 * s->dh + s->e + 2 * s->de + s->e * s->de, s->threads);
}
