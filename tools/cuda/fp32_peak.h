/* The GPU's FP32 add-rate probe (tools/cuda/fp32_peak.cu), for hmx-cuda-bench. */
#ifndef HMX_TOOLS_FP32_PEAK_H
#define HMX_TOOLS_FP32_PEAK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Queues one launch of independent FADD chains over a full grid of the
 * current device on the default stream and returns the number of adds it
 * does (the caller times it). Exits on a CUDA error. */
double hmx_bench_fp32_add_launch(void);

#ifdef __cplusplus
}
#endif

#endif
