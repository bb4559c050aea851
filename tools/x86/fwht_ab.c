/* Interleaved A/B of x86 fwht kernel variants (docs/BENCH.md "A/B of x86
 * fwht variants"; built by tools/x86/fwht_ab.sh, never by CMake). Each
 * variant is simd/<isa>/fwht_<isa>.c compiled with its own -D flags and
 * function name; the generated table (ab_variants) lists them, the first
 * being the base. For every row length and batch placement the variants,
 * and FFHT's fht_float when given, run in turn on the same buffer, one
 * thread, in place, every buffer the same bytes past a 64-byte line (as
 * `hmx bench fwht`), round after round; each round starts with a different
 * variant, so that no variant always runs right after the peer. Ratios are
 * taken within a round (time / the base's time, FFHT's time / this time),
 * then the median over rounds: a shared host's speed drifts between rounds
 * more than most of the differences measured here.
 *
 * Before timing, every variant transforms the same input and must give the
 * base's bits (memcmp): a variant that changes a value is reported and the
 * exit status is 1. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool_clock.h"

#include "fwht_ab.h"
#include "ref.h"    /* hmx_fwht_split */
#include "tuning.h" /* the variants' profiles */

enum { MAX_IMPLS = 17, MAX_ROUNDS = 31 };

/* Each variant's tuning profile (ab_variant.tuning), parsed once; a
 * variant that names none runs under the automatic choice (or
 * HMX_X86_TUNING). */
static hmx_x86_tuning profiles[MAX_IMPLS];

static double median(const double *v, int n) {
  double t[MAX_ROUNDS];
  memcpy(t, v, (size_t)n * sizeof *t);
  qsort(t, (size_t)n, sizeof *t, hmx_tool_cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef struct ab_case {
  float *x; /* batch * n floats, `offset` bytes past a line */
  int64_t n, batch;
  int m, log_n;
  int (*ffht)(float *, int);
  float scale; /* hmx_fwht's: 1, or 1 / sqrt(n) with --scale inv-sqrt-n */
} ab_case;

/* One call of implementation i (the variants, then FFHT) over the batch. */
static int run_impl(const ab_case *c, int i) {
  if (i < ab_nvariants) {
    const hmx_fwht_args a = {c->x, c->x, c->batch, c->n, c->m, c->scale, 1};
    /* one thread: nothing else reads the profile meanwhile */
    hmx_x86_tuning_force(ab_variants[i].tuning ? &profiles[i] : NULL);
    return ab_variants[i].fn(&a) != HMX_OK;
  }
  int bad = 0;
  for (int64_t r = 0; r < c->batch; r++) bad |= c->ffht(c->x + r * c->n, c->log_n) != 0;
  return bad;
}

static void fill(float *x, int64_t count, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < count; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)(s >> 40) * 0x1p-23f - 1.0f; /* uniform in [-1, 1) */
  }
}

/* Every variant on the same input: the base's bits or a report. */
static int same_bits(ab_case *c) {
  const int64_t count = c->batch * c->n;
  float *want = malloc((size_t)count * sizeof *want);
  if (!want) {
    printf("  out of memory for the bit check\n");
    return 0;
  }
  int ok = 1;
  for (int v = 0; v < ab_nvariants; v++) {
    fill(c->x, count, 7);
    if (run_impl(c, v)) {
      printf("  %s: returned an error\n", ab_variants[v].name);
      ok = 0;
    } else if (v == 0) {
      memcpy(want, c->x, (size_t)count * sizeof *want);
    } else if (memcmp(want, c->x, (size_t)count * sizeof *want) != 0) {
      printf("  %s: NOT the base's bits\n", ab_variants[v].name);
      ok = 0;
    }
  }
  free(want);
  return ok;
}

/* Times every implementation, `rounds` rounds of `reps` calls each, and
 * prints the medians, the time over the base's and x FFHT (ratios taken
 * within a round, then their median). */
static void time_case(const ab_case *c, int rounds, double ms) {
  const int ni = ab_nvariants + (c->ffht ? 1 : 0);
  /* calls per measurement, from the base's warm-up */
  const double t0 = hmx_tool_seconds();
  run_impl(c, 0);
  const double warm = hmx_tool_seconds() - t0;
  int reps = warm > 0 ? (int)(ms * 1e-3 / warm) : 1000;
  reps = reps < 1 ? 1 : reps > 100000 ? 100000 : reps;
  double t[MAX_IMPLS][MAX_ROUNDS];
  for (int r = 0; r < rounds; r++)
    for (int j = 0; j < ni; j++) {
      const int i = (j + r) % ni;
      run_impl(c, i); /* warm-up: the batch into the caches, the code too */
      const double a = hmx_tool_seconds();
      for (int q = 0; q < reps; q++) run_impl(c, i);
      t[i][r] = (hmx_tool_seconds() - a) / reps;
    }
  const double gb = 8.0 * (double)(c->batch * c->n) * 1e-9; /* read + write */
  printf("  %-12s %9s %8s %14s %8s\n", "impl", "us/call", "GB/s", "time/base", "x FFHT");
  for (int i = 0; i < ni; i++) {
    double rel[MAX_ROUNDS], peer[MAX_ROUNDS], lo = 0, hi = 0;
    for (int r = 0; r < rounds; r++) {
      rel[r] = t[i][r] / t[0][r];
      if (c->ffht) peer[r] = t[ni - 1][r] / t[i][r];
      lo = r == 0 || rel[r] < lo ? rel[r] : lo;
      hi = r == 0 || rel[r] > hi ? rel[r] : hi;
    }
    const double med = median(t[i], rounds);
    printf("  %-12s %9.2f %8.2f  %5.3f [%5.3f %5.3f]", i < ab_nvariants ? ab_variants[i].name : "ffht",
           med * 1e6, gb / med, median(rel, rounds), lo, hi);
    if (c->ffht && i < ab_nvariants) printf(" %6.2fx", median(peer, rounds));
    printf("\n");
  }
}

static void usage(void) {
  fprintf(stderr,
          "usage: fwht_ab [--n 512,4096,...] [--kib K] [--mem-mib M] [--rounds R] [--offset B]\n"
          "               [--ms T] [--ffht libffht.so] [--scale 1|inv-sqrt-n]\n"
          "  --n       row lengths (default 256,512,1024,2048,4096,16384,65536,768,1536)\n"
          "  --kib     batch held by the caches, KiB (default 256; 0: none)\n"
          "  --mem-mib batch far larger than the caches, MiB (default 0: none)\n"
          "  --rounds  rounds (default 7, at most %d)\n"
          "  --offset  bytes past a 64-byte line (default 16, as hmx bench)\n"
          "  --ms      time per measurement, ms (default 20)\n"
          "  --scale   hmx_fwht's scale: 1 (default: the unnormalised transform, as FFHT and\n"
          "            hmx bench fwht) or inv-sqrt-n (the normalised one)\n",
          MAX_ROUNDS);
}

int main(int argc, char **argv) {
  /* line-buffered into a file too: a run cut short by a timeout keeps the sizes it finished */
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *ns = "256,512,1024,2048,4096,16384,65536,768,1536", *ffht_path = NULL;
  double kib = 256, mem_mib = 0, ms = 20;
  int rounds = 7, offset = 16, unit_scale = 1;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(argv[i], "--n")) ns = v;
    else if (!strcmp(argv[i], "--kib")) kib = atof(v);
    else if (!strcmp(argv[i], "--mem-mib")) mem_mib = atof(v);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(v);
    else if (!strcmp(argv[i], "--offset")) offset = atoi(v);
    else if (!strcmp(argv[i], "--ms")) ms = atof(v);
    else if (!strcmp(argv[i], "--ffht")) ffht_path = v;
    else if (!strcmp(argv[i], "--scale") && !strcmp(v, "1")) unit_scale = 1;
    else if (!strcmp(argv[i], "--scale") && !strcmp(v, "inv-sqrt-n")) unit_scale = 0;
    else {
      usage();
      return 2;
    }
    i++;
  }
  if (rounds < 1 || rounds > MAX_ROUNDS || offset < 0 || offset > 60 || offset % 4 ||
      !(ms > 0) || !(kib >= 0) || !(mem_mib >= 0) || ab_nvariants < 1 ||
      ab_nvariants + 1 > MAX_IMPLS) {
    usage();
    return 2;
  }
  for (int v = 0; v < ab_nvariants; v++) {
    char err[160];
    if (!ab_variants[v].tuning) continue;
    if (!hmx_x86_tuning_parse(ab_variants[v].tuning, &profiles[v], err, sizeof err)) {
      fprintf(stderr, "fwht_ab: variant %s: %s\n", ab_variants[v].name, err);
      return 2;
    }
    printf("variant %s: tuning %s\n", ab_variants[v].name, ab_variants[v].tuning);
  }
  int (*ffht)(float *, int) = NULL;
  if (ffht_path) {
    void *h = dlopen(ffht_path, RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "fht_float") : NULL;
    if (!f) {
      fprintf(stderr, "fwht_ab: %s: %s\n", ffht_path, h ? "no fht_float" : dlerror());
      return 2;
    }
    memcpy(&ffht, &f, sizeof f);
  }
  printf("fwht_ab: %d variants, one thread, in place, %d bytes past a line, %d rounds, "
         "scale %s%s\n",
         ab_nvariants, offset, rounds, unit_scale ? "1" : "1/sqrt(n)", ffht ? ", FFHT loaded" : "");
  int all_same = 1;
  for (const char *p = ns; *p;) {
    char *end;
    const int64_t n = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',')) {
      fprintf(stderr, "fwht_ab: --n %s: a list of row lengths, comma-separated\n", ns);
      return 2;
    }
    p = *end ? end + 1 : end;
    int m = 0;
    int64_t pow2 = 0;
    if (n < 16 || !hmx_fwht_split(n, 0, &m, &pow2)) {
      printf("n=%lld: not a size hmx_fwht supports, or below 16; skipped\n", (long long)n);
      continue;
    }
    for (int k = 0; k < 2; k++) {
      const double bytes = k ? mem_mib * 1048576.0 : kib * 1024.0;
      if (!(bytes > 0)) continue;
      int64_t batch = (int64_t)(bytes / (4.0 * (double)n));
      if (batch < 1) batch = 1;
      char *base = aligned_alloc(64, ((size_t)(batch * n) * 4 + 128) / 64 * 64);
      if (!base) {
        printf("n=%lld: out of memory\n", (long long)n);
        continue;
      }
      ab_case c = {(float *)(base + offset), n, batch, m, 0, m == 1 ? ffht : NULL,
                   unit_scale ? 1.0f : (float)(1.0 / sqrt((double)n))};
      while (((int64_t)1 << c.log_n) < pow2) c.log_n++;
      printf("\nn=%lld batch=%lld (%s)\n", (long long)n, (long long)batch, k ? "memory" : "caches");
      if (!same_bits(&c)) all_same = 0;
      fill(c.x, batch * n, 1);
      time_case(&c, rounds, ms);
      free(base);
    }
  }
  if (!all_same) printf("\nfwht_ab: some variant changed the bits (above)\n");
  return all_same ? 0 : 1;
}
