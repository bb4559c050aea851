/* avx512 kernels: fwht, hadamard_mix (simd/avx512/fwht_avx512.c, compiled
 * twice: fwht_avx512_shuffle.c; the backend's entries pick one by the tuning
 * profile, fwht_avx512_pick.c). */
#ifndef HMX_AVX512_FWHT_H
#define HMX_AVX512_FWHT_H

#include "backend.h"

/* stride 1 from two duplicating loads (HX_DUP_LOAD=1) */
hmx_status hmx_avx512_fwht(const hmx_fwht_args *a);
hmx_status hmx_avx512_hadamard_mix(const hmx_hadamard_mix_args *a);
/* stride 1 from a load and a shuffle (HX_DUP_LOAD=0) */
hmx_status hmx_avx512_fwht_shuffle(const hmx_fwht_args *a);
hmx_status hmx_avx512_hadamard_mix_shuffle(const hmx_hadamard_mix_args *a);
/* one of the two, as the tuning profile's fwht_dup_load_avx512 says */
hmx_status hmx_avx512_fwht_pick(const hmx_fwht_args *a);
hmx_status hmx_avx512_hadamard_mix_pick(const hmx_hadamard_mix_args *a);

#define HMX_AVX512_FWHT hmx_avx512_fwht_pick
#define HMX_AVX512_HADAMARD_MIX hmx_avx512_hadamard_mix_pick

#endif
