/* AVX2 attention (docs/NUMERICS.md §attention), bit-identical to
 * ref/attention.c. The same design as simd/avx512/attention_avx512.c with
 * 8-lane registers:
 *
 * Work item = (batch, kv head, block of queries). One item handles every
 * query head of the GQA group that reads this kv head, for QB queries, so
 * each key block is loaded and transposed once for group*QB query rows.
 *   1. scores: 32 keys at a time are transposed into Kt[4][D][8] (lane =
 *      key); each row's dot with 8 keys is one vector chain
 *      acc = fma(broadcast q[d], Kt[d], acc) for d = 0..D-1 in order, then
 *      times scale (§attention).
 *   2. per row: exact max, e_j = exp(s_j - m) with hmx_v8_expf, and the
 *      16-lane sum of §R on two registers (lanes 0-7 and 8-15: lane
 *      j mod 16; the tail updates only the first n mod 16 lanes), then the
 *      fixed tree.
 *   3. P.V across d: o[d..d+7] = fma(e_j, v_j[d..d+7], o) for j = 0..n-1 in
 *      order, then one IEEE division by the sum. Two rows share each v_j.
 * Items are independent and each output row is computed by one item, so no
 * bit depends on the thread count.
 */
#include "avx2_attention.h"

#include "backend.h"
#include "internal.h"
#include "parallel.h"
#include "vexp_avx2.h"

#include <math.h>
#include <stdlib.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define HMX_ATT_KEYS 32 /* keys per transposed chunk: 4 blocks of 8 */
#define HMX_ATT_ROWS 32 /* target query rows per work item (group * QB) */

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

typedef struct att_geom {
  const hmx_attention_args *a;
  int64_t group, qb, nqb, ld_s, rows_max;
} att_geom;

/* Query rows of an item are i-major: n never decreases with the row. */
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

/* Transpose 8 keys (`nkeys` valid, the others zero) x columns d0..d0+dn-1
 * (dn <= 8) into out[dd * 8 + key]. Moves bits only. */
static void transpose8(const float *k, int64_t ldk, int nkeys, int64_t d0, int dn, float *out) {
  __m256 r[8], t[8], u[8];
  const __m256i m = lanes_upto(dn);
  for (int i = 0; i < 8; i++)
    r[i] = i < nkeys ? _mm256_maskload_ps(k + i * ldk + d0, m) : _mm256_setzero_ps();
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  /* u[4g + e], 128-bit half L: rows 4g..4g+3, element 4L + e. */
  for (int g = 0; g < 2; g++) {
    u[4 * g + 0] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int e = 0; e < 4; e++) {
    r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
    r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
  }
  for (int dd = 0; dd < dn; dd++) _mm256_storeu_ps(out + dd * 8, r[dd]);
}

/* Scores of QT (1 or 2) rows against 32 transposed keys: per row and key a
 * dot over d = 0..D-1 in order from +0 (§attention), times scale. */
static HMX_ALWAYS_INLINE void score_tile(int QT, const float *q0, const float *q1,
                                         const float *kt, int64_t D, __m256 scale, float *s0,
                                         float *s1) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  const int64_t ks = D * 8;
  for (int64_t d = 0; d < D; d++) { /* §attention: dot sequential over d */
    const __m256 k0 = _mm256_loadu_ps(kt + d * 8), k1 = _mm256_loadu_ps(kt + ks + d * 8);
    const __m256 k2 = _mm256_loadu_ps(kt + 2 * ks + d * 8), k3 = _mm256_loadu_ps(kt + 3 * ks + d * 8);
    const __m256 x0 = _mm256_broadcast_ss(q0 + d);
    a0 = _mm256_fmadd_ps(x0, k0, a0);
    a1 = _mm256_fmadd_ps(x0, k1, a1);
    a2 = _mm256_fmadd_ps(x0, k2, a2);
    a3 = _mm256_fmadd_ps(x0, k3, a3);
    if (QT > 1) {
      const __m256 x1 = _mm256_broadcast_ss(q1 + d);
      b0 = _mm256_fmadd_ps(x1, k0, b0);
      b1 = _mm256_fmadd_ps(x1, k1, b1);
      b2 = _mm256_fmadd_ps(x1, k2, b2);
      b3 = _mm256_fmadd_ps(x1, k3, b3);
    }
  }
  /* s_j = dot * scale: one multiply (§attention). */
  _mm256_storeu_ps(s0, _mm256_mul_ps(a0, scale));
  _mm256_storeu_ps(s0 + 8, _mm256_mul_ps(a1, scale));
  _mm256_storeu_ps(s0 + 16, _mm256_mul_ps(a2, scale));
  _mm256_storeu_ps(s0 + 24, _mm256_mul_ps(a3, scale));
  if (QT > 1) {
    _mm256_storeu_ps(s1, _mm256_mul_ps(b0, scale));
    _mm256_storeu_ps(s1 + 8, _mm256_mul_ps(b1, scale));
    _mm256_storeu_ps(s1 + 16, _mm256_mul_ps(b2, scale));
    _mm256_storeu_ps(s1 + 24, _mm256_mul_ps(b3, scale));
  }
}

/* §R: lanes 0-7 in lo, 8-15 in hi; l[j] += l[j+8], += l[j+4], += l[j+2], l[0] + l[1]. */
static inline float lane_tree16(__m256 lo, __m256 hi) {
  __m256 h8 = _mm256_add_ps(lo, hi);
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

/* e = exp(s - m) for 8 scores (the first `r` valid), stored back; the lane
 * accumulator l gets l + e on exactly those lanes (§R). */
static inline __m256 exp_acc8(float *s, __m256 m, __m256 l, int64_t r) {
  if (r >= 8) {
    __m256 e = hmx_v8_expf(_mm256_sub_ps(_mm256_loadu_ps(s), m));
    _mm256_storeu_ps(s, e);
    return _mm256_add_ps(l, e);
  }
  __m256i k = lanes_upto(r);
  __m256 e = hmx_v8_expf(_mm256_sub_ps(_mm256_maskload_ps(s, k), m));
  _mm256_maskstore_ps(s, k, e);
  return _mm256_blendv_ps(l, _mm256_add_ps(l, e), _mm256_castsi256_ps(k));
}

/* Max, exp and lane sum of one row of n scores (in place: s becomes e). */
static float softmax_row(float *s, int64_t n) {
  /* Exact max (§attention): max_ps(s, m) keeps m when s is NaN (NaN never
   * wins, as ref's `if (s > m) m = s`); the order does not matter. */
  __m256 mv = _mm256_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) mv = _mm256_max_ps(_mm256_loadu_ps(s + j), mv);
  if (j < n) {
    __m256i k = lanes_upto(n - j);
    mv = _mm256_blendv_ps(mv, _mm256_max_ps(_mm256_maskload_ps(s + j, k), mv), _mm256_castsi256_ps(k));
  }
  float mx[8], m = -INFINITY;
  _mm256_storeu_ps(mx, mv);
  for (int i = 0; i < 8; i++)
    if (mx[i] > m) m = mx[i];
  const __m256 mb = _mm256_set1_ps(m);
  /* e_j = exp(s_j - m); 16-lane sum of §R: lane j mod 16 (lo = 0-7,
   * hi = 8-15), added in order of j, the tail on the first n mod 16 lanes. */
  __m256 lo = _mm256_setzero_ps(), hi = lo;
  for (j = 0; j + 16 <= n; j += 16) {
    lo = exp_acc8(s + j, mb, lo, 8);
    hi = exp_acc8(s + j + 8, mb, hi, 8);
  }
  if (j < n) {
    lo = exp_acc8(s + j, mb, lo, n - j);
    if (n - j > 8) hi = exp_acc8(s + j + 8, mb, hi, n - j - 8);
  }
  return lane_tree16(lo, hi);
}

/* P.V for QT rows and CT chunks of 8 d's from d0 (QT * CT = 8 chains):
 * acc = fma(e_j, v_j[d], acc) for j = 0..n_r-1 in order from +0, then
 * o = acc / sum (§attention). The rows share v_j while all of them see key
 * j; a longer row then continues alone, in the same order. */
static HMX_ALWAYS_INLINE void pv_tile(int QT, int CT, const float *const *e, const int64_t *n,
                                      const float *sum, float *const *o, const float *vbase,
                                      int64_t ldv, int64_t d0, int64_t D) {
  __m256 acc[2][8];
  __m256i mk[8];
  for (int c = 0; c < CT; c++) mk[c] = lanes_upto(D - d0 - 8 * c);
  for (int t = 0; t < QT; t++)
    for (int c = 0; c < CT; c++) acc[t][c] = _mm256_setzero_ps();
  int64_t nmin = n[0], nmaxr = n[0];
  for (int t = 1; t < QT; t++) {
    if (n[t] < nmin) nmin = n[t];
    if (n[t] > nmaxr) nmaxr = n[t];
  }
  const float *vp = vbase + d0;
  for (int64_t j = 0; j < nmin; j++, vp += ldv) { /* §attention: P.V sequential over j */
    __m256 v[8];
    for (int c = 0; c < CT; c++) v[c] = _mm256_maskload_ps(vp + 8 * c, mk[c]);
    for (int t = 0; t < QT; t++) {
      __m256 x = _mm256_broadcast_ss(e[t] + j);
      for (int c = 0; c < CT; c++) acc[t][c] = _mm256_fmadd_ps(x, v[c], acc[t][c]);
    }
  }
  if (nmaxr > nmin) {
    for (int t = 0; t < QT; t++) {
      const float *vq = vbase + d0 + nmin * ldv;
      for (int64_t jj = nmin; jj < n[t]; jj++, vq += ldv) { /* same order, row alone */
        __m256 x = _mm256_broadcast_ss(e[t] + jj);
        for (int c = 0; c < CT; c++)
          acc[t][c] = _mm256_fmadd_ps(x, _mm256_maskload_ps(vq + 8 * c, mk[c]), acc[t][c]);
      }
    }
  }
  for (int t = 0; t < QT; t++) { /* o_d = acc / sum: one IEEE division */
    __m256 sv = _mm256_set1_ps(sum[t]);
    for (int c = 0; c < CT; c++)
      if (d0 + 8 * c < D) _mm256_maskstore_ps(o[t] + d0 + 8 * c, mk[c], _mm256_div_ps(acc[t][c], sv));
  }
}

static void attend_item(const att_geom *G, const att_item *it, float *S, float *kt, float *sums) {
  const hmx_attention_args *a = G->a;
  const int64_t D = a->d, R = it->rows;
  const __m256 scale = _mm256_set1_ps(a->scale);
  /* 1. Scores, 32 keys at a time (§attention: dot over d in order, * scale). */
  for (int64_t j0 = 0; j0 < it->nmax; j0 += HMX_ATT_KEYS) {
    int64_t nk = it->nmax - j0 < HMX_ATT_KEYS ? it->nmax - j0 : HMX_ATT_KEYS;
    for (int kb = 0; kb < 4; kb++) {
      int64_t cnt = nk - 8 * kb;
      cnt = cnt < 0 ? 0 : cnt > 8 ? 8 : cnt;
      const float *kp = it->kbase + (j0 + 8 * kb) * it->ldkv;
      for (int64_t d0 = 0; d0 < D; d0 += 8)
        transpose8(kp, it->ldkv, (int)cnt, d0, (int)(D - d0 < 8 ? D - d0 : 8), kt + kb * D * 8 + d0 * 8);
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
  /* 3. P.V across d (§attention): two rows x 32 d's, or one row x 64 d's. */
  for (int64_t r = 0; r < R; r += 2) {
    int qt = R - r >= 2 ? 2 : 1;
    const float *e[2] = {S + r * G->ld_s, S + (r + qt - 1) * G->ld_s};
    float *o[2] = {a->o + row_off(G, it, r), a->o + row_off(G, it, r + qt - 1)};
    int64_t n[2] = {row_n(G, it, r), row_n(G, it, r + qt - 1)};
    if (qt == 2)
      for (int64_t d0 = 0; d0 < D; d0 += 32) pv_tile(2, 4, e, n, sums + r, o, it->vbase, it->ldkv, d0, D);
    else
      for (int64_t d0 = 0; d0 < D; d0 += 64) pv_tile(1, 8, e, n, sums + r, o, it->vbase, it->ldkv, d0, D);
  }
}

hmx_status hmx_avx2_attention(const hmx_attention_args *a) {
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
  /* Per thread: scores [rows_max][ld_s], Kt [4][D][8], sums [rows_max]. */
  const int64_t per = G.rows_max * G.ld_s + 4 * a->d * 8 + G.rows_max + 8;
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
    float *sums = kt + 4 * a->d * 8;
    att_item it;
    int64_t bg = idx / G.nqb, z = idx % G.nqb;
    /* Pair short and long causal blocks: 0, last, 1, last-1, ... */
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
