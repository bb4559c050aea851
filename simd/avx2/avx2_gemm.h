/* avx2 kernels: gemm (simd/avx2/gemm.c, loop nest in simd/x86/gemm_x86.h). */
#ifndef HMX_AVX2_GEMM_H
#define HMX_AVX2_GEMM_H

#include "backend.h"

hmx_status hmx_avx2_gemm(const hmx_gemm_args *a);

#define HMX_AVX2_GEMM hmx_avx2_gemm

#endif
