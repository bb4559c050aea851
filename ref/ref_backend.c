/* The `ref` backend table: always available, always first. */
#include "ref.h"

static int ref_probe(void) { return 1; }

const hmx_backend hmx_backend_ref = {
    .name = "ref",
    .description = "naive scalar reference (the definition; single-threaded)",
    .probe = ref_probe,
    .priority = 0,
    .fwht = hmx_ref_fwht,
    .hadamard_mix = hmx_ref_hadamard_mix,
    .gemm = hmx_ref_gemm,
    .rmsnorm = hmx_ref_rmsnorm,
    .layernorm = hmx_ref_layernorm,
    .rope = hmx_ref_rope,
    .attention = hmx_ref_attention,
    .swiglu = hmx_ref_swiglu,
    .strassen = hmx_ref_strassen,
    .mhffn = hmx_ref_mhffn,
    .flashmhf = hmx_ref_flashmhf,
    .linformer = hmx_ref_linformer,
    .levattention = hmx_ref_levattention,
    .lewis = hmx_ref_lewis,
    .priority_attn = hmx_ref_priority,
};
