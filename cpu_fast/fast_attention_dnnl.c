/* Fast-tier attention with its two products through oneDNN's dnnl_sgemm
 * (docs/NUMERICS.md, "Fast tier", attention): for one (batch, query head,
 * tile of queries), key blocks in order; per block S = scale Q K^T in one
 * sgemm, the online softmax on the rows of S (running max m, running sum l,
 * the unnormalized output rescaled by exp(m_old - m_new), exp by the ISA's
 * fast vexp: SLEEF's u10 or hmx_expf), then O += P V in a second sgemm.
 * K and V are read in place (sgemm's leading dimensions skip the other
 * heads). A block in which some row sees only part of the keys (the causal
 * diagonal) or none of a row's scores is finite takes the per-row loop of
 * the portable kernel instead of the second sgemm, so masked keys are never
 * multiplied (0 * inf would make a NaN the exact result does not have).
 *
 * Why: the portable kernel (fast_kernels_impl.h) computes each score as a
 * dot product with a horizontal reduction; at S = 1024 (12 heads, D = 64,
 * causal, 1 thread, Zen 4) it took 137 ms, this kernel 70 ms, the exact
 * avx512 kernel 33 ms: the sgemm calls take about a third, the row loops
 * here (compiled for the baseline ISA) the rest. Used for Sq > 4 only
 * (fast_table.c). The bound is that of the portable kernel: the sums are
 * over the same terms in some order, at most ceil(Skv'/64) rescalings. */
#include "cpu_fast.h"
#include "internal.h"
#include "parallel.h"

#include <dnnl.h>
#include <math.h>
#include <stdlib.h>

#define AT_QT 64  /* queries per tile */
#define AT_KB 256 /* keys per block (a multiple of 64: no more rescalings than the bound's) */

typedef struct at_work {
  float *s;   /* [qt, kb + 1]: scores, then p; the column kb holds alpha */
  float *acc; /* [qt, d] unnormalized output */
  float *m, *l; /* [qt] */
  int64_t *nr;  /* [qt]: keys of the current block the row takes (0: none) */
} at_work;

/* One row's softmax update from its first nr keys of a block, the scores in
 * row (already scaled): max, p = exp(s - max) in place, sum, and acc
 * rescaled; acc += p V is the caller's. Returns 0 when the row takes no
 * part (nr <= 0 or every score -inf). */
static int at_row_softmax(float *row, int64_t nr, float *acc_r, float *m_r, float *l_r, int64_t d,
                          void (*vexp)(float *, int64_t)) {
  if (nr <= 0) return 0;
  float bm = -INFINITY;
  for (int64_t j = 0; j < nr; j++) bm = row[j] > bm ? row[j] : bm;
  const float mnew = bm > *m_r ? bm : *m_r;
  if (mnew == -INFINITY) return 0; /* a block of -inf scores adds nothing */
  for (int64_t j = 0; j < nr; j++) row[j] -= mnew;
  row[nr] = *m_r - mnew; /* -inf on the first block: exp gives 0 */
  vexp(row, nr + 1);
  const float alpha = row[nr];
  float psum = 0.0f;
  for (int64_t j = 0; j < nr; j++) psum += row[j];
  *l_r = *l_r * alpha + psum;
  for (int64_t c = 0; c < d; c++) acc_r[c] *= alpha;
  *m_r = mnew;
  return 1;
}

/* One (batch, query head, tile of queries [i0, i1)); 0, or a dnnl status. */
static int at_tile(const hmx_attention_args *a, int64_t bi, int64_t h, int64_t i0, int64_t i1,
                   const at_work *w, void (*vexp)(float *, int64_t)) {
  const int64_t d = a->d, g = h / (a->hq / a->hkv);
  const int64_t krow = a->hkv * d, qrow = a->hq * d, tq = i1 - i0;
  const int64_t lds = AT_KB + 1;
  const float *q = a->q + (bi * a->sq + i0) * qrow + h * d;
  const float *kbase = a->k + bi * a->skv * krow + g * d;
  const float *vbase = a->v + bi * a->skv * krow + g * d;
  int64_t kmax = a->causal ? a->q_offset + i1 : a->skv;
  if (kmax > a->skv) kmax = a->skv;
  for (int64_t r = 0; r < tq; r++) {
    w->m[r] = -INFINITY;
    w->l[r] = 0.0f;
    for (int64_t c = 0; c < d; c++) w->acc[r * d + c] = 0.0f;
  }
  for (int64_t kb = 0; kb < kmax; kb += AT_KB) {
    const int64_t nk = kmax - kb < AT_KB ? kmax - kb : AT_KB;
    dnnl_status_t st = dnnl_sgemm('N', 'T', tq, nk, d, a->scale, q, qrow, kbase + kb * krow, krow,
                                  0.0f, w->s, lds);
    if (st != dnnl_success) return (int)st;
    /* nmin: the keys every row takes (the causal diagonal cuts the rest) */
    int64_t nmin = nk;
    for (int64_t r = 0; r < tq; r++) {
      const int64_t lim = a->causal ? a->q_offset + i0 + r + 1 : a->skv;
      const int64_t nr = lim - kb < nk ? lim - kb : nk;
      const int used = at_row_softmax(w->s + r * lds, nr, w->acc + r * d, &w->m[r], &w->l[r], d, vexp);
      w->nr[r] = used ? nr : 0;
      if (w->nr[r] < nmin) nmin = w->nr[r];
    }
    if (nmin > 0) { /* O += P V over the keys all rows take: one sgemm */
      st = dnnl_sgemm('N', 'N', tq, d, nmin, 1.0f, w->s, lds, vbase + kb * krow, krow, 1.0f,
                      w->acc, d);
      if (st != dnnl_success) return (int)st;
    }
    for (int64_t r = 0; r < tq; r++) { /* the rest, row by row: never a masked key */
      const float *row = w->s + r * lds;
      float *o = w->acc + r * d;
      for (int64_t j = nmin; j < w->nr[r]; j++) {
        const float p = row[j], *vj = vbase + (kb + j) * krow;
        for (int64_t c = 0; c < d; c++) o[c] += p * vj[c];
      }
    }
  }
  for (int64_t r = 0; r < tq; r++) {
    float *out = a->o + (bi * a->sq + i0 + r) * qrow + h * d;
    const float sum = w->l[r]; /* one division per output, as in the exact tier */
    for (int64_t c = 0; c < d; c++) out[c] = w->acc[r * d + c] / sum;
  }
  return 0;
}

hmx_status hmx_fast_attention_dnnl(const hmx_attention_args *a) {
  if (a->b == 0 || a->sq == 0 || a->hq == 0 || a->d == 0) return HMX_OK;
  const int64_t qt = AT_QT;
  const int64_t tiles = (a->sq + qt - 1) / qt, work = a->b * a->hq * tiles;
  const int nt = hmx_thread_count(a->threads, work);
  const int64_t per = qt * (AT_KB + 1) + qt * a->d + 2 * qt; /* s, acc, m, l */
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  int64_t *nrs = hmx_alloc_array((size_t)nt * (size_t)qt, sizeof(int64_t));
  int *failed = hmx_alloc_array((size_t)nt, sizeof(int));
  if (!scratch || !nrs || !failed) {
    free(scratch), free(nrs), free(failed);
    return hmx_fail(HMX_ERR_NO_MEMORY, "attention (fast): out of memory");
  }
  void (*vexp)(float *, int64_t) = hmx_fast_kernels_pick()->vexp;
  const int64_t chunk = (work + nt - 1) / nt;
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++) {
    float *mine = scratch + (int64_t)t * per;
    at_work w = {mine, mine + qt * (AT_KB + 1), NULL, NULL, nrs + (int64_t)t * qt};
    w.m = w.acc + qt * a->d;
    w.l = w.m + qt;
    failed[t] = 0;
    const int64_t w1 = (t + 1) * chunk < work ? (t + 1) * chunk : work;
    for (int64_t it = t * chunk; it < w1 && !failed[t]; it++) {
      const int64_t tile = it % tiles, bh = it / tiles;
      const int64_t h = bh % a->hq, bi = bh / a->hq;
      const int64_t i0 = tile * qt, i1 = i0 + qt < a->sq ? i0 + qt : a->sq;
      failed[t] = at_tile(a, bi, h, i0, i1, &w, vexp);
    }
  }
  int st = 0;
  for (int t = 0; t < nt; t++)
    if (failed[t]) st = failed[t];
  free(scratch), free(nrs), free(failed);
  if (st)
    return hmx_fail(HMX_ERR_INTERNAL, "attention (fast): dnnl_sgemm failed (dnnl status %d)", st);
  return HMX_OK;
}
