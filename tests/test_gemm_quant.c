/* gemm with GGUF weights in place (src/gemm_quant.h, HMX_WQ_GEMM) against
 * "dequantize, then the reference gemm", bit for bit (the exact-tier rule of
 * docs/NUMERICS.md: identical bits, any NaN equal to any NaN; the CUDA backend
 * returns the default NaN where x86 propagates a payload), on every
 * backend this machine runs, with 1 and 2 threads: Q4_1, Q8_0, Q4_0, Q6_K,
 * Q4_K, Q5_K, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL, IQ4_XS, F16, BF16 and F32, in GGUF's row layout
 * and the G16 layout (the regrouped bytes, or the packed form of the K and
 * 5-bit types)
 * (src/gemm_quant.h), odd N, K a multiple of the block, M = 1 (the decode GEMV)
 * and M > 1 (the packed path), block scales that include subnormal f16s,
 * zero, and (one case per type) infinity and NaN. */
#include "check.h"
#include "threads.h"
#include "backend.h"
#include "compare.h"
#include "dispatch.h"
#include "gemm_quant.h"
#include "gguf.h"
#include "tuning.h" /* src/: the x86 tuning profiles */
#include "../ref/ref.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static float uniform(void) { return (float)(next() >> 40) / (float)(1 << 24) * 2.0f - 1.0f; }

/* An f16 block scale: mostly moderate, sometimes subnormal or zero; with
 * `specials`, sometimes infinite or NaN. */
static uint16_t scale16(int specials) {
  const uint64_t r = next() % 64;
  if (specials && r == 0) return 0x7C00;                 /* +inf */
  if (specials && r == 1) return 0x7E01;                 /* NaN */
  if (r == 2) return (uint16_t)(next() % 0x3FF + 1);     /* subnormal */
  if (r == 3) return 0x8000;                             /* -0 */
  return hmx_f32_to_f16(uniform() * 0.05f);
}

static void put16(unsigned char *p, uint16_t h) {
  p[0] = (unsigned char)h;
  p[1] = (unsigned char)(h >> 8);
}

/* n elements of random blocks of `type`. */
static void fill(uint32_t type, unsigned char *b, int64_t n, int specials) {
  int64_t block, bytes;
  hmx_gguf_type_block(type, &block, &bytes);
  for (int64_t i = 0; i < n / block * bytes; i++) b[i] = (unsigned char)next();
  for (int64_t i = 0; i < n / block; i++) {
    unsigned char *p = b + i * bytes;
    switch (type) {
    case HMX_GGML_F16: put16(p, hmx_f32_to_f16(uniform())); break;
    case HMX_GGML_BF16: put16(p, hmx_f32_to_bf16(uniform())); break;
    case HMX_GGML_F32: { /* little-endian, as GGUF stores it */
      const float v = uniform();
      uint32_t u;
      memcpy(&u, &v, 4);
      for (int j = 0; j < 4; j++) p[j] = (unsigned char)(u >> (8 * j));
      break;
    }
    case HMX_GGML_Q8_0: case HMX_GGML_Q4_0: case HMX_GGML_Q5_0: case HMX_GGML_IQ4_NL:
    case HMX_GGML_IQ4_XS: /* d; IQ4_XS's 6-bit sub-block scales random */
      put16(p, scale16(specials));
      break;
    case HMX_GGML_Q4_1: case HMX_GGML_Q5_1:
      put16(p, scale16(specials));
      put16(p + 2, scale16(specials));
      break;
    case HMX_GGML_Q6_K: put16(p + 208, scale16(specials)); break;
    case HMX_GGML_Q4_K: case HMX_GGML_Q5_K: /* d, dmin; the 6-bit scales and mins random */
      put16(p, scale16(specials));
      put16(p + 2, scale16(specials));
      break;
    case HMX_GGML_Q2_K: /* d, dmin; the 4-bit scales and mins random */
      put16(p + 80, scale16(specials));
      put16(p + 82, scale16(specials));
      break;
    case HMX_GGML_Q3_K: put16(p + 108, scale16(specials)); break;
    }
  }
}

static int run_case(const hmx_backend *be, uint32_t type, int64_t m, int64_t n, int64_t k,
                    int specials, int layout) {
  int64_t block, bytes;
  hmx_gguf_type_block(type, &block, &bytes);
  unsigned char *bq = malloc((size_t)(n * k / block * bytes));
  float *a = malloc((size_t)(m * k) * sizeof(float)), *bf = malloc((size_t)(n * k) * sizeof(float));
  float *want = malloc((size_t)(m * n) * sizeof(float)), *got = malloc((size_t)(m * n) * sizeof(float));
  fill(type, bq, n * k, specials);
  for (int64_t i = 0; i < m * k; i++) a[i] = uniform();
  /* the definition: dequantize (the GGUF rule), then the reference gemm */
  CHECK(!hmx_gguf_dequantize(type, bq, n * k, bf), "dequantize: %s", hmx_last_error());
  hmx_gemm_args g = {a, bf, NULL, want, m, n, k, 1, 1, HMX_F32, NULL, NULL, 0, 0, NULL};
  hmx_ref_gemm(&g);
  int bad = 0;
  unsigned char *g16 = NULL;
  if (layout == HMX_QLAYOUT_G16) {
    g16 = malloc(hmx_qlayout_g16_bytes(type, n, k));
    hmx_qlayout_to_g16(type, bq, n, k, g16);
  }
  for (int threads = 1; threads <= test_thread_max(2); threads++) {
    hmx_context ctx = {be, threads, 0, HMX_TIER_EXACT};
    hmx_tensor A = hmx_tensor_2d(a, HMX_F32, m, k), C = hmx_tensor_2d(got, HMX_F32, m, n);
    hmx_qmatrix B = {type, g16 ? g16 : bq, n, k, layout, NULL};
    memset(got, 0xA5, (size_t)(m * n) * sizeof(float));
    hmx_status st = hmx_gemm_quant(&ctx, &A, &B, &C);
    CHECK(st == HMX_OK, "%s %s: %s", hmx_backend_name(be), hmx_gguf_type_name(type),
          hmx_last_error());
    hmx_tensor W = hmx_tensor_2d(want, HMX_F32, m, n);
    hmx_diff_stats ds;
    const int same = hmx_compare(&C, &W, &ds) == HMX_OK && ds.differing == 0;
    CHECK(same, "%s %s%s M=%lld N=%lld K=%lld threads=%d specials=%d: not the bits of "
          "dequantize + ref gemm", hmx_backend_name(be), hmx_gguf_type_name(type),
          layout ? " (G16)" : "", (long long)m, (long long)n, (long long)k, threads, specials);
    bad |= !same;
  }
  /* A backend with device kernels (cuda) also reads a GPU copy of the
   * stored bytes (hmx_qmatrix.dev, as hmx_model_prepare makes one): with the
   * host bytes zeroed, the bits must still be ref's, so the copy is what it
   * decodes. */
  const hmx_device_ops *dops = hmx_device_ops_of(be);
  /* (f32 / f16 / bf16 in rows are plain tensors, read from host memory:
   * hmx_gemm_quant; hmx_model_prepare makes no GPU copy of them) */
  if (dops && (be->weights16 & HMX_WQ_GEMM) && (g16 || !hmx_qtype_is_float(type))) {
    const size_t nb = g16 ? hmx_qlayout_g16_bytes(type, n, k) : (size_t)(n * k / block * bytes);
    void *dev = NULL;
    unsigned char *zero = calloc(nb, 1);
    const int up = zero && dops->resident_alloc(&dev, nb) == HMX_OK &&
                   dops->upload(dev, g16 ? (const void *)g16 : bq, nb) == HMX_OK;
    CHECK(up, "%s: GPU copy: %s", hmx_backend_name(be), hmx_last_error());
    if (up) {
      hmx_context ctx = {be, 1, 0, HMX_TIER_EXACT};
      hmx_tensor A = hmx_tensor_2d(a, HMX_F32, m, k), C = hmx_tensor_2d(got, HMX_F32, m, n);
      hmx_qmatrix B = {type, zero, n, k, layout, dev};
      memset(got, 0xA5, (size_t)(m * n) * sizeof(float));
      CHECK(hmx_gemm_quant(&ctx, &A, &B, &C) == HMX_OK, "%s %s (GPU copy): %s",
            hmx_backend_name(be), hmx_gguf_type_name(type), hmx_last_error());
      hmx_tensor W = hmx_tensor_2d(want, HMX_F32, m, n);
      hmx_diff_stats ds;
      CHECK(hmx_compare(&C, &W, &ds) == HMX_OK && ds.differing == 0, "%s %s%s M=%lld N=%lld "
            "K=%lld from the GPU copy: not the bits of dequantize + ref gemm",
            hmx_backend_name(be), hmx_gguf_type_name(type), layout ? " (G16)" : "",
            (long long)m, (long long)n, (long long)k);
    }
    if (dev) dops->resident_free(dev);
    free(zero);
  }
  free(g16); free(bq); free(a); free(bf); free(want); free(got);
  return bad;
}

int main(void) {
  static const uint32_t types[] = {HMX_GGML_Q4_1, HMX_GGML_Q8_0, HMX_GGML_Q4_0, HMX_GGML_Q6_K,
                                   HMX_GGML_Q4_K, HMX_GGML_Q5_K, HMX_GGML_Q5_0, HMX_GGML_Q5_1,
                                   HMX_GGML_Q2_K, HMX_GGML_Q3_K, HMX_GGML_IQ4_NL,
                                   HMX_GGML_IQ4_XS, HMX_GGML_F16, HMX_GGML_BF16, HMX_GGML_F32};
  /* M, N, K (K a multiple of 256, so of every block): odd N, N below one
   * vector, N over several thread tiles, M = 1 and M > 1 (several K blocks;
   * N over several N blocks per thread, so float G16 read in place starts
   * its groups at every kind of offset; M = 1: the G16 GEMV takes 4 groups
   * side by side, then the 1-3 left together: N = 61 a pass ending in a
   * group of 13 rows, 37 / 90 / 131 3 / 2 / 1 groups left, the last partial;
   * 1100 68 full groups and one of 12 rows) */
  static const int64_t shapes[][3] = {{1, 37, 256}, {1, 5, 512}, {1, 131, 768}, {1, 61, 512},
                                      {1, 90, 256}, {1, 1100, 256}, {3, 37, 256},
                                      {17, 67, 512}, {1, 577, 256}, {20, 1100, 512},
                                      /* 2 threads, M >= 4 blocks of rows: column tiles
                                       * that split evenly (x86: a column range per
                                       * thread; several N and K blocks, N past whole
                                       * panels), then an odd count of them (the x86
                                       * team path: 5 tiles on avx512, 9 on avx2; a
                                       * short last M block) */
                                      {260, 600, 512}, {260, 136, 512}};
  int ran = 0;
  for (int bi = 0; bi < hmx_backend_count(); bi++) {
    const hmx_backend *be = hmx_backend_at(bi);
    if (!hmx_backend_available(be) || !be->gemm) continue;
    printf("%s (%s)\n", hmx_backend_name(be),
           (be->weights16 & HMX_WQ_GEMM) ? "blocks decoded in place" : "dequantize + f32 gemm");
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
      for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int layout = 0; layout <= 1; layout++)
          if ((layout == HMX_QLAYOUT_ROWS || hmx_qlayout_g16_ok(types[ti])) &&
              /* the large shape for a block type and a float type only */
              (shapes[si][0] < 256 || types[ti] == HMX_GGML_Q8_0 || types[ti] == HMX_GGML_BF16))
            run_case(be, types[ti], shapes[si][0], shapes[si][1], shapes[si][2], si == 2, layout);
    ran++;
  }
  /* cuda's gemv_slab (cuda/gemv_slab.cu) for M <= 4: the float types read
   * in G16 as stored, in slabs of 256 k: K odd (a short last slab after 4
   * whole ones), K below one slab, N ending in a partial group of 16; and
   * a block type's decoded rows in 32 slabs, and in one. */
  for (int bi = 0; bi < hmx_backend_count(); bi++) {
    const hmx_backend *be = hmx_backend_at(bi);
    if (!hmx_backend_available(be) || !hmx_device_ops_of(be)) continue;
    static const uint32_t floats[] = {HMX_GGML_F32, HMX_GGML_F16, HMX_GGML_BF16};
    for (int m = 1; m <= 4; m++)
      for (int t = 0; t < 3; t++) {
        run_case(be, floats[t], m, 37, 1031, 0, HMX_QLAYOUT_G16);
        run_case(be, floats[t], m, 21, 200, m == 2, HMX_QLAYOUT_G16);
      }
    run_case(be, HMX_GGML_Q4_K, 3, 100, 8192, 0, HMX_QLAYOUT_G16);
    run_case(be, HMX_GGML_Q8_0, 4, 61, 256, 1, HMX_QLAYOUT_ROWS);
  }
  /* The x86 GEMV's prefetches, under every tuning profile (each must give
   * ref's bits):
   * - G16 matrices of at least XW_PF_MIN_BYTES (simd/x86/weights16_x86.h)
   *   at M = 1: the streams prefetch under the profiles whose gemv_pf_lines
   *   is set; the float types' loop then runs the elements a cache line at
   *   a time up to the prefetch's end and one at a time after it, the block
   *   types' prefetch stops at their group's end. K odd for the 16-bit
   *   types (two elements a line, the last line half used).
   * - Small K: under the profiles whose gemv_next_kib is set, each pass (4
   *   groups of 16 outputs) also prefetches the next pass's groups, and the
   *   float types' loop then runs the elements a line at a time to the end
   *   of K. N = 300 is 19 groups: 4 whole passes and a tail of 3 on one
   *   thread, 2 + 2 and tails on two (the last pass before a tail
   *   prefetches only the tail's groups). K = 512 (a whole block of every
   *   type; a pass of 20 KiB for Q4_1, 64 for f16 / bf16, 128 for f32) and
   *   K = 96 (a pass of 24 KiB in f32). */
  {
    int with_pf = 0, with_next = 0, x86 = 0;
    static const uint32_t small_k[] = {HMX_GGML_F32, HMX_GGML_F16, HMX_GGML_BF16, HMX_GGML_Q8_0,
                                       HMX_GGML_Q4_0, HMX_GGML_Q4_1, HMX_GGML_Q4_K, HMX_GGML_Q5_0,
                                       HMX_GGML_Q6_K, HMX_GGML_IQ4_NL, HMX_GGML_IQ4_XS};
    for (int bi = 0; bi < hmx_backend_count(); bi++) {
      const hmx_backend *be = hmx_backend_at(bi);
      if (!hmx_backend_available(be) || !hmx_x86_tuning_read_by(hmx_backend_name(be))) continue;
      x86 = 1;
      for (int i = 0; i < hmx_x86_tuning_count(); i++) {
        hmx_x86_tuning_force(hmx_x86_tuning_at(i));
        with_pf += hmx_x86_tuning_at(i)->gemv_pf_lines > 0;
        with_next += hmx_x86_tuning_at(i)->gemv_next_kib >= 24; /* f32 K = 96 */
        run_case(be, HMX_GGML_F32, 1, 1100, 1031, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_F16, 1, 1100, 2063, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_BF16, 1, 1100, 2063, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q8_0, 1, 1100, 4096, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q4_0, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q4_1, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q4_K, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q5_0, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q6_K, 1, 1100, 4096, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q3_K, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q2_K, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_IQ4_NL, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_IQ4_XS, 1, 1100, 8192, 0, HMX_QLAYOUT_G16);
        for (size_t t = 0; t < sizeof small_k / sizeof small_k[0]; t++)
          run_case(be, small_k[t], 1, 300, 512, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_F32, 1, 300, 96, 0, HMX_QLAYOUT_G16);
        run_case(be, HMX_GGML_Q4_1, 1, 300, 96, 0, HMX_QLAYOUT_G16);
      }
      hmx_x86_tuning_force(NULL);
    }
    CHECK(!x86 || with_pf > 0, "no tuning profile prefetched the G16 GEMV's streams");
    CHECK(!x86 || with_next > 0, "no tuning profile prefetched the next pass of the G16 GEMV");
  }
  /* the check can fail: a one-bit change in one block must show. The block
   * scales are set to 1 and the minimums to 0 (random ones can be zero or
   * subnormal, and then the change can round away): the flipped bit moves
   * weight 38 by exactly 1 and the sum of 64 small integers by 1. */
  {
    unsigned char blk[2 * 20];
    fill(HMX_GGML_Q4_1, blk, 64, 0);
    for (int b = 0; b < 2; b++) {
      put16(blk + 20 * b, 0x3C00);     /* d = 1 */
      put16(blk + 20 * b + 2, 0x0000); /* m = 0 */
    }
    float x[64], y0, y1;
    for (int i = 0; i < 64; i++) x[i] = 1.0f;
    hmx_tensor A = hmx_tensor_2d(x, HMX_F32, 1, 64), C = hmx_tensor_2d(&y0, HMX_F32, 1, 1);
    hmx_qmatrix B = {HMX_GGML_Q4_1, blk, 1, 64, HMX_QLAYOUT_ROWS, NULL};
    CHECK(!hmx_gemm_quant(NULL, &A, &B, &C), "%s", hmx_last_error());
    blk[30] ^= 1;
    C = hmx_tensor_2d(&y1, HMX_F32, 1, 1);
    CHECK(!hmx_gemm_quant(NULL, &A, &B, &C), "%s", hmx_last_error());
    CHECK(memcmp(&y0, &y1, sizeof y0) != 0, "a flipped weight bit did not change the output");
  }
  /* bad arguments are rejected */
  {
    float x[32] = {0}, y[1];
    unsigned char blk[20] = {0};
    hmx_tensor A = hmx_tensor_2d(x, HMX_F32, 1, 32), C = hmx_tensor_2d(y, HMX_F32, 1, 1);
    /* K not a multiple of 256 */
    hmx_qmatrix B = {HMX_GGML_Q6_K, blk, 1, 32, HMX_QLAYOUT_ROWS, NULL};
    CHECK(hmx_gemm_quant(NULL, &A, &B, &C) == HMX_ERR_SHAPE, "K %% block accepted");
    B.type = 99;
    CHECK(hmx_gemm_quant(NULL, &A, &B, &C) != HMX_OK, "unknown type accepted");
    B.type = HMX_GGML_Q6_K;
    B.k = 256;
    B.layout = 2; /* no such layout */
    CHECK(hmx_gemm_quant(NULL, &A, &B, &C) != HMX_OK, "layout 2 accepted");
  }
  CHECK(ran >= 1, "no backend ran");
  return check_finish("test_gemm_quant");
}
