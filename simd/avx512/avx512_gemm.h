/* avx512 kernels: gemm (not implemented yet: NULL). */
#ifndef HMX_AVX512_GEMM_H
#define HMX_AVX512_GEMM_H

#define HMX_AVX512_GEMM NULL

#endif
