/* Fast-tier attention with its two products through oneDNN's dnnl_sgemm
 * (docs/NUMERICS.md, "Fast tier", attention): for one (batch, kv head, tile
 * of query positions), the rows being every query head of the GQA group at
 * every position of the tile, key blocks in order; per block S = scale Q K^T
 * in one sgemm, the online-softmax step on the rows of S (running max m,
 * running sum l, the unnormalized output rescaled by exp(m_old - m_new) when
 * the max grows, exp by the ISA's fast vexp: SLEEF's u10 or hmx_expf), then
 * O += P V in a second sgemm. K and V are read in place (sgemm's leading
 * dimensions skip the other heads); the group's queries are packed. The
 * causal diagonal's keys, which only some rows of the tile take, are a block
 * of their own whose P V runs row by row (fk->att_pv_tail), so masked keys
 * are never multiplied (0 * inf would make a NaN the exact result does not
 * have); so does a block where some row has no finite score.
 *
 * Why: the row work (fk->att_block, att_pv_tail, att_finish) is compiled per
 * ISA in fast_kernels_*.c; here, compiled for the baseline ISA, it took two
 * thirds of the time. At S = 1024 (12 query / 4 kv heads, D = 64, causal,
 * Zen 4, exact and fast timed alternately in one process): 1 thread
 * 64-70 ms before (with 1 thread requested the sgemm calls also ran on both
 * cores), 23-24 ms now, exact avx512 33-34 ms. Used for Sq > 4 only
 * (fast_table.c). The bound is that of the portable kernel: the sums are
 * over the same terms in some order, at most ceil(Skv'/64) rescalings. */
#include "cpu_fast.h"
#include "internal.h"
#include "parallel.h"

#include <dnnl.h>
#include <math.h>
#include <stdlib.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#ifndef AT_QT
/* query positions per tile (times the GQA group: rows); 32 was faster than
 * 64 and 128 at S = 256 and 1024 (less of the diagonal in the row loop) */
#define AT_QT 32
#endif
#ifndef AT_KB
#define AT_KB 256 /* keys per block: at least 64, so no more rescalings than the bound's */
#endif
#define AT_LDS (AT_KB + 16) /* score row stride, padded off a multiple of 1 KiB */

/* One item's scratch. Rows are position-major (r = t * group + hh: the GQA
 * group's query heads of query position i0 + t are neighbours), so one pair
 * of sgemm calls serves the whole group and K, V are read once for it. */
typedef struct at_work {
  float *qp;    /* [rows, d]: the item's queries, packed */
  float *s;     /* [rows, AT_LDS]: scores, then p */
  float *acc;   /* [rows, d]: unnormalized output */
  float *m, *l; /* [rows] */
  int64_t *nr;  /* [rows]: keys of the current block the row takes (0: none) */
  float **out;  /* [rows]: output rows */
} at_work;

typedef struct at_item {
  const hmx_attention_args *a;
  const hmx_fast_kernels *fk;
  const float *kbase, *vbase; /* key / value j at base + j * ld */
  int64_t ld, bi, g, group, i0, tq, rows;
} at_item;

/* One key block [kb, kb + nk): S = scale Q K^T (sgemm), the rows' online
 * softmax step (fk->att_block), O += P V over the keys every row takes
 * (sgemm, any order), the rest row by row (fk->att_pv_tail). diag: the
 * causal diagonal's block, where the row of position i takes the keys
 * before q_offset + i + 1 only. Returns 0 or a dnnl status. */
static int at_block(const at_item *it, const at_work *w, int64_t kb, int64_t nk, int diag) {
  const hmx_attention_args *a = it->a;
  const int64_t d = a->d, R = it->rows;
  dnnl_status_t st = dnnl_sgemm('N', 'T', R, nk, d, a->scale, w->qp, d, it->kbase + kb * it->ld,
                                it->ld, 0.0f, w->s, AT_LDS);
  if (st != dnnl_success) return (int)st;
  for (int64_t r = 0; r < R; r++) {
    int64_t n = nk;
    if (diag) {
      const int64_t lim = a->q_offset + it->i0 + r / it->group + 1 - kb;
      n = lim < nk ? lim : nk;
    }
    w->nr[r] = n;
  }
  it->fk->att_block(w->s, AT_LDS, R, w->nr, w->acc, d, w->m, w->l);
  int64_t nmin = nk;
  for (int64_t r = 0; r < R; r++)
    if (w->nr[r] < nmin) nmin = w->nr[r];
  if (nmin > 0) {
    st = dnnl_sgemm('N', 'N', R, d, nmin, 1.0f, w->s, AT_LDS, it->vbase + kb * it->ld, it->ld,
                    1.0f, w->acc, d);
    if (st != dnnl_success) return (int)st;
  }
  if (nmin < nk) /* never a masked key: see fk_att_pv_tail */
    it->fk->att_pv_tail(w->s, AT_LDS, R, w->nr, nmin, it->vbase + kb * it->ld, it->ld, w->acc, d);
  return 0;
}

/* One (batch, kv head, tile of query positions [i0, i0 + tq)). Key blocks:
 * the keys every position of the tile sees (kfull of them) in blocks of
 * AT_KB, then, when causal, the diagonal's < tq keys that only some see.
 * A row of Skv' keys thus takes at most ceil(kfull / AT_KB) + 1 blocks,
 * ceil(kfull / AT_KB) <= ceil(Skv' / 64) rescalings (the bound's nb). */
static int at_item_run(const at_item *it, const at_work *w) {
  const hmx_attention_args *a = it->a;
  const int64_t d = a->d, R = it->rows, qrow = a->hq * d, gd = it->group * d;
  const int64_t bi = it->bi, h0 = it->g * it->group;
  for (int64_t t = 0; t < it->tq; t++) { /* pack the group's queries: gd floats per position */
    const float *src = a->q + (bi * a->sq + it->i0 + t) * qrow + h0 * d;
    for (int64_t c = 0; c < gd; c++) w->qp[t * gd + c] = src[c];
    for (int64_t hh = 0; hh < it->group; hh++)
      w->out[t * it->group + hh] = a->o + (bi * a->sq + it->i0 + t) * qrow + (h0 + hh) * d;
  }
  for (int64_t r = 0; r < R; r++) {
    w->m[r] = -INFINITY;
    w->l[r] = 0.0f;
  }
  for (int64_t c = 0; c < R * d; c++) w->acc[c] = 0.0f;
  int64_t kfull = a->skv, kmax = a->skv;
  if (a->causal) {
    kfull = a->q_offset + it->i0 + 1;
    kmax = a->q_offset + it->i0 + it->tq;
    kfull = kfull < 0 ? 0 : kfull > a->skv ? a->skv : kfull;
    kmax = kmax < kfull ? kfull : kmax > a->skv ? a->skv : kmax;
  }
  for (int64_t kb = 0; kb < kfull; kb += AT_KB) {
    const int st = at_block(it, w, kb, kfull - kb < AT_KB ? kfull - kb : AT_KB, 0);
    if (st) return st;
  }
  if (kmax > kfull) {
    const int st = at_block(it, w, kfull, kmax - kfull, 1);
    if (st) return st;
  }
  it->fk->att_finish(w->acc, w->l, R, d, w->out);
  return 0;
}

hmx_status hmx_fast_attention_dnnl(const hmx_attention_args *a) {
  if (a->b == 0 || a->sq == 0 || a->hq == 0 || a->d == 0) return HMX_OK;
  const int64_t group = a->hq / a->hkv, d = a->d;
  const int64_t qt = AT_QT < a->sq ? AT_QT : a->sq, R = qt * group;
  const int64_t tiles = (a->sq + qt - 1) / qt, work = a->b * a->hkv * tiles;
  const int nt = hmx_thread_count(a->threads, work);
  const int64_t per = R * d + R * AT_LDS + R * d + 2 * R; /* qp, s, acc, m, l */
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  int64_t *nrs = hmx_alloc_array((size_t)nt * (size_t)R, sizeof(int64_t));
  float **outs = hmx_alloc_array((size_t)nt * (size_t)R, sizeof(float *));
  int *failed = hmx_alloc_array((size_t)nt, sizeof(int));
  if (!scratch || !nrs || !outs || !failed) {
    free(scratch), free(nrs), free(outs), free(failed);
    return hmx_fail(HMX_ERR_NO_MEMORY, "attention (fast): out of memory");
  }
  const hmx_fast_kernels *fk = hmx_fast_kernels_pick();
  const int64_t chunk = (work + nt - 1) / nt;
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++) {
#if defined(_OPENMP)
    /* dnnl_sgemm runs on omp_get_max_threads() threads when not inside an
     * active parallel region, which a team of one is not: each item's calls
     * stay on this thread (this implicit task's setting, dropped at the end
     * of the region), or with threads = 1 they took both cores. */
    omp_set_num_threads(1);
#endif
    float *mine = scratch + (int64_t)t * per;
    at_work w;
    w.qp = mine;
    w.s = w.qp + R * d;
    w.acc = w.s + R * AT_LDS;
    w.m = w.acc + R * d;
    w.l = w.m + R;
    w.nr = nrs + (int64_t)t * R;
    w.out = outs + (int64_t)t * R;
    failed[t] = 0;
    const int64_t w1 = (t + 1) * chunk < work ? (t + 1) * chunk : work;
    for (int64_t idx = t * chunk; idx < w1 && !failed[t]; idx++) {
      const int64_t z = idx % tiles, bg = idx / tiles;
      /* causal tiles grow with z: pair short and long ones (0, last, 1,
       * last - 1, ...) so that contiguous chunks get similar work */
      const int64_t tile = z % 2 == 0 ? z / 2 : tiles - 1 - z / 2;
      const int64_t g = bg % a->hkv, bi = bg / a->hkv;
      at_item it;
      it.a = a;
      it.fk = fk;
      it.ld = a->hkv * d;
      it.kbase = a->k + bi * a->skv * it.ld + g * d;
      it.vbase = a->v + bi * a->skv * it.ld + g * d;
      it.bi = bi;
      it.g = g;
      it.group = group;
      it.i0 = tile * qt;
      it.tq = it.i0 + qt < a->sq ? qt : a->sq - it.i0;
      it.rows = it.tq * group;
      failed[t] = at_item_run(&it, &w);
    }
  }
  int st = 0;
  for (int t = 0; t < nt; t++)
    if (failed[t]) st = failed[t];
  free(scratch), free(nrs), free(outs), free(failed);
  if (st)
    return hmx_fail(HMX_ERR_INTERNAL, "attention (fast): dnnl_sgemm failed (dnnl status %d)", st);
  return HMX_OK;
}
