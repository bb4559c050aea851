/* The avx512 fwht and hadamard_mix compiled a second time, with §fwht's
 * stride-1 stage from one load and an in-lane shuffle instead of two
 * duplicating loads (HX_DUP_LOAD=0 in fwht_avx512.c). The same operations
 * on the same values, so the same bits; which one runs is the tuning
 * profile's fwht_dup_load_avx512 (src/tuning.h; fwht_avx512_pick.c): on Intel
 * a duplicating load is a load-port uop only and leaves the two vector
 * ports one shuffle less, on Zen 5 the shuffle read 4-6% faster
 * (docs/results/session64). */
#define HX_DUP_LOAD 0
#define HX_FWHT_FN hmx_avx512_fwht_shuffle
#define HX_MIX_FN hmx_avx512_hadamard_mix_shuffle
#include "fwht_avx512.c"
