/* Shared pieces of the hmx bench studies (bench_study.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_study.h"
#include "hmx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double hmx_study_time_ms(const hmx_study *S, int (*fn)(void *), void *ctx) {
  double t0 = hmx_now();
  if (fn(ctx) != 0) return -1.0;
  double warm = hmx_now() - t0;
  int n = S->reps;
  if (n <= 0) n = warm > 0.5 ? 1 : (int)(0.25 / (warm > 1e-7 ? warm : 1e-7));
  if (n < 1) n = 1;
  if (n > 15) n = 15;
  double t[15];
  for (int i = 0; i < n; i++) {
    double a = hmx_now();
    if (fn(ctx) != 0) return -1.0;
    t[i] = hmx_now() - a;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_double);
  return 1e3 * (n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]));
}

float *hmx_study_rand(int64_t n, uint64_t seed) {
  float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (!p) return NULL;
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = (float)(s >> 40) * 0x1p-23f - 1.0f;
  }
  return p;
}

hmx_context hmx_study_context(const hmx_study *S) {
  hmx_context c;
  memset(&c, 0, sizeof c);
  c.backend = S->be;
  c.threads = S->threads;
  c.allow_ref_fallback = 0;
  return c;
}

/* One "Key:   N kB" line of /proc/self/status, in bytes. */
static int64_t proc_status_kb(const char *key) {
#if defined(__linux__)
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  size_t kl = strlen(key);
  int64_t v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
      long long kb;
      if (sscanf(line + kl + 1, "%lld", &kb) == 1) v = (int64_t)kb * 1024;
      break;
    }
  fclose(f);
  return v;
#else
  (void)key;
  return -1;
#endif
}

int64_t hmx_study_rss(void) { return proc_status_kb("VmRSS"); }
int64_t hmx_study_peak_rss(void) { return proc_status_kb("VmHWM"); }

int hmx_study_reset_peak(void) {
#if defined(__linux__)
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return -1;
  int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
#else
  return -1;
#endif
}
