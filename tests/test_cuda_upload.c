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
 * How: one 64 MiB F32 G16 matrix [N = 65536, K = 256] on the GPU, uploaded
 * again each round with another pattern of small integers, then at once
 * hmx_gemm_quant on it with A = ones (M = 1, gemv_slab: every byte read,
 * the group at the end of the buffer as early as any). Each output is a
 * sum of 256 integers below 2^8, exact in f32 in any order, so the
 * expected values are exact; a stale or unwritten byte changes a sum. A
 * race shows only when the timing lets it, so this test can pass with the
 * bug present (it failed N of M runs of the old upload in session 59's
 * call; docs/CUDA.md); it cannot fail with the ordering right.
 * Exits 77 (skipped) where the cuda backend cannot run. */
#include "check.h"
#include "backend.h"
#include "dispatch.h"
#include "gemm_quant.h"
#include "gguf.h" /* HMX_GGML_F32 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 65536, K = 256, ROUNDS = 24 };

/* weight (j, k) of round r: a small integer, different from round r - 1's */
static float pattern(int r, int64_t j, int64_t k) {
  return (float)((j * 7 + k * 3 + r * 5) % 17) - 8.0f;
}

int main(void) {
  const hmx_backend *be = hmx_backend_find("cuda");
  const hmx_device_ops *dops = be ? hmx_device_ops_of(be) : NULL;
  if (!be || !hmx_backend_available(be) || !dops) {
    printf("test_cuda_upload: skipped (no cuda backend that can run here)\n");
    return 77;
  }
  const size_t nb = hmx_qlayout_g16_bytes(HMX_GGML_F32, N, K);
  float *rows = malloc((size_t)N * K * sizeof(float)), *g16 = malloc(nb);
  float *a = malloc(K * sizeof(float)), *c = malloc(N * sizeof(float));
  float *want = malloc(N * sizeof(float));
  void *dev = NULL;
  CHECK(rows && g16 && a && c && want, "out of host memory");
  if (!rows || !g16 || !a || !c || !want) return check_finish("test_cuda_upload");
  CHECK(dops->resident_alloc(&dev, nb) == HMX_OK, "resident_alloc: %s", hmx_last_error());
  for (int64_t k = 0; k < K; k++) a[k] = 1.0f;
  int bad_rounds = 0;
  for (int r = 0; dev && r < ROUNDS; r++) {
    for (int64_t j = 0; j < N; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < K; k++) s += rows[j * K + k] = pattern(r, j, k);
      want[j] = (float)s;
    }
    hmx_qlayout_to_g16(HMX_GGML_F32, rows, N, K, g16);
    CHECK(dops->upload(dev, g16, nb) == HMX_OK, "upload: %s", hmx_last_error());
    /* the host bytes are gone for the call: only the GPU copy has them */
    memset(g16, 0, nb);
    hmx_context ctx = {be, 1, 0, HMX_TIER_EXACT};
    hmx_tensor A = hmx_tensor_2d(a, HMX_F32, 1, K), C = hmx_tensor_2d(c, HMX_F32, 1, N);
    hmx_qmatrix B = {HMX_GGML_F32, g16, N, K, HMX_QLAYOUT_G16, dev};
    memset(c, 0xA5, N * sizeof(float));
    CHECK(hmx_gemm_quant(&ctx, &A, &B, &C) == HMX_OK, "gemm_quant: %s", hmx_last_error());
    int64_t wrong = 0, first = -1;
    for (int64_t j = 0; j < N; j++)
      if (memcmp(&c[j], &want[j], sizeof(float))) {
        if (first < 0) first = j;
        wrong++;
      }
    CHECK(wrong == 0, "round %d: %lld of %d outputs are not the uploaded matrix's (first: "
          "row %lld, %g instead of %g)", r, (long long)wrong, N, (long long)first,
          first >= 0 ? c[first] : 0.0, first >= 0 ? want[first] : 0.0);
    bad_rounds += wrong != 0;
  }
  printf("test_cuda_upload: %d rounds of a %zu-byte upload, %d read stale bytes\n", ROUNDS, nb,
         bad_rounds);
  if (dev) dops->resident_free(dev);
  free(rows); free(g16); free(a); free(c); free(want);
  return check_finish("test_cuda_upload");
}
