/* avx2 kernels: gemm (not implemented yet: NULL). */
#ifndef HMX_AVX2_GEMM_H
#define HMX_AVX2_GEMM_H

#define HMX_AVX2_GEMM NULL

#endif
