/* hmx-read-order-probe: how fast one thread reads a 16 MiB f32 matrix from
 * memory in the orders a one-token GEMV can read it, with and without
 * software prefetch: the G16 layout's order (S groups of 16 outputs side by
 * side, each group a stream of K 64-byte lines: simd/x86/gemm_g16_x86.h
 * takes S = 4) and the [N, K] rows' order (R rows side by side, a line of
 * each in turn: gx_gemv_nt's). Each order reads 32 consecutive matrices of a
 * 2 GiB pool (so from memory), with one fma a line as the GEMVs do; GB/s
 * and % of a single-thread memcpy of 1200 MiB (read + write bytes, best of
 * the rounds). AVX-512 only (the Xeon host that session 44 measured on,
 * docs/results/session44/).
 *
 *   hmx-read-order-probe [rounds (1..15, default 5)] */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool_clock.h"

#define K 2048                         /* elements an output */
#define NOUT 2048                      /* outputs */
#define MATRIX ((size_t)K * NOUT * 4)  /* bytes of one matrix: 16 MiB */
#define POOL ((size_t)2048 << 20)      /* 128 matrices */
#define COPY ((size_t)1200 << 20)      /* the copy probe's buffers, as hmx bench's */
#define PER_RUN 32                     /* matrices a timed run reads */
#define MAX_ROUNDS 15

static float a[K];

/* hint: 0 prefetcht0, 1 prefetcht1, 2 prefetcht2 */
__attribute__((target("avx512f"))) static inline void prefetch(const void *p, int hint) {
  if (hint == 0) _mm_prefetch((const char *)p, _MM_HINT_T0);
  else if (hint == 1) _mm_prefetch((const char *)p, _MM_HINT_T1);
  else _mm_prefetch((const char *)p, _MM_HINT_T2);
}

/* The G16 order: s groups of 16 outputs side by side; group g is K lines
 * (16 floats each) at w + 16 K g; per element p, one line of each group.
 * hint < 0: no software prefetch, else `dist` lines ahead in each group. */
__attribute__((target("avx512f"), noinline)) static float read_g16(const float *w, int s, int hint,
                                                                  int dist) {
  __m512 tot = _mm512_setzero_ps();
  for (int j = 0; j < NOUT / 16; j += s) {
    __m512 acc[16];
    const float *g[16];
    for (int q = 0; q < s; q++) {
      acc[q] = _mm512_setzero_ps();
      g[q] = w + (size_t)(j + q) * K * 16;
    }
    for (int p = 0; p < K; p++) {
      const __m512 av = _mm512_set1_ps(a[p]);
      for (int q = 0; q < s; q++) {
        if (hint >= 0 && p + dist < K) prefetch(g[q] + (size_t)(p + dist) * 16, hint);
        acc[q] = _mm512_fmadd_ps(av, _mm512_load_ps(g[q] + (size_t)p * 16), acc[q]);
      }
    }
    for (int q = 0; q < s; q++) tot = _mm512_add_ps(tot, acc[q]);
  }
  return _mm512_reduce_add_ps(tot);
}

/* The rows' order: r rows (K floats each) side by side, a line of each in
 * turn. hint, dist: as read_g16's, in lines of each row. */
__attribute__((target("avx512f"), noinline)) static float read_rows(const float *w, int r, int hint,
                                                                   int dist) {
  __m512 tot = _mm512_setzero_ps();
  for (int j = 0; j < NOUT; j += r) {
    __m512 acc[16];
    for (int q = 0; q < r; q++) acc[q] = _mm512_setzero_ps();
    for (int p = 0; p < K; p += 16) {
      const __m512 av = _mm512_loadu_ps(a + p);
      for (int q = 0; q < r; q++) {
        const float *row = w + (size_t)(j + q) * K + p;
        if (hint >= 0 && p + dist * 16 < K) prefetch(row + dist * 16, hint);
        acc[q] = _mm512_fmadd_ps(av, _mm512_load_ps(row), acc[q]);
      }
    }
    for (int q = 0; q < r; q++) tot = _mm512_add_ps(tot, acc[q]);
  }
  return _mm512_reduce_add_ps(tot);
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (argc > 2 || rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "usage: hmx-read-order-probe [rounds (1..%d)]\n", MAX_ROUNDS);
    return 2;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    fprintf(stderr, "hmx-read-order-probe: this CPU has no AVX-512\n");
    return 2;
  }
  float *w = NULL;
  char *src = malloc(COPY), *dst = malloc(COPY);
  if (posix_memalign((void **)&w, 4096, POOL) || !src || !dst) {
    fprintf(stderr, "hmx-read-order-probe: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < POOL / 4; i++) w[i] = (float)(i & 255) * 0.001f;
  for (int i = 0; i < K; i++) a[i] = 1.0f;
  memset(src, 1, COPY);
  memset(dst, 2, COPY);
  /* order (0 G16, 1 rows), streams side by side, prefetch hint (-1 none), distance */
  static const struct { int rows, streams, hint, dist; } cfg[] = {
      {0, 4, -1, 0},  {0, 4, 0, 16}, {0, 8, -1, 0},  {0, 8, 0, 8},  {0, 8, 0, 16},
      {0, 16, -1, 0}, {0, 16, 0, 4}, {0, 16, 0, 8},  {0, 16, 1, 16}, {0, 16, 2, 16},
      {1, 16, -1, 0}, {1, 16, 0, 4}, {1, 16, 0, 8},  {1, 8, -1, 0},  {1, 4, -1, 0}};
  enum { NCFG = (int)(sizeof cfg / sizeof cfg[0]) };
  const int windows = (int)(POOL / MATRIX / PER_RUN);
  volatile float sink = 0;
  double best_copy = 0, gbs[NCFG][MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) {
    const double t = hmx_tool_seconds();
    memcpy(dst, src, COPY);
    const double copy = 2.0 * (double)COPY / (hmx_tool_seconds() - t) * 1e-9;
    if (copy > best_copy) best_copy = copy;
    for (int c = 0; c < NCFG; c++) {
      /* the next window of PER_RUN matrices: none read by the run before */
      const size_t first = (size_t)((r * NCFG + c) % windows) * PER_RUN;
      const double t0 = hmx_tool_seconds();
      for (int i = 0; i < PER_RUN; i++) {
        const float *m = w + (first + (size_t)i) * (MATRIX / 4);
        sink += cfg[c].rows ? read_rows(m, cfg[c].streams, cfg[c].hint, cfg[c].dist)
                            : read_g16(m, cfg[c].streams, cfg[c].hint, cfg[c].dist);
      }
      gbs[c][r] = (double)PER_RUN * (double)MATRIX / (hmx_tool_seconds() - t0) * 1e-9;
    }
  }
  printf("copy %.1f GB/s (1 thread, read + write, best of %d)\n", best_copy, rounds);
  for (int c = 0; c < NCFG; c++) {
    double s[MAX_ROUNDS];
    memcpy(s, gbs[c], sizeof s);
    qsort(s, (size_t)rounds, sizeof s[0], hmx_tool_cmp_double);
    printf("%-4s %2d streams, ", cfg[c].rows ? "rows" : "G16", cfg[c].streams);
    if (cfg[c].hint < 0) printf("no prefetch:       ");
    else printf("prefetcht%d %2d lines:", cfg[c].hint, cfg[c].dist);
    for (int r = 0; r < rounds; r++) printf(" %5.1f", gbs[c][r]);
    printf("  GB/s; median %3.0f%% of the copy\n", 100.0 * s[rounds / 2] / best_copy);
  }
  free(w);
  free(src);
  free(dst);
  return sink != sink; /* NaN never: keeps the reads */
}
