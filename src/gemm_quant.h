/* gemm with GGUF-quantized weights kept in their file format (internal: the
 * model runtime's path for GGUF matrices; docs/NUMERICS.md "GGUF
 * dequantization", "Quantized weights in place"). */
#ifndef HMX_GEMM_QUANT_H
#define HMX_GEMM_QUANT_H

#include "hadamix.h"

/* A [N, K] matrix as GGUF stores it: N rows of K elements (ne[0] = K), of
 * ggml type `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K or
 * Q6_K), K a whole
 * number of blocks. data may be unaligned for the block types. */
typedef struct hmx_qmatrix {
  uint32_t type;
  const void *data;
  int64_t n, k;
  int layout; /* HMX_QLAYOUT_* */
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
 *   place"). Q4_K, Q5_K, Q5_0, Q5_1 and Q6_K have a transcoded one
 *   (hmx_qlayout_g16_scaled). */
enum { HMX_QLAYOUT_ROWS = 0, HMX_QLAYOUT_G16 = 1 };
#define HMX_QG 16 /* rows per group of the G16 layout */

/* Whether a ggml type is a float one (F32, F16, BF16), its dtype (HMX_F32
 * for any other type), and the ggml type of a float dtype (F32 for any
 * other dtype). */
int hmx_qtype_is_float(uint32_t type);
hmx_dtype hmx_qtype_dtype(uint32_t type);
uint32_t hmx_dtype_qtype(hmx_dtype dt);

/* Whether type has a G16 form (Q8_0, Q4_0, Q4_1, F32, F16, BF16, Q2_K, and
 * the scaled ones below). */
int hmx_qlayout_g16_ok(uint32_t type);
/* Whether type's G16 form is the scaled one (Q3_K, Q4_K, Q5_K, Q5_0, Q5_1,
 * Q6_K): not the file's bytes regrouped but transcoded. Per group of 16 rows
 * and 32 elements a chunk: the 16 rows' f32 d, their f32 m, then `bits`
 * words (hmx_scaled_bits: 3 to 6), word w the 16 rows' uint32 w side by
 * side. A row's words hold its 32 values v = u - off (hmx_scaled_off: 4 for
 * Q3_K, 16 for Q5_0, 32 for Q6_K, else 0; `bits`-bit two's complement where
 * off > 0): element e < f * bits (f = 32 / bits fields a word) is field
 * e % f (bits bits at bits * (e % f)) of word e / f; the last two of the
 * 3-, 5- and 6-bit types (e = 30, 31) are the low and high `bits` bits of
 * the string whose bit pair 2w, 2w+1 is word w's top two bits
 * (hmx_scaled_pos). So a kernel takes a word per 10, 8, 6 or 5 elements and
 * two shifts per element: no byte loads, no bits gathered from two places.
 * Element = ((float)v * d) + m; Q6_K, Q3_K: (float)v * (e < 16 ? d : m),
 * their d * sc of each half. These are the GGUF rule's values bit for bit
 * (d, m are the rule's own products; docs/NUMERICS.md "Quantized weights in
 * place"). 20 (Q3_K), 24 (Q4_K), 28 or 32 (Q6_K) bytes per 32 elements of a
 * row, where the file has 13.75 / 18 / 22 / 24 / 26.25: the f32 scales are
 * what a vector load takes. */
int hmx_qlayout_g16_scaled(uint32_t type);
/* The scaled form's bits a value (3 Q3_K, 4 Q4_K, 6 Q6_K, else 5), its
 * offset, and whether d and m are the scales of the two halves (Q6_K, Q3_K:
 * element = (float)v * (e < 16 ? d : m)). */
int hmx_scaled_bits(uint32_t type);
int hmx_scaled_off(uint32_t type);
int hmx_scaled_halves(uint32_t type);
/* Where bit t of element e's value lies in a row's words: word, bit. */
void hmx_scaled_pos(int bits, int e, int t, int *word, int *bit);
/* Q2_K's G16 form (src/gemm_quant_q2k.c): per group of 16 rows and
 * 256-element block, the rows' f32 d and dmin, then 8 chunks of 32
 * elements, each the rows' uint16 of 4-bit scales and mins (the file's
 * scales[2c] low, scales[2c+1] high) and two words of 2-bit values (word w
 * field i: element 16w + i of the chunk). 88 bytes per 256 elements of a
 * row (the file: 84). The kernel forms the rule's d * sc and dmin * m. */
#define HMX_Q2K_G16_CHUNK (HMX_QG * (2 + 8))
#define HMX_Q2K_G16_BLOCK (HMX_QG * 8 + 8 * HMX_Q2K_G16_CHUNK)
size_t hmx_q2k_g16_bytes(int64_t n, int64_t k);
void hmx_q2k_to_g16(const void *src, int64_t n, int64_t k, void *dst);
/* Row j of it, dequantized by the GGUF rule (k floats). */
void hmx_q2k_g16_row(const void *src, int64_t k, int64_t j, float *dst);

/* Bytes of the G16 form of an [N, K] matrix (N rounded up to 16). */
size_t hmx_qlayout_g16_bytes(uint32_t type, int64_t n, int64_t k);
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
 * f32 copy and calls hmx_gemm. F16/BF16 go to hmx_gemm as 16-bit tensors. */
hmx_status hmx_gemm_quant(const hmx_context *ctx, const hmx_tensor *a, const hmx_qmatrix *b,
                          hmx_tensor *c);

#endif
