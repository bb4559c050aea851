/* The avx512 backend's fwht and hadamard_mix: the kernel's two compiled
 * copies (fwht_avx512.c, fwht_avx512_shuffle.c) differ only in how the
 * stride-1 stage reads its operands; the tuning profile in force picks one
 * per call (src/tuning.h, fwht_dup_load_avx512). The same bits either way. */
#include "avx512_fwht.h"
#include "tuning.h"
#if defined(HMX_WITH_AVX2)
#include "avx2_fwht.h"
#endif

/* Rows whose power-of-two factor p = n / m is below 16 (n = 8; 12 / 20 / 28
 * / 40 times 1 ... 8) fill no zmm register per block. The avx2 kernel's
 * blocks are 8 floats, so p = 8 is vector code there, and p < 8 takes its
 * transposed path (fwht_x86.h, hx_rows_vertical) like avx512's would. Zen 5,
 * one thread, 256 KiB batch: n = 8 / 96 / 160 / 224 / 320 (m = 40) 18-33x
 * faster than the element loop avx512 ran on such rows until session 67.
 * Every CPU that runs avx512 runs avx2 (its probe requires it), and both
 * give the reference's bits. */
static int p_below_zmm(int64_t n, int m) { return n / (m > 1 ? m : 1) < 16; }

hmx_status hmx_avx512_fwht_pick(const hmx_fwht_args *a) {
#if defined(HMX_WITH_AVX2)
  if (p_below_zmm(a->n, a->m)) return hmx_avx2_fwht(a);
#endif
  return hmx_x86_tuning_current()->fwht_dup_load_avx512 ? hmx_avx512_fwht(a)
                                                        : hmx_avx512_fwht_shuffle(a);
}

hmx_status hmx_avx512_hadamard_mix_pick(const hmx_hadamard_mix_args *a) {
#if defined(HMX_WITH_AVX2)
  if (p_below_zmm(a->n, a->m)) return hmx_avx2_hadamard_mix(a);
#endif
  return hmx_x86_tuning_current()->fwht_dup_load_avx512 ? hmx_avx512_hadamard_mix(a)
                                                        : hmx_avx512_hadamard_mix_shuffle(a);
}
