/* The cuda fast tier on DEVICE memory (HMX_MEMORY_CUDA tensors and
 * HMX_TIER_FAST). gemm (cuda/fast_gemm.cu): f32 (TF32) and bf16 / f16
 * operands, trans_b, bias, an operand 4 bytes off 16-byte alignment, a
 * caller stream; every element within the tensor-core bound of the float64
 * oracle (tests/fast_oracle.h, fo_gemm_tc). The exact tier must refuse
 * 16-bit device operands, and the fast tier a bias with them. attention
 * (cuda/fast_attention.cu): within its tensor-core bound, and the same bits
 * as the host-memory call of the same tier (one kernel; a misaligned q takes
 * the exact kernel on both paths). Exit 77 (skipped) without a GPU. */
#include "check.h"
#include "fast_oracle.h"
#include "hadamix.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

static size_t esize(hmx_dtype t) { return t == HMX_F32 ? 4 : 2; }

/* n random values as dtype t into host bytes h, and their exact values. */
static void fill(hmx_dtype t, int64_t n, unsigned char *h, double *d) {
  for (int64_t i = 0; i < n; i++) {
    float f = rnd();
    if (t == HMX_F32) {
      memcpy(h + i * 4, &f, 4);
      d[i] = f;
    } else {
      uint16_t v = t == HMX_BF16 ? hmx_f32_to_bf16(f) : hmx_f32_to_f16(f);
      memcpy(h + i * 2, &v, 2);
      d[i] = t == HMX_BF16 ? hmx_bf16_to_f32(v) : hmx_f16_to_f32(v);
    }
  }
}

static double value(hmx_dtype t, const unsigned char *h, int64_t i) {
  if (t == HMX_F32) {
    float f;
    memcpy(&f, h + i * 4, 4);
    return f;
  }
  uint16_t v;
  memcpy(&v, h + i * 2, 2);
  return t == HMX_BF16 ? hmx_bf16_to_f32(v) : hmx_f16_to_f32(v);
}

static hmx_tensor dev2d(void *p, hmx_dtype t, int64_t r, int64_t c) {
  hmx_tensor x = hmx_tensor_2d(p, t, r, c);
  x.memory = HMX_MEMORY_CUDA;
  return x;
}

/* One case; misalign: a starts 4 bytes past a 16-byte boundary. */
static void gemm_case(hmx_dtype t, int64_t m, int64_t k, int64_t n, int tb, int bias, int misalign,
                      cudaStream_t stream) {
  const size_t es = esize(t);
  unsigned char *ha = malloc((size_t)(m * k) * es), *hb = malloc((size_t)(k * n) * es);
  unsigned char *hc = malloc((size_t)(m * n) * es);
  float *hbias = malloc((size_t)n * sizeof(float));
  double *da = malloc((size_t)(m * k) * sizeof(double)), *db = malloc((size_t)(k * n) * sizeof(double));
  double *dbias = malloc((size_t)n * sizeof(double));
  double *want = malloc((size_t)(m * n) * sizeof(double)), *bound = malloc((size_t)(m * n) * sizeof(double));
  fill(t, m * k, ha, da);
  fill(t, k * n, hb, db);
  for (int64_t j = 0; j < n; j++) dbias[j] = hbias[j] = rnd();
  unsigned char *ga, *gb, *gc;
  float *gbias;
  CHECK(cudaMalloc((void **)&ga, (size_t)(m * k) * es + 16) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc((void **)&gb, (size_t)(k * n) * es) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc((void **)&gc, (size_t)(m * n) * es) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc((void **)&gbias, (size_t)n * sizeof(float)) == cudaSuccess, "cudaMalloc");
  unsigned char *pa = ga + (misalign ? 4 : 0);
  cudaMemcpy(pa, ha, (size_t)(m * k) * es, cudaMemcpyHostToDevice);
  cudaMemcpy(gb, hb, (size_t)(k * n) * es, cudaMemcpyHostToDevice);
  cudaMemcpy(gbias, hbias, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
  hmx_tensor ta = dev2d(pa, t, m, k), tbb = tb ? dev2d(gb, t, n, k) : dev2d(gb, t, k, n);
  hmx_tensor tbias = hmx_tensor_1d(gbias, HMX_F32, n), tc = dev2d(gc, t, m, n);
  tbias.memory = HMX_MEMORY_CUDA;
  hmx_context ctx = {hmx_backend_find("cuda"), 0, 0, HMX_TIER_FAST};
  hmx_set_cuda_stream(stream);
  hmx_status s = hmx_gemm(&ctx, &ta, &tbb, tb, bias ? &tbias : NULL, &tc);
  hmx_set_cuda_stream(NULL);
  if (t != HMX_F32 && bias) { /* 16-bit operands take no bias (cuda/fast_gemm.cu) */
    CHECK(s == HMX_ERR_UNSUPPORTED, "%s device gemm with a bias: %s", hmx_dtype_name(t),
          s == HMX_OK ? "accepted" : hmx_last_error());
    printf("  device gemm %-4s with a bias: refused (%s)\n", hmx_dtype_name(t), hmx_last_error());
    bias = 0;
    hmx_set_cuda_stream(stream);
    s = hmx_gemm(&ctx, &ta, &tbb, tb, NULL, &tc);
    hmx_set_cuda_stream(NULL);
  }
  CHECK(s == HMX_OK, "fast device gemm %s: %s", hmx_dtype_name(t), hmx_last_error());
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  cudaMemcpy(hc, gc, (size_t)(m * n) * es, cudaMemcpyDeviceToHost);
  fo_gemm_tc(da, db, bias ? dbias : NULL, m, n, k, tb, t == HMX_F32, want, bound);
  const double v = t == HMX_BF16 ? 0x1p-8 : t == HMX_F16 ? 0x1p-11 : 0; /* c's rounding */
  long over = 0;
  double worst = 0;
  for (int64_t i = 0; i < m * n; i++) {
    double b = bound[i] * (1 + v) + v * fabs(want[i]), err = fabs(value(t, hc, i) - want[i]);
    if (!(err <= b) && over++ < 3)
      fprintf(stderr, "  c[%lld]: got %.9g want %.12g err %.3g > bound %.3g\n", (long long)i,
              value(t, hc, i), want[i], err, b);
    if (err / b > worst) worst = err / b;
  }
  printf("  device gemm %-4s %lldx%lldx%lld%s%s%s: %lld values, max err/bound %.3e\n",
         hmx_dtype_name(t), (long long)m, (long long)k, (long long)n, tb ? " trans_b" : "",
         bias ? " bias" : "", misalign ? " a misaligned" : "", (long long)(m * n), worst);
  CHECK(over == 0, "device gemm %s: %ld values over the bound", hmx_dtype_name(t), over);
  if (t != HMX_F32) {
    /* the exact tier stages 16-bit device operands through f32 scratch
     * (src/dev_stage.h): the bits of ref on the same host operands */
    hmx_context ex = {hmx_backend_find("cuda"), 0, 0, HMX_TIER_EXACT};
    hmx_context rc = {hmx_backend_find("ref"), 0, 0, HMX_TIER_EXACT};
    unsigned char *hr = malloc((size_t)(m * n) * es);
    hmx_tensor ra = hmx_tensor_2d(ha, t, m, k), rb = tb ? hmx_tensor_2d(hb, t, n, k) : hmx_tensor_2d(hb, t, k, n);
    hmx_tensor rcc = hmx_tensor_2d(hr, t, m, n);
    CHECK(hmx_gemm(&rc, &ra, &rb, tb, NULL, &rcc) == HMX_OK, "ref gemm %s: %s", hmx_dtype_name(t),
          hmx_last_error());
    CHECK(hmx_gemm(&ex, &ta, &tbb, tb, NULL, &tc) == HMX_OK, "exact device gemm %s: %s",
          hmx_dtype_name(t), hmx_last_error());
    cudaMemcpy(hc, gc, (size_t)(m * n) * es, cudaMemcpyDeviceToHost);
    CHECK(memcmp(hc, hr, (size_t)(m * n) * es) == 0, "exact device gemm %s: not ref's bits",
          hmx_dtype_name(t));
    free(hr);
  }
  cudaFree(ga); cudaFree(gb); cudaFree(gc); cudaFree(gbias);
  free(ha); free(hb); free(hc); free(hbias); free(da); free(db); free(dbias); free(want); free(bound);
}

static void attention_case(int64_t sq, int64_t skv, int64_t hq, int64_t hkv, int64_t d, int causal,
                           int misalign, cudaStream_t stream) {
  const int64_t nq = sq * hq * d, nk = skv * hkv * d;
  float *h = malloc((size_t)(nq + 2 * nk) * sizeof(float)), *o = malloc((size_t)nq * sizeof(float));
  float *oh = malloc((size_t)nq * sizeof(float));
  double *dh = malloc((size_t)(nq + 2 * nk) * sizeof(double));
  double *want = malloc((size_t)nq * sizeof(double)), *bound = malloc((size_t)nq * sizeof(double));
  fill(HMX_F32, nq + 2 * nk, (unsigned char *)h, dh);
  float *g;
  CHECK(cudaMalloc((void **)&g, (size_t)(2 * nq + 2 * nk + 4) * sizeof(float)) == cudaSuccess, "cudaMalloc");
  float *gq = g + (misalign ? 1 : 0), *gk = g + nq + 4, *gv = gk + nk, *go = gv + nk;
  cudaMemcpy(gq, h, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(gk, h + nq, (size_t)(2 * nk) * sizeof(float), cudaMemcpyHostToDevice);
  hmx_tensor tq = hmx_tensor_4d(gq, HMX_F32, 1, sq, hq, d), tk = hmx_tensor_4d(gk, HMX_F32, 1, skv, hkv, d);
  hmx_tensor tv = hmx_tensor_4d(gv, HMX_F32, 1, skv, hkv, d), to = hmx_tensor_4d(go, HMX_F32, 1, sq, hq, d);
  tq.memory = tk.memory = tv.memory = to.memory = HMX_MEMORY_CUDA;
  hmx_attention_params p = {causal, -1, 0.0f};
  hmx_context ctx = {hmx_backend_find("cuda"), 0, 0, HMX_TIER_FAST};
  hmx_set_cuda_stream(stream);
  hmx_status s = hmx_attention(&ctx, &tq, &tk, &tv, &p, &to);
  hmx_set_cuda_stream(NULL);
  CHECK(s == HMX_OK, "fast device attention: %s", hmx_last_error());
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  cudaMemcpy(o, go, (size_t)nq * sizeof(float), cudaMemcpyDeviceToHost);
  /* the same call on host memory; a misaligned q makes the device call run
   * the exact kernel, whose bits are the exact tier's */
  hmx_context hctx = {hmx_backend_find("cuda"), 0, 0, misalign ? HMX_TIER_EXACT : HMX_TIER_FAST};
  hmx_tensor hq_ = hmx_tensor_4d(h, HMX_F32, 1, sq, hq, d), hk = hmx_tensor_4d(h + nq, HMX_F32, 1, skv, hkv, d);
  hmx_tensor hv = hmx_tensor_4d(h + nq + nk, HMX_F32, 1, skv, hkv, d), ho = hmx_tensor_4d(oh, HMX_F32, 1, sq, hq, d);
  CHECK(hmx_attention(&hctx, &hq_, &hk, &hv, &p, &ho) == HMX_OK, "host attention: %s", hmx_last_error());
  CHECK(memcmp(o, oh, (size_t)nq * sizeof(float)) == 0,
        "fast attention: the device call differs from the host call of the %s tier",
        misalign ? "exact" : "fast");
  fo_attention_arith(dh, dh + nq, dh + nq + nk, 1, sq, skv, hq, hkv, d, causal, skv - sq,
                     (float)(1.0 / sqrt((double)d)), 1, want, bound);
  long over = 0;
  double worst = 0;
  for (int64_t i = 0; i < nq; i++) {
    double err = fabs(o[i] - want[i]);
    if (!(err <= bound[i]) && over++ < 3)
      fprintf(stderr, "  o[%lld]: got %.9g want %.12g err %.3g > bound %.3g\n", (long long)i,
              o[i], want[i], err, bound[i]);
    if (err / bound[i] > worst) worst = err / bound[i];
  }
  printf("  device attention sq%lld skv%lld hq%lld hkv%lld d%lld%s%s: %lld values, max err/bound %.3e\n",
         (long long)sq, (long long)skv, (long long)hq, (long long)hkv, (long long)d,
         causal ? " causal" : "", misalign ? " q misaligned" : "", (long long)nq, worst);
  CHECK(over == 0, "device attention: %ld values over the bound", over);
  cudaFree(g);
  free(h); free(o); free(oh); free(dh); free(want); free(bound);
}

int main(void) {
  const hmx_backend *cu = hmx_backend_find("cuda");
  if (!cu || !hmx_backend_available(cu)) {
    printf("test_fast_cuda_device: SKIPPED: no usable CUDA device\n");
    return 77;
  }
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess, "stream");
  static const hmx_dtype types[] = {HMX_F32, HMX_BF16, HMX_F16};
  for (int i = 0; i < 3; i++) {
    gemm_case(types[i], 64, 256, 96, 0, 1, 0, NULL);
    gemm_case(types[i], 33, 1000, 17, 1, 0, 1, st);
    gemm_case(types[i], 256, 768, 512, 1, 1, 0, st);
    gemm_case(types[i], 1, 3, 5, 0, 1, 0, NULL);
  }
  attention_case(200, 200, 4, 2, 64, 1, 0, st);
  attention_case(70, 300, 2, 2, 128, 0, 0, NULL);
  attention_case(64, 64, 2, 1, 64, 1, 1, st);
  cudaStreamDestroy(st);
  return check_finish("test_fast_cuda_device");
}
