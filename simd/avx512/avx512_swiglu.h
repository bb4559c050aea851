/* avx512 kernels: swiglu (not implemented yet: NULL). */
#ifndef HMX_AVX512_SWIGLU_H
#define HMX_AVX512_SWIGLU_H

#define HMX_AVX512_SWIGLU NULL

#endif
