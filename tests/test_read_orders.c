/* The GEMV read orders that `hmx bench gemm` times beside the copy
 * (tools/read_bandwidth.h): each must read every weight exactly once, at
 * any shape (rows not a multiple of 16, rows shorter than 16 floats or not a
 * multiple of 16). The weights are small positive integers, so every sum is
 * exact in f32 and any element skipped or read twice changes it. */
#include "read_bandwidth.h"

#include "check.h"

#include <stdlib.h>

int main(void) {
  static const int64_t shapes[][2] = {{1, 1},   {16, 16},  {17, 15},  {37, 45},
                                      {64, 2048}, {48, 768}, {15, 100}, {33, 16}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int64_t n = shapes[s][0], k = shapes[s][1];
    float *w = malloc((size_t)(n * k) * sizeof *w);
    CHECK(w != NULL, "malloc");
    if (!w) break;
    double exact = 0;
    for (int64_t i = 0; i < n * k; i++) {
      w[i] = (float)(i % 7 + 1);
      exact += w[i];
    }
    CHECK(hmx_read_in_order(w, n, k) == (float)exact, "in order %lld x %lld: %g, want %g",
          (long long)n, (long long)k, (double)hmx_read_in_order(w, n, k), exact);
    CHECK(hmx_read_16_rows(w, n, k) == (float)exact, "16 rows %lld x %lld: %g, want %g",
          (long long)n, (long long)k, (double)hmx_read_16_rows(w, n, k), exact);
    free(w);
  }
  return check_finish("test_read_orders");
}
