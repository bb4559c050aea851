/* Differential test: one backend against ref, bit for bit (NaN equals NaN),
 * on fresh random shapes (odd sizes, lengths that are not a multiple of the
 * vector width, pointers that are not vector-aligned), and the backend with
 * 1 and 2 threads against itself with memcmp.
 *
 *   test_differential BACKEND [cases-per-op]
 *
 * Exit 77 (ctest: skipped) when BACKEND cannot run here or has no kernel.
 * HMX_TEST_SEED=n varies the shapes and buffer offsets (the default seed, 0,
 * is fixed; the seed in use is printed first); HMX_TEST_THREADS=n compares
 * 1 thread with n threads instead of 2. Each op must have had at least one
 * run asked for n threads that really ran more than one (src/parallel.h,
 * hmx_team_max), or its comparisons of 1 with n threads compared nothing. */
#include "check.h"
#include "threads.h"
#include "compare.h"
#include "opspec.h"
#include "attention_kb16.h" /* src/: the KV cache's blocked K */
#include "tuning.h"         /* src/: the x86 tuning profiles */
#include "parallel.h"       /* src/: hmx_team_max, the test hook */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int64_t rnd(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }
static float rnd_float(void) { return (float)(next_u64() >> 40) * 0x1p-23f - 1.0f; }

typedef struct buf { float *base; float *p; int64_t n; } buf;

/* The offsets in bytes past a 64-byte line of the buffers made for the
 * current case, in the order made ("w" for weights), for its failure
 * messages: a case's first buffer starts the list again. */
static char offsets[256];
static int offsets_done = 1; /* the list is a finished case's */
static void note_offset(const char *what, int bytes) {
  if (offsets_done) offsets[0] = 0;
  offsets_done = 0;
  const size_t len = strlen(offsets);
  snprintf(offsets + len, sizeof offsets - len, " %s+%d", what, bytes);
}
/* desc with the current case's buffer offsets (one static string). */
static const char *with_offsets(const char *desc) {
  static char s[512];
  snprintf(s, sizeof s, "%s [buffers at%s bytes past a line]", desc, offsets);
  return s;
}

/* A buffer `off` floats (0 .. 15) past a 64-byte line, with at least 16
 * guard floats on each side set to GUARD_BYTE: kernels that align their
 * accesses to the output (masked stores at a row's ends) must leave them. */
#define GUARD_BYTE 0xA5
static buf make_buf_at(int64_t n, int fill, int off) {
  note_offset("", off * (int)sizeof(float));
  buf b;
  b.n = n;
  const size_t total = (size_t)(n + 64) * sizeof(float);
  b.base = malloc(total);
  memset(b.base, GUARD_BYTE, total);
  b.p = b.base + 16 + ((64 - ((uintptr_t)b.base % 64)) % 64) / sizeof(float) + off;
  for (int64_t i = 0; i < n; i++) b.p[i] = fill ? rnd_float() : 0.0f;
  return b;
}

/* A float buffer 0, 4, .. or 60 bytes past a 64-byte line, drawn per buffer
 * from the seed: kernels must not assume vector alignment, nor that all
 * their buffers are misaligned alike (and the aligned case is one of them). */
static buf make_buf(int64_t n, int fill) { return make_buf_at(n, fill, (int)rnd(0, 15)); }

/* Whether every byte of b's allocation outside b.p[0 .. n) is still GUARD_BYTE. */
static int guards_intact(const buf *b) {
  const unsigned char *c = (const unsigned char *)b->base;
  const size_t lo = (size_t)((const char *)b->p - (const char *)b->base);
  const size_t hi = lo + (size_t)b->n * sizeof(float), total = (size_t)(b->n + 64) * sizeof(float);
  for (size_t i = 0; i < total; i++)
    if ((i < lo || i >= hi) && c[i] != GUARD_BYTE) return 0;
  return 1;
}

/* Weights in dtype dt (f32, bf16, f16) with random values, starting 0 .. 63
 * bytes (whole elements, drawn) past a 64-byte line: 16-bit weights go to
 * backends that read them in place (backend.h, HMX_W16_*), and the staged
 * ref must agree. */
typedef struct wbuf { void *base; void *p; } wbuf;
static wbuf make_w(int64_t n, hmx_dtype dt) {
  wbuf w;
  const size_t es = dt == HMX_F32 ? 4 : 2;
  const int off = (int)(rnd(0, 64 / (int64_t)es - 1) * (int64_t)es);
  note_offset("w", off);
  w.base = malloc((size_t)(n + 64) * es);
  char *p = (char *)w.base + ((64 - ((uintptr_t)w.base % 64)) % 64) + off;
  w.p = p;
  for (int64_t i = 0; i < n; i++) {
    float v = rnd_float();
    if (dt == HMX_F32) ((float *)p)[i] = v;
    else if (dt == HMX_BF16) ((uint16_t *)p)[i] = hmx_f32_to_bf16(v);
    else ((uint16_t *)p)[i] = hmx_f32_to_f16(v);
  }
  return w;
}
static hmx_dtype rnd_wdtype(void) {
  static const hmx_dtype dts[] = {HMX_F32, HMX_BF16, HMX_F16};
  return dts[rnd(0, 2)];
}

static const hmx_backend *be_under_test;
static int cases_run;
/* Set by a generator before each check: whether the case's work splits
 * into 2 or more independent items on every CPU backend (rows, heads,
 * tiles), so that a run on 2 threads can use both. */
static int case_splits;
/* Over the current op: whether a case split (case_splits), and the most
 * threads one team of the backend had on a run asked for many_threads. */
static int op_splits, op_team_most;
/* After a run on `threads` threads (hmx_team_reset before it): a 1-thread
 * run must not start a larger team; record the others' teams. */
static void note_team(int threads, const char *desc) {
  const int team = hmx_team_max();
  if (threads == 1)
    CHECK(team <= 1, "%s: %s on 1 thread ran a team of %d", desc, be_under_test->name, team);
  else if (team > op_team_most) op_team_most = team;
  if (threads > 1 && case_splits) op_splits = 1;
}
/* A second output compared byte for byte too (the kept keys of the selecting
 * sketches), or NULL. */
static hmx_tensor *also_out;
static size_t also_bytes;
static int many_threads = 2;
/* 1, then many_threads: the loops over thread counts */
static int next_threads(int threads) {
  return threads < many_threads ? many_threads : threads + 1;
}

/* Run op on `be` (threads t) into out; returns status. */
static hmx_status run(const hmx_opspec *op, const hmx_backend *be, int threads,
                      hmx_tensor **t, const double *p) {
  hmx_context ctx = {be, threads, 0, HMX_TIER_DEFAULT};
  return op->invoke(&ctx, t, p);
}

/* Compare backend (1 and 2 threads) with ref for one prepared case. */
static void check_case(const hmx_opspec *op, hmx_tensor **t, const double *p, int out_arg,
                       const char *desc) {
  desc = with_offsets(desc);
  offsets_done = 1;
  hmx_tensor *out = t[out_arg];
  int64_t n = hmx_tensor_numel(out);
  size_t bytes = (size_t)n * sizeof(float);
  float *ref_out = malloc(bytes ? bytes : 4), *one = malloc(bytes ? bytes : 4);
  hmx_status s = run(op, hmx_backend_find("ref"), 1, t, p);
  CHECK(s == HMX_OK, "%s: ref failed: %s", desc, hmx_last_error());
  memcpy(ref_out, out->data, bytes);
  unsigned char *ref_also = also_out ? malloc(also_bytes) : NULL;
  if (ref_also) memcpy(ref_also, also_out->data, also_bytes);
  for (int threads = 1; threads <= many_threads; threads = next_threads(threads)) {
    memset(out->data, 0xAB, bytes);
    if (also_out) memset(also_out->data, 0xAB, also_bytes);
    hmx_team_reset();
    s = run(op, be_under_test, threads, t, p);
    note_team(threads, desc);
    CHECK(s == HMX_OK, "%s: %s failed: %s", desc, be_under_test->name, hmx_last_error());
    if (s != HMX_OK) break;
    hmx_tensor got = *out, want = *out;
    want.data = ref_out;
    hmx_diff_stats st;
    hmx_compare(&got, &want, &st);
    CHECK(st.differing == 0, "%s: %s (%d thread%s) differs from ref at %lld of %lld elements "
          "(first %lld, max ulp %.0f)", desc, be_under_test->name, threads, threads > 1 ? "s" : "",
          (long long)st.differing, (long long)st.count, (long long)st.first_index, st.max_ulp);
    if (ref_also)
      CHECK(memcmp(ref_also, also_out->data, also_bytes) == 0, "%s: %s (%d threads) second "
            "output (kept keys) differs from ref", desc, be_under_test->name, threads);
    if (threads == 1) memcpy(one, out->data, bytes);
    else CHECK(memcmp(one, out->data, bytes) == 0, "%s: 1 and %d threads differ", desc, threads);
  }
  cases_run++;
  free(ref_also);
  free(ref_out);
  free(one);
}

/* fwht in place on x (restored afterwards): the backend on 1 and on
 * many_threads threads against ref, memcmp, or with any_nan as check_case
 * compares (any NaN equals any NaN: rows holding NaNs). */
static void check_in_place(const hmx_opspec *op, hmx_tensor *tx, const double *p,
                           const char *desc, int any_nan) {
  desc = with_offsets(desc);
  const size_t bytes = (size_t)hmx_tensor_numel(tx) * sizeof(float);
  float *keep = malloc(bytes), *want = malloc(bytes);
  memcpy(keep, tx->data, bytes);
  hmx_tensor *t[] = {tx, tx};
  hmx_status s = run(op, hmx_backend_find("ref"), 1, t, p);
  CHECK(s == HMX_OK, "%s in place: ref failed: %s", desc, hmx_last_error());
  memcpy(want, tx->data, bytes);
  for (int threads = 1; threads <= many_threads; threads = next_threads(threads)) {
    memcpy(tx->data, keep, bytes);
    hmx_team_reset();
    s = run(op, be_under_test, threads, t, p);
    note_team(threads, desc);
    CHECK(s == HMX_OK, "%s in place: %s failed: %s", desc, be_under_test->name, hmx_last_error());
    hmx_diff_stats st = {0};
    if (any_nan) {
      hmx_tensor w = *tx;
      w.data = want;
      hmx_compare(tx, &w, &st);
    }
    CHECK(any_nan ? st.differing == 0 : memcmp(want, tx->data, bytes) == 0,
          "%s in place: %s (%d threads) differs from ref", desc, be_under_test->name, threads);
  }
  memcpy(tx->data, keep, bytes);
  free(keep);
  free(want);
}

static void diff_fwht_specials(const hmx_opspec *op, const char *profile);

/* One fwht or hadamard_mix case of `batch` rows of n = m * 2^k: m the factor
 * asked for (fwht only; 0: automatic; -1: 40 or automatic at random where 40
 * divides n). */
static void fwht_case(const hmx_opspec *op, int is_mix, int64_t n, int m, int64_t batch,
                      const char *profile) {
  /* x, y, alpha and beta each 0 .. 15 floats past a line, independently
   * (the avx512 passes align their stores to y's lines, whatever x's) */
  buf x = make_buf_at(batch * n, 1, (int)rnd(0, 15));
  buf y = make_buf_at(batch * n, 0, (int)rnd(0, 15));
  buf al = make_buf_at(n, 1, (int)rnd(0, 15)), be = make_buf_at(n, 1, (int)rnd(0, 15));
  hmx_tensor tx = hmx_tensor_2d(x.p, HMX_F32, batch, n), ty = hmx_tensor_2d(y.p, HMX_F32, batch, n);
  hmx_tensor ta = hmx_tensor_1d(al.p, HMX_F32, n), tb = hmx_tensor_1d(be.p, HMX_F32, n);
  if (m < 0) m = (!is_mix && n % 40 == 0 && rnd(0, 1)) ? 40 : 0;
  /* rows split over threads (and rows of 2^16 or more, in parts) */
  case_splits = batch >= 2;
  char desc[128];
  snprintf(desc, sizeof desc, "%s n=%lld m=%d batch=%lld%s%s", op->name, (long long)n,
           is_mix ? 0 : m, (long long)batch, profile ? " tuning=" : "", profile ? profile : "");
  if (is_mix) {
    hmx_tensor *t[] = {&tx, &ta, &tb, &ty};
    check_case(op, t, NULL, 3, desc);
  } else {
    double p[2] = {rnd(0, 1) ? 1.0 : (double)rnd_float(), m};
    hmx_tensor *t[] = {&tx, &ty};
    check_case(op, t, p, 1, desc);
    /* in place (y may equal x), on 1 thread and on several */
    check_in_place(op, &tx, p, desc, 0);
  }
  CHECK(guards_intact(&y) && guards_intact(&x), "%s: %s wrote outside the rows",
        with_offsets(desc), be_under_test->name);
  free(x.base); free(y.base); free(al.base); free(be.base);
}

/* What diff_fwht_sizes' random draws may cost, per op (all profiles
 * together), in butterflies: an element of a row of m * 2^k takes k, plus
 * about 4m for m > 1 (ref's m-point pass, timed against the butterflies),
 * and a row at least 1. 2^27 is about 15% of the fixed list's, and room for
 * one row of 28 * 2^15 or 40 * 2^14, not of 40 * 2^15 (1.7 times it). */
#define FWHT_DRAW_COST ((int64_t)1 << 27)
static int64_t fwht_cost(int64_t batch, int m, int k) {
  return batch * (((int64_t)m << k) * (k + (m > 1 ? 4 * m : 0)) + 1);
}

/* left: what is left of FWHT_DRAW_COST */
static void diff_fwht_sizes(const hmx_opspec *op, int is_mix, const char *profile,
                            int64_t *left) {
  static const int64_t sizes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
                                  8192, 16384, 65536, 12, 24, 48, 96, 384, 768, 1536, 20, 40,
                                  80, 640, 1280, 28, 56, 448, 3584, 5120,
                                  /* m > 1 blocks of two avx512 chunks (p = 1024;
                                   * avx2's: 1536 above, whose last stage is fused
                                   * into the m-point pass) */
                                  12288, 20480, 28672, 40960,
                                  /* m > 1 with p > 4096 (the CUDA backend's cluster
                                   * and two-pass kernels), and 2^20 */
                                  81920, 98304, 163840, 229376, 1048576,
                                  /* p = 8 and 16 (avx2: one vector; avx512: p = 8
                                   * through the avx2 kernel, fwht_avx512_pick.c,
                                   * and p = 16 one vector) for m = 12, 20, 28 */
                                  192, 160, 320, 112, 224,
                                  /* 2^17 and 2^18: the stages past a block (avx512
                                   * 2^16, avx2 2^15) in one pass of 1 or 2 (avx2: 2
                                   * or 3) stages, a row's parts over threads (2^19
                                   * too took about 0.8 s more under ASan) */
                                  131072, 262144};
  int ns = (int)(sizeof sizes / sizeof sizes[0]);
  for (int c = 0; c < ns; c++) {
    const int64_t n = sizes[c];
    fwht_case(op, is_mix, n, -1, rnd(1, n > 8192 ? 2 : 5), profile);
  }
  if (!is_mix) /* m = 40 only when asked for (but at 40 * 2^15): p = 1 .. 16 */
    for (int64_t p = 1; p <= 16; p *= 2) fwht_case(op, 0, 40 * p, 40, rnd(1, 5), profile);
  /* Random sizes over the whole legal range (docs/NUMERICS.md, fwht: m = 1
   * with k <= 20, m in 12, 20, 28, 40 with k <= 15), from the seed, all
   * draws together within FWHT_DRAW_COST: a draw that does not fit takes a
   * smaller k, or ends them. */
  static const int ms[] = {1, 12, 20, 28, 40};
  for (int c = 0; c < 6; c++) {
    const int m = ms[rnd(0, 4)];
    int k = (int)rnd(0, m == 1 ? 20 : 15);
    while (k > 0 && fwht_cost(1, m, k) > *left) k--;
    const int64_t n = (int64_t)m << k, fit = *left / fwht_cost(1, m, k);
    if (fit < 1) break;
    const int64_t batch = rnd(1, fit < 5 ? fit : 5);
    *left -= fwht_cost(batch, m, k);
    fwht_case(op, is_mix, n, m, batch, profile);
  }
  if (!is_mix) diff_fwht_specials(op, profile);
}

/* fwht rows of special values, scale 1 (the x86 kernels skip the multiply
 * then) and a random scale: row 0 NaNs among finite values, row 1 an
 * infinity of each sign, row 2 only subnormals and zeros of both signs (their
 * sums stay subnormal, exactly), row 3 only -0 (sums -0, differences +0),
 * row 4 near FLT_MAX (sums overflow to infinities). Compared as check_case
 * does (any NaN equals any NaN, docs/NUMERICS.md), out of place and in place. */
static void diff_fwht_specials(const hmx_opspec *op, const char *profile) {
  static const int64_t sizes[] = {1, 2, 16, 64, 256, 1024, 4096, 16384, 12, 768, 12288};
  enum { ROWS = 5 };
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
    const int64_t n = sizes[c];
    buf x = make_buf_at(ROWS * n, 1, (int)rnd(0, 15));
    buf y = make_buf_at(ROWS * n, 0, (int)rnd(0, 15));
    float *r = x.p;
    for (int k = 0; k < 3; k++) r[rnd(0, n - 1)] = k == 1 ? -NAN : NAN; /* row 0 */
    r += n;
    r[rnd(0, n - 1)] = INFINITY;                                      /* row 1 */
    r[rnd(0, n - 1)] = -INFINITY;
    r += n;
    for (int64_t i = 0; i < n; i++)                                    /* row 2 */
      r[i] = rnd(0, 3) == 0 ? (rnd(0, 1) ? -0.0f : 0.0f) : rnd_float() * 0x1p-140f;
    r += n;
    for (int64_t i = 0; i < n; i++) r[i] = -0.0f;                     /* row 3 */
    r += n;
    for (int64_t i = 0; i < n; i++) /* row 4 */
      r[i] = (rnd(0, 1) ? 3.0e38f : -3.0e38f) * (0.75f + 0.25f * rnd_float());
    hmx_tensor tx = hmx_tensor_2d(x.p, HMX_F32, ROWS, n), ty = hmx_tensor_2d(y.p, HMX_F32, ROWS, n);
    case_splits = 1; /* ROWS rows */
    for (int s = 0; s < 2; s++) {
      double p[2] = {s ? (double)rnd_float() : 1.0, 0};
      char desc[112];
      snprintf(desc, sizeof desc, "%s specials n=%lld scale=%g%s%s", op->name, (long long)n, p[0],
               profile ? " tuning=" : "", profile ? profile : "");
      hmx_tensor *t[] = {&tx, &ty};
      check_case(op, t, p, 1, desc);
      check_in_place(op, &tx, p, desc, 1);
    }
    CHECK(guards_intact(&y) && guards_intact(&x), "%s specials n=%lld: %s wrote outside the rows",
          op->name, (long long)n, be_under_test->name);
    free(x.base);
    free(y.base);
  }
}

/* The x86 kernels order their work by a tuning profile (src/tuning.h):
 * every profile must give ref's bits, whichever CPU runs the test. */
static void diff_fwht(const hmx_opspec *op, int is_mix) {
  int64_t left = FWHT_DRAW_COST;
  if (!hmx_x86_tuning_read_by(be_under_test->name)) {
    diff_fwht_sizes(op, is_mix, NULL, &left);
    return;
  }
  for (int i = 0; i < hmx_x86_tuning_count(); i++) {
    hmx_x86_tuning_force(hmx_x86_tuning_at(i));
    diff_fwht_sizes(op, is_mix, hmx_x86_tuning_at(i)->name, &left);
  }
  hmx_x86_tuning_force(NULL);
}

static void diff_gemm(const hmx_opspec *op, int cases) {
  for (int c = 0; c < cases; c++) {
    /* m = 1 often: the decode GEMV paths */
    int64_t m = rnd(0, 2) ? rnd(1, 70) : 1, n = rnd(1, 70), k = rnd(1, 300);
    int tb = (int)rnd(0, 1), bias = (int)rnd(0, 1);
    if (c == 1) { /* decode GEMV, B [N, K] with rows 4 KiB apart (the avx512 read order) */
      m = 1, k = 1024, tb = 1;
      n = rnd(17, 70);
    }
    if (c == 2) { /* prefill, column tiles that split evenly (x86: one column range per
                   * thread; several N and K blocks, ragged edges) */
      m = rnd(128 * many_threads, 128 * many_threads + 44), n = rnd(513, 600), k = rnd(257, 520);
    }
    if (c == 3) { /* prefill, column tiles that do not (the x86 team path, M at least 2
                   * blocks of 64 rows per thread: 2T + 1 tiles of 32 columns on
                   * avx512, 4T + 1 of 16 on avx2, for T threads) */
      m = rnd(128 * many_threads, 128 * many_threads + 44), n = 64 * many_threads + rnd(1, 16);
      k = rnd(257, 520);
    }
    const int threads_before = many_threads;
    if (c == 4) { /* the x86 team path over several N blocks, which shares A's packed
                   * blocks across them (gemm_x86.h, gx_a_cache_floats): 5 threads, 17
                   * tiles of 32 columns on avx512 (N block 512), 33-34 of 16 on avx2
                   * (256), neither a multiple of 5; M at least 2 blocks of 64 rows
                   * (avx512; 48 on avx2) a thread; 2 K blocks */
      m = rnd(640, 700), n = rnd(513, 544), k = rnd(257, 300);
      many_threads = test_thread_max(many_threads > 5 ? many_threads : 5);
    }
    const hmx_dtype wdt = rnd_wdtype();
    buf a = make_buf(m * k, 1), bi = make_buf(n, 1), o = make_buf(m * n, 0);
    wbuf b = make_w(k * n, wdt);
    hmx_tensor ta = hmx_tensor_2d(a.p, HMX_F32, m, k);
    hmx_tensor tbm = tb ? hmx_tensor_2d(b.p, wdt, n, k) : hmx_tensor_2d(b.p, wdt, k, n);
    hmx_tensor tbi = hmx_tensor_1d(bi.p, HMX_F32, n), to = hmx_tensor_2d(o.p, HMX_F32, m, n);
    hmx_tensor *t[] = {&ta, &tbm, bias ? &tbi : NULL, &to};
    double p[1] = {tb};
    char desc[96];
    snprintf(desc, sizeof desc, "gemm m=%lld n=%lld k=%lld trans_b=%d bias=%d b=%s", (long long)m,
             (long long)n, (long long)k, tb, bias, hmx_dtype_name(wdt));
    case_splits = m >= 128 && n >= 64; /* several tiles of rows and of columns */
    check_case(op, t, p, 3, desc);
    many_threads = threads_before;
    free(a.base); free(b.base); free(bi.base); free(o.base);
  }
}

static void diff_norm(const hmx_opspec *op, int layer, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t rows = rnd(1, 6), n = c < 3 ? rnd(1, 40) : rnd(1, 5000);
    int bias = layer && rnd(0, 1);
    buf x = make_buf(rows * n, 1), w = make_buf(n, 1), b = make_buf(n, 1), y = make_buf(rows * n, 0);
    hmx_tensor tx = hmx_tensor_2d(x.p, HMX_F32, rows, n), tw = hmx_tensor_1d(w.p, HMX_F32, n);
    hmx_tensor tb = hmx_tensor_1d(b.p, HMX_F32, n), ty = hmx_tensor_2d(y.p, HMX_F32, rows, n);
    double p[1] = {rnd(0, 1) ? 1e-5 : 0.0};
    char desc[96];
    snprintf(desc, sizeof desc, "%s rows=%lld n=%lld", op->name, (long long)rows, (long long)n);
    case_splits = rows >= 2;
    if (layer) {
      hmx_tensor *t[] = {&tx, &tw, bias ? &tb : NULL, &ty};
      check_case(op, t, p, 3, desc);
    } else {
      hmx_tensor *t[] = {&tx, &tw, &ty};
      check_case(op, t, p, 2, desc);
    }
    free(x.base); free(w.base); free(b.base); free(y.base);
  }
}

static void diff_rope(const hmx_opspec *op, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t tt = rnd(1, 9), h = rnd(1, 4), d = 2 * rnd(1, 80), rot = 2 * rnd(1, d / 2);
    buf x = make_buf(tt * h * d, 1), y = make_buf(tt * h * d, 0);
    int32_t *pos = malloc((size_t)tt * sizeof *pos);
    for (int64_t i = 0; i < tt; i++) pos[i] = (int32_t)rnd(0, 200000);
    hmx_tensor tx = hmx_tensor_3d(x.p, HMX_F32, tt, h, d), ty = hmx_tensor_3d(y.p, HMX_F32, tt, h, d);
    hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, tt);
    hmx_tensor *t[] = {&tx, &tp, &ty};
    double p[3] = {rnd(0, 1) ? 10000.0 : 500000.0, (double)rot, (double)rnd(0, 1)};
    char desc[96];
    snprintf(desc, sizeof desc, "rope T=%lld H=%lld D=%lld rot=%lld style=%d", (long long)tt,
             (long long)h, (long long)d, (long long)rot, (int)p[2]);
    case_splits = tt * h >= 2; /* (token, head) rows */
    check_case(op, t, p, 2, desc);
    free(x.base); free(y.base); free(pos);
  }
}

/* A value no output may see, stored as dt: NaN, +-inf, or a huge finite. */
static void put_poison(void *p, int64_t i, hmx_dtype dt, int which) {
  static const float f32[4] = {NAN, INFINITY, -INFINITY, 3e38f};
  static const uint16_t bf16[4] = {0x7FC0, 0x7F80, 0xFF80, 0x7F7F};
  static const uint16_t f16[4] = {0x7E00, 0x7C00, 0xFC00, 0x7BFF};
  if (dt == HMX_F32) ((float *)p)[i] = f32[which % 4];
  else ((uint16_t *)p)[i] = (dt == HMX_BF16 ? bf16 : f16)[which % 4];
}

/* The case of diff_attention with K and V in the KV cache's layout
 * (hmx_attention_kb16, src/attention_kb16.h: K blocked, V head by head): on
 * the backend under test (in place where it takes the layout,
 * HMX_KB16_ATTENTION) with 1 and 2 threads and on ref (copied back to
 * rows), each bit for bit against `want`, ref's row-major output. The
 * unused positions skv .. 16*kblocks-1 of K and V are NaN, +-inf and huge
 * values, and the buffers start one element past a 64-byte boundary. */
static void check_kb16(const hmx_tensor *tq, const hmx_tensor *tk, const hmx_tensor *tv,
                       const double *p, const float *want, const char *desc) {
  const int64_t b = tk->shape[0], skv = tk->shape[1], hkv = tk->shape[2], d = tk->shape[3];
  const int64_t kblocks = (skv + 63) / 64 * 4 + 4 * rnd(0, 1);
  const hmx_dtype dt = tk->dtype;
  const size_t es = dt == HMX_F32 ? 4 : 2, n = (size_t)(b * hkv * kblocks * 16 * d);
  char *base = malloc((n + 64) * es), *blk = base + ((64 - ((uintptr_t)base % 64)) % 64) + es;
  char *vbase = malloc((n + 64) * es), *run = vbase + ((64 - ((uintptr_t)vbase % 64)) % 64) + es;
  for (size_t i = 0; i < n; i++) {
    put_poison(blk, (int64_t)i, dt, (int)(i % 7));
    put_poison(run, (int64_t)i, dt, (int)(i % 5));
  }
  for (int64_t bb = 0; bb < b; bb++)
    for (int64_t j = 0; j < skv; j++)
      for (int64_t g = 0; g < hkv; g++)
        for (int64_t e = 0; e < d; e++) {
          const size_t row = (size_t)(((bb * skv + j) * hkv + g) * d + e) * es;
          memcpy(blk + (size_t)((((bb * hkv + g) * kblocks + j / 16) * d + e) * 16 + j % 16) * es,
                 (const char *)tk->data + row, es);
          memcpy(run + (size_t)(((bb * hkv + g) * 16 * kblocks + j) * d + e) * es,
                 (const char *)tv->data + row, es);
        }
  hmx_tensor kb = *tk, vh = *tv;
  kb.data = blk;
  vh.data = run;
  const int64_t no = hmx_tensor_numel(tq);
  float *got = malloc((size_t)(no ? no : 1) * sizeof(float));
  hmx_tensor to = hmx_tensor_4d(got, HMX_F32, tq->shape[0], tq->shape[1], tq->shape[2], d);
  hmx_attention_params ap = {(int)p[0], (int64_t)p[1], (float)p[2]};
  const hmx_backend *bes[] = {be_under_test, hmx_backend_find("ref")};
  for (int i = 0; i < 2; i++)
    for (int threads = 1; threads <= (i ? 1 : many_threads); threads = next_threads(threads)) {
      memset(got, 0xAB, (size_t)no * sizeof(float));
      hmx_context ctx = {bes[i], threads, 0, HMX_TIER_DEFAULT};
      hmx_status s = hmx_attention_kb16(&ctx, tq, &kb, &vh, &ap, &to, kblocks);
      CHECK(s == HMX_OK, "%s, blocked K: %s failed: %s", desc, bes[i]->name, hmx_last_error());
      CHECK(s != HMX_OK || memcmp(got, want, (size_t)no * sizeof(float)) == 0,
            "%s, blocked K (%lld blocks): %s (%d thread%s) differs from ref's row-major output",
            desc, (long long)kblocks, bes[i]->name, threads, threads > 1 ? "s" : "");
    }
  /* blocks that are not a multiple of 4, or too few for the keys */
  hmx_context ctx = {be_under_test, 1, 0, HMX_TIER_DEFAULT};
  CHECK(hmx_attention_kb16(&ctx, tq, &kb, &vh, &ap, &to, kblocks - 1) == HMX_ERR_INVALID_ARGUMENT,
        "%s: %lld key blocks accepted", desc, (long long)(kblocks - 1));
  CHECK(hmx_attention_kb16(&ctx, tq, &kb, &vh, &ap, &to, (skv - 1) / 64 * 4) ==
            HMX_ERR_INVALID_ARGUMENT,
        "%s: %lld key blocks accepted for %lld keys", desc, (long long)((skv - 1) / 64 * 4),
        (long long)skv);
  free(got);
  free(base);
  free(vbase);
}

/* K and V in a random dtype: a 16-bit KV cache goes in place to the
 * backends that take it (HMX_W16_ATTENTION), staged to ref. Each case also
 * with K in the KV cache's blocked layout (check_kb16). */
static void diff_attention(const hmx_opspec *op, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t b = rnd(1, 2), hkv = rnd(1, 3), hq = hkv * rnd(1, 4), d = rnd(1, 130);
    int causal = (int)rnd(0, 1);
    int64_t sq = rnd(1, 20), skv = sq + rnd(0, 40);
    if (c == 0) sq = 1; /* decode */
    if (c == 1) { sq = 1; skv = rnd(130, 300); causal = 1; } /* decode over several key blocks */
    if (c == 2 || c == 3) { /* decode without grouped heads: items two at a time, an odd one */
      b = 2;
      hkv = hq = c == 2 ? 3 : 4;
      sq = 1;
      skv = rnd(1, 200);
    }
    const hmx_dtype kvdt = rnd_wdtype();
    buf q = make_buf(b * sq * hq * d, 1), o = make_buf(b * sq * hq * d, 0);
    wbuf k = make_w(b * skv * hkv * d, kvdt), v = make_w(b * skv * hkv * d, kvdt);
    hmx_tensor tq = hmx_tensor_4d(q.p, HMX_F32, b, sq, hq, d), tk = hmx_tensor_4d(k.p, kvdt, b, skv, hkv, d);
    hmx_tensor tv = hmx_tensor_4d(v.p, kvdt, b, skv, hkv, d), to = hmx_tensor_4d(o.p, HMX_F32, b, sq, hq, d);
    hmx_tensor *t[] = {&tq, &tk, &tv, &to};
    double p[3] = {causal, causal && rnd(0, 1) ? (double)rnd(0, skv - sq) : -1.0, 0.0};
    char desc[160];
    snprintf(desc, sizeof desc, "attention B=%lld Sq=%lld Skv=%lld Hq=%lld Hkv=%lld D=%lld causal=%d "
             "q_offset=%g kv=%s", (long long)b, (long long)sq, (long long)skv, (long long)hq,
             (long long)hkv, (long long)d, causal, p[1], hmx_dtype_name(kvdt));
    case_splits = b * hkv >= 2; /* (batch, KV head) pairs, each with its query rows */
    check_case(op, t, p, 3, desc);
    /* ref's output of the case, for the blocked K */
    hmx_context rc = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
    hmx_attention_params ap = {causal, (int64_t)p[1], (float)p[2]};
    CHECK(hmx_attention(&rc, &tq, &tk, &tv, &ap, &to) == HMX_OK, "%s: ref failed", desc);
    check_kb16(&tq, &tk, &tv, p, o.p, desc);
    free(q.base); free(k.base); free(v.base); free(o.base);
  }
}

static void diff_swiglu(const hmx_opspec *op, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t tt = rnd(1, 5), d = rnd(1, 90), h = rnd(1, 100), dout = rnd(1, 50);
    if (c < 3) { /* across the x86 kernel's blocks of 64 tokens and 512 hidden units
                  * (simd/x86/swiglu_x86.h, XS_TOKENS, XS_UNITS); small d and d_out */
      tt = rnd(60, 140), h = rnd(500, 1100), d = rnd(1, 24), dout = rnd(1, 24);
    }
    const hmx_dtype wdt = rnd_wdtype();
    buf x = make_buf(tt * d, 1), y = make_buf(tt * dout, 0);
    wbuf w1 = make_w(d * h, wdt), w3 = make_w(d * h, wdt), w2 = make_w(h * dout, wdt);
    hmx_tensor tx = hmx_tensor_2d(x.p, HMX_F32, tt, d), t1 = hmx_tensor_2d(w1.p, wdt, d, h);
    hmx_tensor t3 = hmx_tensor_2d(w3.p, wdt, d, h), t2 = hmx_tensor_2d(w2.p, wdt, h, dout);
    hmx_tensor ty = hmx_tensor_2d(y.p, HMX_F32, tt, dout);
    hmx_tensor *t[] = {&tx, &t1, &t3, &t2, &ty};
    double p[1] = {(double)rnd(0, h)};
    char desc[96];
    snprintf(desc, sizeof desc, "swiglu T=%lld d=%lld h=%lld d_out=%lld block=%g w=%s",
             (long long)tt, (long long)d, (long long)h, (long long)dout, p[0],
             hmx_dtype_name(wdt));
    case_splits = tt >= 60; /* tiles of tokens and of hidden units */
    check_case(op, t, p, 4, desc);
    free(x.base); free(w1.base); free(w3.base); free(w2.base); free(y.base);
  }
}

static void diff_strassen(const hmx_opspec *op, int cases) {
  for (int c = 0; c < cases; c++) {
    /* small cutoffs: several recursion levels and odd (padded) halves */
    int64_t m = rnd(1, 70), k = rnd(1, 70), n = rnd(1, 70), cutoff = rnd(1, 12);
    if (c == 0) m = 1;
    if (c == 1) { m = rnd(120, 160); k = rnd(120, 160); n = rnd(120, 160); cutoff = rnd(8, 40); }
    buf a = make_buf(m * k, 1), b = make_buf(k * n, 1), o = make_buf(m * n, 0);
    hmx_tensor ta = hmx_tensor_2d(a.p, HMX_F32, m, k), tb = hmx_tensor_2d(b.p, HMX_F32, k, n);
    hmx_tensor to = hmx_tensor_2d(o.p, HMX_F32, m, n);
    hmx_tensor *t[] = {&ta, &tb, &to};
    double p[1] = {(double)cutoff};
    char desc[96];
    snprintf(desc, sizeof desc, "strassen m=%lld k=%lld n=%lld cutoff=%lld", (long long)m,
             (long long)k, (long long)n, (long long)cutoff);
    case_splits = m > cutoff && k > cutoff && n > cutoff; /* the seven top-level products */
    check_case(op, t, p, 2, desc);
    free(a.base); free(b.base); free(o.base);
  }
}

/* mhffn (flash = 0) and flashmhf (flash = 1) on random small shapes; one
 * case has more tokens than a chunk of the composed kernels (256). */
static void diff_mhf(const hmx_opspec *op, int flash, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t tt = c == 0 ? rnd(257, 300) : rnd(1, 6), d = rnd(1, 40), h = rnd(1, 4);
    int64_t dh = rnd(1, 24), f = rnd(1, 40), e = rnd(1, 4), dout = rnd(1, 30);
    if (c == 0) { d = rnd(1, 8); dh = rnd(1, 6); f = rnd(1, 10); }
    buf x = make_buf(tt * d, 1), win = make_buf(d * h * dh, 1), wout = make_buf(h * dh * dout, 1);
    buf y = make_buf(tt * dout, 0);
    int64_t n1 = flash ? h * dh * e : h * dh * f;    /* w1 / gate */
    int64_t n2 = flash ? h * e * dh * f : h * dh * f; /* w3 / wk, wu, wv */
    buf w1 = make_buf(n1, 1), w3 = make_buf(n2, 1), w2 = make_buf(n2, 1), w4 = make_buf(n2, 1);
    hmx_tensor tx = hmx_tensor_2d(x.p, HMX_F32, tt, d), tin = hmx_tensor_2d(win.p, HMX_F32, d, h * dh);
    hmx_tensor tout = hmx_tensor_2d(wout.p, HMX_F32, h * dh, dout);
    hmx_tensor ty = hmx_tensor_2d(y.p, HMX_F32, tt, dout);
    char desc[128];
    case_splits = h >= 2; /* heads */
    if (flash) {
      hmx_tensor tg = hmx_tensor_3d(w1.p, HMX_F32, h, dh, e);
      hmx_tensor tk = hmx_tensor_4d(w3.p, HMX_F32, h, e, dh, f);
      hmx_tensor tu = hmx_tensor_4d(w2.p, HMX_F32, h, e, dh, f);
      hmx_tensor tv = hmx_tensor_4d(w4.p, HMX_F32, h, e, f, dh);
      hmx_tensor *t[] = {&tx, &tin, &tg, &tk, &tu, &tv, &tout, &ty};
      double p[1] = {(double)rnd(0, f)};
      snprintf(desc, sizeof desc, "flashmhf T=%lld d=%lld H=%lld dh=%lld E=%lld de=%lld d_out=%lld "
               "block=%g", (long long)tt, (long long)d, (long long)h, (long long)dh, (long long)e,
               (long long)f, (long long)dout, p[0]);
      check_case(op, t, p, 7, desc);
    } else {
      hmx_tensor t1 = hmx_tensor_3d(w1.p, HMX_F32, h, dh, f);
      hmx_tensor t3 = hmx_tensor_3d(w3.p, HMX_F32, h, dh, f);
      hmx_tensor t2 = hmx_tensor_3d(w2.p, HMX_F32, h, f, dh);
      hmx_tensor *t[] = {&tx, &tin, &t1, &t3, &t2, &tout, &ty};
      snprintf(desc, sizeof desc, "mhffn T=%lld d=%lld H=%lld dh=%lld f=%lld d_out=%lld",
               (long long)tt, (long long)d, (long long)h, (long long)dh, (long long)f,
               (long long)dout);
      check_case(op, t, NULL, 6, desc);
    }
    free(x.base); free(win.base); free(wout.base); free(y.base);
    free(w1.base); free(w3.base); free(w2.base); free(w4.base);
  }
}

/* linformer (sel = 0) and the selecting sketches: levattention (1), lewis
 * (2), priority (3); the kept keys are compared too. */
static void diff_sketch(const hmx_opspec *op, int sel, int cases) {
  for (int c = 0; c < cases; c++) {
    int64_t b = rnd(1, 2), hkv = rnd(1, 3), hq = hkv * rnd(1, 3), d = rnd(1, 40);
    int64_t s = rnd(1, 9), n = rnd(1, 40), kk = sel ? rnd(1, n) : rnd(1, 45);
    buf q = make_buf(b * s * hq * d, 1), k = make_buf(b * n * hkv * d, 1);
    buf v = make_buf(b * n * hkv * d, 1), o = make_buf(b * s * hq * d, 0);
    buf e = make_buf(kk * n, 1), f = make_buf(kk * n, 1);
    int32_t *idx = malloc((size_t)(b * hkv * kk) * sizeof *idx);
    if (sel == 3 && c % 4 == 1) /* a zero key: rank h / 0 = inf */
      for (int64_t a = 0; a < d; a++) k.p[a] = 0.0f;
    hmx_tensor tq = hmx_tensor_4d(q.p, HMX_F32, b, s, hq, d), tk = hmx_tensor_4d(k.p, HMX_F32, b, n, hkv, d);
    hmx_tensor tv = hmx_tensor_4d(v.p, HMX_F32, b, n, hkv, d), to = hmx_tensor_4d(o.p, HMX_F32, b, s, hq, d);
    hmx_tensor te = hmx_tensor_2d(e.p, HMX_F32, kk, n), tf = hmx_tensor_2d(f.p, HMX_F32, kk, n);
    hmx_tensor ti = hmx_tensor_3d(idx, HMX_I32, b, hkv, kk);
    double scale = rnd(0, 1) ? 0.0 : 0.05 + 0.5 * (rnd_float() + 1.0);
    char desc[160];
    snprintf(desc, sizeof desc, "%s B=%lld S=%lld N=%lld Hq=%lld Hkv=%lld D=%lld k=%lld scale=%g",
             op->name, (long long)b, (long long)s, (long long)n, (long long)hq, (long long)hkv,
             (long long)d, (long long)kk, scale);
    case_splits = b * hkv >= 2; /* (batch, KV head) pairs */
    if (sel == 0) {
      hmx_tensor *t[] = {&tq, &tk, &tv, &te, &tf, &to};
      double p[1] = {scale};
      check_case(op, t, p, 5, desc);
    } else {
      hmx_tensor *t[] = {&tq, &tk, &tv, &to, &ti};
      double lambda = rnd(0, 1) ? 1e-3 : 0.5;
      double p[4] = {(double)kk, scale, sel == 3 ? (double)rnd(0, 1000) : lambda, (double)rnd(1, 4)};
      also_out = &ti;
      also_bytes = (size_t)(b * hkv * kk) * sizeof *idx;
      check_case(op, t, p, 3, desc);
      also_out = NULL;
    }
    free(q.base); free(k.base); free(v.base); free(o.base); free(e.base); free(f.base); free(idx);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_differential BACKEND [cases-per-op]\n");
    return 2;
  }
  be_under_test = hmx_backend_find(argv[1]);
  if (!be_under_test) {
    fprintf(stderr, "test_differential: unknown backend %s\n", argv[1]);
    return 1;
  }
  if (!hmx_backend_available(be_under_test)) {
    printf("test_differential: backend %s cannot run on this machine: skipped\n", argv[1]);
    return 77;
  }
  int cases = argc > 2 ? atoi(argv[2]) : 20;
  const char *seed = getenv("HMX_TEST_SEED");
  unsigned long long seed_n = 0;
  if (seed) {
    char *end;
    seed_n = strtoull(seed, &end, 10);
    if (!*seed || *end) {
      fprintf(stderr, "test_differential: HMX_TEST_SEED=%s is not a number\n", seed);
      return 2;
    }
    rng_state ^= seed_n * 0x9E3779B97F4A7C15ull;
  }
  /* first, so that a failure's shapes can be drawn again */
  printf("test_differential %s: seed %llu (%s)\n", be_under_test->name, seed_n,
         seed ? "HMX_TEST_SEED" : "the default; HMX_TEST_SEED=n for others");
  const char *th = getenv("HMX_TEST_THREADS");
  if (th && atoi(th) >= 2) many_threads = atoi(th);
  many_threads = test_thread_max(many_threads);
  /* Whether each op must show a run on many_threads that had 2 threads or
   * more: not where no run can (built without OpenMP: test_thread_max said
   * so; OMP_THREAD_LIMIT below 2), nor on cuda, whose threads argument does
   * not split its work over CPU threads. */
  int check_teams = many_threads >= 2 && strcmp(be_under_test->name, "cuda") != 0;
  const char *limit = getenv("OMP_THREAD_LIMIT");
  if (check_teams && limit && atoi(limit) < 2) {
    printf("threads: OMP_THREAD_LIMIT=%s: every team is one thread, so the comparisons of 1 with "
           "%d threads compare one thread with itself: not counted as done\n", limit,
           many_threads);
    check_teams = 0;
  }
  int implemented = 0;
  for (int i = 0; i < hmx_op_count(); i++) {
    const hmx_opspec *op = hmx_op_at(i);
    if (!hmx_op_implemented(op, be_under_test)) {
      printf("  %-13s missing in %s\n", op->name, be_under_test->name);
      continue;
    }
    implemented++;
    int before = cases_run;
    op_splits = 0;
    op_team_most = 0;
    if (!strcmp(op->name, "fwht")) diff_fwht(op, 0);
    else if (!strcmp(op->name, "hadamard_mix")) diff_fwht(op, 1);
    else if (!strcmp(op->name, "gemm")) diff_gemm(op, cases);
    else if (!strcmp(op->name, "rmsnorm")) diff_norm(op, 0, cases);
    else if (!strcmp(op->name, "layernorm")) diff_norm(op, 1, cases);
    else if (!strcmp(op->name, "rope")) diff_rope(op, cases);
    else if (!strcmp(op->name, "attention")) diff_attention(op, cases);
    else if (!strcmp(op->name, "swiglu")) diff_swiglu(op, cases);
    else if (!strcmp(op->name, "strassen")) diff_strassen(op, cases);
    else if (!strcmp(op->name, "mhffn")) diff_mhf(op, 0, cases);
    else if (!strcmp(op->name, "flashmhf")) diff_mhf(op, 1, cases);
    else if (!strcmp(op->name, "linformer")) diff_sketch(op, 0, cases);
    else if (!strcmp(op->name, "levattention")) diff_sketch(op, 1, cases);
    else if (!strcmp(op->name, "lewis")) diff_sketch(op, 2, cases);
    else if (!strcmp(op->name, "priority")) diff_sketch(op, 3, cases);
    else CHECK(0, "no differential generator for op %s: add one", op->name);
    if (check_teams && op_splits)
      CHECK(op_team_most >= 2, "%s: no run of %s asked for %d threads had more than one (a "
            "thread count capped below the work? OMP_DYNAMIC, OMP_MAX_ACTIVE_LEVELS?), so its "
            "comparisons of 1 with %d threads compared one thread with itself", op->name,
            be_under_test->name, many_threads, many_threads);
    printf("  %-13s %d random cases, largest team %d\n", op->name, cases_run - before,
           op_team_most);
  }
  if (!implemented) {
    printf("test_differential: backend %s implements no op yet: skipped\n", argv[1]);
    return 77;
  }
  return check_finish("test_differential");
}
