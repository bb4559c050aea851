/* hmx-bench-fast-gemm: the fast tier's gemm (oneDNN matmul through hadamix's
 * dispatch: argument checks, staging, the primitive cache) against oneDNN's
 * standalone dnnl_sgemm on the same shapes, calls interleaved one by one
 * (fast, sgemm, fast, sgemm, ...) so a shared, noisy machine slows both
 * alike; min and median per shape, and their ratio (issue 8: >= 95%).
 *
 *   hmx-bench-fast-gemm [THREADS] [SECONDS_PER_SHAPE]
 */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"

#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double budget = argc > 2 ? atof(argv[2]) : 2.0;
#if defined(_OPENMP)
  omp_set_num_threads(threads); /* dnnl_sgemm uses the OpenMP default */
#endif
  /* (M, K, N): decode and prefill GEMMs of the tiny/small models (trans_b,
   * weights [N, K] as in a Linear layer) */
  static const long shapes[][3] = {{1, 768, 768},   {1, 768, 2048},   {1, 2048, 768},
                                   {16, 768, 768},  {64, 768, 768},   {64, 768, 2048},
                                   {256, 768, 768}, {512, 768, 2048}, {512, 2048, 768}};
  printf("fast-tier gemm (hmx_gemm, HMX_TIER_FAST) vs dnnl_sgemm, %d threads, interleaved, "
         "~%.1f s per shape\n", threads, budget);
  printf("%-18s %8s %12s %12s %12s %12s %10s %10s\n", "M x K x N", "pairs", "fast min us",
         "sgemm min us", "fast med us", "sgemm med us", "min ratio", "med ratio");
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    long m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(n * k));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    for (long i = 0; i < m * k; i++) a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
    for (long i = 0; i < n * k; i++) b[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
    hmx_context ctx = {hmx_backend_best(), threads, 0, HMX_TIER_FAST};
    hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k), tb = hmx_tensor_2d(b, HMX_F32, n, k);
    hmx_tensor tc = hmx_tensor_2d(c, HMX_F32, m, n);
    /* warm-up: creates the primitive (cached) and oneDNN's sgemm kernels */
    if (hmx_gemm(&ctx, &ta, &tb, 1, NULL, &tc) != HMX_OK) {
      fprintf(stderr, "hmx_gemm: %s\n", hmx_last_error());
      return 1;
    }
    dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
    enum { MAXP = 20000 };
    static double tf[MAXP], ts[MAXP];
    int p = 0;
    double t_end = now() + budget;
    while (p < MAXP && (p < 5 || now() < t_end)) {
      double t0 = now();
      hmx_gemm(&ctx, &ta, &tb, 1, NULL, &tc);
      double t1 = now();
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
      double t2 = now();
      tf[p] = t1 - t0;
      ts[p] = t2 - t1;
      p++;
    }
    qsort(tf, (size_t)p, sizeof tf[0], cmp);
    qsort(ts, (size_t)p, sizeof ts[0], cmp);
    double fmin = tf[0] * 1e6, smin = ts[0] * 1e6, fmed = tf[p / 2] * 1e6, smed = ts[p / 2] * 1e6;
    char shape[32];
    snprintf(shape, sizeof shape, "%ldx%ldx%ld", m, k, n);
    printf("%-18s %8d %12.1f %12.1f %12.1f %12.1f %9.1f%% %9.1f%%\n", shape, p, fmin, smin, fmed,
           smed, 100.0 * smin / fmin, 100.0 * smed / fmed);
    free(a);
    free(b);
    free(c);
  }
  printf("ratio = sgemm time / fast time (100%% = as fast as standalone oneDNN)\n");
  return 0;
}
