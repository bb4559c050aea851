/* Reference Strassen matrix product (docs/NUMERICS.md §strassen).
 *
 *   strassen(A[m,k], B[k,n]):
 *     if min(m, k, n) <= cutoff: the canonical gemm (fmaf chain over k from +0)
 *     else: pad every odd dimension with one +0 row/column at its end, split
 *           A, B into 2x2 blocks of the halves, form Strassen's seven products
 *           recursively, combine them, and drop the padding.
 *
 * Every block sum is one rounded add/subtract per element, in the order the
 * formulas below are written; the combinations are parenthesized left to
 * right. Padding is per level (dynamic), so only odd sizes pay for it. This
 * is a readable definition, not a fast one: it allocates at every level. */
#include "ref.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A view of a row-major block: rows x cols with leading dimension ld. */
typedef struct blk {
  float *p;
  int64_t rows, cols, ld;
} blk;

static blk sub(blk m, int64_t r, int64_t c, int64_t rows, int64_t cols) {
  blk s = {m.p + r * m.ld + c, rows, cols, m.ld};
  return s;
}

/* The leaf: exactly hmx_gemm without bias (NUMERICS §gemm). */
static void gemm_canon(blk a, blk b, blk c) {
  for (int64_t i = 0; i < c.rows; i++)
    for (int64_t j = 0; j < c.cols; j++) {
      float acc = 0.0f;
      for (int64_t p = 0; p < a.cols; p++) acc = fmaf(a.p[i * a.ld + p], b.p[p * b.ld + j], acc);
      c.p[i * c.ld + j] = acc;
    }
}

/* d = x + y (sign = +1) or x - y (sign = -1), elementwise, one rounding each. */
static void add(blk x, blk y, blk d, int sign) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) {
      float u = x.p[i * x.ld + j], v = y.p[i * y.ld + j];
      d.p[i * d.ld + j] = sign > 0 ? u + v : u - v;
    }
}

static void copy_into(blk src, blk dst) {
  for (int64_t i = 0; i < src.rows; i++)
    memcpy(dst.p + i * dst.ld, src.p + i * src.ld, (size_t)src.cols * sizeof(float));
}

static blk scratch(float **pool, int64_t rows, int64_t cols) {
  blk b = {*pool, rows, cols, cols};
  *pool += rows * cols;
  return b;
}

static hmx_status strassen_rec(blk a, blk b, blk c, int64_t cutoff) {
  int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m <= cutoff || k <= cutoff || n <= cutoff) {
    gemm_canon(a, b, c);
    return HMX_OK;
  }
  /* halves after padding odd sizes by one */
  int64_t m2 = (m + 1) / 2, k2 = (k + 1) / 2, n2 = (n + 1) / 2;
  /* padded copies of A, B and the padded result, then two operand
   * temporaries and the seven products */
  size_t total = (size_t)(4 * m2 * k2 + 4 * k2 * n2 + 4 * m2 * n2 + m2 * k2 + k2 * n2 +
                          7 * m2 * n2);
  float *mem = hmx_alloc_array(total, sizeof(float)), *pool = mem;
  if (!mem) return HMX_ERR_NO_MEMORY;
  memset(mem, 0, total * sizeof(float)); /* +0 padding */
  blk ap = scratch(&pool, 2 * m2, 2 * k2), bp = scratch(&pool, 2 * k2, 2 * n2);
  blk cp = scratch(&pool, 2 * m2, 2 * n2);
  blk s = scratch(&pool, m2, k2), t = scratch(&pool, k2, n2);
  blk mm[7];
  for (int i = 0; i < 7; i++) mm[i] = scratch(&pool, m2, n2);
  copy_into(a, sub(ap, 0, 0, m, k));
  copy_into(b, sub(bp, 0, 0, k, n));
  blk a11 = sub(ap, 0, 0, m2, k2), a12 = sub(ap, 0, k2, m2, k2);
  blk a21 = sub(ap, m2, 0, m2, k2), a22 = sub(ap, m2, k2, m2, k2);
  blk b11 = sub(bp, 0, 0, k2, n2), b12 = sub(bp, 0, n2, k2, n2);
  blk b21 = sub(bp, k2, 0, k2, n2), b22 = sub(bp, k2, n2, k2, n2);
  hmx_status st = HMX_OK;
  /* M1 = (A11 + A22)(B11 + B22) */
  add(a11, a22, s, +1); add(b11, b22, t, +1);
  if (st == HMX_OK) st = strassen_rec(s, t, mm[0], cutoff);
  /* M2 = (A21 + A22) B11 */
  add(a21, a22, s, +1);
  if (st == HMX_OK) st = strassen_rec(s, b11, mm[1], cutoff);
  /* M3 = A11 (B12 - B22) */
  add(b12, b22, t, -1);
  if (st == HMX_OK) st = strassen_rec(a11, t, mm[2], cutoff);
  /* M4 = A22 (B21 - B11) */
  add(b21, b11, t, -1);
  if (st == HMX_OK) st = strassen_rec(a22, t, mm[3], cutoff);
  /* M5 = (A11 + A12) B22 */
  add(a11, a12, s, +1);
  if (st == HMX_OK) st = strassen_rec(s, b22, mm[4], cutoff);
  /* M6 = (A21 - A11)(B11 + B12) */
  add(a21, a11, s, -1); add(b11, b12, t, +1);
  if (st == HMX_OK) st = strassen_rec(s, t, mm[5], cutoff);
  /* M7 = (A12 - A22)(B21 + B22) */
  add(a12, a22, s, -1); add(b21, b22, t, +1);
  if (st == HMX_OK) st = strassen_rec(s, t, mm[6], cutoff);
  if (st == HMX_OK) {
    blk c11 = sub(cp, 0, 0, m2, n2), c12 = sub(cp, 0, n2, m2, n2);
    blk c21 = sub(cp, m2, 0, m2, n2), c22 = sub(cp, m2, n2, m2, n2);
    /* C11 = ((M1 + M4) - M5) + M7 */
    add(mm[0], mm[3], c11, +1); add(c11, mm[4], c11, -1); add(c11, mm[6], c11, +1);
    /* C12 = M3 + M5 */
    add(mm[2], mm[4], c12, +1);
    /* C21 = M2 + M4 */
    add(mm[1], mm[3], c21, +1);
    /* C22 = ((M1 - M2) + M3) + M6 */
    add(mm[0], mm[1], c22, -1); add(c22, mm[2], c22, +1); add(c22, mm[5], c22, +1);
    copy_into(sub(cp, 0, 0, m, n), c);
  }
  free(mem);
  return st;
}

hmx_status hmx_ref_strassen(const hmx_strassen_args *s) {
  blk a = {(float *)s->a, s->m, s->k, s->k}, b = {(float *)s->b, s->k, s->n, s->n};
  blk c = {s->c, s->m, s->n, s->n};
  return strassen_rec(a, b, c, s->cutoff);
}
