/* avx2 kernels: fwht, hadamard_mix (simd/avx2/fwht_avx2.c). */
#ifndef HMX_AVX2_FWHT_H
#define HMX_AVX2_FWHT_H

#include "backend.h"

hmx_status hmx_avx2_fwht(const hmx_fwht_args *a);
hmx_status hmx_avx2_hadamard_mix(const hmx_hadamard_mix_args *a);

#define HMX_AVX2_FWHT hmx_avx2_fwht
#define HMX_AVX2_HADAMARD_MIX hmx_avx2_hadamard_mix

#endif
