/* rmsnorm and layernorm with outputs far larger than the caches, one
 * backend against ref, bit for bit, with 1 and 2 threads. The x86 kernels
 * write such outputs (32 MiB or more, apart from the input) with
 * non-temporal stores after a head of plain stores up to the output's first
 * cache line (simd/x86/rowops_x86.h, xr_head); the shapes here put that head
 * at every length 0 ... 15 and rows whose length is no multiple of the
 * vector, so a path that writes the wrong place, skips elements or leaves a
 * line unwritten shows as a difference.
 *
 *   test_norm_large BACKEND
 *
 * Exit 77 (ctest: skipped) when BACKEND cannot run here. */
#include "check.h"
#include "threads.h"
#include "hadamix.h"
#include "large_batch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((int64_t)1 << 20)

static hmx_status norm(const hmx_context *c, int layer, const hmx_tensor *x, const hmx_tensor *w,
                       const hmx_tensor *b, hmx_tensor *y) {
  return layer ? hmx_layernorm(c, x, w, b, 1e-5f, y) : hmx_rmsnorm(c, x, w, 1e-6f, y);
}

/* One shape: ref's output, then `be`'s with 1 and 2 threads into outputs
 * starting `yoff` floats past a 64-byte line (the input 4 floats past one,
 * as malloc places large blocks), compared with memcmp. */
static void check_case(const hmx_backend *be, int layer, int64_t n, int yoff) {
  const char *op = layer ? "layernorm" : "rmsnorm";
  const int64_t rows = (32 * MIB + 4 * n - 1) / (4 * n), total = rows * n;
  /* a multiple of 64 bytes (aligned_alloc), with room for the offsets */
  const size_t bytes = (((size_t)total + 32) * sizeof(float) + 63) / 64 * 64;
  float *xb = aligned_alloc(64, bytes), *wb = aligned_alloc(64, bytes);
  float *gb = aligned_alloc(64, bytes);
  float *w = malloc((size_t)n * sizeof(float)), *bias = malloc((size_t)n * sizeof(float));
  if (!xb || !wb || !gb || !w || !bias) {
    CHECK(0, "%s n=%lld: out of memory", op, (long long)n);
    goto done;
  }
  float *x = xb + 4, *want = wb, *got = gb + yoff;
  large_fill(x, total, (uint64_t)n);
  large_fill(w, n, 3);
  large_fill(bias, n, 4);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, rows, n), tw = hmx_tensor_1d(w, HMX_F32, n);
  hmx_tensor tb = hmx_tensor_1d(bias, HMX_F32, n);
  hmx_tensor twant = hmx_tensor_2d(want, HMX_F32, rows, n);
  hmx_tensor tgot = hmx_tensor_2d(got, HMX_F32, rows, n);
  hmx_context ref = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  hmx_status st = norm(&ref, layer, &tx, &tw, &tb, &twant);
  CHECK(st == HMX_OK, "ref %s n=%lld: %s", op, (long long)n, hmx_last_error());
  for (int threads = 1; threads <= test_thread_max(2); threads++) {
    hmx_context ctx = {be, threads, 0, HMX_TIER_DEFAULT};
    memset(got, 0xff, (size_t)total * sizeof(float)); /* NaNs: an element not written shows */
    st = norm(&ctx, layer, &tx, &tw, &tb, &tgot);
    CHECK(st == HMX_OK, "%s %s n=%lld: %s", hmx_backend_name(be), op, (long long)n,
          hmx_last_error());
    const int64_t first = large_first_diff(got, want, total);
    CHECK(first < 0, "%s %s n=%lld rows=%lld threads=%d output %d floats past a line: first "
          "difference at row %lld col %lld", hmx_backend_name(be), op, (long long)n,
          (long long)rows, threads, yoff, (long long)(first / n), (long long)(first % n));
  }
done:
  free(xb); free(wb); free(gb); free(w); free(bias);
}

int main(int argc, char **argv) {
  int code = 0;
  const hmx_backend *be = large_backend_arg(argc, argv, "test_norm_large", &code);
  if (!be) return code;
  /* rows of 768 (every row starts as the output does), 4100 and 1001 (each
   * row's head a different length: 4100 and 1001 are no multiple of 16) */
  static const int64_t sizes[] = {768, 4100, 1001};
  static const int offs[] = {0, 4, 13};
  for (int layer = 0; layer <= 1; layer++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++)
        check_case(be, layer, sizes[i], offs[k]);
  return check_finish("test_norm_large");
}
