/* The RoPE angle table (docs/NUMERICS.md §E, "RoPE angles") for the x86 SIMD
 * backends: hmx_canon_sincos_f64 (src/canon_rope.c) mirrored operation for
 * operation on XD_W doubles at once, the pairs i of one position side by
 * side, positions split over threads. Every step below is the scalar
 * function's step in the same order (the same fma, mul, add and sub, each one
 * IEEE operation per lane, and bit moves), so each entry has the scalar
 * table's bits; tests/test_rope_table.c compares the two with memcmp.
 *
 * The scalar function's domain test (|x| <= 2^25, else NaN) has no mirror:
 * the table's angles are pos * inv_freq with 0 <= pos < 2^24 (checked first,
 * by hmx_rope_table_check) and 0 < inv_freq <= 1 (base > 1, i >= 0), so every
 * angle lies in [0, 2^24). The last half mod XD_W pairs of a row take the
 * scalar function itself.
 *
 * The including file defines, for its ISA:
 *   XD_W, xd_v (XD_W doubles), xd_set1(d), xd_load(p), xd_add, xd_sub,
 *   xd_mul, xd_fma(a, b, c) = fma(a, b, c), xd_neg(a) (sign bit flipped),
 *   xd_quadrant(z, s, c, *so, *co): the scalar's `switch (q)` on
 *   q = (bits of z) & 3 (only bits move), and xd_store_f32(p, v): the XD_W
 *   values rounded to float (RNE, as the C cast) and stored at p;
 *   XD_TABLE_FN, the function's name. */
#include <stdlib.h>

#include "canon.h"
#include "canon_sincos.h"
#include "internal.h"
#include "parallel.h"

/* sin and cos of the XD_W angles x, |x| < 2^25: hmx_canon_sincos_f64's body. */
XV_INLINE void xd_sincos(xd_v x, xd_v *s_out, xd_v *c_out) {
  const xd_v shift = xd_set1(HMX_SC_SHIFT52);
  /* Reduction: x = k pi/2 + (h + l), |h| <= pi/4 (+tiny), |l| <= ulp(h)/2. */
  const xd_v z = xd_fma(x, xd_set1(HMX_SC_TWO_OVER_PI), shift);
  const xd_v k = xd_sub(z, shift);
  const xd_v nk = xd_neg(k);                             /* -k: exact */
  const xd_v r1 = xd_fma(nk, xd_set1(HMX_SC_PIO2_1), x); /* exact */
  const xd_v p2 = xd_mul(k, xd_set1(HMX_SC_PIO2_2));     /* exact */
  const xd_v rh = xd_sub(r1, p2);                        /* TwoSum */
  const xd_v bb = xd_sub(rh, r1);
  const xd_v e2 = xd_add(xd_sub(r1, xd_sub(rh, bb)), xd_sub(xd_neg(p2), bb));
  const xd_v tl = xd_fma(nk, xd_set1(HMX_SC_PIO2_3), e2);
  const xd_v h = xd_add(rh, tl); /* Fast2Sum */
  const xd_v l = xd_sub(tl, xd_sub(h, rh));
  /* Kernels on h + l; r2 + ez = h^2 exactly, hz = r2/2. */
  const xd_v r2 = xd_mul(h, h);
  const xd_v ez = xd_fma(h, h, xd_neg(r2));
  const xd_v hz = xd_mul(xd_set1(0.5), r2);
  xd_v ps = xd_set1(hmx_canon_sin_c[8]);
  for (int j = 7; j >= 0; j--) ps = xd_fma(ps, r2, xd_set1(hmx_canon_sin_c[j]));
  const xd_v sr = xd_add(h, xd_fma(xd_mul(h, r2), ps, xd_fma(xd_neg(hz), l, l)));
  xd_v pc = xd_set1(hmx_canon_cos_c[7]);
  for (int j = 6; j >= 0; j--) pc = xd_fma(pc, r2, xd_set1(hmx_canon_cos_c[j]));
  const xd_v one = xd_set1(1.0);
  const xd_v w = xd_sub(one, hz);
  const xd_v ew = xd_sub(xd_sub(one, w), hz); /* exact */
  xd_v ci = xd_fma(xd_set1(-0.5), ez, ew);
  ci = xd_fma(xd_neg(h), l, ci);
  ci = xd_fma(xd_mul(r2, r2), pc, ci);
  const xd_v cr = xd_add(w, ci);
  xd_quadrant(z, sr, cr, s_out, c_out);
}

/* Positions [j0, j1) of the table: row j holds pairs 0 .. half-1. */
static void xd_table_rows(const int32_t *pos, int64_t j0, int64_t j1, int64_t half,
                          const double *inv_freq, float *cos_tab, float *sin_tab) {
  for (int64_t j = j0; j < j1; j++) {
    const double p = (double)pos[j]; /* exact: |pos| < 2^24 */
    float *ct = cos_tab + j * half, *st = sin_tab + j * half;
    int64_t i = 0;
    for (; i + XD_W <= half; i += XD_W) {
      xd_v s, c;
      xd_sincos(xd_mul(xd_set1(p), xd_load(inv_freq + i)), &s, &c);
      xd_store_f32(ct + i, c);
      xd_store_f32(st + i, s);
    }
    for (; i < half; i++) { /* the scalar function for the rest */
      double s, c;
      hmx_canon_sincos_f64(p * inv_freq[i], &s, &c);
      ct[i] = (float)c;
      st[i] = (float)s;
    }
  }
}

/* Entries a thread takes at least: below this a second thread's start costs
 * more than it saves (an entry takes a few ns here). */
#define XD_ENTRIES_PER_THREAD 4096

hmx_status XD_TABLE_FN(const int32_t *pos, int64_t t, int rot_dim, float base, float *cos_tab,
                       float *sin_tab, int threads) {
  hmx_status s = hmx_rope_table_check(pos, t, rot_dim, base, cos_tab, sin_tab);
  if (s != HMX_OK) return s;
  const int64_t half = rot_dim / 2;
  double *inv_freq = malloc((size_t)half * sizeof *inv_freq);
  if (!inv_freq)
    return hmx_fail(HMX_ERR_NO_MEMORY, "rope_table: cannot allocate %lld doubles",
                    (long long)half);
  /* the inverse frequencies in scalar code: half of them a call, each the
   * scalar table's value */
  const double lb = hmx_canon_log_f64((double)base);
  for (int64_t i = 0; i < half; i++) inv_freq[i] = hmx_rope_inv_freq((int)i, rot_dim, lb);
  /* whole positions a thread (each entry depends on its own position only) */
  const int64_t per = XD_ENTRIES_PER_THREAD / half + 1;
  const int nt = hmx_thread_count(threads, (t + per - 1) / per);
  HMX_FOR_THREADS(nt, th, {
    const int64_t j0 = t * th / nt, j1 = t * (th + 1) / nt;
    xd_table_rows(pos, j0, j1, half, inv_freq, cos_tab, sin_tab);
  });
  free(inv_freq);
  return HMX_OK;
}
