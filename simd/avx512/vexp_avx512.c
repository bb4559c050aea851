/* Plain C entry points to the AVX-512 canonical exp/sigmoid/SiLU
 * (vexp_avx512.h), for tests and tools: compiled with the avx512 flags, so
 * call them only when hmx_cpu_detect().avx512 is set. */
#include "vexp_avx512.h"

XV_VEXP_ARRAY(hmx_avx512_expf_array, xv_expf)
XV_VEXP_ARRAY(hmx_avx512_sigmoidf_array, xv_sigmoidf)
XV_VEXP_ARRAY(hmx_avx512_siluf_array, xv_siluf)
