/* The cuda backend table (issue 5). Kernels take host buffers and pay the
 * PCIe copies, so the priority stays below the CPU SIMD backends for now. */
#include "backend.h"
#include "cuda_kernels.h"

const hmx_backend hmx_backend_cuda = {
    .name = "cuda",
    .description = "CUDA SIMT kernels for sm_90 (H100), host buffers copied per call",
    .probe = hmx_cuda_probe,
    .priority = 5,
    .fwht = hmx_cuda_fwht,
    .hadamard_mix = hmx_cuda_hadamard_mix,
    .gemm = hmx_cuda_gemm,
    .rmsnorm = hmx_cuda_rmsnorm,
    .layernorm = hmx_cuda_layernorm,
    .rope = hmx_cuda_rope,
    .attention = hmx_cuda_attention,
    .swiglu = hmx_cuda_swiglu,
};
