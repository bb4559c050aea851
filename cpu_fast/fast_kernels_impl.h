/* The fast tier's elementwise and attention kernels, as portable C compiled
 * once per ISA (fast_kernels_base.c, fast_kernels_avx512.c) so the compiler
 * vectorizes them for that ISA. The including file defines FK_NAME (the
 * table's name) and a static `fk_vexp(float *x, int64_t n)`: x <- exp(x)
 * elementwise, within 1 ulp (SLEEF's u10 functions, or hmx_expf); it may
 * define FK_ATTENTION_FEW, a kernel of its own for Sq <= 4 (declared before
 * the include, defined after it with the fk_att_* functions here).
 *
 * These kernels follow docs/NUMERICS.md "Fast tier", not the exact tier's
 * evaluation order: dot products are reduced in SIMD partial sums (omp simd
 * reduction) and the softmax is computed online, one key block at a time
 * with rescaling, so results depend on the ISA and the block size. */
#include "cpu_fast.h"
#include "internal.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang reports an `omp simd` loop it does not vectorize (the max
 * reduction's compare-select in the baseline SSE2 build) as an error under
 * -Werror; the hint is only a hint there, the loop is still correct. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
#if defined(_OPENMP)
#define FK_SIMD_SUM(var) HMX_PRAGMA(omp simd reduction(+ : var))
#define FK_SIMD_MAX(var) HMX_PRAGMA(omp simd reduction(max : var))
#define FK_SIMD HMX_PRAGMA(omp simd)
#else
#define FK_SIMD_SUM(var)
#define FK_SIMD_MAX(var)
#define FK_SIMD
#endif

#define FK_CHUNK 256

/* g[i] <- silu(g[i]) * u[i] = g / (1 + exp(-g)) * u; exp(-g) = inf for very
 * negative g gives -0 * u, the limit. */
static void fk_silu_mul(float *g, const float *u, int64_t n) {
  float t[FK_CHUNK];
  for (int64_t i0 = 0; i0 < n; i0 += FK_CHUNK) {
    int64_t len = n - i0 < FK_CHUNK ? n - i0 : FK_CHUNK;
    float *gp = g + i0;
    const float *up = u + i0;
    FK_SIMD
    for (int64_t j = 0; j < len; j++) t[j] = -gp[j];
    fk_vexp(t, len);
    FK_SIMD
    for (int64_t j = 0; j < len; j++) gp[j] = gp[j] / (1.0f + t[j]) * up[j];
  }
}

/* dst[i] <- x[i] rounded to bf16, to nearest even (hmx_f32_to_bf16's rule,
 * branch-free so that it vectorizes): the activations of the bf16 matmul
 * (fast_gemm_dnnl.c). A NaN stays a NaN (quieted); a value past the largest
 * bf16 rounds to inf, as the rounding rule says. */
static void fk_to_bf16(uint16_t *dst, const float *x, int64_t n) {
  FK_SIMD
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet = (u >> 16) | 0x0040u;
    dst[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  }
}

/* The row work of fast_attention_dnnl.c (docs/NUMERICS.md "Fast tier",
 * attention), here so that it runs in this ISA's vectors: at 1024 queries
 * it is as many element operations as the two sgemm calls around it, and
 * compiled for the baseline ISA it took two thirds of the time. The
 * portable kernel below (fk_attention_tile) takes it one row at a time.
 *
 * fk_att_block: one key block's online-softmax step for `rows` rows of
 * scores (row r at s + r * lds, its first nr[r] valid, already times scale):
 * block max, p_j = exp(s_j - m_new) in place, l = l * alpha + sum p, acc
 * [rows, d] times alpha, alpha = exp(m_old - m_new). The weights are those
 * of the bound (exp within 1 ulp of the shifted score); alpha multiplies the
 * numerator acc and the denominator l alike, one rounding each per block,
 * and is skipped when the max does not grow (it is then exactly 1: no
 * rounding, fewer than the bound counts). nr[r] becomes 0 for a row that
 * takes no part in this block (no key, or every score -inf: it adds
 * nothing, and exp(-inf - -inf) would be NaN). NaN scores never win the
 * max; they reach the output through p, which carries no bound. */
static void fk_att_block(float *s, int64_t lds, int64_t rows, int64_t *nr, float *acc, int64_t d,
                         float *m, float *l) {
  for (int64_t r = 0; r < rows; r++) {
    float *row = s + r * lds;
    const int64_t n = nr[r];
    if (n <= 0) {
      nr[r] = 0;
      continue;
    }
    float bm = -INFINITY;
    FK_SIMD_MAX(bm)
    for (int64_t j = 0; j < n; j++) bm = row[j] > bm ? row[j] : bm;
    const float mold = m[r], mnew = bm > mold ? bm : mold;
    if (mnew == -INFINITY) {
      nr[r] = 0;
      continue;
    }
    FK_SIMD
    for (int64_t j = 0; j < n; j++) row[j] -= mnew;
    fk_vexp(row, n);
    float psum = 0.0f;
    FK_SIMD_SUM(psum)
    for (int64_t j = 0; j < n; j++) psum += row[j];
    if (mold == -INFINITY) { /* the row's first block: acc and l are still 0 */
      l[r] = psum;
    } else if (mnew > mold) {
      float alpha = mold - mnew;
      fk_vexp(&alpha, 1);
      l[r] = l[r] * alpha + psum;
      float *o = acc + r * d;
      FK_SIMD
      for (int64_t c = 0; c < d; c++) o[c] *= alpha;
    } else {
      l[r] += psum;
    }
    m[r] = mnew;
  }
}

/* acc[r] += sum_{j0 <= j < nr[r]} p_j v_j, j in order, vectorized over d
 * (the keys of a block not every row takes: the causal diagonal; the
 * bound allows any order of the P V sum). Masked keys are never
 * multiplied, so an inf in a V row the query does not see stays out. */
static void fk_att_pv_tail(const float *p, int64_t lds, int64_t rows, const int64_t *nr,
                           int64_t j0, const float *v, int64_t ldv, float *acc, int64_t d) {
  for (int64_t r = 0; r < rows; r++) {
    const float *pr = p + r * lds;
    float *o = acc + r * d;
    for (int64_t j = j0; j < nr[r]; j++) {
      const float pj = pr[j], *vj = v + j * ldv;
      FK_SIMD
      for (int64_t c = 0; c < d; c++) o[c] += pj * vj[c];
    }
  }
}

/* out[r][c] = acc[r][c] / l[r]: one division per output, as in the exact
 * tier (no reciprocal multiply). */
static void fk_att_finish(const float *acc, const float *l, int64_t rows, int64_t d,
                          float *const *out) {
  for (int64_t r = 0; r < rows; r++) {
    const float sum = l[r], *ar = acc + r * d;
    float *o = out[r];
    FK_SIMD
    for (int64_t c = 0; c < d; c++) o[c] = ar[c] / sum;
  }
}

static float fk_dot(const float *x, const float *y, int64_t n) {
  float s = 0.0f;
  FK_SIMD_SUM(s)
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

/* One (batch, query head, tile of up to HMX_FAST_ATT_QUERY_TILE queries):
 * every query keeps a running max m, a running sum l and an unnormalized
 * output acc; per key block of its own the scores, then the online-softmax
 * step (fk_att_block) and P V (fk_att_pv_tail, j in order), one row at a
 * time; out = acc / l at the end (fk_att_finish). */
static void fk_attention_tile(const hmx_attention_args *a, int64_t bi, int64_t h, int64_t i0,
                              int64_t i1, float *work) {
  const int64_t d = a->d, KB = HMX_FAST_ATT_KEY_BLOCK;
  const int64_t g = h / (a->hq / a->hkv);
  const int64_t krow = a->hkv * d, qrow = a->hq * d;
  float *s = work;                          /* [KB]: scores, then p */
  float *acc = s + KB;                      /* [tile, d] */
  float *m = acc + HMX_FAST_ATT_QUERY_TILE * d; /* [tile] */
  float *l = m + HMX_FAST_ATT_QUERY_TILE;   /* [tile] */
  const float *kbase = a->k + bi * a->skv * krow + g * d;
  const float *vbase = a->v + bi * a->skv * krow + g * d;
  const int64_t nrow = i1 - i0;
  int64_t kmax = a->causal ? a->q_offset + i1 : a->skv;
  for (int64_t r = 0; r < nrow; r++) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    for (int64_t c = 0; c < d; c++) acc[r * d + c] = 0.0f;
  }
  for (int64_t kb = 0; kb < kmax; kb += KB) {
    for (int64_t r = 0; r < nrow; r++) {
      int64_t i = i0 + r;
      int64_t lim = a->causal ? a->q_offset + i + 1 : a->skv;
      if (kb >= lim) continue;
      int64_t nk = (kb + KB < lim ? kb + KB : lim) - kb;
      const float *qi = a->q + (bi * a->sq + i) * qrow + h * d;
      for (int64_t j = 0; j < nk; j++) s[j] = fk_dot(qi, kbase + (kb + j) * krow, d) * a->scale;
      /* nk becomes 0 for a block of -inf scores (it adds nothing) */
      fk_att_block(s, KB, 1, &nk, acc + r * d, d, m + r, l + r);
      fk_att_pv_tail(s, KB, 1, &nk, 0, vbase + kb * krow, krow, acc + r * d, d);
    }
  }
  for (int64_t r = 0; r < nrow; r++) {
    float *out = a->o + (bi * a->sq + i0 + r) * qrow + h * d;
    fk_att_finish(acc + r * d, l + r, 1, d, &out);
  }
}

static hmx_status fk_attention(const hmx_attention_args *a) {
  const int64_t QT = HMX_FAST_ATT_QUERY_TILE;
  const int64_t tiles = (a->sq + QT - 1) / QT;
  const int64_t work = a->b * a->hq * tiles;
  if (work == 0) return HMX_OK;
  const int nt = hmx_thread_count(a->threads, work);
  /* one scratch slice per work item, allocated up front (no malloc in the
   * parallel loop): s (KB), acc (QT * d), m and l (QT each) */
  const int64_t per = HMX_FAST_ATT_KEY_BLOCK + QT * a->d + 2 * QT;
  float *scratch = hmx_alloc_array((size_t)nt * (size_t)per, sizeof(float));
  if (!scratch) return hmx_fail(HMX_ERR_NO_MEMORY, "attention (fast): out of memory");
  const int64_t chunk = (work + nt - 1) / nt;
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++) {
    float *mine = scratch + (int64_t)t * per;
    int64_t w1 = (t + 1) * chunk < work ? (t + 1) * chunk : work;
    for (int64_t w = t * chunk; w < w1; w++) {
      int64_t tile = w % tiles, bh = w / tiles;
      int64_t h = bh % a->hq, bi = bh / a->hq;
      int64_t i0 = tile * QT, i1 = i0 + QT < a->sq ? i0 + QT : a->sq;
      fk_attention_tile(a, bi, h, i0, i1, mine);
    }
  }
  free(scratch);
  return HMX_OK;
}

#if defined(FK_ATTENTION_FEW)
/* The includer's vector kernel for a few queries (decode), Sq <= 4. */
static hmx_status fk_attention_pick(const hmx_attention_args *a) {
  return a->sq <= 4 ? FK_ATTENTION_FEW(a) : fk_attention(a);
}
#define FK_ATTENTION fk_attention_pick
#else
#define FK_ATTENTION fk_attention
#endif

const hmx_fast_kernels FK_NAME = {FK_ISA,          fk_vexp,        fk_silu_mul,  FK_ATTENTION,
                                  fk_att_block,    fk_att_pv_tail, fk_att_finish, fk_to_bf16};
