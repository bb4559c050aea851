/* hmx-gemv-prefetch-ab: the x86 one-token G16 GEMV (hmx_gemm_quant, M = 1,
 * simd/x86/gemm_g16_x86.h) with its software-prefetch distance varied in one
 * process, the distances interleaved round by round, so that all of them
 * meet the same moments of a shared machine. Each variant is the current
 * tuning profile with gemv_pf_lines replaced (src/tuning.h); no bit of the
 * result depends on it (tests/test_gemm_quant.c checks every profile).
 *
 * Cases: f32 K = N = 2048 and bf16 K = 4096, N = 2048 (16 MiB each), Q8_0
 * K = N = 4096 and Q4_0 K = 8192, N = 4096 (17 / 18 MiB) cold (each call on
 * the next of 1.5 GiB of copies, so every byte comes from memory), and f32
 * K = N = 1024 (4 MiB) and bf16 K = N = 2048 (8 MiB) warm (one matrix again
 * and again). GB/s are weight bytes over time; % of the
 * copy is of a single-thread memcpy of 1200 MiB (read + write bytes, best
 * of 3, measured first), as `hmx bench` reports it.
 *
 *   hmx-gemv-prefetch-ab [--rounds R] [--threads N] [--backend avx512|avx2]
 *                        [--lines 0,8,16,32,64 | --next 0,64,256]
 *
 * Session 44 chose the intel profile's 16 lines with it
 * (docs/results/session44/). --next varies gemv_next_kib instead (the
 * prefetch of the next pass's groups, for short passes) on SmolLM2-135M's
 * one-token shapes: the FFN's gate / up (N = 1536, K = 576) and down
 * (N = 576, K = 1536) in Q4_1, the LM head (N = 49152, K = 576) in Q8_0,
 * and the gate in f32, each cold; session 52 chose the zen3 and intel
 * profiles' 64 KiB with it and with hmx-decode-next-ab
 * (docs/results/session52/). */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"
#include "gemm_quant.h" /* src/: hmx_gemm_quant, the G16 layout */
#include "gguf.h"       /* src/: HMX_GGML_* */
#include "tuning.h"     /* src/: the x86 tuning profiles */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool_clock.h"

#define MAX_LINES 8
#define MAX_ROUNDS 15

static void usage(FILE *f) {
  fprintf(f, "usage: hmx-gemv-prefetch-ab [--rounds R (1..%d, default 5)] [--threads N]\n"
             "                            [--backend avx512|avx2] [--lines L,L,... | --next "
             "KIB,KIB,... (up to %d)]\n",
          MAX_ROUNDS, MAX_LINES);
}

/* "0,8,16" into lines[]; the count, or -1 when malformed. */
static int parse_lines(const char *s, int *lines) {
  int n = 0;
  while (*s) {
    char *end;
    const long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > 4096 || n == MAX_LINES) return -1;
    lines[n++] = (int)v;
    if (*end == ',') end++;
    else if (*end) return -1;
    s = end;
  }
  return n;
}

typedef struct gemv_case {
  uint32_t type;
  int64_t n, k;
  int cold;
  const char *name;
} gemv_case;

/* A weight in [-0.05, 0.05] from element index i (a hash: no pattern the
 * caches or the prefetchers could use). */
static uint32_t hash(int64_t i) {
  return (uint32_t)((uint64_t)i * 2654435761u) ^ (uint32_t)((uint64_t)i >> 13);
}
static float weight(int64_t i) { return (float)((int)(hash(i) % 2001u) - 1000) * 5e-5f; }

/* n_el weights of `type` as GGUF stores them in rows: normal values only.
 * (Session 44's first runs filled bytes with a pattern whose f32 values
 * were down to 2^-126 and made subnormal products, which Intel's AVX2 fmas
 * take microcode assists for: avx2 read 5-6 GB/s where it computes far
 * faster. Those runs are not kept.) */
static void fill_weights(uint32_t type, unsigned char *w, int64_t n_el) {
  for (int64_t i = 0; i < n_el; i++) {
    const float v = weight(i);
    if (type == HMX_GGML_F32) {
      memcpy(w + 4 * i, &v, 4);
    } else if (type == HMX_GGML_BF16 || type == HMX_GGML_F16) {
      const uint16_t h = type == HMX_GGML_BF16 ? hmx_f32_to_bf16(v) : hmx_f32_to_f16(v);
      memcpy(w + 2 * i, &h, 2);
    }
  }
  if (type != HMX_GGML_Q8_0 && type != HMX_GGML_Q4_0 && type != HMX_GGML_Q4_1) return;
  /* blocks of 32: an f16 scale of 1/256 (Q4_1: and a min of -1/32), then
   * int8 values or nibbles */
  const int q41 = type == HMX_GGML_Q4_1, head = q41 ? 4 : 2;
  const int64_t bs = type == HMX_GGML_Q8_0 ? 34 : q41 ? 20 : 18;
  const uint16_t d = hmx_f32_to_f16(1.0f / 256), mn = hmx_f32_to_f16(-1.0f / 32);
  for (int64_t b = 0; b < n_el / 32; b++) {
    unsigned char *blk = w + b * bs;
    memcpy(blk, &d, 2);
    if (q41) memcpy(blk + 2, &mn, 2);
    for (int64_t j = head; j < bs; j++) blk[j] = (unsigned char)(hash(b * bs + j) >> 8);
  }
}

/* One case: every distance once per round, in a rotating order. */
static int run_case(const gemv_case *c, const hmx_backend *be, int threads, int rounds,
                    const hmx_x86_tuning *prof, const int *lines, int nl, const char *what,
                    double copy_gbs) {
  const size_t mb = hmx_qlayout_g16_bytes(c->type, c->n, c->k);
  const int nm = c->cold ? (int)(((size_t)1536 << 20) / mb) : 1;
  int64_t block, bytes;
  hmx_gguf_type_block(c->type, &block, &bytes);
  unsigned char *pool = malloc(mb * (size_t)nm);
  unsigned char *rows = malloc((size_t)(c->n * c->k / block * bytes));
  float *a = malloc((size_t)c->k * sizeof(float)), *y = malloc((size_t)c->n * sizeof(float));
  if (!pool || !rows || !a || !y) {
    fprintf(stderr, "hmx-gemv-prefetch-ab: out of memory for %s\n", c->name);
    free(pool); free(rows); free(a); free(y);
    return 1;
  }
  fill_weights(c->type, rows, c->n * c->k); /* the same in every copy */
  for (int i = 0; i < nm; i++) hmx_qlayout_to_g16(c->type, rows, c->n, c->k, pool + mb * (size_t)i);
  for (int64_t i = 0; i < c->k; i++) a[i] = 0.001f * (float)(i % 100);
  hmx_context ctx = {be, threads, 0, HMX_TIER_EXACT};
  hmx_tensor A = hmx_tensor_2d(a, HMX_F32, 1, c->k), C = hmx_tensor_2d(y, HMX_F32, 1, c->n);
  double gbs[MAX_LINES][MAX_ROUNDS];
  /* cold: at least 24 calls and 256 MiB a round (small matrices take
   * tens of microseconds a call) */
  const int calls = !c->cold ? 200 : mb * 24 >= ((size_t)256 << 20) ? 24
                                   : (int)(((size_t)256 << 20) / mb);
  int next = 0, err = 0;
  for (int r = 0; r < rounds && !err; r++)
    for (int i = 0; i < nl && !err; i++) {
      const int d = (i + r) % nl;
      hmx_x86_tuning_force(&prof[d]);
      const double t0 = hmx_tool_seconds();
      for (int j = 0; j < calls && !err; j++) {
        const hmx_qmatrix B = {c->type, pool + mb * (size_t)next, c->n, c->k, HMX_QLAYOUT_G16,
                               NULL};
        if (hmx_gemm_quant(&ctx, &A, &B, &C) != HMX_OK) {
          fprintf(stderr, "hmx-gemv-prefetch-ab: %s\n", hmx_last_error());
          err = 1;
        }
        if (c->cold) next = (next + 1) % nm;
      }
      gbs[d][r] = (double)calls * (double)mb / (hmx_tool_seconds() - t0) * 1e-9;
    }
  hmx_x86_tuning_force(NULL);
  if (!err) {
    printf("%s (%.1f MiB each, %d %s)\n", c->name, (double)mb / 1048576.0, nm,
           nm > 1 ? "matrices in turn" : "matrix");
    for (int d = 0; d < nl; d++) {
      double s[MAX_ROUNDS];
      memcpy(s, gbs[d], sizeof s);
      qsort(s, (size_t)rounds, sizeof s[0], hmx_tool_cmp_double);
      printf("  %s %4d:", what, lines[d]);
      for (int r = 0; r < rounds; r++) printf(" %5.1f", gbs[d][r]);
      printf("  GB/s; median %5.1f = %3.0f%% of the copy\n", s[rounds / 2],
             100.0 * s[rounds / 2] / copy_gbs);
    }
  }
  free(pool); free(rows); free(a); free(y);
  return err;
}

int main(int argc, char **argv) {
  int rounds = 5, threads = 1, lines[MAX_LINES] = {0, 8, 16, 32, 64}, nl = 5, next = 0;
  const char *backend = "avx512";
  for (int i = 1; i < argc; i++) {
    const int more = i + 1 < argc;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--rounds") && more) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && more) {
      threads = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--backend") && more) {
      backend = argv[++i];
    } else if (!strcmp(argv[i], "--lines") && more) {
      nl = parse_lines(argv[++i], lines);
    } else if (!strcmp(argv[i], "--next") && more) {
      nl = parse_lines(argv[++i], lines);
      next = 1;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (rounds < 1 || rounds > MAX_ROUNDS || threads < 1 || nl < 1) {
    usage(stderr);
    return 2;
  }
  const hmx_backend *be = hmx_backend_find(backend);
  if (!be || !hmx_backend_available(be) || !hmx_x86_tuning_read_by(backend)) {
    fprintf(stderr, "hmx-gemv-prefetch-ab: backend %s is not an available x86 backend\n", backend);
    return 2;
  }
  hmx_x86_tuning prof[MAX_LINES];
  for (int d = 0; d < nl; d++) {
    prof[d] = *hmx_x86_tuning_current();
    if (next) prof[d].gemv_next_kib = lines[d];
    else prof[d].gemv_pf_lines = lines[d];
  }
  const size_t copy_bytes = (size_t)1200 << 20;
  char *src = malloc(copy_bytes), *dst = malloc(copy_bytes);
  if (!src || !dst) {
    fprintf(stderr, "hmx-gemv-prefetch-ab: out of memory for the copy\n");
    return 1;
  }
  memset(src, 1, copy_bytes);
  memset(dst, 2, copy_bytes);
  double copy_gbs = 0;
  for (int r = 0; r < 3; r++) {
    const double t0 = hmx_tool_seconds();
    memcpy(dst, src, copy_bytes);
    const double g = 2.0 * (double)copy_bytes / (hmx_tool_seconds() - t0) * 1e-9;
    if (g > copy_gbs) copy_gbs = g;
  }
  free(src);
  free(dst);
  printf("backend %s, %d thread%s, profile %s; copy %.1f GB/s (1 thread, read + write, best of "
         "3)\n",
         backend, threads, threads > 1 ? "s" : "", hmx_x86_tuning_current()->name, copy_gbs);
  static const gemv_case next_cases[] = {
      {HMX_GGML_Q4_1, 1536, 576, 1, "Q4_1 N = 1536, K = 576 (SmolLM2 gate / up), cold"},
      {HMX_GGML_Q4_1, 576, 1536, 1, "Q4_1 N = 576, K = 1536 (SmolLM2 down), cold"},
      {HMX_GGML_Q8_0, 49152, 576, 1, "Q8_0 N = 49152, K = 576 (SmolLM2 LM head), cold"},
      {HMX_GGML_F32, 1536, 576, 1, "f32 N = 1536, K = 576, cold"},
  };
  static const gemv_case cases[] = {
      {HMX_GGML_F32, 2048, 2048, 1, "f32 K = N = 2048, cold"},
      {HMX_GGML_BF16, 2048, 4096, 1, "bf16 K = 4096, N = 2048, cold"},
      {HMX_GGML_Q8_0, 4096, 4096, 1, "Q8_0 K = N = 4096, cold"},
      {HMX_GGML_Q4_0, 4096, 8192, 1, "Q4_0 K = 8192, N = 4096, cold"},
      {HMX_GGML_F32, 1024, 1024, 0, "f32 K = N = 1024, warm"},
      {HMX_GGML_BF16, 2048, 2048, 0, "bf16 K = N = 2048, warm"},
  };
  int err = 0;
  const gemv_case *cs = next ? next_cases : cases;
  const size_t ncs = next ? sizeof next_cases / sizeof next_cases[0] : sizeof cases / sizeof cases[0];
  for (size_t i = 0; i < ncs && !err; i++)
    err = run_case(&cs[i], be, threads, rounds, prof, lines, nl,
                   next ? "next-pass KiB" : "prefetch lines", copy_gbs);
  return err;
}
