/* hmx_swiglu_quant (src/swiglu_quant.h): SwiGLU with its matrices as
 * [out, in] hmx_qmatrix, in GGUF's row layout or in G16, against hmx_swiglu
 * on ref with the same weights in its own [in, out] layout, bit for bit
 * (memcmp), on every backend this machine runs, with 1 and 2 threads, for
 * f32, bf16 and f16 weights. The shapes cover one token (the G16 decode: unit
 * and output groups split over two threads, a tail of groups) and several
 * (more than one 64-token super-tile, partial tiles; rows: packed, more than
 * one 512-unit super-tile; G16: read in place), and h not a multiple of 16
 * (G16 with padding rows: the backends then take the gemm composition).
 * Also: hmx_qlayout_cols_to_g16 equals transposing, then hmx_qlayout_to_g16;
 * bad arguments are refused. */
#include "check.h"
#include "threads.h"
#include "backend.h"
#include "dispatch.h"
#include "gemm_quant.h"
#include "gguf.h"
#include "swiglu_quant.h"
#include "tuning.h" /* src/: the x86 tuning profiles */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)(rng >> 40) / (float)(1 << 24) * 2.0f - 1.0f;
}

/* A random [rows, cols] matrix of dtype dt (raw storage). */
static void *random_matrix(hmx_dtype dt, int64_t rows, int64_t cols) {
  const size_t es = hmx_dtype_size(dt);
  unsigned char *w = malloc((size_t)(rows * cols) * es);
  for (int64_t i = 0; w && i < rows * cols; i++) {
    const float v = uniform() * 0.25f;
    uint16_t h = dt == HMX_F16 ? hmx_f32_to_f16(v) : hmx_f32_to_bf16(v);
    if (dt == HMX_F32) memcpy(w + i * es, &v, es);
    else memcpy(w + i * es, &h, es);
  }
  return w;
}

/* The transpose of a [rows, cols] matrix of element size es. */
static void *transpose(const void *src, int64_t rows, int64_t cols, size_t es) {
  unsigned char *t = malloc((size_t)(rows * cols) * es);
  const unsigned char *s = src;
  for (int64_t r = 0; t && r < rows; r++)
    for (int64_t c = 0; c < cols; c++) memcpy(t + (c * rows + r) * es, s + (r * cols + c) * es, es);
  return t;
}

/* W ([in, out] = [k, n], row-major) as an [out, in] qmatrix in `layout`, in
 * *store (caller frees). G16 comes from transposing, then
 * hmx_qlayout_to_g16; when n is a multiple of 16 it is also checked against
 * hmx_qlayout_cols_to_g16, which converts without the transpose. */
static hmx_qmatrix as_qmatrix(const void *w, hmx_dtype dt, int64_t k, int64_t n, int layout,
                              void **store) {
  const uint32_t type = hmx_dtype_qtype(dt);
  void *t = transpose(w, k, n, hmx_dtype_size(dt));
  if (layout == HMX_QLAYOUT_ROWS) {
    *store = t;
    return (hmx_qmatrix){type, t, n, k, layout, NULL};
  }
  const size_t bytes = hmx_qlayout_g16_bytes(type, n, k);
  void *g = malloc(bytes);
  hmx_qlayout_to_g16(type, t, n, k, g);
  if (n % HMX_QG == 0) {
    void *g2 = malloc(bytes);
    hmx_qlayout_cols_to_g16(type, w, k, n, g2);
    CHECK(memcmp(g, g2, bytes) == 0, "cols_to_g16 [%lld, %lld] %s differs from transpose + "
          "to_g16", (long long)k, (long long)n, hmx_dtype_name(dt));
    free(g2);
  }
  free(t);
  *store = g;
  return (hmx_qmatrix){type, g, n, k, layout, NULL};
}

typedef struct shape {
  int64_t t, d, h, dout;
} shape;

/* A backend with device kernels (cuda): the three matrices' GPU copies
 * (hmx_qmatrix.dev, as hmx_model_prepare makes them) with the host bytes
 * zeroed give ref's bits: the copies are what its swiglu reads (one call:
 * src/swiglu_quant.c, resident_ok). */
static void check_gpu_copies(const hmx_backend *be, shape s, const hmx_tensor *X, hmx_tensor *Y,
                             const hmx_qmatrix *const q[3], const float *want, float *ga,
                             float *gb) {
  const hmx_device_ops *d = hmx_device_ops_of(be);
  hmx_qmatrix c[3];
  void *dev[3] = {NULL, NULL, NULL}, *zero[3] = {NULL, NULL, NULL};
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    const size_t nb = hmx_qlayout_g16_bytes(q[i]->type, q[i]->n, q[i]->k);
    zero[i] = calloc(nb, 1);
    ok = ok && zero[i] && d->resident_alloc(&dev[i], nb) == HMX_OK &&
         d->upload(dev[i], q[i]->data, nb) == HMX_OK;
    c[i] = *q[i];
    c[i].data = zero[i];
    c[i].dev = dev[i];
  }
  CHECK(ok, "%s: GPU copies: %s", hmx_backend_name(be), hmx_last_error());
  if (ok) {
    hmx_context ctx = {be, 1, 0, HMX_TIER_EXACT};
    memset(Y->data, 0xFF, (size_t)(s.t * s.dout) * sizeof(float));
    const hmx_status st = hmx_swiglu_quant(&ctx, X, &c[0], &c[1], &c[2], Y, ga, gb);
    CHECK(st == HMX_OK, "%s (GPU copies): %s", hmx_backend_name(be), hmx_last_error());
    CHECK(st || memcmp(want, Y->data, (size_t)(s.t * s.dout) * sizeof(float)) == 0,
          "%s %s T %lld d %lld h %lld d_out %lld from the GPU copies: differs from ref",
          hmx_backend_name(be), hmx_gguf_type_name(q[0]->type), (long long)s.t,
          (long long)s.d, (long long)s.h, (long long)s.dout);
  }
  for (int i = 0; i < 3; i++) {
    if (dev[i]) d->resident_free(dev[i]);
    free(zero[i]);
  }
}

static void check_case(const hmx_backend *be, shape s, hmx_dtype dt) {
  const hmx_backend *ref = hmx_backend_find("ref");
  float *x = random_matrix(HMX_F32, s.t, s.d);
  void *w1 = random_matrix(dt, s.d, s.h), *w3 = random_matrix(dt, s.d, s.h);
  void *w2 = random_matrix(dt, s.h, s.dout);
  float *want = calloc((size_t)(s.t * s.dout), sizeof(float));
  float *got = calloc((size_t)(s.t * s.dout), sizeof(float));
  float *ga = malloc((size_t)(s.t * s.h) * sizeof(float)), *gb = malloc((size_t)(s.t * s.h) * sizeof(float));
  hmx_tensor X = hmx_tensor_2d(x, HMX_F32, s.t, s.d);
  hmx_tensor W1 = hmx_tensor_2d(w1, dt, s.d, s.h), W3 = hmx_tensor_2d(w3, dt, s.d, s.h);
  hmx_tensor W2 = hmx_tensor_2d(w2, dt, s.h, s.dout);
  hmx_tensor Yw = hmx_tensor_2d(want, HMX_F32, s.t, s.dout), Yg = hmx_tensor_2d(got, HMX_F32, s.t, s.dout);
  hmx_context rctx = {ref, 1, 0, HMX_TIER_EXACT};
  CHECK(hmx_swiglu(&rctx, &X, &W1, &W3, &W2, 0, &Yw) == HMX_OK, "ref swiglu: %s", hmx_last_error());
  for (int layout = HMX_QLAYOUT_ROWS; layout <= HMX_QLAYOUT_G16; layout++) {
    void *s1, *s3, *s2;
    const hmx_qmatrix q1 = as_qmatrix(w1, dt, s.d, s.h, layout, &s1);
    const hmx_qmatrix q3 = as_qmatrix(w3, dt, s.d, s.h, layout, &s3);
    const hmx_qmatrix q2 = as_qmatrix(w2, dt, s.h, s.dout, layout, &s2);
    for (int threads = 1; threads <= test_thread_max(2); threads++) {
      hmx_context ctx = {be, threads, 0, HMX_TIER_EXACT};
      memset(got, 0xFF, (size_t)(s.t * s.dout) * sizeof(float)); /* NaN: every output written */
      const hmx_status st = hmx_swiglu_quant(&ctx, &X, &q1, &q3, &q2, &Yg, ga, gb);
      CHECK(st == HMX_OK, "%s: %s", hmx_backend_name(be), hmx_last_error());
      CHECK(st || memcmp(want, got, (size_t)(s.t * s.dout) * sizeof(float)) == 0,
            "%s %s %s T %lld d %lld h %lld d_out %lld, %d threads: differs from ref",
            hmx_backend_name(be), hmx_dtype_name(dt), layout ? "G16" : "rows", (long long)s.t,
            (long long)s.d, (long long)s.h, (long long)s.dout, threads);
    }
    if (layout == HMX_QLAYOUT_G16 && hmx_device_ops_of(be))
      check_gpu_copies(be, s, &X, &Yg, (const hmx_qmatrix *[]){&q1, &q3, &q2}, want, ga, gb);
    free(s1);
    free(s3);
    free(s2);
  }
  free(x);
  free(w1);
  free(w3);
  free(w2);
  free(want);
  free(got);
  free(ga);
  free(gb);
}

/* Refusals: NULL arguments, shapes that do not fit. */
static void check_errors(void) {
  float x[4 * 32] = {0}, y[4 * 16] = {0}, ga[4 * 16], gb[4 * 16];
  float w[32 * 16] = {0};
  hmx_tensor X = hmx_tensor_2d(x, HMX_F32, 4, 32), Y = hmx_tensor_2d(y, HMX_F32, 4, 16);
  const hmx_qmatrix q1 = {HMX_GGML_F32, w, 16, 32, HMX_QLAYOUT_G16, NULL};
  const hmx_qmatrix q2 = {HMX_GGML_F32, w, 16, 16, HMX_QLAYOUT_G16, NULL};
  const hmx_qmatrix bad = {HMX_GGML_F32, w, 16, 24, HMX_QLAYOUT_G16, NULL}; /* in = 24, d is 32 */
  hmx_context ctx = {NULL, 1, 0, HMX_TIER_EXACT};
  CHECK(hmx_swiglu_quant(&ctx, &X, &q1, &q1, &q2, &Y, ga, gb) == HMX_OK, "valid call: %s",
        hmx_last_error());
  CHECK(hmx_swiglu_quant(&ctx, &X, NULL, &q1, &q2, &Y, ga, gb) == HMX_ERR_INVALID_ARGUMENT,
        "NULL w1 accepted");
  CHECK(hmx_swiglu_quant(&ctx, &X, &q1, &q1, &q2, &Y, NULL, gb) == HMX_ERR_INVALID_ARGUMENT,
        "NULL scratch accepted");
  CHECK(hmx_swiglu_quant(&ctx, &X, &bad, &q1, &q2, &Y, ga, gb) == HMX_ERR_SHAPE,
        "w1 of the wrong width accepted");
  CHECK(hmx_swiglu_quant(&ctx, &X, &q1, &q1, &q1, &Y, ga, gb) == HMX_ERR_SHAPE,
        "w2 of the wrong width accepted");
  CHECK(strstr(hmx_last_error(), "does not fit") != NULL, "error message: %s", hmx_last_error());
}

int main(void) {
  static const shape shapes[] = {
      {1, 64, 96, 64},     /* the model test config's FFN, one token */
      {1, 70, 528, 48},    /* 33 unit groups over two threads; a tail of one group */
      {1, 100, 256, 272},  /* 17 output groups over two threads */
      {3, 33, 16, 16},     /* one group each, odd d */
      {7, 64, 96, 80},     /* a partial unit tile, partial column panel */
      {70, 40, 1040, 32},  /* two token super-tiles; rows: three unit super-tiles,
                              G16: one, ending in a tile of 16 units (avx512) */
      {5, 48, 40, 24},     /* h, d_out not multiples of 16: G16 with padding rows */
  };
  static const hmx_dtype dts[] = {HMX_F32, HMX_BF16, HMX_F16};
  check_errors();
  for (int bi = 0; bi < hmx_backend_count(); bi++) {
    const hmx_backend *be = hmx_backend_at(bi);
    if (!hmx_backend_available(be)) continue;
    printf("%s: %s\n", hmx_backend_name(be),
           (be->weights16 & HMX_WG16_SWIGLU) ? "fused G16 swiglu" : "gemm composition");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
      for (int d = 0; d < 3; d++) check_case(be, shapes[i], dts[d]);
    /* One token with matrices of at least XW_PF_MIN_BYTES
     * (simd/x86/weights16_x86.h): the x86 decode's G16 streams prefetch
     * under the profiles whose gemv_pf_lines is set; every profile must
     * give ref's bits (odd d: the 16-bit streams end in half a line). */
    if (hmx_x86_tuning_read_by(hmx_backend_name(be))) {
      for (int k = 0; k < hmx_x86_tuning_count(); k++) {
        hmx_x86_tuning_force(hmx_x86_tuning_at(k));
        check_case(be, (shape){1, 1031, 1024, 1024}, HMX_F32);
        check_case(be, (shape){1, 2063, 1024, 2048}, HMX_BF16);
        check_case(be, (shape){1, 2063, 1024, 2048}, HMX_F16);
      }
      hmx_x86_tuning_force(NULL);
    }
  }
  return check_finish("test_swiglu_quant");
}
