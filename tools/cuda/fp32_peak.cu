/* The GPU's measured FP32 add rate, for hmx-cuda-bench (tools/cuda/bench_cuda.c):
 * the ceiling that the fwht rows' additions meet (docs/CUDA.md "Speed").
 *
 * Every fwht output is a fixed tree of FP32 additions (NUMERICS §fwht: log2 p
 * butterfly stages, then m - 1 additions of the m-point sum, then one
 * multiply by the scale), so an n = m * p row costs at least log2 p + m
 * FP32 instructions an element whatever the kernel. Over the rate measured
 * here that bounds the elements a second, and so the % of the copy, that any
 * bit-exact kernel can reach (tools/cuda/bench_table.py, column "FP32 cap").
 *
 * The probe: every thread of a full grid runs kChains independent chains
 * of FADDs (acc = acc + step, so no chain can be folded: float addition is
 * not reassociated under the exact-tier flags), enough warps and chains to
 * cover the add latency; the median of `reps` event-timed launches. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "fp32_peak.h"

namespace {

constexpr int kChains = 8, kIters = 4096, kThreads = 256;

__global__ void __launch_bounds__(kThreads) fadd_chains(const float *seed, float step, float *sink) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; c++) acc[c] = seed[c] + (float)threadIdx.x;
#pragma unroll 16
  for (int i = 0; i < kIters; i++) {
#pragma unroll
    for (int c = 0; c < kChains; c++) acc[c] = __fadd_rn(acc[c], step);
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; c++) s = __fadd_rn(s, acc[c]);
  if (s == 1234.5f) sink[0] = s; /* never true for these inputs; keeps the chains live */
}

int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

} // namespace

extern "C" double hmx_bench_fp32_add_gops(int reps) {
  if (reps < 1) return 0.0;
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const float h_seed[kChains] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
  float *seed = nullptr, *sink = nullptr;
  CK(cudaMalloc(&seed, sizeof h_seed));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMemcpy(seed, h_seed, sizeof h_seed, cudaMemcpyHostToDevice));
  const int blocks = sms * (2048 / kThreads); /* every SM full */
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float *t = (float *)malloc((size_t)reps * sizeof *t);
  if (!t) { fprintf(stderr, "hmx-cuda-bench: out of memory\n"); exit(1); }
  for (int i = -2; i < reps; i++) { /* two warm-ups */
    CK(cudaEventRecord(a, 0));
    fadd_chains<<<blocks, kThreads>>>(seed, 0.25f, sink);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    if (i >= 0) CK(cudaEventElapsedTime(&t[i], a, b));
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_f);
  const double ms = t[reps / 2];
  free(t);
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  CK(cudaFree(seed));
  CK(cudaFree(sink));
  const double adds = (double)blocks * kThreads * (double)kIters * kChains;
  return adds / ms * 1e-6; /* G adds a second */
}
