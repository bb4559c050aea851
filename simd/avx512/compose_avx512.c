/* avx512 strassen, mhffn, flashmhf, linformer, levattention, lewis, priority:
 * compositions of this backend's gemm, swiglu and attention
 * (src/compose.h, src/compose_*.c) with the vector gated SiLU of
 * simd/x86/compose_x86.h. */
#include "avx512_compose.h"
#include "avx512_attention.h"
#include "avx512_gemm.h"
#include "avx512_swiglu.h"
#include "vexp_avx512.h"

#define XC_GEMM hmx_avx512_gemm
#define XC_SWIGLU hmx_avx512_swiglu
#define XC_ATTENTION hmx_avx512_attention
#include "../x86/compose_x86.h"

HMX_COMPOSE_DEFINE(hmx_avx512, xc_kernels)
