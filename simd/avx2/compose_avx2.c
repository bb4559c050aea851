/* avx2 strassen, mhffn, flashmhf, linformer, levattention, lewis, priority:
 * compositions of this backend's gemm, swiglu and attention
 * (src/compose.h, src/compose_*.c) with the vector gated SiLU of
 * simd/x86/compose_x86.h. */
#include "avx2_compose.h"
#include "avx2_attention.h"
#include "avx2_gemm.h"
#include "avx2_swiglu.h"
#include "vexp_avx2.h"

#define XC_GEMM hmx_avx2_gemm
#define XC_SWIGLU hmx_avx2_swiglu
#define XC_ATTENTION hmx_avx2_attention
#include "../x86/compose_x86.h"

HMX_COMPOSE_DEFINE(hmx_avx2, xc_kernels)
