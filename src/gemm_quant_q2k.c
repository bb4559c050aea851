/* The G16 form of Q2_K (gemm_quant.h "Q2_K in G16"): its scales kept as the
 * file's 4-bit integers, so that it takes 88 bytes per 256 elements of a
 * row where the file takes 84 (f32 d and m per 32 elements, as the scaled
 * form has, would take 2.3x the file: Q2_K has a scale and a min per 16).
 *
 * Per group of 16 rows and 256-element block (HMX_Q2K_G16_BLOCK bytes): the
 * 16 rows' f32 d, their f32 dmin (the file's f16 widened, exactly), then for
 * each chunk c < 8 of 32 elements the 16 rows' uint16 of scales (low byte
 * the file's scales[2c]: scale and min of elements 32c .. 32c+15, high byte
 * scales[2c+1]) and two words of 2-bit values (word w, field i: element
 * 32c + 16w + i), each word the 16 rows' uint32 side by side. An element is
 * the GGUF rule's ((d * (float)sc) * (float)q) - (dmin * (float)m), with the
 * same operands, so the same bits. */
#include "gemm_quant.h"
#include "gguf.h"
#include "internal.h"

#include <string.h>

/* Byte offsets inside one group's block. */
#define Q2K_D 0
#define Q2K_DMIN (4 * HMX_QG)
#define Q2K_CHUNK(c) (8 * HMX_QG + (c) * HMX_Q2K_G16_CHUNK)

size_t hmx_q2k_g16_bytes(int64_t n, int64_t k) {
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  return (size_t)(groups * (k / 256) * HMX_Q2K_G16_BLOCK);
}

void hmx_q2k_to_g16(const void *src, int64_t n, int64_t k, void *dst) {
  const unsigned char *s = src;
  unsigned char *d = dst;
  const int64_t nb = k / 256, groups = (n + HMX_QG - 1) / HMX_QG;
  memset(d, 0, hmx_q2k_g16_bytes(n, k));
  for (int64_t g = 0; g < groups; g++)
    for (int64_t b = 0; b < nb; b++) {
      unsigned char *blk = d + (g * nb + b) * HMX_Q2K_G16_BLOCK;
      for (int r = 0; r < HMX_QG && g * HMX_QG + r < n; r++) {
        const unsigned char *f = s + ((g * HMX_QG + r) * nb + b) * 84; /* the file's block */
        uint16_t h;
        memcpy(&h, f + 80, 2);
        const float dd = hmx_f16_to_f32(h);
        memcpy(&h, f + 82, 2);
        const float dm = hmx_f16_to_f32(h);
        memcpy(blk + Q2K_D + 4 * r, &dd, 4);
        memcpy(blk + Q2K_DMIN + 4 * r, &dm, 4);
        for (int c = 0; c < 8; c++) {
          unsigned char *ch = blk + Q2K_CHUNK(c);
          const uint16_t sm = (uint16_t)(f[2 * c] | f[2 * c + 1] << 8);
          memcpy(ch + 2 * r, &sm, 2);
          for (int w = 0; w < 2; w++) {
            uint32_t word = 0;
            for (int i = 0; i < 16; i++)
              word |= (uint32_t)hmx_gguf_block_u(HMX_GGML_Q2_K, f, 32 * c + 16 * w + i) << (2 * i);
            memcpy(ch + 2 * HMX_QG + (w * HMX_QG + r) * 4, &word, 4);
          }
        }
      }
    }
}

void hmx_q2k_g16_row(const void *src, int64_t k, int64_t j, float *dst) {
  const unsigned char *s = src;
  const int64_t nb = k / 256, g = j / HMX_QG;
  const int r = (int)(j % HMX_QG);
  for (int64_t b = 0; b < nb; b++) {
    const unsigned char *blk = s + (g * nb + b) * HMX_Q2K_G16_BLOCK;
    float dd, dm;
    memcpy(&dd, blk + Q2K_D + 4 * r, 4);
    memcpy(&dm, blk + Q2K_DMIN + 4 * r, 4);
    for (int c = 0; c < 8; c++) {
      const unsigned char *ch = blk + Q2K_CHUNK(c);
      uint16_t sm;
      memcpy(&sm, ch + 2 * r, 2);
      for (int w = 0; w < 2; w++) {
        const int s8 = (sm >> (8 * w)) & 0xFF; /* scales[2c + w] */
        const float ds = dd * (float)(s8 & 0x0F), ms = dm * (float)(s8 >> 4);
        uint32_t word;
        memcpy(&word, ch + 2 * HMX_QG + (w * HMX_QG + r) * 4, 4);
        for (int i = 0; i < 16; i++)
          dst[b * 256 + 32 * c + 16 * w + i] = ds * (float)((word >> (2 * i)) & 3) - ms;
      }
    }
  }
}
