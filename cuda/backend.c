/* The cuda backend tables (issue 5). hmx_backend_cuda takes host buffers
 * and pays the PCIe copies on every call, so its priority stays below the
 * CPU SIMD backends; hmx_cuda_device_ops runs the same kernels on device
 * buffers with no copy (tensors with memory = HMX_MEMORY_CUDA, src/dispatch.c). */
#include "backend.h"
#include "cuda_kernels.h"
#include "dispatch.h"

const hmx_backend hmx_backend_cuda = {
    .name = "cuda",
    .description = "CUDA SIMT kernels for sm_90 (H100, H200); host buffers copied per call, "
                   "device buffers (HMX_MEMORY_CUDA) used in place",
    .probe = hmx_cuda_probe,
    .unavailable_reason = hmx_cuda_unavailable_reason,
    .describe = hmx_cuda_describe,
    .priority = 5,
    /* host calls copy weights (and a 16-bit KV cache) as stored, in fewer
     * bytes than f32, and widen them on the device (cuda/weights_in.cuh) */
    .weights16 = HMX_W16_GEMM | HMX_W16_SWIGLU | HMX_W16_ATTENTION | HMX_WQ_GEMM | HMX_WG16_GEMM,
    .fwht = hmx_cuda_fwht,
    .hadamard_mix = hmx_cuda_hadamard_mix,
    .gemm = hmx_cuda_gemm,
    .rmsnorm = hmx_cuda_rmsnorm,
    .layernorm = hmx_cuda_layernorm,
    .rope = hmx_cuda_rope,
    .attention = hmx_cuda_attention,
    .swiglu = hmx_cuda_swiglu,
    /* host compositions of gemm, swiglu and attention (cuda/compose.c) */
    .strassen = hmx_cuda_strassen,
    .mhffn = hmx_cuda_mhffn,
    .flashmhf = hmx_cuda_flashmhf,
    .linformer = hmx_cuda_linformer,
    .levattention = hmx_cuda_levattention,
    .lewis = hmx_cuda_lewis,
    .priority_attn = hmx_cuda_priority,
};

const hmx_device_ops hmx_cuda_device_ops = {
    .backend = &hmx_backend_cuda,
    .to_host = hmx_cuda_to_host,
    .to_device = hmx_cuda_to_device,
    .copy2d = hmx_cuda_copy2d,
    .add = hmx_cuda_add,
    .resident_alloc = hmx_cuda_resident_alloc,
    .upload = hmx_cuda_upload,
    .resident_free = hmx_cuda_resident_free,
    .on_current_device = hmx_cuda_on_current_device,
    .stage_alloc = hmx_cuda_stage_alloc,
    .stage_free = hmx_cuda_stage_free,
    .convert = hmx_cuda_convert,
    .fwht = hmx_cuda_dev_fwht,
    .hadamard_mix = hmx_cuda_dev_hadamard_mix,
    .gemm = hmx_cuda_dev_gemm,
    .rmsnorm = hmx_cuda_dev_rmsnorm,
    .layernorm = hmx_cuda_dev_layernorm,
    .rope = hmx_cuda_dev_rope,
    .attention = hmx_cuda_dev_attention,
    .swiglu = hmx_cuda_dev_swiglu,
};
