/* avx512 kernels: attention (not implemented yet: NULL). */
#ifndef HMX_AVX512_ATTENTION_H
#define HMX_AVX512_ATTENTION_H

#define HMX_AVX512_ATTENTION NULL

#endif
