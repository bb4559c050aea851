/* hmx-cuda-fast-bench: the cuda fast tier's gemm (cuBLASLt, cuda/fast_gemm.cu)
 * on DEVICE memory, timed with CUDA events; the PyTorch side is
 * tools/cuda/bench_fast_gemm_torch.py with the same shapes and timing rule,
 * joined by tools/cuda/fast_gemm_h100.sh. Before timing, every shape's
 * result is checked on its first rows against the float64 oracle with the
 * documented tensor-core bound (tests/fast_oracle.h, fo_gemm_tc), so a wrong
 * kernel is never timed.
 *
 *   hmx-cuda-fast-bench [--reps R] [--calls C]
 *
 * Shapes: M = 4096, (K, N) in 768x768, 768x2048, 2048x768, 1536x1536;
 * C = A[M][K] B[K][N] (trans_b = 0, torch.matmul's layout); dtypes f32 (TF32)
 * and bf16 (A, B, C bf16, f32 accumulate). Timing: R batches (default 9) of
 * C back-to-back calls (default 20) after 3 warm-up calls; the median batch
 * divided by C. One JSON object per line on stdout. */
#define _POSIX_C_SOURCE 200809L
#include "fast_oracle.h"
#include "hadamix.h"

#include "cuda_check.h"
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x243F6A8885A308D3ull;
static float rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static hmx_tensor dev2d(void *p, hmx_dtype t, int64_t r, int64_t c) {
  hmx_tensor x = hmx_tensor_2d(p, t, r, c);
  x.memory = HMX_MEMORY_CUDA;
  return x;
}

/* Host values of n elements as dtype t (bf16: rounded), and as doubles. */
static void *host_vals(hmx_dtype t, int64_t n, double *d) {
  size_t es = t == HMX_BF16 ? 2 : 4;
  unsigned char *h = malloc((size_t)n * es);
  for (int64_t i = 0; i < n; i++) {
    float f = rnd();
    if (t == HMX_BF16) {
      uint16_t b = hmx_f32_to_bf16(f);
      memcpy(h + i * 2, &b, 2);
      d[i] = hmx_bf16_to_f32(b);
    } else {
      memcpy(h + i * 4, &f, 4);
      d[i] = f;
    }
  }
  return h;
}

static int run_shape(int64_t m, int64_t k, int64_t n, hmx_dtype t, int reps, int calls) {
  const size_t es = t == HMX_BF16 ? 2 : 4;
  double *da = malloc((size_t)(m * k) * sizeof(double)), *db = malloc((size_t)(k * n) * sizeof(double));
  void *ha = host_vals(t, m * k, da), *hb = host_vals(t, k * n, db);
  void *a, *b, *c;
  CK(cudaMalloc(&a, (size_t)(m * k) * es));
  CK(cudaMalloc(&b, (size_t)(k * n) * es));
  CK(cudaMalloc(&c, (size_t)(m * n) * es));
  CK(cudaMemcpy(a, ha, (size_t)(m * k) * es, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb, (size_t)(k * n) * es, cudaMemcpyHostToDevice));
  hmx_tensor ta = dev2d(a, t, m, k), tb = dev2d(b, t, k, n), tc = dev2d(c, t, m, n);
  hmx_context ctx = {hmx_backend_find("cuda"), 0, 0, HMX_TIER_FAST};
  if (hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc) != HMX_OK) {
    fprintf(stderr, "gemm %s: %s\n", hmx_dtype_name(t), hmx_last_error());
    return 1;
  }
  CK(cudaDeviceSynchronize());
  /* check the first rows against the oracle with the documented bound */
  const int64_t rows = 8;
  unsigned char *hc = malloc((size_t)(rows * n) * es);
  CK(cudaMemcpy(hc, c, (size_t)(rows * n) * es, cudaMemcpyDeviceToHost));
  double *want = malloc((size_t)(rows * n) * sizeof(double)), *bound = malloc((size_t)(rows * n) * sizeof(double));
  fo_gemm_tc(da, db, NULL, rows, n, k, 0, t == HMX_F32, want, bound);
  long over = 0;
  double worst = 0;
  for (int64_t i = 0; i < rows * n; i++) {
    double got;
    if (t == HMX_BF16) {
      uint16_t v;
      memcpy(&v, hc + i * 2, 2);
      got = hmx_bf16_to_f32(v);
      bound[i] = bound[i] * (1 + 0x1p-8) + 0x1p-8 * fabs(want[i]); /* c rounded to bf16 */
    } else {
      float v;
      memcpy(&v, hc + i * 4, 4);
      got = v;
    }
    double r = fabs(got - want[i]) / bound[i];
    if (!(r <= 1)) over++;
    if (r > worst) worst = r;
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; i++) (void)hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc);
  float *ms = malloc((size_t)reps * sizeof(float));
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < calls; i++) (void)hmx_gemm(&ctx, &ta, &tb, 0, NULL, &tc);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms[r], e0, e1));
  }
  qsort(ms, (size_t)reps, sizeof(float), cmp_f);
  double us = 1000.0 * ms[reps / 2] / calls;
  printf("{\"impl\": \"hadamix-fast\", \"dtype\": \"%s\", \"m\": %lld, \"k\": %lld, \"n\": %lld, "
         "\"us\": %.3f, \"tflops\": %.1f, \"checked_rows\": %lld, \"over_bound\": %ld, "
         "\"max_err_over_bound\": %.3e}\n",
         t == HMX_F32 ? "tf32" : "bf16", (long long)m, (long long)k, (long long)n, us,
         2.0 * m * k * n / (us * 1e-6) / 1e12, (long long)rows, over, worst);
  fflush(stdout);
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(c));
  free(ha); free(hb); free(hc); free(da); free(db); free(want); free(bound); free(ms);
  return over != 0;
}

int main(int argc, char **argv) {
  int reps = 9, calls = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
  }
  if (reps < 1 || calls < 1) return 2;
  const hmx_backend *cu = hmx_backend_find("cuda");
  if (!cu || !hmx_backend_available(cu)) {
    fprintf(stderr, "hmx-cuda-fast-bench: no usable cuda backend\n");
    return 77;
  }
  static const int64_t kn[][2] = {{768, 768}, {768, 2048}, {2048, 768}, {1536, 1536}};
  int bad = 0;
  for (int d = 0; d < 2; d++)
    for (int s = 0; s < 4; s++)
      bad |= run_shape(4096, kn[s][0], kn[s][1], d ? HMX_BF16 : HMX_F32, reps, calls);
  if (bad) fprintf(stderr, "hmx-cuda-fast-bench: results over the bound\n");
  return bad;
}
