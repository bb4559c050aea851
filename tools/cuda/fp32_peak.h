/* The GPU's measured FP32 add rate (tools/cuda/fp32_peak.cu), for hmx-cuda-bench. */
#ifndef HMX_TOOLS_FP32_PEAK_H
#define HMX_TOOLS_FP32_PEAK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Billions of FP32 adds a second on the current device: the median of reps
 * launches of independent FADD chains over a full grid. Exits on a CUDA error. */
double hmx_bench_fp32_add_gops(int reps);

#ifdef __cplusplus
}
#endif

#endif
