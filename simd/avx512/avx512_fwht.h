/* avx512 kernels: fwht (not implemented yet: NULL). */
#ifndef HMX_AVX512_FWHT_H
#define HMX_AVX512_FWHT_H

#define HMX_AVX512_FWHT NULL
#define HMX_AVX512_HADAMARD_MIX NULL

#endif
