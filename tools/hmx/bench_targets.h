/* hmx bench: issue 3's speed targets for the x86 backends, judged from the
 * measurements of one bench run (docs/BENCH.md "Targets"). Each target gets
 * the measured ratio and a verdict: met, missed by how much, or not measured
 * (and why). The judging is a pure function of the recorded results, so a
 * unit test (tests/test_bench_targets.c) checks it on made-up numbers. */
#ifndef HMX_BENCH_TARGETS_H
#define HMX_BENCH_TARGETS_H

#include <stdint.h>
#include <stdio.h>

/* One measured row of our own (not a peer's) of the bench table. */
typedef struct hmx_bench_result {
  const char *op;  /* "fwht", "gemm", "exp", or "gemm_scaling" (2 threads / 1) */
  char impl[24];   /* backend name ("avx512"), or "avx512/fast" and the like */
  int threads;     /* the threads the backends ran with */
  int64_t n;       /* fwht: row length; exp: vector lanes */
  int memory;      /* fwht: 1 = batch far larger than the caches, 0 = in L2 */
  int64_t m, k, nn;/* gemm, gemm_scaling: M, K, N */
  double gbs;      /* GB/s (minimal traffic); fwht: per element, comparable across n */
  double pct_bw;   /* % of the single-thread memcpy probe; < 0 when unknown */
  double x_peer;   /* peer time / our time; < 0 when the peer did not run;
                      gemm_scaling: oneDNN's own 2 threads / 1 in the same rounds */
  const char *peer_note; /* why it did not, when the bench knows (else NULL) */
  double peer_q1, peer_q3; /* x_peer from paired runs: the first and third quartiles of
                              the pairs' ratios (0: not paired) */
  double value;    /* gemm_scaling: median of the per-round ratios */
  double lo, hi;   /* gemm_scaling: the smallest and largest round */
  /* gemm M = 1 from memory: the same weights read cold with no arithmetic,
   * % of the copy as pct_bw (0: not measured): in address order, and in the
   * order the kernel reads them (16 rows at a time; read_bandwidth.h) */
  double pct_read_in_order, pct_read_16_rows;
  /* fwht n = 3 * 2^k (768, 1536): the per-element rate over that of the
   * lower / higher neighbouring power of two (512 / 1024 for 768), from runs
   * paired back to back with a batch of the neighbour of the same bytes
   * (0: not measured; the judge then falls back on the rows' medians) */
  double per_elem_lo, per_elem_hi;
  /* the same ratios as the kernels' vector operations an element allow them
   * at equal speed of the vector ports (0: no model for this backend) */
  double ops_lo, ops_hi;
} hmx_bench_result;

/* Why a peer's ratio may be missing (printed with "not measured"); and,
 * when not NULL, why the run's sizes cannot judge the targets at all
 * (--size small). */
typedef struct hmx_bench_notes {
  const char *ffht, *onednn, *sleef, *scaling;
  const char *not_judged;
} hmx_bench_notes;

typedef struct hmx_target_tally {
  int met, missed, unmeasured;
} hmx_target_tally;

/* The x86 fwht kernels' vector operations per vector of `lanes` floats (8:
 * avx2, 16: avx512) for a row of n = m * 2^k (simd/x86/fwht_x86.h): what
 * the bench's vector-op bound and the 768 / 1536 targets' "allow" ratios
 * count. avx512, n = 2^L: L + 4, or L + 3 without the multiply by the scale
 * (scale_mul 0: hmx_fwht at scale 1). 0 when n's blocks are shorter than a
 * vector or n is no fwht size. */
double hmx_bench_fwht_vector_ops(int64_t n, int lanes, int scale_mul);

/* The powers of two around n = 3 * 2^k that the 768 / 1536 targets compare
 * with: 2^(k+1) and 2^(k+2). */
void hmx_bench_fwht_neighbours(int64_t n, int64_t *lo, int64_t *hi);

/* Prints the targets section to `out` and returns the tally (nothing when
 * the run measured none of the targets' ops). Targets are single-thread:
 * with results of other thread counts, or notes->not_judged, it prints one
 * line saying why not and returns a zero tally.
 * With `json` and `json_first` not NULL it also appends records to the JSON
 * array the caller has open (a comma before each unless *json_first, which
 * it then clears): one per verdict, {"record": "target", "target", "case",
 * "value" (null when not measured), "goal", "unit" ("x" or "%"),
 * "verdict" ("met", "missed", "not measured"), "note" (the printed detail
 * or reason, or null), and the detail's numbers by kind: "pairs_q1",
 * "pairs_q3"; "beside_impl", "beside_pct", "read_in_order_pct",
 * "read_16_rows_pct"; "rounds_lo", "rounds_hi", "onednn"; "paired", "n_lo",
 * "vs_lo", "n_hi", "vs_hi", "allow_lo", "allow_hi" (-1: not known)}, then
 * {"record": "targets", "met", "missed", "not_measured"}, or
 * {"record": "targets", "verdict": "not judged", "note"} alone
 * (docs/BENCH.md). */
hmx_target_tally hmx_bench_targets_print(FILE *out, FILE *json, int *json_first,
                                         const hmx_bench_result *r, int nr,
                                         const hmx_bench_notes *notes);

/* s as a JSON string, quoted, with quotes, backslashes and control
 * characters escaped (NULL: ""). */
void hmx_bench_json_str(FILE *f, const char *s);

#endif
