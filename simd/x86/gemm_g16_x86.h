/* gemm_x86.h's B in the G16 layout (src/gemm_quant.h: rows in groups of 16,
 * each element's 16 values adjacent) of Q8_0, Q4_0, Q4_1, F32, F16 and BF16,
 * and the packed G16 forms of Q2_K .. Q6_K, Q5_0, Q5_1, IQ4_NL and IQ4_XS.
 * Part of the gemm_x86.h template (included by it; uses its gx_ and the
 * ISA's xv_ primitives).
 *
 * Why: with B's rows stored one after another, a vector of VL outputs'
 * weights for one element p needs a VL x VL transpose (gx_gemv_nt), which
 * costs more than the arithmetic. In G16 the 16 rows' values of element p
 * are adjacent, so one vector load (and a few integer operations for the
 * block types) gives them, and every output still takes its fmas for
 * p = 0, 1, ..., K-1 in order (§gemm).
 *
 * Each weight is decoded by the rule of docs/NUMERICS.md "GGUF
 * dequantization", lane by lane: Q8_0 (float)q * d; Q4_0 (float)(n - 8) * d;
 * Q4_1 ((float)n * d) + m (as fma(n, d, m) in the GEMV: the same bits,
 * since n * d is exact); f16 scales and F16
 * weights by vcvtph2ps, BF16 by a 16-bit shift (exact); the packed forms
 * the rule's products from the stored scales (gg_scales), then
 * fma((float)v, ds, -ms) with v = u - off (v * ds is exact, so the fma
 * rounds the difference once, as the rule's subtraction does; Q5_1 the
 * same with + m), or (float)v * ds without a min. So the bits are those of
 * the dequantized f32 B. */
#ifndef HMX_GEMM_G16_X86_H
#define HMX_GEMM_G16_X86_H

#define GG_V (HMX_QG / GX_VL) /* vectors per group of 16 outputs (1 or 2) */

/* The packed forms (src/gemm_quant.h "packed"), properties of each as
 * constants of the instance: bits a value, whether the values are signed
 * (u - off stored, off > 0: Q3_K, Q6_K, Q5_0) or indices into IQ4's table
 * (IQ4_NL, IQ4_XS), the block (256 elements for the K types and IQ4_XS,
 * 32 for Q5_0 / Q5_1 / IQ4_NL), whether the rule adds a min (Q2_K,
 * Q4_K, Q5_K, Q5_1), whether each 16-element half has its own scale (Q2_K,
 * Q3_K, Q6_K), and the bytes of a group's head, chunk scales, chunk and
 * block. */
#define gg_packed(wt) ((wt) >= XW_G16_K2)
#define gg_lut(wt) ((wt) == XW_G16_I4NL || (wt) == XW_G16_I4XS) /* u indexes IQ4's values */
#define gg_bits(wt) ((wt) == XW_G16_K2 ? 2 : (wt) == XW_G16_K3 ? 3 \
                     : (wt) == XW_G16_K4 || gg_lut(wt) ? 4 : (wt) == XW_G16_K6 ? 6 : 5)
#define gg_fields(wt) (32 / gg_bits(wt))
#define gg_signed(wt) ((wt) == XW_G16_K3 || (wt) == XW_G16_K6 || (wt) == XW_G16_P5_0)
#define gg_kq(wt) ((wt) <= XW_G16_K6 || (wt) == XW_G16_I4XS) /* 256-element blocks */
#define gg_kblock(wt) (gg_kq(wt) ? 256 : 32)
#define gg_has_min(wt) ((wt) == XW_G16_K2 || (wt) == XW_G16_K4 || (wt) == XW_G16_K5 || \
                        (wt) == XW_G16_P5_1)
#define gg_halves(wt) ((wt) == XW_G16_K2 || (wt) == XW_G16_K3 || (wt) == XW_G16_K6)
#define gg_head(wt) (gg_kq(wt) ? HMX_QG * 4 * (1 + gg_has_min(wt)) : 0)
#define gg_scale(wt) (HMX_QG * ((wt) == XW_G16_P5_1 ? 4 : 2))
#define gg_chunk(wt) (gg_scale(wt) + HMX_QG * 4 * gg_bits(wt))
#define gg_block(wt) (gg_head(wt) + gg_kblock(wt) / 32 * gg_chunk(wt))

/* Word w of chunk ch, rows l0 .. l0+VL-1. */
#define gg_word(ch, w, l0, wt) \
  xv_as_i(xv_load((const float *)(const void *)((ch) + gg_scale(wt) + ((w) * HMX_QG + (l0)) * 4)))

/* Field i (bits bits at bits * i) of the words x as int32: u - off, sign
 * extended for the signed forms, else u zero-extended. Two shifts, or one
 * at either end of an unsigned word. */
GX_INLINE xv_i gg_field(xv_i x, int i, const int wt) {
  const int bits = gg_bits(wt), top = bits * (i + 1);
  if (gg_signed(wt)) {
    const xv_i up = top == 32 ? x : xv_slli_i(x, 32 - top);
    return xv_srai_i(up, 32 - bits);
  }
  if (top == 32) return xv_srli_i(x, 32 - bits);
  const xv_i down = i == 0 ? x : xv_srli_i(x, bits * i);
  return xv_and_i(down, xv_set1_i((1 << bits) - 1));
}

/* Field i of the words x as f32: IQ4's table value of the field (xv_lut16
 * reads bits 0-3, so one shift and no mask), else gg_field converted
 * (exact). */
GX_INLINE xv_v gg_fval(xv_i x, int i, const int wt) {
  if (gg_lut(wt)) return xv_lut16(i == 0 ? x : xv_srli_i(x, 4 * i), hmx_gguf_iq4_f32);
  return xv_cvt_i(gg_field(x, i, wt));
}

/* Byte k of each 32-bit lane of x, sign-extended to int32. */
GX_INLINE xv_i gg_sbyte(xv_i x, int k) {
  return xv_srai_i(k == 3 ? x : xv_slli_i(x, 24 - 8 * k), 24);
}

/* The 3-, 5- and 6-bit forms' elements 30 and 31 (gemm_quant.h): the
 * string of the words' top bit pairs, word w's at bits 2w, 2w+1 (then
 * gg_field 0, 1). */
GX_INLINE xv_i gg_tops(const unsigned char *ch, int l0, const int wt) {
  xv_i s = xv_srli_i(gg_word(ch, 0, l0, wt), 30);
  for (int w = 1; w < gg_bits(wt); w++)
    s = xv_or_i(s, xv_and_i(xv_srli_i(gg_word(ch, w, l0, wt), 30 - 2 * w), xv_set1_i(3 << (2 * w))));
  return s;
}

/* Element e (< 32) of chunk ch, rows l0 .. l0+VL-1, as f32: v = u - off,
 * or IQ4's value of u. */
GX_INLINE xv_v gg_value(const unsigned char *ch, int e, int l0, const int wt) {
  const int f = gg_fields(wt), nf = f * gg_bits(wt);
  if (e < nf) return gg_fval(gg_word(ch, e / f, l0, wt), e % f, wt);
  return xv_cvt_i(gg_field(gg_tops(ch, l0, wt), e - nf, wt));
}

/* The VL f16 values at p (2-byte aligned in the layout) as f32, exactly. */
#define gg_f16(p) xv_load_f16((const uint16_t *)(const void *)(p))

/* The scale and min term of half h (0 for the types without halves) of
 * chunk c of the packed block blk, rows l0 .. l0+VL-1: the rule's
 * products, formed as hmx_gguf_dequantize forms them (exact):
 * K types ds = d * (float)sc; with a min *mt = -(dmin * (float)m), the
 * minus a sign flip, so that fma(v, ds, mt) is the rule's ds * v - ms
 * rounded once; Q5_0 ds = d; Q5_1 ds = d, *mt = m, fma(u, d, m) being the
 * rule's u * d + m (u * d exact); IQ4_NL ds = d; IQ4_XS ds = d * (float)(sc
 * - 32), as Q3_K's one half. The weight is then fma(v, ds, mt), or v * ds
 * without a min (IQ4: d * value, (d * s) * value, exact products). */
GX_INLINE xv_v gg_scales(const unsigned char *blk, int c, int h, int l0, xv_v *mt, const int wt) {
  const unsigned char *ch = blk + gg_head(wt) + c * gg_chunk(wt);
  if (!gg_kq(wt)) {
    if (gg_has_min(wt)) *mt = gg_f16(ch + HMX_QG * 2 + l0 * 2);
    return gg_f16(ch + l0 * 2);
  }
  const xv_i sf = xv_u16_i(ch + l0 * 2);
  const xv_v d = xv_load((const float *)(const void *)(blk + l0 * 4));
  if (!gg_has_min(wt)) /* Q3_K, Q6_K: the half's signed byte; IQ4_XS the chunk's */
    return xv_mul(d, xv_cvt_i(xv_srai_i(xv_slli_i(sf, h ? 16 : 24), 24)));
  xv_i sc, m;
  if (gg_halves(wt)) { /* Q2_K: the half's byte, sc low nibble, m high */
    const xv_i byte = h ? xv_srli_i(sf, 8) : xv_and_i(sf, xv_set1_i(0xFF));
    sc = xv_and_i(byte, xv_set1_i(15));
    m = xv_srli_i(byte, 4);
  } else { /* Q4_K, Q5_K: the chunk's 6-bit sc (low byte) and m */
    sc = xv_and_i(sf, xv_set1_i(0xFF));
    m = xv_srli_i(sf, 8);
  }
  const xv_v ms = xv_mul(xv_load((const float *)(const void *)(blk + HMX_QG * 4 + l0 * 4)), xv_cvt_i(m));
  *mt = xv_as_v(xv_xor_i(xv_as_i(ms), xv_set1_i((int)0x80000000u)));
  return xv_mul(d, xv_cvt_i(sc));
}

/* The weight of a packed value x (as f32) with its half's scales. */
#define gg_weight(x, ds, mt, wt) (gg_has_min(wt) ? xv_fma((x), (ds), (mt)) : xv_mul((x), (ds)))

/* The M = 1 GEMV's prefetch for the chunk or blocks of 32 elements at blk
 * (bb bytes, one group): with pf_all every line pf bytes ahead (the
 * consecutive ranges tile the stream), else with no distance set one line
 * 8 chunks ahead (then the hardware prefetchers do the rest). */
GX_INLINE void gg_prefetch_block(const unsigned char *blk, int64_t bb, int64_t pf, int pf_all) {
  if (pf_all)
    for (int64_t o = 0; o < bb; o += 64) _mm_prefetch((const char *)(blk + pf + o), _MM_HINT_T0);
  else if (pf == 0)
    __builtin_prefetch(blk + 8 * bb, 0, 2);
}

/* The M = 1 GEMV's prefetch of the next pass (gemv_next_kib, src/tuning.h):
 * the bb bytes at blk + np, the same place of the group the next pass reads
 * (np = ng groups on). Why: with small K a group is a short stream
 * (SmolLM2's Q4_1 FFN, K = 576: 90 lines), and each pass starts ng new
 * ones, which the hardware prefetchers take a while to follow; this has the
 * next pass's lines on their way while this pass computes. */
GX_INLINE void gg_prefetch_next(const unsigned char *blk, int64_t bb, int64_t np) {
  for (int64_t o = 0; o < bb; o += 64) _mm_prefetch((const char *)(blk + np + o), _MM_HINT_T0);
}

/* Bytes of one group of 16 rows (K elements each). */
GX_INLINE size_t gg_group_bytes(int64_t k, const int wt) {
  switch (wt) {
  case XW_G16_Q8_0: return (size_t)(k / 32) * HMX_QG * 34;
  case XW_G16_Q4_0: return (size_t)(k / 32) * HMX_QG * 18;
  case XW_G16_Q4_1: return (size_t)(k / 32) * HMX_QG * 20;
  case XW_G16_F32: return (size_t)k * HMX_QG * 4;
  case XW_G16_K2: case XW_G16_K3: case XW_G16_K4: case XW_G16_K5: case XW_G16_K6:
  case XW_G16_P5_0: case XW_G16_P5_1: case XW_G16_I4NL: case XW_G16_I4XS:
    return (size_t)(k / gg_kblock(wt)) * gg_block(wt);
  default: return (size_t)k * HMX_QG * 2;
  }
}

/* Rows l0 .. l0+VL-1 of a group (base gb) at element p, decoded. */
GX_INLINE xv_v gg_load(const unsigned char *gb, int64_t p, int l0, const int wt) {
  if (wt == XW_G16_F32) return xv_load((const float *)(const void *)(gb + (p * HMX_QG + l0) * 4));
  if (wt == XW_G16_F16) return gg_f16(gb + (p * HMX_QG + l0) * 2);
  if (wt == XW_G16_BF16) return xv_load_bf16((const uint16_t *)(const void *)(gb + (p * HMX_QG + l0) * 2));
  const int64_t j = p % 32;
  if (gg_packed(wt)) { /* the rule on the packed operands (gg_scales) */
    const unsigned char *blk = gb + (p / gg_kblock(wt)) * gg_block(wt);
    const int c = (int)(p % gg_kblock(wt)) / 32;
    xv_v mt = xv_zero();
    const xv_v ds = gg_scales(blk, c, gg_halves(wt) ? (int)j / 16 : 0, l0, &mt, wt);
    const xv_v x = gg_value(blk + gg_head(wt) + c * gg_chunk(wt), (int)j, l0, wt);
    return gg_weight(x, ds, mt, wt);
  }
  if (wt == XW_G16_Q8_0) {
    const unsigned char *blk = gb + (p / 32) * HMX_QG * 34;
    return xv_mul(xv_cvt_i(xv_i8_i(blk + 2 * HMX_QG + j * HMX_QG + l0)), gg_f16(blk + l0 * 2));
  }
  const int q41 = wt == XW_G16_Q4_1;
  const unsigned char *blk = gb + (p / 32) * HMX_QG * (q41 ? 20 : 18);
  const xv_i u = xv_u8_i(blk + (q41 ? 4 : 2) * HMX_QG + (j & 15) * HMX_QG + l0);
  const xv_i n = j < 16 ? xv_and_i(u, xv_set1_i(0x0F)) : xv_srli_i(u, 4);
  if (!q41) return xv_mul(xv_cvt_i(xv_sub_i(n, xv_set1_i(8))), gg_f16(blk + l0 * 2));
  return xv_add(xv_mul(xv_cvt_i(n), gg_f16(blk + l0 * 2)), gg_f16(blk + HMX_QG * 2 + l0 * 2));
}

/* Groups of 16 outputs the M = 1 GEMV takes side by side. One group is one
 * fma chain per vector (p in order, §gemm), so a lone group waits out the
 * fma latency at every element; GG_SIDE groups are GG_SIDE independent
 * chains and as many sequential streams, which the hardware prefetchers
 * follow. Measured on Zen 4 (session 30, docs/results/session30): f32 with
 * 16 MiB of weights cold 108-113 -> 114-118% of the copy, in cache 0.30 ->
 * 0.24 ms; Q8_0 / Q4_1 / BF16 K = N = 2048 in cache 1.2-1.9x faster on
 * avx2 and avx512. xs_decode_g16 (swiglu_x86.h) streams its groups the
 * same way. */
#define GG_SIDE 4

/* One element p of gg_gemv_side's float path: acc[q] = fma(a[p], W, acc[q])
 * for its ng groups (§gemm: p in order in every chain). */
GX_INLINE void gg_fma_element(gx_v acc[GG_SIDE][GG_V], const unsigned char *const gb[GG_SIDE],
                              const float *a, int64_t p, const int ng, const int wt) {
  const gx_v av = gx_bcast(a + p);
  for (int q = 0; q < ng; q++)
    for (int v = 0; v < GG_V; v++)
      acc[q][v] = gx_fma(av, gg_load(gb[q], p, v * GX_VL, wt), acc[q][v]);
}

/* M = 1: outputs j .. j + 16 ng (ng <= GG_SIDE, a constant in each
 * instance; the last group may have fewer than 16 rows, j + 16 ng past
 * jend), GG_V accumulators per group, pf the streams' prefetch distance
 * in bytes (xw_g16_pf_bytes; 0: none), nnext the groups of the next pass
 * (ng groups on) whose lines this pass prefetches (gg_prefetch_next; 0:
 * none); for each element p in order, one
 * broadcast of a[p] and one fma per vector (§gemm). The block scales are
 * loaded once per block; within a block the 32 elements go in order (Q4:
 * low nibbles of the 16 byte rows, then the high nibbles). */
GX_INLINE void gg_gemv_side(const hmx_gemm_args *g, const unsigned char *b, size_t gbytes,
                            const float *bias_pad, int64_t j, int64_t jend, const int ng,
                            int64_t pf, const int nnext, const int wt) {
  const int64_t k = g->k;
  const int64_t np = (int64_t)ng * (int64_t)gbytes; /* the next pass's groups (nnext of them) */
  const float *a = g->a;
  const unsigned char *gb[GG_SIDE];
  gx_v acc[GG_SIDE][GG_V];
  for (int q = 0; q < ng; q++) {
    gb[q] = b + (size_t)(j / HMX_QG + q) * gbytes;
    __builtin_prefetch(gb[q] + (size_t)ng * gbytes, 0, 2); /* the next pass's group */
    for (int v = 0; v < GG_V; v++) /* bias or +0 */
      acc[q][v] = gx_loadu(bias_pad + j + q * HMX_QG + v * GX_VL);
  }
  if (wt == XW_G16_F16 || wt == XW_G16_BF16 || wt == XW_G16_F32) {
    /* Elements in order; every `step` elements (one cache line of each
     * group: 1 for f32, 2 for 16-bit) each stream prefetches pf bytes ahead
     * (xw_g16_pf_bytes), up to pf_end, and goes on without after it. */
    const int64_t es = wt == XW_G16_F32 ? 4 : 2, step = 64 / (HMX_QG * es);
    const int64_t pf_end = xw_g16_pf_end(k, es, pf);
    int64_t p = 0;
    for (; p + step <= pf_end; p += step) {
      for (int q = 0; q < ng; q++)
        _mm_prefetch((const char *)(gb[q] + p * HMX_QG * es + pf), _MM_HINT_T0);
      for (int e = 0; e < step; e++) gg_fma_element(acc, gb, a, p + e, ng, wt);
    }
    if (nnext > 0) /* (pf and nnext are never both set: xw_g16_next_on) */
      for (; p + step <= k; p += step) {
        for (int q = 0; q < nnext; q++) gg_prefetch_next(gb[q] + p * HMX_QG * es, 64, np);
        for (int e = 0; e < step; e++) gg_fma_element(acc, gb, a, p + e, ng, wt);
      }
    for (; p < k; p++) gg_fma_element(acc, gb, a, p, ng, wt);
  } else if (gg_packed(wt)) {
    /* block by block (256 elements, or 32 for Q5_0 / Q5_1; prefetched as
     * the GGUF block types below), chunk by chunk (32 elements), one vector
     * of rows at a time (all GG_V at once spilled registers on avx2): the
     * scales of the chunk's halves (gg_scales) once, then its elements in
     * order, word by word, each a field of its word (two shifts), the 3-,
     * 5- and 6-bit forms' last two from the words' top bits; the ng groups
     * side by side (ng independent fma chains) */
    const int64_t bb = gg_block(wt), kb = gg_kblock(wt);
    const int bits = gg_bits(wt), f = gg_fields(wt), nf = f * bits, nh = gg_halves(wt) ? 2 : 1;
    for (int64_t p0 = 0; p0 < k; p0 += kb) {
      const unsigned char *bk[GG_SIDE];
      const int pf_all = pf > 0 && (p0 / kb) * bb + pf + bb <= (int64_t)gbytes;
      for (int q = 0; q < ng; q++) {
        bk[q] = gb[q] + (p0 / kb) * bb;
        gg_prefetch_block(bk[q], bb, pf, pf_all);
      }
      for (int c = 0; c < kb / 32; c++) {
        /* the next pass's block a chunk's share at a time (all of a K
         * type's 36-44 lines a group at the block's start measured 3% slower
         * on the Zen 3 VM, tiny Q4_K_M decode) */
        if (nnext > 0) {
          const int64_t o0 = bb * c / (kb / 32) / 64 * 64, o1 = bb * (c + 1) / (kb / 32);
          for (int q = 0; q < nnext; q++) gg_prefetch_next(bk[q] + o0, o1 - o0, np);
        }
        for (int v = 0; v < GG_V; v++) {
          xv_v ds[2][GG_SIDE], mt[2][GG_SIDE];
          for (int h = 0; h < nh; h++)
            for (int q = 0; q < ng; q++) {
              mt[h][q] = xv_zero();
              ds[h][q] = gg_scales(bk[q], c, h, v * GX_VL, &mt[h][q], wt);
            }
#define GG_PACKED_ELEMENT(e, vals)                                                            \
  do {                                                                                       \
    const gx_v av = gx_bcast(a + p0 + 32 * c + (e));                                         \
    const int gg_h = nh == 2 && (e) >= 16;                                                   \
    for (int q = 0; q < ng; q++)                                                             \
      acc[q][v] = gx_fma(av, gg_weight(vals, ds[gg_h][q], mt[gg_h][q], wt),                  \
                         acc[q][v]);                                                         \
  } while (0)
#ifdef XV_HAS_LUT16_BYTES
          if (gg_lut(wt)) {
            /* IQ4 on avx2: the table's int8 values of a word's 8 fields by
             * two vpshufb (even fields, odd fields: a byte each), then each
             * element's byte sign-extended (exact) and converted: 5.4
             * operations a vector of weights where xv_lut16's two permutes
             * and blend take 7 (session 51); elements in order */
            const xv_i tab = xv_lut16_table(hmx_gguf_iq4_values), nib = xv_set1_i(0x0F0F0F0F);
            for (int w = 0; w < bits; w++) {
              xv_i lo[GG_SIDE], hi[GG_SIDE];
              for (int q = 0; q < ng; q++) {
                const xv_i x = gg_word(bk[q] + gg_head(wt) + c * gg_chunk(wt), w, v * GX_VL, wt);
                lo[q] = xv_lut16_bytes(xv_and_i(x, nib), tab);
                hi[q] = xv_lut16_bytes(xv_and_i(xv_srli_i(x, 4), nib), tab);
              }
              HMX_UNROLL(8)
              for (int i = 0; i < 8; i++)
                GG_PACKED_ELEMENT(w * 8 + i, xv_cvt_i(gg_sbyte(i % 2 ? hi[q] : lo[q], i / 2)));
            }
            continue;
          }
#endif
          for (int w = 0; w < bits; w++) {
            xv_i words[GG_SIDE];
            for (int q = 0; q < ng; q++)
              words[q] = gg_word(bk[q] + gg_head(wt) + c * gg_chunk(wt), w, v * GX_VL, wt);
            HMX_UNROLL(16)
            for (int i = 0; i < f; i++) GG_PACKED_ELEMENT(w * f + i, gg_fval(words[q], i, wt));
          }
          if (nf < 32) { /* elements 30, 31 */
            xv_i tops[GG_SIDE];
            for (int q = 0; q < ng; q++)
              tops[q] = gg_tops(bk[q] + gg_head(wt) + c * gg_chunk(wt), v * GX_VL, wt);
            GG_PACKED_ELEMENT(nf, xv_cvt_i(gg_field(tops[q], 0, wt)));
            GG_PACKED_ELEMENT(nf + 1, xv_cvt_i(gg_field(tops[q], 1, wt)));
          }
#undef GG_PACKED_ELEMENT
        }
      }
    }
  } else {
    const int64_t bs = wt == XW_G16_Q8_0 ? 34 : wt == XW_G16_Q4_0 ? 18 : 20;
    const int64_t bb = HMX_QG * bs; /* bytes of the group's 16 blocks of 32 elements */
    for (int64_t p0 = 0; p0 < k; p0 += 32) {
      xv_v d[GG_SIDE][GG_V], mn[GG_SIDE][GG_V];
      const unsigned char *qs[GG_SIDE];
      /* gg_prefetch_block: every line pf bytes ahead while that is in the group */
      const int pf_all = pf > 0 && (p0 / 32) * bb + pf + bb <= (int64_t)gbytes;
      for (int q = 0; q < ng; q++) {
        const unsigned char *blk = gb[q] + (p0 / 32) * bb;
        gg_prefetch_block(blk, bb, pf, pf_all);
        if (q < nnext) gg_prefetch_next(blk, bb, np);
        qs[q] = blk + (wt == XW_G16_Q4_1 ? 4 : 2) * HMX_QG;
        for (int v = 0; v < GG_V; v++) {
          d[q][v] = gg_f16(blk + v * GX_VL * 2);
          mn[q][v] = wt == XW_G16_Q4_1 ? gg_f16(blk + HMX_QG * 2 + v * GX_VL * 2) : xv_zero();
        }
      }
      if (wt == XW_G16_Q8_0) {
        for (int jj = 0; jj < 32; jj++) {
          const gx_v av = gx_bcast(a + p0 + jj);
          for (int q = 0; q < ng; q++)
            for (int v = 0; v < GG_V; v++)
              acc[q][v] = gx_fma(av, xv_mul(xv_cvt_i(xv_i8_i(qs[q] + jj * HMX_QG + v * GX_VL)), d[q][v]),
                                 acc[q][v]);
        }
      } else {
        for (int half = 0; half < 2; half++) /* elements 0..15 (low nibbles), then 16..31 */
          for (int jj = 0; jj < 16; jj++) {
            const gx_v av = gx_bcast(a + p0 + half * 16 + jj);
            for (int q = 0; q < ng; q++)
              for (int v = 0; v < GG_V; v++) {
                const xv_i u = xv_u8_i(qs[q] + jj * HMX_QG + v * GX_VL);
                const xv_i n = half ? xv_srli_i(u, 4) : xv_and_i(u, xv_set1_i(0x0F));
                /* Q4_1: fma(n, d, m), which NUMERICS allows: n * d is exact,
                 * so the fma rounds the same sum once, as the add does */
                const xv_v w = wt == XW_G16_Q4_1 ? xv_fma(xv_cvt_i(n), d[q][v], mn[q][v])
                                                 : xv_mul(xv_cvt_i(xv_sub_i(n, xv_set1_i(8))), d[q][v]);
                acc[q][v] = gx_fma(av, w, acc[q][v]);
              }
          }
      }
    }
  }
  for (int q = 0; q < ng; q++) {
    const int64_t j1 = j + q * HMX_QG, rows = jend - j1 < HMX_QG ? jend - j1 : HMX_QG;
    for (int v = 0; v < GG_V; v++)
      gx_storeu_n(g->c + j1 + v * GX_VL, acc[q][v], gx_clamp_lanes((int)rows - v * GX_VL));
  }
}

/* M = 1: y[j0 .. j0+nt) (j0 a multiple of 16: thread tiles are whole NR),
 * GG_SIDE groups of 16 outputs at a time, then the 1 .. GG_SIDE - 1 groups
 * left side by side too: the groups are independent outputs. */
GX_INLINE void gx_gemv_g16(const hmx_gemm_args *g, const void *bv, const float *bias_pad,
                           int64_t j0, int64_t nt, const int wt) {
  _Static_assert(GG_SIDE == 4, "the tail below takes 1 .. 3 groups");
  const unsigned char *b = bv;
  const size_t gbytes = gg_group_bytes(g->k, wt);
  const int64_t jend = j0 + nt;
  /* the streams' prefetch distance, by the size of the whole matrix */
  const int64_t groups = (g->n + HMX_QG - 1) / HMX_QG;
  const int64_t pf = xw_g16_pf_bytes(groups * (int64_t)gbytes);
  /* the next pass's prefetch: each pass but the last prefetches the groups
   * of the next one that are in this thread's range (jend) */
  const int next_on = xw_g16_next_on(GG_SIDE * (int64_t)gbytes, pf);
  const int64_t gend = (jend + HMX_QG - 1) / HMX_QG; /* groups end */
  int64_t j = j0;
  for (; j + (GG_SIDE - 1) * HMX_QG < jend; j += GG_SIDE * HMX_QG) {
    const int64_t after = gend - (j / HMX_QG + GG_SIDE); /* groups after this pass */
    const int nnext = !next_on ? 0 : after < GG_SIDE ? (int)after : GG_SIDE;
    gg_gemv_side(g, b, gbytes, bias_pad, j, jend, GG_SIDE, pf, nnext, wt);
  }
  const int64_t left = (jend - j + HMX_QG - 1) / HMX_QG; /* groups, the last maybe partial */
  if (left == 3) gg_gemv_side(g, b, gbytes, bias_pad, j, jend, 3, pf, 0, wt);
  else if (left == 2) gg_gemv_side(g, b, gbytes, bias_pad, j, jend, 2, pf, 0, wt);
  else if (left == 1) gg_gemv_side(g, b, gbytes, bias_pad, j, jend, 1, pf, 0, wt);
}

/* Pack B[p0 .. p0+kc, j0 .. j0+nb) into NR-wide panels (as gx_pack_b_nt;
 * j0 a multiple of 16): each vector of a panel row is one gg_load. Lanes
 * past the matrix's groups are +0; lanes past nb are never stored. */
GX_INLINE void gx_pack_b_g16(const void *bv, int64_t k, int64_t n, int64_t p0, int64_t kc,
                             int64_t j0, int64_t nb, float *dst, const int wt) {
  const unsigned char *b = bv;
  const size_t gbytes = gg_group_bytes(k, wt);
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  for (int64_t jp = 0; jp < nb; jp += GX_NR) {
    float *d = dst + jp * kc;
    for (int64_t p = 0; p < kc; p++)
      for (int v = 0; v < GX_NV; v++) {
        const int64_t col = j0 + jp + v * GX_VL, grp = col / HMX_QG;
        const gx_v w = grp < groups ? gg_load(b + (size_t)grp * gbytes, p0 + p,
                                              (int)(col % HMX_QG), wt)
                                    : gx_zero();
        gx_storeu(d + p * GX_NR + v * GX_VL, w);
      }
  }
}

#endif
