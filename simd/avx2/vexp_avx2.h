/* 8-lane canonical exp, sigmoid and SiLU for AVX2 (docs/NUMERICS.md §E):
 * xv_expf, xv_negf, xv_sigmoidf, xv_siluf of simd/x86/vexp_x86.h on the
 * avx2 primitives (selects are _mm256_blendv_ps on compare masks). Include it
 * from a file compiled with the avx2 flags (-mavx2 -mfma). */
#ifndef HMX_VEXP_AVX2_H
#define HMX_VEXP_AVX2_H

#include "avx2_vec.h"

#include "../x86/vexp_x86.h"

#endif
