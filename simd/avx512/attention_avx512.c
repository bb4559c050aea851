/* AVX-512 attention (docs/NUMERICS.md §attention), bit-identical to
 * ref/attention.c: the design and loops of simd/x86/attention_x86.h on
 * 16-lane zmm registers (64 keys per transposed chunk; 32 registers, so P.V
 * tiles of 4 rows x 4 chunks = 16 accumulators), plus the 16 x 16 transpose. */
#include "unroll.h"
#include "avx512_attention.h"

#include "vexp_avx512.h"
#include "../x86/weights16_x86.h"

#define XA_ATTENTION_FN hmx_avx512_attention
#define XA_PV_ROWS 4
#define XA_SC_ROWS 4 /* score tiles: 4 rows x 4 key vectors = 16 of the 32 zmm */
#define XA_PV_CHUNKS(qt) 4 /* 64 d's for every row count */

/* Transpose the 16 x 16 block in r (r[i]: key i) so that r[dd] holds
 * column dd of every key, and store columns 0 .. dn-1 to out[dd * 16 + key].
 * Moves bits only. Every loop has a constant trip count and is unrolled, so
 * r, t, u stay in registers (with a loop over a variable key count, gcc kept
 * them on the stack: measured 2x slower decode attention). */
XV_INLINE void xa_transpose_regs(__m512 r[16], int dn, float *out) {
  __m512 t[16], u[16];
  HMX_UNROLL(16)
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  /* u[4g + e], 128-bit lane L: rows 4g..4g+3, element 4L + e. */
  HMX_UNROLL(4)
  for (int g = 0; g < 4; g++) {
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  HMX_UNROLL(4)
  for (int e = 0; e < 4; e++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);
    __m512 w0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);
    __m512 v1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
    __m512 w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
    r[e] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    r[8 + e] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    r[4 + e] = _mm512_shuffle_f32x4(w0, w1, 0x88);
    r[12 + e] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
  }
  if (dn == 16) {
    HMX_UNROLL(16)
    for (int dd = 0; dd < 16; dd++) _mm512_storeu_ps(out + dd * 16, r[dd]);
  } else {
    for (int dd = 0; dd < dn; dd++) _mm512_storeu_ps(out + dd * 16, r[dd]);
  }
}

/* Transpose 16 keys (rows, `nkeys` of them valid, the others zero) x
 * columns d0 .. d0+dn-1 (dn <= 16) into out[dd * 16 + key]. The keys are
 * stored as `wt` (XW_F32, XW_BF16 or XW_F16: a 16-bit KV cache); each is
 * widened exactly to f32 as it is loaded (weights16_x86.h), so this moves
 * bits only. */
static void xa_transpose(const void *k, int64_t ldk, int nkeys, int64_t d0, int dn, float *out,
                         int wt) {
  __m512 r[16];
  if (nkeys == 16 && dn == 16) { /* the common whole block: plain loads */
    HMX_UNROLL(16)
    for (int i = 0; i < 16; i++) r[i] = xw_load(k, i * ldk + d0, wt);
  } else {
    for (int i = 0; i < 16; i++)
      r[i] = i < nkeys ? xw_loadn(k, i * ldk + d0, dn, wt) : _mm512_setzero_ps();
  }
  xa_transpose_regs(r, dn, out);
}

#include "../x86/attention_x86.h"
