/* The scalar reference: the definition of every operation (docs/NUMERICS.md).
 * Plain loops in the evaluation order the contract fixes; never fast. */
#ifndef HMX_REF_H
#define HMX_REF_H

#include "backend.h"

hmx_status hmx_ref_fwht(const hmx_fwht_args *a);
hmx_status hmx_ref_hadamard_mix(const hmx_hadamard_mix_args *a);
hmx_status hmx_ref_gemm(const hmx_gemm_args *a);
hmx_status hmx_ref_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_ref_layernorm(const hmx_norm_args *a);
hmx_status hmx_ref_rope(const hmx_rope_args *a);
hmx_status hmx_ref_attention(const hmx_attention_args *a);
hmx_status hmx_ref_swiglu(const hmx_swiglu_args *a);
hmx_status hmx_ref_strassen(const hmx_strassen_args *a);
hmx_status hmx_ref_mhffn(const hmx_mhffn_args *a);
hmx_status hmx_ref_flashmhf(const hmx_flashmhf_args *a);
hmx_status hmx_ref_linformer(const hmx_sketch_args *a);
hmx_status hmx_ref_levattention(const hmx_sketch_args *a);
hmx_status hmx_ref_lewis(const hmx_sketch_args *a);
hmx_status hmx_ref_priority(const hmx_sketch_args *a);

/* Largest power-of-two part of an FWHT size: n = 2^k alone, or m * 2^k. */
#define HMX_FWHT_MAX_POW2 (INT64_C(1) << 20)
#define HMX_FWHT_MAX_POW2_FACTOR (INT64_C(1) << 15)

/* Resolve the FWHT factor: with m == 0 the smallest of 1, 12, 20, 28, 40 with
 * n = m * 2^k inside the limits above (so 40 only for n = 40 * 2^15, which
 * 20 * 2^16 exceeds); with m given, check n = m * 2^k inside the limits.
 * Returns 1 and sets *m_out, *pow2 on success, 0 if n is no such size. */
int hmx_fwht_split(int64_t n, int m, int *m_out, int64_t *pow2);

#endif
