/* The packed G16 forms of Q2_K .. Q6_K, Q5_0, Q5_1, IQ4_NL and IQ4_XS (gemm_quant.h):
 * the file's scales kept as the file has them (integers, f16), the values
 * regrouped as bit fields of 32-bit words, 16 rows side by side. The
 * kernels form the rule's scale products themselves, with the same
 * operands as hmx_gguf_dequantize, so every element has the rule's bits. */
#include "gemm_quant.h"
#include "gguf.h"
#include "internal.h"

#include <string.h>

int hmx_qlayout_g16_packed(uint32_t type) {
  switch (type) {
  case HMX_GGML_Q2_K: case HMX_GGML_Q3_K: case HMX_GGML_Q4_K: case HMX_GGML_Q5_K:
  case HMX_GGML_Q6_K: case HMX_GGML_Q5_0: case HMX_GGML_Q5_1: case HMX_GGML_IQ4_NL:
  case HMX_GGML_IQ4_XS: return 1;
  default: return 0;
  }
}

void hmx_packed_geometry(uint32_t type, hmx_packed_geom *g) {
  const int kq = type != HMX_GGML_Q5_0 && type != HMX_GGML_Q5_1 && type != HMX_GGML_IQ4_NL;
  g->lut = type == HMX_GGML_IQ4_NL || type == HMX_GGML_IQ4_XS;
  g->bits = type == HMX_GGML_Q2_K ? 2 : type == HMX_GGML_Q3_K ? 3
          : type == HMX_GGML_Q4_K || g->lut ? 4 : type == HMX_GGML_Q6_K ? 6 : 5;
  g->off = type == HMX_GGML_Q3_K ? 4 : type == HMX_GGML_Q5_0 ? 16 : type == HMX_GGML_Q6_K ? 32 : 0;
  g->has_min = type == HMX_GGML_Q2_K || type == HMX_GGML_Q4_K || type == HMX_GGML_Q5_K ||
               type == HMX_GGML_Q5_1;
  g->halves = type == HMX_GGML_Q2_K || type == HMX_GGML_Q3_K || type == HMX_GGML_Q6_K;
  g->kblock = kq ? 256 : 32;
  g->head = kq ? HMX_QG * 4 * (1 + g->has_min) : 0;
  g->scale = HMX_QG * (type == HMX_GGML_Q5_1 ? 4 : 2);
  g->chunk = g->scale + HMX_QG * 4 * g->bits;
  g->block = g->head + g->kblock / 32 * g->chunk;
}

/* A row's 32 values of a chunk (each masked to `bits` bits) into its `bits`
 * words (gemm_quant.h): element e < f * bits is field e % f of word e / f
 * (f = 32 / bits); elements 30, 31 of the 3-, 5- and 6-bit types form the
 * string whose bit pair 2w, 2w+1 goes to the top two bits of word w. */
static void pack_fields(const uint32_t v[32], int bits, uint32_t words[6]) {
  const int f = 32 / bits, nf = f * bits;
  uint32_t tops = 0;
  for (int w = 0; w < bits; w++) words[w] = 0;
  for (int e = 0; e < nf; e++) words[e / f] |= v[e] << (bits * (e % f));
  for (int e = nf; e < 32; e++) tops |= v[e] << (bits * (e - nf));
  if (nf < 32)
    for (int w = 0; w < bits; w++) words[w] |= ((tops >> (2 * w)) & 3u) << 30;
}

/* Element e's field of a row's words (pack_fields' inverse), unsigned. */
static uint32_t unpack_field(const uint32_t words[6], int bits, int e) {
  const int f = 32 / bits, nf = f * bits;
  const uint32_t mask = (1u << bits) - 1;
  if (e < nf) return (words[e / f] >> (bits * (e % f))) & mask;
  uint32_t tops = 0;
  for (int w = 0; w < bits; w++) tops |= (words[w] >> 30) << (2 * w);
  return (tops >> (bits * (e - nf))) & mask;
}

size_t hmx_packed_bytes(uint32_t type, int64_t n, int64_t k) {
  hmx_packed_geom g;
  hmx_packed_geometry(type, &g);
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  return (size_t)(groups * (k / g.kblock) * g.block);
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Row r's part of block b of a group (the file's block f, kblock elements):
 * its head, chunk scales and words. */
static void pack_row(uint32_t type, const hmx_packed_geom *g, const unsigned char *f,
                     unsigned char *blk, int r) {
  if (g->kblock == 256) { /* d (and dmin), the file's f16 widened exactly */
    const int dpos = type == HMX_GGML_Q2_K ? 80 : type == HMX_GGML_Q3_K ? 108
                   : type == HMX_GGML_Q6_K ? 208 : 0; /* Q4_K, Q5_K, IQ4_XS: 0 */
    const float d = hmx_f16_to_f32(rd16(f + dpos));
    memcpy(blk + 4 * r, &d, 4);
    if (g->has_min) {
      const float dmin = hmx_f16_to_f32(rd16(f + dpos + 2));
      memcpy(blk + HMX_QG * 4 + 4 * r, &dmin, 4);
    }
  }
  for (int c = 0; c < g->kblock / 32; c++) {
    unsigned char *ch = blk + g->head + c * g->chunk;
    uint16_t s0, s1 = 0; /* the chunk's scale fields (gemm_quant.h) */
    switch (type) {
    case HMX_GGML_Q2_K: s0 = f[2 * c]; s1 = f[2 * c + 1]; break;
    case HMX_GGML_Q3_K:
      s0 = (uint8_t)(hmx_gguf_q3_k_scale(f + 96, 2 * c) - 32);
      s1 = (uint8_t)(hmx_gguf_q3_k_scale(f + 96, 2 * c + 1) - 32);
      break;
    case HMX_GGML_Q6_K: s0 = f[192 + 2 * c]; s1 = f[192 + 2 * c + 1]; break;
    case HMX_GGML_Q4_K: case HMX_GGML_Q5_K: {
      int sc, m;
      hmx_gguf_k_scale_min(f + 4, c, &sc, &m);
      s0 = (uint16_t)sc;
      s1 = (uint16_t)m;
      break;
    }
    case HMX_GGML_IQ4_XS: s0 = (uint8_t)(hmx_gguf_iq4_xs_scale(f, c) - 32); break;
    default: /* Q5_0 / Q5_1 / IQ4_NL: the f16 d (and m) as they are */
      s0 = rd16(f);
      if (type == HMX_GGML_Q5_1) memcpy(ch + HMX_QG * 2 + 2 * r, f + 2, 2);
      break;
    }
    const uint16_t sf = g->kblock == 256 ? (uint16_t)(s0 | s1 << 8) : s0;
    memcpy(ch + 2 * r, &sf, 2);
    uint32_t v[32], words[6]; /* bits <= 6 */
    for (int e = 0; e < 32; e++)
      v[e] = (uint32_t)(hmx_gguf_block_u(type, f, 32 * c + e) - g->off) & ((1u << g->bits) - 1);
    pack_fields(v, g->bits, words);
    for (int w = 0; w < g->bits; w++)
      memcpy(ch + g->scale + (w * HMX_QG + r) * 4, &words[w], 4);
  }
}

void hmx_packed_to_g16(uint32_t type, const void *src, int64_t n, int64_t k, void *dst) {
  hmx_packed_geom g;
  hmx_packed_geometry(type, &g);
  int64_t B, S;
  hmx_gguf_type_block(type, &B, &S);
  const int64_t nb = k / g.kblock, groups = (n + HMX_QG - 1) / HMX_QG;
  const unsigned char *s = src;
  unsigned char *d = dst;
  memset(d, 0, hmx_packed_bytes(type, n, k)); /* rows past n: zeros */
  for (int64_t gi = 0; gi < groups; gi++)
    for (int64_t b = 0; b < nb; b++)
      for (int r = 0; r < HMX_QG && gi * HMX_QG + r < n; r++)
        pack_row(type, &g, s + ((gi * HMX_QG + r) * nb + b) * S, d + (gi * nb + b) * g.block, r);
}

void hmx_packed_row(uint32_t type, const void *src, int64_t k, int64_t j, float *dst) {
  hmx_packed_geom g;
  hmx_packed_geometry(type, &g);
  const unsigned char *s = src;
  const int64_t nb = k / g.kblock, gi = j / HMX_QG;
  const int r = (int)(j % HMX_QG), sgn = g.off > 0;
  for (int64_t b = 0; b < nb; b++) {
    const unsigned char *blk = s + (gi * nb + b) * g.block;
    float d = 0, dmin = 0;
    if (g.kblock == 256) memcpy(&d, blk + 4 * r, 4);
    if (g.kblock == 256 && g.has_min) memcpy(&dmin, blk + HMX_QG * 4 + 4 * r, 4);
    for (int c = 0; c < g.kblock / 32; c++) {
      const unsigned char *ch = blk + g.head + c * g.chunk;
      const uint16_t sf = rd16(ch + 2 * r);
      uint32_t words[6];
      for (int w = 0; w < g.bits; w++) memcpy(&words[w], ch + g.scale + (w * HMX_QG + r) * 4, 4);
      /* the scale products of the chunk (of each half for Q2_K, Q3_K, Q6_K),
       * once, formed as the rule forms them: ds, and ms the min term */
      float ds[2], ms[2] = {0.0f, 0.0f};
      for (int h = 0; h < (g.halves ? 2 : 1); h++) {
        const int byte = (sf >> (8 * h)) & 0xFF; /* the half's scale field, or sc */
        if (g.kblock == 32) { /* Q5_0, Q5_1, IQ4_NL: d (Q5_1: and m) */
          ds[h] = hmx_f16_to_f32(sf);
          if (type == HMX_GGML_Q5_1) ms[h] = hmx_f16_to_f32(rd16(ch + HMX_QG * 2 + 2 * r));
        } else if (type == HMX_GGML_Q2_K) { /* d * sc, dmin * m: the byte's nibbles */
          ds[h] = d * (float)(byte & 15);
          ms[h] = dmin * (float)(byte >> 4);
        } else if (g.has_min) { /* Q4_K, Q5_K: the chunk's 6-bit sc, m */
          ds[h] = d * (float)byte;
          ms[h] = dmin * (float)(sf >> 8);
        } else { /* Q3_K (sc - 32), Q6_K, IQ4_XS (sc - 32): d * s, s the signed byte */
          ds[h] = d * (float)(int8_t)byte;
        }
      }
      for (int e = 0; e < 32; e++) {
        int32_t v = (int32_t)unpack_field(words, g.bits, e); /* u - off, or IQ4's index */
        if (sgn && v >= 1 << (g.bits - 1)) v -= 1 << g.bits;
        const int h = g.halves ? e / 16 : 0;
        /* the rule's product: Q5_0 (float)(u - 16) * d, the K types (d * sc)
         * * q, IQ4 d * value or (d * (sc - 32)) * value; then Q5_1's + m,
         * Q2_K / Q4_K / Q5_K's - (dmin * m) */
        const float p = ds[h] * (g.lut ? (float)hmx_gguf_iq4_values[v] : (float)v);
        const float y = type == HMX_GGML_Q5_1 ? p + ms[h] : g.has_min ? p - ms[h] : p;
        dst[b * g.kblock + 32 * c + e] = y;
      }
    }
  }
}
