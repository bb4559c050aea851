/* avx512 kernels: swiglu (simd/avx512/swiglu_avx512.c). */
#ifndef HMX_AVX512_SWIGLU_H
#define HMX_AVX512_SWIGLU_H

#include "backend.h"

hmx_status hmx_avx512_swiglu(const hmx_swiglu_args *s);

#define HMX_AVX512_SWIGLU hmx_avx512_swiglu

#endif
