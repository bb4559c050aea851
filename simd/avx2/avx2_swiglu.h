/* avx2 kernels: swiglu (simd/avx2/swiglu_avx2.c). */
#ifndef HMX_AVX2_SWIGLU_H
#define HMX_AVX2_SWIGLU_H

#include "backend.h"

hmx_status hmx_avx2_swiglu(const hmx_swiglu_args *s);

#define HMX_AVX2_SWIGLU hmx_avx2_swiglu

#endif
