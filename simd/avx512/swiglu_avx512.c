/* AVX-512 SwiGLU (docs/NUMERICS.md §swiglu), bit-identical to ref/swiglu.c
 * for every block size: the design and loops of simd/x86/swiglu_x86.h on
 * 16-lane zmm registers (32 of them: tiles of 4 tokens x 32 hidden units in
 * phase 1, 4 tokens x 64 output columns in phase 2). */
#include "avx512_swiglu.h"

#include "vexp_avx512.h"

#define XS_SWIGLU_FN hmx_avx512_swiglu
#define XS_TT 4 /* tokens per tile (8 tokens x 1 vector of units measured no faster, Xeon EMR) */
#define XS_UV 2 /* phase-1 tiles: 4 tokens x 2 vectors x (a, b) = 16 of the 32 zmm */
#define XS_CV 4 /* phase-2 tiles: 4 tokens x 4 vectors = 16 */

#include "../x86/swiglu_x86.h"
