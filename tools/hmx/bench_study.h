/* hmx bench studies: the measurements of issue 7 that are more than a time
 * per op (docs/BENCH.md "Studies"): working memory of the FFN variants,
 * accuracy and speed of the sketched attentions against exact attention,
 * and Strassen against the backend's gemm. Each study runs on one backend
 * and prints its own table; nothing here is a unit test (ctest only runs
 * the --size small smoke). */
#ifndef HMX_BENCH_STUDY_H
#define HMX_BENCH_STUDY_H

#include "hadamix.h"

#include <stdint.h>

typedef struct hmx_study {
  const hmx_backend *be; /* every op of the study runs here, no fallback */
  int threads;           /* as given (0 = backend default) */
  int small;             /* --size small: tiny shapes, seconds */
  int reps;              /* timed runs (0 = automatic) */
} hmx_study;

/* Median wall time in ms of fn(ctx) after one warm-up call (automatic
 * repetition aims at ~0.25 s, 1..15 runs); -1 when fn returns nonzero. */
double hmx_study_time_ms(const hmx_study *S, int (*fn)(void *), void *ctx);

/* n floats uniform in [-1, 1) from `seed` (the bench's generator). */
float *hmx_study_rand(int64_t n, uint64_t seed);

/* The context every study call uses: S's backend, S's threads, no fallback. */
hmx_context hmx_study_context(const hmx_study *S);

/* Resident-set probes (Linux /proc/self/status, in bytes; -1 elsewhere).
 * hmx_study_reset_peak() makes VmHWM restart from the current RSS
 * (/proc/self/clear_refs); 0 when it could. */
int64_t hmx_study_rss(void);
int64_t hmx_study_peak_rss(void);
int hmx_study_reset_peak(void);

/* Each prints its table and returns the number of measurements that failed
 * (an op error, out of memory): hmx bench then exits 1. */
int hmx_study_ffn(const hmx_study *S);
int hmx_study_sketch(const hmx_study *S);
int hmx_study_strassen(const hmx_study *S);

#endif
