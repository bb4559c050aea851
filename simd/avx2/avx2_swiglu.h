/* avx2 kernels: swiglu (not implemented yet: NULL). */
#ifndef HMX_AVX2_SWIGLU_H
#define HMX_AVX2_SWIGLU_H

#define HMX_AVX2_SWIGLU NULL

#endif
