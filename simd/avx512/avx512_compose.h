/* avx512 kernels: strassen, mhffn, flashmhf and the sketched attentions
 * (simd/avx512/compose_avx512.c, composed by src/compose_*.c). */
#ifndef HMX_AVX512_COMPOSE_H
#define HMX_AVX512_COMPOSE_H

#include "compose.h"

HMX_COMPOSE_DECLARE(hmx_avx512)

#define HMX_AVX512_STRASSEN hmx_avx512_strassen
#define HMX_AVX512_MHFFN hmx_avx512_mhffn
#define HMX_AVX512_FLASHMHF hmx_avx512_flashmhf
#define HMX_AVX512_LINFORMER hmx_avx512_linformer
#define HMX_AVX512_LEVATTENTION hmx_avx512_levattention
#define HMX_AVX512_LEWIS hmx_avx512_lewis
#define HMX_AVX512_PRIORITY hmx_avx512_priority

#endif
