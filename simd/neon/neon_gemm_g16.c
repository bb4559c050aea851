/* neon gemm with B in the G16 layout (src/gemm_quant.h: rows in groups of
 * 16, each element's 16 values adjacent; HMX_WG16_GEMM, src/backend.h) of
 * F32, F16, BF16, Q8_0, Q4_0, Q4_1 and the packed forms of Q2_K .. Q6_K,
 * Q5_0, Q5_1, IQ4_NL and IQ4_XS: the layout a GGUF model keeps its matrices
 * in (src/model_gguf.c) and hmx_model_prepare gives float projections.
 *
 * Why: without it every call dequantized the whole matrix to an f32 copy
 * on the host (src/gemm_quant.c's fallback) and neon_gemm.c then transposed
 * that copy, so each decoded token wrote two f32 copies of every weight.
 * Here a group of 16 outputs is decoded as it is used, and element p's 16
 * weights are 4 vectors with no transpose.
 *
 * The bits (docs/NUMERICS.md §gemm, "GGUF dequantization"): each weight is
 * decoded by the rule, lane by lane, with the operations the rule names
 * (hmx_packed_row is its scalar form for the packed forms): Q8_0 (float)q *
 * d; Q4_0 (float)(n - 8) * d; Q4_1 ((float)n * d) + m; the packed forms
 * ds * (float)v (or ds * T[u] for IQ4), then + m (Q5_1) or - ms (Q2_K, Q4_K,
 * Q5_K), with ds = d * (float)sc and ms = dmin * (float)m formed as
 * hmx_packed_row forms them; f16 by fcvtl and bf16 by a 16-bit shift, both
 * exact. Each output then takes acc = fma(a[p], w, acc) for p = 0 .. K-1 in
 * order from bias or +0 (vfmaq_n_f32 / the tiles of neon_gemm.c), so the
 * bits are those of "dequantize, then the f32 gemm". Threads split the
 * groups (independent outputs). */
#include "neon_gemm_g16.h"
#include "gemm_quant.h"
#include "gguf.h"
#include "internal.h"
#include "parallel.h"
#include "unroll.h"

#include <arm_neon.h>
#include <stdlib.h>
#include <string.h>

#define KC 32 /* elements of a chunk: a block of the 32-element types, a packed chunk */

/* The decoders below are written once with the ggml type as an argument
 * and instantiated per type (decode_chunk's switch): inlined with a
 * constant type, each instance's bits, shifts and element loop are
 * compile-time constants (the generic loop divided by the fields a word at
 * every element: 9.8 instructions a weight in a Q4_K_M decode step under
 * qemu, docs/results/session55). */
#if defined(__GNUC__) || defined(__clang__)
#define NG_INLINE static inline __attribute__((always_inline))
#else
#define NG_INLINE static inline
#endif

/* What a kernel needs to know of a G16 type. */
typedef struct g16_type {
  uint32_t type;
  hmx_packed_geom pg;  /* its geometry, for the packed forms */
  size_t group_bytes;  /* bytes of one group of 16 rows (K elements) */
} g16_type;

static g16_type g16_type_of(uint32_t type, int64_t k) {
  g16_type t;
  memset(&t, 0, sizeof t);
  t.type = type;
  if (hmx_qlayout_g16_packed(type)) hmx_packed_geometry(type, &t.pg);
  t.group_bytes = hmx_qlayout_g16_bytes(type, HMX_QG, k);
  return t;
}

/* 4 f16 values at p as f32, exactly (fcvtl; a signaling NaN comes out
 * quiet, which changes no result: any NaN operand gives a NaN). The loads
 * go through memcpy: GGUF block data may be unaligned (gemm_quant.h). */
static inline float32x4_t f16x4(const unsigned char *p) {
  uint16_t h[4];
  memcpy(h, p, sizeof h);
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

static inline float32x4_t f32x4(const unsigned char *p) {
  float f[4];
  memcpy(f, p, sizeof f);
  return vld1q_f32(f);
}

static inline uint32x4_t u32x4(const unsigned char *p) {
  uint32_t u[4];
  memcpy(u, p, sizeof u);
  return vld1q_u32(u);
}

/* 16 bytes as four int32x4 (signed: int8; else uint8), lanes in order. */
static inline void widen16(uint8x16_t b, int sgn, int32x4_t out[4]) {
  if (sgn) {
    const int16x8_t lo = vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(b)));
    const int16x8_t hi = vmovl_s8(vget_high_s8(vreinterpretq_s8_u8(b)));
    out[0] = vmovl_s16(vget_low_s16(lo)); out[1] = vmovl_s16(vget_high_s16(lo));
    out[2] = vmovl_s16(vget_low_s16(hi)); out[3] = vmovl_s16(vget_high_s16(hi));
  } else {
    const uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_u8(vget_high_u8(b));
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    out[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(lo)));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    out[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(hi)));
  }
}

/* Where a decoded weight goes. Store (M > 1): w[e * 16 + r], the panel
 * of a chunk. Fuse (M = 1, the GEMV): straight into the group's four
 * accumulators, acc[v] = fma(a[e], w, acc[v]) for rows 4v .. 4v+3 (§gemm),
 * so the chunk is never written and read back; every decoder yields each
 * row's elements in increasing e, so each accumulator still takes its
 * fmas for p in order. */
typedef struct ng_sink {
  float *w;            /* store: the chunk's [32][16] */
  float32x4_t acc[4];  /* fuse: the accumulators of the group's 16 outputs */
  const float *a;      /* fuse: a[p0 ..], the chunk's activations */
} ng_sink;

/* Q8_0, Q4_0, Q4_1: the 32 elements of block p0 / 32 of group gb, e in
 * order (Q4: the low nibbles of bytes 0 .. 15, then the high ones). */
NG_INLINE void decode_block32(const unsigned char *gb, int64_t p0, ng_sink *s, const uint32_t type,
                              const int fuse) {
  float32x4_t acc[4];
  HMX_UNROLL(4)
  for (int v = 0; v < 4; v++) acc[v] = s->acc[v];
#define NG_SINK(e, v, y)                                        \
  do {                                                          \
    if (fuse) acc[v] = vfmaq_n_f32(acc[v], (y), s->a[e]);       \
    else vst1q_f32(s->w + (e) * 16 + 4 * (v), (y));             \
  } while (0)
  if (type == HMX_GGML_Q8_0) {
    const unsigned char *blk = gb + (size_t)(p0 / 32) * HMX_QG * 34;
    float32x4_t d[4];
    HMX_UNROLL(4)
    for (int v = 0; v < 4; v++) d[v] = f16x4(blk + 8 * v);
    for (int e = 0; e < 32; e++) {
      int32x4_t q[4];
      widen16(vld1q_u8(blk + 2 * HMX_QG + e * HMX_QG), 1, q);
      HMX_UNROLL(4)
      for (int v = 0; v < 4; v++) NG_SINK(e, v, vmulq_f32(vcvtq_f32_s32(q[v]), d[v]));
    }
  } else {
    const int q41 = type == HMX_GGML_Q4_1;
    const unsigned char *blk = gb + (size_t)(p0 / 32) * HMX_QG * (q41 ? 20 : 18);
    const unsigned char *qs = blk + (q41 ? 4 : 2) * HMX_QG;
    float32x4_t d[4], m[4];
    HMX_UNROLL(4)
    for (int v = 0; v < 4; v++) {
      d[v] = f16x4(blk + 8 * v);
      m[v] = q41 ? f16x4(blk + 2 * HMX_QG + 8 * v) : vdupq_n_f32(0.0f);
    }
    const int32x4_t eight = vdupq_n_s32(8);
    for (int half = 0; half < 2; half++)
      for (int j = 0; j < 16; j++) { /* element half * 16 + j: a nibble of byte j */
        const uint8x16_t u = vld1q_u8(qs + j * HMX_QG);
        int32x4_t n[4];
        widen16(half ? vshrq_n_u8(u, 4) : vandq_u8(u, vdupq_n_u8(0x0F)), 0, n);
        HMX_UNROLL(4)
        for (int v = 0; v < 4; v++) {
          const float32x4_t y = q41 ? vaddq_f32(vmulq_f32(vcvtq_f32_s32(n[v]), d[v]), m[v])
                                    : vmulq_f32(vcvtq_f32_s32(vsubq_s32(n[v], eight)), d[v]);
          NG_SINK(half * 16 + j, v, y);
        }
      }
  }
#undef NG_SINK
  HMX_UNROLL(4)
  for (int v = 0; v < 4; v++) s->acc[v] = acc[v];
}

/* Field i of the words x (gemm_quant.h "packed"): bits bits at bits * i,
 * sign-extended where the form stores u - off, else zero-extended. */
NG_INLINE int32x4_t field(uint32x4_t x, int i, int bits, int sgn) {
  if (sgn) {
    const int32x4_t up = vreinterpretq_s32_u32(vshlq_u32(x, vdupq_n_s32(32 - bits * (i + 1))));
    return vshlq_s32(up, vdupq_n_s32(bits - 32)); /* arithmetic shift right */
  }
  const uint32x4_t down = vshlq_u32(x, vdupq_n_s32(-bits * i));
  return vreinterpretq_s32_u32(vandq_u32(down, vdupq_n_u32((1u << bits) - 1u)));
}

/* IQ4's value T[u] of each lane's u (0 .. 15) as f32: one table lookup of
 * the lanes' low bytes (the other bytes' index 0xFF reads 0), then the byte
 * sign-extended and converted (exact). */
NG_INLINE float32x4_t iq4_value(int32x4_t u, int8x16_t table) {
  const uint32x4_t idx = vorrq_u32(vreinterpretq_u32_s32(u), vdupq_n_u32(0xFFFFFF00u));
  const int32x4_t b = vreinterpretq_s32_s8(vqtbl1q_s8(table, vreinterpretq_u8_u32(idx)));
  return vcvtq_f32_s32(vshrq_n_s32(vshlq_n_s32(b, 24), 24));
}

/* The packed forms: chunk p0 / 32 (32 elements) of group gb by
 * hmx_packed_row's rule, four rows at a time, e in order for each. */
NG_INLINE void decode_packed(const hmx_packed_geom *g, const unsigned char *gb, int64_t p0,
                             ng_sink *s, const uint32_t type, const int fuse) {
  /* hmx_packed_geometry's properties, as constants of the instance */
  const int lut = type == HMX_GGML_IQ4_NL || type == HMX_GGML_IQ4_XS;
  const int bits = type == HMX_GGML_Q2_K ? 2 : type == HMX_GGML_Q3_K ? 3
                 : type == HMX_GGML_Q4_K || lut ? 4 : type == HMX_GGML_Q6_K ? 6 : 5;
  const int sgn = type == HMX_GGML_Q3_K || type == HMX_GGML_Q5_0 || type == HMX_GGML_Q6_K;
  const int has_min = type == HMX_GGML_Q2_K || type == HMX_GGML_Q4_K || type == HMX_GGML_Q5_K ||
                      type == HMX_GGML_Q5_1;
  const int halves = type == HMX_GGML_Q2_K || type == HMX_GGML_Q3_K || type == HMX_GGML_Q6_K;
  const int kblock = type == HMX_GGML_Q5_0 || type == HMX_GGML_Q5_1 || type == HMX_GGML_IQ4_NL
                     ? 32 : 256;
  const unsigned char *blk = gb + (size_t)(p0 / kblock) * (size_t)g->block;
  const int c = (int)(p0 % kblock) / 32;
  const unsigned char *ch = blk + g->head + (size_t)c * (size_t)g->chunk;
  const int f = 32 / bits, nf = f * bits;
  const int nh = halves ? 2 : 1, q2k = type == HMX_GGML_Q2_K, q51 = type == HMX_GGML_Q5_1;
  const int8x16_t table = vld1q_s8(hmx_gguf_iq4_values);
  for (int v = 0; v < 4; v++) { /* rows 4v .. 4v+3 */
    const int r0 = 4 * v;
    float32x4_t ds[2], ms[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    uint16_t sf16[4];
    memcpy(sf16, ch + 2 * r0, sizeof sf16);
    const uint32x4_t sf = vmovl_u16(vld1_u16(sf16));
    for (int h = 0; h < nh; h++) {
      if (kblock == 32) { /* Q5_0, Q5_1, IQ4_NL: d (Q5_1: and m) */
        ds[h] = f16x4(ch + 2 * r0);
        if (q51) ms[h] = f16x4(ch + HMX_QG * 2 + 2 * r0);
        continue;
      }
      const float32x4_t d = f32x4(blk + 4 * r0);
      const uint32x4_t byte = vandq_u32(vshlq_u32(sf, vdupq_n_s32(-8 * h)), vdupq_n_u32(0xFF));
      if (q2k) { /* d * sc, dmin * m: the byte's nibbles */
        const float32x4_t dmin = f32x4(blk + HMX_QG * 4 + 4 * r0);
        ds[h] = vmulq_f32(d, vcvtq_f32_u32(vandq_u32(byte, vdupq_n_u32(15))));
        ms[h] = vmulq_f32(dmin, vcvtq_f32_u32(vshrq_n_u32(byte, 4)));
      } else if (has_min) { /* Q4_K, Q5_K: the chunk's 6-bit sc, m */
        const float32x4_t dmin = f32x4(blk + HMX_QG * 4 + 4 * r0);
        ds[h] = vmulq_f32(d, vcvtq_f32_u32(byte));
        ms[h] = vmulq_f32(dmin, vcvtq_f32_u32(vshrq_n_u32(sf, 8)));
      } else { /* Q3_K, Q6_K, IQ4_XS: d * s, s the signed byte */
        const int32x4_t sc = vshrq_n_s32(vshlq_n_s32(vreinterpretq_s32_u32(byte), 24), 24);
        ds[h] = vmulq_f32(d, vcvtq_f32_s32(sc));
      }
    }
    uint32x4_t words[6]; /* bits <= 6 of them */
    for (int k = 0; k < 6; k++)
      words[k] = k < bits ? u32x4(ch + g->scale + (size_t)(k * HMX_QG + r0) * 4) : vdupq_n_u32(0);
    uint32x4_t tops = vdupq_n_u32(0); /* elements 30, 31 of the 3-, 5- and 6-bit forms */
    if (nf < 32) {
      tops = vshrq_n_u32(words[0], 30);
      for (int k = 1; k < bits; k++)
        tops = vorrq_u32(tops, vandq_u32(vshlq_u32(words[k], vdupq_n_s32(2 * k - 30)),
                                         vdupq_n_u32(3u << (2 * k))));
    }
    float32x4_t acc = s->acc[v];
    HMX_UNROLL(32)
    for (int e = 0; e < 32; e++) {
      const int32x4_t u = e < nf ? field(words[e / f], e % f, bits, sgn)
                                 : field(tops, e - nf, bits, sgn);
      const int h = halves ? e / 16 : 0;
      const float32x4_t x = lut ? iq4_value(u, table) : vcvtq_f32_s32(u);
      const float32x4_t p = vmulq_f32(ds[h], x);
      const float32x4_t y = q51 ? vaddq_f32(p, ms[h]) : has_min ? vsubq_f32(p, ms[h]) : p;
      if (fuse) acc = vfmaq_n_f32(acc, y, s->a[e]);
      else vst1q_f32(s->w + e * 16 + r0, y);
    }
    s->acc[v] = acc;
  }
}

/* The 16-bit and f32 forms: elements p0 .. p0+kc-1 of group gb, in order. */
NG_INLINE void decode_float(const unsigned char *gb, int64_t p0, int kc, ng_sink *s,
                            const uint32_t type, const int fuse) {
  float32x4_t acc[4];
  HMX_UNROLL(4)
  for (int v = 0; v < 4; v++) acc[v] = s->acc[v];
  for (int e = 0; e < kc; e++) {
    HMX_UNROLL(4)
    for (int v = 0; v < 4; v++) {
      const unsigned char *at = gb + ((size_t)(p0 + e) * HMX_QG + 4 * v) * (type == HMX_GGML_F32 ? 4 : 2);
      float32x4_t y;
      if (type == HMX_GGML_F32) {
        y = f32x4(at);
      } else if (type == HMX_GGML_F16) {
        y = f16x4(at);
      } else { /* BF16: the high 16 bits */
        uint16_t h[4];
        memcpy(h, at, sizeof h);
        y = vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(h), 16));
      }
      if (fuse) acc[v] = vfmaq_n_f32(acc[v], y, s->a[e]);
      else vst1q_f32(s->w + e * 16 + 4 * v, y);
    }
  }
  HMX_UNROLL(4)
  for (int v = 0; v < 4; v++) s->acc[v] = acc[v];
}

/* Elements p0 .. p0+kc-1 (kc <= KC; a whole block or chunk for the block
 * types) of group gb into the sink: one instance per type and mode. */
NG_INLINE void decode_chunk(const g16_type *t, const unsigned char *gb, int64_t p0, int kc,
                            ng_sink *s, const int fuse) {
  switch (t->type) {
#define NG_FLOAT(ty) case ty: decode_float(gb, p0, kc, s, ty, fuse); return;
#define NG_BLOCK(ty) case ty: decode_block32(gb, p0, s, ty, fuse); return;
#define NG_PACKED(ty) case ty: decode_packed(&t->pg, gb, p0, s, ty, fuse); return;
  NG_FLOAT(HMX_GGML_F32) NG_FLOAT(HMX_GGML_F16) NG_FLOAT(HMX_GGML_BF16)
  NG_BLOCK(HMX_GGML_Q8_0) NG_BLOCK(HMX_GGML_Q4_0) NG_BLOCK(HMX_GGML_Q4_1)
  NG_PACKED(HMX_GGML_Q2_K) NG_PACKED(HMX_GGML_Q3_K) NG_PACKED(HMX_GGML_Q4_K)
  NG_PACKED(HMX_GGML_Q5_K) NG_PACKED(HMX_GGML_Q6_K) NG_PACKED(HMX_GGML_Q5_0)
  NG_PACKED(HMX_GGML_Q5_1) NG_PACKED(HMX_GGML_IQ4_NL) NG_PACKED(HMX_GGML_IQ4_XS)
#undef NG_FLOAT
#undef NG_BLOCK
#undef NG_PACKED
  default: return; /* not a G16 type: hmx_neon_gemm_g16 refuses it first */
  }
}

static void decode_store(const g16_type *t, const unsigned char *gb, int64_t p0, int kc, float *w) {
  ng_sink s;
  memset(&s, 0, sizeof s);
  s.w = w;
  decode_chunk(t, gb, p0, kc, &s, 0);
}

/* M = 1: outputs j0 .. j0+15 of group gb (cols of them real), chunk by
 * chunk: the four accumulators (from bias or +0) carried over K, each
 * weight fma'd as it is decoded (§gemm: p in order). */
static void gemv_group(const g16_type *t, const unsigned char *gb, const float *a, int64_t k,
                       const float *bias16, float *c, int cols) {
  ng_sink s;
  s.w = NULL;
  for (int v = 0; v < 4; v++) s.acc[v] = vld1q_f32(bias16 + 4 * v);
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    s.a = a + p0;
    decode_chunk(t, gb, p0, k - p0 < KC ? (int)(k - p0) : KC, &s, 1);
  }
  float out[16];
  for (int v = 0; v < 4; v++) vst1q_f32(out + 4 * v, s.acc[v]);
  memcpy(c, out, (size_t)cols * sizeof *c);
}

/* M > 1: the whole group decoded once into panel ([K][16]; F32 read in
 * place), then every row through neon_gemm.c's tiles (4 rows x 16 columns,
 * the K loop never split). */
static void gemm_group(const g16_type *t, const unsigned char *gb, const hmx_gemm_args *g,
                       const float *bias16, int64_t j0, int cols, float *panel) {
  const int64_t m = g->m, k = g->k, n = g->n;
  const float *b = (const float *)(const void *)gb;
  if (t->type != HMX_GGML_F32) {
    for (int64_t p0 = 0; p0 < k; p0 += KC)
      decode_store(t, gb, p0, k - p0 < KC ? (int)(k - p0) : KC, panel + p0 * 16);
    b = panel;
  }
  for (int64_t i0 = 0; i0 < m; i0 += HMX_NEON_GEMM_MR) {
    const int mr = (int)(m - i0 < HMX_NEON_GEMM_MR ? m - i0 : HMX_NEON_GEMM_MR);
    if (cols == 16) {
      hmx_neon_gemm_tile(g->a + i0 * k, b, bias16, g->c + i0 * n + j0, k, 16, n, k, mr);
    } else { /* the last group's rows past N: a tile of 16, then its real columns */
      float tmp[HMX_NEON_GEMM_MR * 16];
      hmx_neon_gemm_tile(g->a + i0 * k, b, bias16, tmp, k, 16, 16, k, mr);
      for (int r = 0; r < mr; r++) memcpy(g->c + (i0 + r) * n + j0, tmp + r * 16, (size_t)cols * sizeof(float));
    }
  }
}

hmx_status hmx_neon_gemm_g16(const hmx_gemm_args *g) {
  const int64_t m = g->m, n = g->n, k = g->k;
  if (!hmx_qlayout_g16_ok(g->qtype)) return HMX_ERR_UNSUPPORTED; /* (hmx_gemm_quant admits none) */
  if (m < 1 || n < 1) return HMX_OK;
  const g16_type t = g16_type_of(g->qtype, k);
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  const int nt = hmx_thread_count(g->threads, groups);
  /* per thread (M > 1): the group's panel; M = 1 and F32 need none */
  const int64_t per = m == 1 || t.type == HMX_GGML_F32 ? 0 : k * 16;
  float *scratch = per ? hmx_alloc_array((size_t)(nt * per), sizeof *scratch) : NULL;
  if (per && !scratch) return HMX_ERR_NO_MEMORY;
  HMX_OMP_FOR(nt)
  for (int th = 0; th < nt; th++) {
    float *panel = scratch ? scratch + th * per : NULL;
    for (int64_t gi = groups * th / nt; gi < groups * (th + 1) / nt; gi++) {
      const int64_t j0 = gi * HMX_QG;
      const int cols = (int)(n - j0 < HMX_QG ? n - j0 : HMX_QG);
      float bias16[16] = {0};
      if (g->bias) memcpy(bias16, g->bias + j0, (size_t)cols * sizeof *bias16);
      const unsigned char *gb = (const unsigned char *)g->bq + (size_t)gi * t.group_bytes;
      if (m == 1) gemv_group(&t, gb, g->a, k, bias16, g->c + j0, cols);
      else gemm_group(&t, gb, g, bias16, j0, cols, panel);
    }
  }
  free(scratch);
  return HMX_OK;
}
