/* The body of the reference key selection (ref/sketch_select.c says what it
 * computes and why in binary64). Kept in a header so that the SIMD backends
 * compile the SAME source with their ISA flags (src/compose.h): there fma()
 * and sqrt() are single instructions instead of the baseline x86-64 library
 * routines, with the same correctly rounded results, so the same bits.
 *
 * With SS_FAST defined (the backends), the Gram matrix and the leverage
 * scores interleave independent chains (entries of a row, SS_ROWS keys at a
 * time) instead of finishing one chain before the next; every chain keeps
 * its operations and their order, so the bits are those of the plain loops
 * the reference compiles.
 *
 * The includer defines SS_LINKAGE (empty or static) and the three entry
 * points' names SS_LEVERAGE, SS_LEWIS, SS_PRIORITY (signatures as the
 * hmx_ref_select_* of ref/sketch.h), and includes this once per file. */
#include "sketch.h"
#include "internal.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* a ranks before b (a > b in index): a strictly larger score; a number ranks
 * before NaN. Equal scores keep the earlier (lower) index. */
static int ranks_before(double sa, double sb) {
  if (isnan(sb)) return !isnan(sa);
  return sa > sb;
}

/* The kk best scores (largest first, ties to the lower index, NaN last),
 * written to idx in increasing index order. */
static hmx_status top_k(const double *score, int64_t n, int64_t kk, int32_t *idx) {
  unsigned char *taken = calloc((size_t)(n ? n : 1), 1);
  if (!taken) return HMX_ERR_NO_MEMORY;
  for (int64_t r = 0; r < kk; r++) {
    int64_t best = -1;
    for (int64_t j = 0; j < n; j++)
      if (!taken[j] && (best < 0 || ranks_before(score[j], score[best]))) best = j;
    if (best < 0) break; /* kk > n: cannot happen after validation */
    taken[best] = 1;
  }
  int64_t w = 0;
  for (int64_t j = 0; j < n; j++)
    if (taken[j]) idx[w++] = (int32_t)j;
  free(taken);
  return HMX_OK;
}

/* L = cholesky(sum_r y_r^T y_r + lambda I), lower triangle of a d x d array.
 * Gram entry (a, c), a >= c: fma over r = 0..n-1 from +0, then + lambda on
 * the diagonal. Cholesky by columns j = 0..d-1:
 *   s = G[j][j];  s = fma(-L[j][p], L[j][p], s) for p < j;  L[j][j] = sqrt(s)
 *   t = G[i][j];  t = fma(-L[i][p], L[j][p], t) for p < j;  L[i][j] = t / L[j][j]
 * Returns 0 when a pivot s is not > 0 (NaN or inf inputs, overflow). */
static int gram_cholesky(const double *y, int64_t n, int64_t d, double lambda, double *L) {
#ifdef SS_FAST
  /* The same chains with r outermost: each entry (a, c) still starts at +0
   * and takes r = 0 .. n-1 in order, but the independent entries of a row
   * advance together (the compiler vectorizes the c loop). */
  for (int64_t a = 0; a < d; a++)
    for (int64_t c = 0; c <= a; c++) L[a * d + c] = 0.0;
  for (int64_t r = 0; r < n; r++) {
    const double *yr = y + r * d;
    for (int64_t a = 0; a < d; a++) {
      const double ya = yr[a];
      double *la = L + a * d;
      for (int64_t c = 0; c <= a; c++) la[c] = fma(ya, yr[c], la[c]);
    }
  }
#else
  for (int64_t a = 0; a < d; a++)
    for (int64_t c = 0; c <= a; c++) {
      double acc = 0.0;
      for (int64_t r = 0; r < n; r++) acc = fma(y[r * d + a], y[r * d + c], acc);
      L[a * d + c] = acc;
    }
#endif
  for (int64_t a = 0; a < d; a++) L[a * d + a] = L[a * d + a] + lambda;
  for (int64_t j = 0; j < d; j++) {
    double s = L[j * d + j];
    for (int64_t p = 0; p < j; p++) s = fma(-L[j * d + p], L[j * d + p], s);
    if (!(s > 0.0)) return 0;
    L[j * d + j] = sqrt(s);
    for (int64_t i = j + 1; i < d; i++) {
      double t = L[i * d + j];
      for (int64_t p = 0; p < j; p++) t = fma(-L[i * d + p], L[j * d + p], t);
      L[i * d + j] = t / L[j * d + j];
    }
  }
  return 1;
}

/* tau = |L^-1 y|^2: forward substitution z_a = (y_a - sum_p<a L[a][p] z_p) / L[a][a]
 * (fma chain over p from y_a), then tau = fma(z_a, z_a, tau) over a from +0. */
static double leverage(const double *L, const double *y, int64_t d, double *z) {
  double tau = 0.0;
  for (int64_t a = 0; a < d; a++) {
    double t = y[a];
    for (int64_t p = 0; p < a; p++) t = fma(-L[a * d + p], z[p], t);
    z[a] = t / L[a * d + a];
    tau = fma(z[a], z[a], tau);
  }
  return tau;
}

#ifdef SS_FAST
enum { SS_ROWS = 8 }; /* keys whose substitutions advance together */
#else
enum { SS_ROWS = 1 };
#endif

typedef struct lev_work {
  double *y, *L, *z, *score;
} lev_work;

static hmx_status work_alloc(lev_work *w, int64_t n, int64_t d) {
  w->y = hmx_alloc_array((size_t)(n * d), sizeof(double));
  w->L = hmx_alloc_array((size_t)(d * d), sizeof(double));
  w->z = hmx_alloc_array((size_t)(d * SS_ROWS), sizeof(double));
  w->score = hmx_alloc_array((size_t)n, sizeof(double));
  if (w->y && w->L && w->z && w->score) return HMX_OK;
  free(w->y); free(w->L); free(w->z); free(w->score);
  return HMX_ERR_NO_MEMORY;
}

static void work_free(lev_work *w) {
  free(w->y); free(w->L); free(w->z); free(w->score);
}

/* score[j] = leverage of row j of y; all NaN when the factorization fails. */
#ifdef SS_FAST
/* leverage() for SS_ROWS keys at once: lane i is key j0 + i (absent keys
 * read +0, their lanes are dropped); zt[p * SS_ROWS + i] holds z_p of lane i.
 * Per lane: t = y_a, then fma(-L[a][p], z_p, t) for p < a in order,
 * z_a = t / L[a][a], tau = fma(z_a, z_a, tau) from +0: leverage()'s chain. */
static void leverage_rows(const double *L, const double *y, int64_t j0, int64_t rows, int64_t d,
                          double *zt, double *score) {
  double tau[SS_ROWS], t[SS_ROWS];
  for (int i = 0; i < SS_ROWS; i++) tau[i] = 0.0;
  for (int64_t a = 0; a < d; a++) {
    for (int i = 0; i < SS_ROWS; i++) t[i] = i < rows ? y[(j0 + i) * d + a] : 0.0;
    for (int64_t p = 0; p < a; p++) {
      const double l = -L[a * d + p];
      for (int i = 0; i < SS_ROWS; i++) t[i] = fma(l, zt[p * SS_ROWS + i], t[i]);
    }
    const double laa = L[a * d + a];
    for (int i = 0; i < SS_ROWS; i++) {
      const double z = t[i] / laa;
      zt[a * SS_ROWS + i] = z;
      tau[i] = fma(z, z, tau[i]);
    }
  }
  for (int64_t i = 0; i < rows; i++) score[j0 + i] = tau[i];
}
#endif

static void leverage_scores(lev_work *w, int64_t n, int64_t d, double lambda) {
  int ok = gram_cholesky(w->y, n, d, lambda, w->L);
#ifdef SS_FAST
  if (ok) {
    for (int64_t j0 = 0; j0 < n; j0 += SS_ROWS)
      leverage_rows(w->L, w->y, j0, n - j0 < SS_ROWS ? n - j0 : SS_ROWS, d, w->z, w->score);
    return;
  }
#endif
  for (int64_t j = 0; j < n; j++) w->score[j] = ok ? leverage(w->L, w->y + j * d, d, w->z) : NAN;
}

SS_LINKAGE hmx_status SS_LEVERAGE(const float *k, int64_t ld, int64_t n, int64_t d,
                                   double lambda, int64_t kk, int32_t *idx) {
  lev_work w;
  if (work_alloc(&w, n, d) != HMX_OK) return HMX_ERR_NO_MEMORY;
  for (int64_t j = 0; j < n; j++)
    for (int64_t a = 0; a < d; a++) w.y[j * d + a] = (double)k[j * ld + a];
  leverage_scores(&w, n, d, lambda);
  hmx_status s = top_k(w.score, n, kk, idx);
  work_free(&w);
  return s;
}

SS_LINKAGE hmx_status SS_LEWIS(const float *k, int64_t ld, int64_t n, int64_t d, double lambda,
                                int iters, int64_t kk, int32_t *idx) {
  lev_work w;
  double *lw = hmx_alloc_array((size_t)n, sizeof *lw);
  if (!lw || work_alloc(&w, n, d) != HMX_OK) {
    free(lw);
    return HMX_ERR_NO_MEMORY;
  }
  for (int64_t j = 0; j < n; j++) lw[j] = 1.0;
  for (int it = 0; it < iters; it++) {
    /* rows of W^-1/2 K: k_j / sqrt(w_j); a row whose weight is not > 0
     * (a zero key) is left out, as its limit is */
    for (int64_t j = 0; j < n; j++) {
      double sw = lw[j] > 0.0 ? sqrt(lw[j]) : 0.0;
      for (int64_t a = 0; a < d; a++)
        w.y[j * d + a] = lw[j] > 0.0 ? (double)k[j * ld + a] / sw : 0.0;
    }
    leverage_scores(&w, n, d, lambda);
    for (int64_t j = 0; j < n; j++) lw[j] = sqrt(lw[j] * w.score[j]);
  }
  hmx_status s = top_k(lw, n, kk, idx);
  work_free(&w);
  free(lw);
  return s;
}

SS_LINKAGE hmx_status SS_PRIORITY(const float *k, int64_t ld, int64_t n, int64_t d,
                                   uint64_t seed, uint64_t stream, int64_t kk, int32_t *idx) {
  double *score = hmx_alloc_array((size_t)n, sizeof *score);
  if (!score) return HMX_ERR_NO_MEMORY;
  for (int64_t j = 0; j < n; j++) {
    float ss = 0.0f;
    for (int64_t a = 0; a < d; a++) ss = fmaf(k[j * ld + a], k[j * ld + a], ss);
    /* h in (0, 1]: 24 random bits plus one, exact in float */
    float h = (float)((hmx_rng_u64(seed, stream, (uint64_t)j) >> 40) + 1) * 0x1p-24f;
    float rank = h / ss;
    score[j] = -(double)rank; /* smallest rank first = largest score first */
  }
  hmx_status s = top_k(score, n, kk, idx);
  free(score);
  return s;
}
