/* avx2 kernels: attention (simd/avx2/attention_avx2.c). */
#ifndef HMX_AVX2_ATTENTION_H
#define HMX_AVX2_ATTENTION_H

#include "backend.h"

hmx_status hmx_avx2_attention(const hmx_attention_args *a);

#define HMX_AVX2_ATTENTION hmx_avx2_attention

#endif
