/* The avx2 kernels, one header per op family. Each header defines
 * HMX_AVX2_<OP> as its kernel function, or NULL while not implemented. */
#ifndef HMX_AVX2_KERNELS_H
#define HMX_AVX2_KERNELS_H

#include "avx2_fwht.h"      /* fwht, hadamard_mix */
#include "avx2_gemm.h"      /* gemm */
#include "avx2_rowops.h"    /* rmsnorm, layernorm, rope */
#include "avx2_attention.h" /* attention */
#include "avx2_swiglu.h"    /* swiglu */
#include "avx2_compose.h"   /* strassen, mhffn, flashmhf, sketches */

#endif
