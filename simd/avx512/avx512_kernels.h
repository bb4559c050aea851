/* The avx512 kernels, one header per op family. Each header defines
 * HMX_AVX512_<OP> as its kernel function, or NULL while not implemented. */
#ifndef HMX_AVX512_KERNELS_H
#define HMX_AVX512_KERNELS_H

#include "avx512_fwht.h"      /* fwht, hadamard_mix */
#include "avx512_gemm.h"      /* gemm */
#include "avx512_rowops.h"    /* rmsnorm, layernorm, rope */
#include "avx512_attention.h" /* attention */
#include "avx512_swiglu.h"    /* swiglu */
#include "avx512_compose.h"   /* strassen, mhffn, flashmhf, sketches */

#endif
