/* The GPU's measured FP32 add rate, for hmx-cuda-bench (tools/cuda/bench_cuda.c,
 * which times the launches): the ceiling that the fwht rows' additions meet
 * (docs/CUDA.md "On the H200").
 *
 * Every fwht output is a fixed tree of FP32 additions (NUMERICS §fwht: log2 p
 * butterfly stages, the m-point sum, one multiply by the scale), so a row
 * costs a number of FP32 instructions an element that no bit-exact kernel
 * can lower (tools/cuda/bench_table.py, issue_per_element). On Hopper this
 * add rate is also the issue rate, so over it that count bounds the elements
 * a second, and so the % of the copy, that any such kernel can reach (the
 * table's "issue cap").
 *
 * The probe: every thread of a full grid runs kChains independent chains
 * of FADDs (acc = acc + step, so no chain can be folded: float addition is
 * not reassociated under the exact-tier flags), enough warps and chains to
 * cover the add latency. */
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "fp32_peak.h"

namespace {

constexpr int kChains = 8, kIters = 4096, kThreads = 256;

__device__ float g_sink; /* written only if the chains' sum is 1234.5: never */

__global__ void __launch_bounds__(kThreads) fadd_chains(float seed, float step) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; c++) acc[c] = seed + (float)(c * 1024 + (int)threadIdx.x);
#pragma unroll 16
  for (int i = 0; i < kIters; i++) {
#pragma unroll
    for (int c = 0; c < kChains; c++) acc[c] = __fadd_rn(acc[c], step);
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; c++) s = __fadd_rn(s, acc[c]);
  if (s == 1234.5f) g_sink = s; /* keeps the chains live */
}

} // namespace

extern "C" double hmx_bench_fp32_add_launch(void) {
  /* the grid once, not inside every timed launch (hmx-cuda-bench uses one
   * device) */
  static int blocks = 0;
  if (!blocks) {
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    blocks = sms * (2048 / kThreads); /* every SM full */
  }
  fadd_chains<<<blocks, kThreads>>>(0.5f, 0.25f);
  CK(cudaGetLastError());
  return (double)blocks * kThreads * (double)kIters * kChains;
}
