/* The avx2 backend table. Each kernel comes from the header of its op
 * family (kernels.h), which names the function, or NULL while the op is not
 * implemented here (then conformance lists it as missing). */
#include "backend.h"
#include "cpu.h"
#include "avx2_kernels.h"

static int probe(void) { return hmx_cpu_detect().avx2_fma; }

const hmx_backend hmx_backend_avx2 = {
    .name = "avx2",
    .description = "AVX2 + FMA + F16C (8 lanes), OpenMP threads",
    .probe = probe,
    .unavailable_reason = hmx_cpu_why_no_avx2,
    .priority = 10,
    .weights16 = HMX_W16_GEMM | HMX_W16_SWIGLU | HMX_WQ_GEMM | HMX_WG16_GEMM | HMX_WG16_SWIGLU |
                 HMX_W16_ATTENTION | HMX_KB16_ATTENTION,
    /* bf16/f16 weights and GGUF blocks (both layouts) read in place */
    .fwht = HMX_AVX2_FWHT,
    .hadamard_mix = HMX_AVX2_HADAMARD_MIX,
    .gemm = HMX_AVX2_GEMM,
    .rmsnorm = HMX_AVX2_RMSNORM,
    .layernorm = HMX_AVX2_LAYERNORM,
    .rope = HMX_AVX2_ROPE,
    .attention = HMX_AVX2_ATTENTION,
    .swiglu = HMX_AVX2_SWIGLU,
    .strassen = HMX_AVX2_STRASSEN,
    .mhffn = HMX_AVX2_MHFFN,
    .flashmhf = HMX_AVX2_FLASHMHF,
    .linformer = HMX_AVX2_LINFORMER,
    .levattention = HMX_AVX2_LEVATTENTION,
    .lewis = HMX_AVX2_LEWIS,
    .priority_attn = HMX_AVX2_PRIORITY,
    .gated_silu = hmx_avx2_gated_silu,
    .rope_table = HMX_AVX2_ROPE_TABLE,
};
