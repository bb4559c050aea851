/* avx512 kernels: attention (simd/avx512/attention_avx512.c). */
#ifndef HMX_AVX512_ATTENTION_H
#define HMX_AVX512_ATTENTION_H

#include "backend.h"

hmx_status hmx_avx512_attention(const hmx_attention_args *a);

#define HMX_AVX512_ATTENTION hmx_avx512_attention

#endif
