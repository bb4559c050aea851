/* avx2 kernels: attention (not implemented yet: NULL). */
#ifndef HMX_AVX2_ATTENTION_H
#define HMX_AVX2_ATTENTION_H

#define HMX_AVX2_ATTENTION NULL

#endif
