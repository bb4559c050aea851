/* The cuda kernels' host entry points (cuda/kernels.cu). Each one takes the
 * validated, contiguous f32 HOST buffers of its src/backend.h argument
 * struct, copies the inputs to the GPU, runs, and copies the output back. */
#ifndef HMX_CUDA_KERNELS_H
#define HMX_CUDA_KERNELS_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

int hmx_cuda_probe(void);
hmx_status hmx_cuda_fwht(const hmx_fwht_args *a);
hmx_status hmx_cuda_hadamard_mix(const hmx_hadamard_mix_args *a);
hmx_status hmx_cuda_gemm(const hmx_gemm_args *a);
hmx_status hmx_cuda_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_cuda_layernorm(const hmx_norm_args *a);
hmx_status hmx_cuda_rope(const hmx_rope_args *a);
hmx_status hmx_cuda_attention(const hmx_attention_args *a);
hmx_status hmx_cuda_swiglu(const hmx_swiglu_args *a);

#ifdef __cplusplus
}
#endif

#endif
