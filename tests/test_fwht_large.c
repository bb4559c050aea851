/* fwht and hadamard_mix on batches far larger than the caches, one backend
 * against ref, bit for bit, with 1 and 2 threads. The x86 kernels take other
 * paths there than on the small shapes of the conformance vectors and of
 * test_differential: non-temporal stores of the output (outputs of 32 MiB or
 * more, aligned, out of place; also through the m-point pass) and software
 * prefetch of the next row (batches of 8 MiB or more, blocks of 4096+
 * floats on the "zen" profile and zen4's avx512, 1024+ on "intel" and the
 * avx2 of zen4 and zen3). Neither may change a bit; this test would catch a
 * path that writes the wrong place, skips a row or reads a stale prefetched
 * row.
 *
 *   test_fwht_large BACKEND
 *
 * Exit 77 (ctest: skipped) when BACKEND cannot run here. */
#include "canon.h" /* hmx_inv_sqrt_n */
#include "check.h"
#include "threads.h"
#include "hadamix.h"
#include "large_batch.h"
#include "tuning.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((int64_t)1 << 20)

static float *alloc_aligned(int64_t n) {
  /* 64-byte aligned (the streaming path needs a vector-aligned output) */
  size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
  return aligned_alloc(64, bytes);
}

/* One case: y = op(x) on `be` with 1 and 2 threads, out of place (into an
 * aligned buffer) and in place, each compared with ref's out-of-place result. */
static void check_case(const hmx_backend *be, const char *op, int64_t n, int64_t bytes) {
  const int64_t batch = bytes / ((int64_t)sizeof(float) * n), total = batch * n;
  float *x = alloc_aligned(total), *want = alloc_aligned(total), *got = alloc_aligned(total);
  float *alpha = alloc_aligned(n), *beta = alloc_aligned(n);
  if (!x || !want || !got || !alpha || !beta) {
    CHECK(0, "%s n=%lld: out of memory", op, (long long)n);
    goto done;
  }
  large_fill(x, total, (uint64_t)n);
  large_fill(alpha, n, 7);
  large_fill(beta, n, 8);
  const int mix = strcmp(op, "hadamard_mix") == 0;
  hmx_tensor ta = hmx_tensor_1d(alpha, HMX_F32, n), tb = hmx_tensor_1d(beta, HMX_F32, n);
  hmx_context ref = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, batch, n), tw = hmx_tensor_2d(want, HMX_F32, batch, n);
  hmx_status st = mix ? hmx_hadamard_mix(&ref, &tx, &ta, &tb, &tw)
                      : hmx_fwht(&ref, &tx, &tw, hmx_inv_sqrt_n(n));
  CHECK(st == HMX_OK, "ref %s n=%lld: %s", op, (long long)n, hmx_last_error());
  for (int threads = 1; threads <= test_thread_max(2); threads++)
    for (int in_place = 0; in_place <= 1; in_place++) {
      hmx_context ctx = {be, threads, 0, HMX_TIER_DEFAULT};
      float *in = x;
      if (in_place) {
        memcpy(got, x, (size_t)total * sizeof(float));
        in = got;
      } else {
        memset(got, 0xff, (size_t)total * sizeof(float)); /* NaNs: a row not written shows */
      }
      hmx_tensor ti = hmx_tensor_2d(in, HMX_F32, batch, n);
      hmx_tensor tg = hmx_tensor_2d(got, HMX_F32, batch, n);
      st = mix ? hmx_hadamard_mix(&ctx, &ti, &ta, &tb, &tg)
               : hmx_fwht(&ctx, &ti, &tg, hmx_inv_sqrt_n(n));
      CHECK(st == HMX_OK, "%s %s n=%lld: %s", hmx_backend_name(be), op, (long long)n,
            hmx_last_error());
      const int64_t first = large_first_diff(got, want, total);
      CHECK(first < 0, "%s %s n=%lld batch=%lld threads=%d %s%s%s: first difference at "
            "row %lld col %lld", hmx_backend_name(be), op, (long long)n, (long long)batch, threads,
            in_place ? "in place" : "out of place",
            hmx_x86_tuning_read_by(hmx_backend_name(be)) ? ", tuning " : "",
            hmx_x86_tuning_read_by(hmx_backend_name(be)) ? hmx_x86_tuning_current()->name : "",
            (long long)(first / n), (long long)(first % n));
    }
done:
  free(x); free(want); free(got); free(alpha); free(beta);
}

int main(int argc, char **argv) {
  int code = 0;
  const hmx_backend *be = large_backend_arg(argc, argv, "test_fwht_large", &code);
  if (!be) return code;
  /* 32 MiB: the streaming threshold of the x86 kernels (and 8x their
   * prefetch threshold); sizes: short rows (one chunk), power-of-two rows of
   * one and several L1 blocks, m = 12 rows with short and long blocks, and
   * with blocks of two chunks (avx2 1536: the last stage in the m-point
   * pass, whose column pairs must not overwrite each other's inputs in
   * place; avx512 12288 where HX_FUSE_LAST is set for it). */
  static const int64_t sizes[] = {256, 2048, 4096, 16384, 768, 49152, 1536, 12288};
  /* every x86 tuning profile (src/tuning.h), whichever CPU this is: they
   * prefetch from other block sizes and use the scratch row differently */
  const int x86 = hmx_x86_tuning_read_by(argv[1]);
  for (int k = 0; k < (x86 ? hmx_x86_tuning_count() : 1); k++) {
    if (x86) hmx_x86_tuning_force(hmx_x86_tuning_at(k));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      check_case(be, "fwht", sizes[i], 32 * MIB);
    check_case(be, "hadamard_mix", 4096, 32 * MIB);
  }
  hmx_x86_tuning_force(NULL);
  return check_finish("test_fwht_large");
}
