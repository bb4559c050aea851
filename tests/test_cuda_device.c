/* The cuda backend on device memory (tensors with memory = HMX_MEMORY_CUDA)
 * against ref on the host, with memcmp: every fwht size class (n = 2^k up
 * to 2^20, m * 2^k with m = 12, 20, 28, 40 up to k = 15: one-pass,
 * persistent (large batches of the f32 m-point rows >= 14336: fwht_pow2
 * staging the next rows, fwht_colsplit for 12 * 2048, 20 * 1024, 28 * 1024), cluster
 * (n > 32768 up to 40 * 2048 and 2^17) and two-pass kernels), f32 / bf16 /
 * f16 I/O read and written by the kernel,
 * in place and out of place, 16-byte aligned and not (vector and scalar
 * loads), hadamard_mix, the other seven ops (gemm and attention also at
 * sizes that take every path of their tiled kernels), a user stream, the same
 * fwht sizes through the host-memory path, empty batches of every op and a
 * device allocation that fails. Inputs are finite random
 * numbers, so memcmp is the exact rule (no NaN payloads involved).
 *
 *   test_cuda_device [quick]     (quick: fewer sizes, for compute-sanitizer)
 *
 * Exit 77 (ctest: skipped) without a usable GPU. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "hadamix.h"
#include "../cuda/cuda_kernels.h" /* hmx_cuda_attention_reruns */

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float rnd(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (float)(z >> 40) * 0x1p-23f - 1.0f; /* [-1, 1) */
}

static int cuda_ok(cudaError_t e, const char *what) {
  CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

static const hmx_backend *cuda_be;
static hmx_context ref_ctx, cuda_ctx;
static int quick;

/* Host buffer of n elements of dt holding random values (bf16/f16: the
 * rounded random floats). */
static void *host_random(hmx_dtype dt, int64_t n) {
  size_t es = hmx_dtype_size(dt);
  unsigned char *p = malloc((size_t)n * es + 16);
  for (int64_t i = 0; i < n; i++) {
    float f = rnd();
    if (dt == HMX_F32) memcpy(p + i * 4, &f, 4);
    else {
      uint16_t h = dt == HMX_BF16 ? hmx_f32_to_bf16(f) : hmx_f32_to_f16(f);
      memcpy(p + i * 2, &h, 2);
    }
  }
  return p;
}

/* A device copy of host data, `off` elements past a 256-byte boundary
 * (off = 1: not 16-byte aligned, the kernels' scalar path). */
typedef struct dbuf { void *base; void *p; } dbuf;
static dbuf dev_copy(const void *h, size_t bytes, size_t es, int off) {
  dbuf d = {NULL, NULL};
  if (!cuda_ok(cudaMalloc(&d.base, bytes + 256), "cudaMalloc")) return d;
  d.p = (char *)d.base + (size_t)off * es;
  if (h) cuda_ok(cudaMemcpy(d.p, h, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  else cuda_ok(cudaMemset(d.p, 0xAB, bytes), "cudaMemset"); /* poison outputs */
  return d;
}
static void dev_free(dbuf *d) {
  if (d->base) cuda_ok(cudaFree(d->base), "cudaFree");
  d->base = d->p = NULL;
}
static hmx_tensor on_dev(hmx_tensor t, void *p) {
  t.data = p;
  t.memory = HMX_MEMORY_CUDA;
  return t;
}

/* Download bytes and compare with want. */
static void compare_dev(const void *dev, const void *want, size_t bytes, const char *what) {
  unsigned char *got = malloc(bytes ? bytes : 1);
  /* cudaMemcpy on the legacy default stream waits for the queued work */
  if (cuda_ok(cudaMemcpy(got, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H")) {
    size_t first = bytes;
    for (size_t i = 0; i < bytes && first == bytes; i++)
      if (got[i] != ((const unsigned char *)want)[i]) first = i;
    CHECK(first == bytes, "%s: differs from ref (first byte %zu of %zu)", what, first, bytes);
  }
  free(got);
}

/* fwht (mix = 0) or hadamard_mix (mix = 1) of [batch, n] in dtype dt with
 * factor m_req, on device memory, against ref. */
static void fwht_case_scaled(int64_t batch, int64_t n, int m_req, hmx_dtype dt, int mix,
                             int in_place, int off, float scale) {
  char what[200];
  snprintf(what, sizeof what, "%s n=%lld b=%lld m=%d %s%s scale=%a off=%d",
           mix ? "hadamard_mix" : "fwht", (long long)n, (long long)batch, m_req,
           hmx_dtype_name(dt), in_place ? " in place" : "", (double)scale, off);
  size_t es = hmx_dtype_size(dt), bytes = (size_t)(batch * n) * es;
  void *hx = host_random(dt, batch * n);
  void *hwant = malloc(bytes);
  float *alpha = host_random(HMX_F32, n), *beta = host_random(HMX_F32, n);
  hmx_tensor x = hmx_tensor_2d(hx, dt, batch, n), y = hmx_tensor_2d(hwant, dt, batch, n);
  hmx_tensor ta = hmx_tensor_1d(alpha, HMX_F32, n), tb = hmx_tensor_1d(beta, HMX_F32, n);
  hmx_status s = mix ? hmx_hadamard_mix(&ref_ctx, &x, &ta, &tb, &y)
                     : hmx_fwht_factor(&ref_ctx, &x, &y, scale, m_req);
  CHECK(s == HMX_OK, "%s: ref: %s", what, hmx_last_error());
  dbuf dx = dev_copy(hx, bytes, es, off);
  dbuf dy = in_place ? dx : dev_copy(NULL, bytes, es, off);
  dbuf da = dev_copy(alpha, (size_t)n * 4, 4, 0), db = dev_copy(beta, (size_t)n * 4, 4, 0);
  if (dx.p && dy.p && da.p && db.p) {
    hmx_tensor gx = on_dev(x, dx.p), gy = on_dev(y, dy.p);
    hmx_tensor ga = on_dev(ta, da.p), gb = on_dev(tb, db.p);
    s = mix ? hmx_hadamard_mix(&cuda_ctx, &gx, &ga, &gb, &gy)
            : hmx_fwht_factor(&cuda_ctx, &gx, &gy, scale, m_req);
    CHECK(s == HMX_OK, "%s: cuda: %s", what, hmx_last_error());
    if (s == HMX_OK) compare_dev(dy.p, hwant, bytes, what);
  }
  if (!in_place) dev_free(&dy);
  dev_free(&dx);
  dev_free(&da);
  dev_free(&db);
  free(hx);
  free(hwant);
  free(alpha);
  free(beta);
}

static void fwht_case(int64_t batch, int64_t n, int m_req, hmx_dtype dt, int mix, int in_place,
                      int off) {
  const float scale = 0.0625f * (1.0f + rnd()); /* any finite scale */
  fwht_case_scaled(batch, n, m_req, dt, mix, in_place, off, scale);
}

/* The same fwht through the host-memory path of the cuda backend. */
static void fwht_host_case(int64_t batch, int64_t n, int m_req) {
  float *x = host_random(HMX_F32, batch * n);
  float *want = malloc((size_t)(batch * n) * 4), *got = malloc((size_t)(batch * n) * 4);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, batch, n);
  hmx_tensor tw = hmx_tensor_2d(want, HMX_F32, batch, n), tg = hmx_tensor_2d(got, HMX_F32, batch, n);
  CHECK(hmx_fwht_factor(&ref_ctx, &tx, &tw, 0.5f, m_req) == HMX_OK, "ref");
  hmx_status s = hmx_fwht_factor(&cuda_ctx, &tx, &tg, 0.5f, m_req);
  CHECK(s == HMX_OK && memcmp(got, want, (size_t)(batch * n) * 4) == 0,
        "host-memory fwht n=%lld m=%d: %s", (long long)n, m_req,
        s == HMX_OK ? "differs from ref" : hmx_last_error());
  free(x);
  free(want);
  free(got);
}

/* fwht_colsplit (f32 12 * 2048, 20 * 1024, 28 * 1024; one CTA a row, the
 * m-point sums in registers, the next round's input staged by cp.async) and
 * fwht_colsplit_cl (12 * 4096, 20 * 2048, 28 * 2048: a cluster of two CTAs
 * a row, each summing half the columns, the other half pushed to the other
 * CTA; 20 * 2048 on fwht_cluster with HMX_FWHT_COLSPLIT_CLUSTER=1, and 40 *
 * 1024 always):
 * more rows than the resident CTAs (clusters), so each loops over rows and
 * stages the next row's first blocks while finishing a row; in place (a
 * row is written only after every CTA of it has read its part), with the
 * mix epilogue, and unaligned (fwht_pow2 and fwht_cluster take those). Also
 * alone (`test_cuda_device colsplit`), for compute-sanitizer runs of these
 * kernels (HMX_CUDA_TRACE=1 shows which ran). */
static void test_fwht_colsplit(void) {
  static const int cs_ml[][2] = {{12, 11}, {20, 10}, {28, 10}, {12, 12},
                                 {28, 11}, {20, 11}, {40, 10}};
  for (size_t i = 0; i < sizeof cs_ml / sizeof cs_ml[0]; i++) {
    const int64_t n = (int64_t)cs_ml[i][0] << cs_ml[i][1], rows = ((int64_t)8 << 20) / n + 1;
    fwht_case(rows, n, cs_ml[i][0], HMX_F32, 0, 1, 0);
    fwht_case(rows, n, cs_ml[i][0], HMX_F32, 1, 0, 0);
    if (!quick) fwht_case(rows, n, cs_ml[i][0], HMX_F32, 0, 0, 1);
  }
}

/* fwht_pow2's m-point rows whose p-block butterflies synchronise as a warp
 * (p-blocks of at most 32 threads, HMX_FWHT_POW2_WARP_SYNC) and the
 * power-of-two rows of the same windows, in f32 and bf16, with more rows
 * than a CTA's group (the persistent kernel's later groups too), the mix
 * epilogue and in place. Run by test_fwht's sizes too; alone
 * (`test_cuda_device pow2`) for compute-sanitizer runs. */
static void test_fwht_pow2_warp(void) {
  static const int ml[][2] = {{1, 9}, {12, 9}, {20, 9}, {28, 7}, {28, 8}, {28, 9}, {40, 8}, {40, 9}};
  static const hmx_dtype dts[2] = {HMX_F32, HMX_BF16};
  for (size_t i = 0; i < sizeof ml / sizeof ml[0]; i++)
    for (int d = 0; d < 2; d++) {
      const int64_t n = (int64_t)ml[i][0] << ml[i][1], rows = ((int64_t)2 << 20) / n + 1;
      const int m = ml[i][0] == 1 ? 0 : ml[i][0];
      fwht_case(rows, n, m, dts[d], 0, 0, 0);
      fwht_case(rows, n, m, dts[d], 1, 1, 0);
    }
}

/* HMX_CUDA_FWHT_FAST_MEMORY's value before a test that sets it (NULL:
 * unset), and putting it back (setenv may free the string getenv gave). */
static char *fast_memory_save(void) {
  const char *was = getenv("HMX_CUDA_FWHT_FAST_MEMORY");
  return was ? strdup(was) : NULL;
}
static void fast_memory_restore(char *saved) {
  if (saved) setenv("HMX_CUDA_FWHT_FAST_MEMORY", saved, 1);
  else unsetenv("HMX_CUDA_FWHT_FAST_MEMORY");
  free(saved);
}

/* The rows whose fwht_pow2 takes 16 or 32 elements a thread by the
 * device's balance (cuda/device_balance.cu, pow2_log_e's FM), each with
 * HMX_CUDA_FWHT_FAST_MEMORY=0 and =1: the output against ref, and the
 * kernel that ran (hmx_cuda_fwht_pow2_last_elems); two rows whose kernel is
 * the same either way; f32 16384, persistent with fast memory, in place
 * and unaligned; and f32 40 * 256, persistent only with fast memory
 * (hmx_cuda_fwht_pow2_last_persistent). The variable is restored
 * afterwards. */
static void test_fwht_fast_memory(void) {
  static const struct {
    int m, l;
    hmx_dtype dt;
    int e_slow, e_fast;
  } cs[] = {{1, 9, HMX_BF16, 16, 32},  {1, 10, HMX_F16, 16, 32}, {1, 12, HMX_BF16, 16, 32},
            {1, 13, HMX_F32, 16, 32},  {1, 14, HMX_F32, 16, 32}, {12, 10, HMX_F32, 16, 32},
            {20, 9, HMX_F32, 16, 32},  {1, 8, HMX_BF16, 16, 16}, {12, 9, HMX_F32, 16, 16},
            {28, 8, HMX_F32, 16, 32},  {40, 7, HMX_F32, 16, 32}};
  /* (odd i run hadamard_mix, which picks m itself: the smallest that
   * divides n, so 28 for 7168 and 12 for 12288, 20 for 5120) */
  char *saved = fast_memory_save();
  for (int fm = 0; fm < 2; fm++) {
    setenv("HMX_CUDA_FWHT_FAST_MEMORY", fm ? "1" : "0", 1);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
      const int64_t n = (int64_t)cs[i].m << cs[i].l, rows = ((int64_t)2 << 20) / n + 1;
      fwht_case(rows, n, cs[i].m == 1 ? 0 : cs[i].m, cs[i].dt, (int)(i % 2), 0, 0);
      const int want = fm ? cs[i].e_fast : cs[i].e_slow, got = hmx_cuda_fwht_pow2_last_elems();
      CHECK(got == want, "fwht n=%lld %s with HMX_CUDA_FWHT_FAST_MEMORY=%d: fwht_pow2 with %d "
            "elements a thread, not %d", (long long)n, hmx_dtype_name(cs[i].dt), fm, got, want);
    }
    /* the persistent m = 1 kernel (fast memory, HMX_FWHT_PF_M1) with more
     * rows than the resident CTAs (later groups too), in place, and on
     * unaligned input, which each thread loads itself instead of from the
     * stage */
    fwht_case(((int64_t)8 << 20) / 16384 + 3, 16384, 0, HMX_F32, 0, 1, 0);
    fwht_case(((int64_t)8 << 20) / 16384 + 3, 16384, 0, HMX_F32, 1, 0, 1);
    /* f32 40 * 256: the persistent kernel only with fast memory
     * (HMX_FWHT_PF_MIN_N_M40), later groups; then in place with unaligned
     * input (no stage). (hadamard_mix would take 20 * 512 for 10240.) */
    for (int k = 0; k < 2; k++) {
      fwht_case(((int64_t)8 << 20) / 10240 + 3, 10240, 40, HMX_F32, 0, k, k);
      CHECK(hmx_cuda_fwht_pow2_last_persistent() == fm, "fwht n=10240 m=40 f32 with "
            "HMX_CUDA_FWHT_FAST_MEMORY=%d: persistent kernel %d, not %d", fm,
            hmx_cuda_fwht_pow2_last_persistent(), fm);
    }
  }
  fast_memory_restore(saved);
}

/* fwht_pow2's m = 1 rows whose last window keeps the low index bits
 * (pow2_split_bits: each thread ends with runs of consecutive outputs and
 * stores each run at once, 16-bit ones rounded a pair at a time): bf16 /
 * f16 2048 and 4096 (runs of 8, 16 bytes) and f32 16384 (the persistent
 * kernel, runs of 2), next to 16-bit 8192, 16384 and f32 8192, whose
 * kernels keep the plain window; all with 32 elements a thread
 * (HMX_CUDA_FWHT_FAST_MEMORY=1, so on any GPU). x and y 0, 1, 2 and 4
 * elements past a 16-byte boundary: a run's store where y is aligned to the
 * run's bytes, the element stores where not (f32 16384 at 2 elements takes
 * the former, bf16 2048 the latter); the mix epilogue (the runs' columns),
 * in place, and a scale that makes the outputs subnormal (the paired
 * conversion keeps them, as ref does). The variable is restored
 * afterwards. */
static void test_fwht_split_store(void) {
  static const struct {
    int l;
    hmx_dtype dt;
  } cs[] = {{11, HMX_BF16}, {12, HMX_F16}, {13, HMX_BF16}, {14, HMX_F16},
            {11, HMX_F16},  {14, HMX_BF16}, {13, HMX_F32},  {14, HMX_F32}};
  static const int offs[] = {0, 1, 2, 4};
  char *saved = fast_memory_save();
  setenv("HMX_CUDA_FWHT_FAST_MEMORY", "1", 1);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    const int64_t n = (int64_t)1 << cs[i].l, rows = ((int64_t)2 << 20) / n + 1;
    for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++) {
      if (quick && o > 1) break;
      fwht_case(rows, n, 0, cs[i].dt, (int)(o % 2), 0, offs[o]);
    }
    fwht_case(rows, n, 0, cs[i].dt, 1, 1, 0);
    /* outputs below 2^-126 (bf16, f32; most below 2^-14 for f16): subnormal */
    fwht_case_scaled(rows, n, 0, cs[i].dt, 0, 0, 0, cs[i].dt == HMX_F16 ? 0x1p-20f : 0x1p-140f);
    CHECK(hmx_cuda_fwht_pow2_last_elems() == 32, "fwht n=%lld %s: fwht_pow2 with %d elements a "
          "thread, not 32", (long long)n, hmx_dtype_name(cs[i].dt), hmx_cuda_fwht_pow2_last_elems());
  }
  fast_memory_restore(saved);
}

/* 16-bit m-point rows whose m-point sums take two neighbouring columns a
 * thread (HMX_FWHT_MPOINT_PAIRS_MAX_M, 12: each output pair rounded by one
 * cvt and written by one 32-bit store): 12 * 32 ... 12 * 2048 in bf16 and
 * f16, with more rows than a CTA holds and a last CTA short of rows, the
 * output 0, 1 and 2 elements past a 16-byte boundary (pairs, the single
 * columns that an output not 4-byte aligned takes, pairs again on a 4-byte
 * boundary), in place with the mix epilogue, and outputs small enough to
 * round to subnormals. 12 * 64 and 12 * 1024 run under
 * HMX_CUDA_FWHT_FAST_MEMORY=0 and =1, whose kernels differ in their
 * register cap (pow2_maxreg_fm); the other rows on the device's own choice.
 * In test_cuda_device's full run and its `pow2` mode.
 * mpoint_pairs_rows(l): those cases for 12 * 2^l. */
static void mpoint_pairs_rows(int l) {
  static const hmx_dtype dts[2] = {HMX_BF16, HMX_F16};
  static const int offs[] = {0, 1, 2};
  const int64_t n = (int64_t)12 << l, rows = ((int64_t)1 << 20) / n + 3;
  for (int d = 0; d < 2; d++) {
    for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++) {
      if (quick && o == 2) break;
      fwht_case(rows, n, 12, dts[d], 0, (int)(o % 2), offs[o]);
    }
    fwht_case(rows, n, 12, dts[d], 1, 1, 0);
    fwht_case_scaled(rows, n, 12, dts[d], 0, 0, 0, dts[d] == HMX_F16 ? 0x1p-20f : 0x1p-140f);
  }
}
static void test_fwht_mpoint_pairs(void) {
  for (int l = 5; l <= 11; l++)
    if (l != 6 && l != 10) mpoint_pairs_rows(l);
  char *saved = fast_memory_save();
  for (int fm = 0; fm < 2; fm++) {
    setenv("HMX_CUDA_FWHT_FAST_MEMORY", fm ? "1" : "0", 1);
    mpoint_pairs_rows(6);
    mpoint_pairs_rows(10);
  }
  fast_memory_restore(saved);
}

/* fwht_cluster's m-point rows with several p-blocks a CTA, whose step a
 * synchronises each block over its own threads (HMX_FWHT_CLUSTER_BLOCK_BAR):
 * 40 * 1024 (blocks of 32 threads: __syncwarp) and 40 * 2048, 28 * 2048,
 * 20 * 2048, 12 * 4096 (64 or 128 threads: named barriers); f32 takes the
 * cluster only for M = 40 (the others run on fwht_colsplit_cl). Plain, and
 * hadamard_mix in place, which splits n itself (the smallest m first): 40 *
 * 1024 becomes 20 * 2048 (16-bit: fwht_cluster; f32: fwht_colsplit_cl) and
 * 40 * 2048 20 * 4096 (two passes: fwht_pow2 and fwht_factor). Also alone
 * (`test_cuda_device cluster`), for compute-sanitizer runs. */
static void test_fwht_cluster_blocks(void) {
  static const int ml[][2] = {{40, 10}, {40, 11}, {28, 11}, {20, 11}, {12, 12}};
  static const hmx_dtype dts[3] = {HMX_F32, HMX_BF16, HMX_F16};
  for (size_t i = 0; i < sizeof ml / sizeof ml[0]; i++)
    for (int d = ml[i][0] == 40 ? 0 : 1; d < 3; d++) {
      const int64_t n = (int64_t)ml[i][0] << ml[i][1], rows = ((int64_t)2 << 20) / n + 1;
      fwht_case(rows, n, ml[i][0], dts[d], 0, 0, 0);
      fwht_case(rows, n, ml[i][0], dts[d], 1, 1, 0);
    }
}

static void test_fwht(void) {
  static const hmx_dtype dts[3] = {HMX_F32, HMX_BF16, HMX_F16};
  static const int ms[4] = {12, 20, 28, 40};
  int top = quick ? 17 : 20;
  for (int k = 0; k <= top; k++) {
    int64_t n = (int64_t)1 << k;
    int64_t batch = n >= 65536 ? 1 : n >= 4096 ? 3 : 7;
    for (int d = 0; d < 3; d++) {
      fwht_case(batch, n, 0, dts[d], 0, 0, 0);
      if (quick && k % 3) continue;
      fwht_case(batch, n, 0, dts[d], 0, 1, 0);
      fwht_case(batch, n, 0, dts[d], 0, 0, 1);
    }
    if (!quick || k % 4 == 0) fwht_host_case(batch, n, 0);
  }
  for (int mi = 0; mi < 4; mi++)
    for (int k = 0; k <= 15; k += quick ? 3 : 1) {
      int64_t n = (int64_t)ms[mi] << k;
      /* more rows than one CTA of fwht_pow2 takes (up to 21 of 12 * 32 in
       * 16 bits), so that a CTA's later rounds of m-point columns are
       * checked too, and a last CTA with fewer rows than it holds */
      int64_t batch = n >= 65536 ? 1 : n >= 4096 ? 3 : 23;
      for (int d = 0; d < 3; d++) {
        fwht_case(batch, n, ms[mi], dts[d], 0, d == 1, 0);
        if (!quick && k % 2) fwht_case(batch, n, ms[mi], dts[d], 0, 0, 1);
      }
      if (!quick) fwht_host_case(batch, n, ms[mi]);
    }
  /* Batches of ~8M elements: more rows than the resident CTAs take at once,
   * so the persistent fwht_pow2 (HMX_FWHT_PF: f32 20 * 1024, 28 * 512,
   * 40 * 512) loops over several groups of rows, its next group's input
   * staged by cp.async (unaligned input: loaded directly); the other sizes
   * and dtypes on the plain kernel; hadamard_mix for the epilogue's columns
   * (its m is chosen by n: 20 for 20480). */
  static const int pf_ml[][2] = {{40, 9}, {20, 10}, {40, 5}, {28, 9}, {28, 6}, {20, 8}};
  for (size_t i = 0; i < sizeof pf_ml / sizeof pf_ml[0]; i++) {
    if (quick && i > 0) break;
    const int64_t n = (int64_t)pf_ml[i][0] << pf_ml[i][1], rows = ((int64_t)8 << 20) / n;
    for (int d = 0; d < 3; d++) {
      if (quick && d != 0) continue;
      fwht_case(rows, n, pf_ml[i][0], dts[d], (int)(i % 2), 0, 0);
      if (!quick) fwht_case(rows, n, pf_ml[i][0], dts[d], 0, d == 1, 1);
    }
  }
  test_fwht_colsplit();
  /* 40960 = 20 * 2048 and 49152 = 12 * 4096: the m-point sums with the mix
   * epilogue (fwht_cluster; 49152 in f32 fwht_colsplit_cl) */
  static const int64_t mix_n[] = {1,     16,    32,    256,   768,   1024,  4096,
                                  5120,  12288, 16384, 40960, 49152, 65536, 98304};
  for (size_t i = 0; i < sizeof mix_n / sizeof mix_n[0]; i++)
    for (int d = 0; d < 3; d++) fwht_case(mix_n[i] >= 65536 ? 1 : 3, mix_n[i], 0, dts[d], 1, d == 2, 0);
  /* Rows above 32768 elements in batches of more than 33 MiB as f32:
   * fwht_cluster (40 * 1024, 2^17 with the mix epilogue) with more clusters
   * than are resident at once (213 and 69 clusters of 8 CTAs). Session 27 ran it
   * also on two passes chunk by chunk (docs/results/h100/fwht_ab_13/). */
  static const int many_ml[][2] = {{40, 10}, {1, 17}};
  for (size_t i = 0; i < sizeof many_ml / sizeof many_ml[0] && !quick; i++) {
    const int64_t n = (int64_t)many_ml[i][0] << many_ml[i][1];
    const int64_t rows = ((int64_t)33 << 20) / (n * 4) + 3;
    for (int d = 0; d < 2; d++) fwht_case(rows, n, many_ml[i][0], dts[d], (int)i, 0, 0);
  }
  /* 16-bit rows of two passes in batches larger than their f32 scratch
   * (HMX_FWHT_SCRATCH_MIB, 256: 64 rows of 2^20, 409 of 40 * 4096), which
   * the batch goes through in chunks of rows: the last chunk short (one
   * row), in place, unaligned and with the mix epilogue. */
  static const int two_pass_ml[][3] = {{1, 20, 65}, {40, 12, 410}};
  for (size_t i = 0; i < sizeof two_pass_ml / sizeof two_pass_ml[0] && !quick; i++) {
    const int64_t n = (int64_t)two_pass_ml[i][0] << two_pass_ml[i][1];
    fwht_case(two_pass_ml[i][2], n, two_pass_ml[i][0], HMX_BF16, 0, 1, 0);
    fwht_case(two_pass_ml[i][2], n, two_pass_ml[i][0], HMX_F16, 1, 0, 1);
  }
}

/* Device scratch comes from hadamix's own stream-ordered pool, which keeps
 * HMX_CUDA_SCRATCH_KEEP_MIB (default 1024) of it mapped after a
 * synchronization; with 0 the device's default pool gives it back
 * (cuda/scratch_pool.cu). A bf16 fwht of 64 rows of 2^20 takes 256 MiB of
 * f32 scratch: after the call and a synchronization the pool holds most of
 * that more with a keep of 256 MiB or more, and no more with 0. (A first
 * call before the measurement loads the kernels and makes the pool.) The
 * pool's own count (hmx_cuda_scratch_reserved), not the device's free
 * memory: other tests run on the GPU at the same time (ctest -j), and one
 * of them moved the free memory by 492 MiB during this call. */
static void test_scratch_pool(void) {
  const char *env = getenv("HMX_CUDA_SCRATCH_KEEP_MIB");
  /* the library's rule: digits only, else the default */
  const int digits = env && *env && strspn(env, "0123456789") == strlen(env);
  const long long keep_mib = digits ? atoll(env) : 1024;
  const int64_t n = (int64_t)1 << 20, rows = 64;
  const size_t bytes = (size_t)(rows * n) * 2, scratch_mib = (size_t)(rows * n) * 4 >> 20;
  dbuf dx = dev_copy(NULL, bytes, 2, 0), dy = dev_copy(NULL, bytes, 2, 0);
  if (dx.p && dy.p && cuda_ok(cudaMemset(dx.p, 0, bytes), "cudaMemset")) {
    hmx_tensor x = on_dev(hmx_tensor_2d(NULL, HMX_BF16, rows, n), dx.p);
    hmx_tensor y = on_dev(hmx_tensor_2d(NULL, HMX_BF16, rows, n), dy.p);
    hmx_tensor x1 = x, y1 = y; /* the first call: one row, 4 MiB of scratch */
    x1.shape[0] = y1.shape[0] = 1;
    CHECK(hmx_fwht(&cuda_ctx, &x1, &y1, 1.0f) == HMX_OK, "scratch pool: first call: %s",
          hmx_last_error());
    int dev = 0;
    cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const long long held0 = hmx_cuda_scratch_reserved(dev);
    CHECK(hmx_fwht(&cuda_ctx, &x, &y, 1.0f) == HMX_OK, "scratch pool: %s", hmx_last_error());
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const long long held1 = hmx_cuda_scratch_reserved(dev);
    CHECK(held0 >= 0 && held1 >= 0, "scratch pool: its size unknown (%lld, %lld)", held0, held1);
    const double kept = (double)(held1 - held0) / (1 << 20);
    printf("scratch pool (HMX_CUDA_SCRATCH_KEEP_MIB %s): %.1f MiB held after a call with %zu MiB "
           "of scratch\n", env && *env ? env : "unset", kept, scratch_mib);
    /* the pool already holds what the first call mapped (32 MiB on the H100:
     * 224 MiB more after this call with the default keep, 96 with a keep
     * of 128, 0 with 0; docs/results/h100/scratch_pool/) */
    if (keep_mib >= 256)
      CHECK(kept >= 0.5 * (double)scratch_mib && kept <= 1.5 * (double)scratch_mib,
            "scratch pool (keep %lld MiB): %.1f MiB held after the call, want about %zu", keep_mib,
            kept, scratch_mib);
    else if (keep_mib == 0)
      CHECK(kept < 32.0, "scratch pool (keep 0): %.1f MiB held after the call, want ~0", kept);
    /* host-memory calls too (since session 56): a gemm whose f32 b is 512
     * MiB, more than the pool holds now, leaves it holding what it lacked
     * more (512 MiB less the free scratch it held: 288 MiB on the H200) with
     * a keep of 1024 MiB or more, and no more with 0 */
    const int64_t K = 16384, N = 8192;
    float *a = calloc((size_t)K, sizeof(float)), *b = calloc((size_t)(K * N), sizeof(float));
    float *c = malloc((size_t)N * sizeof(float));
    if (a && b && c) {
      hmx_tensor A = hmx_tensor_2d(a, HMX_F32, 1, K), B = hmx_tensor_2d(b, HMX_F32, K, N);
      hmx_tensor C = hmx_tensor_2d(c, HMX_F32, 1, N);
      CHECK(hmx_gemm(&cuda_ctx, &A, &B, 0, NULL, &C) == HMX_OK, "scratch pool: host gemm: %s",
            hmx_last_error());
      cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      const double more = (double)(hmx_cuda_scratch_reserved(dev) - held1) / (1 << 20);
      printf("scratch pool: %.1f MiB more held after a host-memory gemm with 512 MiB of b\n",
             more);
      const double lacked = 512.0 - (double)held1 / (1 << 20);
      if (keep_mib >= 1024)
        CHECK(more >= 0.5 * lacked, "scratch pool (keep %lld MiB): %.1f MiB more held after a "
              "host call with 512 MiB of scratch, want about %.1f", keep_mib, more, lacked);
      else if (keep_mib == 0)
        CHECK(more < 32.0, "scratch pool (keep 0): %.1f MiB more held after a host call, want ~0",
              more);
    }
    free(a);
    free(b);
    free(c);
  }
  dev_free(&dx);
  dev_free(&dy);
}

/* One f32 op on device memory against ref: `run` calls the op on tensors
 * t[0..nt-1] (the last is the output). ref_fails = 0: both succeed and the
 * outputs are equal; 1: ref rejects the call and cuda returns ref's status. */
typedef hmx_status (*op_fn)(const hmx_context *c, hmx_tensor **t, const void *extra);

static void op_run(const char *what, hmx_tensor *const *host, int nt, op_fn run,
                   const void *extra, int ref_fails) {
  hmx_tensor *tr[8], *td[8];
  hmx_tensor hv[8], dv[8];
  dbuf db[8];
  size_t bytes[8];
  for (int i = 0; i < nt; i++) {
    hv[i] = *host[i];
    bytes[i] = (size_t)hmx_tensor_numel(&hv[i]) * hmx_dtype_size(hv[i].dtype);
    tr[i] = &hv[i];
  }
  const hmx_status want = run(&ref_ctx, tr, extra);
  if (ref_fails) CHECK(want != HMX_OK, "%s: ref accepts it", what);
  else CHECK(want == HMX_OK, "%s: ref: %s", what, hmx_last_error());
  int ok = 1;
  for (int i = 0; i < nt; i++) {
    db[i] = dev_copy(i == nt - 1 ? NULL : hv[i].data, bytes[i], hmx_dtype_size(hv[i].dtype), 0);
    ok &= db[i].p != NULL;
    dv[i] = on_dev(hv[i], db[i].p);
    td[i] = &dv[i];
  }
  if (ok) {
    const hmx_status s = run(&cuda_ctx, td, extra);
    if (ref_fails) {
      CHECK(s == want, "%s: cuda %s, ref %s (%s)", what, hmx_status_string(s),
            hmx_status_string(want), hmx_last_error());
    } else {
      CHECK(s == HMX_OK, "%s: cuda: %s", what, hmx_last_error());
      if (s == HMX_OK) compare_dev(db[nt - 1].p, hv[nt - 1].data, bytes[nt - 1], what);
    }
  }
  for (int i = 0; i < nt; i++) dev_free(&db[i]);
}
static void op_case(const char *what, hmx_tensor *const *host, int nt, op_fn run,
                    const void *extra) {
  op_run(what, host, nt, run, extra, 0);
}

static hmx_status run_gemm(const hmx_context *c, hmx_tensor **t, const void *e) {
  return hmx_gemm(c, t[0], t[1], *(const int *)e, t[2], t[3]);
}
static hmx_status run_gemm_nobias(const hmx_context *c, hmx_tensor **t, const void *e) {
  return hmx_gemm(c, t[0], t[1], *(const int *)e, NULL, t[2]);
}
static hmx_status run_mix(const hmx_context *c, hmx_tensor **t, const void *e) {
  (void)e;
  return hmx_hadamard_mix(c, t[0], t[1], t[2], t[3]);
}
static hmx_status run_rms(const hmx_context *c, hmx_tensor **t, const void *e) {
  (void)e;
  return hmx_rmsnorm(c, t[0], t[1], 1e-5f, t[2]);
}
static hmx_status run_ln(const hmx_context *c, hmx_tensor **t, const void *e) {
  (void)e;
  return hmx_layernorm(c, t[0], t[1], t[2], 1e-5f, t[3]);
}
static hmx_status run_rope(const hmx_context *c, hmx_tensor **t, const void *e) {
  return hmx_rope(c, t[0], t[1], 10000.0f, *(const int *)e, HMX_ROPE_HALF, t[2]);
}
static hmx_status run_att(const hmx_context *c, hmx_tensor **t, const void *e) {
  return hmx_attention(c, t[0], t[1], t[2], (const hmx_attention_params *)e, t[3]);
}
static hmx_status run_swiglu(const hmx_context *c, hmx_tensor **t, const void *e) {
  (void)e;
  return hmx_swiglu(c, t[0], t[1], t[2], t[3], 0, t[4]);
}

/* A random host tensor of dtype dt (bf16 / f16: the rounded random floats). */
static hmx_tensor rnd_tensor_dt(hmx_dtype dt, int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t sh[4] = {a, b, c, d};
  hmx_tensor t = hmx_tensor_make(NULL, dt, nd, sh);
  t.data = host_random(dt, hmx_tensor_numel(&t));
  return t;
}
static hmx_tensor rnd_tensor(int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
  return rnd_tensor_dt(HMX_F32, nd, a, b, c, d);
}

/* rmsnorm and layernorm of `rows` rows of n (what: a name prefix). n = 777
 * fits the kernels' shared chunk (cuda/kernels.cu kNormChunk, 2048); 4099
 * takes two whole chunks and 3 floats, read again from x by the last pass. */
static void norm_cases(const char *what, int64_t rows, int64_t n) {
  hmx_tensor x = rnd_tensor(2, rows, n, 0, 0), w = rnd_tensor(1, n, 0, 0, 0);
  hmx_tensor bb = rnd_tensor(1, n, 0, 0, 0), y = rnd_tensor(2, rows, n, 0, 0);
  hmx_tensor *t1[] = {&x, &w, &y}, *t2[] = {&x, &w, &bb, &y};
  char name[64];
  snprintf(name, sizeof name, "%srmsnorm", what);
  op_case(name, t1, 3, run_rms, NULL);
  snprintf(name, sizeof name, "%slayernorm", what);
  op_case(name, t2, 4, run_ln, NULL);
  free(x.data), free(w.data), free(bb.data), free(y.data);
}

/* swiglu of `tokens` tokens, d = 96, h = 200, output 80 */
static void swiglu_case(const char *what, int64_t tokens) {
  hmx_tensor x = rnd_tensor(2, tokens, 96, 0, 0), w1 = rnd_tensor(2, 96, 200, 0, 0);
  hmx_tensor w3 = rnd_tensor(2, 96, 200, 0, 0), w2 = rnd_tensor(2, 200, 80, 0, 0);
  hmx_tensor y = rnd_tensor(2, tokens, 80, 0, 0);
  hmx_tensor *t[] = {&x, &w1, &w3, &w2, &y};
  op_case(what, t, 5, run_swiglu, NULL);
  free(x.data), free(w1.data), free(w3.data), free(w2.data), free(y.data);
}

static void test_other_ops(void) {
  /* gemm, both layouts, with and without bias */
  for (int tb = 0; tb <= 1; tb++) {
    hmx_tensor a = rnd_tensor(2, 67, 45, 0, 0), b = tb ? rnd_tensor(2, 70, 45, 0, 0)
                                                      : rnd_tensor(2, 45, 70, 0, 0);
    hmx_tensor bias = rnd_tensor(1, 70, 0, 0, 0), c = rnd_tensor(2, 67, 70, 0, 0);
    hmx_tensor *t[] = {&a, &b, &bias, &c};
    op_case(tb ? "gemm trans_b" : "gemm", t, 4, run_gemm, &tb);
    free(a.data), free(b.data), free(bias.data), free(c.data);
  }
  norm_cases("", 9, 777);
  norm_cases("long-row ", 3, 4099);
  {
    hmx_tensor x = rnd_tensor(3, 11, 4, 64, 0), y = rnd_tensor(3, 11, 4, 64, 0);
    int32_t *pos = malloc(11 * sizeof *pos);
    for (int i = 0; i < 11; i++) pos[i] = 3 * i + 100; /* device positions come back to the host */
    hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, 11);
    int rot = 48;
    hmx_tensor *t[] = {&x, &tp, &y};
    op_case("rope", t, 3, run_rope, &rot);
    free(x.data), free(y.data), free(pos);
  }
  {
    hmx_tensor q = rnd_tensor(4, 2, 19, 6, 64), k = rnd_tensor(4, 2, 300, 2, 64);
    hmx_tensor v = rnd_tensor(4, 2, 300, 2, 64), o = rnd_tensor(4, 2, 19, 6, 64);
    hmx_attention_params p = {1, -1, 0.0f};
    hmx_tensor *t[] = {&q, &k, &v, &o};
    op_case("attention causal", t, 4, run_att, &p);
    p.causal = 0;
    op_case("attention", t, 4, run_att, &p);
    free(q.data), free(k.data), free(v.data), free(o.data);
  }
  swiglu_case("swiglu", 5);
}

/* 16-bit device tensors of the ops whose kernels take f32: each bf16 / f16
 * tensor is widened into f32 scratch and a 16-bit output rounded once
 * (src/dev_stage.h), so the bits are ref's on the same host tensors. Mixed
 * dtypes in one call; the attention shapes take attention_row and
 * attention_tiled. */
static void test_staged16(void) {
  static const hmx_dtype B = HMX_BF16, H = HMX_F16, F = HMX_F32;
  for (int tb = 0; tb <= 1; tb++) {
    hmx_tensor a = rnd_tensor_dt(tb ? F : B, 2, 67, 45, 0, 0);
    hmx_tensor b = tb ? rnd_tensor_dt(B, 2, 70, 45, 0, 0) : rnd_tensor_dt(H, 2, 45, 70, 0, 0);
    hmx_tensor bias = rnd_tensor_dt(F, 1, 70, 0, 0, 0), c = rnd_tensor_dt(tb ? H : B, 2, 67, 70, 0, 0);
    hmx_tensor *t4[] = {&a, &b, &bias, &c}, *t3[] = {&a, &b, &c};
    if (tb) op_case("16-bit gemm trans_b (f32 a, bf16 b, f16 c)", t3, 3, run_gemm_nobias, &tb);
    else op_case("16-bit gemm (bf16 a, f16 b, f32 bias, bf16 c)", t4, 4, run_gemm, &tb);
    free(a.data), free(b.data), free(bias.data), free(c.data);
  }
  /* hadamard_mix: x and y read and written by the kernel in their dtype,
   * 16-bit alpha / beta widened into f32 device scratch first */
  for (int v = 0; v <= 1; v++) {
    hmx_tensor x = rnd_tensor_dt(v ? B : F, 2, 9, 768, 0, 0), y = rnd_tensor_dt(v ? B : F, 2, 9, 768, 0, 0);
    hmx_tensor al = rnd_tensor_dt(v ? H : B, 1, 768, 0, 0, 0), be = rnd_tensor_dt(v ? F : H, 1, 768, 0, 0, 0);
    hmx_tensor *t[] = {&x, &al, &be, &y};
    op_case(v ? "hadamard_mix (bf16 x, y, f16 alpha, f32 beta)"
              : "hadamard_mix (f32 x, y, bf16 alpha, f16 beta)",
            t, 4, run_mix, NULL);
    free(x.data), free(al.data), free(be.data), free(y.data);
  }
  {
    hmx_tensor x = rnd_tensor_dt(B, 2, 9, 777, 0, 0), w = rnd_tensor_dt(F, 1, 777, 0, 0, 0);
    hmx_tensor y = rnd_tensor_dt(B, 2, 9, 777, 0, 0);
    hmx_tensor *t[] = {&x, &w, &y};
    op_case("16-bit rmsnorm (bf16 x, y)", t, 3, run_rms, NULL);
    free(x.data), free(w.data), free(y.data);
  }
  {
    hmx_tensor x = rnd_tensor_dt(H, 2, 9, 777, 0, 0), w = rnd_tensor_dt(B, 1, 777, 0, 0, 0);
    hmx_tensor bb = rnd_tensor_dt(H, 1, 777, 0, 0, 0), y = rnd_tensor_dt(F, 2, 9, 777, 0, 0);
    hmx_tensor *t[] = {&x, &w, &bb, &y};
    op_case("16-bit layernorm (f16 x, bf16 weight, f16 bias, f32 y)", t, 4, run_ln, NULL);
    free(x.data), free(w.data), free(bb.data), free(y.data);
  }
  {
    hmx_tensor x = rnd_tensor_dt(B, 3, 11, 4, 64, 0), y = rnd_tensor_dt(H, 3, 11, 4, 64, 0);
    int32_t *pos = malloc(11 * sizeof *pos);
    for (int i = 0; i < 11; i++) pos[i] = 5 * i + 7;
    hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, 11);
    int rot = 64;
    hmx_tensor *t[] = {&x, &tp, &y};
    op_case("16-bit rope (bf16 x, f16 y)", t, 3, run_rope, &rot);
    free(x.data), free(y.data), free(pos);
  }
  static const int64_t as[][6] = {{2, 19, 300, 6, 2, 64}, {1, 70, 150, 4, 2, 128}};
  for (int i = 0; i < 2; i++) {
    const int64_t *c = as[i];
    hmx_tensor q = rnd_tensor_dt(B, 4, c[0], c[1], c[3], c[5]), k = rnd_tensor_dt(B, 4, c[0], c[2], c[4], c[5]);
    hmx_tensor v = rnd_tensor_dt(H, 4, c[0], c[2], c[4], c[5]), o = rnd_tensor_dt(B, 4, c[0], c[1], c[3], c[5]);
    hmx_attention_params p = {1, -1, 0.0f};
    hmx_tensor *t[] = {&q, &k, &v, &o};
    op_case(i ? "16-bit attention, tiled (bf16 q, k, o, f16 v)" : "16-bit attention (bf16 q, k, o, f16 v)",
            t, 4, run_att, &p);
    free(q.data), free(k.data), free(v.data), free(o.data);
  }
  {
    hmx_tensor x = rnd_tensor_dt(B, 2, 5, 96, 0, 0), w1 = rnd_tensor_dt(B, 2, 96, 200, 0, 0);
    hmx_tensor w3 = rnd_tensor_dt(H, 2, 96, 200, 0, 0), w2 = rnd_tensor_dt(B, 2, 200, 80, 0, 0);
    hmx_tensor y = rnd_tensor_dt(H, 2, 5, 80, 0, 0);
    hmx_tensor *t[] = {&x, &w1, &w3, &w2, &y};
    op_case("16-bit swiglu (bf16 x, w1, w2, f16 w3, y)", t, 5, run_swiglu, NULL);
    free(x.data), free(w1.data), free(w3.data), free(w2.data), free(y.data);
  }
}

/* gemm and attention at sizes that take every path of the tiled kernels
 * (cuda/kernels.cu): several 128x128 gemm tiles, partial M/N/K tiles, K not a
 * multiple of 8, 16-byte and scalar loads (K or N not a multiple of 4),
 * both B layouts, bias or not; attention_tiled (D = 64, Sq >= 16: several
 * query and key tiles, a partial last tile of each, causal with q_offset,
 * GQA; D = 128 too), attention_row (decode and short prefills, D = 64 and
 * 128, Skv not a multiple of 64), and the general kernel (other D). */
static void test_big_shapes(void) {
  static const int64_t gs[][3] = {{300, 77, 260}, {256, 768, 384}, {129, 64, 131},
                                  {200, 36, 200}, {1, 5, 9},       {513, 1000, 132}};
  for (size_t s = 0; s < sizeof gs / sizeof gs[0]; s++) {
    if (quick && s > 2) break;
    for (int tb = 0; tb <= 1; tb++) {
      int64_t m = gs[s][0], kk = gs[s][1], n = gs[s][2];
      hmx_tensor a = rnd_tensor(2, m, kk, 0, 0), b = tb ? rnd_tensor(2, n, kk, 0, 0)
                                                        : rnd_tensor(2, kk, n, 0, 0);
      hmx_tensor bias = rnd_tensor(1, n, 0, 0, 0), c = rnd_tensor(2, m, n, 0, 0);
      const int with_bias = (int)((s + tb) % 2);
      char what[80];
      snprintf(what, sizeof what, "gemm %lldx%lldx%lld trans_b=%d bias=%d", (long long)m,
               (long long)kk, (long long)n, tb, with_bias);
      if (with_bias) {
        hmx_tensor *t[] = {&a, &b, &bias, &c};
        op_case(what, t, 4, run_gemm, &tb);
      } else {
        hmx_tensor *t[] = {&a, &b, &c};
        op_case(what, t, 3, run_gemm_nobias, &tb);
      }
      free(a.data), free(b.data), free(bias.data), free(c.data);
    }
  }
  /* B, Sq, Skv, Hq, Hkv, D, causal, q_offset (-1: Skv - Sq) */
  static const int64_t as[][8] = {
      {2, 200, 200, 4, 2, 64, 1, -1},  {1, 130, 300, 3, 3, 64, 1, -1}, {1, 130, 300, 2, 1, 64, 0, -1},
      {2, 70, 333, 2, 2, 64, 1, 100},  {1, 16, 16, 1, 1, 64, 1, -1},   {3, 1, 1000, 4, 2, 64, 1, -1},
      {2, 5, 777, 2, 1, 128, 1, -1},   {2, 1, 129, 3, 1, 128, 0, -1},  {1, 40, 90, 2, 2, 48, 1, -1},
      {1, 1, 5000, 2, 2, 64, 1, -1},
      /* attention_tiled<128> (32-key tiles): a partial last tile of each kind
       * with q_offset; no mask; then (in quick mode too) GQA, causal, several
       * query tiles, Skv not a multiple of 32 */
      {1, 70, 333, 2, 1, 128, 1, 100}, {1, 40, 97, 2, 2, 128, 0, -1},
      {2, 130, 301, 4, 2, 128, 1, -1},
  };
  for (size_t s = 0; s < sizeof as / sizeof as[0]; s++) {
    if (quick && s % 3) continue;
    const int64_t *c = as[s];
    hmx_tensor q = rnd_tensor(4, c[0], c[1], c[3], c[5]), k = rnd_tensor(4, c[0], c[2], c[4], c[5]);
    hmx_tensor v = rnd_tensor(4, c[0], c[2], c[4], c[5]), o = rnd_tensor(4, c[0], c[1], c[3], c[5]);
    hmx_attention_params p = {(int)c[6], c[7], 0.0f};
    hmx_tensor *t[] = {&q, &k, &v, &o};
    char what[120];
    snprintf(what, sizeof what, "attention B=%lld Sq=%lld Skv=%lld Hq=%lld Hkv=%lld D=%lld causal=%lld q_offset=%lld",
             (long long)c[0], (long long)c[1], (long long)c[2], (long long)c[3], (long long)c[4],
             (long long)c[5], (long long)c[6], (long long)c[7]);
    op_case(what, t, 4, run_att, &p);
    free(q.data), free(k.data), free(v.data), free(o.data);
  }
}

/* attention_tiled with its row maxima guessed on tensor cores and checked
 * (cuda/attention_maxguess.cuh), host memory, against ref: the bits must not
 * depend on the guess. Each case runs with HMX_CUDA_ATT_MAX unset (guess),
 * "exact" (no guess) and "spoil" (every guess one float low, so every tile
 * with a visible key takes pass 2 twice). The rerun counter must move by
 * exactly the number of such tiles under "spoil" (the second pass really
 * ran), and by few under the guess on random data (the guess works: a
 * broken ranking would rerun most tiles). Inputs: random; near ties (keys
 * equal to a few ulps, which TF32 cannot rank); specials (a NaN query row, a
 * key whose score overflows to +inf, a key of -inf making NaN scores, and
 * huge scores). Outputs may hold NaN here, so NaN equals NaN. */
static int same_or_both_nan(const float *a, const float *b, int64_t n, int64_t *first) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], 4) != 0 && !(a[i] != a[i] && b[i] != b[i])) {
      *first = i;
      return 0;
    }
  return 1;
}
static void att_guess_case(const char *what, int64_t B, int64_t S, int64_t H, int64_t D,
                           int causal, int kind) {
  hmx_tensor q = rnd_tensor(4, B, S, H, D), k = rnd_tensor(4, B, S, H, D);
  hmx_tensor v = rnd_tensor(4, B, S, H, D), o = rnd_tensor(4, B, S, H, D);
  hmx_tensor w = rnd_tensor(4, B, S, H, D);
  float *qf = q.data, *kf = k.data;
  const int64_t ld = H * D;
  if (kind == 1) /* near ties: every key of head 0 is key 0 moved by a few ulps */
    for (int64_t j = 1; j < S; j++)
      for (int64_t d = 0; d < D; d++) {
        float x = kf[d];
        for (int64_t u = 0; u < (j * 7 + d) % 4; u++) x = nextafterf(x, 2.0f);
        kf[j * ld + d] = x;
      }
  if (kind == 2) {
    for (int64_t d = 0; d < D; d++) {
      qf[5 * ld + d] = NAN;                                   /* a NaN query row */
      kf[70 * ld + d] = qf[(70 + 3) * ld + d] > 0 ? 3e37f : -3e37f; /* +inf score for row 73 */
      kf[90 * ld + d] = 2e18f * qf[100 * ld + d];             /* huge scores */
    }
    kf[40 * ld + 3] = -INFINITY; /* NaN or +-inf scores from key 40 */
  }
  hmx_tensor *t[] = {&q, &k, &v, &w};
  hmx_attention_params p = {causal, -1, 0.0f};
  CHECK(hmx_attention(&ref_ctx, &q, &k, &v, &p, &o) == HMX_OK, "%s: ref: %s", what, hmx_last_error());
  static const char *modes[] = {NULL, "exact", "spoil"};
  const int64_t tiles = B * H * ((S + 63) / 64), n = B * S * H * D;
  for (int md = 0; md < 3; md++) {
    if (modes[md]) setenv("HMX_CUDA_ATT_MAX", modes[md], 1);
    else unsetenv("HMX_CUDA_ATT_MAX");
    const long long r0 = hmx_cuda_attention_reruns();
    memset(w.data, 0xA5, (size_t)n * 4);
    hmx_status s = run_att(&cuda_ctx, t, &p);
    const long long reruns = hmx_cuda_attention_reruns() - r0;
    int64_t first = -1;
    CHECK(s == HMX_OK && same_or_both_nan(w.data, o.data, n, &first),
          "%s, HMX_CUDA_ATT_MAX=%s: %s (first difference at %lld)", what,
          modes[md] ? modes[md] : "(unset)", s == HMX_OK ? "differs from ref" : hmx_last_error(),
          (long long)first);
    printf("  %s, HMX_CUDA_ATT_MAX=%s: %lld of %lld tiles reran\n", what,
           modes[md] ? modes[md] : "(unset)", reruns, (long long)tiles);
    if (md == 2) CHECK(reruns == tiles, "%s, spoil: %lld reruns, want %lld", what, reruns, (long long)tiles);
    if (md == 1) CHECK(reruns == 0, "%s, exact: %lld reruns", what, reruns);
    if (md == 0 && kind == 0)
      CHECK(reruns * 8 <= tiles, "%s: %lld of %lld tiles reran with the guess", what, reruns,
            (long long)tiles);
  }
  unsetenv("HMX_CUDA_ATT_MAX");
  free(q.data), free(k.data), free(v.data), free(o.data), free(w.data);
}
static void test_attention_maxguess(void) {
  att_guess_case("guessed maxima, D=64 causal", 2, 300, 3, 64, 1, 0);
  att_guess_case("guessed maxima, D=128 no mask", 1, 200, 2, 128, 0, 0);
  att_guess_case("guessed maxima, near ties", 1, 256, 2, 64, 1, 1);
  att_guess_case("guessed maxima, specials", 1, 256, 2, 64, 1, 2);
  att_guess_case("guessed maxima, D=128 specials", 1, 160, 1, 128, 0, 2);
}

/* Empty calls on device memory: every op accepts a batch of zero rows
 * (ref does), so the cuda backend must return HMX_OK without launching a
 * kernel of zero blocks (an invalid configuration) or leaving a CUDA error
 * behind; gemm with K = 0 writes C = bias (or +0), the same bits as ref; and
 * attention with no keys for its queries fails with ref's status. Then (not
 * in quick mode: compute-sanitizer counts the failed allocation as an API
 * error) a host-memory fwht too large for any GPU: HMX_ERR_NO_MEMORY naming
 * cudaMalloc, nothing read from the host buffer, and the device still works. */
static void test_empty_and_oom(void) {
  static const hmx_dtype dts[3] = {HMX_F32, HMX_BF16, HMX_F16};
  static const int64_t ns[][2] = {{1024, 0}, {1792, 28}, {131072, 0}, {1 << 20, 0}, {40 * 2048, 40}};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int d = 0; d < 3; d++) {
      fwht_case(0, ns[i][0], (int)ns[i][1], dts[d], 0, 0, 0);
      fwht_case(0, ns[i][0], (int)ns[i][1], dts[d], 1, 0, 0);
    }
  /* gemm: M = 0, N = 0, K = 0 (with and without bias), both layouts */
  static const int64_t gs[][3] = {{0, 45, 70}, {67, 45, 0}, {67, 0, 70}};
  for (size_t s = 0; s < sizeof gs / sizeof gs[0]; s++)
    for (int tb = 0; tb <= 1; tb++) {
      const int64_t m = gs[s][0], kk = gs[s][1], n = gs[s][2];
      hmx_tensor a = rnd_tensor(2, m, kk, 0, 0), b = tb ? rnd_tensor(2, n, kk, 0, 0)
                                                        : rnd_tensor(2, kk, n, 0, 0);
      hmx_tensor bias = rnd_tensor(1, n, 0, 0, 0), c = rnd_tensor(2, m, n, 0, 0);
      char what[64];
      snprintf(what, sizeof what, "empty gemm %lldx%lldx%lld%s", (long long)m, (long long)kk,
               (long long)n, tb ? " trans_b" : "");
      hmx_tensor *t[] = {&a, &b, &bias, &c}, *t2[] = {&a, &b, &c};
      op_case(what, t, 4, run_gemm, &tb);
      op_case(what, t2, 3, run_gemm_nobias, &tb);
      free(a.data), free(b.data), free(bias.data), free(c.data);
    }
  norm_cases("empty ", 0, 777);
  {
    hmx_tensor x = rnd_tensor(3, 0, 4, 64, 0), y = rnd_tensor(3, 0, 4, 64, 0);
    int32_t pos[1] = {0};
    hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, 0);
    int rot = 48;
    hmx_tensor *t[] = {&x, &tp, &y};
    op_case("empty rope", t, 3, run_rope, &rot);
    free(x.data), free(y.data);
  }
  for (int causal = 0; causal <= 1; causal++) { /* no queries; no batch */
    hmx_attention_params p = {causal, -1, 0.0f};
    hmx_tensor q = rnd_tensor(4, 2, 0, 6, 64), k = rnd_tensor(4, 2, 30, 2, 64);
    hmx_tensor v = rnd_tensor(4, 2, 30, 2, 64), o = rnd_tensor(4, 2, 0, 6, 64);
    hmx_tensor *t[] = {&q, &k, &v, &o};
    op_case("empty attention (Sq = 0)", t, 4, run_att, &p);
    hmx_tensor q0 = rnd_tensor(4, 0, 5, 6, 64), k0 = rnd_tensor(4, 0, 30, 2, 64);
    hmx_tensor v0 = rnd_tensor(4, 0, 30, 2, 64), o0 = rnd_tensor(4, 0, 5, 6, 64);
    hmx_tensor *t0[] = {&q0, &k0, &v0, &o0};
    op_case("empty attention (B = 0)", t0, 4, run_att, &p);
    free(q.data), free(k.data), free(v.data), free(o.data);
    free(q0.data), free(k0.data), free(v0.data), free(o0.data);
  }
  { /* queries with no keys: ref's error, on device memory too */
    hmx_attention_params p = {0, -1, 0.0f};
    hmx_tensor q = rnd_tensor(4, 2, 1, 6, 64), k = rnd_tensor(4, 2, 0, 2, 64);
    hmx_tensor v = rnd_tensor(4, 2, 0, 2, 64), o = rnd_tensor(4, 2, 1, 6, 64);
    hmx_tensor *t[] = {&q, &k, &v, &o};
    op_run("attention with no keys on device memory", t, 4, run_att, &p, 1);
    free(q.data), free(k.data), free(v.data), free(o.data);
  }
  swiglu_case("empty swiglu", 0);
  cuda_ok(cudaDeviceSynchronize(), "after the empty calls");
  cuda_ok(cudaGetLastError(), "error left by the empty calls");
  if (quick) return;
  /* 2^20 rows of 2^20 floats (4 TiB) through the host-memory path: the
   * device copy cannot be allocated, so the call fails before it reads x */
  float small[64] = {0};
  hmx_tensor hx = hmx_tensor_2d(small, HMX_F32, (int64_t)1 << 20, (int64_t)1 << 20);
  hmx_tensor hy = hx;
  const hmx_status s = hmx_fwht(&cuda_ctx, &hx, &hy, 1.0f);
  CHECK(s == HMX_ERR_NO_MEMORY && strstr(hmx_last_error(), "cudaMalloc") != NULL,
        "4 TiB host fwht: got %s (%s), want no memory from cudaMalloc", hmx_status_string(s),
        hmx_last_error());
  cuda_ok(cudaGetLastError(), "error left by the failed allocation");
  fwht_host_case(3, 4096, 0); /* and the backend still works */
}

/* Device calls on a user stream (hmx_set_cuda_stream), and with no backend
 * chosen (the device backend is picked). */
static void test_stream_and_default(void) {
  enum { B = 64, N = 4096 };
  float *x = host_random(HMX_F32, B * N), *want = malloc(B * N * 4);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, B, N), tw = hmx_tensor_2d(want, HMX_F32, B, N);
  CHECK(hmx_fwht(&ref_ctx, &tx, &tw, 0.25f) == HMX_OK, "ref");
  cudaStream_t st;
  if (!cuda_ok(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate")) return;
  dbuf dx = dev_copy(x, B * N * 4, 4, 0), dy = dev_copy(NULL, B * N * 4, 4, 0);
  hmx_tensor gx = on_dev(tx, dx.p), gy = on_dev(tw, dy.p);
  hmx_set_cuda_stream(st);
  for (int rep = 0; rep < 3; rep++) /* queued back to back on st */
    CHECK(hmx_fwht(&cuda_ctx, &gx, &gy, 0.25f) == HMX_OK, "fwht on a stream: %s", hmx_last_error());
  hmx_set_cuda_stream(NULL);
  cuda_ok(cudaStreamSynchronize(st), "cudaStreamSynchronize");
  compare_dev(dy.p, want, B * N * 4, "fwht on a user stream");
  unsetenv("HMX_BACKEND");
  cuda_ok(cudaMemset(dy.p, 0, B * N * 4), "cudaMemset");
  hmx_status s = hmx_fwht(NULL, &gx, &gy, 0.25f);
  CHECK(s == HMX_OK, "NULL context with device tensors: %s", hmx_last_error());
  if (s == HMX_OK) compare_dev(dy.p, want, B * N * 4, "fwht, NULL context");
  dev_free(&dx);
  dev_free(&dy);
  cuda_ok(cudaStreamDestroy(st), "cudaStreamDestroy");
  free(x);
  free(want);
}

int main(int argc, char **argv) {
  quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  /* "pool": only test_scratch_pool (ctest runs it with HMX_CUDA_SCRATCH_KEEP_MIB=0) */
  const int pool_only = argc > 1 && strcmp(argv[1], "pool") == 0;
  cuda_be = hmx_backend_find("cuda");
  if (!cuda_be || !hmx_backend_available(cuda_be)) {
    printf("test_cuda_device: no cuda backend or no GPU here: skipped\n");
    return 77;
  }
  hmx_context r = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT}, c = {cuda_be, 0, 0, HMX_TIER_DEFAULT};
  ref_ctx = r;
  cuda_ctx = c;
  if (pool_only) {
    test_scratch_pool();
    return check_finish("test_cuda_device pool");
  }
  if (argc > 1 && strcmp(argv[1], "colsplit") == 0) { /* only test_fwht_colsplit */
    quick = 1;
    test_fwht_colsplit();
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return check_finish("test_cuda_device colsplit");
  }
  if (argc > 1 && strcmp(argv[1], "cluster") == 0) { /* only test_fwht_cluster_blocks */
    test_fwht_cluster_blocks();
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return check_finish("test_cuda_device cluster");
  }
  if (argc > 1 && strcmp(argv[1], "pow2") == 0) { /* only these fwht_pow2 tests */
    test_fwht_pow2_warp();
    test_fwht_fast_memory();
    test_fwht_split_store();
    test_fwht_mpoint_pairs();
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return check_finish("test_cuda_device pow2");
  }
  /* first: host-memory calls take their scratch from the same pool (since
   * session 56), so the tests before it would have filled the pool that it
   * measures (compute-sanitizer holds memory of its own) */
  if (!quick) test_scratch_pool();
  test_fwht();
  test_fwht_fast_memory();
  test_fwht_split_store();
  test_fwht_mpoint_pairs();
  test_other_ops();
  test_staged16();
  test_big_shapes();
  test_attention_maxguess();
  test_stream_and_default();
  test_empty_and_oom();
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return check_finish(quick ? "test_cuda_device quick" : "test_cuda_device");
}
