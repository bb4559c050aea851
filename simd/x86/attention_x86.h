/* Attention for the x86 SIMD backends (docs/NUMERICS.md §attention),
 * bit-identical to ref/attention.c; shared by simd/avx512/attention_avx512.c
 * (16 lanes) and simd/avx2/attention_avx2.c (8 lanes). Header only: the
 * includer first includes its ISA's exp (vexp_<isa>.h, which brings the xv_
 * primitives) and weights16_x86.h, then defines
 *
 *   xa_transpose(k, ldk, nkeys, d0, dn, out, wt)   XV_W keys (rows k + i*ldk
 *                          elements, stored as wt: XW_F32, XW_BF16, XW_F16;
 *                          the first nkeys valid, the others read as zero) x
 *                          columns d0 .. d0+dn-1 (dn <= XV_W) into
 *                          out[dd * XV_W + key] as f32; moves bits only
 *   XA_PV_ROWS             query rows per P.V tile (4 with 32 registers, 2 with 16)
 *   XA_SC_ROWS             query rows per score tile (4 with 32 registers, 2 with 16)
 *   XA_PV_CHUNKS(qt)       XV_W-wide chunks of d per P.V tile of qt rows (<= 8)
 *   XA_ATTENTION_FN        the name of the kernel
 *
 * Work item = (batch, kv head, block of queries). One item handles every
 * query head of the GQA group that reads this kv head, for QB queries, so
 * each key block is loaded and transposed once for group*QB query rows.
 * Inside an item:
 *   1. scores: 4*XV_W keys at a time are transposed into Kt[4][D][XV_W]
 *      (lane = key); each query row's dot with XV_W keys is then one vector
 *      chain acc = fma(broadcast q[d], Kt[d], acc) for d = 0..D-1 in order
 *      (the sequential dot of §attention, one key per lane), times scale.
 *      K in the KV cache's blocked layout (kblocks > 0, HMX_KB16_ATTENTION:
 *      16 keys of one element adjacent) is read in place instead, which
 *      spares the transposes (decode, bf16 cache: attention 1.2-1.4 ->
 *      0.85-0.9 ms per token of the tiny model, Zen 5); that layout's V is
 *      head by head, one contiguous run per head (0.85 -> 0.65 ms).
 *   2. per row: exact max (vector max, NaN never wins), e_j = exp(s_j - m)
 *      with xv_expf, and the 16-lane sum of §R on XV_R registers (lane =
 *      j mod 16, the tail masked onto the first n mod 16 lanes, then the
 *      fixed tree).
 *   3. P.V vectorized across d: o[d..d+XV_W-1] = fma(e_j, v_j[d..], o) for
 *      j = 0..n-1 in order (one fma per key, §attention), then one IEEE
 *      division by the sum. Up to XA_PV_ROWS rows share each loaded v_j.
 * Items are independent and each output row is computed by one item, so no
 * bit depends on the thread count.
 *
 * K and V may be a 16-bit KV cache (src/backend.h, HMX_W16_ATTENTION): each
 * element is widened exactly to f32 as it is loaded, so the arithmetic and
 * the bits are those of the f32 call on the widened values. The item body
 * is instantiated once per storage type (xa_attend_f32/bf16/f16).
 */
#ifndef HMX_ATTENTION_X86_H
#define HMX_ATTENTION_X86_H

#include "unroll.h"
#include "backend.h"
#include "internal.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define XA_KEYS (4 * XV_W) /* keys per transposed chunk: 4 blocks of XV_W */
#ifndef XA_ROWS
#define XA_ROWS 32 /* target query rows per work item (group * QB) */
#endif
#define XA_PV_CT_MAX 8 /* chunks of a P.V tile, at most */

_Static_assert(XV_W * XV_R == 16, "§R: 16 lanes in XV_R registers");
_Static_assert(XA_PV_ROWS == 2 || XA_PV_ROWS == 4, "P.V tiles of 4, 2 or 1 rows");
_Static_assert(XA_SC_ROWS == 2 || XA_SC_ROWS == 4, "score tiles of 4, 2 or 1 rows");

/* The geometry shared by all items. */
typedef struct xa_geom {
  const hmx_attention_args *a;
  int64_t group, qb, nqb, ld_s, rows_max;
} xa_geom;

/* Query row r of an item: i-major, so n (visible keys) never decreases with
 * r and the heads of one query position are neighbours. */
typedef struct xa_item {
  const void *kbase, *vbase; /* key/value j at element j * ldkv of base (type kvt);
                                kblocks > 0: K blocked from kbase, V rows ldkv = D apart */
  int64_t ldkv, b, g, i0, rows, nmax;
} xa_item;

/* Element i of a K/V array stored as wt (XW_F32, XW_BF16, XW_F16). */
XV_INLINE const void *xa_at(const void *base, int64_t i, const int wt) {
  return (const char *)base + i * (wt == XW_F32 ? 4 : 2);
}

static inline int64_t xa_row_n(const xa_geom *G, const xa_item *it, int64_t r) {
  const hmx_attention_args *a = G->a;
  int64_t i = it->i0 + r / G->group;
  return a->causal ? a->q_offset + i + 1 : a->skv;
}

static inline int64_t xa_row_off(const xa_geom *G, const xa_item *it, int64_t r) {
  const hmx_attention_args *a = G->a;
  int64_t i = it->i0 + r / G->group, h = it->g * G->group + r % G->group;
  return ((it->b * a->sq + i) * a->hq + h) * a->d;
}

/* Scores of QT (1, 2 or 4: at most XA_SC_ROWS) rows q[0 .. QT-1] against
 * 4*XV_W keys whose element d sits, for the XV_W keys of vector i, at
 * element d * ds + ko[i] of kt (stored as wt): the transposed scratch (f32,
 * ds = XV_W, ko[i] = i * D * XV_W) or a key tile of the blocked cache
 * (ds = 16). Per row and key a dot over d = 0..D-1 in order from +0
 * (§attention), times scale, to s[t]. The loops over rows and key vectors
 * are unrolled (QT a constant after inlining): 4*QT accumulators in
 * registers, each key vector loaded once per d and used by every row (with
 * two rows, the ten loads per eight fmas were the bound). */
XV_INLINE void xa_score_tile(const int QT, const float *const *q, const void *kt,
                             const int64_t *ko, int64_t ds, int64_t D, xv_v scale,
                             float *const *s, const int wt) {
  xv_v acc[XA_SC_ROWS][4];
  HMX_UNROLL(4)
  for (int t = 0; t < QT; t++)
    HMX_UNROLL(4)
    for (int i = 0; i < 4; i++) acc[t][i] = xv_zero();
  /* unrolled by 4, with P.V's key loop: prefill's attention +14% on one
   * Zen 3 core and on the Xeon's avx2, +2% on its avx512; a SmolLM2-shaped
   * decode step +6%, +17%, +12% (tools/x86/kernel_ab.sh, session 53) */
  HMX_UNROLL_BY(4)
  for (int64_t d = 0; d < D; d++) { /* §attention: dot sequential over d */
    xv_v k[4];
    HMX_UNROLL(4)
    for (int i = 0; i < 4; i++) k[i] = xw_load(kt, d * ds + ko[i], wt);
    HMX_UNROLL(4)
    for (int t = 0; t < QT; t++) {
      const xv_v x = xv_bcast(q[t] + d);
      HMX_UNROLL(4)
      for (int i = 0; i < 4; i++) acc[t][i] = xv_fma(x, k[i], acc[t][i]);
    }
  }
  /* s_j = dot * scale: one multiply (§attention). */
  HMX_UNROLL(4)
  for (int t = 0; t < QT; t++)
    HMX_UNROLL(4)
    for (int i = 0; i < 4; i++) xv_store(s[t] + i * XV_W, xv_mul(acc[t][i], scale));
}

/* e = exp(s - m) for XV_W scores (the first `r` valid), stored back; the
 * lane accumulator l gets l + e on exactly those lanes (§R). */
XV_INLINE xv_v xa_exp_acc(float *s, xv_v m, xv_v l, int64_t r) {
  if (r >= XV_W) {
    const xv_v e = xv_expf(xv_sub(xv_load(s), m));
    xv_store(s, e);
    return xv_add(l, e);
  }
  const xv_m k = xv_lanes(r);
  const xv_v e = xv_expf(xv_sub(xv_loadn(s, k), m));
  xv_storen(s, k, e);
  return xv_blend(k, l, xv_add(l, e));
}

/* Max, exp and lane sum of one row of n scores (in place: s becomes e).
 * Returns the sum of §R. */
static float xa_softmax_row(float *s, int64_t n) {
  /* Exact max (§attention): max(s, m) keeps m when s is NaN, so NaN never
   * wins, as in ref's `if (s > m) m = s`. Order does not matter. */
  xv_v mv = xv_set1(-INFINITY);
  int64_t j = 0;
  for (; j + XV_W <= n; j += XV_W) mv = xv_max(xv_load(s + j), mv);
  if (j < n) {
    const xv_m k = xv_lanes(n - j);
    mv = xv_blend(k, mv, xv_max(xv_loadn(s + j, k), mv));
  }
  const xv_v m = xv_set1(xv_hmax(mv));
  /* e_j = exp(s_j - m), and the 16-lane sum of §R: lane j mod 16 (register
   * q holds lanes q*XV_W ..), in order of j; the tail updates only the first
   * n mod 16 lanes. */
  xv_v l[XV_R];
  for (int q = 0; q < XV_R; q++) l[q] = xv_zero();
  for (j = 0; j + 16 <= n; j += 16)
    for (int q = 0; q < XV_R; q++) l[q] = xa_exp_acc(s + j + q * XV_W, m, l[q], XV_W);
  if (j < n)
    for (int q = 0; q < XV_R; q++)
      if (n - j > q * XV_W) l[q] = xa_exp_acc(s + j + q * XV_W, m, l[q], n - j - q * XV_W);
  return xv_tree16(l);
}

/* Chunk c (XV_W values from element i + XV_W * c; `left` values from i
 * exist) of a V row as f32, +0 past the end. */
XV_INLINE xv_v xa_vload(const void *vbase, int64_t i, int c, int whole, int64_t left,
                        const xv_m *mk, const int wt) {
  if (c < whole) return xw_load(vbase, i + XV_W * c, wt);
  if (wt == XW_F32) return xv_loadn((const float *)vbase + i + XV_W * c, mk[c]);
  return xw_loadn(vbase, i + XV_W * c, left - XV_W * c, wt);
}

/* P.V for QT rows (1, 2 or 4) and CT chunks of XV_W d's from d0 (QT * CT
 * accumulators): acc = fma(e_j, v_j[d], acc) for j = 0..n_r-1 in order from
 * +0, then o = acc / sum (§attention). Rows share the loaded v_j while all
 * of them still see key j; the longer rows then continue alone (same order). */
XV_INLINE void xa_pv_tile(const int QT, const int CT, const float *const *e, const int64_t *n,
                          const float *sum, float *const *o, const void *vbase, int64_t ldv,
                          int64_t d0, int64_t D, const int wt) {
  /* Every loop over t and c below is unrolled (QT and CT are constants
   * after inlining), so that acc is QT * CT registers: with one loop left
   * rolled, gcc kept acc in memory and stored all of it on every key
   * (unrolling took prefill attention from 35 to 53 GFLOP/s, Xeon EMR). */
  xv_v acc[XA_PV_ROWS][XA_PV_CT_MAX];
  xv_m mk[XA_PV_CT_MAX];
  HMX_UNROLL(8)
  for (int c = 0; c < CT; c++) mk[c] = xv_lanes_clamped(D - d0 - XV_W * c);
  /* chunk c lies inside D (below `whole`): a plain load, no mask */
  const int whole = D - d0 >= (int64_t)XV_W * CT ? CT : (int)((D - d0) / XV_W);
  HMX_UNROLL(4)
  for (int t = 0; t < QT; t++)
    HMX_UNROLL(8)
    for (int c = 0; c < CT; c++) acc[t][c] = xv_zero();
  int64_t nmin = n[0], nmaxr = n[0];
  for (int t = 1; t < QT; t++) {
    if (n[t] < nmin) nmin = n[t];
    if (n[t] > nmaxr) nmaxr = n[t];
  }
  /* §attention: P.V sequential over j. The same loop twice: every chunk
   * inside D (plain loads: the usual case), or the edge of D (per-chunk
   * load choice; left in the common loop, that choice was a compare and
   * branch per chunk and key). */
#define XA_PV_KEYS(VLOAD)                                                              \
  HMX_UNROLL_BY(4) for (int64_t j = 0; j < nmin; j++) { /* unrolled: see the scores */ \
    xv_v v[XA_PV_CT_MAX];                                                             \
    HMX_UNROLL(8) for (int c = 0; c < CT; c++) v[c] = (VLOAD);              \
    HMX_UNROLL(4) for (int t = 0; t < QT; t++) {                            \
      const xv_v x = xv_bcast(e[t] + j);                                              \
      HMX_UNROLL(8) for (int c = 0; c < CT; c++) acc[t][c] = xv_fma(x, v[c], acc[t][c]); \
    }                                                                                 \
  }
  if (whole == CT)
    XA_PV_KEYS(xw_load(vbase, j * ldv + d0 + XV_W * c, wt))
  else
    XA_PV_KEYS(xa_vload(vbase, j * ldv + d0, c, whole, D - d0, mk, wt))
#undef XA_PV_KEYS
  if (nmaxr > nmin) {
    HMX_UNROLL(4)
    for (int t = 0; t < QT; t++) {
      for (int64_t jj = nmin; jj < n[t]; jj++) { /* same order, row alone */
        const xv_v x = xv_bcast(e[t] + jj);
        HMX_UNROLL(8)
        for (int c = 0; c < CT; c++)
          acc[t][c] =
              xv_fma(x, xa_vload(vbase, jj * ldv + d0, c, whole, D - d0, mk, wt), acc[t][c]);
      }
    }
  }
  HMX_UNROLL(4)
  for (int t = 0; t < QT; t++) { /* o_d = acc / sum: one IEEE division */
    const xv_v sv = xv_set1(sum[t]);
    HMX_UNROLL(8)
    for (int c = 0; c < CT; c++)
      if (d0 + XV_W * c < D) xv_storen(o[t] + d0 + XV_W * c, mk[c], xv_div(acc[t][c], sv));
  }
}

/* P.V of QT rows (the first QT of e, n, sum, o) over every d, in tiles of
 * XA_PV_CHUNKS(QT) chunks (§attention: each output its own chain over j). */
XV_INLINE void xa_pv_rows(const int QT, const float *const *e, const int64_t *n, const float *sum,
                          float *const *o, const void *vbase, int64_t ldv, int64_t D,
                          const int wt) {
  for (int64_t d0 = 0; d0 < D; d0 += XV_W * XA_PV_CHUNKS(QT))
    xa_pv_tile(QT, XA_PV_CHUNKS(QT), e, n, sum, o, vbase, ldv, d0, D, wt);
}

/* Software prefetch of the element column d0 (one cache line's worth of
 * the row or less) of rows j0 .. j1-1, ldkv elements apart, into the level
 * of `hint` (0: L1, else L2). */
XV_INLINE void xa_prefetch_col(const void *base, int64_t j0, int64_t j1, int64_t ldkv, int64_t d0,
                               const int wt, const int hint) {
  for (int64_t j = j0; j < j1; j++) {
    const char *p = (const char *)xa_at(base, j * ldkv + d0, wt);
    if (hint == 0) _mm_prefetch(p, _MM_HINT_T0);
    else _mm_prefetch(p, _MM_HINT_T1);
  }
}

/* kb16: K in the blocked layout (HMX_KB16_ATTENTION), it->kbase at the
 * item's first block: a tile's keys are read in place, no transposes. */
XV_INLINE void xa_attend_item(const xa_geom *G, const xa_item *it, float *S, float *kt,
                              float *sums, const int wt, const int kb16) {
  const hmx_attention_args *a = G->a;
  const int64_t D = a->d, R = it->rows;
  const xv_v scale = xv_set1(a->scale);
  /* where vector i of a key tile starts: in the scratch, or in the blocks */
  int64_t ko[4];
  for (int i = 0; i < 4; i++)
    ko[i] = kb16 ? (i * XV_W / 16) * D * 16 + (i * XV_W) % 16 : i * D * XV_W;
  const int64_t ds = kb16 ? 16 : XV_W; /* elements from one d to the next */
  /* 1. Scores, 4*XV_W keys at a time (§attention: dot over d in order, * scale). */
  for (int64_t j0 = 0; j0 < it->nmax; j0 += XA_KEYS) {
    const void *ktile = kt;
    int kw = XW_F32; /* how ktile is stored */
    /* the tile's keys in place (j0 is a multiple of 16). Their values are
     * not prefetched here: unlike the row layout's (below), that measured
     * 10-15% slower (Zen 5, decode from memory), as did prefetching the
     * next tile's keys or the next item's K and V during P.V. */
    if (kb16) {
      ktile = xa_at(it->kbase, j0 / 16 * D * 16, wt);
      kw = wt;
      if (R > 2 && wt != XW_F32) {
        /* several row tiles (prefill), 16-bit keys: the tile widened once
         * into the scratch, same layout, and read there by every row tile
         * (f32 keys are read in place: copying them cost ~10% of the
         * prefill's attention). Exact: moves values. */
        for (int64_t i = 0; i < XA_KEYS * D; i += XV_W) xv_store(kt + i, xw_load(ktile, i, wt));
        ktile = kt;
        kw = XW_F32;
      }
    } else {
      const int64_t nk = it->nmax - j0 < XA_KEYS ? it->nmax - j0 : XA_KEYS;
      for (int kb = 0; kb < 4; kb++) {
        int64_t cnt = nk - XV_W * kb;
        cnt = cnt < 0 ? 0 : cnt > XV_W ? XV_W : cnt;
        const void *kp = xa_at(it->kbase, (j0 + XV_W * kb) * it->ldkv, wt);
        /* Software prefetch, spread over the transposes (one line per key
         * row): these XV_W keys of the next block into L1, and the values of
         * these keys into L2 for step 3 (a few hundred KiB per item at most).
         * A head's rows are a few cache lines each, 1.5-3 KiB apart (the other
         * heads sit between them), which the hardware prefetchers do not
         * follow well: from memory, a 16-bit KV cache measured 2.5x slower per
         * byte than f32 without these (Zen 5, decode). Changes no value. */
        const int64_t jk = j0 + XA_KEYS + XV_W * kb, jv = j0 + XV_W * kb;
        const int64_t jk1 = jk + XV_W < it->nmax ? jk + XV_W : it->nmax;
        for (int64_t d0 = 0; d0 < D; d0 += XV_W) {
          xa_prefetch_col(it->kbase, jk, jk1, it->ldkv, d0, wt, 0);
          xa_prefetch_col(it->vbase, jv, jv + cnt, it->ldkv, d0, wt, 1);
          xa_transpose(kp, it->ldkv, (int)cnt, d0, (int)(D - d0 < XV_W ? D - d0 : XV_W),
                       kt + kb * D * XV_W + d0 * XV_W, wt);
        }
      }
    }
    for (int64_t r = 0; r < R;) { /* XA_SC_ROWS rows per tile, then 2, then 1 */
      const int qt = R - r >= XA_SC_ROWS ? XA_SC_ROWS : R - r >= 2 ? 2 : 1;
      if (xa_row_n(G, it, r + qt - 1) > j0) { /* else no row of the tile sees these keys */
        const float *q[XA_SC_ROWS];
        float *sr[XA_SC_ROWS];
        for (int t = 0; t < qt; t++) {
          q[t] = a->q + xa_row_off(G, it, r + t);
          sr[t] = S + (r + t) * G->ld_s + j0;
        }
        if (qt == XA_SC_ROWS) xa_score_tile(XA_SC_ROWS, q, ktile, ko, ds, D, scale, sr, kw);
        else if (qt == 2) xa_score_tile(2, q, ktile, ko, ds, D, scale, sr, kw);
        else xa_score_tile(1, q, ktile, ko, ds, D, scale, sr, kw);
      }
      r += qt;
    }
  }
  /* 2. Per row: max, exp, lane sum (§attention, §E, §R). */
  for (int64_t r = 0; r < R; r++) sums[r] = xa_softmax_row(S + r * G->ld_s, xa_row_n(G, it, r));
  /* 3. P.V across d (§attention), XA_PV_ROWS rows per tile (then 2, then 1). */
  for (int64_t r = 0; r < R; r += XA_PV_ROWS) {
    const int qt = R - r >= XA_PV_ROWS ? XA_PV_ROWS : (int)(R - r);
    const float *e[XA_PV_ROWS];
    float *o[XA_PV_ROWS];
    int64_t n[XA_PV_ROWS];
    for (int t = 0; t < XA_PV_ROWS; t++) {
      int64_t rr = r + (t < qt ? t : qt - 1);
      e[t] = S + rr * G->ld_s;
      o[t] = a->o + xa_row_off(G, it, rr);
      n[t] = xa_row_n(G, it, rr);
    }
    if (qt == XA_PV_ROWS) xa_pv_rows(XA_PV_ROWS, e, n, sums + r, o, it->vbase, it->ldkv, D, wt);
    else if (XA_PV_ROWS > 2 && qt >= 2)
      xa_pv_rows(2, e, n, sums + r, o, it->vbase, it->ldkv, D, wt);
    else xa_pv_rows(1, e, n, sums + r, o, it->vbase, it->ldkv, D, wt);
    if (XA_PV_ROWS > 2 && qt == 3) /* the third row alone */
      xa_pv_rows(1, e + 2, n + 2, sums + r + 2, o + 2, it->vbase, it->ldkv, D, wt);
  }
}

/* One instance per K/V storage type and K layout (rows, blocked). */
#define XA_INSTANCE(name, wt, kb16)                                                        \
  static void name(const xa_geom *G, const xa_item *it, float *S, float *kt, float *sums) { \
    xa_attend_item(G, it, S, kt, sums, wt, kb16);                                           \
  }
XA_INSTANCE(xa_attend_f32, XW_F32, 0)
XA_INSTANCE(xa_attend_bf16, XW_BF16, 0)
XA_INSTANCE(xa_attend_f16, XW_F16, 0)
XA_INSTANCE(xa_attend_f32_kb16, XW_F32, 1)
XA_INSTANCE(xa_attend_bf16_kb16, XW_BF16, 1)
XA_INSTANCE(xa_attend_f16_kb16, XW_F16, 1)
#undef XA_INSTANCE

/* Work item idx: (batch, kv head) idx / nqb, query block idx % nqb. */
static void xa_item_at(const xa_geom *G, int64_t idx, const void *kall, const void *vall,
                       const int wt, xa_item *it) {
  const hmx_attention_args *a = G->a;
  int64_t bg = idx / G->nqb, z = idx % G->nqb;
  /* Pair short and long causal blocks so that contiguous static chunks
   * get similar work: 0, last, 1, last-1, ... */
  int64_t qbi = (z % 2 == 0) ? z / 2 : G->nqb - 1 - z / 2;
  it->b = bg / a->hkv;
  it->g = bg % a->hkv;
  it->i0 = qbi * G->qb;
  int64_t i1 = it->i0 + G->qb < a->sq ? it->i0 + G->qb : a->sq;
  it->rows = (i1 - it->i0) * G->group;
  it->nmax = a->causal ? a->q_offset + i1 : a->skv;
  if (a->kblocks > 0) { /* the cache layout: K blocked, V head by head */
    const int64_t head = (it->b * a->hkv + it->g) * a->kblocks * 16 * a->d;
    it->ldkv = a->d;
    it->kbase = xa_at(kall, head, wt);
    it->vbase = xa_at(vall, head, wt);
  } else {
    it->ldkv = a->hkv * a->d;
    it->kbase = xa_at(kall, (it->b * a->skv * a->hkv + it->g) * a->d, wt);
    it->vbase = xa_at(vall, (it->b * a->skv * a->hkv + it->g) * a->d, wt);
  }
}

hmx_status XA_ATTENTION_FN(const hmx_attention_args *a) {
  xa_geom G;
  G.a = a;
  G.group = a->hq / a->hkv;
  int64_t qb = XA_ROWS / G.group;
  if (qb < 1) qb = 1;
  if (qb > a->sq) qb = a->sq;
  G.qb = qb;
  G.nqb = (a->sq + qb - 1) / qb;
  G.ld_s = (a->skv + XA_KEYS - 1) / XA_KEYS * XA_KEYS;
  if (G.ld_s == 0) G.ld_s = XA_KEYS;
  G.rows_max = G.group * qb;
  const int64_t items = a->b * a->hkv * G.nqb;
  if (items <= 0) return HMX_OK;
  const int wt = xw_type(a->kvdt);
  const void *kall = wt == XW_F32 ? (const void *)a->k : (const void *)a->k16;
  const void *vall = wt == XW_F32 ? (const void *)a->v : (const void *)a->v16;
  const int kb16 = a->kblocks > 0;
  void (*attend)(const xa_geom *, const xa_item *, float *, float *, float *) =
      wt == XW_BF16 ? (kb16 ? xa_attend_bf16_kb16 : xa_attend_bf16)
      : wt == XW_F16 ? (kb16 ? xa_attend_f16_kb16 : xa_attend_f16)
                     : (kb16 ? xa_attend_f32_kb16 : xa_attend_f32);
  const int nt = hmx_thread_count(a->threads, items);
  /* Per thread: scores [rows_max][ld_s], Kt [4][D][XV_W], sums [rows_max]. */
  const int64_t per = G.rows_max * G.ld_s + 4 * a->d * XV_W + G.rows_max + XV_W;
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  if (!scratch) return HMX_ERR_NO_MEMORY;
  /* items one at a time to whichever thread is free (a fixed split ended
   * apart whenever one vCPU ran slower; the order pairs short and long
   * causal blocks, see xa_item_at) */
  HMX_OMP_FOR_CHUNKS(nt, 1)
  for (int64_t idx = 0; idx < items; idx++) {
#if defined(_OPENMP)
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    float *S = scratch + (int64_t)tid * per;
    float *kt = S + G.rows_max * G.ld_s;
    float *sums = kt + 4 * a->d * XV_W;
    xa_item it;
    xa_item_at(&G, idx, kall, vall, wt, &it);
    attend(&G, &it, S, kt, sums);
  }
  free(scratch);
  return HMX_OK;
}

#endif
