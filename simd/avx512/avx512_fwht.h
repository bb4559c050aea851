/* avx512 kernels: fwht, hadamard_mix (simd/avx512/fwht_avx512.c). */
#ifndef HMX_AVX512_FWHT_H
#define HMX_AVX512_FWHT_H

#include "backend.h"

hmx_status hmx_avx512_fwht(const hmx_fwht_args *a);
hmx_status hmx_avx512_hadamard_mix(const hmx_hadamard_mix_args *a);

#define HMX_AVX512_FWHT hmx_avx512_fwht
#define HMX_AVX512_HADAMARD_MIX hmx_avx512_hadamard_mix

#endif
