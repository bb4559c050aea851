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
};
