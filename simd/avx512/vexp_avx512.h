/* 16-lane canonical exp, sigmoid and SiLU for AVX-512 (docs/NUMERICS.md §E):
 * xv_expf, xv_negf, xv_sigmoidf, xv_siluf of simd/x86/vexp_x86.h on the
 * avx512 primitives (selects are mask blends on compare masks). Include it
 * from a file compiled with the avx512 flags. */
#ifndef HMX_VEXP_AVX512_H
#define HMX_VEXP_AVX512_H

#include "avx512_vec.h"

#include "../x86/vexp_x86.h"

#endif
