/* neon kernels: fwht (simd/neon/neon_fwht.c). */
#ifndef HMX_NEON_FWHT_H
#define HMX_NEON_FWHT_H

#include "backend.h"

hmx_status hmx_neon_fwht(const hmx_fwht_args *a);
hmx_status hmx_neon_hadamard_mix(const hmx_hadamard_mix_args *a);

#define HMX_NEON_FWHT hmx_neon_fwht
#define HMX_NEON_HADAMARD_MIX hmx_neon_hadamard_mix

#endif
