/* The vector canonical exp/sigmoid/SiLU of the SIMD backends
 * (simd/avx512/vexp_avx512.h, simd/avx2/vexp_avx2.h) against the scalar
 * definitions hmx_expf/hmx_sigmoidf/hmx_siluf (docs/NUMERICS.md §E), bit for
 * bit (any NaN equals any NaN, §C), on:
 *   - every 97th of all 2^32 bit patterns (both signs, all exponents; 97 is
 *     odd, so the sample visits every low-bit residue),
 *   - every float with |x| in [87, 105] (subnormal and underflowing results,
 *     the n = -126 / -149 / -150 switches, overflow near XMAX),
 *   - every subnormal input with a stride of 7, and dense sweeps around 0,
 *     +-1, XMAX, XMIN, +-inf and many NaN payloads (quiet and signaling).
 *
 *   test_vexp avx512|avx2 [stride]
 *
 * Exits 77 (ctest: skipped) when this CPU lacks the ISA. */
#include "check.h"
#include "cpu.h"
#include "hadamix.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(HMX_TEST_AVX512)
void hmx_avx512_expf_array(const float *x, float *y, int64_t n);
void hmx_avx512_sigmoidf_array(const float *x, float *y, int64_t n);
void hmx_avx512_siluf_array(const float *x, float *y, int64_t n);
#endif
#if defined(HMX_TEST_AVX2)
void hmx_avx2_expf_array(const float *x, float *y, int64_t n);
void hmx_avx2_sigmoidf_array(const float *x, float *y, int64_t n);
void hmx_avx2_siluf_array(const float *x, float *y, int64_t n);
#endif

typedef void (*array_fn)(const float *, float *, int64_t);
typedef float (*scalar_fn)(float);

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static array_fn vec_fn[3];
static const scalar_fn ref_fn[3] = {hmx_expf, hmx_sigmoidf, hmx_siluf};
static const char *const fn_name[3] = {"exp", "sigmoid", "silu"};
static long compared = 0, mismatches = 0;

#define CHUNK 4099 /* odd, so the lane of a value varies from chunk to chunk */
static float xin[CHUNK], yv[CHUNK];
static int xcount = 0;

static void flush(void) {
  for (int f = 0; f < 3; f++) {
    vec_fn[f](xin, yv, xcount);
    for (int i = 0; i < xcount; i++) {
      float r = ref_fn[f](xin[i]);
      compared++;
      int same = f2u(r) == f2u(yv[i]) || (isnan(r) && isnan(yv[i]));
      if (!same) {
        mismatches++;
        if (mismatches <= 20)
          CHECK(same, "%s(%a) [0x%08x]: vector 0x%08x, scalar 0x%08x", fn_name[f], (double)xin[i],
                f2u(xin[i]), f2u(yv[i]), f2u(r));
      }
    }
  }
  xcount = 0;
}

static void add(uint32_t bits) {
  xin[xcount++] = u2f(bits);
  if (xcount == CHUNK) flush();
}

/* All patterns from lo to hi (inclusive) with the given step. */
static void range(uint32_t lo, uint32_t hi, uint32_t step) {
  for (uint64_t b = lo; b <= hi; b += step) add((uint32_t)b);
}

static void around(float x, uint32_t count) {
  uint32_t b = f2u(x);
  range(b > count ? b - count : 0, b > 0xFFFFFFFFu - count ? 0xFFFFFFFFu : b + count, 1);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_vexp avx512|avx2 [stride]\n");
    return 2;
  }
  hmx_cpu_features cpu = hmx_cpu_detect();
  int have = 0;
#if defined(HMX_TEST_AVX512)
  if (!strcmp(argv[1], "avx512")) {
    if (!cpu.avx512) {
      printf("test_vexp: no AVX-512 on this CPU: skipped\n");
      return 77;
    }
    vec_fn[0] = hmx_avx512_expf_array;
    vec_fn[1] = hmx_avx512_sigmoidf_array;
    vec_fn[2] = hmx_avx512_siluf_array;
    have = 1;
  }
#endif
#if defined(HMX_TEST_AVX2)
  if (!strcmp(argv[1], "avx2")) {
    if (!cpu.avx2_fma) {
      printf("test_vexp: no AVX2+FMA on this CPU: skipped\n");
      return 77;
    }
    vec_fn[0] = hmx_avx2_expf_array;
    vec_fn[1] = hmx_avx2_sigmoidf_array;
    vec_fn[2] = hmx_avx2_siluf_array;
    have = 1;
  }
#endif
  (void)cpu;
  if (!have) {
    printf("test_vexp: backend %s not compiled in: skipped\n", argv[1]);
    return 77;
  }
  uint32_t stride = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 97u;
  if (stride < 1) stride = 1;

  /* 1. A strided sample of all 2^32 patterns. */
  range(0, 0xFFFFFFFFu, stride);
  /* 2. Every float with 87 <= |x| <= 105, both signs: subnormal results,
   *    the yn < 2^-126 switch at n = -126, n = -149 / -150, XMIN, XMAX. */
  range(f2u(87.0f), f2u(105.0f), 1);
  range(f2u(-87.0f), f2u(-105.0f), 1);
  /* 3. Subnormal and zero inputs of both signs. */
  range(0x00000000u, 0x00800000u, 7);
  range(0x80000000u, 0x80800000u, 7);
  /* 4. Dense neighbourhoods of the special points. */
  const float points[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 0x1.62e42ep+6f, -0x1.9fe368p+6f,
                          -0x1.5e9bfcp+6f, -0x1.28a936p+5f, 0x1p-126f, -0x1p-126f, 0x1p-149f,
                          -0x1p-149f, 0x1.fffffep+127f, -0x1.fffffep+127f, 0x1.62e43p-1f,
                          -0x1.62e43p-1f, 88.0f, -88.0f, 103.0f, -103.0f, 0.34657359f, -0.34657359f};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) around(points[i], 20000);
  /* 5. Infinities and NaNs: quiet and signaling, both signs, many payloads. */
  range(0x7F800000u, 0x7F800000u + 100000u, 1);
  range(0xFF800000u, 0xFF800000u + 100000u, 1);
  range(0x7FC00000u - 50000u, 0x7FC00000u + 50000u, 1);
  range(0xFFC00000u - 50000u, 0xFFC00000u + 50000u, 1);
  range(0x7FFFFFFFu - 1000u, 0x7FFFFFFFu, 1);
  range(0xFFFFFFFFu - 1000u, 0xFFFFFFFFu, 1);
  flush();
  printf("test_vexp %s: %ld comparisons (stride %u), %ld mismatches\n", argv[1], compared,
         (unsigned)stride, mismatches);
  CHECK(mismatches == 0, "%ld vector results differ from the scalar definition", mismatches);
  return check_finish("test_vexp");
}
