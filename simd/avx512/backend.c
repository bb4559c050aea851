/* The avx512 backend table. Each kernel comes from the header of its op
 * family (kernels.h), which names the function, or NULL while the op is not
 * implemented here (then conformance lists it as missing). */
#include "backend.h"
#include "cpu.h"
#include "avx512_kernels.h"

static int probe(void) { return hmx_cpu_detect().avx512; }

const hmx_backend hmx_backend_avx512 = {
    .name = "avx512",
    .description = "AVX-512 F/BW/DQ/VL (16 lanes), OpenMP threads",
    .probe = probe,
    .unavailable_reason = hmx_cpu_why_no_avx512,
    .priority = 20,
    .weights16 = HMX_W16_GEMM | HMX_W16_SWIGLU | HMX_WQ_GEMM | HMX_WG16_GEMM | HMX_WG16_SWIGLU |
                 HMX_W16_ATTENTION | HMX_KB16_ATTENTION,
    /* bf16/f16 weights and GGUF blocks (both layouts) read in place */
    .fwht = HMX_AVX512_FWHT,
    .hadamard_mix = HMX_AVX512_HADAMARD_MIX,
    .gemm = HMX_AVX512_GEMM,
    .rmsnorm = HMX_AVX512_RMSNORM,
    .layernorm = HMX_AVX512_LAYERNORM,
    .rope = HMX_AVX512_ROPE,
    .attention = HMX_AVX512_ATTENTION,
    .swiglu = HMX_AVX512_SWIGLU,
    .strassen = HMX_AVX512_STRASSEN,
    .mhffn = HMX_AVX512_MHFFN,
    .flashmhf = HMX_AVX512_FLASHMHF,
    .linformer = HMX_AVX512_LINFORMER,
    .levattention = HMX_AVX512_LEVATTENTION,
    .lewis = HMX_AVX512_LEWIS,
    .priority_attn = HMX_AVX512_PRIORITY,
    .gated_silu = hmx_avx512_gated_silu,
    .rope_table = HMX_AVX512_ROPE_TABLE,
};
