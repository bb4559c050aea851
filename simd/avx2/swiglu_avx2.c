/* AVX2 SwiGLU (docs/NUMERICS.md §swiglu), bit-identical to ref/swiglu.c for
 * every block size: the design and loops of simd/x86/swiglu_x86.h on 8-lane
 * ymm registers (16 of them, hence smaller register tiles: 2 tokens x 16
 * hidden units in phase 1, 2 tokens x 32 output columns in phase 2). */
#include "avx2_swiglu.h"

#include "vexp_avx2.h"

#define XS_SWIGLU_FN hmx_avx2_swiglu
#define XS_TT 2
#define XS_UV 2 /* phase-1 tiles: 2 tokens x 2 vectors x (a, b) = 8 of the 16 ymm */
#define XS_CV 4 /* phase-2 tiles: 2 tokens x 4 vectors = 8 */

#include "../x86/swiglu_x86.h"
