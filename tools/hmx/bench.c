/* hmx bench: time every op on every available backend, side by side with
 * ref, with the machine's measured ceilings (an FMA-peak probe and a
 * single-thread memory-bandwidth probe) and with peers where one exists
 * (SLEEF expf if linked at build time; FFHT and oneDNN sgemm loaded with
 * dlopen from paths given on the command line), then issue 3's targets
 * judged from the rows (bench_targets.h). docs/BENCH.md describes the
 * method. Performance is never a unit test: ctest only runs smoke tests
 * (and test_bench_targets checks the verdicts on made-up numbers). */
#define _POSIX_C_SOURCE 200809L
#include "hmx.h"
#include "backend.h"
#include "canon.h"
#include "rope_tabled.h" /* hmx_rope_table_on */
#include "ref.h" /* hmx_fwht_split */
#include "cpu.h"
#include "opspec.h"
#include "bench_study.h"
#include "bench_targets.h"
#include "read_bandwidth.h" /* hmx_read_in_order, hmx_read_16_rows */
#include "gemm_quant.h"    /* hmx_gemm_quant, the G16 layout */
#include "gguf.h"          /* HMX_GGML_F32 */
#include "tuning.h"        /* the x86 profile in force, in the header */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__unix__) || defined(__APPLE__)
#define HMX_BENCH_DLOPEN 1
#include <dlfcn.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(HMX_BENCH_SLEEF)
#include <sleef.h>
#endif

/* The FMA-peak probes live in the ISA folders (simd/<isa>/rowops.c, linked
 * whenever that backend is: its table references the same object file).
 * Weak references keep hmx linkable where a backend is not compiled in. */
#if defined(__ELF__) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define HMX_BENCH_PROBES 1
extern double hmx_avx512_fma_peak_gflops(double seconds) __attribute__((weak));
extern double hmx_avx2_fma_peak_gflops(double seconds) __attribute__((weak));
#endif

/* ---------------------------------------------------------------- state */

#define MAX_BACKENDS 16
#define MAX_ROWS 24

typedef struct bench {
  int threads;        /* resolved (>= 1) */
  int threads_opt;    /* as given (0 = default) */
  int small;
  int reps;           /* 0 = automatic */
  int rounds;         /* --rounds: each case's rows (but ref) measured in turn this often */
  const hmx_backend *be[MAX_BACKENDS];
  int nbe;
  double peak_gflops; /* measured with `threads` threads; 0 if no probe */
  const char *peak_isa;
  double bw_gbs;      /* single-thread memcpy, read + write bytes */
  double bw_all_gbs;  /* the same copy split over --threads N > 1 (0: not measured) */
  char *copy_src, *copy_dst; /* the probe's buffers, kept for paired_ratio */
  size_t copy_bytes;         /* 0: no copy to pair with */
  double llc_bytes;          /* the last-level cache (0: unknown) */
  double mem_bytes;          /* a batch "from memory": far larger than that cache */
  int pair_bw;               /* the next report()'s %bw from runs paired with the copy */
  FILE *json;
  int json_first;
  /* peers */
  int (*ffht)(float *buf, int log_n);
  int (*sgemm)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
               const float *, int64_t, float, float *, int64_t);
  const char *ffht_note, *onednn_note;
  /* what report() records for the targets section (bench_targets.h): the
   * case of the next report() call, set by the op's bench (op NULL: none) */
  hmx_bench_result key;
  hmx_bench_result *results;
  int nresults, cap_results;
  const char *scaling_note; /* why gemm's 2-thread / 1-thread ratios did not run */
  int fwht_unit_scale; /* --fwht-scale: fwht rows at scale 1 (default) or 1 / sqrt(n) */
} bench;

typedef int (*bench_fn)(void *ctx);

#define MAX_ROUNDS 9

/* One measured implementation of one case. */
typedef struct row {
  char impl[24];
  double ms;   /* median (over rounds: the median of the rounds' medians); < 0: not run (see note) */
  double min_ms;
  int runs;
  const char *note;
  int is_peer;
  /* how to measure it again (--rounds): fn(ctx); with ctx_is_be, ctx starts
   * with a be_ctx that gets be, threads and tier first */
  bench_fn fn;
  void *ctx;
  int ctx_is_be;
  const hmx_backend *be;
  int threads;
  hmx_tier tier;
  double round_ms[MAX_ROUNDS];
  int nround;
} row;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v[0..n) and returns its median. */
static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One warm-up run, then timed runs: exactly --reps, or automatically enough
 * for ~0.25 s, at least 3 (a median of one run would be the run) and at
 * most 50. Returns the median in ms, or -1 when fn fails. */
static double measure(const bench *B, bench_fn fn, void *ctx, int *runs, double *min_ms) {
  double t0 = hmx_now();
  if (fn(ctx) != 0) return -1.0;
  double warm = hmx_now() - t0;
  int n = B->reps;
  if (n <= 0) {
    double want = B->small ? 0.02 : 0.25;
    n = (int)(want / (warm > 1e-7 ? warm : 1e-7));
    n = n < 3 ? 3 : n > 50 ? 50 : n;
  }
  double t[64];
  if (n > 64) n = 64;
  for (int i = 0; i < n; i++) {
    double a = hmx_now();
    if (fn(ctx) != 0) return -1.0;
    t[i] = hmx_now() - a;
  }
  const double med = median_of(t, n);
  *runs = n;
  *min_ms = t[0] * 1e3;
  return med * 1e3;
}

/* Where every buffer starts: this many bytes past a 64-byte line (--offset).
 * malloc's own placement depends on the heap's history (a 256 KiB block is
 * mmap'd, 16 bytes past a page, until a free raises glibc's mmap threshold,
 * and then lands anywhere on 16 bytes), and kernels that take passes over a
 * row run 10-50% faster on a line (docs/BENCH.md): the same offset in every
 * run makes runs comparable. The default, 16, is where malloc puts large
 * blocks. */
static int bench_offset = 16;

static float *alloc_f(int64_t n, uint64_t seed) {
  const size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
  char *base = aligned_alloc(64, (bytes + 64 + 63) / 64 * 64);
  if (!base) return NULL;
  float *p = (float *)(base + bench_offset);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = (float)(s >> 40) * 0x1p-23f - 1.0f; /* uniform in [-1, 1) */
  }
  return p;
}

/* Frees a buffer of alloc_f (NULL is fine). */
static void free_f(float *p) {
  if (p) free((char *)p - bench_offset);
}

/* ---------------------------------------------------------------- output */

static void print_header(void) {
  printf("%-10s %-34s %-11s %10s %5s %9s %8s %7s %6s %6s %7s\n", "op", "shape", "impl",
         "median_ms", "runs", "GFLOP/s", "GB/s", "x ref", "%peak", "%bw", "x peer");
}

/* The first member of every op's context: what the callback runs on. */
typedef struct be_ctx { const hmx_backend *be; int threads; hmx_tier tier; } be_ctx;

/* Remember how row r was measured: fn(ctx), ctx a be_ctx-led context set to
 * (be, threads, tier) first when is_be. */
static void row_how(row *r, bench_fn fn, void *ctx, int is_be, const hmx_backend *be,
                    int threads, hmx_tier tier) {
  r->fn = fn;
  r->ctx = ctx;
  r->ctx_is_be = is_be;
  r->be = be;
  r->threads = threads;
  r->tier = tier;
}

/* Sets row x's context up for another run of x->fn (row_how). */
static void row_ready(const row *x) {
  if (!x->ctx_is_be) return;
  be_ctx *c = x->ctx;
  c->be = x->be;
  c->threads = x->threads;
  c->tier = x->tier;
}

/* --rounds R > 1: every row of the case but ref is measured R - 1 more
 * times, the rows taking turns (ours, the fast tier's, the peer's, ours,
 * ...), so that a burst of noise on a shared machine hits one round of each
 * rather than one implementation; a row's time becomes the median of its
 * rounds' medians (its `x peer` and, from memory, its `%bw` come from
 * paired runs, paired_ratio). */
static void more_rounds(bench *B, row *rows, int nrows) {
  for (int i = 0; i < nrows; i++) {
    rows[i].nround = rows[i].ms > 0 ? 1 : 0;
    rows[i].round_ms[0] = rows[i].ms;
  }
  for (int r = 1; r < B->rounds; r++)
    for (int i = 0; i < nrows; i++) {
      row *x = &rows[i];
      if (x->nround != r || !x->fn || strcmp(x->impl, "ref") == 0) continue;
      row_ready(x);
      int runs = 0;
      double mn = 0, ms = measure(B, x->fn, x->ctx, &runs, &mn);
      if (ms < 0) continue; /* a failed round ends this row's rounds */
      x->round_ms[x->nround++] = ms;
      x->runs += runs;
      if (mn < x->min_ms) x->min_ms = mn;
    }
  for (int i = 0; i < nrows; i++)
    if (rows[i].nround > 1) {
      double v[MAX_ROUNDS];
      memcpy(v, rows[i].round_ms, (size_t)rows[i].nround * sizeof v[0]);
      rows[i].ms = median_of(v, rows[i].nround);
    }
}

/* One timed run of row x (seconds; < 0 when it fails). */
static double time_once(const row *x) {
  row_ready(x);
  const double t0 = hmx_now();
  if (x->fn(x->ctx) != 0) return -1.0;
  return hmx_now() - t0;
}

/* The bandwidth probe's copy as a row for paired_ratio. */
static int run_copy(void *p) {
  const bench *B = p;
  memcpy(B->copy_dst, B->copy_src, B->copy_bytes);
  return 0;
}

/* Ratios measured side by side: the median, over back-to-back pairs of runs
 * (a then b, b then a, alternately), of b's time / a's time. On a shared
 * machine the speed of a core changes from one second to the next (the VM's
 * sibling hyperthread busy or not: avx512 fwht n = 256 in L2 took 96 or 126
 * cycles a row at the FMA probe's rate, in stretches of a few seconds; Intel
 * Xeon, session 24), and a ratio of two medians taken seconds apart, or of
 * a median and the start-up probe, measured that state as much as the
 * kernels (avx512 / FFHT at n = 512: 1.88x ... 2.35x between runs of one
 * binary). Runs microseconds apart see the same state. As many pairs as fit
 * about 0.25 s at pair_s seconds a pair (5 ... MAX_PAIRS; --reps N: N, at
 * least 3). Returns -1 when a run fails; mid (may be NULL) gets the first and
 * third quartiles of the pairs' ratios, how much the pairs agreed. */
#define MAX_PAIRS 256
static double paired_ratio(const bench *B, const row *a, const row *b, double pair_s,
                           double *mid) {
  int n = B->reps > 0 ? B->reps
                      : (int)((B->small ? 0.02 : 0.25) / (pair_s > 1e-7 ? pair_s : 1e-7));
  const int lo = B->reps > 0 ? 3 : 5;
  n = n < lo ? lo : n > MAX_PAIRS ? MAX_PAIRS : n;
  double v[MAX_PAIRS];
  for (int i = 0; i < n; i++) {
    double ta, tb;
    if (i & 1) {
      tb = time_once(b);
      ta = time_once(a);
    } else {
      ta = time_once(a);
      tb = time_once(b);
    }
    if (ta < 0 || tb < 0) return -1.0;
    v[i] = tb / (ta > 1e-9 ? ta : 1e-9);
  }
  const double med = median_of(v, n); /* sorts v */
  if (mid) mid[0] = v[(n - 1) / 4], mid[1] = v[3 * (n - 1) / 4];
  return med;
}

/* Row r's rate (`bytes` a run) as % of the bandwidth probe's copy (read +
 * write bytes), the copy run beside each run (paired_ratio); -1 when a run
 * fails. */
static double paired_pct_copy(const bench *B, const row *r, double bytes) {
  row copy;
  memset(&copy, 0, sizeof copy);
  copy.fn = run_copy;
  copy.ctx = (void *)B;
  const double copy_bytes = 2.0 * (double)B->copy_bytes;
  const double x =
      paired_ratio(B, r, &copy, r->ms * 1e-3 + copy_bytes / (B->bw_gbs * 1e9), NULL);
  return x > 0 ? 100.0 * x * bytes / copy_bytes : -1.0;
}

/* Keeps one result for the targets section (dropped when out of memory:
 * that target then shows as not measured). */
static void record(bench *B, const hmx_bench_result *x) {
  if (B->nresults == B->cap_results) {
    int cap = B->cap_results ? 2 * B->cap_results : 64;
    hmx_bench_result *p = realloc(B->results, (size_t)cap * sizeof *p);
    if (!p) return;
    B->results = p;
    B->cap_results = cap;
  }
  B->results[B->nresults++] = *x;
}

/* One row of the table as a "measurement" record of the --json array
 * (docs/BENCH.md): -1 where a number does not apply; a row that did not run
 * has median_ms -1 and its reason in "note" (null otherwise); pairs_q1 /
 * pairs_q3: the paired ratios' quartiles around vs_peer (-1: not paired). */
static void json_row(bench *B, const char *op, const char *shape, const row *r, double gf,
                     double gb, double xref, double pk, double bw, double xpeer,
                     const double *peer_mid) {
  const int ran = r->ms >= 0;
  fprintf(B->json, "%s\n  {\"record\": \"measurement\", \"op\": ", B->json_first ? "" : ",");
  B->json_first = 0;
  hmx_bench_json_str(B->json, op);
  fprintf(B->json, ", \"shape\": ");
  hmx_bench_json_str(B->json, shape);
  fprintf(B->json, ", \"impl\": ");
  hmx_bench_json_str(B->json, r->impl);
  fprintf(B->json,
          ", \"peer\": %s, \"threads\": %d, \"median_ms\": %.6g, \"min_ms\": %.6g, \"runs\": %d, "
          "\"gflops\": %.6g, \"gbps\": %.6g, \"vs_ref\": %.6g, \"pct_fma_peak\": %.6g, "
          "\"pct_mem_bw\": %.6g, \"vs_peer\": %.6g, \"pairs_q1\": %.6g, \"pairs_q3\": %.6g, "
          "\"note\": ",
          r->is_peer ? "true" : "false", B->threads, ran ? r->ms : -1.0, ran ? r->min_ms : -1.0,
          ran ? r->runs : 0, gf, gb, xref, pk, bw, xpeer,
          peer_mid && peer_mid[0] > 0 ? peer_mid[0] : -1.0,
          peer_mid && peer_mid[1] > 0 ? peer_mid[1] : -1.0);
  if (ran) fprintf(B->json, "null}");
  else {
    hmx_bench_json_str(B->json, r->note ? r->note : "failed");
    fprintf(B->json, "}");
  }
}

/* Print (and record) one case: rows[0] is ref when measured. `flop` and
 * `bytes` are per run (minimal traffic: inputs read once, outputs written). */
/* The threads a row ran on: ref, the exp rows and FFHT one; oneDNN's sgemm
 * and our backends --threads. */
static int row_threads(const bench *B, const char *op, const row *r) {
  if (strcmp(r->impl, "ref") == 0 || strcmp(op, "exp") == 0) return 1;
  if (r->is_peer && strcmp(op, "gemm") != 0) return 1;
  return B->threads;
}

static void report(bench *B, const char *op, const char *shape, double flop, double bytes,
                   row *rows, int nrows) {
  double ref_ms = -1;
  const row *peer = NULL;       /* the peer's row, when it ran */
  const char *peer_note = NULL; /* a peer's row that did not run: why */
  if (B->rounds > 1) more_rounds(B, rows, nrows);
  for (int i = 0; i < nrows; i++) {
    if (strcmp(rows[i].impl, "ref") == 0) ref_ms = rows[i].ms;
    if (rows[i].is_peer && rows[i].ms > 0) peer = &rows[i];
    if (rows[i].is_peer && rows[i].ms <= 0) peer_note = rows[i].note;
  }
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    if (r->ms < 0) {
      printf("%-10s %-34s %-11s %s\n", op, shape, r->impl, r->note ? r->note : "failed");
      if (B->json) json_row(B, op, shape, r, -1, -1, -1, -1, -1, -1, NULL);
      continue;
    }
    double s = r->ms * 1e-3;
    double gf = flop > 0 ? flop / s * 1e-9 : 0, gb = bytes > 0 ? bytes / s * 1e-9 : 0;
    double xref = ref_ms > 0 ? ref_ms / r->ms : -1;
    double pk = B->peak_gflops > 0 && flop > 0 ? 100.0 * gf / B->peak_gflops : -1;
    /* %bw: of the copy on as many threads as the row ran (--threads N: the
     * N-thread copy, as %peak is of the N-thread FMA probe) */
    const double bw_ceiling = B->bw_all_gbs > 0 && row_threads(B, op, r) > 1 ? B->bw_all_gbs
                                                                               : B->bw_gbs;
    double bw = bw_ceiling > 0 && bytes > 0 ? 100.0 * gb / bw_ceiling : -1;
    const int ours = !r->is_peer && r->fn && strcmp(r->impl, "ref") != 0;
    if (bw > 0 && ours && B->pair_bw && B->copy_bytes > 0) {
      /* % of the copy's read + write rate, the copy run beside each run
       * (B->pair_bw: the cases of issue 3's bandwidth targets, fwht from
       * memory and gemm M = 1 with 16 MiB of weights) */
      const double x = paired_pct_copy(B, r, bytes);
      if (x > 0) bw = x;
    }
    double xpeer = !r->is_peer && peer ? peer->ms / r->ms : -1;
    double peer_mid[2] = {0, 0}; /* the paired ratios' quartiles (0: not paired) */
    if (xpeer > 0 && ours && peer->fn) {
      /* ours against the peer: runs in pairs (ref, in no target, keeps the
       * ratio of the medians) */
      const double x = paired_ratio(B, r, peer, s + peer->ms * 1e-3, peer_mid);
      if (x > 0) xpeer = x; /* peer_mid is set only then */
    }
    char c_pk[16] = "-", c_bw[16] = "-", c_peer[16] = "", c_gf[16] = "-", c_gb[16] = "-",
         c_ref[16] = "-";
    if (xref > 0) snprintf(c_ref, sizeof c_ref, "%.2f", xref);
    if (flop > 0) snprintf(c_gf, sizeof c_gf, "%.2f", gf);
    if (bytes > 0) snprintf(c_gb, sizeof c_gb, "%.2f", gb);
    if (pk >= 0) snprintf(c_pk, sizeof c_pk, "%.1f", pk);
    if (bw >= 0) snprintf(c_bw, sizeof c_bw, "%.0f", bw);
    if (xpeer > 0) snprintf(c_peer, sizeof c_peer, "%.2f", xpeer);
    printf("%-10s %-34s %-11s %10.4f %5d %9s %8s %7s %6s %6s %7s\n", op, shape, r->impl, r->ms,
           r->runs, c_gf, c_gb, c_ref, c_pk, c_bw, c_peer);
    if (B->key.op && !r->is_peer) {
      hmx_bench_result x = B->key;
      snprintf(x.impl, sizeof x.impl, "%s", r->impl);
      if (!x.threads) x.threads = B->threads;
      x.gbs = gb;
      x.pct_bw = bw;
      x.x_peer = xpeer;
      x.peer_q1 = peer_mid[0];
      x.peer_q3 = peer_mid[1];
      x.peer_note = xpeer > 0 ? NULL : peer_note;
      record(B, &x);
    }
    if (B->json) json_row(B, op, shape, r, gf, gb, xref, pk, bw, xpeer, peer_mid);
  }
  memset(&B->key, 0, sizeof B->key);
  B->pair_bw = 0;
  fflush(stdout);
}

/* Measure `fn` for ref and every selected backend; ctx's first member is the
 * backend pointer the callback reads. Ops a backend lacks are "missing". */
static int run_backends(bench *B, const char *opname, bench_fn fn, be_ctx *ctx, row *rows) {
  const hmx_opspec *op = hmx_op_find(opname);
  int n = 0;
  const hmx_backend *ref = hmx_backend_find("ref");
  /* ref always (the x ref column), then the selection */
  const hmx_backend *list[MAX_BACKENDS + 1];
  int nl = 0;
  list[nl++] = ref;
  for (int i = 0; i < B->nbe; i++)
    if (B->be[i] != ref) list[nl++] = B->be[i];
  for (int i = 0; i < nl; i++) {
    row *r = &rows[n++];
    memset(r, 0, sizeof *r);
    snprintf(r->impl, sizeof r->impl, "%s", hmx_backend_name(list[i]));
    r->ms = -1;
    if (op && !hmx_op_implemented(op, list[i])) {
      r->note = "missing (no kernel in this backend)";
      continue;
    }
    ctx->be = list[i];
    ctx->threads = B->threads_opt;
    ctx->tier = HMX_TIER_DEFAULT;
    row_how(r, fn, ctx, 1, list[i], B->threads_opt, HMX_TIER_DEFAULT);
    r->ms = measure(B, fn, ctx, &r->runs, &r->min_ms);
    if (r->ms < 0) r->note = hmx_last_error();
    /* the fast tier's kernel of this op, side by side (docs/NUMERICS.md
     * "Fast tier"), when the rows above run the exact tier */
    if (hmx_tier_default() == HMX_TIER_EXACT && hmx_fast_op_kernel(list[i], opname, NULL) &&
        n < MAX_ROWS - 2) {
      row *f = &rows[n++];
      memset(f, 0, sizeof *f);
      snprintf(f->impl, sizeof f->impl, "%s/fast", hmx_backend_name(list[i]));
      ctx->tier = HMX_TIER_FAST;
      row_how(f, fn, ctx, 1, list[i], B->threads_opt, HMX_TIER_FAST);
      f->ms = measure(B, fn, ctx, &f->runs, &f->min_ms);
      if (f->ms < 0) f->note = hmx_last_error();
      ctx->tier = HMX_TIER_DEFAULT;
    }
  }
  return n;
}

static row *add_peer(row *rows, int *n, const char *name) {
  row *r = &rows[(*n)++];
  memset(r, 0, sizeof *r);
  snprintf(r->impl, sizeof r->impl, "%s", name);
  r->ms = -1;
  r->is_peer = 1;
  return r;
}

/* ---------------------------------------------------------------- fwht */

typedef struct fwht_ctx {
  be_ctx b;
  float *x;
  int64_t batch, n;
  int (*ffht)(float *, int);
  int log_n;
  float scale; /* hmx_fwht's: 1 (FFHT's transform) or 1 / sqrt(n) (--fwht-scale) */
} fwht_ctx;

static int run_fwht(void *p) {
  fwht_ctx *c = p;
  hmx_context ctx = {c->b.be, c->b.threads, 0, c->b.tier};
  hmx_tensor t = hmx_tensor_2d(c->x, HMX_F32, c->batch, c->n);
  return hmx_fwht(&ctx, &t, &t, c->scale) != HMX_OK; /* in place */
}

/* The scale the fwht rows pass: 1 by default, the unnormalised transform that
 * FFHT's fht_float computes (so the peer ratio compares the same work), or
 * 1 / sqrt(n) with --fwht-scale inv-sqrt-n (one multiply an element more;
 * the hadamard_mix rows time the normalised transform in any case). */
static float fwht_scale(const bench *B, int64_t n) {
  return B->fwht_unit_scale ? 1.0f : hmx_inv_sqrt_n(n);
}

static int run_ffht(void *p) {
  fwht_ctx *c = p;
  int bad = 0;
  int nt = c->b.threads > 0 ? c->b.threads : 1;
  (void)nt;
#if defined(_OPENMP)
#pragma omp parallel for num_threads(nt) schedule(static) reduction(| : bad)
#endif
  for (int64_t r = 0; r < c->batch; r++) bad |= c->ffht(c->x + r * c->n, c->log_n) != 0;
  return bad;
}

/* scale_mul: the transform is followed by a multiply by its scale (not at scale 1) */
static void fwht_flops(int64_t n, int scale_mul, double *flop) {
  int m = 1;
  int64_t p = n;
  if (!hmx_fwht_split(n, 0, &m, &p)) m = 1, p = n; /* not a size: counted as 2^k */
  int lg = 0;
  while (((int64_t)1 << lg) < p) lg++;
  /* butterflies, m-point, scale */
  *flop = (double)n * lg + (double)n * (double)(m - 1) + (scale_mul ? (double)n : 0.0);
}

/* For avx512 rows of 2^L in L2: how close the best run came to the vector
 * ports' limit. The kernel (simd/avx512/fwht_avx512.c, simd/x86/fwht_x86.h)
 * spends per 16-float vector 7 vector operations on the strides 1 ... 8
 * inside the register (stride 1 one fma fed by two duplicating loads, each
 * of strides 2, 4, 8 a shuffle and an fma), one add or subtract per stage
 * across registers (L - 4) and, unless the scale is 1 (the kernel skips
 * it then), one multiply by the scale: (n / 16)(L + 4) per row, or (n /
 * 16)(L + 3), all on the two 512-bit ports (p0, p5 on Intel), whose rate the
 * FMA probe measures (GFLOP/s / 32 per fma). Loads and stores are not
 * counted (their ports are apart). Session 24 (Intel Xeon VM): 83-100% at
 * n = 256 ... 4096 (bench runs, and a harness with the batch 16 bytes off a
 * line or on one), 55-91% at 16384 and 65536 (their passes through the L2),
 * so in L2 up to 4096 only fewer operations could make it faster. */
static void fwht_bound_note(const bench *B, const row *rows, int nr, int64_t n, int64_t batch) {
  if ((n & (n - 1)) != 0 || n < 16 || !(B->peak_gflops > 0) || !B->peak_isa ||
      strcmp(B->peak_isa, "avx512") != 0)
    return;
  const double ops = (double)(n / 16) * hmx_bench_fwht_vector_ops(n, 16, !B->fwht_unit_scale);
  const double bound_ms = ops * (double)batch / (B->peak_gflops / 32.0 * 1e9) * 1e3;
  for (int i = 0; i < nr; i++)
    if (strcmp(rows[i].impl, "avx512") == 0 && rows[i].min_ms > 0)
      printf("%-10s %-34s avx512's best run: %.0f%% of the vector-op bound (%.0f zmm ops a "
             "row, FMA probe's rate)\n",
             "", "", 100.0 * bound_ms / rows[i].min_ms, ops);
}

/* Issue 3 asks rows of n = 3 * 2^k (768 = 12 * 64, 1536) to be no slower per
 * element than the powers of two around them (2n/3 and 4n/3). Their own
 * cases run minutes apart from the neighbours', and on a shared machine a
 * ratio of those medians measured the machine's state as much as the kernels
 * (session 43, Xeon host: avx512 768 in L2 at 0.40x 512's rate per element in
 * one run, 1.07x in another, the same code). So, as for the peers
 * (paired_ratio), each of our rows of the case is run back to back with the
 * same backend on a batch of the neighbour of the same bytes; the ratio of
 * rates per element is printed and recorded for the targets section. */
static void fwht_neighbours_paired(bench *B, row *rows, int nr, int64_t n, int64_t batch,
                                   double batch_bytes, int memory) {
  int m;
  int64_t p, nb[2];
  if (!hmx_fwht_split(n, 0, &m, &p) || m != 12) return;
  hmx_bench_fwht_neighbours(n, &nb[0], &nb[1]);
  for (int i = 0; i < nr; i++) {
    const row *r = &rows[i];
    if (r->is_peer || !r->fn || r->ms <= 0 || strcmp(r->impl, "ref") == 0) continue;
    double per[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
      int64_t b2 = (int64_t)(batch_bytes / (4.0 * (double)nb[s]));
      if (b2 < 1) b2 = 1;
      fwht_ctx c2 = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(b2 * nb[s], 2), b2, nb[s], NULL, 0,
                     fwht_scale(B, nb[s])};
      if (!c2.x) continue;
      row q;
      memset(&q, 0, sizeof q);
      row_how(&q, run_fwht, &c2, 1, r->be, r->threads, r->tier);
      const double t1 = time_once(&q); /* warm-up (pages, caches) and the pair's length */
      if (t1 > 0) {
        /* neighbour's time / ours, per element: (t_nb / (b2 nb)) / (t / (batch n)) */
        const double x = paired_ratio(B, r, &q, r->ms * 1e-3 + t1, NULL);
        if (x > 0) per[s] = x * (double)(batch * n) / (double)(b2 * nb[s]);
      }
      free_f(c2.x);
    }
    if (per[0] <= 0 || per[1] <= 0) {
      printf("%-10s %-34s %s per element: no runs paired with %lld and %lld (out of memory, or "
             "a run failed); the targets use the medians\n",
             "", "", r->impl, (long long)nb[0], (long long)nb[1]);
      continue;
    }
    /* what the kernels' operation counts allow, at equal speed of the ports */
    const int lanes = strcmp(r->impl, "avx512") == 0 ? 16 : strcmp(r->impl, "avx2") == 0 ? 8 : 0;
    const int mul = !B->fwht_unit_scale;
    const double ours = lanes ? hmx_bench_fwht_vector_ops(n, lanes, mul) : 0;
    double allow[2] = {0, 0};
    char c_allow[96] = "";
    if (ours > 0) {
      for (int s = 0; s < 2; s++) allow[s] = hmx_bench_fwht_vector_ops(nb[s], lanes, mul) / ours;
      snprintf(c_allow, sizeof c_allow, " (vector operations an element allow %.2fx / %.2fx)",
               allow[0], allow[1]);
    }
    printf("%-10s %-34s %s per element, runs paired with the same bytes of n=%lld / %lld: "
           "%.2fx / %.2fx their rate%s\n",
           "", "", r->impl, (long long)nb[0], (long long)nb[1], per[0], per[1], c_allow);
    /* the row's result, recorded by report() just before */
    for (int k = B->nresults - 1; k >= 0; k--) {
      hmx_bench_result *x = &B->results[k];
      if (x->op && strcmp(x->op, "fwht") == 0 && x->n == n && x->memory == memory &&
          strcmp(x->impl, r->impl) == 0) {
        x->per_elem_lo = per[0];
        x->per_elem_hi = per[1];
        x->ops_lo = allow[0];
        x->ops_hi = allow[1];
        break;
      }
    }
  }
  fflush(stdout);
}

static void bench_fwht(bench *B) {
  /* --size small takes the first two; 512 and 2048 last (512: one 32-register
   * chunk per row on avx512, which needed its own prefetch from memory) */
  static const int64_t sizes[] = {256, 1024, 4096, 16384, 65536, 768, 1536, 512, 2048};
  int ns = B->small ? 2 : (int)(sizeof sizes / sizeof sizes[0]);
  /* two batches: resident in L2 (~256 KiB) and far larger than the caches */
  const double bytes_l2 = B->small ? 16384 : 256 * 1024.0;
  const double bytes_mem = B->small ? 65536 : B->mem_bytes;
  for (int s = 0; s < ns; s++)
    for (int k = 0; k < 2; k++) {
      int64_t n = sizes[s];
      int64_t batch = (int64_t)((k ? bytes_mem : bytes_l2) / (4.0 * (double)n));
      if (batch < 1) batch = 1;
      fwht_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(batch * n, 1), batch, n, NULL, 0,
                    fwht_scale(B, n)};
      if (!c.x) continue;
      double flop;
      fwht_flops(n, !B->fwht_unit_scale, &flop);
      flop *= (double)batch;
      double bytes = 8.0 * (double)batch * (double)n;
      char shape[64];
      /* the shape says when the rows are not FFHT's transform (also in --json) */
      snprintf(shape, sizeof shape, "n=%lld batch=%lld (%s)%s", (long long)n, (long long)batch,
               k ? "memory" : "L2", B->fwht_unit_scale ? "" : " /sqrt(n)");
      row rows[MAX_ROWS];
      int nr = run_backends(B, "fwht", run_fwht, &c.b, rows);
      memset(&B->key, 0, sizeof B->key);
      B->key.op = "fwht";
      B->key.n = n;
      B->key.memory = k;
      if ((n & (n - 1)) == 0) {
        row *r = add_peer(rows, &nr, "ffht");
        if (!B->ffht) r->note = B->ffht_note;
        else {
          c.ffht = B->ffht;
          while (((int64_t)1 << c.log_n) < n) c.log_n++;
          c.b.threads = B->threads;
          row_how(r, run_ffht, &c, 1, NULL, B->threads, HMX_TIER_DEFAULT);
          r->ms = measure(B, run_ffht, &c, &r->runs, &r->min_ms);
          if (r->ms < 0) r->note = "fht_float returned an error";
        }
      }
      B->pair_bw = k;
      report(B, "fwht", shape, flop, bytes, rows, nr);
      if (!k) fwht_bound_note(B, rows, nr, n, batch);
      fwht_neighbours_paired(B, rows, nr, n, batch, k ? bytes_mem : bytes_l2, k);
      free_f(c.x);
    }
  /* rows whose blocks are shorter than a vector (p = n / m < 8: m = 12, 20,
   * 28 times 4, and 12 times 8, below avx512's 16), batch in L2: no target,
   * the x86 kernels' transposed path (fwht_x86.h, hx_rows_vertical) */
  static const int64_t small_p[] = {48, 80, 112, 96};
  for (int s = 0; s < (B->small ? 0 : 4); s++) {
    const int64_t n = small_p[s], batch = (int64_t)(bytes_l2 / (4.0 * (double)n));
    fwht_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(batch * n, 1), batch, n, NULL, 0,
                  fwht_scale(B, n)};
    if (!c.x) continue;
    double flop;
    fwht_flops(n, !B->fwht_unit_scale, &flop);
    char shape[64];
    snprintf(shape, sizeof shape, "n=%lld batch=%lld (L2)%s", (long long)n, (long long)batch,
             B->fwht_unit_scale ? "" : " /sqrt(n)");
    row rows[MAX_ROWS];
    int nr = run_backends(B, "fwht", run_fwht, &c.b, rows);
    report(B, "fwht", shape, flop * (double)batch, 8.0 * (double)batch * (double)n, rows, nr);
    free_f(c.x);
  }
}

/* ---------------------------------------------------------------- hadamard_mix */

typedef struct mix_ctx { be_ctx b; float *x, *al, *be, *y; int64_t batch, n; } mix_ctx;

static int run_mix(void *p) {
  mix_ctx *c = p;
  hmx_context ctx = {c->b.be, c->b.threads, 0, c->b.tier};
  hmx_tensor x = hmx_tensor_2d(c->x, HMX_F32, c->batch, c->n);
  hmx_tensor y = hmx_tensor_2d(c->y, HMX_F32, c->batch, c->n);
  hmx_tensor al = hmx_tensor_1d(c->al, HMX_F32, c->n), be = hmx_tensor_1d(c->be, HMX_F32, c->n);
  return hmx_hadamard_mix(&ctx, &x, &al, &be, &y) != HMX_OK;
}

static void bench_mix(bench *B) {
  static const int64_t sizes[] = {768, 4096};
  static const int64_t tokens[] = {1, 64};
  for (int s = 0; s < (B->small ? 1 : 2); s++)
    for (int k = 0; k < 2; k++) {
      int64_t n = sizes[s], batch = tokens[k];
      mix_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(batch * n, 2), alloc_f(n, 3), alloc_f(n, 4),
                   alloc_f(batch * n, 5), batch, n};
      if (c.x && c.al && c.be && c.y) {
        double flop;
        fwht_flops(n, 1, &flop); /* hadamard_mix: the normalised transform */
        flop = (flop + 2.0 * (double)n) * (double)batch;
        char shape[64];
        snprintf(shape, sizeof shape, "T=%lld n=%lld", (long long)batch, (long long)n);
        row rows[MAX_ROWS];
        int nr = run_backends(B, "hadamard_mix", run_mix, &c.b, rows);
        report(B, "hadamard_mix", shape, flop, 8.0 * (double)(batch * n) + 8.0 * (double)n, rows,
               nr);
      }
      free_f(c.x); free_f(c.al); free_f(c.be); free_f(c.y);
    }
}

/* ---------------------------------------------------------------- gemm */

typedef struct gemm_ctx { be_ctx b; float *a, *w, *c; int64_t m, n, k; } gemm_ctx;

static int run_gemm(void *p) {
  gemm_ctx *g = p;
  hmx_context ctx = {g->b.be, g->b.threads, 0, g->b.tier};
  hmx_tensor a = hmx_tensor_2d(g->a, HMX_F32, g->m, g->k);
  hmx_tensor w = hmx_tensor_2d(g->w, HMX_F32, g->n, g->k);
  hmx_tensor c = hmx_tensor_2d(g->c, HMX_F32, g->m, g->n);
  return hmx_gemm(&ctx, &a, &w, 1, NULL, &c) != HMX_OK;
}

/* gemm M = 1 with g's weights in the G16 layout (src/gemm_quant.h), the
 * layout hmx_model_prepare gives a model's projections for decode on a
 * backend whose exact gemm reads it in place (docs/MODEL.md "Weight
 * layout"): the same products in the same order, so the same bits. */
typedef struct gemm_g16_ctx {
  const gemm_ctx *g;
  const void *w16;
  const hmx_backend *be;
  int threads;
} gemm_g16_ctx;

static int run_gemm_g16(void *p) {
  const gemm_g16_ctx *x = p;
  const gemm_ctx *g = x->g;
  hmx_context ctx = {x->be, x->threads, 0, HMX_TIER_DEFAULT};
  hmx_tensor a = hmx_tensor_2d(g->a, HMX_F32, g->m, g->k);
  hmx_tensor c = hmx_tensor_2d(g->c, HMX_F32, g->m, g->n);
  const hmx_qmatrix w = {HMX_GGML_F32, x->w16, g->n, g->k, HMX_QLAYOUT_G16, NULL};
  return hmx_gemm_quant(&ctx, &a, &w, &c) != HMX_OK;
}

/* For M = 1: a row "<backend>/g16" per selected backend that reads G16
 * weights in place, after the rows of hmx_gemm on the [N, K] rows. ctxs has
 * MAX_BACKENDS entries; *w16 is the G16 copy (the caller frees it). */
static void add_g16_rows(bench *B, const gemm_ctx *g, gemm_g16_ctx *ctxs, void **w16, row *rows,
                         int *nr) {
  *w16 = NULL;
  if (g->m != 1 || g->n % HMX_QG) return;
  for (int i = 0; i < B->nbe && *nr < MAX_ROWS - 1; i++) {
    const hmx_backend *be = B->be[i];
    if (!hmx_backend_available(be) || !(be->weights16 & HMX_WG16_GEMM)) continue;
    if (!*w16) {
      *w16 = malloc(hmx_qlayout_g16_bytes(HMX_GGML_F32, g->n, g->k));
      if (!*w16) return;
      hmx_qlayout_to_g16(HMX_GGML_F32, g->w, g->n, g->k, *w16);
    }
    gemm_g16_ctx *x = &ctxs[i];
    x->g = g;
    x->w16 = *w16;
    x->be = be;
    x->threads = B->threads_opt;
    row *r = &rows[(*nr)++];
    memset(r, 0, sizeof *r);
    snprintf(r->impl, sizeof r->impl, "%s/g16", hmx_backend_name(be));
    row_how(r, run_gemm_g16, x, 0, be, B->threads_opt, HMX_TIER_DEFAULT);
    r->ms = measure(B, run_gemm_g16, x, &r->runs, &r->min_ms);
    if (r->ms < 0) r->note = hmx_last_error();
  }
}

static bench *g_bench; /* for the oneDNN callback */

/* oneDNN's sgemm (the peer) of g on `threads` OpenMP threads. */
static int onednn_sgemm(const gemm_ctx *g, int threads) {
#if defined(_OPENMP)
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  return g_bench->sgemm('N', 'T', g->m, g->n, g->k, 1.0f, g->a, g->k, g->w, g->k, 0.0f, g->c,
                        g->n) != 0;
}

/* the table's oneDNN row: the bench's threads */
static int run_onednn(void *p) { return onednn_sgemm(p, g_bench->threads); }

/* gemm_scaling's peer rounds: g->b.threads */
static int run_onednn_threads(void *p) { return onednn_sgemm(p, ((gemm_ctx *)p)->b.threads); }

/* The least time of `runs` calls of fn, in seconds (-1 when one fails). */
static double best_of(bench_fn fn, void *ctx, int runs) {
  double best = 1e30;
  for (int i = 0; i < runs; i++) {
    double t0 = hmx_now();
    if (fn(ctx) != 0) return -1.0;
    double dt = hmx_now() - t0;
    if (dt < best) best = dt;
  }
  return best;
}

/* One round of gemm_scaling: fn(g) on 1 thread over fn(g) on 2 (the best
 * of 5 runs each), or -1 when a run fails. */
static double two_over_one(bench_fn fn, gemm_ctx *g) {
  g->b.threads = 1;
  const double t1 = best_of(fn, g, 5);
  g->b.threads = 2;
  const double t2 = best_of(fn, g, 5);
  return t1 > 0 && t2 > 0 ? t1 / t2 : -1.0;
}

/* Issue 3's "two threads >= 1.8x one thread" for gemm (docs/BENCH.md
 * "Targets"), when the table ran one thread: the avx512 gemm at M = 64 and
 * 512 alternating 1 and 2 threads in this process, 7 rounds of the best of 5
 * runs each, recorded as the median of the rounds' ratios (one after the
 * other in separate runs, the same ratios moved by 20%). With --onednn, each
 * round also times oneDNN's sgemm on 1 and 2 threads, and the median of its
 * ratios goes beside ours (x_peer): what this machine lets a tuned gemm
 * gain from its second core in the same minutes. */
static void gemm_scaling(bench *B, const int64_t (*shapes)[3], int count) {
  const hmx_backend *be = hmx_backend_find("avx512");
  int sel = 0;
  for (int i = 0; i < B->nbe; i++) sel |= B->be[i] == be;
  B->scaling_note = "the table ran more than one thread";
  if (B->threads != 1) return;
  B->scaling_note = "avx512 not selected or not available";
  if (!be || !sel) return;
#if defined(_OPENMP)
  B->scaling_note = "fewer than 2 processors";
  if (omp_get_num_procs() < 2) return;
  B->scaling_note = "a gemm failed";
  enum { ROUNDS = 7 };
  for (int i = 0; i < count; i++) {
    const int64_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
    if (m < 64) continue;
    gemm_ctx g = {{be, 1, HMX_TIER_DEFAULT}, alloc_f(m * k, 6), alloc_f(n * k, 7),
                  alloc_f(m * n, 0), m, n, k};
    double ratio[ROUNDS], peer[ROUNDS];
    int ok = g.a && g.w && g.c && run_gemm(&g) == 0;
    int with_peer = B->sgemm != NULL;
    for (int r = 0; ok && r < ROUNDS; r++) {
      ratio[r] = two_over_one(run_gemm, &g);
      ok = ratio[r] > 0;
      if (ok && with_peer) {
        peer[r] = two_over_one(run_onednn_threads, &g);
        with_peer = peer[r] > 0;
      }
    }
#if defined(_OPENMP)
    /* the OpenMP default back where the table's oneDNN rows leave it (the
     * rounds left it at 2; later ops with the default thread count read it) */
    if (B->sgemm) omp_set_num_threads(B->threads);
#endif
    if (ok) {
      const double med = median_of(ratio, ROUNDS);
      hmx_bench_result x;
      memset(&x, 0, sizeof x);
      x.op = "gemm_scaling";
      snprintf(x.impl, sizeof x.impl, "avx512");
      x.threads = 1;
      x.m = m, x.k = k, x.nn = n;
      x.value = med;
      x.lo = ratio[0];
      x.hi = ratio[ROUNDS - 1];
      x.gbs = x.pct_bw = -1;
      x.x_peer = with_peer ? median_of(peer, ROUNDS) : -1;
      record(B, &x);
    }
    free_f(g.a); free_f(g.w); free_f(g.c);
  }
#else
  (void)shapes, (void)count;
  B->scaling_note = "built without OpenMP";
#endif
}

/* The weights of a GEMV read without arithmetic (read_bandwidth.h). */
typedef struct read_ctx {
  const float *w;
  int64_t n, k;
  int rows16; /* 1: in the kernel's order, 16 rows at a time; 0: in address order */
} read_ctx;
static volatile float read_sink; /* keeps the reads */
static int run_read(void *p) {
  const read_ctx *c = p;
  read_sink += c->rows16 ? hmx_read_16_rows(c->w, c->n, c->k) : hmx_read_in_order(c->w, c->n, c->k);
  return 0;
}

/* gemm M = 1 with weights from memory, context for its target: the same
 * weights only read, cold (each read paired with the copy, as the kernel's
 * runs are), in address order and in the order the kernel reads them, as
 * % of the copy. What the machine's memory gives one thread in that order
 * is the kernel's ceiling; the first is what a layout read in order would
 * get. Into B->key (the next report()). */
static void decode_read_context(bench *B, const gemm_ctx *g) {
  if (B->copy_bytes == 0) return;
  for (int v = 0; v < 2; v++) {
    read_ctx c = {g->w, g->n, g->k, v};
    row r;
    memset(&r, 0, sizeof r);
    r.fn = run_read;
    r.ctx = &c;
    const double s = time_once(&r);
    if (s < 0) return;
    r.ms = s * 1e3;
    const double pct = paired_pct_copy(B, &r, 4.0 * (double)(g->n * g->k));
    if (v) B->key.pct_read_16_rows = pct > 0 ? pct : 0;
    else B->key.pct_read_in_order = pct > 0 ? pct : 0;
  }
}

static void bench_gemm(bench *B) {
  /* (M, K, N): decode (M = 1) in L2 and with 16 MiB of weights; M = 64 and
   * 512 at issue 3's transformer shapes (K x N = 768 x 768, 768 x 2048,
   * 2048 x 768, 1536 x 1536) */
  static const int64_t shapes[][3] = {{1, 768, 768},     {1, 2048, 2048},   {64, 768, 768},
                                      {64, 768, 2048},   {64, 2048, 768},   {64, 1536, 1536},
                                      {512, 768, 768},   {512, 768, 2048},  {512, 2048, 768},
                                      {512, 1536, 1536}};
  const int count = B->small ? 2 : (int)(sizeof shapes / sizeof shapes[0]);
  for (int i = 0; i < count; i++) {
    /* --size small: M = 1 and 64, K = N = 64 */
    const int64_t m = B->small ? (i ? 64 : 1) : shapes[i][0];
    const int64_t k = B->small ? 64 : shapes[i][1], n = B->small ? 64 : shapes[i][2];
    gemm_ctx g = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(m * k, 6), alloc_f(n * k, 7), alloc_f(m * n, 0), m, n, k};
    if (g.a && g.w && g.c) {
      char shape[64];
      snprintf(shape, sizeof shape, "M=%lld K=%lld N=%lld trans_b", (long long)m, (long long)k,
               (long long)n);
      row rows[MAX_ROWS];
      int nr = run_backends(B, "gemm", run_gemm, &g.b, rows);
      gemm_g16_ctx g16[MAX_BACKENDS];
      void *w16;
      add_g16_rows(B, &g, g16, &w16, rows, &nr);
      row *r = add_peer(rows, &nr, "onednn");
      if (!B->sgemm) r->note = B->onednn_note;
      else {
        row_how(r, run_onednn, &g, 0, NULL, 0, HMX_TIER_DEFAULT);
        r->ms = measure(B, run_onednn, &g, &r->runs, &r->min_ms);
        if (r->ms < 0) r->note = "dnnl_sgemm returned an error";
      }
      memset(&B->key, 0, sizeof B->key);
      B->key.op = "gemm";
      B->key.m = m;
      B->key.k = k;
      B->key.nn = n;
      B->pair_bw = m == 1 && n * k * 4 >= (16 << 20);
      if (B->pair_bw) decode_read_context(B, &g);
      report(B, "gemm", shape, 2.0 * (double)m * (double)n * (double)k,
             4.0 * (double)(m * k + n * k + m * n), rows, nr);
      free(w16);
    }
    free_f(g.a); free_f(g.w); free_f(g.c);
  }
  if (!B->small) gemm_scaling(B, shapes, count);
}

/* ---------------------------------------------------------------- rmsnorm, layernorm */

typedef struct norm_ctx { be_ctx b; float *x, *w, *bias, *y; int64_t rows, n; int layer; } norm_ctx;

static int run_norm(void *p) {
  norm_ctx *c = p;
  hmx_context ctx = {c->b.be, c->b.threads, 0, c->b.tier};
  hmx_tensor x = hmx_tensor_2d(c->x, HMX_F32, c->rows, c->n);
  hmx_tensor y = hmx_tensor_2d(c->y, HMX_F32, c->rows, c->n);
  hmx_tensor w = hmx_tensor_1d(c->w, HMX_F32, c->n), b = hmx_tensor_1d(c->bias, HMX_F32, c->n);
  if (c->layer) return hmx_layernorm(&ctx, &x, &w, &b, 1e-5f, &y) != HMX_OK;
  return hmx_rmsnorm(&ctx, &x, &w, 1e-6f, &y) != HMX_OK;
}

static void bench_norm(bench *B, int layer) {
  static const int64_t sizes[] = {768, 2048, 4096};
  const char *name = layer ? "layernorm" : "rmsnorm";
  for (int s = 0; s < (B->small ? 1 : 3); s++)
    for (int k = 0; k < 2; k++) {
      int64_t n = sizes[s];
      /* 64 rows (L2), or rows far larger than the caches (memory): input and
       * output each half of B->mem_bytes (64 MiB of rows until session 24,
       * which a 300 MiB L3 held) */
      int64_t rows = k == 0 ? (B->small ? 4 : 64)
                            : (B->small ? 64 : (int64_t)(B->mem_bytes / 2.0) / (4 * n));
      norm_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(rows * n, 8), alloc_f(n, 9), alloc_f(n, 10),
                    alloc_f(rows * n, 0), rows, n, layer};
      if (c.x && c.w && c.bias && c.y) {
        char shape[64];
        snprintf(shape, sizeof shape, "rows=%lld n=%lld (%s)", (long long)rows, (long long)n,
                 k ? "memory" : "L2");
        row rows_[MAX_ROWS];
        int nr = run_backends(B, name, run_norm, &c.b, rows_);
        double e = (double)(rows * n);
        report(B, name, shape, (layer ? 7.0 : 4.0) * e, 8.0 * e + 4.0 * (layer ? 2 : 1) * n, rows_,
               nr);
      }
      free_f(c.x); free_f(c.w); free_f(c.bias); free_f(c.y);
    }
}

/* ---------------------------------------------------------------- rope */

/* hmx_rope is two steps, timed apart: the angle table of the call's
 * positions (in double, §E: the backend's SIMD mirror of it, or the scalar
 * definition on ref), and the rotation, called directly with that table. */
typedef struct rope_ctx { be_ctx b; hmx_rope_args a; const int32_t *pos; float base; } rope_ctx;

static int run_rope(void *p) {
  rope_ctx *c = p;
  c->a.threads = c->b.threads;
  return c->b.be->rope(&c->a) != HMX_OK;
}

static int run_rope_table(void *p) {
  rope_ctx *c = p;
  return hmx_rope_table_on(c->b.be, c->b.threads, c->pos, c->a.t, c->a.rot_dim, c->base,
                           (float *)c->a.cos_tab, (float *)c->a.sin_tab) != HMX_OK;
}

static void bench_rope(bench *B) {
  static const int64_t toks[] = {1, 512, 4096};
  for (int k = 0; k < (B->small ? 2 : 3); k++)
    for (int style = 0; style < 2; style++) {
      int64_t t = B->small ? (k ? 16 : 1) : toks[k], h = 32, d = 128;
      int rot = 128;
      float *x = alloc_f(t * h * d, 11), *ct = alloc_f(t * rot / 2, 0), *st = alloc_f(t * rot / 2, 0);
      int32_t *pos = malloc((size_t)t * sizeof(int32_t));
      if (x && ct && st && pos) {
        for (int64_t i = 0; i < t; i++) pos[i] = (int32_t)(1000 + i);
        hmx_rope_table(pos, t, rot, 10000.0f, ct, st);
        rope_ctx c;
        memset(&c, 0, sizeof c);
        c.a.x = x; c.a.y = x; c.a.cos_tab = ct; c.a.sin_tab = st;
        c.a.t = t; c.a.h = h; c.a.d = d; c.a.rot_dim = rot;
        c.a.style = style ? HMX_ROPE_INTERLEAVED : HMX_ROPE_HALF;
        char shape[64];
        row rows[MAX_ROWS];
        if (style == 0) { /* the table (the same for both styles) */
          c.pos = pos;
          c.base = 10000.0f;
          snprintf(shape, sizeof shape, "table T=%lld rot=%d", (long long)t, rot);
          int nr = run_backends(B, "rope", run_rope_table, &c.b, rows);
          /* no flop count (double-precision work, against a float FMA peak): GB/s of
           * the two float tables written */
          report(B, "rope", shape, 0.0, 4.0 * (double)(t * rot), rows, nr);
        }
        snprintf(shape, sizeof shape, "T=%lld H=%lld D=%lld %s", (long long)t, (long long)h,
                 (long long)d, style ? "interleaved" : "half");
        int nr = run_backends(B, "rope", run_rope, &c.b, rows);
        double e = (double)(t * h * d);
        report(B, "rope", shape, 3.0 * e, 8.0 * e + 4.0 * (double)(t * rot), rows, nr);
      }
      free_f(x); free_f(ct); free_f(st); free(pos);
    }
}

/* ---------------------------------------------------------------- attention */

typedef struct att_ctx {
  be_ctx b;
  float *q, *k, *v, *o;
  int64_t sq, skv, hq, hkv, d;
} att_ctx;

static int run_att(void *p) {
  att_ctx *c = p;
  hmx_context ctx = {c->b.be, c->b.threads, 0, c->b.tier};
  hmx_tensor q = hmx_tensor_4d(c->q, HMX_F32, 1, c->sq, c->hq, c->d);
  hmx_tensor k = hmx_tensor_4d(c->k, HMX_F32, 1, c->skv, c->hkv, c->d);
  hmx_tensor v = hmx_tensor_4d(c->v, HMX_F32, 1, c->skv, c->hkv, c->d);
  hmx_tensor o = hmx_tensor_4d(c->o, HMX_F32, 1, c->sq, c->hq, c->d);
  hmx_attention_params ap = {1, -1, 0.0f};
  return hmx_attention(&ctx, &q, &k, &v, &ap, &o) != HMX_OK;
}

static void bench_attention(bench *B) {
  /* (Sq, Skv): prefill 256 and 1024, decode over 1024 and 4096 cached keys */
  static const int64_t cfg[4][2] = {{256, 256}, {1024, 1024}, {1, 1024}, {1, 4096}};
  for (int i = 0; i < 4; i++) {
    int64_t sq = cfg[i][0], skv = cfg[i][1], hq = 12, hkv = 4, d = 64;
    if (B->small) { sq = sq > 1 ? 32 : 1; skv = 32; }
    att_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(sq * hq * d, 12), alloc_f(skv * hkv * d, 13),
                 alloc_f(skv * hkv * d, 14), alloc_f(sq * hq * d, 0), sq, skv, hq, hkv, d};
    if (c.q && c.k && c.v && c.o) {
      double keys = 0; /* causal: query i sees skv - sq + i + 1 keys */
      for (int64_t j = 0; j < sq; j++) keys += (double)(skv - sq + j + 1);
      char shape[64];
      snprintf(shape, sizeof shape, "%s Sq=%lld Skv=%lld H=%lld/%lld D=%lld",
               sq > 1 ? "prefill" : "decode", (long long)sq, (long long)skv, (long long)hq,
               (long long)hkv, (long long)d);
      row rows[MAX_ROWS];
      int nr = run_backends(B, "attention", run_att, &c.b, rows);
      report(B, "attention", shape, 4.0 * (double)hq * (double)d * keys,
             4.0 * (double)(2 * sq * hq * d + 2 * skv * hkv * d), rows, nr);
    }
    free_f(c.q); free_f(c.k); free_f(c.v); free_f(c.o);
  }
}

/* ---------------------------------------------------------------- swiglu */

typedef struct swi_ctx { be_ctx b; float *x, *w1, *w3, *w2, *y; int64_t t, d, h; } swi_ctx;

static int run_swiglu(void *p) {
  swi_ctx *c = p;
  hmx_context ctx = {c->b.be, c->b.threads, 0, c->b.tier};
  hmx_tensor x = hmx_tensor_2d(c->x, HMX_F32, c->t, c->d);
  hmx_tensor w1 = hmx_tensor_2d(c->w1, HMX_F32, c->d, c->h);
  hmx_tensor w3 = hmx_tensor_2d(c->w3, HMX_F32, c->d, c->h);
  hmx_tensor w2 = hmx_tensor_2d(c->w2, HMX_F32, c->h, c->d);
  hmx_tensor y = hmx_tensor_2d(c->y, HMX_F32, c->t, c->d);
  return hmx_swiglu(&ctx, &x, &w1, &w3, &w2, 0, &y) != HMX_OK;
}

static void bench_swiglu(bench *B) {
  static const int64_t toks[] = {1, 64};
  for (int i = 0; i < 2; i++) {
    int64_t t = toks[i], d = B->small ? 64 : 768, h = B->small ? 128 : 2048;
    swi_ctx c = {{0, 0, HMX_TIER_DEFAULT}, alloc_f(t * d, 15), alloc_f(d * h, 16), alloc_f(d * h, 17),
                 alloc_f(h * d, 18), alloc_f(t * d, 0), t, d, h};
    if (c.x && c.w1 && c.w3 && c.w2 && c.y) {
      char shape[64];
      snprintf(shape, sizeof shape, "T=%lld d=%lld h=%lld", (long long)t, (long long)d,
               (long long)h);
      row rows[MAX_ROWS];
      int nr = run_backends(B, "swiglu", run_swiglu, &c.b, rows);
      report(B, "swiglu", shape, 2.0 * (double)t * (3.0 * (double)d * (double)h),
             4.0 * (double)(3 * d * h + 2 * t * d), rows, nr);
    }
    free_f(c.x); free_f(c.w1); free_f(c.w3); free_f(c.w2); free_f(c.y);
  }
}

/* ---------------------------------------------------------------- exp (SLEEF peer) */

typedef struct exp_ctx { float *x, *y; int64_t n; } exp_ctx;

static int run_hmx_exp(void *p) {
  exp_ctx *c = p;
  for (int64_t i = 0; i < c->n; i++) c->y[i] = hmx_expf(c->x[i]);
  return 0;
}

#if defined(HMX_BENCH_SLEEF)
static int run_sleef_exp(void *p) {
  exp_ctx *c = p;
  for (int64_t i = 0; i < c->n; i++) c->y[i] = Sleef_expf_u10(c->x[i]);
  return 0;
}
#endif

#if defined(HMX_BENCH_VEXP_AVX512) || defined(HMX_BENCH_VEXP_AVX2)
/* The x86 backends' vector exp (bit-identical to hmx_expf, NUMERICS §E)
 * against SLEEF's vector expf of the same width (u10: <= 1 ulp), one thread,
 * on the CPUs that have the ISA. */
typedef void (*vexp_fn)(const float *, float *, int64_t);
typedef struct vexp_ctx { const exp_ctx *c; vexp_fn fn; } vexp_ctx;

static int run_vexp(void *p) {
  const vexp_ctx *v = p;
  v->fn(v->c->x, v->c->y, v->c->n);
  return 0;
}

#if defined(HMX_BENCH_VEXP_AVX512)
void hmx_avx512_expf_array(const float *x, float *y, int64_t n); /* simd/avx512/vexp_avx512.c */
void hmx_bench_sleef_expf16(const float *x, float *y, int64_t n); /* tools/hmx/isa/ */
#endif
#if defined(HMX_BENCH_VEXP_AVX2)
void hmx_avx2_expf_array(const float *x, float *y, int64_t n);
void hmx_bench_sleef_expf8(const float *x, float *y, int64_t n);
#endif

static void bench_vexp_isa(bench *B, const exp_ctx *c, const char *isa, int lanes, vexp_fn ours,
                           vexp_fn sleef, const char *sleef_name) {
  row rows[3];
  int nr = 0;
  /* ref: the scalar hmx_expf, the function these vectors mirror op for op,
   * timed again beside them (the x ref column) */
  row *r = &rows[nr++];
  memset(r, 0, sizeof *r);
  snprintf(r->impl, sizeof r->impl, "ref");
  row_how(r, run_hmx_exp, (void *)c, 0, NULL, 0, HMX_TIER_DEFAULT);
  r->ms = measure(B, run_hmx_exp, (void *)c, &r->runs, &r->min_ms);
  r = &rows[nr++];
  memset(r, 0, sizeof *r);
  snprintf(r->impl, sizeof r->impl, "%s", isa);
  vexp_ctx v = {c, ours}, vs = {c, sleef};
  row_how(r, run_vexp, &v, 0, NULL, 0, HMX_TIER_DEFAULT);
  r->ms = measure(B, run_vexp, &v, &r->runs, &r->min_ms);
  r = add_peer(rows, &nr, sleef_name);
  row_how(r, run_vexp, &vs, 0, NULL, 0, HMX_TIER_DEFAULT);
  r->ms = measure(B, run_vexp, &vs, &r->runs, &r->min_ms);
  char shape[64];
  snprintf(shape, sizeof shape, "n=%lld %d lanes, 1 thread", (long long)c->n, lanes);
  memset(&B->key, 0, sizeof B->key);
  B->key.op = "exp";
  B->key.n = lanes;
  B->key.threads = 1;
  report(B, "exp", shape, 0, 8.0 * (double)c->n, rows, nr);
}

static void bench_vexp(bench *B, const exp_ctx *c) {
  const hmx_cpu_features f = hmx_cpu_detect();
#if defined(HMX_BENCH_VEXP_AVX512)
  if (f.avx512)
    bench_vexp_isa(B, c, "avx512", 16, hmx_avx512_expf_array, hmx_bench_sleef_expf16,
                   "sleef16");
#endif
#if defined(HMX_BENCH_VEXP_AVX2)
  if (f.avx2_fma)
    bench_vexp_isa(B, c, "avx2", 8, hmx_avx2_expf_array, hmx_bench_sleef_expf8, "sleef8");
#endif
}
#else
static void bench_vexp(bench *B, const exp_ctx *c) { (void)B, (void)c; } /* no x86 ISA built */
#endif

static void bench_exp(bench *B) {
  int64_t n = B->small ? 4096 : 1 << 20;
  exp_ctx c = {alloc_f(n, 19), alloc_f(n, 0), n};
  if (c.x && c.y) {
    for (int64_t i = 0; i < n; i++) c.x[i] *= 80.0f;
    row rows[2];
    int nr = 0;
    row *r = &rows[nr++];
    memset(r, 0, sizeof *r);
    snprintf(r->impl, sizeof r->impl, "hmx_expf");
    row_how(r, run_hmx_exp, &c, 0, NULL, 0, HMX_TIER_DEFAULT);
    r->ms = measure(B, run_hmx_exp, &c, &r->runs, &r->min_ms);
    r = add_peer(rows, &nr, "sleef");
#if defined(HMX_BENCH_SLEEF)
    row_how(r, run_sleef_exp, &c, 0, NULL, 0, HMX_TIER_DEFAULT);
    r->ms = measure(B, run_sleef_exp, &c, &r->runs, &r->min_ms);
#else
    r->note = "skipped: SLEEF not found at build time (libsleef-dev; HMX_HAVE_SLEEF)";
#endif
    char shape[64];
    snprintf(shape, sizeof shape, "n=%lld scalar, 1 thread", (long long)n);
    memset(&B->key, 0, sizeof B->key);
    B->key.op = "exp"; /* lanes 1: no target, but the exp targets then say why not */
    B->key.n = 1;
    B->key.threads = 1;
    report(B, "exp", shape, 0, 8.0 * (double)n, rows, nr);
    bench_vexp(B, &c);
  }
  free_f(c.x); free_f(c.y);
}

/* ---------------------------------------------------------------- ceilings */

static double fma_peak_one(const char **isa, double seconds) {
#if defined(HMX_BENCH_PROBES)
  const hmx_backend *a512 = hmx_backend_find("avx512"), *a2 = hmx_backend_find("avx2");
  if (hmx_avx512_fma_peak_gflops && a512 && hmx_backend_available(a512)) {
    *isa = "avx512";
    return hmx_avx512_fma_peak_gflops(seconds);
  }
  if (hmx_avx2_fma_peak_gflops && a2 && hmx_backend_available(a2)) {
    *isa = "avx2";
    return hmx_avx2_fma_peak_gflops(seconds);
  }
#endif
  (void)seconds;
  *isa = NULL;
  return 0.0;
}

/* The size of the last-level cache in bytes, from Linux's sysfs (the largest
 * cache of cpu0 that holds data), or 0 where that is not readable
 * (macOS, other systems): batches "from memory" are then 256 MiB. Sessions
 * 19-23 ran on Intel Xeons whose L3 is 300 MiB (lscpu), where the 256 MiB
 * batch sized for a 32 MiB L3 stayed largely in the cache: fwht in place
 * "from memory" read 100-123% of a 256 MiB copy's rate, whose source and
 * destination (512 MiB) did not fit. */
static double llc_bytes(void) {
  double best = 0;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[64] = {0};
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    const int data = fgets(buf, sizeof buf, f) && strncmp(buf, "Instruction", 11) != 0;
    fclose(f);
    if (!data) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    f = fopen(path, "r");
    if (!f) continue;
    char unit = 0;
    double v = 0;
    const int got = fscanf(f, "%lf%c", &v, &unit);
    fclose(f);
    if (got < 1 || !(v > 0)) continue;
    v *= unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : 1.0;
    if (v > best) best = v;
  }
  return best;
}

static void probe_ceilings(bench *B) {
  double secs = B->small ? 0.05 : 0.3;
  double total = 0.0;
  const char *isa = NULL;
#if defined(_OPENMP)
  int nt = B->threads;
#pragma omp parallel num_threads(nt) reduction(+ : total)
  {
    const char *i2 = NULL;
    total += fma_peak_one(&i2, secs);
#pragma omp critical
    isa = i2;
  }
#else
  total = fma_peak_one(&isa, secs);
#endif
  B->peak_gflops = total;
  B->peak_isa = isa;

  /* Single-thread memcpy over a buffer far larger than the caches. */
  B->llc_bytes = llc_bytes();
  B->mem_bytes = 4.0 * B->llc_bytes > 256.0 * 1048576.0 ? 4.0 * B->llc_bytes : 256.0 * 1048576.0;
  B->mem_bytes = ceil(B->mem_bytes / 1048576.0) * 1048576.0;
  size_t bytes = B->small ? ((size_t)16 << 20) : (size_t)B->mem_bytes;
  char *src = malloc(bytes), *dst = malloc(bytes);
  B->bw_gbs = 0;
  if (src && dst) {
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    double best = 1e30;
    for (int r = 0; r < (B->small ? 2 : 5); r++) {
      double t0 = hmx_now();
      memcpy(dst, src, bytes);
      double dt = hmx_now() - t0;
      src[r] = dst[bytes - 1 - (size_t)r]; /* keep the copies observable */
      if (dt < best) best = dt;
    }
    B->bw_gbs = 2.0 * (double)bytes / best * 1e-9;
#if defined(_OPENMP)
    /* the same bytes copied by --threads N threads, each its own slice */
    const int nt = B->threads;
    if (nt > 1) {
      best = 1e30;
      for (int r = 0; r < (B->small ? 2 : 5); r++) {
        double t0 = hmx_now();
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) {
          const size_t a = bytes * (size_t)t / (size_t)nt, b = bytes * (size_t)(t + 1) / (size_t)nt;
          memcpy(dst + a, src + a, b - a);
        }
        double dt = hmx_now() - t0;
        src[r] = dst[bytes - 1 - (size_t)r];
        if (dt < best) best = dt;
      }
      B->bw_all_gbs = 2.0 * (double)bytes / best * 1e-9;
    }
#endif
    B->copy_src = src;
    B->copy_dst = dst;
    B->copy_bytes = bytes;
    return;
  }
  free(src);
  free(dst);
}

/* ---------------------------------------------------------------- peers */

static void load_peers(bench *B, const char *ffht_path, const char *onednn_path) {
  B->ffht_note = "skipped: no --ffht PATH (a libffht.so built from FALCONN-LIB/FFHT, docs/BENCH.md)";
  B->onednn_note = "skipped: no --onednn PATH (libdnnl.so, docs/BENCH.md)";
#if defined(HMX_BENCH_DLOPEN)
  static char msg1[512], msg2[512];
  if (ffht_path) {
    void *h = dlopen(ffht_path, RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "fht_float") : NULL;
    if (f) memcpy(&B->ffht, &f, sizeof f);
    else {
      snprintf(msg1, sizeof msg1, "skipped: %s: %s", ffht_path, h ? "no fht_float" : dlerror());
      B->ffht_note = msg1;
    }
  }
  if (onednn_path) {
    void *h = dlopen(onednn_path, RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "dnnl_sgemm") : NULL;
    if (f) memcpy(&B->sgemm, &f, sizeof f);
    else {
      snprintf(msg2, sizeof msg2, "skipped: %s: %s", onednn_path, h ? "no dnnl_sgemm" : dlerror());
      B->onednn_note = msg2;
    }
  }
#else
  if (ffht_path || onednn_path) B->ffht_note = B->onednn_note = "skipped: no dlopen on this platform";
#endif
}

/* ---------------------------------------------------------------- command */

static const char *const bench_ops[] = {"fwht", "hadamard_mix", "gemm", "rmsnorm", "layernorm",
                                        "rope", "attention", "swiglu", "exp"};
#define NBENCH_OPS ((int)(sizeof bench_ops / sizeof bench_ops[0]))
/* Studies (bench_study.h): run only when named. */
static const char *const bench_studies[] = {"ffn", "sketch", "strassen"};
#define NBENCH_STUDIES ((int)(sizeof bench_studies / sizeof bench_studies[0]))

static void bench_usage(FILE *out) {
  fprintf(out,
          "usage: hmx bench [OP...] [--backend B|all] [--threads N] [--size small|model]\n"
          "                 [--reps N] [--rounds R] [--offset B] [--json FILE] [--ffht PATH]\n"
          "                 [--onednn PATH] [--fwht-scale 1|inv-sqrt-n]\n\n"
          "Times each op (default: all of fwht hadamard_mix gemm rmsnorm layernorm rope\n"
          "attention swiglu exp) on ref and the selected backends (default all available):\n"
          "median of the timed runs after one warm-up, GFLOP/s and GB/s (minimal traffic),\n"
          "and ratios measured in the same run: x ref (speed-up over ref), %%peak (of the\n"
          "FMA-peak probe with N threads), %%bw (of the single-thread memcpy probe; from\n"
          "memory: of that copy run beside each run), x peer (peer time / this time, the\n"
          "median over runs of the two back to back). docs/BENCH.md describes the method.\n"
          "After the table, issue 3's single-thread targets for fwht, gemm and exp are\n"
          "judged from its rows: met, missed by how much, or not measured and why\n"
          "(docs/BENCH.md \"Targets\"; with --threads 1, gemm also alternates 1 and 2\n"
          "threads for the scaling target).\n\n"
          "Studies, run only when named (docs/BENCH.md \"Studies\"), on the selected\n"
          "backend (with --backend all: the best one):\n"
          "  ffn       flashmhf vs swiglu and mhffn at equal parameters: time, working\n"
          "            memory and peak RSS at 8192 tokens\n"
          "  sketch    linformer, levattention, lewis, priority vs exact attention: time,\n"
          "            output error, total variation of the attention rows\n"
          "  strassen  strassen vs gemm, n = 64 ... 2048: time, error, crossover\n\n"
          "  --backend B    one backend (ref is always measured too), or all\n"
          "  --threads N    threads for the backends (0 = default); ref is single-threaded\n"
          "  --size S       model (default: model-like shapes, minutes) or small (seconds)\n"
          "  --reps N       timed runs per measurement (default: automatic, ~0.25 s)\n"
          "  --rounds R     measure each case's rows (but ref) R times in turn (1..9,\n"
          "                 default 1): times are medians over the rounds\n"
          "  --offset B     every buffer starts B bytes past a 64-byte line (0..60,\n"
          "                 default 16: where malloc puts large blocks)\n"
          "  --json FILE    also write every measurement as JSON\n"
          "  --ffht PATH    FFHT shared library (fht_float) to compare fwht with\n"
          "  --onednn PATH  libdnnl.so (dnnl_sgemm) to compare gemm with\n"
          "  --fwht-scale S the fwht rows' scale: 1 (default; the unnormalised transform,\n"
          "                 as FFHT computes it) or inv-sqrt-n (the normalised one)\n");
}

int hmx_cmd_bench(int argc, char **argv) {
  hmx_args args;
  hmx_args_init(&args, argc, argv);
  bench B;
  memset(&B, 0, sizeof B);
  B.json_first = 1;
  B.rounds = 1;
  B.fwht_unit_scale = 1;
  int sel[NBENCH_OPS] = {0}, study[NBENCH_STUDIES] = {0}, any = 0, anystudy = 0, err = 0;
  int study_failed = 0;
  const char *backend = "all", *json = NULL, *size = "model", *ffht = NULL, *onednn = NULL;
  const char *v;
  while (args.i < argc) {
    const char *a = argv[args.i];
    if (hmx_is_help(a)) {
      bench_usage(stdout);
      return HMX_EXIT_OK;
    } else if (hmx_args_value(&args, "--backend", &backend, &err)) {
    } else if (hmx_args_value(&args, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads(args.cmd, v, &B.threads_opt)) return HMX_EXIT_USAGE;
    } else if (hmx_args_value(&args, "--size", &size, &err)) {
    } else if (hmx_args_value(&args, "--reps", &v, &err)) {
      if (!err) {
        char *end;
        long r = strtol(v, &end, 10);
        if (end == v || *end || r < 1 || r > 64)
          return hmx_cli_error(HMX_EXIT_USAGE, "bench: --reps '%s' is not an integer in 1..64", v);
        B.reps = (int)r;
      }
    } else if (hmx_args_value(&args, "--rounds", &v, &err)) {
      if (!err) {
        char *end;
        long r = strtol(v, &end, 10);
        if (end == v || *end || r < 1 || r > MAX_ROUNDS)
          return hmx_cli_error(HMX_EXIT_USAGE, "bench: --rounds '%s' is not an integer in 1..%d",
                               v, MAX_ROUNDS);
        B.rounds = (int)r;
      }
    } else if (hmx_args_value(&args, "--json", &json, &err)) {
    } else if (hmx_args_value(&args, "--offset", &v, &err)) {
      if (!err) {
        char *end;
        long o = strtol(v, &end, 10);
        if (end == v || *end || o < 0 || o > 60 || o % 4)
          return hmx_cli_error(HMX_EXIT_USAGE,
                               "bench: --offset '%s' is not a multiple of 4 in 0..60 (bytes past a "
                               "64-byte line)", v);
        bench_offset = (int)o;
      }
    } else if (hmx_args_value(&args, "--fwht-scale", &v, &err)) {
      if (!err) {
        if (strcmp(v, "1") == 0) B.fwht_unit_scale = 1;
        else if (strcmp(v, "inv-sqrt-n") == 0) B.fwht_unit_scale = 0;
        else
          return hmx_cli_error(HMX_EXIT_USAGE, "bench: --fwht-scale '%s' is not 1 or inv-sqrt-n",
                               v);
      }
    } else if (hmx_args_value(&args, "--ffht", &ffht, &err)) {
    } else if (hmx_args_value(&args, "--onednn", &onednn, &err)) {
    } else if (a[0] == '-' && a[1] == '-') {
      return hmx_cli_error(HMX_EXIT_USAGE, "bench: unknown option '%s' (see `hmx bench --help`)", a);
    } else {
      int found = 0;
      for (int i = 0; i < NBENCH_OPS; i++)
        if (strcmp(bench_ops[i], a) == 0) sel[i] = found = any = 1;
      for (int i = 0; i < NBENCH_STUDIES; i++)
        if (strcmp(bench_studies[i], a) == 0) study[i] = found = anystudy = 1;
      if (!found)
        return hmx_cli_error(HMX_EXIT_USAGE, "bench: unknown op '%s' (see `hmx bench --help`)", a);
      args.i++;
    }
    if (err) return HMX_EXIT_USAGE;
  }
  if (strcmp(size, "small") == 0) B.small = 1;
  else if (strcmp(size, "model") != 0)
    return hmx_cli_error(HMX_EXIT_USAGE, "bench: --size '%s' is not small or model", size);

  if (strcmp(backend, "all") == 0) {
    for (int i = 0; i < hmx_backend_count() && B.nbe < MAX_BACKENDS; i++)
      if (hmx_backend_available(hmx_backend_at(i))) B.be[B.nbe++] = hmx_backend_at(i);
  } else {
    const hmx_backend *b;
    if (hmx_parse_backend(args.cmd, backend, &b)) return HMX_EXIT_USAGE;
    if (!hmx_backend_available(b))
      return hmx_cli_unavailable("bench", b);
    B.be[B.nbe++] = b;
  }
#if defined(_OPENMP)
  B.threads = B.threads_opt > 0 ? B.threads_opt : omp_get_max_threads();
#else
  B.threads = 1;
#endif
  if (B.threads < 1) B.threads = 1;
  if (json) {
    B.json = fopen(json, "w");
    if (!B.json) return hmx_cli_error(HMX_EXIT_FAIL, "bench: cannot write '%s'", json);
    fprintf(B.json, "[");
  }
  /* The ffn study forks a child per measurement: it runs before anything
   * here starts an OpenMP thread (the ceilings' probes do), because libgomp
   * is not fork-safe (a child of a process with a thread pool can hang). */
  hmx_study S = {strcmp(backend, "all") == 0 ? hmx_backend_best() : B.be[0], B.threads_opt,
                 B.small, B.reps};
  if (study[0] && hmx_study_ffn(&S)) study_failed = 1;
  if (anystudy && !any) { /* studies only: no ceilings, no op table (--json: empty) */
    if (B.json && (fprintf(B.json, "\n]\n") < 0 || fclose(B.json) != 0))
      return hmx_cli_error(HMX_EXIT_FAIL, "bench: cannot write '%s'", json);
    if (study[1] && hmx_study_sketch(&S)) study_failed = 1;
    if (study[2] && hmx_study_strassen(&S)) study_failed = 1;
    if (study_failed) return hmx_cli_error(HMX_EXIT_FAIL, "bench: a study measurement failed (see above)");
    return HMX_EXIT_OK;
  }
  load_peers(&B, ffht, onednn);
  g_bench = &B;

  probe_ceilings(&B);
  printf("hmx bench: size %s, %d thread%s for the backends (ref: 1), reps %s, %d round%s\n", size,
         B.threads, B.threads > 1 ? "s" : "", B.reps ? "fixed" : "auto", B.rounds,
         B.rounds > 1 ? "s (each case's rows but ref in turn)" : "");
  if (B.peak_isa)
    printf("ceiling: FMA peak (%s probe, %d thread%s) %.1f GFLOP/s\n", B.peak_isa, B.threads,
           B.threads > 1 ? "s" : "", B.peak_gflops);
  else
    printf("ceiling: FMA peak: no probe for this machine (%%peak not shown)\n");
  printf("ceiling: memory bandwidth (memcpy of %.0f MiB, 1 thread, read + write) %.1f GB/s\n",
         (double)B.copy_bytes / 1048576.0, B.bw_gbs);
  if (B.bw_all_gbs > 0)
    printf("ceiling: memory bandwidth (the same copy on %d threads) %.1f GB/s: %%bw of rows run "
           "on %d threads\n", B.threads, B.bw_all_gbs, B.threads);
  if (B.small)
    printf("--size small: toy batches, none from memory\n");
  else if (B.llc_bytes > 0)
    printf("last-level cache %.0f MiB: batches from memory are %.0f MiB (4x that, at least 256)\n",
           B.llc_bytes / 1048576.0, B.mem_bytes / 1048576.0);
  else
    printf("last-level cache: unknown (no sysfs): batches from memory are 256 MiB\n");
  printf("buffers: %d bytes past a 64-byte line (--offset)\n", bench_offset);
  /* the schedule profile the x86 rows ran under: it moves their times (never their bits) */
  for (int i = 0; i < B.nbe; i++)
    if (hmx_x86_tuning_read_by(hmx_backend_name(B.be[i]))) {
      printf("x86 tuning: %s (%s; HMX_X86_TUNING overrides)\n", hmx_x86_tuning_current()->name,
             hmx_x86_tuning_source());
      break;
    }
  printf("fwht rows: scale %s (--fwht-scale)\n",
         B.fwht_unit_scale ? "1, the unnormalised transform FFHT computes"
                           : "1/sqrt(n), the normalised transform");
  printf("peers: ffht %s; onednn %s; sleef %s\n\n", B.ffht ? "loaded" : "not given",
         B.sgemm ? "loaded" : "not given",
#if defined(HMX_BENCH_SLEEF)
         "linked"
#else
         "not built in"
#endif
  );
  print_header();
  for (int i = 0; i < NBENCH_OPS; i++) {
    if ((any || anystudy) && !sel[i]) continue;
    const char *op = bench_ops[i];
    if (strcmp(op, "fwht") == 0) bench_fwht(&B);
    else if (strcmp(op, "hadamard_mix") == 0) bench_mix(&B);
    else if (strcmp(op, "gemm") == 0) bench_gemm(&B);
    else if (strcmp(op, "rmsnorm") == 0) bench_norm(&B, 0);
    else if (strcmp(op, "layernorm") == 0) bench_norm(&B, 1);
    else if (strcmp(op, "rope") == 0) bench_rope(&B);
    else if (strcmp(op, "attention") == 0) bench_attention(&B);
    else if (strcmp(op, "swiglu") == 0) bench_swiglu(&B);
    else bench_exp(&B);
  }
  hmx_bench_notes notes = {B.ffht ? NULL : B.ffht_note, B.sgemm ? NULL : B.onednn_note,
#if defined(HMX_BENCH_SLEEF)
                           "this CPU has no avx512",
#else
                           "SLEEF not found at build time (libsleef-dev; HMX_HAVE_SLEEF)",
#endif
                           B.scaling_note,
                           B.small ? "--size small measures toy sizes (the targets need --size model)"
                                   : NULL};
  hmx_bench_targets_print(stdout, B.json, &B.json_first, B.results, B.nresults, &notes);
  free(B.results);
  free(B.copy_src);
  free(B.copy_dst);
  if (study[1] && hmx_study_sketch(&S)) study_failed = 1;
  if (study[2] && hmx_study_strassen(&S)) study_failed = 1;
  if (B.json) {
    fprintf(B.json, "\n]\n");
    if (fclose(B.json) != 0) return hmx_cli_error(HMX_EXIT_FAIL, "bench: cannot write '%s'", json);
  }
  if (study_failed) return hmx_cli_error(HMX_EXIT_FAIL, "bench: a study measurement failed (see above)");
  return HMX_EXIT_OK;
}
