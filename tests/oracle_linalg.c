/* Oracle test of gemm and swiglu (docs/ORACLE.md §gemm, §swiglu): the
 * reference against float64 matrix products written here, with error bounds
 * from the reference's evaluation order (one fmaf per term, sequential). */
#include "oracle.h"

/* ------------------------------------------------------------------ gemm
 * c_ij = fl-fma chain from bias_j (or +0) over p = 0..K-1: term p is rounded
 * K - p times and the bias K times, so
 *   |c^_ij - c_ij| <= gamma_K (|bias_j| + sum_p |a_ip b_pj|).
 * The double oracle adds its own gamma^d_(K+1) of the same quantity. */
static void check_gemm_case(orc_stat *st, int64_t M, int64_t K, int64_t N, int trans_b,
                            int with_bias, int family, orc_rng *rng) {
  float *a = orc_alloc((size_t)(M * K), sizeof *a), *b = orc_alloc((size_t)(K * N), sizeof *b);
  float *bias = orc_alloc((size_t)N, sizeof *bias), *c = orc_alloc((size_t)(M * N), sizeof *c);
  orc_fill(rng, a, M * K, family);
  orc_fill(rng, b, K * N, family);
  for (int64_t j = 0; j < N; j++) bias[j] = orc_sym(rng, 4.0);
  hmx_context ctx = orc_ctx();
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, M, K);
  hmx_tensor tb = trans_b ? hmx_tensor_2d(b, HMX_F32, N, K) : hmx_tensor_2d(b, HMX_F32, K, N);
  hmx_tensor tbias = hmx_tensor_1d(bias, HMX_F32, N), tc = hmx_tensor_2d(c, HMX_F32, M, N);
  ORC_OK(hmx_gemm(&ctx, &ta, &tb, trans_b, with_bias ? &tbias : NULL, &tc));
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = with_bias ? bias[j] : 0.0, mag = with_bias ? fabs((double)bias[j]) : 0.0;
      for (int64_t p = 0; p < K; p++) {
        double bv = trans_b ? b[j * K + p] : b[p * N + j];
        double t = (double)a[i * K + p] * bv; /* exact: 24 + 24 bits */
        s += t;
        mag += fabs(t);
      }
      double bound = orc_gamma((double)K) * mag + orc_gamma_d((double)K + 1) * mag;
      orc_stat_add(st, c[i * N + j], s, bound);
    }
  free(a);
  free(b);
  free(bias);
  free(c);
}

static void check_gemm(orc_rng *rng) {
  static const int64_t shapes[][3] = {
      {7, 13, 5}, {33, 65, 17}, {1, 1, 1},  {5, 1, 9},    {1, 37, 1},   {1, 300, 8},
      {9, 64, 1}, {64, 256, 48}, {3, 1000, 4}, {17, 4096, 3}, {2, 2, 2}};
  /* [K <= 2 | K > 2][trans_b][bias]: with one or two terms the bound is a
   * single rounding's and is nearly attained; reported apart. */
  orc_stat st[2][2][2];
  for (int big = 0; big < 2; big++)
    for (int t = 0; t < 2; t++)
      for (int bi = 0; bi < 2; bi++) {
        char name[96];
        snprintf(name, sizeof name, "gemm %s trans_b=%d %s", big ? "K >= 13" : "K <= 2 ", t,
                 bi ? "with bias" : "no bias");
        orc_stat_init(&st[big][t][bi], name);
      }
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int t = 0; t < 2; t++)
      for (int bi = 0; bi < 2; bi++)
        for (int fam = 0; fam < 3; fam++)
          check_gemm_case(&st[shapes[s][1] > 2][t][bi], shapes[s][0], shapes[s][1], shapes[s][2],
                          t, bi, fam, rng);
  for (int big = 0; big < 2; big++)
    for (int t = 0; t < 2; t++)
      for (int bi = 0; bi < 2; bi++) orc_stat_report(&st[big][t][bi]);

  /* Integer inputs (family 2) with |sum| < 2^24 are exact: the bound allows
   * rounding, so also check exactness where no rounding can occur. */
  {
    float a[6 * 10], b[10 * 7], c[6 * 7];
    orc_fill(rng, a, 60, 2);
    orc_fill(rng, b, 70, 2);
    hmx_context ctx = orc_ctx();
    hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, 6, 10), tb = hmx_tensor_2d(b, HMX_F32, 10, 7);
    hmx_tensor tc = hmx_tensor_2d(c, HMX_F32, 6, 7);
    ORC_OK(hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc));
    int exact = 1;
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 7; j++) {
        double s = 0;
        for (int p = 0; p < 10; p++) s += (double)a[i * 10 + p] * b[p * 7 + j];
        exact &= (double)c[i * 7 + j] == s;
      }
    CHECK(exact, "gemm of small integers is not exact");
    printf("  gemm of small integers exact: %s\n", exact ? "yes" : "NO");
  }
  /* K = 0: c = bias (or +0), exactly. */
  {
    float bias[3] = {1.5f, -2.25f, 0.0f}, c[2 * 3];
    float dummy = 0;
    hmx_context ctx = orc_ctx();
    hmx_tensor ta = hmx_tensor_2d(&dummy, HMX_F32, 2, 0), tb = hmx_tensor_2d(&dummy, HMX_F32, 0, 3);
    hmx_tensor tbias = hmx_tensor_1d(bias, HMX_F32, 3), tc = hmx_tensor_2d(c, HMX_F32, 2, 3);
    memset(c, 0x7f, sizeof c);
    hmx_status s = hmx_gemm(&ctx, &ta, &tb, 0, &tbias, &tc);
    int ok = s == HMX_OK && memcmp(c, bias, sizeof bias) == 0 && memcmp(c + 3, bias, sizeof bias) == 0;
    CHECK(ok, "gemm K=0 with bias: status %s, c[0] = %g", hmx_status_string(s), (double)c[0]);
    printf("  gemm K = 0 gives the bias: %s\n", ok ? "yes" : "NO");
  }
}

/* ------------------------------------------------------------------ swiglu
 * a_u = x.W1[:,u], b_u = x.W3[:,u] (fmaf chains of d terms), g_u = fl(silu^(a_u) b_u),
 * y_j = fmaf chain over u of g_u W2[u][j]. With the exact a*, b*, g*, y*:
 *   |a^ - a*| <= A = gamma_d sum_p |x_p W1_pu|     (B likewise for b)
 *   |silu^(a^) - silu(a*)| <= S = 1.1 A + E_silu |silu(a*)| (1 + ...),
 *        silu' in [-0.0998, 1.0998]; E_silu = relative error of hmx_siluf:
 *        e = expf(-a) within 1 ulp (<= 2^-23 relative), d = 1 + e, a / d:
 *        (1 + u) / ((1 - 2^-23)(1 - u)) - 1 (see docs/ORACLE.md)
 *   |g^ - g*| <= G = S |b*| + |silu(a*)| B + S B + u (|silu(a*)| + S)(|b*| + B)
 *   |y^_j - y*_j| <= sum_u G_u |W2_uj| + gamma_h sum_u (|g*_u| + G_u) |W2_uj|. */
static double silu_d(double z) { return z / (1.0 + exp(-z)); }

static double e_silu(void) {
  return (1 + ORC_U) / ((1 - 0x1p-23) * (1 - ORC_U)) - 1;
}

static void check_swiglu_case(orc_stat *st, int64_t T, int64_t d, int64_t h, int64_t dout,
                              orc_rng *rng) {
  float *x = orc_alloc((size_t)(T * d), sizeof *x);
  float *w1 = orc_alloc((size_t)(d * h), sizeof *w1), *w3 = orc_alloc((size_t)(d * h), sizeof *w3);
  float *w2 = orc_alloc((size_t)(h * dout), sizeof *w2);
  float *y = orc_alloc((size_t)(T * dout), sizeof *y), *yb = orc_alloc((size_t)(T * dout), sizeof *yb);
  /* x and weights scaled so that the pre-activations spread over about [-8, 8]. */
  double ws = 3.0 / sqrt((double)d);
  for (int64_t i = 0; i < T * d; i++) x[i] = orc_sym(rng, 1.5);
  for (int64_t i = 0; i < d * h; i++) {
    w1[i] = orc_sym(rng, 2 * ws);
    w3[i] = orc_sym(rng, 2 * ws);
  }
  for (int64_t i = 0; i < h * dout; i++) w2[i] = orc_sym(rng, 1.0 / sqrt((double)h));
  hmx_context ctx = orc_ctx();
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, T, d), t1 = hmx_tensor_2d(w1, HMX_F32, d, h);
  hmx_tensor t3 = hmx_tensor_2d(w3, HMX_F32, d, h), t2 = hmx_tensor_2d(w2, HMX_F32, h, dout);
  hmx_tensor ty = hmx_tensor_2d(y, HMX_F32, T, dout), tyb = hmx_tensor_2d(yb, HMX_F32, T, dout);
  ORC_OK(hmx_swiglu(&ctx, &tx, &t1, &t3, &t2, h, &ty));

  double *g = orc_alloc((size_t)h, sizeof *g), *G = orc_alloc((size_t)h, sizeof *G);
  double es = e_silu(), gh = orc_gamma((double)h), gd = orc_gamma((double)d);
  for (int64_t t = 0; t < T; t++) {
    const float *xr = x + t * d;
    for (int64_t u = 0; u < h; u++) {
      double a = 0, b = 0, ma = 0, mb = 0;
      for (int64_t p = 0; p < d; p++) {
        double ta = (double)xr[p] * w1[p * h + u], tb = (double)xr[p] * w3[p * h + u];
        a += ta;
        b += tb;
        ma += fabs(ta);
        mb += fabs(tb);
      }
      double A = gd * ma + orc_gamma_d((double)d) * ma, B = gd * mb + orc_gamma_d((double)d) * mb;
      double s = silu_d(a);
      double S = 1.1 * A + es * (fabs(s) + 1.1 * A) + ORC_TINY;
      g[u] = s * b;
      G[u] = S * fabs(b) + fabs(s) * B + S * B + ORC_U * (fabs(s) + S) * (fabs(b) + B);
    }
    for (int64_t j = 0; j < dout; j++) {
      double want = 0, prop = 0, mag = 0;
      for (int64_t u = 0; u < h; u++) {
        double w = w2[u * dout + j];
        want += g[u] * w;
        prop += G[u] * fabs(w);
        mag += (fabs(g[u]) + G[u]) * fabs(w);
      }
      double bound = prop + gh * mag + orc_gamma_d((double)h + 2) * mag + 1e-12 * prop;
      orc_stat_add(st, y[t * dout + j], want, bound);
    }
  }
  /* Bit identity across block sizes (and 0 = the backend's choice, > h). */
  const int64_t blocks[] = {1, 3, 64, h, 0, h + 5, (h + 1) / 2};
  for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) {
    memset(yb, 0xff, (size_t)(T * dout) * sizeof *yb);
    ORC_OK(hmx_swiglu(&ctx, &tx, &t1, &t3, &t2, blocks[i], &tyb));
    CHECK(memcmp(y, yb, (size_t)(T * dout) * sizeof *y) == 0,
          "swiglu T=%lld d=%lld h=%lld: block %lld differs from block h", (long long)T,
          (long long)d, (long long)h, (long long)blocks[i]);
  }
  free(x);
  free(w1);
  free(w3);
  free(w2);
  free(y);
  free(yb);
  free(g);
  free(G);
}

static void check_swiglu(orc_rng *rng) {
  orc_stat st;
  orc_stat_init(&st, "swiglu vs double (silu via exp in double)");
  check_swiglu_case(&st, 5, 24, 67, 19, rng);
  check_swiglu_case(&st, 4, 64, 256, 64, rng);
  check_swiglu_case(&st, 1, 1, 1, 1, rng);
  check_swiglu_case(&st, 3, 7, 130, 5, rng);
  check_swiglu_case(&st, 2, 128, 344, 128, rng);
  orc_stat_report(&st);
  printf("  swiglu bit-identical across blocks 1, 3, 64, h, 0, h+5, h/2: checked\n");
}

int main(void) {
  orc_rng rng = orc_seed(2);
  printf("gemm vs double:\n");
  check_gemm(&rng);
  printf("swiglu vs double:\n");
  check_swiglu(&rng);
  return check_finish("test_oracle_linalg");
}
