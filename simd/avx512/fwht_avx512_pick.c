/* The avx512 backend's fwht and hadamard_mix: the kernel's two compiled
 * copies (fwht_avx512.c, fwht_avx512_shuffle.c) differ only in how the
 * stride-1 stage reads its operands; the tuning profile in force picks one
 * per call (src/tuning.h, fwht_dup_load_avx512). The same bits either way. */
#include "avx512_fwht.h"
#include "tuning.h"

hmx_status hmx_avx512_fwht_pick(const hmx_fwht_args *a) {
  return hmx_x86_tuning_current()->fwht_dup_load_avx512 ? hmx_avx512_fwht(a)
                                                        : hmx_avx512_fwht_shuffle(a);
}

hmx_status hmx_avx512_hadamard_mix_pick(const hmx_hadamard_mix_args *a) {
  return hmx_x86_tuning_current()->fwht_dup_load_avx512 ? hmx_avx512_hadamard_mix(a)
                                                        : hmx_avx512_hadamard_mix_shuffle(a);
}
