/* Oracle test of rmsnorm, layernorm and rope (docs/ORACLE.md §rmsnorm,
 * §layernorm, §rope) against float64 formulas written here; rope uses libm
 * cos/sin/pow (fine in a test: the library itself uses no libm there). */
#include "oracle.h"

/* Rounding count of a 16-lane row sum of n terms: each lane adds at most
 * ceil(n/16) terms (the first onto +0 counted too, conservatively), then the
 * 4-level tree: every term is rounded at most L times. */
static double lane_depth(int64_t n) { return (double)((n + 15) / 16) + 4; }

/* Interval [lo, hi] that must contain a float result; stat records the
 * distance to the exact value against the half-width on that side. */
static void add_interval(orc_stat *st, double got, double want, double lo, double hi) {
  double bound = got >= want ? hi - want : want - lo;
  if (bound < 0) bound = 0;
  orc_stat_add(st, got, want, bound);
}

/* ------------------------------------------------------------------ rmsnorm
 * ss^ = S (1 + t), |t| <= g = gamma_L (sum of nonnegative terms);
 * V^ = fl(fl(ss^ / n) + eps) in [ (S/n (1-g)(1-u) + eps)(1-u), (S/n (1+g)(1+u) + eps)(1+u) ];
 * r^ = fl(sqrt(V^)) in [sqrt(Vlo)(1-u), sqrt(Vhi)(1+u)]; inv^ = fl(1/r^) in
 * [(1-u)/r_hi, (1+u)/r_lo]; y^ = fl(fl(x inv^) w) in x w [inv_lo, inv_hi] (1 +- u)^2. */
static void rms_row(orc_stat *st, const float *x, const float *w, float eps, const float *y,
                    int64_t n) {
  double S = 0;
  for (int64_t i = 0; i < n; i++) S += (double)x[i] * x[i];
  double g = orc_gamma(lane_depth(n)) + orc_gamma_d((double)n);
  const double u = ORC_U;
  double vlo = (S / n * (1 - g) * (1 - u) + eps) * (1 - u);
  double vhi = (S / n * (1 + g) * (1 + u) + eps) * (1 + u);
  double inv_lo = (1 - u) / (sqrt(vhi) * (1 + u)), inv_hi = (1 + u) / (sqrt(vlo) * (1 - u));
  double inv = 1.0 / sqrt(S / n + eps);
  for (int64_t i = 0; i < n; i++) {
    double xw = (double)x[i] * w[i];
    double want = xw * inv;
    double a = xw * inv_lo * (1 - u) * (1 - u), b = xw * inv_hi * (1 + u) * (1 + u);
    double lo = a < b ? a : b, hi = a < b ? b : a;
    double slack = 1e-12 * fabs(want);
    add_interval(st, y[i], want, lo - slack, hi + slack);
  }
}

/* ------------------------------------------------------------------ layernorm
 * mu^ = fl(lane_sum(x) / n): |mu^ - mu| <= Em = gamma_(L+1) sum|x| / n.
 * d_i = fl(x_i - mu^): |d_i - a_i| <= e_i = Em + u (|a_i| + Em), a_i = x_i - mu.
 * var sum: sum d_i^2 (1 + t_i), |t_i| <= g, bracketed by
 *   Dlo = sum max(|a_i| - e_i, 0)^2 (1 - g),  Dhi = sum (|a_i| + e_i)^2 (1 + g);
 * then as rmsnorm for inv^; z^ = fl(d_i inv^) and y^ = fma(z^, w, b) (or
 * fl(z^ w)) bracketed by interval products widened by u at each rounding. */
static void mul_interval(double alo, double ahi, double blo, double bhi, double *lo, double *hi) {
  double p[4] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
  *lo = *hi = p[0];
  for (int i = 1; i < 4; i++) {
    if (p[i] < *lo) *lo = p[i];
    if (p[i] > *hi) *hi = p[i];
  }
}

static void widen(double *lo, double *hi) {
  *lo -= ORC_U * fabs(*lo);
  *hi += ORC_U * fabs(*hi);
}

static void ln_row(orc_stat *st, const float *x, const float *w, const float *bias, float eps,
                   const float *y, int64_t n) {
  const double u = ORC_U;
  double sum = 0, sabs = 0;
  for (int64_t i = 0; i < n; i++) {
    sum += x[i];
    sabs += fabs((double)x[i]);
  }
  double mu = sum / n;
  double L = lane_depth(n);
  double Em = orc_gamma(L + 1) * sabs / n + orc_gamma_d((double)n + 1) * sabs / n;
  double g = orc_gamma(L) + orc_gamma_d((double)n);
  double D = 0, Dlo = 0, Dhi = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = fabs(x[i] - mu), e = Em + u * (a + Em);
    D += a * a;
    double l = a - e > 0 ? a - e : 0;
    Dlo += l * l;
    Dhi += (a + e) * (a + e);
  }
  double vlo = (Dlo * (1 - g) / n * (1 - u) + eps) * (1 - u);
  double vhi = (Dhi * (1 + g) / n * (1 + u) + eps) * (1 + u);
  double inv_lo = (1 - u) / (sqrt(vhi) * (1 + u)), inv_hi = (1 + u) / (sqrt(vlo) * (1 - u));
  double inv = 1.0 / sqrt(D / n + eps);
  for (int64_t i = 0; i < n; i++) {
    double a = x[i] - mu, e = Em + u * (fabs(a) + Em);
    double want = a * inv * w[i] + (bias ? bias[i] : 0.0);
    double zlo, zhi, ylo, yhi;
    mul_interval(a - e, a + e, inv_lo, inv_hi, &zlo, &zhi);
    widen(&zlo, &zhi);
    mul_interval(zlo, zhi, w[i], w[i], &ylo, &yhi);
    if (bias) {
      ylo += bias[i];
      yhi += bias[i];
    }
    widen(&ylo, &yhi);
    double slack = 1e-12 * (fabs(a * inv * w[i]) + (bias ? fabs((double)bias[i]) : 0.0));
    add_interval(st, y[i], want, ylo - slack, yhi + slack);
  }
}

static void check_norms(orc_rng *rng) {
  /* [n <= 2 | n >= 7]: a row of one or two elements is nearly exact but for
   * the last roundings, where the bound is nearly attained; reported apart. */
  orc_stat rms_[2], ln_[2], lnb_[2];
  for (int big = 0; big < 2; big++) {
    char name[96];
    snprintf(name, sizeof name, "rmsnorm %s", big ? "n = 7 .. 5000" : "n = 1, 2");
    orc_stat_init(&rms_[big], name);
    snprintf(name, sizeof name, "layernorm, no bias, %s", big ? "n = 7 .. 5000" : "n = 1, 2");
    orc_stat_init(&ln_[big], name);
    snprintf(name, sizeof name, "layernorm, with bias, %s", big ? "n = 7 .. 5000" : "n = 1, 2");
    orc_stat_init(&lnb_[big], name);
  }
  static const int64_t ns[] = {1, 2, 7, 16, 17, 64, 100, 768, 4096, 5000};
  static const float epss[] = {1e-5f, 1e-6f, 0.0f, 0.5f};
  hmx_context ctx = orc_ctx();
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
    for (size_t ie = 0; ie < sizeof epss / sizeof *epss; ie++) {
      int64_t n = ns[in], rows = 6;
      orc_stat *rms = &rms_[n > 2], *ln = &ln_[n > 2], *lnb = &lnb_[n > 2];
      float eps = epss[ie];
      float *x = orc_alloc((size_t)(rows * n), sizeof *x), *y = orc_alloc((size_t)(rows * n), sizeof *y);
      float *w = orc_alloc((size_t)n, sizeof *w), *b = orc_alloc((size_t)n, sizeof *b);
      for (int r = 0; r < rows; r++) {
        orc_fill(rng, x + r * n, n, r % 4);
        if (r >= 4) { /* whole-row scale 2^e, e in [-30, 30] */
          int e = (int)orc_below(rng, 61) - 30;
          for (int64_t i = 0; i < n; i++) x[r * n + i] = ldexpf(x[r * n + i], e);
        }
      }
      if (n == 1 && eps == 0.0f) /* x / |x| needs x != 0: already so w.p. 1; force it */
        for (int r = 0; r < rows; r++)
          if (x[r] == 0) x[r] = 1;
      for (int64_t i = 0; i < n; i++) {
        w[i] = orc_sym(rng, 2.0);
        b[i] = orc_sym(rng, 1.0);
      }
      hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, rows, n), ty = hmx_tensor_2d(y, HMX_F32, rows, n);
      hmx_tensor tw = hmx_tensor_1d(w, HMX_F32, n), tb = hmx_tensor_1d(b, HMX_F32, n);
      ORC_OK(hmx_rmsnorm(&ctx, &tx, &tw, eps, &ty));
      for (int r = 0; r < rows; r++) rms_row(rms, x + r * n, w, eps, y + r * n, n);
      /* layernorm of a single element with eps = 0 is 0/0: skip that corner. */
      if (!(n == 1 && eps == 0.0f)) {
        ORC_OK(hmx_layernorm(&ctx, &tx, &tw, NULL, eps, &ty));
        for (int r = 0; r < rows; r++) ln_row(ln, x + r * n, w, NULL, eps, y + r * n, n);
        ORC_OK(hmx_layernorm(&ctx, &tx, &tw, &tb, eps, &ty));
        for (int r = 0; r < rows; r++) ln_row(lnb, x + r * n, w, b, eps, y + r * n, n);
      }
      free(x);
      free(y);
      free(w);
      free(b);
    }
  for (int big = 0; big < 2; big++) {
    orc_stat_report(&rms_[big]);
    orc_stat_report(&ln_[big]);
    orc_stat_report(&lnb_[big]);
  }
}

/* ------------------------------------------------------------------ rope
 * The table entries c^ = fl(c~), s^ = fl(s~), where c~, s~ are the library's
 * double-precision cos/sin of its double angle. Allowance for that double
 * pipeline (and for this file's libm pow/cos/sin) against the exact angle:
 *   E(theta) = 2^-45 theta + 2^-50
 * (docs/ORACLE.md: the library's chain log -> multiply -> exp -> multiply by
 * pos carries at most ~58 double ulps of relative angle error for base <= 1e6,
 * this file's libm pow and multiply ~16 more: 74 * 2^-53 < 2^-46 = 128 * 2^-53;
 * the two sin/cos evaluations and reductions add < 3 * 2^-53 < 2^-50.)
 * So |c^ - cos| <= ec = u (|cos| + E) + E, likewise for sin, and with
 * y0 = fma(x0, c^, -fl(x1 s^)), y1 = fma(x0, s^, fl(x1 c^)):
 *   |y0^ - y0| <= |x0| ec + |x1| es + u |x1| (|s| + es) + u (|y0| + |x0| ec + |x1| es + u |x1| (|s| + es)),
 * and y1 symmetrically. Apart from E (< 0.05 u at theta = 1e5) the bound does
 * not grow with the position. */
static double angle_allow(double theta) { return 0x1p-46 * fabs(theta) + 0x1p-50; }

static double rope_theta(int32_t pos, int64_t i, int rot, float base) {
  return (double)pos * pow((double)base, -(2.0 * (double)i) / (double)rot);
}

typedef struct rope_stats {
  orc_stat table, out_near, out_far, exact_table;
  long table_equal, table_total;
  double max_ulps_near, max_ulps_far;
} rope_stats;

static void check_rope_case(rope_stats *rs, int64_t T, int64_t H, int64_t D, int rot, float base,
                            hmx_rope_style style, int32_t maxpos, orc_rng *rng) {
  int32_t *pos = orc_alloc((size_t)T, sizeof *pos);
  static const int32_t fixed[] = {0, 1, 2, 3, 7, 100, 1000, 4095, 8191, 32767, 65535, 99999, 100000};
  for (int64_t t = 0; t < T; t++) {
    int32_t p = t < (int64_t)(sizeof fixed / sizeof *fixed) ? fixed[t] : (int32_t)orc_below(rng, (int64_t)maxpos + 1);
    pos[t] = p > maxpos ? maxpos : p;
  }
  pos[T - 1] = maxpos;
  int64_t numel = T * H * D, half = rot / 2;
  float *x = orc_alloc((size_t)numel, sizeof *x), *y = orc_alloc((size_t)numel, sizeof *y);
  float *yi = orc_alloc((size_t)numel, sizeof *yi);
  orc_fill(rng, x, numel, 0);
  hmx_context ctx = orc_ctx();
  hmx_tensor tx = hmx_tensor_3d(x, HMX_F32, T, H, D), ty = hmx_tensor_3d(y, HMX_F32, T, H, D);
  hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, T);
  ORC_OK(hmx_rope(&ctx, &tx, &tp, base, rot, style, &ty));
  const double u = ORC_U;
  for (int64_t t = 0; t < T; t++) {
    for (int64_t i = 0; i < half; i++) {
      double th = rope_theta(pos[t], i, rot, base), c = cos(th), s = sin(th);
      double E = angle_allow(th), ec = u * (fabs(c) + E) + E, es = u * (fabs(s) + E) + E;
      int64_t i0 = style == HMX_ROPE_HALF ? i : 2 * i, i1 = style == HMX_ROPE_HALF ? i + half : 2 * i + 1;
      for (int64_t h = 0; h < H; h++) {
        const float *xr = x + (t * H + h) * D;
        const float *yr = y + (t * H + h) * D;
        double x0 = xr[i0], x1 = xr[i1];
        double w0 = x0 * c - x1 * s, w1 = x0 * s + x1 * c;
        double r0 = fabs(x1) * (fabs(s) + es), r1 = fabs(x1) * (fabs(c) + ec);
        double b0 = fabs(x0) * ec + fabs(x1) * es + u * r0;
        double b1 = fabs(x0) * es + fabs(x1) * ec + u * r1;
        b0 += u * (fabs(w0) + b0);
        b1 += u * (fabs(w1) + b1);
        orc_stat *o = pos[t] < 1000 ? &rs->out_near : &rs->out_far;
        orc_stat_add(o, yr[i0], w0, b0);
        orc_stat_add(o, yr[i1], w1, b1);
        /* error in units of u * |(x0, x1)| (the rotation keeps that norm) */
        double pn = ORC_U * sqrt(x0 * x0 + x1 * x1);
        double ul0 = pn > 0 ? fabs(yr[i0] - w0) / pn : 0, ul1 = pn > 0 ? fabs(yr[i1] - w1) / pn : 0;
        double *mu = pos[t] < 1000 ? &rs->max_ulps_near : &rs->max_ulps_far;
        if (ul0 > *mu) *mu = ul0;
        if (ul1 > *mu) *mu = ul1;
      }
    }
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = rot; i < D; i++) {
        int64_t k = (t * H + h) * D + i;
        CHECK(orc_f32_bits(y[k]) == orc_f32_bits(x[k]), "rope: channel %lld >= rot_dim not copied",
              (long long)i);
      }
  }
  /* In place gives the same bits. */
  memcpy(yi, x, (size_t)numel * sizeof *yi);
  hmx_tensor tyi = hmx_tensor_3d(yi, HMX_F32, T, H, D);
  ORC_OK(hmx_rope(&ctx, &tyi, &tp, base, rot, style, &tyi));
  CHECK(memcmp(yi, y, (size_t)numel * sizeof *y) == 0, "rope: in-place result differs");

  /* Probe the table itself: x0 = 1, x1 = 0 gives y0 = c^, y1 = s^ exactly. */
  for (int64_t k = 0; k < numel; k++) x[k] = 0;
  for (int64_t t = 0; t < T; t++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < half; i++)
        x[(t * H + h) * D + (style == HMX_ROPE_HALF ? i : 2 * i)] = 1.0f;
  ORC_OK(hmx_rope(&ctx, &tx, &tp, base, rot, style, &ty));
  for (int64_t t = 0; t < T; t++)
    for (int64_t i = 0; i < half; i++) {
      double th = rope_theta(pos[t], i, rot, base), c = cos(th), s = sin(th), E = angle_allow(th);
      int64_t i0 = style == HMX_ROPE_HALF ? i : 2 * i, i1 = style == HMX_ROPE_HALF ? i + half : 2 * i + 1;
      float ct = y[(t * H) * D + i0], st = y[(t * H) * D + i1];
      orc_stat_add(&rs->table, ct, c, u * (fabs(c) + E) + E);
      orc_stat_add(&rs->table, st, s, u * (fabs(s) + E) + E);
      rs->table_total += 2;
      rs->table_equal += (ct == (float)c) + (st == (float)s);
      if (getenv("ORC_VERBOSE") && (ct != (float)c || st != (float)s))
        printf("    table differs from (float)libm: pos %d i %lld rot %d base %g: theta %.17g "
               "cos %.17g -> %a (libm %a), sin %.17g -> %a (libm %a)\n", pos[t], (long long)i, rot,
               (double)base, th, c, (double)ct, (double)(float)c, s, (double)st, (double)(float)s);
    }
  free(pos);
  free(x);
  free(y);
  free(yi);
}

static void check_rope(orc_rng *rng) {
  rope_stats rs;
  memset(&rs, 0, sizeof rs);
  orc_stat_init(&rs.table, "rope table: cos/sin entries vs libm of the exact angle");
  orc_stat_init(&rs.out_near, "rope outputs, positions < 1000");
  orc_stat_init(&rs.out_far, "rope outputs, positions 1000 .. 100000");
  static const int64_t dims[][2] = {{64, 64}, {64, 32}, {128, 128}, {80, 64}, {96, 2}, {128, 96}};
  static const float bases[] = {10000.0f, 500000.0f};
  for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
    for (size_t bi = 0; bi < 2; bi++)
      for (int style = 0; style < 2; style++)
        check_rope_case(&rs, 24, 3, dims[di][0], (int)dims[di][1], bases[bi],
                        (hmx_rope_style)style, 100000, rng);
  orc_stat_report(&rs.table);
  orc_stat_report(&rs.out_near);
  orc_stat_report(&rs.out_far);
  printf("  max |error| / (u |(x0, x1)|): %.3f (positions < 1000), %.3f (1000 .. 100000)\n",
         rs.max_ulps_near, rs.max_ulps_far);
  printf("  table entries equal to (float)libm(exact angle): %ld of %ld\n", rs.table_equal,
         rs.table_total);

  /* The largest positions (2^24 - 1): the angle allowance E dominates there
   * (2^-45 * 1.7e7 = 4.8e-7 > u); reported separately. */
  rope_stats big;
  memset(&big, 0, sizeof big);
  orc_stat_init(&big.table, "rope table, positions up to 2^24 - 1");
  orc_stat_init(&big.out_near, "rope outputs (unused)");
  orc_stat_init(&big.out_far, "rope outputs, positions up to 2^24 - 1");
  check_rope_case(&big, 40, 1, 64, 64, 10000.0f, HMX_ROPE_HALF, (1 << 24) - 1, rng);
  check_rope_case(&big, 40, 1, 128, 128, 500000.0f, HMX_ROPE_INTERLEAVED, (1 << 24) - 1, rng);
  orc_stat_report(&big.table);
  orc_stat_report(&big.out_far);
  printf("  table entries equal to (float)libm(exact angle): %ld of %ld\n", big.table_equal,
         big.table_total);
  printf("  max |error| / (u |(x0, x1)|): %.3f (positions up to 2^24 - 1)\n", big.max_ulps_far);
}

int main(void) {
  orc_rng rng = orc_seed(3);
  printf("rmsnorm / layernorm vs double:\n");
  check_norms(&rng);
  printf("rope vs double (libm cos/sin/pow):\n");
  check_rope(&rng);
  return check_finish("test_oracle_norm_rope");
}
