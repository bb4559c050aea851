/* The kept scratch block (src/scratch_cache.h): aligned, reused while large
 * enough, never handed to two callers at once, the larger of two kept, one
 * past HMX_SCRATCH_KEEP_MAX not kept; and the x86 gemm that takes its pack
 * buffers from it gives the same bits on 1 and 2 threads, call after call.
 * With the argument "nokeep" (test_scratch_cache_nokeep: src/scratch_cache.c
 * built in with HMX_SCRATCH_NO_KEEP, the path of a compiler without C11
 * atomics) it checks that no block is kept and the gemm is still exact. */
#include "check.h"
#include "scratch_cache.h"
#include "hadamix.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_take_give(void) {
  unsigned char *a = hmx_scratch_take(1000);
  CHECK(a && ((uintptr_t)a & 63) == 0, "take(1000): %p, not 64-byte aligned", (void *)a);
  if (a) memset(a, 1, 1000); /* every byte is ours */
  unsigned char *b = hmx_scratch_take(1000); /* a is out: another block */
  CHECK(b && b != a, "a block taken twice: %p %p", (void *)a, (void *)b);
  hmx_scratch_give(a);
  unsigned char *c = hmx_scratch_take(500); /* fits the kept one */
  CHECK(c == a, "the kept block (%p) not reused: %p", (void *)a, (void *)c);
  hmx_scratch_give(c);
  hmx_scratch_give(b); /* equal sizes: b replaces a */
  unsigned char *d = hmx_scratch_take(2000); /* too small: a new one */
  CHECK(d && d != b && ((uintptr_t)d & 63) == 0, "take(2000) reused a 1000-byte block");
  hmx_scratch_give(d);
  unsigned char *small = hmx_scratch_take(100);
  CHECK(small == d, "the 2000-byte block not reused for 100 bytes");
  unsigned char *other = hmx_scratch_take(100); /* the slot is empty: a new one */
  CHECK(other && other != d, "a block taken twice");
  hmx_scratch_give(small); /* kept (the slot was empty) */
  hmx_scratch_give(other); /* smaller than the kept one: freed, that one stays */
  unsigned char *e = hmx_scratch_take(1500);
  CHECK(e == d, "the larger of two given blocks not kept");
  hmx_scratch_give(e);
  hmx_scratch_give(NULL); /* nothing */
  CHECK(hmx_scratch_take(SIZE_MAX) == NULL, "take(SIZE_MAX) did not fail");
  /* past HMX_SCRATCH_KEEP_MAX (64 MiB): freed when given, the kept one stays */
  unsigned char *kept = hmx_scratch_take(100); /* the 2000-byte block */
  CHECK(kept == d, "the kept block not found");
  unsigned char *big = hmx_scratch_take((size_t)65 << 20);
  CHECK(big != NULL, "take(65 MiB) failed");
  hmx_scratch_give(kept);
  hmx_scratch_give(big);
  CHECK(hmx_scratch_take(100) == d, "a block past the limit replaced the kept one");
  hmx_scratch_give(d);
}

/* The path without a kept block: every take a new aligned block of its own. */
static void test_take_give_plain(void) {
  unsigned char *a = hmx_scratch_take(1000), *b = hmx_scratch_take(1000);
  CHECK(a && b && a != b && ((uintptr_t)a & 63) == 0 && ((uintptr_t)b & 63) == 0,
        "take(1000) twice: %p %p", (void *)a, (void *)b);
  if (a) memset(a, 1, 1000);
  if (b) memset(b, 2, 1000);
  hmx_scratch_give(a);
  hmx_scratch_give(b);
  hmx_scratch_give(NULL);
  CHECK(hmx_scratch_take(SIZE_MAX) == NULL, "take(SIZE_MAX) did not fail");
  unsigned char *big = hmx_scratch_take((size_t)65 << 20);
  CHECK(big && ((uintptr_t)big & 63) == 0, "take(65 MiB) failed");
  hmx_scratch_give(big);
}

static void fill(float *x, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) * 0x1p-23f - 1.0f;
  }
}

/* Three shapes that take gx_gemm's rectangles (split by columns and by
 * rows) and so the kept block, in turn, several times: each call's C is
 * ref's bit for bit, on 1 and 2 threads. */
static void test_gemm_repeated(void) {
  static const int64_t shapes[][3] = {{64, 768, 96}, {17, 45, 70}, {300, 64, 40}};
  const hmx_backend *be[] = {hmx_backend_find("avx2"), hmx_backend_find("avx512")};
  for (int bi = 0; bi < 2; bi++) {
    if (!be[bi] || !hmx_backend_available(be[bi])) {
      printf("-- %s not available here: its rounds not run\n", bi ? "avx512" : "avx2");
      continue;
    }
    for (int round = 0; round < 3; round++)
      for (int s = 0; s < 3; s++) {
        const int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        float *a = malloc((size_t)(m * k) * sizeof *a), *w = malloc((size_t)(n * k) * sizeof *w);
        float *want = malloc((size_t)(m * n) * sizeof *want);
        float *got = malloc((size_t)(m * n) * sizeof *got);
        if (!a || !w || !want || !got) {
          CHECK(0, "out of memory");
          free(a), free(w), free(want), free(got);
          return;
        }
        fill(a, m * k, 7u + (unsigned)s), fill(w, n * k, 11u + (unsigned)s);
        hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, m, k), tw = hmx_tensor_2d(w, HMX_F32, n, k);
        hmx_tensor tc = hmx_tensor_2d(want, HMX_F32, m, n), tg = hmx_tensor_2d(got, HMX_F32, m, n);
        hmx_context rc = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
        CHECK(hmx_gemm(&rc, &ta, &tw, 1, NULL, &tc) == HMX_OK, "ref: %s", hmx_last_error());
        for (int threads = 1; threads <= 2; threads++) {
          hmx_context c = {be[bi], threads, 0, HMX_TIER_DEFAULT};
          memset(got, 0xff, (size_t)(m * n) * sizeof *got);
          CHECK(hmx_gemm(&c, &ta, &tw, 1, NULL, &tg) == HMX_OK, "%s: %s",
                hmx_backend_name(be[bi]), hmx_last_error());
          CHECK(memcmp(want, got, (size_t)(m * n) * sizeof *got) == 0,
                "%s %d threads, round %d, %lld x %lld x %lld: not ref's bits",
                hmx_backend_name(be[bi]), threads, round, (long long)m, (long long)k,
                (long long)n);
        }
        free(a), free(w), free(want), free(got);
      }
  }
}

int main(int argc, char **argv) {
  const int nokeep = argc > 1 && !strcmp(argv[1], "nokeep");
#ifdef __STDC_NO_ATOMICS__
  const int want_keeps = 0; /* this compiler's build keeps nothing either */
#else
  const int want_keeps = !nokeep;
#endif
  CHECK(hmx_scratch_keeps() == want_keeps, "hmx_scratch_keeps() = %d, this build should give %d",
        hmx_scratch_keeps(), want_keeps);
  if (hmx_scratch_keeps()) test_take_give();
  else test_take_give_plain();
  test_gemm_repeated();
  return check_finish("test_scratch_cache");
}
