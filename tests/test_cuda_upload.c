/* A GPU copy made by hmx_device_ops.upload (what hmx_model_prepare makes of
 * a model's weights) is whole when upload returns: the next host call, which
 * runs on a stream of its own, reads every byte of it.
 *
 * Why: until session 59 upload was a cudaMemcpy from pageable memory, which
 * returns once the bytes are staged while the DMA may still run on the
 * legacy stream; a host call's non-blocking stream is not ordered after
 * that. test_gemm_quant's GPU-copy case read a part not yet written, once
 * in a few runs of ctest -j8 on the H200.
 *
 * How: a F32 G16 matrix on the GPU, uploaded again each round with another
 * pattern of small integers, then at once hmx_gemm_quant on it with A =
 * ones (M = 1, gemv_slab: every byte read). Each output is a sum of K
 * integers below 2^8, exact in f32 in any order, so the expected values are
 * exact, and a stale or unwritten byte changes a sum. Two sizes: 256 rounds
 * of a small matrix (N = 32, K = 256: 32 KiB, which cudaMemcpy stages whole
 * and returns at once), each behind a 256 MiB copy to the GPU queued on
 * another stream so that the copy engine is busy when the upload's DMA
 * comes; and 8 rounds of a 64 MiB one (N = 65536). A race shows only when
 * the timing lets it. On the H200 (session 59) the old upload read stale
 * bytes in 157-187 of the 256 small rounds in each of 4 runs, and in none of
 * the 64 MiB rounds (12 runs); gemm_quant's GPU-copy case had failed in
 * about 1 of 6 runs of ctest -j8. With the ordering right neither can
 * fail. Exits 77 (skipped) where the cuda backend cannot run. */
#include "check.h"
#include "backend.h"
#include "dispatch.h"
#include "gemm_quant.h"
#include "gguf.h" /* HMX_GGML_F32 */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* weight (j, k) of round r: a small integer, different from round r - 1's */
static float pattern(int r, int64_t j, int64_t k) {
  return (float)((j * 7 + k * 3 + r * 5) % 17) - 8.0f;
}

/* `rounds` uploads of an [n, k] matrix into one GPU buffer, each read by a
 * host call right after; busy (optional): before each upload, a copy of
 * busy_bytes from pinned memory to the GPU is queued on that stream.
 * Prints how many rounds read stale bytes (each one also fails a CHECK). */
static void upload_rounds(const hmx_backend *be, const hmx_device_ops *dops, int64_t n,
                         int64_t k, int rounds, cudaStream_t busy, void *busy_dst,
                         const void *busy_src, size_t busy_bytes) {
  const size_t nb = hmx_qlayout_g16_bytes(HMX_GGML_F32, n, k);
  float *rows = malloc((size_t)(n * k) * sizeof(float)), *g16 = malloc(nb);
  float *a = malloc((size_t)k * sizeof(float)), *c = malloc((size_t)n * sizeof(float));
  float *want = malloc((size_t)n * sizeof(float));
  void *dev = NULL;
  int bad_rounds = 0;
  CHECK(rows && g16 && a && c && want, "out of host memory");
  if (rows && g16 && a && c && want)
    CHECK(dops->resident_alloc(&dev, nb) == HMX_OK, "resident_alloc: %s", hmx_last_error());
  for (int64_t i = 0; dev && i < k; i++) a[i] = 1.0f;
  for (int r = 0; dev && r < rounds; r++) {
    for (int64_t j = 0; j < n; j++) {
      double s = 0.0;
      for (int64_t i = 0; i < k; i++) s += rows[j * k + i] = pattern(r, j, i);
      want[j] = (float)s;
    }
    hmx_qlayout_to_g16(HMX_GGML_F32, rows, n, k, g16);
    if (busy)
      CHECK(cudaMemcpyAsync(busy_dst, busy_src, busy_bytes, cudaMemcpyHostToDevice, busy) ==
                cudaSuccess, "the busy copy");
    CHECK(dops->upload(dev, g16, nb) == HMX_OK, "upload: %s", hmx_last_error());
    /* the host bytes are gone for the call: only the GPU copy has them */
    memset(g16, 0, nb);
    hmx_context ctx = {be, 1, 0, HMX_TIER_EXACT};
    hmx_tensor A = hmx_tensor_2d(a, HMX_F32, 1, k), C = hmx_tensor_2d(c, HMX_F32, 1, n);
    hmx_qmatrix B = {HMX_GGML_F32, g16, n, k, HMX_QLAYOUT_G16, dev};
    memset(c, 0xA5, (size_t)n * sizeof(float));
    CHECK(hmx_gemm_quant(&ctx, &A, &B, &C) == HMX_OK, "gemm_quant: %s", hmx_last_error());
    int64_t wrong = 0, first = -1;
    for (int64_t j = 0; j < n; j++)
      if (memcmp(&c[j], &want[j], sizeof(float))) {
        if (first < 0) first = j;
        wrong++;
      }
    CHECK(wrong == 0, "N = %lld, round %d: %lld outputs are not the uploaded matrix's (first: "
          "row %lld, %g instead of %g)", (long long)n, r, (long long)wrong, (long long)first,
          first >= 0 ? c[first] : 0.0, first >= 0 ? want[first] : 0.0);
    bad_rounds += wrong != 0;
  }
  if (busy) CHECK(cudaStreamSynchronize(busy) == cudaSuccess, "the busy copies");
  printf("test_cuda_upload: %d rounds of a %zu-byte upload%s: %d read stale bytes\n", rounds,
         nb, busy ? " behind a busy copy engine" : "", bad_rounds);
  if (dev) dops->resident_free(dev);
  free(rows); free(g16); free(a); free(c); free(want);
}

int main(void) {
  const hmx_backend *be = hmx_backend_find("cuda");
  const hmx_device_ops *dops = be ? hmx_device_ops_of(be) : NULL;
  if (!be || !hmx_backend_available(be) || !dops) {
    printf("test_cuda_upload: skipped (no cuda backend that can run here)\n");
    return 77;
  }
  const size_t busy_bytes = (size_t)256 << 20;
  cudaStream_t busy = NULL;
  void *busy_dst = NULL, *busy_src = NULL;
  const int have_busy = cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking) == cudaSuccess &&
                        cudaMalloc(&busy_dst, busy_bytes) == cudaSuccess &&
                        cudaMallocHost(&busy_src, busy_bytes) == cudaSuccess;
  CHECK(have_busy, "the busy copy's stream and buffers");
  if (have_busy) {
    memset(busy_src, 0x3C, busy_bytes);
    upload_rounds(be, dops, 32, 256, 256, busy, busy_dst, busy_src, busy_bytes);
  }
  upload_rounds(be, dops, 65536, 256, 8, NULL, NULL, NULL, 0);
  if (busy_src) cudaFreeHost(busy_src);
  if (busy_dst) cudaFree(busy_dst);
  if (busy) cudaStreamDestroy(busy);
  return check_finish("test_cuda_upload");
}
