/* The neon backend table (AArch64 Advanced SIMD). Each kernel comes from the
 * header of its op family (neon_kernels.h), which names the function, or NULL
 * while the op is not implemented here (then conformance lists it as missing).
 * docs/NEON.md describes the design. */
#include "backend.h"
#include "cpu.h"
#include "neon_kernels.h"

static int probe(void) { return hmx_cpu_detect().neon; }

const hmx_backend hmx_backend_neon = {
    .name = "neon",
    .description = "AArch64 Advanced SIMD (4 lanes x 4 registers), OpenMP threads",
    .probe = probe,
    .priority = 10,
    /* GGUF blocks decoded while B is packed (neon_gemm.c), G16 matrices a
     * group of 16 outputs at a time (neon_gemm_g16.c); the KV cache's
     * blocked f32 K read in place (neon_attention.c) */
    .weights16 = HMX_WQ_GEMM | HMX_WG16_GEMM | HMX_KB16_ATTENTION,
    .fwht = HMX_NEON_FWHT,
    .hadamard_mix = HMX_NEON_HADAMARD_MIX,
    .gemm = HMX_NEON_GEMM,
    .rmsnorm = HMX_NEON_RMSNORM,
    .layernorm = HMX_NEON_LAYERNORM,
    .rope = HMX_NEON_ROPE,
    .attention = HMX_NEON_ATTENTION,
    .swiglu = HMX_NEON_SWIGLU,
    .strassen = HMX_NEON_STRASSEN,
    .mhffn = HMX_NEON_MHFFN,
    .flashmhf = HMX_NEON_FLASHMHF,
    .linformer = HMX_NEON_LINFORMER,
    .levattention = HMX_NEON_LEVATTENTION,
    .lewis = HMX_NEON_LEWIS,
    .priority_attn = HMX_NEON_PRIORITY,
    .gated_silu = hmx_neon_gated_silu,
};
