/* The neon kernels, one header per op family. Each header defines
 * HMX_NEON_<OP> as its kernel function, or NULL while not implemented. */
#ifndef HMX_NEON_KERNELS_H
#define HMX_NEON_KERNELS_H

#include "neon_fwht.h"      /* fwht, hadamard_mix */
#include "neon_gemm.h"      /* gemm */
#include "neon_rowops.h"    /* rmsnorm, layernorm, rope */
#include "neon_attention.h" /* attention */
#include "neon_swiglu.h"    /* swiglu */
#include "neon_compose.h"   /* strassen, mhffn, flashmhf, sketches */

#endif
