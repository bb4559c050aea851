/* AVX-512 attention (docs/NUMERICS.md §attention), bit-identical to
 * ref/attention.c.
 *
 * Work item = (batch, kv head, block of queries). One item handles every
 * query head of the GQA group that reads this kv head, for QB queries, so
 * each key block is loaded and transposed once for group*QB query rows.
 * Inside an item:
 *   1. scores: 64 keys at a time are transposed into Kt[4][D][16] (lane =
 *      key); each query row's dot with 16 keys is then one vector chain
 *      acc = fma(broadcast q[d], Kt[d], acc) for d = 0..D-1 in order (the
 *      sequential dot of §attention, one key per lane), times scale.
 *   2. per row: exact max (vector max, NaN never wins), e_j = exp(s_j - m)
 *      with hmx_v16_expf, and the 16-lane sum of §R (lane = j mod 16, the
 *      tail masked onto the first n mod 16 lanes, then the fixed tree).
 *   3. P.V vectorized across d: o[d..d+15] = fma(e_j, v_j[d..d+15], o) for
 *      j = 0..n-1 in order (one fma per key, §attention), then one IEEE
 *      division by the sum. Up to 4 rows share each loaded v_j.
 * Items are independent and each output row is computed by one item, so no
 * bit depends on the thread count.
 */
#include "avx512_attention.h"

#include "backend.h"
#include "internal.h"
#include "parallel.h"
#include "vexp_avx512.h"

#include <math.h>
#include <stdlib.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define HMX_ATT_KEYS 64    /* keys per transposed chunk: 4 blocks of 16 */
#define HMX_ATT_ROWS 32    /* target query rows per work item (group * QB) */

#if defined(__GNUC__)
#define HMX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HMX_ALWAYS_INLINE inline
#endif

static inline __mmask16 first_lanes(int64_t r) {
  return r >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1u);
}

/* The geometry shared by all items. */
typedef struct att_geom {
  const hmx_attention_args *a;
  int64_t group, qb, nqb, ld_s, rows_max;
} att_geom;

/* Query row r of an item: i-major, so n (visible keys) never decreases with
 * r and the heads of one query position are neighbours. */
typedef struct att_item {
  const float *kbase, *vbase; /* key/value j at base + j * ldkv */
  int64_t ldkv, b, g, i0, rows, nmax;
} att_item;

static inline int64_t row_n(const att_geom *G, const att_item *it, int64_t r) {
  const hmx_attention_args *a = G->a;
  int64_t i = it->i0 + r / G->group;
  return a->causal ? a->q_offset + i + 1 : a->skv;
}

static inline int64_t row_off(const att_geom *G, const att_item *it, int64_t r) {
  const hmx_attention_args *a = G->a;
  int64_t i = it->i0 + r / G->group, h = it->g * G->group + r % G->group;
  return ((it->b * a->sq + i) * a->hq + h) * a->d;
}

/* Transpose 16 keys (rows, `nkeys` of them valid, the others zero) x
 * columns d0 .. d0+dn-1 (dn <= 16) into out[dd * 16 + key]. Moves bits only. */
static void transpose16(const float *k, int64_t ldk, int nkeys, int64_t d0, int dn, float *out) {
  __m512 r[16], t[16], u[16];
  const __mmask16 m = first_lanes(dn);
  for (int i = 0; i < 16; i++)
    r[i] = i < nkeys ? _mm512_maskz_loadu_ps(m, k + i * ldk + d0) : _mm512_setzero_ps();
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  /* u[4g + e], 128-bit lane L: rows 4g..4g+3, element 4L + e. */
  for (int g = 0; g < 4; g++) {
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int e = 0; e < 4; e++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);
    __m512 w0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);
    __m512 v1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
    __m512 w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
    r[e] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    r[8 + e] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    r[4 + e] = _mm512_shuffle_f32x4(w0, w1, 0x88);
    r[12 + e] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
  }
  for (int dd = 0; dd < dn; dd++) _mm512_storeu_ps(out + dd * 16, r[dd]);
}

/* Scores of QT (1 or 2) rows against 64 transposed keys: per row and key a
 * dot over d = 0..D-1 in order from +0 (§attention), times scale. */
static HMX_ALWAYS_INLINE void score_tile(int QT, const float *q0, const float *q1,
                                         const float *kt, int64_t D, __m512 scale, float *s0,
                                         float *s1) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  const int64_t ks = D * 16;
  for (int64_t d = 0; d < D; d++) { /* §attention: dot sequential over d */
    const __m512 k0 = _mm512_loadu_ps(kt + d * 16), k1 = _mm512_loadu_ps(kt + ks + d * 16);
    const __m512 k2 = _mm512_loadu_ps(kt + 2 * ks + d * 16), k3 = _mm512_loadu_ps(kt + 3 * ks + d * 16);
    const __m512 x0 = _mm512_set1_ps(q0[d]);
    a0 = _mm512_fmadd_ps(x0, k0, a0);
    a1 = _mm512_fmadd_ps(x0, k1, a1);
    a2 = _mm512_fmadd_ps(x0, k2, a2);
    a3 = _mm512_fmadd_ps(x0, k3, a3);
    if (QT > 1) {
      const __m512 x1 = _mm512_set1_ps(q1[d]);
      b0 = _mm512_fmadd_ps(x1, k0, b0);
      b1 = _mm512_fmadd_ps(x1, k1, b1);
      b2 = _mm512_fmadd_ps(x1, k2, b2);
      b3 = _mm512_fmadd_ps(x1, k3, b3);
    }
  }
  /* s_j = dot * scale: one multiply (§attention). */
  _mm512_storeu_ps(s0, _mm512_mul_ps(a0, scale));
  _mm512_storeu_ps(s0 + 16, _mm512_mul_ps(a1, scale));
  _mm512_storeu_ps(s0 + 32, _mm512_mul_ps(a2, scale));
  _mm512_storeu_ps(s0 + 48, _mm512_mul_ps(a3, scale));
  if (QT > 1) {
    _mm512_storeu_ps(s1, _mm512_mul_ps(b0, scale));
    _mm512_storeu_ps(s1 + 16, _mm512_mul_ps(b1, scale));
    _mm512_storeu_ps(s1 + 32, _mm512_mul_ps(b2, scale));
    _mm512_storeu_ps(s1 + 48, _mm512_mul_ps(b3, scale));
  }
}

/* §R: the fixed tree over the 16 lanes: l[j] += l[j+8], += l[j+4], += l[j+2], l[0] + l[1]. */
static inline float lane_tree16(__m512 l) {
  __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(l), _mm512_extractf32x8_ps(l, 1));
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

/* Max, exp and lane sum of one row of n scores (in place: s becomes e).
 * Returns the sum of §R. */
static float softmax_row(float *s, int64_t n) {
  /* Exact max (§attention): max_ps(s, m) keeps m when s is NaN, so NaN
   * never wins, as in ref's `if (s > m) m = s`. Order does not matter. */
  __m512 mv = _mm512_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) mv = _mm512_max_ps(_mm512_loadu_ps(s + j), mv);
  if (j < n) {
    __mmask16 k = first_lanes(n - j);
    mv = _mm512_mask_max_ps(mv, k, _mm512_maskz_loadu_ps(k, s + j), mv);
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mv));
  /* e_j = exp(s_j - m), and the 16-lane sum of §R: lane j mod 16, in order
   * of j; the tail updates only the first n mod 16 lanes. */
  __m512 l = _mm512_setzero_ps();
  for (j = 0; j + 16 <= n; j += 16) {
    __m512 e = hmx_v16_expf(_mm512_sub_ps(_mm512_loadu_ps(s + j), m));
    _mm512_storeu_ps(s + j, e);
    l = _mm512_add_ps(l, e);
  }
  if (j < n) {
    __mmask16 k = first_lanes(n - j);
    __m512 e = hmx_v16_expf(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), m));
    _mm512_mask_storeu_ps(s + j, k, e);
    l = _mm512_mask_add_ps(l, k, l, e);
  }
  return lane_tree16(l);
}

/* P.V for QT rows (1, 2 or 4) and up to 4 chunks of 16 d's starting at d0:
 * acc = fma(e_j, v_j[d], acc) for j = 0..n_r-1 in order from +0, then
 * o = acc / sum (§attention). Rows share the loaded v_j while all of them
 * still see key j; the longer rows then continue alone (same order). */
static HMX_ALWAYS_INLINE void pv_tile(int QT, const float *const *e, const int64_t *n,
                                      const float *sum, float *const *o, const float *vbase,
                                      int64_t ldv, int64_t d0, int64_t D) {
  __m512 acc[4][4];
  __mmask16 mk[4];
  for (int c = 0; c < 4; c++) mk[c] = d0 + 16 * c < D ? first_lanes(D - d0 - 16 * c) : 0;
  for (int t = 0; t < QT; t++)
    for (int c = 0; c < 4; c++) acc[t][c] = _mm512_setzero_ps();
  int64_t nmin = n[0], nmaxr = n[0];
  for (int t = 1; t < QT; t++) {
    if (n[t] < nmin) nmin = n[t];
    if (n[t] > nmaxr) nmaxr = n[t];
  }
  const float *vp = vbase + d0;
  int64_t j = 0;
  for (; j < nmin; j++, vp += ldv) { /* §attention: P.V sequential over j */
    __m512 v0 = _mm512_maskz_loadu_ps(mk[0], vp), v1 = _mm512_maskz_loadu_ps(mk[1], vp + 16);
    __m512 v2 = _mm512_maskz_loadu_ps(mk[2], vp + 32), v3 = _mm512_maskz_loadu_ps(mk[3], vp + 48);
    for (int t = 0; t < QT; t++) {
      __m512 x = _mm512_set1_ps(e[t][j]);
      acc[t][0] = _mm512_fmadd_ps(x, v0, acc[t][0]);
      acc[t][1] = _mm512_fmadd_ps(x, v1, acc[t][1]);
      acc[t][2] = _mm512_fmadd_ps(x, v2, acc[t][2]);
      acc[t][3] = _mm512_fmadd_ps(x, v3, acc[t][3]);
    }
  }
  if (nmaxr > nmin) {
    for (int t = 0; t < QT; t++) {
      const float *vq = vbase + d0 + nmin * ldv;
      for (int64_t jj = nmin; jj < n[t]; jj++, vq += ldv) { /* same order, row alone */
        __m512 x = _mm512_set1_ps(e[t][jj]);
        acc[t][0] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mk[0], vq), acc[t][0]);
        acc[t][1] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mk[1], vq + 16), acc[t][1]);
        acc[t][2] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mk[2], vq + 32), acc[t][2]);
        acc[t][3] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mk[3], vq + 48), acc[t][3]);
      }
    }
  }
  for (int t = 0; t < QT; t++) { /* o_d = acc / sum: one IEEE division */
    __m512 sv = _mm512_set1_ps(sum[t]);
    for (int c = 0; c < 4; c++)
      if (mk[c]) _mm512_mask_storeu_ps(o[t] + d0 + 16 * c, mk[c], _mm512_div_ps(acc[t][c], sv));
  }
}

static void attend_item(const att_geom *G, const att_item *it, float *S, float *kt, float *sums) {
  const hmx_attention_args *a = G->a;
  const int64_t D = a->d, R = it->rows;
  const __m512 scale = _mm512_set1_ps(a->scale);
  /* 1. Scores, 64 keys at a time (§attention: dot over d in order, * scale). */
  for (int64_t j0 = 0; j0 < it->nmax; j0 += HMX_ATT_KEYS) {
    int64_t nk = it->nmax - j0 < HMX_ATT_KEYS ? it->nmax - j0 : HMX_ATT_KEYS;
    for (int kb = 0; kb < 4; kb++) {
      int64_t cnt = nk - 16 * kb;
      cnt = cnt < 0 ? 0 : cnt > 16 ? 16 : cnt;
      const float *kp = it->kbase + (j0 + 16 * kb) * it->ldkv;
      for (int64_t d0 = 0; d0 < D; d0 += 16)
        transpose16(kp, it->ldkv, (int)cnt, d0, (int)(D - d0 < 16 ? D - d0 : 16),
                    kt + kb * D * 16 + d0 * 16);
    }
    for (int64_t r = 0; r < R; r += 2) {
      int qt = R - r >= 2 ? 2 : 1;
      if (row_n(G, it, r + qt - 1) <= j0) continue; /* no row of the tile sees these keys */
      const float *q0 = a->q + row_off(G, it, r);
      float *s0 = S + r * G->ld_s + j0;
      if (qt == 2)
        score_tile(2, q0, a->q + row_off(G, it, r + 1), kt, D, scale, s0, s0 + G->ld_s);
      else
        score_tile(1, q0, q0, kt, D, scale, s0, s0);
    }
  }
  /* 2. Per row: max, exp, lane sum (§attention, §E, §R). */
  for (int64_t r = 0; r < R; r++) sums[r] = softmax_row(S + r * G->ld_s, row_n(G, it, r));
  /* 3. P.V across d, 4 rows x 64 d's per tile (§attention). */
  for (int64_t r = 0; r < R; r += 4) {
    int qt = R - r >= 4 ? 4 : (int)(R - r);
    const float *e[4];
    float *o[4];
    int64_t n[4];
    for (int t = 0; t < 4; t++) {
      int64_t rr = r + (t < qt ? t : qt - 1);
      e[t] = S + rr * G->ld_s;
      o[t] = a->o + row_off(G, it, rr);
      n[t] = row_n(G, it, rr);
    }
    for (int64_t d0 = 0; d0 < D; d0 += 64) {
      if (qt == 4) pv_tile(4, e, n, sums + r, o, it->vbase, it->ldkv, d0, D);
      else if (qt >= 2) pv_tile(2, e, n, sums + r, o, it->vbase, it->ldkv, d0, D);
      else pv_tile(1, e, n, sums + r, o, it->vbase, it->ldkv, d0, D);
    }
    if (qt == 3) { /* the third row alone */
      const float *e3[1] = {e[2]};
      float *o3[1] = {o[2]};
      for (int64_t d0 = 0; d0 < D; d0 += 64)
        pv_tile(1, e3, n + 2, sums + r + 2, o3, it->vbase, it->ldkv, d0, D);
    }
  }
}

hmx_status hmx_avx512_attention(const hmx_attention_args *a) {
  att_geom G;
  G.a = a;
  G.group = a->hq / a->hkv;
  int64_t qb = HMX_ATT_ROWS / G.group;
  if (qb < 1) qb = 1;
  if (qb > a->sq) qb = a->sq;
  G.qb = qb;
  G.nqb = (a->sq + qb - 1) / qb;
  G.ld_s = (a->skv + HMX_ATT_KEYS - 1) / HMX_ATT_KEYS * HMX_ATT_KEYS;
  if (G.ld_s == 0) G.ld_s = HMX_ATT_KEYS;
  G.rows_max = G.group * qb;
  const int64_t items = a->b * a->hkv * G.nqb;
  if (items <= 0) return HMX_OK;
  const int nt = hmx_thread_count(a->threads, items);
  /* Per thread: scores [rows_max][ld_s], Kt [4][D][16], sums [rows_max]. */
  const int64_t per = G.rows_max * G.ld_s + 4 * a->d * 16 + G.rows_max + 16;
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  if (!scratch) return HMX_ERR_NO_MEMORY;
  HMX_OMP_FOR(nt)
  for (int64_t idx = 0; idx < items; idx++) {
#if defined(_OPENMP)
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    float *S = scratch + (int64_t)tid * per;
    float *kt = S + G.rows_max * G.ld_s;
    float *sums = kt + 4 * a->d * 16;
    att_item it;
    int64_t bg = idx / G.nqb, z = idx % G.nqb;
    /* Pair short and long causal blocks so that contiguous static chunks
     * get similar work: 0, last, 1, last-1, ... */
    int64_t qbi = (z % 2 == 0) ? z / 2 : G.nqb - 1 - z / 2;
    it.b = bg / a->hkv;
    it.g = bg % a->hkv;
    it.i0 = qbi * qb;
    int64_t i1 = it.i0 + qb < a->sq ? it.i0 + qb : a->sq;
    it.rows = (i1 - it.i0) * G.group;
    it.nmax = a->causal ? a->q_offset + i1 : a->skv;
    it.ldkv = a->hkv * a->d;
    it.kbase = a->k + (it.b * a->skv * a->hkv + it.g) * a->d;
    it.vbase = a->v + (it.b * a->skv * a->hkv + it.g) * a->d;
    attend_item(&G, &it, S, kt, sums);
  }
  free(scratch);
  return HMX_OK;
}
