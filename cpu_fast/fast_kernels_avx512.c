/* The fast kernels for AVX-512 CPUs: compiled with AVX-512 flags (the
 * portable C of fast_kernels_impl.h vectorizes 16 wide, with fma contraction
 * allowed in this fast-tier file only) and exp through SLEEF's 16-lane
 * Sleef_expf16_u10avx512f (max error 1.0 ulp). Built only with SLEEF. */
#include "unroll.h"
#include "cpu_fast.h"

#include <immintrin.h>
#include <sleef.h>
#include <stdint.h>

#define FK_ISA "avx512+sleef"
static void fk_vexp(float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 k = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    __m512 v = Sleef_expf16_u10avx512f(_mm512_maskz_loadu_ps(k, x + i));
    _mm512_mask_storeu_ps(x + i, k, v);
  }
}

static hmx_status fk512_attention_few(const hmx_attention_args *a);
#define FK_ATTENTION_FEW fk512_attention_few
#define FK_NAME hmx_fast_kernels_avx512
#include "fast_kernels_impl.h"

/* Attention for a few queries (decode, Sq <= 4), docs/NUMERICS.md "Fast
 * tier", attention. Item = (batch, kv head): its rows are every query head
 * of the GQA group at every query position (r = t * group + hh), so K and V
 * are streamed once per group, 16 keys at a time for all rows.
 *   scores: per row and key, the dot over d in 16-lane partial sums (one
 *     fma per 16 d's), then 16 keys' vectors folded into one vector of 16
 *     sums by a 4-level add tree (fk512_hsum16) and times scale: the bound's
 *     score error allows any order of the D products' sum.
 *   softmax over the whole row at once (fk_att_block, one block: no
 *     rescaling), exp by SLEEF's u10.
 *   P V: up to 4 rows share each loaded v_j, d in chunks of 64 held in
 *     registers, j in order; then o = acc / l, one division per output.
 * Why: the portable kernel took 2.5-3.4x the exact kernel's time at Skv =
 * 1024 (a horizontal sum per key and row, 64-key blocks per row with their
 * rescalings, K and V read once per query head). Zen 4, 12 query / 4 kv
 * heads, D = 64, 1 thread: Sq = 1 0.25 -> 0.060 ms (exact 0.096), Sq = 4
 * 0.97 -> 0.20 ms (exact 0.27). */

/* Forced inline: the P V tile's accumulators are indexed by its row count,
 * a constant only once inlined (else gcc kept them on the stack, storing
 * all 16 at every key). This file is compiled by gcc or clang only (the
 * AVX-512 flags of cpu_fast.cmake). */
#define FK512_INLINE static inline __attribute__((always_inline))

/* v[i] (16 lanes each) -> lane i of the result = the sum of v[i]'s lanes. */
static inline __m512 fk512_hsum16(const __m512 v[16]) {
  __m512 t[8], u[4];
  /* per 128-bit lane: (a0+a2, b0+b2, a1+a3, b1+b3) of v[2i] = a, v[2i+1] = b */
  HMX_UNROLL(8)
  for (int i = 0; i < 8; i++)
    t[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  /* per 128-bit lane L: the lane-L sums of v[4k .. 4k+3] */
  HMX_UNROLL(4)
  for (int k = 0; k < 4; k++)
    u[k] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * k], t[2 * k + 1], 0x44),
                         _mm512_shuffle_ps(t[2 * k], t[2 * k + 1], 0xEE));
  /* the four 128-bit lanes of u[k] summed into 128-bit lane k */
  const __m512 x01 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44),
                                   _mm512_shuffle_f32x4(u[0], u[1], 0xEE));
  const __m512 x23 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x44),
                                   _mm512_shuffle_f32x4(u[2], u[3], 0xEE));
  return _mm512_add_ps(_mm512_shuffle_f32x4(x01, x23, 0x88), _mm512_shuffle_f32x4(x01, x23, 0xDD));
}

static inline __mmask16 fk512_lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (unsigned)(n > 0 ? n : 0)) - 1u);
}

/* s[j] = scale * (q . k_j) for j in [j0, j0 + 16) of the n keys (lanes past
 * n read key n - 1 and are not stored: every lane of the add tree is its own
 * key's sum, so they change nothing). */
static void fk512_scores16(const float *q, const float *k, int64_t ldk, int64_t j0, int64_t n,
                           int64_t d, __m512 scale, float *s) {
  const float *kp[16];
  HMX_UNROLL(16)
  for (int jj = 0; jj < 16; jj++) kp[jj] = k + (j0 + jj < n ? j0 + jj : n - 1) * ldk;
  __m512 v[16];
  HMX_UNROLL(16)
  for (int jj = 0; jj < 16; jj++) v[jj] = _mm512_setzero_ps();
  for (int64_t c0 = 0; c0 < d; c0 += 16) {
    const __mmask16 m = fk512_lanes(d - c0);
    const __m512 qc = _mm512_maskz_loadu_ps(m, q + c0);
    HMX_UNROLL(16)
    for (int jj = 0; jj < 16; jj++)
      v[jj] = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, kp[jj] + c0), v[jj]);
  }
  _mm512_mask_storeu_ps(s + j0, fk512_lanes(n - j0), _mm512_mul_ps(fk512_hsum16(v), scale));
}

/* P V for QT (1..4) rows and the 64 d's from d0 (acc in registers): rows
 * share v_j while all of them take key j, then go on alone; o = acc / l. */
FK512_INLINE void fk512_pv64(const int QT, const float *const *p, const int64_t *n,
                              const float *l, float *const *o, const float *v, int64_t ldv,
                              int64_t d0, int64_t d) {
  __m512 acc[4][4];
  __mmask16 mk[4];
  HMX_UNROLL(4)
  for (int c = 0; c < 4; c++) mk[c] = fk512_lanes(d - d0 - 16 * c);
  HMX_UNROLL(4)
  for (int t = 0; t < 4; t++)
    HMX_UNROLL(4)
    for (int c = 0; c < 4; c++) acc[t][c] = _mm512_setzero_ps();
  int64_t nmin = n[0];
  for (int t = 1; t < QT; t++) nmin = n[t] < nmin ? n[t] : nmin;
  const float *vp = v + d0;
  for (int64_t j = 0; j < nmin; j++, vp += ldv) {
    __m512 vv[4];
    HMX_UNROLL(4)
    for (int c = 0; c < 4; c++) vv[c] = _mm512_maskz_loadu_ps(mk[c], vp + 16 * c);
    HMX_UNROLL(4)
    for (int t = 0; t < QT; t++) {
      const __m512 x = _mm512_set1_ps(p[t][j]);
      HMX_UNROLL(4)
      for (int c = 0; c < 4; c++) acc[t][c] = _mm512_fmadd_ps(x, vv[c], acc[t][c]);
    }
  }
  HMX_UNROLL(4)
  for (int t = 0; t < QT; t++) {
    const float *vq = v + d0 + nmin * ldv;
    for (int64_t j = nmin; j < n[t]; j++, vq += ldv) {
      const __m512 x = _mm512_set1_ps(p[t][j]);
      HMX_UNROLL(4)
      for (int c = 0; c < 4; c++)
        acc[t][c] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mk[c], vq + 16 * c), acc[t][c]);
    }
    const __m512 sum = _mm512_set1_ps(l[t]);
    HMX_UNROLL(4)
    for (int c = 0; c < 4; c++)
      if (d0 + 16 * c < d) _mm512_mask_storeu_ps(o[t] + d0 + 16 * c, mk[c], _mm512_div_ps(acc[t][c], sum));
  }
}

static void fk512_item(const hmx_attention_args *a, int64_t bi, int64_t g, float *s, int64_t lds,
                       float *m, float *l, int64_t *nr, const float **qs, float **os) {
  const int64_t d = a->d, group = a->hq / a->hkv, R = a->sq * group;
  const int64_t ldk = a->hkv * d, qrow = a->hq * d;
  const float *k = a->k + bi * a->skv * ldk + g * d, *v = a->v + bi * a->skv * ldk + g * d;
  int64_t nmax = 0;
  for (int64_t r = 0; r < R; r++) {
    const int64_t t = r / group, h = g * group + r % group;
    int64_t n = a->causal ? a->q_offset + t + 1 : a->skv;
    n = n < 0 ? 0 : n > a->skv ? a->skv : n;
    nr[r] = n;
    nmax = n > nmax ? n : nmax;
    qs[r] = a->q + (bi * a->sq + t) * qrow + h * d;
    os[r] = a->o + (bi * a->sq + t) * qrow + h * d;
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  const __m512 scale = _mm512_set1_ps(a->scale);
  for (int64_t j0 = 0; j0 < nmax; j0 += 16) /* the 16 keys stay in L1 for all rows */
    for (int64_t r = 0; r < R; r++)
      if (j0 < nr[r]) fk512_scores16(qs[r], k, ldk, j0, nr[r], d, scale, s + r * lds);
  fk_att_block(s, lds, R, nr, NULL, d, m, l); /* the first block: acc is not touched */
  for (int64_t r = 0; r < R; r += 4) {
    const int QT = R - r < 4 ? (int)(R - r) : 4;
    const float *p[4];
    for (int t = 0; t < QT; t++) p[t] = s + (r + t) * lds;
    for (int64_t d0 = 0; d0 < d; d0 += 64) {
      if (QT == 4) fk512_pv64(4, p, nr + r, l + r, os + r, v, ldk, d0, d);
      else if (QT == 3) fk512_pv64(3, p, nr + r, l + r, os + r, v, ldk, d0, d);
      else if (QT == 2) fk512_pv64(2, p, nr + r, l + r, os + r, v, ldk, d0, d);
      else fk512_pv64(1, p, nr + r, l + r, os + r, v, ldk, d0, d);
    }
  }
}

static hmx_status fk512_attention_few(const hmx_attention_args *a) {
  const int64_t items = a->b * a->hkv;
  if (items == 0 || a->sq == 0 || a->d == 0) return HMX_OK;
  const int64_t R = a->sq * (a->hq / a->hkv), lds = (a->skv + 15) / 16 * 16 + 16;
  const int nt = hmx_thread_count(a->threads, items);
  /* per thread: s [R, lds], m, l [R]; nr [R]; q and o row pointers [R] */
  const int64_t per = R * lds + 2 * R;
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  int64_t *nrs = hmx_alloc_array((size_t)nt * (size_t)R, sizeof(int64_t));
  const float **qs = hmx_alloc_array((size_t)nt * (size_t)R, sizeof(float *));
  float **os = hmx_alloc_array((size_t)nt * (size_t)R, sizeof(float *));
  if (!scratch || !nrs || !qs || !os) {
    free(scratch), free(nrs), free(qs), free(os);
    return hmx_fail(HMX_ERR_NO_MEMORY, "attention (fast): out of memory");
  }
  const int64_t chunk = (items + nt - 1) / nt;
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++) {
    float *s = scratch + (int64_t)t * per;
    const int64_t w1 = (t + 1) * chunk < items ? (t + 1) * chunk : items;
    for (int64_t it = t * chunk; it < w1; it++)
      fk512_item(a, it / a->hkv, it % a->hkv, s, lds, s + R * lds, s + R * lds + R,
                 nrs + (int64_t)t * R, qs + (int64_t)t * R, os + (int64_t)t * R);
  }
  free(scratch), free(nrs), free(qs), free(os);
  return HMX_OK;
}
