/* neon kernels: swiglu (simd/neon/neon_swiglu.c). */
#ifndef HMX_NEON_SWIGLU_H
#define HMX_NEON_SWIGLU_H

#include "backend.h"

hmx_status hmx_neon_swiglu(const hmx_swiglu_args *a);

#define HMX_NEON_SWIGLU hmx_neon_swiglu

#endif
