/* gemm with GGUF-quantized weights kept in their file format (internal: the
 * model runtime's path for GGUF matrices; docs/NUMERICS.md "GGUF
 * dequantization", "Quantized weights in place"). */
#ifndef HMX_GEMM_QUANT_H
#define HMX_GEMM_QUANT_H

#include "hadamix.h"

/* A [N, K] matrix as GGUF stores it: N rows of K elements (ne[0] = K), of
 * ggml type `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K,
 * Q6_K, IQ4_NL or IQ4_XS), K a whole
 * number of blocks. data may be unaligned for the block types. */
typedef struct hmx_qmatrix {
  uint32_t type;
  const void *data;
  int64_t n, k;
  int layout; /* HMX_QLAYOUT_* */
  /* NULL, or a copy of data's bytes in GPU memory (hmx_model_prepare with a
   * backend that has device kernels: docs/MODEL.md "Weights on the GPU").
   * Only that backend's host-memory calls read it, instead of copying data
   * to the GPU on every call (block types in either layout, float types in
   * G16; float types in rows are plain tensors: data); every other backend
   * reads data. */
  const void *dev;
} hmx_qmatrix;

/* How the blocks of an [N, K] matrix lie in memory.
 * ROWS: GGUF's, row after row (row j: K / B blocks).
 * G16: rows in groups of 16 (N rounded up with zero rows), each group's
 *   blocks in K order, each block of the group interleaved so that the
 *   16 rows' values of one element are adjacent: per block of Q8_0 / Q4_0 /
 *   Q4_1 the 16 rows' f16 d (then, Q4_1, the 16 m), then for each byte
 *   position j of the GGUF block the 16 rows' byte j; F16 / BF16 are
 *   [N/16][K][16]. The same bytes as ROWS (and the same size but for the
 *   padding rows), so a vector of 16 (or 8) outputs' weights for element p
 *   is one load, with no transpose (docs/NUMERICS.md "Quantized weights in
 *   place"). Q2_K .. Q6_K, Q5_0 and Q5_1 have a packed one
 *   (hmx_qlayout_g16_packed). */
enum { HMX_QLAYOUT_ROWS = 0, HMX_QLAYOUT_G16 = 1 };
#define HMX_QG 16 /* rows per group of the G16 layout */

/* Whether a ggml type is a float one (F32, F16, BF16), its dtype (HMX_F32
 * for any other type), and the ggml type of a float dtype (F32 for any
 * other dtype). */
int hmx_qtype_is_float(uint32_t type);
hmx_dtype hmx_qtype_dtype(uint32_t type);
uint32_t hmx_dtype_qtype(hmx_dtype dt);

/* Whether type has a G16 form (Q8_0, Q4_0, Q4_1, F32, F16, BF16, and the
 * packed ones below). */
int hmx_qlayout_g16_ok(uint32_t type);

/* Whether type's G16 form is the packed one (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
 * Q5_0, Q5_1, IQ4_NL, IQ4_XS; src/gemm_quant_packed.c): the file's scales
 * as the file has them, the values regrouped as bit fields of 32-bit
 * words. Per group of 16 rows and block of `kblock` elements (256 for the
 * K types and IQ4_XS, 32 for Q5_0 / Q5_1 / IQ4_NL):
 * - head: K types and IQ4_XS the 16 rows' f32 d (the file's f16 widened),
 *   then, with a min (Q2_K, Q4_K, Q5_K), their f32 dmin; Q5_0 / Q5_1 /
 *   IQ4_NL none;
 * - kblock / 32 chunks of 32 elements, each the 16 rows' scale fields
 *   (`scale` bytes) and `bits` words, word w the 16 rows' uint32 side by
 *   side. Scale fields, a uint16 a row: Q4_K / Q5_K the chunk's 6-bit sc
 *   (low byte) and m (high byte); Q2_K the file's scales[2c] (low byte:
 *   elements 0..15 of the chunk) and scales[2c+1] (sc low nibble, m high);
 *   Q3_K and Q6_K the signed 8-bit scale of each half (Q3_K's sc - 32);
 *   IQ4_XS the chunk's signed sc - 32 (low byte; high byte 0); Q5_0 and
 *   IQ4_NL the f16 d; Q5_1 the 16 f16 d, then the 16 f16 m.
 * A row's words hold its 32 values v = u - off (off 4 for Q3_K, 16 for
 * Q5_0, 32 for Q6_K, else 0; `bits`-bit two's complement where off > 0;
 * IQ4 stores u, the index of its value in hmx_gguf_iq4_values):
 * element e < f * bits (f = 32 / bits fields a word) is field e % f (bits
 * bits at bits * (e % f)) of word e / f; the last two of the 3-, 5- and
 * 6-bit types (e = 30, 31) are the low and high `bits` bits of the string
 * whose bit pair 2w, 2w+1 is word w's top two bits (pack_fields). So a
 * kernel takes a word per 16, 10, 8, 6 or 5 elements and two shifts per
 * element: no byte loads, no bits gathered from two places. The element is
 * the GGUF rule on these operands (docs/NUMERICS.md), the kernel forming
 * its products d * sc and dmin * m, so it has the rule's bits. Bytes per
 * 256 elements of a row (the file's): Q2_K 88 (84), Q3_K 116 (110), Q4_K
 * 152 (144), Q5_K 184 (176), Q6_K 212 (210), Q5_0 176 (176), Q5_1 192
 * (192), IQ4_NL 144 (144), IQ4_XS 148 (136). */
int hmx_qlayout_g16_packed(uint32_t type);
typedef struct hmx_packed_geom {
  int bits, off, has_min, halves, kblock, lut; /* lut: IQ4, a value is hmx_gguf_iq4_values[u] */
  int64_t head, scale, chunk, block; /* bytes per group: head, chunk's scales, chunk, block */
} hmx_packed_geom;
void hmx_packed_geometry(uint32_t type, hmx_packed_geom *g);
size_t hmx_packed_bytes(uint32_t type, int64_t n, int64_t k);
void hmx_packed_to_g16(uint32_t type, const void *src, int64_t n, int64_t k, void *dst);
/* Row j of a packed matrix, by the GGUF rule (k floats). */
void hmx_packed_row(uint32_t type, const void *src, int64_t k, int64_t j, float *dst);

/* Bytes of the G16 form of an [N, K] matrix (N rounded up to 16). */
size_t hmx_qlayout_g16_bytes(uint32_t type, int64_t n, int64_t k);
/* Bytes of an [n, k] matrix of `type` in `layout`: hmx_qlayout_g16_bytes for
 * G16, else its rows of blocks (k a whole number of blocks). */
size_t hmx_qlayout_bytes(uint32_t type, int layout, int64_t n, int64_t k);
/* Whether q is an f32 / f16 / bf16 matrix in rows: an ordinary tensor, which
 * hmx_gemm_quant runs as hmx_gemm on q->data (never on a GPU copy). */
int hmx_qmatrix_is_plain(const hmx_qmatrix *q);
/* GGUF rows [N, K] at src -> the G16 form at dst (hmx_qlayout_g16_bytes). */
void hmx_qlayout_to_g16(uint32_t type, const void *src, int64_t n, int64_t k, void *dst);
/* A row-major [K, N] matrix of F32, F16 or BF16 at src (N a multiple of 16)
 * -> the G16 form of its transpose, the [N, K] matrix, at dst (K N elements;
 * src and dst must not overlap): element (r, c) goes to
 * ((c / 16) * K + r) * 16 + c % 16. */
void hmx_qlayout_cols_to_g16(uint32_t type, const void *src, int64_t k, int64_t n, void *dst);
/* Row j of either layout, dequantized by the GGUF rule to k floats. */
void hmx_qmatrix_row_f32(const hmx_qmatrix *q, int64_t j, float *dst);

/* c = a B^T (gemm with trans_b = 1, no bias): a [M, K] f32, c [M, N] f32,
 * both host memory. The bits are those of dequantizing B to f32 (the GGUF
 * rule) and calling hmx_gemm: a backend with HMX_WQ_GEMM decodes the blocks
 * in registers; for any other this function dequantizes B to a temporary
 * f32 copy and calls hmx_gemm. F16/BF16 go to hmx_gemm as 16-bit tensors.
 * a and c may instead both be f32 device tensors when B has a GPU copy
 * (B->dev, not a plain matrix): the device gemm of the backend that made the
 * copy decodes it, the same bits (a forward pass on the GPU). */
hmx_status hmx_gemm_quant(const hmx_context *ctx, const hmx_tensor *a, const hmx_qmatrix *b,
                          hmx_tensor *c);

#endif
