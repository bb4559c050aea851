/* Loads of weights stored as f32, bf16 or f16 (src/backend.h, HMX_W16_*),
 * or as GGUF blocks Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q2_K .. Q6_K / IQ4_NL / IQ4_XS
 * (HMX_WQ_GEMM), as f32 vectors,
 * for the shared x86 bodies (gemm_x86.h, swiglu_x86.h).
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
#include "gguf.h" /* HMX_GGML_*, hmx_gguf_quant_at */
#include "gemm_quant.h" /* HMX_QG */
#include "tuning.h"     /* gemv_pf_lines */

#include <stdint.h>
#include <string.h>

/* XW_Q*: GGUF blocks (src/backend.h, HMX_WQ_GEMM). Element i of a [N, K]
 * matrix (K a whole number of blocks) is element i % B of block i / B, so
 * the flat element index works for them as for the float types. */
enum { XW_F32 = 0, XW_BF16 = 1, XW_F16 = 2, XW_Q8_0 = 3, XW_Q4_0 = 4, XW_Q4_1 = 5, XW_Q6_K = 6,
       XW_Q4_K = 7, XW_Q5_K = 8, XW_Q5_0 = 9, XW_Q5_1 = 10, XW_Q2_K = 11, XW_Q3_K = 12,
       XW_IQ4_NL = 13, XW_IQ4_XS = 14,
       /* the G16 layout (src/gemm_quant.h), read by gemm_g16_x86.h */
       XW_G16_Q8_0 = 15, XW_G16_Q4_0 = 16, XW_G16_Q4_1 = 17, XW_G16_F16 = 18, XW_G16_BF16 = 19,
       XW_G16_F32 = 20,
       /* the packed G16 forms (src/gemm_quant.h): Q2_K .. Q6_K, Q5_0, Q5_1,
        * IQ4_NL, IQ4_XS */
       XW_G16_K2 = 21, XW_G16_K3 = 22, XW_G16_K4 = 23, XW_G16_K5 = 24, XW_G16_K6 = 25,
       XW_G16_P5_0 = 26, XW_G16_P5_1 = 27, XW_G16_I4NL = 28, XW_G16_I4XS = 29 };

#define xw_is_quant(wt) ((wt) >= XW_Q8_0) /* bq: [N, K] blocks, either layout */
#define xw_is_g16(wt) ((wt) >= XW_G16_Q8_0)

/* The XW_ storage type of a dtype (args' wdt). */
static inline int xw_type(hmx_dtype dt) {
  return dt == HMX_BF16 ? XW_BF16 : dt == HMX_F16 ? XW_F16 : XW_F32;
}

/* The XW_ type of a gemm's B: its GGUF blocks when bq is set, else wdt. */
static inline int xw_gemm_type(const void *bq, uint32_t qtype, int layout, hmx_dtype wdt) {
  if (!bq) return xw_type(wdt);
  if (layout == 1) /* HMX_QLAYOUT_G16 */
    switch (qtype) {
    case HMX_GGML_Q8_0: return XW_G16_Q8_0;
    case HMX_GGML_Q4_0: return XW_G16_Q4_0;
    case HMX_GGML_Q4_1: return XW_G16_Q4_1;
    case HMX_GGML_F16: return XW_G16_F16;
    case HMX_GGML_F32: return XW_G16_F32;
    case HMX_GGML_Q2_K: return XW_G16_K2;
    case HMX_GGML_Q3_K: return XW_G16_K3;
    case HMX_GGML_Q4_K: return XW_G16_K4;
    case HMX_GGML_Q5_K: return XW_G16_K5;
    case HMX_GGML_Q6_K: return XW_G16_K6;
    case HMX_GGML_Q5_0: return XW_G16_P5_0;
    case HMX_GGML_Q5_1: return XW_G16_P5_1;
    case HMX_GGML_IQ4_NL: return XW_G16_I4NL;
    case HMX_GGML_IQ4_XS: return XW_G16_I4XS;
    default: return XW_G16_BF16;
    }
  switch (qtype) {
  case HMX_GGML_Q8_0: return XW_Q8_0;
  case HMX_GGML_Q4_0: return XW_Q4_0;
  case HMX_GGML_Q4_1: return XW_Q4_1;
  case HMX_GGML_Q4_K: return XW_Q4_K;
  case HMX_GGML_Q5_K: return XW_Q5_K;
  case HMX_GGML_Q5_0: return XW_Q5_0;
  case HMX_GGML_Q5_1: return XW_Q5_1;
  case HMX_GGML_Q2_K: return XW_Q2_K;
  case HMX_GGML_Q3_K: return XW_Q3_K;
  case HMX_GGML_IQ4_NL: return XW_IQ4_NL;
  case HMX_GGML_IQ4_XS: return XW_IQ4_XS;
  default: return XW_Q6_K;
  }
}

/* The ggml type of an XW_Q* type. */
XV_INLINE uint32_t xw_ggml(const int wt) {
  return wt == XW_Q8_0 ? HMX_GGML_Q8_0 : wt == XW_Q4_0 ? HMX_GGML_Q4_0
       : wt == XW_Q4_1 ? HMX_GGML_Q4_1 : wt == XW_Q4_K ? HMX_GGML_Q4_K
       : wt == XW_Q5_K ? HMX_GGML_Q5_K : wt == XW_Q5_0 ? HMX_GGML_Q5_0
       : wt == XW_Q5_1 ? HMX_GGML_Q5_1 : wt == XW_Q2_K ? HMX_GGML_Q2_K
       : wt == XW_Q3_K ? HMX_GGML_Q3_K : wt == XW_IQ4_NL ? HMX_GGML_IQ4_NL
       : wt == XW_IQ4_XS ? HMX_GGML_IQ4_XS : HMX_GGML_Q6_K;
}

/* Byte offset of element i (a block boundary or any multiple of XV_W * XV_W
 * elements for the block types: whole blocks only). */
XV_INLINE size_t xw_bytes(int64_t i, const int wt) {
  switch (wt) {
  case XW_F32: return (size_t)i * 4;
  case XW_BF16: case XW_F16: return (size_t)i * 2;
  case XW_Q8_0: return (size_t)(i / 32) * 34;
  case XW_Q4_0: case XW_IQ4_NL: return (size_t)(i / 32) * 18;
  case XW_IQ4_XS: return (size_t)(i / 256) * 136;
  case XW_Q4_1: return (size_t)(i / 32) * 20;
  case XW_Q5_0: return (size_t)(i / 32) * 22;
  case XW_Q5_1: return (size_t)(i / 32) * 24;
  case XW_Q4_K: return (size_t)(i / 256) * 144;
  case XW_Q5_K: return (size_t)(i / 256) * 176;
  case XW_Q2_K: return (size_t)(i / 256) * 84;
  case XW_Q3_K: return (size_t)(i / 256) * 110;
  default: return (size_t)(i / 256) * 210;
  }
}

/* Element i of w as f32. */
XV_INLINE float xw_at(const void *w, int64_t i, const int wt) {
  if (wt == XW_F32) return ((const float *)w)[i];
  if (wt == XW_BF16) return hmx_bf16_to_f32(((const uint16_t *)w)[i]);
  if (wt == XW_F16) return hmx_f16_to_f32(((const uint16_t *)w)[i]);
  return hmx_gguf_quant_at(xw_ggml(wt), w, i);
}

/* An f16 block scale at p (unaligned) as f32: vcvtph2ps, exact, as
 * hmx_f16_to_f32 (docs/NUMERICS.md §D). */
XV_INLINE float xw_f16(const unsigned char *p) {
  uint16_t h;
  memcpy(&h, p, sizeof h);
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

/* Elements i .. i+XV_W-1 of GGUF blocks (i a multiple of XV_W, so inside one
 * block), decoded by docs/NUMERICS.md "GGUF dequantization" op for op:
 * integers are exact in f32, then per lane the same multiply (and, Q4_1, the
 * same add; Q6_K, the same scale product first) as hmx_gguf_dequantize, each
 * rounded once (no fma), so every lane is the dequantized element's bits. */
XV_INLINE xv_v xw_load_q(const unsigned char *w, int64_t i, const int wt) {
  if (wt == XW_Q8_0) { /* (float)q * d */
    const unsigned char *b = w + (i / 32) * 34;
    return xv_mul(xv_cvt_i(xv_i8_i(b + 2 + i % 32)), xv_set1(xw_f16(b)));
  }
  if (wt == XW_Q4_0 || wt == XW_Q4_1) {
    const int64_t j = i % 32;
    const unsigned char *b = w + (i / 32) * (wt == XW_Q4_0 ? 18 : 20);
    const xv_i u = xv_u8_i(b + (wt == XW_Q4_0 ? 2 : 4) + (j & 15));
    const xv_i n = j < 16 ? xv_and_i(u, xv_set1_i(0x0F)) : xv_srli_i(u, 4);
    if (wt == XW_Q4_0) /* (float)(n - 8) * d */
      return xv_mul(xv_cvt_i(xv_sub_i(n, xv_set1_i(8))), xv_set1(xw_f16(b)));
    /* ((float)n * d) + m: the multiply, then the add */
    return xv_add(xv_mul(xv_cvt_i(n), xv_set1(xw_f16(b))), xv_set1(xw_f16(b + 2)));
  }
  if (wt == XW_IQ4_NL || wt == XW_IQ4_XS) {
    /* the nibbles as Q4_0's (IQ4_XS: of sub-block s = e / 32, qs at 8), each
     * the index of its value (xv_lut16 reads bits 0-3 only, so the high
     * nibble needs no mask); then IQ4_NL d * value, IQ4_XS (d * (float)(sc -
     * 32)) * value: exact products, each rounded once as the scalar rule */
    const int xs = wt == XW_IQ4_XS;
    const unsigned char *b = w + (xs ? (i / 256) * 136 : (i / 32) * 18);
    const int e = (int)(i % (xs ? 256 : 32)), l = e % 32;
    const xv_i u = xv_u8_i(b + (xs ? 8 + 16 * (e / 32) : 2) + (l & 15));
    const xv_v v = xv_lut16(l < 16 ? u : xv_srli_i(u, 4), hmx_gguf_iq4_f32);
    const float d = xs ? xw_f16(b) * (float)(hmx_gguf_iq4_xs_scale(b, e / 32) - 32) : xw_f16(b);
    return xv_mul(xv_set1(d), v);
  }
  if (wt == XW_Q5_0 || wt == XW_Q5_1) {
    /* the nibbles as Q4_0's, bit 4 of element j from bit j of qh (one
     * variable shift a lane: lane t shifts by j + t); then Q5_0
     * (float)(q - 16) * d, Q5_1 ((float)q * d) + m, as the scalar rule */
    static const unsigned char IOTA[48] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                           12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                                           24, 25, 26, 27, 28, 29, 30, 31};
    const int one = wt == XW_Q5_1, hdr = one ? 4 : 2;
    const int64_t j = i % 32;
    const unsigned char *b = w + (i / 32) * (hdr + 20);
    uint32_t qh;
    memcpy(&qh, b + hdr, 4); /* little-endian, as x86 is */
    const xv_i u = xv_u8_i(b + hdr + 4 + (j & 15));
    const xv_i n = j < 16 ? xv_and_i(u, xv_set1_i(0x0F)) : xv_srli_i(u, 4);
    const xv_i hi = xv_and_i(xv_srlv_i(xv_set1_i((int)qh), xv_u8_i(IOTA + j)), xv_set1_i(1));
    const xv_i q = xv_or_i(n, xv_slli_i(hi, 4));
    if (!one) return xv_mul(xv_cvt_i(xv_sub_i(q, xv_set1_i(16))), xv_set1(xw_f16(b)));
    return xv_add(xv_mul(xv_cvt_i(q), xv_set1(xw_f16(b))), xv_set1(xw_f16(b + 2)));
  }
  if (wt == XW_Q4_K || wt == XW_Q5_K) {
    /* e = 32s + l, sub-block s (XV_W divides 32: one s for the vector):
     * ((d * (float)sc) * (float)q) - (dmin * (float)m), each op rounded, no
     * fma; the scalar products as hmx_gguf_quant_at forms them */
    const int five = wt == XW_Q5_K;
    const unsigned char *b = w + (i / 256) * (five ? 176 : 144);
    const int e = (int)(i % 256), s = e / 32, l = e % 32;
    const unsigned char *sb = b + 4;
    const int sc = s < 4 ? sb[s] & 63 : (sb[s + 4] & 0x0F) | (sb[s - 4] >> 6) << 4;
    const int m = s < 4 ? sb[s + 4] & 63 : (sb[s + 4] >> 4) | (sb[s] >> 6) << 4;
    const xv_i u = xv_u8_i(b + (five ? 48 : 16) + 32 * (s / 2) + l);
    xv_i q = s % 2 ? xv_srli_i(u, 4) : xv_and_i(u, xv_set1_i(0x0F));
    if (five) /* bit s of qh[l] is bit 4 */
      q = xv_or_i(q, xv_slli_i(xv_and_i(xv_srli_i(xv_u8_i(b + 16 + l), s), xv_set1_i(1)), 4));
    const float ds = xw_f16(b) * (float)sc, ms = xw_f16(b + 2) * (float)m;
    return xv_sub(xv_mul(xv_set1(ds), xv_cvt_i(q)), xv_set1(ms));
  }
  if (wt == XW_Q2_K || wt == XW_Q3_K) {
    /* e = 128h + 32g + l (XV_W divides 16: one sub-block of 16 for the
     * vector): bits 2g, 2g+1 of qs[32h + l]; Q2_K ((d * (float)sc) *
     * (float)q) - (dmin * (float)m), Q3_K bit 4h + g of hmask[l] as bit 2,
     * (d * (float)(sc - 32)) * (float)(u - 4); each op rounded, no fma */
    const int three = wt == XW_Q3_K;
    const unsigned char *b = w + (i / 256) * (three ? 110 : 84);
    const int e = (int)(i % 256), h = e / 128, g = (e % 128) / 32, l = e % 32;
    xv_i u = xv_and_i(xv_srli_i(xv_u8_i(b + (three ? 32 : 16) + 32 * h + l), 2 * g), xv_set1_i(3));
    if (!three) {
      const float ds = xw_f16(b + 80) * (float)(b[e / 16] & 0x0F);
      const float ms = xw_f16(b + 82) * (float)(b[e / 16] >> 4);
      return xv_sub(xv_mul(xv_set1(ds), xv_cvt_i(u)), xv_set1(ms));
    }
    u = xv_or_i(u, xv_slli_i(xv_and_i(xv_srli_i(xv_u8_i(b + l), 4 * h + g), xv_set1_i(1)), 2));
    const float s = xw_f16(b + 108) * (float)(hmx_gguf_q3_k_scale(b + 96, e / 16) - 32);
    return xv_mul(xv_set1(s), xv_cvt_i(xv_sub_i(u, xv_set1_i(4))));
  }
  /* Q6_K: e = 128h + 32g + l; (d * (float)sc[e/16]) * (float)(u - 32) */
  const unsigned char *b = w + (i / 256) * 210;
  const int e = (int)(i % 256), h = e / 128, g = (e % 128) / 32, l = e % 32;
  const xv_i lb = xv_u8_i(b + 64 * h + 32 * (g % 2) + l);
  const xv_i low = g < 2 ? xv_and_i(lb, xv_set1_i(0x0F)) : xv_srli_i(lb, 4);
  const xv_i high = xv_and_i(xv_srli_i(xv_u8_i(b + 128 + 32 * h + l), 2 * g), xv_set1_i(3));
  const xv_i u = xv_or_i(low, xv_slli_i(high, 4));
  const float s = xw_f16(b + 208) * (float)(signed char)b[192 + e / 16];
  return xv_mul(xv_set1(s), xv_cvt_i(xv_sub_i(u, xv_set1_i(32))));
}

/* Elements i .. i+XV_W-1 of w as f32. */
XV_INLINE xv_v xw_load(const void *w, int64_t i, const int wt) {
  if (wt == XW_F32) return xv_load((const float *)w + i);
  if (wt == XW_BF16) return xv_load_bf16((const uint16_t *)w + i);
  if (wt == XW_F16) return xv_load_f16((const uint16_t *)w + i);
  return xw_load_q((const unsigned char *)w, i, wt);
}

/* Elements i .. i+n-1 (0 <= n <= XV_W) as f32, +0 in the other lanes;
 * nothing past them is read. 16-bit edges go through a zeroed copy (edges
 * only: the full-vector loads above carry the traffic). */
XV_INLINE xv_v xw_loadn(const void *w, int64_t i, int64_t n, const int wt) {
  if (wt == XW_F32) return xv_loadn((const float *)w + i, xv_lanes_clamped(n));
  if (n >= XV_W) return xw_load(w, i, wt);
  if (xw_is_quant(wt)) { /* not reached (block types are [N, K] only); element by element */
    float tq[XV_W] = {0};
    for (int64_t t = 0; t < n; t++) tq[t] = xw_at(w, i + t, wt);
    return xv_load(tq);
  }
  uint16_t tmp[XV_W];
  memset(tmp, 0, sizeof tmp);
  if (n > 0) memcpy(tmp, (const uint16_t *)w + i, (size_t)n * sizeof(uint16_t));
  return xw_load(tmp, 0, wt);
}

/* Software prefetch for the one-token GEMVs over G16 weights (gemm_g16_x86.h,
 * every G16 type; swiglu_x86.h's decode, f32 / f16 / bf16): each group is a
 * sequential stream of [K][16] values, and where the tuning profile says so
 * each stream prefetches gemv_pf_lines cache lines ahead of its loads. Why:
 * one Xeon core (Emerald Rapids) keeps too few lines in flight with the
 * hardware prefetchers alone for the 16-bit and block types; 16 lines ahead
 * read those from memory 10-47% faster (f32, already at one core's read
 * ceiling there, by -7 ... +9% from memory; src/tuning.c, session 44). A prefetch
 * changes no value. Matrices smaller than XW_PF_MIN_BYTES take none (the
 * caches hold them once warm). Returns the distance in bytes, or 0. */
#define XW_PF_MIN_BYTES ((int64_t)4 << 20)
static inline int64_t xw_g16_pf_bytes(int64_t matrix_bytes) {
  if (matrix_bytes < XW_PF_MIN_BYTES) return 0;
  return (int64_t)hmx_x86_tuning_current()->gemv_pf_lines * 64;
}

/* Whether the one-token GEMV's passes of pass_bytes prefetch the next
 * pass's groups (gemm_g16_x86.h, gg_prefetch_next): where the profile's
 * gemv_next_kib allows a pass that long and the streams take no prefetch
 * of their own (pf = 0). A prefetch changes no value. */
static inline int xw_g16_next_on(int64_t pass_bytes, int64_t pf) {
  return pf == 0 && pass_bytes <= (int64_t)hmx_x86_tuning_current()->gemv_next_kib * 1024;
}

/* Element p0 of a G16 stream at which its prefetch `pf` bytes ahead
 * would leave a group of k elements of es bytes (16 per element): the
 * loops prefetch before it only, so no address past the group is formed. */
static inline int64_t xw_g16_pf_end(int64_t k, int64_t es, int64_t pf) {
  const int64_t ahead = pf / (HMX_QG * es);
  return pf > 0 && k > ahead ? k - ahead : 0;
}

#endif
