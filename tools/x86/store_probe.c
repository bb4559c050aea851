/* hmx-store-probe: what one 64-byte vector access costs this core in L1,
 * aligned and 16 bytes past a line (where malloc puts large blocks and
 * `hmx bench` its buffers), in cycles of a dependent-add clock: 512-bit
 * stores, two 256-bit stores, 512-bit loads, and a load + store in place.
 * Session 61 measured these to see what bounds the avx512 fwht
 * (docs/results/session61/x86-fwht-probes.txt). No hadamix code; AVX-512
 * code behind a runtime check. FTZ / DAZ are set so that no value ever
 * takes a denormal assist.
 *   build/tools/hmx-store-probe [runs]   (pin it: taskset -c 1 ...) */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tool_clock.h"

#define AVX512 __attribute__((target("avx512f"), noinline))

/* GHz from a chain of dependent 512-bit adds (4 cycles each on Intel cores since Skylake) */
AVX512 static double clock_ghz(void) {
  const long n = 20000000;
  const double t0 = hmx_tool_seconds();
  for (long i = 0; i < n; i++)
    __asm__ volatile("vaddps %%zmm9,%%zmm0,%%zmm0\n vaddps %%zmm9,%%zmm0,%%zmm0\n"
                     "vaddps %%zmm9,%%zmm0,%%zmm0\n vaddps %%zmm9,%%zmm0,%%zmm0\n" ::: "xmm0");
  return 16.0 * n / (hmx_tool_seconds() - t0) / 1e9;
}

AVX512 static void st512(float *p, long n) {
  const __m512 v = _mm512_set1_ps(1.0f);
  for (long i = 0; i < n; i += 64) {
    _mm512_storeu_ps(p + i, v), _mm512_storeu_ps(p + i + 16, v);
    _mm512_storeu_ps(p + i + 32, v), _mm512_storeu_ps(p + i + 48, v);
  }
}
AVX512 static void st256(float *p, long n) {
  const __m256 v = _mm256_set1_ps(1.0f);
  for (long i = 0; i < n; i += 32) {
    _mm256_storeu_ps(p + i, v), _mm256_storeu_ps(p + i + 8, v);
    _mm256_storeu_ps(p + i + 16, v), _mm256_storeu_ps(p + i + 24, v);
  }
}
/* eight independent max chains: a load's result is needed 4 cycles later at the earliest */
AVX512 static void ld512(const float *p, long n, float *out) {
  __m512 a = _mm512_setzero_ps(), b = a, c = a, d = a, e = a, f = a, g = a, h = a;
  for (long i = 0; i < n; i += 128) {
    a = _mm512_max_ps(a, _mm512_loadu_ps(p + i)), b = _mm512_max_ps(b, _mm512_loadu_ps(p + i + 16));
    c = _mm512_max_ps(c, _mm512_loadu_ps(p + i + 32)), d = _mm512_max_ps(d, _mm512_loadu_ps(p + i + 48));
    e = _mm512_max_ps(e, _mm512_loadu_ps(p + i + 64)), f = _mm512_max_ps(f, _mm512_loadu_ps(p + i + 80));
    g = _mm512_max_ps(g, _mm512_loadu_ps(p + i + 96)), h = _mm512_max_ps(h, _mm512_loadu_ps(p + i + 112));
  }
  a = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)),
                    _mm512_add_ps(_mm512_add_ps(e, f), _mm512_add_ps(g, h)));
  _mm512_storeu_ps(out, a);
}
AVX512 static void inplace512(float *p, long n) {
  for (long i = 0; i < n; i += 32) {
    const __m512 a = _mm512_loadu_ps(p + i), b = _mm512_loadu_ps(p + i + 16);
    _mm512_storeu_ps(p + i, _mm512_add_ps(a, a)), _mm512_storeu_ps(p + i + 16, _mm512_add_ps(b, b));
  }
}

int main(int argc, char **argv) {
  const int runs = argc > 1 ? atoi(argv[1]) : 1;
  if (runs < 1 || runs > 100) {
    fprintf(stderr, "usage: hmx-store-probe [runs 1..100]\n");
    return 2;
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    printf("hmx-store-probe: this CPU has no AVX-512F; nothing measured\n");
    return 0;
  }
  _mm_setcsr(_mm_getcsr() | 0x8040);
  float *buf = aligned_alloc(64, (size_t)1 << 20), out[16] = {0};
  if (!buf) return 1;
  for (long i = 0; i < (1 << 18); i++) buf[i] = 1.0f;
  for (int run = 0; run < runs; run++) {
    const double ghz = clock_ghz();
    printf("clock (dependent adds) %.2f GHz; cycles per 64 bytes:\n", ghz);
    for (int off = 0; off <= 4; off += 4)
      for (int kib = 8; kib <= 32; kib *= 2) {
        float *p = buf + off;
        const long n = kib * 256, reps = (long)(4e8 / n);
        double c[4];
        for (int k = 0; k < 4; k++) {
          const double t0 = hmx_tool_seconds();
          for (long r = 0; r < reps; r++) {
            if (k == 0) st512(p, n);
            else if (k == 1) st256(p, n);
            else if (k == 2) ld512(p, n, out);
            else inplace512(p, n);
          }
          c[k] = (hmx_tool_seconds() - t0) / reps / (n / 16.0) * ghz * 1e9;
        }
        printf("  %2d bytes past a line, %2d KiB: store512 %.2f  2 x store256 %.2f  load512 %.2f  "
               "load + store in place %.2f\n", off * 4, kib, c[0], c[1], c[2], c[3]);
      }
  }
  free(buf);
  return out[0] < 0; /* keeps the loads */
}
