/* strassen on a backend's gemm (docs/NUMERICS.md §strassen, ref/strassen.c).
 *
 * The recursion is the reference's: pad every odd dimension with one +0
 * row/column, split into 2x2 blocks of halves, the same seven products from
 * the same operand sums, the same combinations parenthesized left to right.
 * Two differences that change no bit: the quadrants are copied into
 * contiguous blocks (so every leaf is one call of the backend gemm on
 * contiguous operands), and only the unpadded part of C is combined. Every
 * block sum is one rounded add or subtract per element, so evaluating it in
 * any element order, vectorized by the compiler or not, gives the
 * reference's bits; the leaves (min(M, K, N) <= cutoff) are the canonical
 * gemm without bias, which the backend gemm is bit for bit (§gemm).
 * Threads: with two or more, the seven top-level products run in parallel
 * (each recursion single-threaded); a leaf at the top (no recursion) is one
 * gemm call that splits its own tiles. */
#include "compose.h"
#include "internal.h"
#include "parallel.h"
#include "ref.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* d = x + y or x - y elementwise over n contiguous floats (one rounding). */
static void add_n(const float *x, const float *y, float *d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = x[i] + y[i];
}
static void sub_n(const float *x, const float *y, float *d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = x[i] - y[i];
}

/* The four rows x cols quadrants of src (srows x scols, row-major), zero
 * padded where the quadrant passes the end of src: q[0] = 11, 12, 21, 22. */
static void split(const float *src, int64_t srows, int64_t scols, int64_t rows, int64_t cols,
                  float *q[4]) {
  for (int qi = 0; qi < 4; qi++) {
    int64_t r0 = (qi / 2) * rows, c0 = (qi % 2) * cols;
    for (int64_t i = 0; i < rows; i++) {
      float *dst = q[qi] + i * cols;
      int64_t r = r0 + i, valid = r < srows ? (scols - c0 < cols ? scols - c0 : cols) : 0;
      if (valid > 0) memcpy(dst, src + r * scols + c0, (size_t)valid * sizeof(float));
      else valid = 0;
      memset(dst + valid, 0, (size_t)(cols - valid) * sizeof(float)); /* +0 padding */
    }
  }
}

typedef struct sctx {
  const hmx_compose_kernels *k;
  int64_t cutoff;
  int threads;
} sctx;

static hmx_status leaf(const sctx *s, const float *a, const float *b, float *c, int64_t m,
                       int64_t k, int64_t n) {
  hmx_gemm_args g = {a, b, NULL, c, m, n, k, 0, s->threads, HMX_F32, NULL, NULL, 0, 0, NULL};
  return s->k->gemm(&g);
}

/* c[m, n] = a[m, k] b[k, n], all contiguous; top: the outermost level. */
static hmx_status rec(const sctx *s, const float *a, const float *b, float *c, int64_t m,
                      int64_t k, int64_t n, int top) {
  if (m <= s->cutoff || k <= s->cutoff || n <= s->cutoff) return leaf(s, a, b, c, m, k, n);
  int64_t m2 = (m + 1) / 2, k2 = (k + 1) / 2, n2 = (n + 1) / 2;
  int64_t ak = m2 * k2, bk = k2 * n2, cn = m2 * n2;
  size_t total = (size_t)(5 * ak + 5 * bk + 7 * cn);
  float *mem = hmx_alloc_array(total, sizeof(float));
  if (!mem) return HMX_ERR_NO_MEMORY;
  float *aq[4], *bq[4], *mm[7];
  for (int i = 0; i < 4; i++) aq[i] = mem + i * ak;
  for (int i = 0; i < 4; i++) bq[i] = mem + 4 * ak + i * bk;
  float *sa = mem + 4 * ak + 4 * bk, *tb = sa + ak;
  for (int i = 0; i < 7; i++) mm[i] = tb + bk + i * cn;
  split(a, m, k, m2, k2, aq);
  split(b, k, n, k2, n2, bq);
  float *a11 = aq[0], *a12 = aq[1], *a21 = aq[2], *a22 = aq[3];
  float *b11 = bq[0], *b12 = bq[1], *b21 = bq[2], *b22 = bq[3];
  hmx_status st = HMX_OK;
  const int nth = top ? hmx_thread_count(s->threads, 7) : 1;
  if (nth > 1) {
    /* the top level with threads: all seven operand pairs first, then the
     * seven products in parallel, each single-threaded (one parallel region
     * instead of one per leaf; the same sums and products) */
    float *ops = hmx_alloc_array((size_t)(7 * (ak + bk)), sizeof *ops);
    if (!ops) {
      free(mem);
      return HMX_ERR_NO_MEMORY;
    }
    float *S[7], *T[7];
    for (int i = 0; i < 7; i++) S[i] = ops + i * (ak + bk), T[i] = S[i] + ak;
    add_n(a11, a22, S[0], ak); add_n(b11, b22, T[0], bk);
    add_n(a21, a22, S[1], ak);
    sub_n(b12, b22, T[2], bk);
    sub_n(b21, b11, T[3], bk);
    add_n(a11, a12, S[4], ak);
    sub_n(a21, a11, S[5], ak); add_n(b11, b12, T[5], bk);
    sub_n(a12, a22, S[6], ak); add_n(b21, b22, T[6], bk);
    const float *lhs[7] = {S[0], S[1], a11, a22, S[4], S[5], S[6]};
    const float *rhs[7] = {T[0], b11, T[2], T[3], b22, T[5], T[6]};
    const sctx one = {s->k, s->cutoff, 1};
    hmx_status pst[7];
    HMX_OMP_FOR(nth)
    for (int p = 0; p < 7; p++) pst[p] = rec(&one, lhs[p], rhs[p], mm[p], m2, k2, n2, 0);
    for (int p = 0; p < 7; p++)
      if (pst[p] != HMX_OK) st = pst[p];
    free(ops);
  } else {
    /* the seven products, operand sums as in ref/strassen.c */
    add_n(a11, a22, sa, ak); add_n(b11, b22, tb, bk);
    if (st == HMX_OK) st = rec(s, sa, tb, mm[0], m2, k2, n2, 0);
    add_n(a21, a22, sa, ak);
    if (st == HMX_OK) st = rec(s, sa, b11, mm[1], m2, k2, n2, 0);
    sub_n(b12, b22, tb, bk);
    if (st == HMX_OK) st = rec(s, a11, tb, mm[2], m2, k2, n2, 0);
    sub_n(b21, b11, tb, bk);
    if (st == HMX_OK) st = rec(s, a22, tb, mm[3], m2, k2, n2, 0);
    add_n(a11, a12, sa, ak);
    if (st == HMX_OK) st = rec(s, sa, b22, mm[4], m2, k2, n2, 0);
    sub_n(a21, a11, sa, ak); add_n(b11, b12, tb, bk);
    if (st == HMX_OK) st = rec(s, sa, tb, mm[5], m2, k2, n2, 0);
    sub_n(a12, a22, sa, ak); add_n(b21, b22, tb, bk);
    if (st == HMX_OK) st = rec(s, sa, tb, mm[6], m2, k2, n2, 0);
  }
  if (st == HMX_OK) {
    /* C11 = ((M1 + M4) - M5) + M7, C12 = M3 + M5, C21 = M2 + M4,
     * C22 = ((M1 - M2) + M3) + M6, on the unpadded elements only */
    int64_t mb = m - m2, nb = n - n2; /* rows / columns of the lower / right blocks */
    for (int64_t i = 0; i < m2; i++) {
      const float *p1 = mm[0] + i * n2, *p3 = mm[2] + i * n2, *p4 = mm[3] + i * n2;
      const float *p5 = mm[4] + i * n2, *p7 = mm[6] + i * n2;
      float *c11 = c + i * n, *c12 = c + i * n + n2;
      for (int64_t j = 0; j < n2; j++) {
        float t = p1[j] + p4[j];
        t = t - p5[j];
        c11[j] = t + p7[j];
      }
      add_n(p3, p5, c12, nb);
    }
    for (int64_t i = 0; i < mb; i++) {
      const float *p1 = mm[0] + i * n2, *p2 = mm[1] + i * n2, *p3 = mm[2] + i * n2;
      const float *p4 = mm[3] + i * n2, *p6 = mm[5] + i * n2;
      float *c21 = c + (m2 + i) * n, *c22 = c + (m2 + i) * n + n2;
      add_n(p2, p4, c21, n2);
      for (int64_t j = 0; j < nb; j++) {
        float t = p1[j] - p2[j];
        t = t + p3[j];
        c22[j] = t + p6[j];
      }
    }
  }
  free(mem);
  return st;
}

hmx_status hmx_compose_strassen(const hmx_strassen_args *a, const hmx_compose_kernels *k) {
  if (a->m <= 0 || a->n <= 0 || a->k <= 0) return hmx_ref_strassen(a); /* nothing to split */
  sctx s = {k, a->cutoff, a->threads};
  return rec(&s, a->a, a->b, a->c, a->m, a->k, a->n, 1);
}
