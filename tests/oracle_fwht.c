/* Oracle test of fwht and hadamard_mix (docs/ORACLE.md §fwht, §hadamard_mix).
 *
 * H_n is built here from its definition, never from src/:
 *   - Sylvester: H_1 = [1], H_2n = [[H, H], [H, -H]] (explicit, as int8);
 *   - H_12 by Paley's construction II for q = 5, checked equal to the rows
 *     of Dao-AILab's fast-hadamard-transform (csrc/code_gen.py, had_12_paley);
 *   - H_20, H_28, H_40 from the +/- rows of N. J. A. Sloane's library as used
 *     by that code (had.20.will, had.28.will, had.40.tpal), embedded below and
 *     validated by H H^T = m I;
 *   - H_{m 2^k} = H_m (x) H_{2^k}: element (c 2^k + j, c' 2^k + j') is
 *     H_m[c][c'] * H_{2^k}[j][j'].
 * The reference output is compared with scale * H x computed in double. */
#include "oracle.h"

/* ------------------------------------------------------------------ factor matrices */

static const char *const up_had12[12] = {
    "+-++++++++++", "--+-+-+-+-+-", "+++-++----++", "+---+--+-++-", "+++++-++----",
    "+-+---+--+-+", "++--+++-++--", "+--++---+--+", "++----+++-++", "+--+-++---+-",
    "++++----+++-", "+-+--+-++---"};

static const char *const up_had20[20] = {
    "+----+----++--++-++-", "-+----+---+++---+-++", "--+----+---+++-+-+-+",
    "---+----+---+++++-+-", "----+----++--++-++-+", "-+++++-----+--+++--+",
    "+-+++-+---+-+--+++--", "++-++--+---+-+--+++-", "+++-+---+---+-+--+++",
    "++++-----++--+-+--++", "--++-+-++-+-----++++", "---++-+-++-+---+-+++",
    "+---++-+-+--+--++-++", "++---++-+----+-+++-+", "-++---++-+----+++++-",
    "-+--+--++-+----+----", "+-+-----++-+----+---", "-+-+-+---+--+----+--",
    "--+-+++------+----+-", "+--+--++------+----+"};

static const char *const up_had28[28] = {
    "+------++----++-+--+-+--++--", "-+-----+++-----+-+--+-+--++-",
    "--+-----+++---+-+-+----+--++", "---+-----+++---+-+-+-+--+--+",
    "----+-----+++---+-+-+++--+--", "-----+-----++++--+-+--++--+-",
    "------++----++-+--+-+--++--+", "--++++-+-------++--+++-+--+-",
    "---++++-+-----+-++--+-+-+--+", "+---+++--+----++-++--+-+-+--",
    "++---++---+----++-++--+-+-+-", "+++---+----+----++-++--+-+-+",
    "++++--------+-+--++-++--+-+-", "-++++--------+++--++--+--+-+",
    "-+-++-++--++--+--------++++-", "+-+-++--+--++--+--------++++",
    "-+-+-++--+--++--+----+---+++", "+-+-+-++--+--+---+---++---++",
    "++-+-+-++--+------+--+++---+", "-++-+-+-++--+------+-++++---",
    "+-++-+---++--+------+-++++--", "-++--++-+-++-+++----++------",
    "+-++--++-+-++-+++-----+-----", "++-++---+-+-++-+++-----+----",
    "-++-++-+-+-+-+--+++-----+---", "--++-++++-+-+----+++-----+--",
    "+--++-+-++-+-+----+++-----+-", "++--++-+-++-+-+----++------+"};

static const char *const up_had40[40] = {
    "+-------------------+-------------------", "++-++----+-+-++++--+++-++----+-+-++++--+",
    "+++-++----+-+-++++--+++-++----+-+-++++--", "+-++-++----+-+-++++-+-++-++----+-+-++++-",
    "+--++-++----+-+-+++++--++-++----+-+-++++", "++--++-++----+-+-+++++--++-++----+-+-+++",
    "+++--++-++----+-+-+++++--++-++----+-+-++", "++++--++-++----+-+-+++++--++-++----+-+-+",
    "+++++--++-++----+-+-+++++--++-++----+-+-", "+-++++--++-++----+-++-++++--++-++----+-+",
    "++-++++--++-++----+-++-++++--++-++----+-", "+-+-++++--++-++----++-+-++++--++-++----+",
    "++-+-++++--++-++----++-+-++++--++-++----", "+-+-+-++++--++-++---+-+-+-++++--++-++---",
    "+--+-+-++++--++-++--+--+-+-++++--++-++--", "+---+-+-++++--++-++-+---+-+-++++--++-++-",
    "+----+-+-++++--++-+++----+-+-++++--++-++", "++----+-+-++++--++-+++----+-+-++++--++-+",
    "+++----+-+-++++--++-+++----+-+-++++--++-", "+-++----+-+-++++--+++-++----+-+-++++--++",
    "+--------------------+++++++++++++++++++", "++-++----+-+-++++--+--+--++++-+-+----++-",
    "+++-++----+-+-++++-----+--++++-+-+----++", "+-++-++----+-+-++++--+--+--++++-+-+----+",
    "+--++-++----+-+-++++-++--+--++++-+-+----", "++--++-++----+-+-+++--++--+--++++-+-+---",
    "+++--++-++----+-+-++---++--+--++++-+-+--", "++++--++-++----+-+-+----++--+--++++-+-+-",
    "+++++--++-++----+-+------++--+--++++-+-+", "+-++++--++-++----+-+-+----++--+--++++-+-",
    "++-++++--++-++----+---+----++--+--++++-+", "+-+-++++--++-++----+-+-+----++--+--++++-",
    "++-+-++++--++-++------+-+----++--+--++++", "+-+-+-++++--++-++----+-+-+----++--+--+++",
    "+--+-+-++++--++-++---++-+-+----++--+--++", "+---+-+-++++--++-++--+++-+-+----++--+--+",
    "+----+-+-++++--++-++-++++-+-+----++--+--", "++----+-+-++++--++-+--++++-+-+----++--+-",
    "+++----+-+-++++--++----++++-+-+----++--+", "+-++----+-+-++++--++-+--++++-+-+----++--"};

/* factor[m][i*m + j] in {+1, -1}; index by m / 4 (12 -> 3 ...). */
static signed char g_factor[41][40 * 40];

/* Legendre symbol of a mod 5: 0, +1 for quadratic residues {1, 4}, -1 else. */
static int chi5(int a) {
  a = ((a % 5) + 5) % 5;
  if (a == 0) return 0;
  return (a == 1 || a == 4) ? 1 : -1;
}

/* Paley construction II for q = 5 (q = 1 mod 4): the symmetric conference
 * matrix C of order q + 1 = 6 (C[0][0] = 0, C[0][j] = C[i][0] = 1,
 * C[i][j] = chi(j - i)), then every 0 becomes [[1,-1],[-1,-1]] and every
 * +-1 becomes +-[[1,1],[1,-1]], giving order 2(q + 1) = 12. */
static void paley12(signed char h[12 * 12]) {
  int c[6][6];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      c[i][j] = (i == 0 && j == 0) ? 0 : (i == 0 || j == 0) ? 1 : chi5(j - i);
  static const int zero_block[2][2] = {{1, -1}, {-1, -1}};
  static const int one_block[2][2] = {{1, 1}, {1, -1}};
  for (int r = 0; r < 6; r++)
    for (int cc = 0; cc < 6; cc++)
      for (int s = 0; s < 2; s++)
        for (int t = 0; t < 2; t++)
          h[(2 * r + s) * 12 + 2 * cc + t] =
              (signed char)(c[r][cc] == 0 ? zero_block[s][t] : c[r][cc] * one_block[s][t]);
}

static int from_strings(int m, const char *const *rows, signed char *h) {
  for (int i = 0; i < m; i++) {
    if ((int)strlen(rows[i]) != m) return 0;
    for (int j = 0; j < m; j++) {
      char ch = rows[i][j];
      if (ch != '+' && ch != '-') return 0;
      h[i * m + j] = (signed char)(ch == '+' ? 1 : -1);
    }
  }
  return 1;
}

/* max |(H H^T)_ij - n delta_ij| over all i, j (0 means orthogonal). */
static long orthogonality_defect(const signed char *h, int64_t n) {
  long worst = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i; j < n; j++) {
      long s = 0;
      for (int64_t k = 0; k < n; k++) s += h[i * n + k] * h[j * n + k];
      long d = labs(s - (i == j ? (long)n : 0));
      if (d > worst) worst = d;
    }
  return worst;
}

static int is_symmetric(const signed char *h, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < i; j++)
      if (h[i * n + j] != h[j * n + i]) return 0;
  return 1;
}

static void check_factors(void) {
  signed char paley[144];
  paley12(paley);
  CHECK(from_strings(12, up_had12, g_factor[12]), "had12 strings malformed");
  CHECK(memcmp(paley, g_factor[12], sizeof paley) == 0,
        "Paley II (q = 5) differs from the had_12_paley rows");
  CHECK(from_strings(20, up_had20, g_factor[20]), "had20 strings malformed");
  CHECK(from_strings(28, up_had28, g_factor[28]), "had28 strings malformed");
  CHECK(from_strings(40, up_had40, g_factor[40]), "had40 strings malformed");
  static const int ms[] = {12, 20, 28, 40};
  printf("factor matrices:\n");
  for (int f = 0; f < 4; f++) {
    int m = ms[f];
    long defect = orthogonality_defect(g_factor[m], m);
    CHECK(defect == 0, "H_%d H_%d^T != %d I (max defect %ld)", m, m, m, defect);
    printf("  H_%-2d  H H^T = %d I: %s; symmetric: %s\n", m, m, defect == 0 ? "yes" : "NO",
           is_symmetric(g_factor[m], m) ? "yes" : "no");
  }
  printf("  H_12 equals Paley construction II for q = 5: %s\n",
         memcmp(paley, g_factor[12], sizeof paley) == 0 ? "yes" : "NO");
}

/* ------------------------------------------------------------------ explicit H_n */

/* Sylvester H_p, p a power of two, by the doubling construction. */
static signed char *sylvester(int64_t p) {
  signed char *h = orc_alloc((size_t)(p * p), 1);
  h[0] = 1;
  for (int64_t s = 1; s < p; s *= 2)
    for (int64_t i = 0; i < s; i++)
      for (int64_t j = 0; j < s; j++) {
        signed char v = h[i * p + j];
        h[i * p + j + s] = v;
        h[(i + s) * p + j] = v;
        h[(i + s) * p + j + s] = (signed char)-v;
      }
  return h;
}

/* H_m (x) H_p as an explicit n x n matrix, n = m p (m = 1: Sylvester). */
static signed char *kron_matrix(int m, int64_t p) {
  if (m == 1) return sylvester(p);
  int64_t n = m * p;
  signed char *hp = sylvester(p);
  signed char *h = orc_alloc((size_t)(n * n), 1);
  for (int c = 0; c < m; c++)
    for (int cp = 0; cp < m; cp++)
      for (int64_t j = 0; j < p; j++)
        for (int64_t jp = 0; jp < p; jp++)
          h[(c * p + j) * n + cp * p + jp] =
              (signed char)(g_factor[m][c * m + cp] * hp[j * p + jp]);
  free(hp);
  return h;
}

/* The factor hmx_fwht picks (header: 1 for a power of two, else the smallest
 * of 12, 20, 28 that fits); 0 if none. */
static int auto_factor(int64_t n, int64_t *p) {
  static const int ms[] = {1, 12, 20, 28};
  for (int f = 0; f < 4; f++) {
    if (n % ms[f]) continue;
    int64_t q = n / ms[f];
    if ((q & (q - 1)) == 0) {
      *p = q;
      return ms[f];
    }
  }
  return 0;
}

static int ilog2(int64_t p) {
  int k = 0;
  while (((int64_t)1 << k) < p) k++;
  return k;
}

/* ------------------------------------------------------------------ bounds
 * Reference order (include/hadamix.h, docs/NUMERICS.md §fwht): log2(p)
 * butterfly stages inside each block, then for each j the m-point products
 * summed in index order (m - 1 roundings), then one multiply by scale.
 *   elementwise: |y^_i - y_i| <= gamma_D |scale| ||x||_1, D = log2 p + (m - 1) + 1;
 *   normwise:    ||y^ - y||_2 <= R ||y||_2,  R = rho + u (1 + rho),
 *                rho = gamma_log2p + sqrt(m) gamma_(m-1) (1 + gamma_log2p). */
static double depth_of(int m, int64_t p) { return ilog2(p) + (m > 1 ? m - 1 : 0) + 1; }

static double norm_rel_bound(int m, int64_t p) {
  double gs = orc_gamma(ilog2(p));
  double rho = gs + (m > 1 ? sqrt((double)m) * orc_gamma(m - 1) * (1 + gs) : 0.0);
  return rho + ORC_U * (1 + rho);
}

/* ------------------------------------------------------------------ calls */

static hmx_status call_fwht(float *x, float *y, int64_t batch, int64_t n, float scale, int m) {
  hmx_context ctx = orc_ctx();
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, batch, n);
  hmx_tensor ty = hmx_tensor_2d(y, HMX_F32, batch, n);
  return m ? hmx_fwht_factor(&ctx, &tx, &ty, scale, m) : hmx_fwht(&ctx, &tx, &ty, scale);
}

/* y = scale * H x in double, H explicit. */
static void dense_apply(const signed char *h, int64_t n, const float *x, double scale,
                        double *y) {
  for (int64_t i = 0; i < n; i++) {
    double s = 0;
    const signed char *row = h + i * n;
    for (int64_t j = 0; j < n; j++) s += row[j] * (double)x[j];
    y[i] = scale * s;
  }
}

typedef struct fwht_stats {
  orc_stat elem, norm, twice, preserve;
} fwht_stats;

static void stats_init(fwht_stats *s, const char *what) {
  char buf[160];
  snprintf(buf, sizeof buf, "%s elementwise", what);
  orc_stat_init(&s->elem, buf);
  snprintf(buf, sizeof buf, "%s normwise (l2)", what);
  orc_stat_init(&s->norm, buf);
  snprintf(buf, sizeof buf, "%s twice with 1/sqrt(n) (symmetric H)", what);
  orc_stat_init(&s->twice, buf);
  snprintf(buf, sizeof buf, "%s norm preservation, scale 1/sqrt(n)", what);
  orc_stat_init(&s->preserve, buf);
}

static void stats_report(const fwht_stats *s) {
  orc_stat_report(&s->elem);
  orc_stat_report(&s->norm);
  if (s->twice.count) orc_stat_report(&s->twice);
  orc_stat_report(&s->preserve);
}

/* Compare one computed row with its double oracle (elementwise and l2). */
static void compare_row(fwht_stats *st, const float *x, const float *y, const double *want,
                        int64_t n, int m, int64_t p, double scale) {
  double l1 = 0, l2w = 0, l2e = 0;
  for (int64_t i = 0; i < n; i++) l1 += fabs((double)x[i]);
  double oracle = orc_gamma_d((double)n + 2) * fabs(scale) * l1; /* the double sum's own error */
  double eb = orc_gamma(depth_of(m, p)) * fabs(scale) * l1 + oracle;
  for (int64_t i = 0; i < n; i++) {
    orc_stat_add(&st->elem, y[i], want[i], eb);
    double d = (double)y[i] - want[i];
    l2e += d * d;
    l2w += want[i] * want[i];
  }
  orc_stat_add(&st->norm, sqrt(l2e), 0.0,
               norm_rel_bound(m, p) * sqrt(l2w) + sqrt((double)n) * oracle);
}

/* Run the properties that need no explicit matrix: applying the transform
 * twice with s = fl(1/sqrt(n)) (only for symmetric H, where H H = n I), and
 * ||fwht(x, s)||_2 = ||x||_2. */
static void check_properties(fwht_stats *st, const float *x, int64_t n, int m, int m_req,
                             int64_t p, int symmetric) {
  float s = (float)(1.0 / sqrt((double)n));
  float *y = orc_alloc((size_t)n, sizeof *y), *z = orc_alloc((size_t)n, sizeof *z);
  ORC_OK(call_fwht((float *)x, y, 1, n, s, m_req));
  double R = norm_rel_bound(m, p);
  double sn = (double)s * sqrt((double)n); /* |s sqrt(n) - 1| <= u */
  double nx = 0, ny = 0;
  for (int64_t i = 0; i < n; i++) {
    nx += (double)x[i] * x[i];
    ny += (double)y[i] * y[i];
  }
  nx = sqrt(nx);
  ny = sqrt(ny);
  /* | ||y^|| - ||x|| | <= ||y^ - y*|| + | ||y*|| - ||x|| | <= R sn ||x|| + |sn - 1| ||x|| */
  orc_stat_add(&st->preserve, ny, nx, (R * sn + fabs(sn - 1.0)) * nx * (1 + 1e-12));
  if (symmetric) {
    ORC_OK(call_fwht(y, z, 1, n, s, m_req));
    /* z^ - x = [z^ - sH y^] + sH (y^ - y*) + (s^2 n - 1) x; each term bounded by
     * R (1+R) sn^2 ||x||, R sn^2 ||x|| and |sn^2 - 1| ||x||. */
    double bound = (R * (1 + R) * sn * sn + R * sn * sn + fabs(sn * sn - 1.0)) * nx;
    double e2 = 0;
    for (int64_t i = 0; i < n; i++) {
      double d = (double)z[i] - x[i];
      e2 += d * d;
    }
    orc_stat_add(&st->twice, sqrt(e2), 0.0, bound * (1 + 1e-12));
  }
  free(y);
  free(z);
}

/* One size against the explicit matrix: batch rows of several families, three
 * scales, plus in-place bit identity. */
static void check_dense(fwht_stats *st, int64_t n, int m_req, orc_rng *rng) {
  int64_t p = 1;
  int m = m_req ? m_req : auto_factor(n, &p);
  p = n / m;
  signed char *h = kron_matrix(m, p);
  const int64_t batch = 4;
  float *x = orc_alloc((size_t)(batch * n), sizeof *x);
  float *y = orc_alloc((size_t)(batch * n), sizeof *y);
  float *yi = orc_alloc((size_t)(batch * n), sizeof *yi);
  double *want = orc_alloc((size_t)n, sizeof *want);
  for (int b = 0; b < 3; b++) orc_fill(rng, x + b * n, n, b);
  x[3 * n + orc_below(rng, n)] = -1.75f; /* one-hot row: the result is exact */
  const float scales[3] = {1.0f, (float)(1.0 / sqrt((double)n)), -0.37f};
  for (int si = 0; si < 3; si++) {
    ORC_OK(call_fwht(x, y, batch, n, scales[si], m_req));
    for (int b = 0; b < batch; b++) {
      dense_apply(h, n, x + b * n, scales[si], want);
      compare_row(st, x + b * n, y + b * n, want, n, m, p, scales[si]);
    }
    memcpy(yi, x, (size_t)(batch * n) * sizeof *yi);
    ORC_OK(call_fwht(yi, yi, batch, n, scales[si], m_req));
    CHECK(memcmp(yi, y, (size_t)(batch * n) * sizeof *y) == 0,
          "fwht n=%lld m=%d: in-place result differs from out-of-place", (long long)n, m_req);
  }
  int sym = m == 1 || is_symmetric(g_factor[m], m);
  for (int b = 0; b < 3; b++) check_properties(st, x + b * n, n, m, m_req, p, sym);
  free(h);
  free(x);
  free(y);
  free(yi);
  free(want);
}

/* ------------------------------------------------------------------ large sizes
 * An O(n log n) double transform of this file's own: Sylvester butterflies on
 * each block of p, then the dense m-point factor across blocks. */
static void fast_double(const float *x, double *y, int64_t n, int m, double scale) {
  int64_t p = n / m;
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
  for (int c = 0; c < m; c++) {
    double *v = y + c * p;
    for (int64_t h = 1; h < p; h *= 2)
      for (int64_t i = 0; i < p; i += 2 * h)
        for (int64_t j = i; j < i + h; j++) {
          double a = v[j], b = v[j + h];
          v[j] = a + b;
          v[j + h] = a - b;
        }
  }
  if (m > 1) {
    double u[40], w[40];
    for (int64_t j = 0; j < p; j++) {
      for (int c = 0; c < m; c++) u[c] = y[c * p + j];
      for (int r = 0; r < m; r++) {
        double s = 0;
        for (int c = 0; c < m; c++) s += g_factor[m][r * m + c] * u[c];
        w[r] = s;
      }
      for (int r = 0; r < m; r++) y[r * p + j] = w[r];
    }
  }
  for (int64_t i = 0; i < n; i++) y[i] *= scale;
}

static void check_large(int64_t n, int m_req, orc_rng *rng) {
  int64_t p = 1;
  int m = m_req ? m_req : auto_factor(n, &p);
  p = n / m;
  char name[96];
  snprintf(name, sizeof name, "fwht n=%lld (m=%d) vs O(n log n) double", (long long)n, m);
  fwht_stats st;
  stats_init(&st, name);
  float *x = orc_alloc((size_t)n, sizeof *x), *y = orc_alloc((size_t)n, sizeof *y);
  double *want = orc_alloc((size_t)n, sizeof *want);
  orc_fill(rng, x, n, 0);
  float s = (float)(1.0 / sqrt((double)n));
  ORC_OK(call_fwht(x, y, 1, n, s, m_req));
  fast_double(x, want, n, m, s);
  compare_row(&st, x, y, want, n, m, p, s);
  check_properties(&st, x, n, m, m_req, p, m == 1 || is_symmetric(g_factor[m], m));
  stats_report(&st);
  free(x);
  free(y);
  free(want);
}

/* ------------------------------------------------------------------ hadamard_mix
 * y = fl(t^ alpha + beta) with t^ = fwht(x, s), s = fl(1/sqrt n). With
 * t* = H x / sqrt(n) and E_i = (gamma_D (1 + u) + u) ||x||_1 / sqrt(n):
 *   |y^_i - y*_i| <= |alpha_i| E_i (1 + u) + u |y*_i|
 *   ||y^ - y*||   <= max|alpha| (R (1 + u) + u) ||t*|| (1 + u) + u ||y*||. */
static void check_mix(orc_stat *elem, orc_stat *norm, int64_t n, orc_rng *rng) {
  int64_t p = 1;
  int m = auto_factor(n, &p);
  signed char *h = kron_matrix(m, p);
  const int64_t batch = 3;
  float *x = orc_alloc((size_t)(batch * n), sizeof *x), *y = orc_alloc((size_t)(batch * n), sizeof *y);
  float *al = orc_alloc((size_t)n, sizeof *al), *be = orc_alloc((size_t)n, sizeof *be);
  double *t = orc_alloc((size_t)n, sizeof *t);
  for (int b = 0; b < batch; b++) orc_fill(rng, x + b * n, n, b);
  double amax = 0;
  for (int64_t i = 0; i < n; i++) {
    al[i] = orc_sym(rng, 2.0);
    be[i] = orc_sym(rng, 0.5);
    if (fabs(al[i]) > amax) amax = fabs(al[i]);
  }
  hmx_context ctx = orc_ctx();
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, batch, n), ty = hmx_tensor_2d(y, HMX_F32, batch, n);
  hmx_tensor ta = hmx_tensor_1d(al, HMX_F32, n), tb = hmx_tensor_1d(be, HMX_F32, n);
  ORC_OK(hmx_hadamard_mix(&ctx, &tx, &ta, &tb, &ty));
  double R = norm_rel_bound(m, p), D = depth_of(m, p);
  for (int b = 0; b < batch; b++) {
    const float *xr = x + b * n;
    dense_apply(h, n, xr, 1.0 / sqrt((double)n), t);
    double l1 = 0, nt = 0, ny = 0, e2 = 0;
    for (int64_t i = 0; i < n; i++) l1 += fabs((double)xr[i]);
    double oracle = orc_gamma_d((double)n + 4) * l1 / sqrt((double)n);
    double E = (orc_gamma(D) * (1 + ORC_U) + ORC_U) * l1 / sqrt((double)n) + oracle;
    for (int64_t i = 0; i < n; i++) {
      double want = t[i] * al[i] + be[i];
      orc_stat_add(elem, y[b * n + i], want,
                   fabs((double)al[i]) * E * (1 + ORC_U) + ORC_U * fabs(want) * (1 + 1e-12));
      nt += t[i] * t[i];
      ny += want * want;
      e2 += (y[b * n + i] - want) * (y[b * n + i] - want);
    }
    double bound = amax * ((R * (1 + ORC_U) + ORC_U) * sqrt(nt) * (1 + ORC_U)) +
                   ORC_U * sqrt(ny) + amax * sqrt((double)n) * oracle;
    orc_stat_add(norm, sqrt(e2), 0.0, bound * (1 + 1e-12));
  }
  free(h);
  free(x);
  free(y);
  free(al);
  free(be);
  free(t);
}

/* ------------------------------------------------------------------ main */

int main(void) {
  orc_rng rng = orc_seed(1);
  check_factors();

  printf("explicit matrices, H H^T = n I:\n");
  {
    static const int64_t sizes[][2] = {{1, 1},  {1, 2},  {1, 64}, {1, 512}, {12, 16},
                                       {20, 8}, {28, 8}, {40, 8}, {12, 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      int m = (int)sizes[i][0];
      int64_t p = sizes[i][1], n = m * p;
      signed char *h = kron_matrix(m, p);
      long d = orthogonality_defect(h, n);
      CHECK(d == 0, "H (m=%d, p=%lld) not orthogonal: defect %ld", m, (long long)p, d);
      printf("  n = %-5lld (m = %2d): %s\n", (long long)n, m, d == 0 ? "ok" : "FAILED");
      free(h);
    }
    /* n = 4096: H H^T on 256 sampled row pairs (the full product is 7e10 ops). */
    signed char *h = sylvester(4096);
    long worst = 0;
    for (int t = 0; t < 256; t++) {
      int64_t i = orc_below(&rng, 4096), j = t < 32 ? i : orc_below(&rng, 4096);
      long s = 0;
      for (int64_t k = 0; k < 4096; k++) s += h[i * 4096 + k] * h[j * 4096 + k];
      long d = labs(s - (i == j ? 4096L : 0L));
      if (d > worst) worst = d;
    }
    CHECK(worst == 0, "Sylvester 4096: sampled rows not orthogonal (defect %ld)", worst);
    printf("  n = 4096 (m =  1): 256 sampled row pairs %s\n", worst == 0 ? "ok" : "FAILED");
    free(h);
  }

  printf("fwht vs scale * H x in double (explicit H):\n");
  {
    fwht_stats pow2s, pow2, f12, f20, f28, f40;
    stats_init(&pow2s, "fwht 2^k, k=0..3");
    stats_init(&pow2, "fwht 2^k, k=4..12");
    stats_init(&f12, "fwht 12*2^k");
    stats_init(&f20, "fwht 20*2^k (incl. auto 40*2^k)");
    stats_init(&f28, "fwht 28*2^k");
    stats_init(&f40, "fwht_factor m=40, 40*2^k");
    for (int k = 0; k <= 12; k++) check_dense(k <= 3 ? &pow2s : &pow2, (int64_t)1 << k, 0, &rng);
    static const int64_t s12[] = {12, 24, 48, 96, 384, 3072};
    static const int64_t s20[] = {20, 40, 80, 160, 640, 2560};
    static const int64_t s28[] = {28, 56, 112, 448, 3584};
    static const int64_t s40[] = {40, 80, 160, 320, 1280, 2560};
    for (size_t i = 0; i < sizeof s12 / sizeof *s12; i++) check_dense(&f12, s12[i], 0, &rng);
    for (size_t i = 0; i < sizeof s20 / sizeof *s20; i++) check_dense(&f20, s20[i], 0, &rng);
    for (size_t i = 0; i < sizeof s28 / sizeof *s28; i++) check_dense(&f28, s28[i], 0, &rng);
    for (size_t i = 0; i < sizeof s40 / sizeof *s40; i++) check_dense(&f40, s40[i], 40, &rng);
    check_dense(&f12, 48, 12, &rng); /* explicit m equal to the automatic one */
    check_dense(&f20, 80, 20, &rng);
    stats_report(&pow2s);
    stats_report(&pow2);
    stats_report(&f12);
    stats_report(&f20);
    stats_report(&f28);
    stats_report(&f40);
  }

  printf("large sizes:\n");
  check_large((int64_t)1 << 20, 0, &rng);
  check_large((int64_t)12 << 15, 0, &rng);
  check_large((int64_t)28 << 15, 0, &rng);
  check_large((int64_t)40 << 15, 40, &rng);
  {
    /* The header lists 40 * 2^15 among the sizes of hmx_fwht; the automatic
     * factor reads it as 20 * 2^16 (k = 16 > 15). Report what happens. */
    int64_t n = (int64_t)40 << 15;
    float *x = orc_alloc((size_t)n, sizeof *x), *y = orc_alloc((size_t)n, sizeof *y);
    hmx_status s = call_fwht(x, y, 1, n, 1.0f, 0);
    printf("  hmx_fwht(n = 40 * 2^15, automatic factor) -> %s%s%s\n", hmx_status_string(s),
           s == HMX_OK ? "" : ": ", s == HMX_OK ? "" : hmx_last_error());
    free(x);
    free(y);
  }

  printf("automatic factor of 40 * 2^k is 20 * 2^(k+1), and differs from m = 40:\n");
  {
    int64_t n = 160;
    float x[160], ya[160], y20[160], y40[160];
    orc_fill(&rng, x, n, 0);
    ORC_OK(call_fwht(x, ya, 1, n, 1.0f, 0));
    ORC_OK(call_fwht(x, y20, 1, n, 1.0f, 20));
    ORC_OK(call_fwht(x, y40, 1, n, 1.0f, 40));
    CHECK(memcmp(ya, y20, sizeof ya) == 0, "auto factor of 160 is not 20 * 8");
    CHECK(memcmp(ya, y40, sizeof ya) != 0, "m = 40 gives the same transform as m = 20");
    printf("  n = 160: auto == m=20: %s, auto != m=40: %s\n",
           memcmp(ya, y20, sizeof ya) == 0 ? "yes" : "NO", memcmp(ya, y40, sizeof ya) ? "yes" : "NO");
  }

  printf("hadamard_mix vs (H x / sqrt(n)) alpha + beta in double:\n");
  {
    orc_stat elem, norm;
    orc_stat_init(&elem, "hadamard_mix elementwise");
    orc_stat_init(&norm, "hadamard_mix normwise (l2)");
    static const int64_t sizes[] = {1, 2, 16, 64, 256, 1024, 4096, 12, 96, 768, 20, 40, 640, 28, 896};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_mix(&elem, &norm, sizes[i], &rng);
    orc_stat_report(&elem);
    orc_stat_report(&norm);
  }
  return check_finish("test_oracle_fwht");
}
