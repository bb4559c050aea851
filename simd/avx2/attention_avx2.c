/* AVX2 attention (docs/NUMERICS.md §attention), bit-identical to
 * ref/attention.c: the design and loops of simd/x86/attention_x86.h on
 * 8-lane ymm registers (32 keys per transposed chunk; 16 registers, so P.V
 * tiles of 2 rows x 4 chunks or 1 row x 8 chunks = 8 accumulators), plus the
 * 8 x 8 transpose. */
#include "unroll.h"
#include "avx2_attention.h"

#include "vexp_avx2.h"
#include "../x86/weights16_x86.h"

#define XA_ATTENTION_FN hmx_avx2_attention
#define XA_PV_ROWS 2
#define XA_SC_ROWS 2 /* score tiles: 2 rows x 4 key vectors = 8 of the 16 ymm */
#define XA_PV_CHUNKS(qt) ((qt) == 1 ? 8 : 4) /* 64 d's for one row, 32 for two */

/* Transpose 8 keys (`nkeys` valid, the others zero) x columns d0..d0+dn-1
 * (dn <= 8) into out[dd * 8 + key]. Keys stored as `wt` (XW_F32, XW_BF16,
 * XW_F16) are widened exactly as they are loaded, so this moves bits only. Every loop has a
 * constant trip count and is unrolled so that r, t, u stay in registers
 * (see simd/avx512/attention_avx512.c). */
static void xa_transpose(const void *k, int64_t ldk, int nkeys, int64_t d0, int dn, float *out,
                         int wt) {
  __m256 r[8], t[8], u[8];
  if (nkeys == 8 && dn == 8) { /* the common whole block: plain loads */
    HMX_UNROLL(8)
    for (int i = 0; i < 8; i++) r[i] = xw_load(k, i * ldk + d0, wt);
  } else {
    for (int i = 0; i < 8; i++)
      r[i] = i < nkeys ? xw_loadn(k, i * ldk + d0, dn, wt) : _mm256_setzero_ps();
  }
  HMX_UNROLL(8)
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  /* u[4g + e], 128-bit half L: rows 4g..4g+3, element 4L + e. */
  HMX_UNROLL(2)
  for (int g = 0; g < 2; g++) {
    u[4 * g + 0] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  HMX_UNROLL(4)
  for (int e = 0; e < 4; e++) {
    r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
    r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
  }
  if (dn == 8) {
    HMX_UNROLL(8)
    for (int dd = 0; dd < 8; dd++) _mm256_storeu_ps(out + dd * 8, r[dd]);
  } else {
    for (int dd = 0; dd < dn; dd++) _mm256_storeu_ps(out + dd * 8, r[dd]);
  }
}

#include "../x86/attention_x86.h"
