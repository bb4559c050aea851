/* A SIMD backend's RoPE angle table (hmx_backend.rope_table,
 * simd/x86/rope_table_x86.h) against the scalar definition hmx_rope_table
 * (src/canon_rope.c), bit for bit (memcmp), on 1 and 2 threads: row widths
 * that are and are not a multiple of the vector (the scalar tail), bases from
 * just above 1 to FLT_MAX, positions over the whole [0, 2^24) (every
 * quadrant of the reduction, angles up to 2^24) and the edges 0, 1,
 * 2^24 - 1. Bad arguments: the same status and message as the scalar
 * table's, and nothing written. Usage: test_rope_table ISA (exit 77 where
 * the CPU cannot run ISA). */
#include "backend.h"
#include "canon.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) { /* splitmix64, upper half */
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* The table of `be` against the scalar one for these positions. */
static void compare(const hmx_backend *be, const int32_t *pos, int64_t t, int rot, float base,
                    int threads) {
  const int64_t n = t * (rot / 2);
  float *c0 = malloc((size_t)(n + 1) * sizeof *c0), *s0 = malloc((size_t)(n + 1) * sizeof *s0);
  float *c1 = malloc((size_t)(n + 1) * sizeof *c1), *s1 = malloc((size_t)(n + 1) * sizeof *s1);
  if (!c0 || !s0 || !c1 || !s1) {
    CHECK(0, "out of memory");
  } else {
    memset(c1, 0x7f, (size_t)(n + 1) * sizeof *c1); /* NaN-like sentinels, guard included */
    memset(s1, 0x7f, (size_t)(n + 1) * sizeof *s1);
    hmx_status a = hmx_rope_table(pos, t, rot, base, c0, s0);
    hmx_status b = be->rope_table(pos, t, rot, base, c1, s1, threads);
    CHECK(a == HMX_OK && b == HMX_OK, "status %d / %d: %s", (int)a, (int)b, hmx_last_error());
    int64_t bad = -1;
    for (int64_t k = 0; k < n && bad < 0; k++)
      if (memcmp(&c0[k], &c1[k], sizeof(float)) || memcmp(&s0[k], &s1[k], sizeof(float))) bad = k;
    const int64_t e = bad < 0 ? 0 : bad, half = rot / 2;
    CHECK(bad < 0, "%s rot %d base %a T %lld threads %d: entry %lld (pos %d, pair %lld): "
          "cos %a vs %a, sin %a vs %a", be->name, rot, (double)base, (long long)t, threads,
          (long long)bad, n ? pos[e / half] : 0, (long long)(e % half), n ? (double)c0[e] : 0.0,
          n ? (double)c1[e] : 0.0, n ? (double)s0[e] : 0.0, n ? (double)s1[e] : 0.0);
    uint32_t guard;
    memset(&guard, 0x7f, sizeof guard);
    CHECK(!memcmp(&c1[n], &guard, sizeof guard) && !memcmp(&s1[n], &guard, sizeof guard),
          "%s wrote past the table (rot %d, T %lld)", be->name, rot, (long long)t);
  }
  free(c0); free(s0); free(c1); free(s1);
}

/* Both tables refuse the same arguments with the same message and write nothing. */
static void same_refusal(const hmx_backend *be, const int32_t *pos, int64_t t, int rot, float base,
                         int null_tab, const char *what) {
  float c[64], s[64], c_keep[64];
  for (int k = 0; k < 64; k++) c[k] = s[k] = c_keep[k] = 42.0f;
  char msg[512];
  hmx_status a = hmx_rope_table(pos, t, rot, base, null_tab ? NULL : c, s);
  snprintf(msg, sizeof msg, "%s", hmx_last_error());
  hmx_status b = be->rope_table(pos, t, rot, base, null_tab ? NULL : c, s, 2);
  CHECK(a != HMX_OK && a == b, "%s: status %d (scalar) vs %d (%s)", what, (int)a, (int)b, be->name);
  CHECK(!strcmp(msg, hmx_last_error()), "%s: message '%s' vs '%s'", what, msg, hmx_last_error());
  CHECK(!memcmp(c, c_keep, sizeof c) && !memcmp(s, c_keep, sizeof s), "%s: %s wrote", what,
        be->name);
}

int main(int argc, char **argv) {
  const char *isa = argc > 1 ? argv[1] : "avx512";
  const hmx_backend *be = hmx_backend_find(isa);
  if (!be) {
    fprintf(stderr, "backend %s not compiled in\n", isa);
    return 1;
  }
  CHECK(be->rope_table != NULL, "backend %s has no rope_table", isa);
  if (!be->rope_table) return check_finish("test_rope_table");
  if (!be->probe()) {
    printf("test_rope_table: this CPU cannot run %s: skipped\n", isa);
    return 77;
  }
  enum { T = 4096 };
  int32_t *pos = malloc(T * sizeof *pos);
  if (!pos) return 1;
  /* the edges, small positions (every quadrant at pair 0, where the angle is
   * the position itself), then uniform over [0, 2^24) */
  pos[0] = 0;
  pos[1] = 1;
  pos[2] = (1 << 24) - 1;
  for (int j = 3; j < 200; j++) pos[j] = j;
  for (int j = 200; j < T; j++) pos[j] = (int32_t)(next_u32() >> 8);
  static const int rots[] = {2, 4, 6, 8, 10, 14, 16, 18, 30, 32, 34, 62, 64, 96, 128, 130, 256};
  static const float bases[] = {1.0001f, 2.0f, 10.0f, 500.0f, 10000.0f, 1e6f, FLT_MAX};
  for (size_t r = 0; r < sizeof rots / sizeof *rots; r++)
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
      const int64_t t = rots[r] >= 128 ? 512 : T; /* fewer rows for the wide tables */
      compare(be, pos, t, rots[r], bases[b], 1);
      compare(be, pos, t, rots[r], bases[b], 2);
    }
  compare(be, pos, 1, 128, 10000.0f, 0); /* one position (a decode step), default threads */
  compare(be, pos, 0, 128, 10000.0f, 0); /* no positions */
  /* refusals */
  int32_t bad_pos[3] = {5, 1 << 24, 7}, neg_pos[2] = {3, -1};
  same_refusal(be, NULL, 2, 8, 10000.0f, 0, "NULL positions");
  same_refusal(be, pos, 2, 8, 10000.0f, 1, "NULL cos table");
  same_refusal(be, pos, -1, 8, 10000.0f, 0, "negative T");
  same_refusal(be, pos, 2, 7, 10000.0f, 0, "odd rot_dim");
  same_refusal(be, pos, 2, 0, 10000.0f, 0, "rot_dim 0");
  same_refusal(be, pos, 2, 8, 1.0f, 0, "base 1");
  same_refusal(be, pos, 2, 8, NAN, 0, "base NaN");
  same_refusal(be, pos, 2, 8, INFINITY, 0, "base inf");
  same_refusal(be, bad_pos, 3, 8, 10000.0f, 0, "position 2^24");
  same_refusal(be, neg_pos, 2, 8, 10000.0f, 0, "negative position");
  free(pos);
  return check_finish("test_rope_table");
}
