/* avx2 kernels: fwht (not implemented yet: NULL). */
#ifndef HMX_AVX2_FWHT_H
#define HMX_AVX2_FWHT_H

#define HMX_AVX2_FWHT NULL
#define HMX_AVX2_HADAMARD_MIX NULL

#endif
