/* Weights in their stored format, widened on the device (cuda/weights_in.cuh).
 *
 * GGUF blocks: in tiles of 16 rows by 256 elements (below), a thread one
 * element of each of the tile's rows. Element e of a block is
 * hmx_gguf_quant_at's operations (src/gguf_dequant.c, docs/NUMERICS.md
 * "GGUF dequantization") in its order, each written as its _rn intrinsic so
 * that nothing is contracted whatever the flags: f16 scales widen exactly
 * (cvt.f32.f16, subnormals kept), small integers convert exactly, and each
 * product or sum rounds to nearest even. So every element has the host
 * rule's bits (a NaN scale gives a NaN, its payload not part of the
 * contract: NUMERICS §C), and the gemm on them is "dequantize, then the f32
 * gemm". The same element code reads GGUF's rows and, through a byte
 * accessor, the G16 interleaved blocks of Q8_0 / Q4_0 / Q4_1; the packed G16
 * form of the other block types follows hmx_packed_row's operations
 * (src/gemm_quant_packed.c), and F32 / F16 / BF16 G16 groups are widened.
 * The threads of a warp read the bytes of one block (or group) and write
 * 32 consecutive floats of one row. */
#include "weights_in.cuh"

#include <cuda_fp16.h>

extern "C" {
#include "gemm_quant.h"
#include "gguf.h"
}

namespace {

using uchar = unsigned char;

__device__ __forceinline__ float f16_bits(unsigned h) { /* exact, subnormals kept */
  return __half2float(__ushort_as_half((unsigned short)h));
}

/* Byte f of one GGUF block, wherever its layout keeps it: the file's rows
 * (the block's bytes in order), or the G16 layout of Q8_0 / Q4_0 / Q4_1
 * (src/gemm_quant.c, g16_pos: 16-bit header field f / 2 of the group's 16
 * rows side by side, then each quant byte's 16 rows). */
struct RowBlock {
  const uchar *b;
  __device__ int operator()(int f) const { return b[f]; }
};
template <int HDR> struct G16Block {
  const uchar *blk; /* the group's interleaved block */
  int r;            /* the row in the group */
  __device__ int operator()(int f) const {
    return blk[f < HDR ? f / 2 * 2 * HMX_QG + 2 * r + f % 2 : HDR * HMX_QG + (f - HDR) * HMX_QG + r];
  }
};

template <class Bytes> __device__ __forceinline__ float f16_at(const Bytes &b, int f) {
  return f16_bits((unsigned)(b(f) | b(f + 1) << 8));
}

__constant__ signed char kIq4Values[16] = {HMX_GGUF_IQ4_VALUES};

/* Element e (0 <= e < B) of the block whose byte f is b(f): hmx_gguf_quant_at,
 * case by case (the bit positions are block_u's, src/gguf_dequant.c). */
template <uint32_t T, class Bytes> __device__ __forceinline__ float element(const Bytes &b, int e) {
  if constexpr (T == HMX_GGML_Q8_0) {
    return __fmul_rn((float)(signed char)b(2 + e), f16_at(b, 0));
  } else if constexpr (T == HMX_GGML_Q4_0 || T == HMX_GGML_Q4_1) {
    constexpr int hdr = T == HMX_GGML_Q4_1 ? 4 : 2;
    const int q = e < 16 ? b(hdr + e) & 0x0F : b(hdr + e - 16) >> 4;
    if constexpr (T == HMX_GGML_Q4_0) return __fmul_rn((float)(q - 8), f16_at(b, 0));
    else return __fadd_rn(__fmul_rn((float)q, f16_at(b, 0)), f16_at(b, 2));
  } else if constexpr (T == HMX_GGML_Q5_0 || T == HMX_GGML_Q5_1) {
    constexpr int hdr = T == HMX_GGML_Q5_1 ? 4 : 2;
    const int low = e < 16 ? b(hdr + 4 + e) & 0x0F : b(hdr + 4 + e - 16) >> 4; /* qs at hdr + 4 */
    const int q = low | (b(hdr + e / 8) >> (e % 8) & 1) << 4; /* bit e of the 32-bit qh */
    if constexpr (T == HMX_GGML_Q5_0) return __fmul_rn((float)(q - 16), f16_at(b, 0));
    else return __fadd_rn(__fmul_rn((float)q, f16_at(b, 0)), f16_at(b, 2));
  } else if constexpr (T == HMX_GGML_IQ4_NL) {
    const int u = e < 16 ? b(2 + e) & 0x0F : b(2 + e - 16) >> 4;
    return __fmul_rn(f16_at(b, 0), (float)kIq4Values[u]);
  } else if constexpr (T == HMX_GGML_Q4_K || T == HMX_GGML_Q5_K) {
    constexpr bool five = T == HMX_GGML_Q5_K;
    const int s = e / 32, l = e % 32;
    int sc, m; /* hmx_gguf_k_scale_min, scales at 4 */
    if (s < 4) {
      sc = b(4 + s) & 63;
      m = b(4 + s + 4) & 63;
    } else {
      sc = (b(4 + s + 4) & 0x0F) | (b(4 + s - 4) >> 6) << 4;
      m = (b(4 + s + 4) >> 4) | (b(4 + s) >> 6) << 4;
    }
    const int byte = b((five ? 48 : 16) + 32 * (s / 2) + l);
    int q = s % 2 ? byte >> 4 : byte & 0x0F;
    if constexpr (five) q |= ((b(16 + l) >> s) & 1) << 4;
    const float ds = __fmul_rn(f16_at(b, 0), (float)sc);
    const float ms = __fmul_rn(f16_at(b, 2), (float)m);
    return __fsub_rn(__fmul_rn(ds, (float)q), ms);
  } else if constexpr (T == HMX_GGML_Q6_K) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int lb = b(64 * h + 32 * (g % 2) + l);
    const int low = g < 2 ? (lb & 0x0F) : (lb >> 4);
    const int u = low | ((b(128 + 32 * h + l) >> (2 * g)) & 3) << 4;
    const float s = __fmul_rn(f16_at(b, 208), (float)(signed char)b(192 + e / 16));
    return __fmul_rn(s, (float)(u - 32));
  } else if constexpr (T == HMX_GGML_Q2_K) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int u = (b(16 + 32 * h + l) >> (2 * g)) & 3;
    const float ds = __fmul_rn(f16_at(b, 80), (float)(b(e / 16) & 0x0F));
    const float ms = __fmul_rn(f16_at(b, 82), (float)(b(e / 16) >> 4));
    return __fsub_rn(__fmul_rn(ds, (float)u), ms);
  } else if constexpr (T == HMX_GGML_Q3_K) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int u = ((b(32 + 32 * h + l) >> (2 * g)) & 3) | ((b(l) >> (4 * h + g)) & 1) << 2;
    const int s = e / 16; /* hmx_gguf_q3_k_scale, scales at 96 */
    const int low = s < 8 ? b(96 + s) & 0x0F : b(96 + s - 8) >> 4;
    const int sc = low | ((b(96 + 8 + s % 4) >> (2 * (s / 4))) & 3) << 4;
    const float sd = __fmul_rn(f16_at(b, 108), (float)(sc - 32));
    return __fmul_rn(sd, (float)(u - 4));
  } else { /* IQ4_XS */
    static_assert(T == HMX_GGML_IQ4_XS, "a block type without a decoder");
    const int s = e / 32; /* hmx_gguf_iq4_xs_scale */
    const int low = (b(4 + s / 2) >> (4 * (s % 2))) & 0x0F;
    const int sc = low | (((b(2) | b(3) << 8) >> (2 * s)) & 3) << 4;
    const int byte = b(8 + 16 * s + e % 16);
    const int u = e % 32 < 16 ? byte & 0x0F : byte >> 4;
    const float dl = __fmul_rn(f16_at(b, 0), (float)(sc - 32));
    return __fmul_rn(dl, (float)kIq4Values[u]);
  }
}

/* The decoders below run on tiles: 16 rows (a G16 group; in the rows layout,
 * 16 consecutive rows) by kTileK consecutive elements p of K, a block of
 * kTileThreads threads a tile: blockIdx.y the tile's place along K,
 * blockIdx.x (grid-stride) its group. Thread t takes element p = p0 + t %
 * kTileK of rows t / kTileK, + kRowSets, ... of the tile (4 of the 16), in
 * turn: a warp writes 32 consecutive floats of one row at a time and reads
 * the same block's (group's) header and scale bytes. The block size (and a
 * packed type's field width) are template constants, so what locates p is
 * shifts and masks. Why: until session 59 these kernels took one element a
 * thread, each dividing its flat 64-bit index by K and by the block size:
 * the 50304 x 768 Q6_K head of a Q4_K_M model decoded at 245 GB/s (628 us
 * under ncu), and the decodes were half of a decode step. */
constexpr int kTileK = 64, kRowSets = 4, kTileThreads = kTileK * kRowSets;

struct Tile {
  int64_t row0; /* the tile's first row: 16 g */
  int rows;     /* rows of it below n: 16, or fewer in the last group */
  int r0;       /* this thread's first row of the tile (then + kRowSets) */
  int p;        /* this thread's element of K; -1 past K */
};

/* Group g's tile at blockIdx.y, as seen by this thread. */
__device__ __forceinline__ Tile tile_at(int64_t g, int64_t n, int64_t k) {
  Tile x;
  x.row0 = g * HMX_QG;
  const int64_t left = n - x.row0;
  x.rows = left < HMX_QG ? (int)left : HMX_QG;
  x.r0 = (int)threadIdx.x / kTileK;
  const int64_t p = (int64_t)blockIdx.y * kTileK + threadIdx.x % kTileK;
  x.p = p < k ? (int)p : -1;
  return x;
}

/* w[j][p] = element p of row j of the row-major matrix at q: rows of
 * k / B whole blocks of S bytes back to back (hmx_gguf_type_block), so
 * element p of row j is element p % B of that row's block p / B. */
template <uint32_t T, int B>
__global__ void decode_rows(const uchar *__restrict__ q, float *__restrict__ w, int64_t n,
                            int64_t k, int64_t groups, int S) {
  const int64_t row_bytes = k / B * S;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const Tile x = tile_at(g, n, k);
    if (x.p < 0) continue;
    const uchar *blk = q + x.row0 * row_bytes + (int64_t)(x.p / B) * S;
    const int e = x.p % B;
#pragma unroll
    for (int r = x.r0; r < x.rows; r += kRowSets)
      w[(x.row0 + r) * k + x.p] = element<T>(RowBlock{blk + r * row_bytes}, e);
  }
}

/* The same from the G16 layout of Q8_0, Q4_0, Q4_1: element p of row j is
 * element p % B of block p / B of row j % 16 of group j / 16, whose
 * blocks are 16 S bytes each. */
template <uint32_t T, int B>
__global__ void decode_g16(const uchar *__restrict__ q, float *__restrict__ w, int64_t n,
                           int64_t k, int64_t groups, int S) {
  constexpr int HDR = T == HMX_GGML_Q4_1 ? 4 : 2;
  const int64_t nb = k / B;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const Tile x = tile_at(g, n, k);
    if (x.p < 0) continue;
    const uchar *blk = q + (g * nb + x.p / B) * (HMX_QG * S);
    const int e = x.p % B;
#pragma unroll
    for (int r = x.r0; r < x.rows; r += kRowSets)
      w[(x.row0 + r) * k + x.p] = element<T>(G16Block<HDR>{blk, r}, e);
  }
}

/* F32, F16, BF16 in G16 ([N/16][K][16]): element p of row j at
 * ((j / 16) k + p) 16 + j % 16, widened exactly. */
template <uint32_t T>
__global__ void decode_g16_float(const uchar *__restrict__ q, float *__restrict__ w, int64_t n,
                                 int64_t k, int64_t groups) {
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const Tile x = tile_at(g, n, k);
    if (x.p < 0) continue;
    const int64_t at = (g * k + x.p) * HMX_QG; /* row r: + r */
#pragma unroll
    for (int r = x.r0; r < x.rows; r += kRowSets) {
      float v;
      if constexpr (T == HMX_GGML_F32) {
        v = reinterpret_cast<const float *>(q)[at + r];
      } else {
        const unsigned h = reinterpret_cast<const unsigned short *>(q)[at + r];
        v = T == HMX_GGML_BF16 ? __uint_as_float(h << 16) : f16_bits(h);
      }
      w[(x.row0 + r) * k + x.p] = v;
    }
  }
}

__device__ __forceinline__ unsigned u32_at(const uchar *p) { /* p 4-byte aligned */
  return *reinterpret_cast<const unsigned *>(p);
}

/* The packed G16 form of Q2_K .. Q6_K, Q5_0, Q5_1, IQ4_NL, IQ4_XS
 * (src/gemm_quant.h; g its geometry, whose kblock and bits are KB and BITS):
 * element p of row j, by hmx_packed_row's operations
 * (src/gemm_quant_packed.c): the scale products ds and ms formed from the
 * block's d, dmin and the chunk's scale field as the GGUF rule forms them,
 * v the element's field (u - off as a signed `bits`-bit value, or IQ4's
 * index), then ds * v and Q5_1's + ms or the K types' - ms. Every offset of
 * a head, scale field or word is a multiple of 4 bytes from the device
 * buffer's start. */
template <int KB, int BITS>
__global__ void decode_packed(const uchar *__restrict__ q, float *__restrict__ w, int64_t n,
                              int64_t k, int64_t groups, uint32_t type, hmx_packed_geom g) {
  constexpr int f = 32 / BITS, nf = f * BITS;
  constexpr unsigned mask = (1u << BITS) - 1;
  const int64_t nb = k / KB;
  const bool q5_1 = type == HMX_GGML_Q5_1, q2_k = type == HMX_GGML_Q2_K;
  for (int64_t gi = blockIdx.x; gi < groups; gi += gridDim.x) {
    const Tile x = tile_at(gi, n, k);
    if (x.p < 0) continue;
    const int pe = x.p % KB, c = pe / 32, e = pe % 32;
    const uchar *blk = q + (gi * nb + x.p / KB) * g.block;
    const uchar *ch = blk + g.head + (int64_t)c * g.chunk;
    /* where e's bits are: word e / f's field e % f, or (e >= nf) the string
     * of the words' top two bits */
    const int word = e < nf ? e / f : 0, shift = e < nf ? BITS * (e % f) : BITS * (e - nf);
#pragma unroll
    for (int r = x.r0; r < x.rows; r += kRowSets) {
      const unsigned sf = ch[2 * r] | ch[2 * r + 1] << 8;
      const int byte = (sf >> (g.halves ? 8 * (e / 16) : 0)) & 0xFF;
      float ds, ms = 0.0f;
      if constexpr (KB == 32) { /* Q5_0, Q5_1, IQ4_NL: the f16 d (Q5_1: and m) */
        ds = f16_bits(sf);
        if (q5_1) ms = f16_bits(ch[HMX_QG * 2 + 2 * r] | ch[HMX_QG * 2 + 2 * r + 1] << 8);
      } else {
        const float d = __uint_as_float(u32_at(blk + 4 * r));
        if (q2_k) { /* d * sc, dmin * m: the byte's nibbles */
          ds = __fmul_rn(d, (float)(byte & 15));
          ms = __fmul_rn(__uint_as_float(u32_at(blk + HMX_QG * 4 + 4 * r)), (float)(byte >> 4));
        } else if (g.has_min) { /* Q4_K, Q5_K: the chunk's 6-bit sc, m */
          ds = __fmul_rn(d, (float)byte);
          ms = __fmul_rn(__uint_as_float(u32_at(blk + HMX_QG * 4 + 4 * r)), (float)(sf >> 8));
        } else { /* Q3_K, Q6_K, IQ4_XS: d * s, s the signed byte */
          ds = __fmul_rn(d, (float)(signed char)byte);
        }
      }
      const uchar *words = ch + g.scale + 4 * r; /* word t at + t 16 4 */
      unsigned u;
      if (e < nf) {
        u = (u32_at(words + word * HMX_QG * 4) >> shift) & mask;
      } else {
        unsigned tops = 0;
#pragma unroll
        for (int tw = 0; tw < BITS; tw++)
          tops |= (u32_at(words + tw * HMX_QG * 4) >> 30) << (2 * tw);
        u = (tops >> shift) & mask;
      }
      int v = (int)u;
      if (g.off > 0 && v >= 1 << (BITS - 1)) v -= 1 << BITS;
      const float prod = __fmul_rn(ds, g.lut ? (float)kIq4Values[v] : (float)v);
      w[(x.row0 + r) * k + x.p] = q5_1 ? __fadd_rn(prod, ms) : g.has_min ? __fsub_rn(prod, ms) : prod;
    }
  }
}

/* The grid of an [n, k] matrix's tiles: groups (grid-stride, capped) by
 * tiles along K (at most 65535: K up to 4194240). */
struct Tiles {
  dim3 grid;
  int64_t groups;
};
bool tiles_for(hmx_cuda::Job *j, int64_t n, int64_t k, Tiles *t) {
  const int64_t tk = (k + kTileK - 1) / kTileK;
  if (tk > 65535) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: K = %lld is too long to decode (at most "
                     "%d)", j->op, (long long)k, 65535 * kTileK);
    return false;
  }
  t->groups = (n + HMX_QG - 1) / HMX_QG;
  t->grid = dim3(t->groups > (int64_t)1 << 20 ? 1u << 20 : (unsigned)t->groups, (unsigned)tk);
  return true;
}

/* The kernel for a block type in its layout; B elements in S bytes a block
 * (32 or 256: hmx_gguf_type_block). */
template <uint32_t T, int B>
void launch_b(hmx_cuda::Job *j, const uchar *q, float *w, int64_t n, int64_t k, int g16, int S) {
  Tiles t;
  if (!tiles_for(j, n, k, &t)) return;
  if (!g16) {
    decode_rows<T, B><<<t.grid, kTileThreads, 0, j->stream>>>(q, w, n, k, t.groups, S);
    hmx_cuda::job_launched(j, "decode_rows");
  } else if constexpr (T == HMX_GGML_Q8_0 || T == HMX_GGML_Q4_0 || T == HMX_GGML_Q4_1) {
    decode_g16<T, B><<<t.grid, kTileThreads, 0, j->stream>>>(q, w, n, k, t.groups, S);
    hmx_cuda::job_launched(j, "decode_g16");
  } else {
    hmx_packed_geom g;
    hmx_packed_geometry(T, &g);
    if (g.kblock != B) {
      j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: packed blocks of %lld for %s", j->op,
                       (long long)g.kblock, hmx_gguf_type_name(T));
      return;
    }
    void (*kern)(const uchar *, float *, int64_t, int64_t, int64_t, uint32_t, hmx_packed_geom) =
        NULL;
    if constexpr (B == 256) {
      kern = g.bits == 2 ? decode_packed<256, 2> : g.bits == 3 ? decode_packed<256, 3>
           : g.bits == 4 ? decode_packed<256, 4> : g.bits == 5 ? decode_packed<256, 5>
           : g.bits == 6 ? decode_packed<256, 6> : NULL;
    } else {
      kern = g.bits == 4 ? decode_packed<32, 4> : g.bits == 5 ? decode_packed<32, 5> : NULL;
    }
    if (!kern) {
      j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: no packed decoder for %d-bit fields (%s)",
                       j->op, g.bits, hmx_gguf_type_name(T));
      return;
    }
    kern<<<t.grid, kTileThreads, 0, j->stream>>>(q, w, n, k, t.groups, T, g);
    hmx_cuda::job_launched(j, "decode_packed");
  }
}

/* Elements a block of type T holds (hmx_gguf_type_block's, checked at
 * launch): a constant of the type, so each type instantiates its kernels for
 * one block size only (a block size picked at run time had instantiated both
 * for every type: 40 kernels, 15 of which could never run). */
template <uint32_t T> constexpr int block_of() {
  return T == HMX_GGML_Q8_0 || T == HMX_GGML_Q4_0 || T == HMX_GGML_Q4_1 ||
                 T == HMX_GGML_Q5_0 || T == HMX_GGML_Q5_1 || T == HMX_GGML_IQ4_NL
             ? 32
             : 256; /* Q2_K .. Q6_K, IQ4_XS */
}

template <uint32_t T>
void launch(hmx_cuda::Job *j, const uchar *q, float *w, int64_t n, int64_t k, int g16, int B,
            int S) {
  if (B == block_of<T>())
    launch_b<T, block_of<T>()>(j, q, w, n, k, g16, S);
  else
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: blocks of %d elements for %s", j->op, B,
                     hmx_gguf_type_name(T));
}

template <uint32_t T>
void launch_float(hmx_cuda::Job *j, const uchar *q, float *w, int64_t n, int64_t k) {
  Tiles t;
  if (!tiles_for(j, n, k, &t)) return;
  decode_g16_float<T><<<t.grid, kTileThreads, 0, j->stream>>>(q, w, n, k, t.groups);
  hmx_cuda::job_launched(j, "decode_g16_float");
}

} // namespace

namespace hmx_cuda {

const float *job_in16(Job *j, const uint16_t *h, hmx_dtype dt, int64_t n) {
  if (j->st != HMX_OK || !h || n <= 0) return NULL;
  const uint16_t *d16 = (const uint16_t *)job_upload_bytes(j, h, (size_t)n * sizeof(uint16_t));
  float *d = job_alloc(j, n);
  widen16_device(j, d, d16, dt, n);
  return j->st == HMX_OK ? d : NULL;
}

const void *job_kept_bytes(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k) {
  if (j->st != HMX_OK) return NULL;
  /* a resident copy (hmx_qmatrix.dev) is read where it is: it must be
   * memory of this call's GPU */
  if (dev && !hmx_cuda_on_current_device(dev)) {
    j->st = hmx_fail(HMX_ERR_INVALID_ARGUMENT, "cuda %s: the weights' GPU copy is not memory "
                     "of the current GPU (hmx_model_prepare ran with another device current)",
                     j->op);
    return NULL;
  }
  return dev ? dev : job_upload_bytes(j, h, hmx_qlayout_bytes(type, layout, n, k));
}

const float *job_in_blocks(Job *j, const void *h, const void *dev, uint32_t type, int layout,
                           int64_t n, int64_t k) {
  int64_t block, bytes;
  if (j->st != HMX_OK || (!h && !dev) || n <= 0 || k <= 0) return NULL;
  const int g16 = layout == HMX_QLAYOUT_G16;
  if (!hmx_gguf_type_block(type, &block, &bytes) || k % block ||
      (layout != HMX_QLAYOUT_ROWS && !g16) || (g16 && !hmx_qlayout_g16_ok(type)) ||
      (!g16 && hmx_qtype_is_float(type))) {
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: ggml type %u, layout %d with K = %lld is not "
                     "a form this backend decodes", j->op, type, layout, (long long)k);
    return NULL;
  }
  const int64_t total = n * k;
  const uchar *dq = (const uchar *)job_kept_bytes(j, h, dev, type, layout, n, k);
  float *d = job_alloc(j, total);
  if (j->st != HMX_OK) return NULL;
  const int B = (int)block, S = (int)bytes;
  switch (type) {
  case HMX_GGML_F32: launch_float<HMX_GGML_F32>(j, dq, d, n, k); break;
  case HMX_GGML_F16: launch_float<HMX_GGML_F16>(j, dq, d, n, k); break;
  case HMX_GGML_BF16: launch_float<HMX_GGML_BF16>(j, dq, d, n, k); break;
  case HMX_GGML_Q8_0: launch<HMX_GGML_Q8_0>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q4_0: launch<HMX_GGML_Q4_0>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q4_1: launch<HMX_GGML_Q4_1>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q5_0: launch<HMX_GGML_Q5_0>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q5_1: launch<HMX_GGML_Q5_1>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_IQ4_NL: launch<HMX_GGML_IQ4_NL>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q2_K: launch<HMX_GGML_Q2_K>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q3_K: launch<HMX_GGML_Q3_K>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q4_K: launch<HMX_GGML_Q4_K>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q5_K: launch<HMX_GGML_Q5_K>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_Q6_K: launch<HMX_GGML_Q6_K>(j, dq, d, n, k, g16, B, S); break;
  case HMX_GGML_IQ4_XS: launch<HMX_GGML_IQ4_XS>(j, dq, d, n, k, g16, B, S); break;
  default:
    j->st = hmx_fail(HMX_ERR_INTERNAL, "cuda %s: no device decoder for %s weights", j->op,
                     hmx_gguf_type_name(type));
    return NULL;
  }
  return j->st == HMX_OK ? d : NULL;
}

} // namespace hmx_cuda
