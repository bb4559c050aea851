/* Loads of weights stored as f32, bf16 or f16 (src/backend.h, HMX_W16_*),
 * as f32 vectors, for the shared x86 bodies (gemm_x86.h, swiglu_x86.h).
 * Header only, after the ISA's xv_ primitives (avx512_vec.h, avx2_vec.h),
 * which provide xv_load_bf16(p) and xv_load_f16(p): XV_W 16-bit values
 * converted to f32.
 *
 * Every bf16 and every f16 value is exactly an f32, so a conversion moves
 * bits only (bf16: the 16 bits become the high half; f16: vcvtph2ps, exact
 * for normals, subnormals, infinities and NaN payloads, the same as
 * hmx_f16_to_f32): a kernel that loads 16-bit weights this way computes on
 * the same f32 values as with staged f32 weights, so the bits do not depend
 * on the weights' storage.
 *
 * `wt` is a compile-time constant in every caller (always-inline bodies
 * instantiated once per storage type), so the branches fold away. */
#ifndef HMX_WEIGHTS16_X86_H
#define HMX_WEIGHTS16_X86_H

#include "hadamix.h"

#include <stdint.h>
#include <string.h>

enum { XW_F32 = 0, XW_BF16 = 1, XW_F16 = 2 };

/* The XW_ storage type of a dtype (args' wdt). */
static inline int xw_type(hmx_dtype dt) {
  return dt == HMX_BF16 ? XW_BF16 : dt == HMX_F16 ? XW_F16 : XW_F32;
}

/* Element i of w as f32. */
XV_INLINE float xw_at(const void *w, int64_t i, const int wt) {
  if (wt == XW_F32) return ((const float *)w)[i];
  if (wt == XW_BF16) return hmx_bf16_to_f32(((const uint16_t *)w)[i]);
  return hmx_f16_to_f32(((const uint16_t *)w)[i]);
}

/* Elements i .. i+XV_W-1 of w as f32. */
XV_INLINE xv_v xw_load(const void *w, int64_t i, const int wt) {
  if (wt == XW_F32) return xv_load((const float *)w + i);
  if (wt == XW_BF16) return xv_load_bf16((const uint16_t *)w + i);
  return xv_load_f16((const uint16_t *)w + i);
}

/* Elements i .. i+n-1 (0 <= n <= XV_W) as f32, +0 in the other lanes;
 * nothing past them is read. 16-bit edges go through a zeroed copy (edges
 * only: the full-vector loads above carry the traffic). */
XV_INLINE xv_v xw_loadn(const void *w, int64_t i, int64_t n, const int wt) {
  if (wt == XW_F32) return xv_loadn((const float *)w + i, xv_lanes_clamped(n));
  if (n >= XV_W) return xw_load(w, i, wt);
  uint16_t tmp[XV_W];
  memset(tmp, 0, sizeof tmp);
  if (n > 0) memcpy(tmp, (const uint16_t *)w + i, (size_t)n * sizeof(uint16_t));
  return xw_load(tmp, 0, wt);
}

#endif
