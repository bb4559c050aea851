/* neon kernels: attention (simd/neon/neon_attention.c). */
#ifndef HMX_NEON_ATTENTION_H
#define HMX_NEON_ATTENTION_H

#include "backend.h"

hmx_status hmx_neon_attention(const hmx_attention_args *a);

#define HMX_NEON_ATTENTION hmx_neon_attention

#endif
