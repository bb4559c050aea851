/* The read-bandwidth probe (read_bandwidth.h). Each thread keeps 16
 * independent lane sums, which the compiler can vectorize without reordering
 * any sum: a single running sum per thread (the probe before session 16) is a
 * chain of dependent adds that read only 55-58 GB/s on the Zen 5 VM where
 * this loop reads 70-72 GB/s. */
#define _POSIX_C_SOURCE 200809L
#include "read_bandwidth.h"

#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double hmx_read_bandwidth(int threads) {
  const size_t n = (size_t)128 << 20; /* floats */
  float *a = malloc(n * sizeof *a);
  if (!a) return 0;
  for (size_t i = 0; i < n; i++) a[i] = (float)(i & 7);
  double best = 0;
  volatile float sink = 0; /* keeps the sums alive */
  (void)threads;
  for (int r = 0; r < 3; r++) {
    const double t0 = seconds();
    float total = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) reduction(+ : total)
#endif
    {
      float lane[16] = {0};
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (size_t i = 0; i < n; i += 16)
        for (int j = 0; j < 16; j++) lane[j] += a[i + (size_t)j];
      for (int j = 0; j < 16; j++) total += lane[j];
    }
    const double gbs = (double)(n * sizeof *a) / (seconds() - t0) / 1e9;
    sink += total;
    if (gbs > best) best = gbs;
  }
  free(a);
  (void)sink;
  return best;
}

/* 16 lane sums a step, two sets (even and odd rows) so that the adds of one
 * step are two chains of 8 rather than one of 16: the loops stay bound by
 * memory, not by add latency. */
float hmx_read_in_order(const float *w, int64_t n, int64_t k) {
  const int64_t count = n * k;
  float lane[16] = {0}, tail = 0;
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    for (int j = 0; j < 16; j++) lane[j] += w[i + j];
  for (; i < count; i++) tail += w[i];
  for (int j = 0; j < 16; j++) tail += lane[j];
  return tail;
}

float hmx_read_16_rows(const float *w, int64_t n, int64_t k) {
  float even[16] = {0}, odd[16] = {0}, tail = 0;
  int64_t r = 0;
  for (; r + 16 <= n; r += 16) {
    int64_t p = 0;
    for (; p + 16 <= k; p += 16)
      for (int i = 0; i < 16; i += 2) {
        const float *a = w + (r + i) * k + p, *b = a + k;
        for (int j = 0; j < 16; j++) {
          even[j] += a[j];
          odd[j] += b[j];
        }
      }
    for (int i = 0; i < 16; i++) /* the k % 16 last columns */
      for (int64_t q = p; q < k; q++) tail += w[(r + i) * k + q];
  }
  for (int64_t i = r * k; i < n * k; i++) tail += w[i];
  for (int j = 0; j < 16; j++) tail += even[j] + odd[j];
  return tail;
}
