/* avx512 kernels: gemm (simd/avx512/gemm.c, loop nest in simd/x86/gemm_x86.h). */
#ifndef HMX_AVX512_GEMM_H
#define HMX_AVX512_GEMM_H

#include "backend.h"

hmx_status hmx_avx512_gemm(const hmx_gemm_args *a);

#define HMX_AVX512_GEMM hmx_avx512_gemm

#endif
