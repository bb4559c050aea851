/* Plain C entry points to the AVX2 canonical exp/sigmoid/SiLU (vexp_avx2.h),
 * for tests and tools: compiled with the avx2 flags, so call them only when
 * hmx_cpu_detect().avx2_fma is set. */
#include "vexp_avx2.h"

XV_VEXP_ARRAY(hmx_avx2_expf_array, xv_expf)
XV_VEXP_ARRAY(hmx_avx2_sigmoidf_array, xv_sigmoidf)
XV_VEXP_ARRAY(hmx_avx2_siluf_array, xv_siluf)
