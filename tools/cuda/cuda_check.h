/* CK(call): a CUDA runtime call in the host-side benchmark tools
 * (bench_cuda.c, bench_fast_gemm_cuda.c); on an error, print where and what,
 * and exit 1 (a benchmark never runs on after a failed CUDA call). */
#ifndef HMX_TOOLS_CUDA_CHECK_H
#define HMX_TOOLS_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

#endif
