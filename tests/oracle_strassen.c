/* Oracle test of strassen (docs/ORACLE.md §strassen): the reference against
 * the exact product in float64, under an error bound derived from the
 * recursion's evaluation order; then the measured error growth against the
 * canonical gemm (printed), bit identity with gemm at or below the cutoff,
 * and a planted wrong result that the bound must catch.
 *
 * Bound (max norm, |A| = max |a_ij|): |c^_ij - c_ij| <= rho(m, k, n) |A| |B|,
 * rho computed by the recursion itself (strassen_rho below), rigorous (no
 * first-order truncation: computed magnitudes carry their errors):
 *   leaf: rho = k gamma_k                (|err| <= gamma_k sum_p |a_ip b_pj|)
 *   one level with halves m2, k2, n2 and h = rho(m2, k2, n2):
 *     a block sum S = X + Y: |S^| <= 2(1 + u)|A|, |S^ - S| <= 2u |A|;
 *     M1, M6, M7 (two sums): e2 = 4(1 + u)^2 h + k2 (8u + 4u^2), |M^| <= 4 k2 + e2;
 *     M2 .. M5 (one sum):    e1 = 2(1 + u) h + 2u k2,            |M^| <= 2 k2 + e1;
 *     C11 = ((M1 + M4) - M5) + M7 and C22 = ((M1 - M2) + M3) + M6 carry
 *     2 e2 + 2 e1 plus u times each rounded partial sum's magnitude bound;
 *     C12, C21 less. rho = that. (All in units of |A||B|: every term scales.)
 * Zero padding changes neither |A| nor |B|. The worst case grows like
 * 12^levels while typical errors grow far slower: the table shows both. */
#include "oracle.h"

static double strassen_rho(int64_t m, int64_t k, int64_t n, int64_t cutoff) {
  const double u = ORC_U;
  if (m <= cutoff || k <= cutoff || n <= cutoff) return (double)k * orc_gamma((double)k);
  int64_t m2 = (m + 1) / 2, k2 = (k + 1) / 2, n2 = (n + 1) / 2;
  double h = strassen_rho(m2, k2, n2, cutoff), kk = (double)k2;
  double e2 = 4.0 * (1 + u) * (1 + u) * h + kk * (8 * u + 4 * u * u), mag2 = 4 * kk + e2;
  double e1 = 2.0 * (1 + u) * h + 2 * u * kk, mag1 = 2 * kk + e1;
  double p1 = mag2 + mag1, p2 = p1 * (1 + u) + mag1, p3 = p2 * (1 + u) + mag2;
  return 2 * e2 + 2 * e1 + u * (p1 + p2 + p3);
}
/* The same in units of u (for printing). */
static double strassen_E(int64_t m, int64_t k, int64_t n, int64_t cutoff) {
  return strassen_rho(m, k, n, cutoff) / ORC_U;
}

static double maxabs(const float *x, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs((double)x[i]) > m) m = fabs((double)x[i]);
  return m;
}

typedef struct result {
  double err_strassen, err_gemm; /* max |c^ - c| / (u |A| |B|) */
  double rel_strassen, rel_gemm; /* ||c^ - c||_F / ||c||_F */
} result;

static result check_case(orc_stat *st, int64_t m, int64_t k, int64_t n, int64_t cutoff, int family,
                         orc_rng *rng, int plant) {
  float *a = orc_alloc((size_t)(m * k), sizeof *a), *b = orc_alloc((size_t)(k * n), sizeof *b);
  float *c = orc_alloc((size_t)(m * n), sizeof *c), *g = orc_alloc((size_t)(m * n), sizeof *g);
  double *ex = orc_alloc((size_t)(m * n), sizeof *ex);
  orc_fill(rng, a, m * k, family);
  orc_fill(rng, b, k * n, family);
  hmx_context ctx = orc_ctx();
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k), tb = hmx_tensor_2d(b, HMX_F32, k, n);
  hmx_tensor tc = hmx_tensor_2d(c, HMX_F32, m, n), tg = hmx_tensor_2d(g, HMX_F32, m, n);
  ORC_OK(hmx_strassen(&ctx, &ta, &tb, cutoff, &tc));
  ORC_OK(hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tg));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++) s += (double)a[i * k + p] * (double)b[p * n + j];
      ex[i * n + j] = s;
    }
  double AB = maxabs(a, m * k) * maxabs(b, k * n);
  double bound = strassen_rho(m, k, n, cutoff) * AB + orc_gamma_d((double)k + 1) * (double)k * AB;
  if (plant) c[(m / 2) * n + n / 2] += (float)(2.0 * bound); /* a wrong result */
  result r = {0, 0, 0, 0};
  double ns = 0, ng = 0, nx = 0;
  for (int64_t i = 0; i < m * n; i++) {
    orc_stat_add(st, c[i], ex[i], bound);
    double es = fabs(c[i] - ex[i]), eg = fabs(g[i] - ex[i]);
    if (es > r.err_strassen) r.err_strassen = es;
    if (eg > r.err_gemm) r.err_gemm = eg;
    ns += es * es;
    ng += eg * eg;
    nx += ex[i] * ex[i];
  }
  r.err_strassen /= ORC_U * AB;
  r.err_gemm /= ORC_U * AB;
  r.rel_strassen = nx > 0 ? sqrt(ns / nx) : 0;
  r.rel_gemm = nx > 0 ? sqrt(ng / nx) : 0;
  /* at or below the cutoff strassen is the canonical gemm, bit for bit */
  if (m <= cutoff || k <= cutoff || n <= cutoff)
    CHECK(memcmp(c, g, (size_t)(m * n) * sizeof *c) == 0,
          "strassen %lldx%lldx%lld cutoff %lld: not gemm's bits at the cutoff", (long long)m,
          (long long)k, (long long)n, (long long)cutoff);
  free(a); free(b); free(c); free(g); free(ex);
  return r;
}

int main(void) {
  orc_rng rng = orc_seed(7);
  printf("strassen vs exact float64 product (bound: the recursion's rigorous worst case, docs/ORACLE.md):\n");
  orc_stat st;
  orc_stat_init(&st, "strassen, odd and rectangular shapes, 3 families");
  static const int64_t shapes[][4] = {{37, 29, 45, 4}, {64, 64, 64, 8}, {20, 33, 17, 16},
                                      {65, 63, 66, 8}, {1, 40, 40, 1}, {128, 96, 80, 16},
                                      {33, 33, 33, 1}, {16, 16, 16, 64}, {100, 100, 100, 12}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int fam = 0; fam < 3; fam++)
      check_case(&st, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], fam, &rng, 0);
  orc_stat_report(&st);

  /* error growth: square n, uniform inputs; the columns are max |err| in
   * units of u |A| |B|, and the normwise relative error */
  printf("\nerror growth, uniform [-1, 1] (max|err| / (u |A||B|), ||err||_F / ||C||_F):\n");
  printf("  %5s %6s  %12s %12s  %12s %10s  %10s\n", "n", "cutoff", "strassen", "gemm",
         "rel strassen", "rel gemm", "bound/u");
  orc_stat sg;
  orc_stat_init(&sg, "strassen, square n = 32 .. 512, cutoffs 8 and 64");
  static const int64_t growth[][2] = {{32, 8}, {64, 8}, {128, 8}, {256, 8}, {512, 8},
                                      {128, 64}, {256, 64}, {512, 64}};
  for (size_t s = 0; s < sizeof growth / sizeof *growth; s++) {
    int64_t n = growth[s][0], cut = growth[s][1];
    result r = check_case(&sg, n, n, n, cut, 0, &rng, 0);
    double E = strassen_E(n, n, n, cut);
    printf("  %5lld %6lld  %12.2f %12.2f  %12.3g %10.3g  %10.3g\n", (long long)n, (long long)cut,
           r.err_strassen, r.err_gemm, r.rel_strassen, r.rel_gemm, E);
  }
  orc_stat_report(&sg);

  /* the bound can fail: a result off by twice its bound is caught */
  orc_stat sp;
  orc_stat_init(&sp, "planted wrong element (must be caught)");
  fprintf(stderr, "  (the next line is the planted error being caught, as intended)\n");
  check_case(&sp, 48, 48, 48, 8, 0, &rng, 1);
  printf("  planted wrong element: %ld of %ld values over the bound (expected 1)\n", sp.over,
         sp.count);
  CHECK(sp.over == 1, "the planted wrong result was not caught");
  return check_finish("test_oracle_strassen");
}
