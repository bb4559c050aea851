/* neon kernels: gemm (simd/neon/neon_gemm.c). */
#ifndef HMX_NEON_GEMM_H
#define HMX_NEON_GEMM_H

#include "backend.h"

hmx_status hmx_neon_gemm(const hmx_gemm_args *a);

#define HMX_NEON_GEMM hmx_neon_gemm

#endif
