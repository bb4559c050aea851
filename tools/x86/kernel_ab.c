/* hmx-kernel-ab: this tree's x86 gemm and attention kernels against those of
 * another revision (tools/x86/kernel_ab.sh compiles that revision's
 * simd/<isa>/gemm.c and attention_<isa>.c with old_ entry points beside this
 * library), in one process: the two variants run in turn round by round on
 * the same buffers, the best of a few calls each, and their outputs are
 * compared with memcmp every round (a kernel change must not change a bit).
 *
 *   kernel_ab avx2|avx512 gemm ROUNDS THREADS M K N        (trans_b, f32)
 *   kernel_ab avx2|avx512 attention ROUNDS THREADS S HQ HKV SQ
 *       (causal, D = 64, f32 K/V in the KV cache's blocked layout; SQ = 1 is
 *       one decode step over S keys, SQ = S a prefill)
 *
 * Prints GFLOP/s (medians over the rounds) and new/old; exit 1 when the bits
 * differ. docs/BENCH.md, "A/B of x86 gemm and attention kernels". */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool_clock.h"

hmx_status hmx_avx2_gemm(const hmx_gemm_args *a);
hmx_status hmx_avx512_gemm(const hmx_gemm_args *a);
hmx_status old_avx2_gemm(const hmx_gemm_args *a);
hmx_status old_avx512_gemm(const hmx_gemm_args *a);
hmx_status hmx_avx2_attention(const hmx_attention_args *a);
hmx_status hmx_avx512_attention(const hmx_attention_args *a);
hmx_status old_avx2_attention(const hmx_attention_args *a);
hmx_status old_avx512_attention(const hmx_attention_args *a);

#define MAX_ROUNDS 64

/* n floats in [-0.5, 0.5), a fixed pattern (the values do not matter here). */
static float *pattern(size_t n, unsigned mul) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!p) exit(3);
  for (size_t i = 0; i < n; i++) p[i] = (float)((i * mul) % 101) / 101.0f - 0.5f;
  return p;
}

/* One variant's call: the old kernel (v = 0) or this tree's (v = 1). */
typedef struct ab_case {
  int isa512, is_gemm;
  hmx_gemm_args g;
  hmx_attention_args a;
} ab_case;

static void run_variant(const ab_case *c, int v) {
  if (c->is_gemm) {
    if (c->isa512) (v ? hmx_avx512_gemm : old_avx512_gemm)(&c->g);
    else (v ? hmx_avx2_gemm : old_avx2_gemm)(&c->g);
  } else {
    if (c->isa512) (v ? hmx_avx512_attention : old_avx512_attention)(&c->a);
    else (v ? hmx_avx2_attention : old_avx2_attention)(&c->a);
  }
}

static int usage(void) {
  fprintf(stderr, "usage: kernel_ab avx2|avx512 gemm ROUNDS THREADS M K N\n"
                  "       kernel_ab avx2|avx512 attention ROUNDS THREADS S HQ HKV SQ\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 8) return usage();
  const char *isa = argv[1], *op = argv[2];
  const int rounds = atoi(argv[3]), threads = atoi(argv[4]);
  ab_case c;
  memset(&c, 0, sizeof c);
  c.isa512 = !strcmp(isa, "avx512");
  c.is_gemm = !strcmp(op, "gemm");
  if ((!c.isa512 && strcmp(isa, "avx2")) || (!c.is_gemm && strcmp(op, "attention")) ||
      (!c.is_gemm && argc < 9) || rounds < 1 || rounds > MAX_ROUNDS || threads < 1)
    return usage();
  const hmx_backend *be = hmx_backend_find(isa);
  if (!be || !hmx_backend_available(be)) {
    printf("%s %s: not run, %s is not available on this CPU\n", op, isa, isa);
    return 0;
  }
  double flops;
  size_t nout;
  float *out;
  int calls = 3;
  if (c.is_gemm) {
    const long m = atol(argv[5]), k = atol(argv[6]), n = atol(argv[7]);
    if (m < 1 || k < 1 || n < 1) return usage();
    hmx_gemm_args *g = &c.g;
    g->a = pattern((size_t)(m * k), 37);
    g->b = pattern((size_t)(n * k), 53);
    g->c = out = pattern((size_t)(m * n), 1);
    g->m = m, g->n = n, g->k = k, g->trans_b = 1, g->threads = threads, g->wdt = HMX_F32;
    nout = (size_t)(m * n);
    flops = 2.0 * m * n * k;
    printf("gemm %s M=%ld K=%ld N=%ld trans_b, %d thread(s):", isa, m, k, n, threads);
  } else {
    const long s = atol(argv[5]), hq = atol(argv[6]), hkv = atol(argv[7]), sq = atol(argv[8]);
    const long d = 64, kblocks = (s + 15) / 16;
    if (s < 1 || hkv < 1 || hq < hkv || hq % hkv || sq < 1 || sq > s) return usage();
    hmx_attention_args *a = &c.a;
    const size_t nq = (size_t)(sq * hq * d), nkv = (size_t)(hkv * kblocks * 16 * d);
    a->q = pattern(nq, 37);
    a->k = pattern(nkv, 53);
    a->v = pattern(nkv, 29);
    a->o = out = pattern(nq, 1);
    a->b = 1, a->sq = sq, a->skv = s, a->hq = hq, a->hkv = hkv, a->d = d;
    a->causal = 1, a->q_offset = s - sq, a->scale = 0.125f, a->threads = threads;
    a->kvdt = HMX_F32, a->kblocks = kblocks;
    nout = nq;
    /* dot and P.V: 2 flops a key and element each, causal rows see on average half */
    flops = sq == 1 ? 4.0 * hq * s * d : 4.0 * hq * (double)s * s / 2 * d;
    if (sq == 1) calls = 200;
    printf("attention %s S=%ld Hq=%ld Hkv=%ld Sq=%ld D=64 causal, %d thread(s):", isa, s, hq,
           hkv, sq, threads);
  }
  float *keep = malloc(nout * sizeof(float));
  if (!keep) return 3;
  double t[2][MAX_ROUNDS];
  for (int r = 0; r < rounds; r++)
    for (int v = 0; v < 2; v++) {
      double best = 1e30;
      for (int i = 0; i < calls; i++) {
        const double t0 = hmx_tool_seconds();
        run_variant(&c, v);
        const double dt = hmx_tool_seconds() - t0;
        if (dt < best) best = dt;
      }
      t[v][r] = best;
      if (v == 0) memcpy(keep, out, nout * sizeof(float));
      else if (memcmp(keep, out, nout * sizeof(float))) {
        printf(" the outputs' bits differ (round %d)\n", r);
        return 1;
      }
    }
  for (int v = 0; v < 2; v++) qsort(t[v], (size_t)rounds, sizeof(double), hmx_tool_cmp_double);
  const double old_t = t[0][rounds / 2], new_t = t[1][rounds / 2];
  printf(" old %.1f, new %.1f GFLOP/s (medians of %d), new/old %.3f; same bits\n",
         flops / old_t * 1e-9, flops / new_t * 1e-9, rounds, old_t / new_t);
  return 0;
}
