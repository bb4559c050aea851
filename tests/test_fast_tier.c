/* The fast tier (docs/NUMERICS.md, "Fast tier") against its documented error
 * bounds: every fast kernel of the default backend (gemm, attention, swiglu)
 * on random shapes and on the golden vectors, each element within its bound
 * of the float64 oracle (tests/fast_oracle.h) and within twice that of the
 * golden (exact) output; a planted wrong result must fail the same check;
 * the oneDNN primitive cache creates one primitive per shape; an invalid
 * tier is refused.
 *
 *   test_fast_tier [--backend NAME] [VECTOR_DIR]
 *
 * --backend cuda checks the cuda fast tier (cuBLASLt on tensor cores, host
 * buffers) against its own gemm bound (fo_gemm_tc); exit 77 (skipped) when
 * that backend cannot run here, or when the backend has no fast tier. */
#include "check.h"
#include "fast.h" /* hmx_fast_ops_of: the table's exact_rows */
#include "fast_oracle.h"
#include "gemm_quant.h"   /* hmx_gemm_quant, the G16 layout */
#include "gguf.h"         /* HMX_GGML_BF16 */
#include "op_io.h"
#include "swiglu_quant.h" /* hmx_swiglu_quant */

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HMX_HAVE_DNNL)
int hmx_fast_gemm_cache_size(void); /* cpu_fast/fast_gemm_dnnl.c */
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

typedef struct fcheck {
  long n, over, nonfinite;
  double worst; /* max err / bound */
} fcheck;

/* One element: |got - want| <= bound. A non-finite oracle value is not
 * bounded (counted apart); a non-finite fast value where the oracle is
 * finite is over. */
static void fc_add(fcheck *c, const char *what, int64_t i, double got, double want, double bound) {
  if (!isfinite(want) || fabs(want) > FLT_MAX || isinf(bound)) {
    /* the float result overflows, or an intermediate may (no bound) */
    c->nonfinite++;
    return;
  }
  c->n++;
  double err = fabs(got - want);
  double ratio = bound > 0 ? err / bound : (err == 0 ? 0 : INFINITY);
  if (!(err <= bound)) {
    if (c->over++ < 3)
      fprintf(stderr, "  %s[%lld]: got %.9g want %.12g err %.3g > bound %.3g\n", what,
              (long long)i, got, want, err, bound);
    if (isnan(ratio)) ratio = INFINITY;
  }
  if (ratio > c->worst) c->worst = ratio;
}

static void fc_report(const char *what, const fcheck *c) {
  printf("  %-64s %7ld values, max err/bound %.3e%s\n", what, c->n, c->worst,
         c->nonfinite ? " (+ overflowing/non-finite oracle values, not bounded)" : "");
  CHECK(c->over == 0, "%s: %ld of %ld values over the fast tier's bound", what, c->over, c->n);
}

static double *to_double(const hmx_tensor *t) {
  int64_t n = hmx_tensor_numel(t);
  double *d = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    if (t->dtype == HMX_F32) d[i] = ((const float *)t->data)[i];
    else if (t->dtype == HMX_BF16) d[i] = hmx_bf16_to_f32(((const uint16_t *)t->data)[i]);
    else d[i] = hmx_f16_to_f32(((const uint16_t *)t->data)[i]);
  }
  return d;
}

static double *vec_f(const float *x, int64_t n) {
  double *d = malloc((size_t)(n ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; i++) d[i] = x[i];
  return d;
}

static float *rand_f(int64_t n) {
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  for (int64_t i = 0; i < n; i++) x[i] = rnd();
  return x;
}

static const hmx_backend *test_be; /* NULL: the default backend */
static int tensor_cores;            /* the backend's fast gemm runs on tensor cores (cuda) */

static hmx_context fast_ctx(int threads) {
  hmx_context c = {test_be, threads, 0, HMX_TIER_FAST};
  return c;
}

/* Calls with at most this many rows run the exact kernel in the fast tier
 * (src/fast.h, exact_rows): their output must equal the exact tier's bits. */
static int64_t exact_rows(void) {
  const hmx_fast_ops *f = hmx_fast_ops_of(test_be ? test_be : hmx_backend_default());
  return f ? f->exact_rows : 0;
}

static void same_as_exact(const char *what, int64_t rows, const float *fast, const float *exact,
                          int64_t n) {
  CHECK(memcmp(fast, exact, (size_t)n * sizeof(float)) == 0,
        "%s: %lld rows <= exact_rows %lld, yet the fast tier's bits differ from the exact tier's",
        what, (long long)rows, (long long)exact_rows());
}

/* The 16-bit weight forms the backend's fast tier takes as stored here
 * (src/fast.h, HMX_FAST_W_*): those round the activations to bf16. */
static unsigned fast_w16(void) {
  return hmx_fast_weights16(test_be ? test_be : hmx_backend_default());
}

/* The oracle and bound of the backend's fast gemm; bf16_in: the call's
 * activations are rounded to bf16 (fo_gemm_bf16). */
static void gemm_oracle(const double *a, const double *b, const double *bias, int64_t m,
                        int64_t n, int64_t k, int trans_b, int bf16_in, double *want,
                        double *bound) {
  if (tensor_cores) fo_gemm_tc(a, b, bias, m, n, k, trans_b, 1, want, bound);
  else if (bf16_in) fo_gemm_bf16(a, b, bias, m, n, k, trans_b, want, bound);
  else fo_gemm(a, b, bias, m, n, k, trans_b, want, bound);
}

/* ------------------------------------------------------------------ random shapes */

static double planted_want, planted_bound, planted_got;

static void gemm_case(int64_t m, int64_t k, int64_t n, int tb, int bias, int threads) {
  float *a = rand_f(m * k), *b = rand_f(k * n), *bi = bias ? rand_f(n) : NULL;
  float *c = calloc((size_t)(m * n), sizeof(float));
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k);
  hmx_tensor tbb = tb ? hmx_tensor_2d(b, HMX_F32, n, k) : hmx_tensor_2d(b, HMX_F32, k, n);
  hmx_tensor tbias = hmx_tensor_1d(bi, HMX_F32, n), tc = hmx_tensor_2d(c, HMX_F32, m, n);
  hmx_context ctx = fast_ctx(threads);
  hmx_status s = hmx_gemm(&ctx, &ta, &tbb, tb, bias ? &tbias : NULL, &tc);
  CHECK(s == HMX_OK, "gemm fast: %s", hmx_last_error());
  double *da = vec_f(a, m * k), *db = vec_f(b, k * n), *dbias = bias ? vec_f(bi, n) : NULL;
  double *want = malloc((size_t)(m * n) * sizeof(double)), *bound = malloc((size_t)(m * n) * sizeof(double));
  gemm_oracle(da, db, dbias, m, n, k, tb, 0, want, bound);
  fcheck fc = {0};
  for (int64_t i = 0; i < m * n; i++) fc_add(&fc, "c", i, c[i], want[i], bound[i]);
  char what[128];
  snprintf(what, sizeof what, "gemm %lldx%lldx%lld%s%s, %d threads", (long long)m, (long long)k,
           (long long)n, tb ? " trans_b" : "", bias ? " bias" : "", threads);
  fc_report(what, &fc);
  if (m <= exact_rows()) {
    float *ce = calloc((size_t)(m * n), sizeof(float));
    hmx_tensor tce = hmx_tensor_2d(ce, HMX_F32, m, n);
    hmx_context ex = {test_be, threads, 0, HMX_TIER_EXACT};
    s = hmx_gemm(&ex, &ta, &tbb, tb, bias ? &tbias : NULL, &tce);
    CHECK(s == HMX_OK, "gemm exact: %s", hmx_last_error());
    same_as_exact(what, m, c, ce, m * n);
    free(ce);
  }
  /* keep one element for the planted-error test */
  planted_want = want[0];
  planted_bound = bound[0];
  planted_got = c[0];
  free(a); free(b); free(bi); free(c); free(da); free(db); free(dbias); free(want); free(bound);
}

/* set: v of the last key is +inf (the rows that do not see it must stay
 * finite and within their bounds: a tensor core's 0 * inf would be NaN) */
static int poison_last_v;

static void attention_case(int64_t B, int64_t sq, int64_t skv, int64_t hq, int64_t hkv,
                           int64_t d, int causal, float amp) {
  int64_t nq = B * sq * hq * d, nk = B * skv * hkv * d;
  float *q = rand_f(nq), *k = rand_f(nk), *v = rand_f(nk), *o = calloc((size_t)nq, sizeof(float));
  for (int64_t i = 0; i < nq; i++) q[i] *= amp; /* amp > 1: peaked softmax, large scores */
  for (int64_t b = 0; poison_last_v && b < B; b++)
    for (int64_t c = 0; c < hkv * d; c++) v[((b * skv + skv - 1) * hkv) * d + c] = INFINITY;
  hmx_tensor tq = hmx_tensor_4d(q, HMX_F32, B, sq, hq, d), tk = hmx_tensor_4d(k, HMX_F32, B, skv, hkv, d);
  hmx_tensor tv = hmx_tensor_4d(v, HMX_F32, B, skv, hkv, d), to = hmx_tensor_4d(o, HMX_F32, B, sq, hq, d);
  hmx_attention_params p = {causal, -1, 0.0f};
  hmx_context ctx = fast_ctx(2);
  hmx_status s = hmx_attention(&ctx, &tq, &tk, &tv, &p, &to);
  CHECK(s == HMX_OK, "attention fast: %s", hmx_last_error());
  double *dq = vec_f(q, nq), *dk = vec_f(k, nk), *dv = vec_f(v, nk);
  double *want = malloc((size_t)nq * sizeof(double)), *bound = malloc((size_t)nq * sizeof(double));
  fo_attention_arith(dq, dk, dv, B, sq, skv, hq, hkv, d, causal, skv - sq,
                     (float)(1.0 / sqrt((double)d)), tensor_cores, want, bound);
  fcheck fc = {0};
  for (int64_t i = 0; i < nq; i++) fc_add(&fc, "o", i, o[i], want[i], bound[i]);
  char what[128];
  snprintf(what, sizeof what, "attention b%lld sq%lld skv%lld hq%lld hkv%lld d%lld%s amp %g%s",
           (long long)B, (long long)sq, (long long)skv, (long long)hq, (long long)hkv,
           (long long)d, causal ? " causal" : "", amp, poison_last_v ? " v[last] = inf" : "");
  if (poison_last_v) /* only the rows that see the last key may be non-finite */
    CHECK(fc.nonfinite > 0 && fc.nonfinite <= B * hq * d * (causal ? 1 : sq),
          "%s: %ld non-finite oracle values", what, fc.nonfinite);
  fc_report(what, &fc);
  free(q); free(k); free(v); free(o); free(dq); free(dk); free(dv); free(want); free(bound);
}

static void swiglu_case(int64_t t, int64_t d, int64_t h, int64_t dout) {
  float *x = rand_f(t * d), *w1 = rand_f(d * h), *w3 = rand_f(d * h), *w2 = rand_f(h * dout);
  float *y = calloc((size_t)(t * dout), sizeof(float));
  for (int64_t i = 0; i < t * d; i++) x[i] *= 3.0f; /* reach silu's tails */
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, t, d), t1 = hmx_tensor_2d(w1, HMX_F32, d, h);
  hmx_tensor t3 = hmx_tensor_2d(w3, HMX_F32, d, h), t2 = hmx_tensor_2d(w2, HMX_F32, h, dout);
  hmx_tensor ty = hmx_tensor_2d(y, HMX_F32, t, dout);
  hmx_context ctx = fast_ctx(2);
  hmx_status s = hmx_swiglu(&ctx, &tx, &t1, &t3, &t2, 0, &ty);
  CHECK(s == HMX_OK, "swiglu fast: %s", hmx_last_error());
  double *dx = vec_f(x, t * d), *d1 = vec_f(w1, d * h), *d3 = vec_f(w3, d * h), *d2 = vec_f(w2, h * dout);
  double *want = malloc((size_t)(t * dout) * sizeof(double)), *bound = malloc((size_t)(t * dout) * sizeof(double));
  fo_swiglu_arith(dx, d1, d3, d2, t, d, h, dout, tensor_cores ? FO_TC : FO_F32, want, bound);
  fcheck fc = {0};
  for (int64_t i = 0; i < t * dout; i++) fc_add(&fc, "y", i, y[i], want[i], bound[i]);
  char what[128];
  snprintf(what, sizeof what, "swiglu t%lld d%lld h%lld out%lld", (long long)t, (long long)d,
           (long long)h, (long long)dout);
  fc_report(what, &fc);
  if (t <= exact_rows()) {
    float *ye = calloc((size_t)(t * dout), sizeof(float));
    hmx_tensor tye = hmx_tensor_2d(ye, HMX_F32, t, dout);
    hmx_context ex = {test_be, 2, 0, HMX_TIER_EXACT};
    s = hmx_swiglu(&ex, &tx, &t1, &t3, &t2, 0, &tye);
    CHECK(s == HMX_OK, "swiglu exact: %s", hmx_last_error());
    same_as_exact(what, t, y, ye, t * dout);
    free(ye);
  }
  free(x); free(w1); free(w3); free(w2); free(y); free(dx); free(d1); free(d3); free(d2);
  free(want); free(bound);
}

/* ------------------------------------------------------------------ bf16 weights */

/* n random values rounded to bf16: the bits in *h16, their values (exact)
 * in the returned doubles. */
static double *dalloc(int64_t n) { return malloc((size_t)(n ? n : 1) * sizeof(double)); }

static double *rand_bf16(int64_t n, uint16_t **h16) {
  uint16_t *h = malloc((size_t)n * sizeof *h);
  double *d = malloc((size_t)n * sizeof *d);
  for (int64_t i = 0; i < n; i++) {
    h[i] = hmx_f32_to_bf16(rnd());
    d[i] = hmx_bf16_to_f32(h[i]);
  }
  *h16 = h;
  return d;
}

/* The check of one bf16-weight call: every element within the bound of its
 * path (bf16_in: activations rounded to bf16, fo_gemm_bf16's kind), and, on
 * that path, at least one element past the f32 bound `f32_bound`: the
 * activations really were rounded (a staged f32 call would pass the bf16
 * bound too). exact: the exact tier's output where the fast tier runs the
 * exact kernel (rows <= exact_rows, or G16 weights off the bf16 path). */
static void bf16_report(const char *what, const float *got, const double *want,
                        const double *bound, const double *f32_bound, int64_t count, int bf16_in,
                        int64_t rows, const float *exact) {
  fcheck fc = {0};
  long past_f32 = 0;
  for (int64_t i = 0; i < count; i++) {
    fc_add(&fc, "c", i, got[i], want[i], bound[i]);
    past_f32 += fabs((double)got[i] - want[i]) > f32_bound[i];
  }
  fc_report(what, &fc);
  if (bf16_in)
    CHECK(past_f32 > 0, "%s: on the bf16 path, yet no element is past the f32 bound (were the "
          "activations rounded?)", what);
  if (exact)
    CHECK(memcmp(got, exact, (size_t)count * sizeof(float)) == 0,
          "%s: %lld rows, the fast tier runs the exact kernel here, yet its bits differ from the "
          "exact tier's", what, (long long)rows);
}

/* hmx_gemm with a bf16 b tensor: oneDNN's bf16 matmul where the fast tier
 * takes bf16 rows (HMX_FAST_W_BF16_ROWS), else staged to f32. */
static void gemm_bf16_case(int64_t m, int64_t k, int64_t n, int tb) {
  float *a = rand_f(m * k), *c = calloc((size_t)(m * n), sizeof(float));
  float *ce = calloc((size_t)(m * n), sizeof(float));
  uint16_t *b16;
  double *db = rand_bf16(k * n, &b16), *da = vec_f(a, m * k);
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k), tc = hmx_tensor_2d(c, HMX_F32, m, n);
  hmx_tensor tbb = tb ? hmx_tensor_2d(b16, HMX_BF16, n, k) : hmx_tensor_2d(b16, HMX_BF16, k, n);
  hmx_tensor tce = hmx_tensor_2d(ce, HMX_F32, m, n);
  hmx_context ctx = fast_ctx(2), ex = {test_be, 2, 0, HMX_TIER_EXACT};
  CHECK(hmx_gemm(&ctx, &ta, &tbb, tb, NULL, &tc) == HMX_OK, "gemm fast bf16: %s",
        hmx_last_error());
  CHECK(hmx_gemm(&ex, &ta, &tbb, tb, NULL, &tce) == HMX_OK, "gemm exact bf16: %s",
        hmx_last_error());
  const int bf16_in = m > exact_rows() && (fast_w16() & HMX_FAST_W_BF16_ROWS);
  double *want = dalloc(m * n), *bound = dalloc(m * n), *want32 = dalloc(m * n);
  double *b32 = dalloc(m * n);
  gemm_oracle(da, db, NULL, m, n, k, tb, bf16_in, want, bound);
  fo_gemm(da, db, NULL, m, n, k, tb, want32, b32);
  char what[160];
  snprintf(what, sizeof what, "gemm bf16 b %lldx%lldx%lld%s (%s)", (long long)m, (long long)k,
           (long long)n, tb ? " trans_b" : "", bf16_in ? "bf16 matmul" : "staged to f32");
  bf16_report(what, c, want, bound, b32, m * n, bf16_in, m, m <= exact_rows() ? ce : NULL);
  free(a); free(c); free(ce); free(b16); free(db); free(da); free(want); free(bound);
  free(want32); free(b32);
}

/* hmx_gemm_quant with bf16 weights in the G16 layout (a GGUF BF16 matrix as
 * the model keeps it): the AVX512_BF16 kernel where the fast tier has it
 * (HMX_FAST_W_BF16_G16: avx512 on a CPU with AVX512_BF16), else the exact
 * kernel. Odd K, N not a multiple of 32 or 16, rows not a multiple of 12. */
static void gemm_g16_case(int64_t m, int64_t k, int64_t n) {
  float *a = rand_f(m * k), *c = calloc((size_t)(m * n), sizeof(float));
  float *ce = calloc((size_t)(m * n), sizeof(float));
  uint16_t *rows;
  double *db = rand_bf16(n * k, &rows), *da = vec_f(a, m * k);
  void *g16 = calloc(1, hmx_qlayout_g16_bytes(HMX_GGML_BF16, n, k));
  hmx_qlayout_to_g16(HMX_GGML_BF16, rows, n, k, g16);
  hmx_qmatrix q = {HMX_GGML_BF16, g16, n, k, HMX_QLAYOUT_G16, NULL};
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k), tc = hmx_tensor_2d(c, HMX_F32, m, n);
  hmx_tensor tce = hmx_tensor_2d(ce, HMX_F32, m, n);
  hmx_context ctx = fast_ctx(2), ex = {test_be, 2, 0, HMX_TIER_EXACT};
  CHECK(hmx_gemm_quant(&ctx, &ta, &q, &tc) == HMX_OK, "gemm G16 fast: %s", hmx_last_error());
  CHECK(hmx_gemm_quant(&ex, &ta, &q, &tce) == HMX_OK, "gemm G16 exact: %s", hmx_last_error());
  const int bf16_in = m > exact_rows() && (fast_w16() & HMX_FAST_W_BF16_G16);
  double *want = dalloc(m * n), *bound = dalloc(m * n), *want32 = dalloc(m * n);
  double *b32 = dalloc(m * n);
  gemm_oracle(da, db, NULL, m, n, k, 1, bf16_in, want, bound);
  fo_gemm(da, db, NULL, m, n, k, 1, want32, b32);
  char what[160];
  snprintf(what, sizeof what, "gemm bf16 G16 %lldx%lldx%lld (%s)", (long long)m, (long long)k,
           (long long)n, bf16_in ? "AVX512_BF16 kernel" : "exact kernel");
  /* not on the bf16 path the fast tier runs the exact kernel: its bits */
  bf16_report(what, c, want, bound, b32, m * n, bf16_in, m, bf16_in ? NULL : ce);
  free(a); free(c); free(ce); free(rows); free(db); free(da); free(g16); free(want);
  free(bound); free(want32); free(b32);
}

/* Transpose an [r, c] double matrix (the oracle takes W1 as [d, h]). */
static double *transpose_d(const double *x, int64_t r, int64_t c) {
  double *t = malloc((size_t)(r * c) * sizeof *t);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) t[j * r + i] = x[i * c + j];
  return t;
}

/* swiglu with bf16 weights: as tensors (hmx_swiglu: oneDNN's bf16 matmuls
 * where HMX_FAST_W_BF16_ROWS) and, g16, as a GGUF model keeps them
 * (hmx_swiglu_quant on G16 matrices: the AVX512_BF16 kernel where
 * HMX_FAST_W_BF16_G16, else the exact path). */
static void swiglu_bf16_case(int64_t t, int64_t d, int64_t h, int64_t dout, int g16) {
  float *x = rand_f(t * d), *y = calloc((size_t)(t * dout), sizeof(float));
  float *ye = calloc((size_t)(t * dout), sizeof(float));
  for (int64_t i = 0; i < t * d; i++) x[i] *= 3.0f;
  uint16_t *r1, *r3, *r2; /* [h, d], [h, d], [dout, h]: the [out, in] rows */
  double *q1 = rand_bf16(h * d, &r1), *q3 = rand_bf16(h * d, &r3);
  double *q2 = rand_bf16(dout * h, &r2);
  double *d1 = transpose_d(q1, h, d), *d3 = transpose_d(q3, h, d), *d2 = transpose_d(q2, dout, h);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, t, d), ty = hmx_tensor_2d(y, HMX_F32, t, dout);
  hmx_tensor tye = hmx_tensor_2d(ye, HMX_F32, t, dout);
  hmx_context ctx = fast_ctx(2), ex = {test_be, 2, 0, HMX_TIER_EXACT};
  int bf16_in;
  void *gm[3] = {NULL, NULL, NULL};
  uint16_t *cols[3] = {NULL, NULL, NULL};
  if (g16) {
    const uint16_t *src[3] = {r1, r3, r2};
    const int64_t n_of[3] = {h, h, dout}, k_of[3] = {d, d, h};
    hmx_qmatrix q[3];
    for (int i = 0; i < 3; i++) {
      gm[i] = calloc(1, hmx_qlayout_g16_bytes(HMX_GGML_BF16, n_of[i], k_of[i]));
      hmx_qlayout_to_g16(HMX_GGML_BF16, src[i], n_of[i], k_of[i], gm[i]);
      q[i] = (hmx_qmatrix){HMX_GGML_BF16, gm[i], n_of[i], k_of[i], HMX_QLAYOUT_G16, NULL};
    }
    float *ga = malloc((size_t)(t * h) * sizeof(float));
    float *gb = malloc((size_t)(t * h) * sizeof(float));
    CHECK(hmx_swiglu_quant(&ctx, &tx, &q[0], &q[1], &q[2], &ty, ga, gb) == HMX_OK,
          "swiglu G16 fast: %s", hmx_last_error());
    CHECK(hmx_swiglu_quant(&ex, &tx, &q[0], &q[1], &q[2], &tye, ga, gb) == HMX_OK,
          "swiglu G16 exact: %s", hmx_last_error());
    free(ga);
    free(gb);
    bf16_in = t > exact_rows() && (fast_w16() & HMX_FAST_W_BF16_G16);
  } else {
    /* hmx_swiglu's layout: w1, w3 [d, h], w2 [h, dout] */
    const uint16_t *src[3] = {r1, r3, r2};
    const int64_t r_of[3] = {h, h, dout}, c_of[3] = {d, d, h};
    for (int i = 0; i < 3; i++) {
      cols[i] = malloc((size_t)(r_of[i] * c_of[i]) * sizeof(uint16_t));
      for (int64_t rr = 0; rr < r_of[i]; rr++)
        for (int64_t cc = 0; cc < c_of[i]; cc++)
          cols[i][cc * r_of[i] + rr] = src[i][rr * c_of[i] + cc];
    }
    hmx_tensor t1 = hmx_tensor_2d(cols[0], HMX_BF16, d, h);
    hmx_tensor t3 = hmx_tensor_2d(cols[1], HMX_BF16, d, h);
    hmx_tensor t2 = hmx_tensor_2d(cols[2], HMX_BF16, h, dout);
    CHECK(hmx_swiglu(&ctx, &tx, &t1, &t3, &t2, 0, &ty) == HMX_OK, "swiglu bf16 fast: %s",
          hmx_last_error());
    CHECK(hmx_swiglu(&ex, &tx, &t1, &t3, &t2, 0, &tye) == HMX_OK, "swiglu bf16 exact: %s",
          hmx_last_error());
    bf16_in = t > exact_rows() && (fast_w16() & HMX_FAST_W_BF16_ROWS);
  }
  double *dx = vec_f(x, t * d);
  double *want = dalloc(t * dout), *bound = dalloc(t * dout), *want32 = dalloc(t * dout);
  double *b32 = dalloc(t * dout);
  fo_swiglu_arith(dx, d1, d3, d2, t, d, h, dout, bf16_in ? FO_BF16 : FO_F32, want, bound);
  fo_swiglu_arith(dx, d1, d3, d2, t, d, h, dout, FO_F32, want32, b32);
  char what[160];
  snprintf(what, sizeof what, "swiglu bf16 %s t%lld d%lld h%lld out%lld (%s)",
           g16 ? "G16" : "rows", (long long)t, (long long)d, (long long)h, (long long)dout,
           bf16_in ? "bf16 activations" : "exact or staged");
  /* off the bf16 path, G16 weights in the fast tier take the exact path (its
   * bits); rows are staged to oneDNN's f32 matmul (within the f32 bound) */
  bf16_report(what, y, want, bound, b32, t * dout, bf16_in, t,
              t <= exact_rows() || (g16 && !bf16_in) ? ye : NULL);
  for (int i = 0; i < 3; i++) free(gm[i]), free(cols[i]);
  free(x); free(y); free(ye); free(r1); free(r3); free(r2); free(q1); free(q3); free(q2);
  free(d1); free(d3); free(d2); free(dx); free(want); free(bound); free(want32); free(b32);
}

/* ------------------------------------------------------------------ golden vectors */

static void vector_case(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  hmx_st_file *f = NULL;
  if (hmx_st_load(path, &f) != HMX_OK) {
    CHECK(0, "%s: cannot load: %s", path, hmx_last_error());
    return;
  }
  const char *opname = hmx_st_meta(f, "op");
  const hmx_opspec *op = opname ? hmx_op_find(opname) : NULL;
  hmx_op_io io;
  hmx_op_io_init(&io, op);
  hmx_status s = hmx_op_io_load(&io, f);
  if (s == HMX_OK) s = hmx_op_io_alloc_outputs(&io, HMX_F32);
  hmx_context ctx = fast_ctx(2);
  if (s == HMX_OK) s = hmx_op_io_run(&io, &ctx);
  CHECK(s == HMX_OK, "%s: fast run failed: %s", file, hmx_last_error());
  if (s != HMX_OK) {
    hmx_op_io_free(&io);
    hmx_st_free(f);
    return;
  }
  int out = -1;
  for (int a = 0; a < op->nargs; a++)
    if (op->args[a].is_output) out = a;
  const hmx_tensor *got = io.tp[out];
  const hmx_st_tensor *gold = hmx_st_find(f, op->args[out].name);
  int64_t n = hmx_tensor_numel(got);
  double *want = malloc((size_t)(n ? n : 1) * sizeof(double));
  double *bound = malloc((size_t)(n ? n : 1) * sizeof(double));
  double *in[5] = {NULL};
  for (int a = 0; a < op->nargs; a++)
    if (!op->args[a].is_output && io.tp[a]) in[a] = to_double(io.tp[a]);
  if (strcmp(op->name, "gemm") == 0) {
    int tb = (int)io.p[0];
    const int bf16_in = io.tp[1]->dtype == HMX_BF16 && io.tp[0]->shape[0] > exact_rows() &&
                        (fast_w16() & HMX_FAST_W_BF16_ROWS);
    gemm_oracle(in[0], in[1], in[2], io.tp[0]->shape[0], got->shape[1], io.tp[0]->shape[1], tb,
                bf16_in, want, bound);
  } else if (strcmp(op->name, "attention") == 0) {
    const hmx_tensor *q = io.tp[0], *k = io.tp[1];
    int64_t qoff = io.p[1] < 0 ? k->shape[1] - q->shape[1] : (int64_t)io.p[1];
    double scale = io.p[2] > 0 ? (float)io.p[2] : (float)(1.0 / sqrt((double)q->shape[3]));
    fo_attention_arith(in[0], in[1], in[2], q->shape[0], q->shape[1], k->shape[1], q->shape[2],
                       k->shape[2], q->shape[3], (int)io.p[0], qoff, scale, tensor_cores, want,
                       bound);
  } else {
    const hmx_tensor *x = io.tp[0], *w1 = io.tp[1], *w2 = io.tp[3];
    const int bf16_in = w1->dtype == HMX_BF16 && x->shape[0] > exact_rows() &&
                        (fast_w16() & HMX_FAST_W_BF16_ROWS);
    fo_swiglu_arith(in[0], in[1], in[2], in[3], x->shape[0], x->shape[1], w1->shape[1],
                    w2->shape[1], tensor_cores ? FO_TC : bf16_in ? FO_BF16 : FO_F32, want,
                    bound);
  }
  /* the golden output: within the exact tier's bound of the oracle, which is
   * no larger than the fast tier's, so fast and golden differ by at most
   * twice the bound, plus the golden's own rounding to a 16-bit dtype */
  hmx_tensor gt = hmx_tensor_make((void *)gold->data, gold->dtype, gold->ndim, gold->shape);
  double *g = to_double(&gt);
  double gu = gold->dtype == HMX_F32 ? 0 : gold->dtype == HMX_BF16 ? 0x1p-8 : 0x1p-11;
  fcheck fo = {0}, fg = {0};
  const float *y = got->data;
  for (int64_t i = 0; i < n; i++) {
    fc_add(&fo, "vs oracle", i, y[i], want[i], bound[i]);
    if (isfinite(want[i])) fc_add(&fg, "vs golden", i, y[i], g[i], 2 * bound[i] + gu * fabs(g[i]));
  }
  char what[512];
  snprintf(what, sizeof what, "%s vs oracle", file);
  fc_report(what, &fo);
  snprintf(what, sizeof what, "%s vs golden", file);
  fc_report(what, &fg);
  for (int a = 0; a < 5; a++) free(in[a]);
  free(g); free(want); free(bound);
  hmx_op_io_free(&io);
  hmx_st_free(f);
}

static void vectors(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/MANIFEST", dir);
  FILE *m = fopen(path, "r");
  CHECK(m != NULL, "cannot open %s", path);
  if (!m) return;
  char line[512];
  int cases = 0;
  while (fgets(line, sizeof line, m)) {
    char hash[80], name[400];
    if (sscanf(line, "%79s %399s", hash, name) != 2) continue;
    if (strncmp(name, "gemm_", 5) && strncmp(name, "attention_", 10) && strncmp(name, "swiglu_", 7))
      continue;
    vector_case(dir, name);
    cases++;
  }
  fclose(m);
  CHECK(cases > 30, "only %d gemm/attention/swiglu vectors found", cases);
}

/* ------------------------------------------------------------------ the check catches errors */

static void planted(void) {
  /* a result moved to just past its bound must fail the check above... */
  fcheck c = {0};
  double wrong = planted_want + planted_bound * 1.0001 + DBL_MIN;
  fc_add(&c, "planted (expected to be reported)", 0, wrong, planted_want, planted_bound);
  CHECK(c.over == 1, "a value past its bound was not caught");
  /* ...and the real result passes it */
  fcheck ok = {0};
  fc_add(&ok, "real", 0, planted_got, planted_want, planted_bound);
  CHECK(ok.over == 0, "the real fast result fails its own bound");
  /* a whole wrong kernel: gemm with the last reduction term dropped (K = 64
   * random terms of size ~1/4: the missing term is far above the bound) */
  const int64_t m = 3, k = 64, n = 5;
  float *a = rand_f(m * k), *b = rand_f(k * n), *cc = calloc((size_t)(m * n), sizeof(float));
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k - 1), tb = hmx_tensor_2d(b, HMX_F32, k - 1, n);
  hmx_tensor tc = hmx_tensor_2d(cc, HMX_F32, m, n);
  for (int64_t i = 0; i < m; i++) /* a [m, k-1] view of rows of k: copy compactly */
    memmove(a + i * (k - 1), a + i * k, (size_t)(k - 1) * sizeof(float));
  hmx_context ctx = fast_ctx(1);
  CHECK(hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc) == HMX_OK, "%s", hmx_last_error());
  float *a2 = rand_f(m * k); /* the full problem: a2's first k-1 columns are a */
  for (int64_t i = 0; i < m; i++) {
    memcpy(a2 + i * k, a + i * (k - 1), (size_t)(k - 1) * sizeof(float));
    a2[i * k + k - 1] = 0.75f;
  }
  for (int64_t j = 0; j < n; j++) b[(k - 1) * n + j] = 0.5f + 0.25f * (float)j;
  double *da = vec_f(a2, m * k), *db = vec_f(b, k * n);
  double want[15], bound[15];
  gemm_oracle(da, db, NULL, m, n, k, 0, 0, want, bound);
  fcheck w = {0};
  for (int64_t i = 0; i < m * n; i++) fc_add(&w, "dropped term (expected to be reported)", i, cc[i], want[i], bound[i]);
  CHECK(w.over == m * n, "a gemm missing a term passed %ld of %lld checks", m * n - w.over,
        (long long)(m * n));
  printf("  planted errors: caught (%ld of %lld wrong gemm values, 1 of 1 value past its bound)\n",
         w.over, (long long)(m * n));
  free(a); free(b); free(cc); free(a2); free(da); free(db);
}

static void tier_switch(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, 2, 2), tb = hmx_tensor_2d(b, HMX_F32, 2, 2);
  hmx_tensor tc = hmx_tensor_2d(c, HMX_F32, 2, 2);
  hmx_context bad = {NULL, 1, 0, (hmx_tier)7};
  CHECK(hmx_gemm(&bad, &ta, &tb, 0, NULL, &tc) == HMX_ERR_INVALID_ARGUMENT, "tier 7 accepted");
  hmx_tier t;
  CHECK(hmx_tier_parse("fast", &t) == HMX_OK && t == HMX_TIER_FAST, "parse fast");
  CHECK(hmx_tier_parse("quick", &t) == HMX_ERR_INVALID_ARGUMENT, "parse quick accepted");
  CHECK(strcmp(hmx_tier_name(HMX_TIER_EXACT), "exact") == 0, "tier name");
  const char *why = NULL;
  CHECK(hmx_fast_op_kernel(hmx_backend_find("ref"), "gemm", &why) == NULL && why == NULL,
        "ref must have no fast tier");
}

#if defined(HMX_HAVE_DNNL) && defined(_OPENMP)
/* The primitive cache under concurrent callers: 4 threads, each calling the
 * fast gemm on shapes new to the cache (two threads per shape, so they race
 * to create it) and on shapes already cached; every result within its bound
 * and one primitive per shape. */
static void concurrent(void) {
  enum { NT = 4, SHAPES = 2 };
  static const int64_t dims[SHAPES][3] = {{9, 131, 17}, {23, 61, 40}};
  float *a[SHAPES], *b[SHAPES];
  double *want[SHAPES], *bound[SHAPES];
  for (int s = 0; s < SHAPES; s++) {
    int64_t m = dims[s][0], k = dims[s][1], n = dims[s][2];
    a[s] = rand_f(m * k);
    b[s] = rand_f(k * n);
    double *da = vec_f(a[s], m * k), *db = vec_f(b[s], k * n);
    want[s] = malloc((size_t)(m * n) * sizeof(double));
    bound[s] = malloc((size_t)(m * n) * sizeof(double));
    fo_gemm(da, db, NULL, m, n, k, 0, want[s], bound[s]);
    free(da);
    free(db);
  }
  int n0 = hmx_fast_gemm_cache_size();
  long over = 0, fails = 0;
#pragma omp parallel num_threads(NT) reduction(+ : over, fails)
  for (int it = 0; it < 6; it++) {
    int s = (omp_get_thread_num() + it) % SHAPES;
    int64_t m = dims[s][0], k = dims[s][1], n = dims[s][2];
    float *c = calloc((size_t)(m * n), sizeof(float));
    hmx_tensor ta = hmx_tensor_2d(a[s], HMX_F32, m, k), tb = hmx_tensor_2d(b[s], HMX_F32, k, n);
    hmx_tensor tc = hmx_tensor_2d(c, HMX_F32, m, n);
    hmx_context ctx = fast_ctx(1);
    if (hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc) != HMX_OK) fails++;
    for (int64_t i = 0; i < m * n; i++)
      if (!(fabs(c[i] - want[s][i]) <= bound[s][i])) over++;
    free(c);
  }
  int n1 = hmx_fast_gemm_cache_size();
  printf("  concurrent fast gemm: %d threads x 6 calls, %ld failed calls, %ld values over their "
         "bound, cache %d -> %d\n", NT, fails, over, n0, n1);
  CHECK(fails == 0 && over == 0, "concurrent fast gemm: %ld failures, %ld over", fails, over);
  CHECK(n1 == n0 + SHAPES, "concurrent callers created %d primitives for %d shapes", n1 - n0, SHAPES);
  for (int s = 0; s < SHAPES; s++) {
    free(a[s]); free(b[s]); free(want[s]); free(bound[s]);
  }
}
#endif

#if defined(HMX_HAVE_DNNL)
static void cache(void) {
  int n0 = hmx_fast_gemm_cache_size();
  gemm_case(13, 77, 29, 0, 1, 1);
  int n1 = hmx_fast_gemm_cache_size();
  for (int i = 0; i < 3; i++) gemm_case(13, 77, 29, 0, 1, 2);
  int n2 = hmx_fast_gemm_cache_size();
  printf("  oneDNN primitive cache: %d -> %d after a new shape -> %d after 3 more calls\n", n0,
         n1, n2);
  CHECK(n1 == n0 + 1 && n2 == n1, "one primitive per shape, not per call (%d, %d, %d)", n0, n1, n2);
}
#endif

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "--backend") == 0) {
    test_be = hmx_backend_find(argv[2]);
    if (!test_be || !hmx_backend_available(test_be)) {
      printf("test_fast_tier: SKIPPED: backend %s %s\n", argv[2],
             test_be ? "cannot run here (no device)" : "is not built in");
      return 77;
    }
    tensor_cores = strcmp(argv[2], "cuda") == 0;
    argc -= 2;
    argv += 2;
  }
  const hmx_backend *be = test_be ? test_be : hmx_backend_default();
  const char *why = NULL;
  int any = 0;
  const char *ops[] = {"gemm", "attention", "swiglu"};
  for (int i = 0; i < 3; i++) {
    const char *uses = be ? hmx_fast_op_kernel(be, ops[i], &why) : NULL;
    printf("fast tier on %s: %-10s %s%s\n", be ? hmx_backend_name(be) : "?", ops[i],
           uses ? uses : "exact: ", uses ? "" : why ? why : "no fast tier");
    any |= uses != NULL;
  }
  tier_switch();
  if (!any) {
    printf("test_fast_tier: SKIPPED: backend %s changes no op in the fast tier\n",
           be ? hmx_backend_name(be) : "?");
    return check_failures ? 1 : 77;
  }
  if (hmx_fast_op_kernel(be, "gemm", NULL)) {
    gemm_case(1, 768, 768, 1, 0, 1); /* M = 1: the exact kernel (cpu, exact_rows), with and without bias */
    gemm_case(1, 2048, 40, 1, 1, 2);
    gemm_case(1, 300, 77, 0, 1, 1);
    gemm_case(64, 256, 300, 1, 1, 2);
    gemm_case(37, 1000, 19, 0, 0, 2);
    gemm_case(128, 512, 512, 0, 1, 2);
    gemm_case(5, 3, 2, 0, 1, 1);
  }
  if (hmx_fast_op_kernel(be, "attention", NULL)) {
    attention_case(1, 1, 257, 4, 1, 64, 1, 1.0f);
    /* Sq <= 4 on avx512: its own kernel (16-key add tree, P V in 64-d
     * register tiles): a GQA group of 3 at 4 positions (12 rows: tiles of 4),
     * d = 80 (a masked second d tile), keys not a multiple of 16 */
    attention_case(2, 4, 300, 6, 2, 80, 1, 3.0f);
    attention_case(1, 3, 45, 4, 4, 24, 0, 1.0f);
    attention_case(2, 70, 70, 4, 2, 32, 1, 1.0f);
    attention_case(1, 33, 200, 2, 2, 128, 0, 1.0f);
    attention_case(1, 20, 150, 2, 1, 64, 1, 12.0f);
    /* Sq > 4 with oneDNN: several 256-key blocks, the causal diagonal inside one */
    attention_case(1, 300, 600, 4, 2, 64, 1, 1.0f);
    attention_case(2, 100, 700, 2, 1, 40, 1, 3.0f);
    attention_case(1, 77, 513, 3, 3, 16, 0, 1.0f);
    /* the cuda tensor-core kernel (D = 64, 128; Sq >= 16): several query
     * and key tiles, partial tiles, GQA, q_offset > 0 */
    attention_case(2, 130, 300, 4, 2, 128, 1, 1.0f);
    attention_case(1, 100, 100, 6, 3, 64, 0, 4.0f);
    attention_case(1, 16, 1000, 2, 1, 64, 1, 1.0f);
    poison_last_v = 1;
    attention_case(1, 80, 80, 2, 1, 64, 1, 1.0f);
    poison_last_v = 0;
    /* a GQA group of 3 in one sgemm's rows, 32-position tiles whose fully
     * seen keys (q_offset 900 + i0 + 1) end inside a 256-key block, then the
     * diagonal's keys row by row; a peaked softmax so the max grows */
    attention_case(1, 100, 1000, 6, 2, 64, 1, 4.0f);
  }
  if (hmx_fast_op_kernel(be, "swiglu", NULL)) {
    swiglu_case(1, 96, 300, 40); /* T = 1: the exact kernel (cpu, exact_rows) */
    swiglu_case(5, 64, 200, 48);
    swiglu_case(129, 32, 64, 16); /* chunks of 128 + 1: the last one M = 1, dnnl_sgemm (cpu) */
  }
  if (!tensor_cores) {
    /* bf16 weights (the CPU fast tier): which paths run here */
    const unsigned w = fast_w16();
    printf("fast tier on %s: bf16 weights: rows %s, G16 %s\n",
           be ? hmx_backend_name(be) : "?", w & HMX_FAST_W_BF16_ROWS ? "bf16 matmul" : "staged",
           w & HMX_FAST_W_BF16_G16 ? "AVX512_BF16 kernel" : "exact kernel");
    if (hmx_fast_op_kernel(be, "gemm", NULL)) {
      gemm_bf16_case(64, 256, 300, 1);
      gemm_bf16_case(37, 301, 19, 0);
      gemm_bf16_case(1, 128, 64, 1); /* one row: the exact kernel */
    }
    gemm_g16_case(64, 576, 96);
    gemm_g16_case(13, 577, 50); /* odd K; a 32-column tile and an 18-column one; 12 + 1 rows */
    gemm_g16_case(5, 64, 16);   /* one group: its tile reads it twice */
    gemm_g16_case(2, 1000, 7);
    gemm_g16_case(1, 100, 40);  /* one row: the exact kernel */
    if (hmx_fast_op_kernel(be, "swiglu", NULL)) swiglu_bf16_case(20, 64, 48, 32, 0);
    swiglu_bf16_case(20, 64, 48, 32, 1);
    swiglu_bf16_case(130, 33, 64, 16, 1); /* two chunks of tokens (128 + 2), odd d */
    swiglu_bf16_case(1, 64, 32, 16, 1);   /* one token: the exact kernel */
  }
  if (argc > 1) vectors(argv[1]);
  if (hmx_fast_op_kernel(be, "gemm", NULL)) planted();
#if defined(HMX_HAVE_DNNL)
  if (!tensor_cores) cache(); /* the CPU table's oneDNN primitives */
#endif
#if defined(HMX_HAVE_DNNL) && defined(_OPENMP)
  if (!tensor_cores) concurrent();
#endif
  return check_finish("test_fast_tier");
}
