/* hmx-exp-check: accuracy of hmx_expf over every binary32 input.
 *
 *   hmx-exp-check [--sample N] [--threads T]
 *
 * For each input bit pattern x (all 2^32 by default, or N evenly spaced ones
 * with --sample N) it compares hmx_expf(x) with
 *   - the correctly rounded binary32 exp(x): glibc's double exp (error below
 *     1 ulp of double) rounded to float; when that double lies within 4 ulp
 *     (of double) of a float rounding boundary, the rounding is decided by
 *     MPFR instead (without MPFR those inputs are counted as "undecided");
 *   - the exact value, to report the error as a real number of float ulps:
 *     |y - exp(x)| / ulp(exp(x)), ulp(v) = 2^(floor(log2 v) - 23) for
 *     v >= 2^-126 and 2^-149 below (the double approximation of exp(x) is
 *     good to ~2^-29 float ulp, far below the 4 printed digits);
 *   - SLEEF's Sleef_expf_u10 when built with SLEEF: how many inputs give
 *     different bits, and SLEEF's own error under the same metric.
 * Special values (NaN, +-inf, +-0, the overflow/underflow thresholds) are
 * always checked. Exit status: 0 if max error <= 1 ulp and the special
 * values pass, 1 otherwise, 2 on bad usage.
 */
#include "hadamix.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(HMX_EXPCHK_THREADS)
#include <pthread.h>
#endif
#if defined(HMX_EXPCHK_SLEEF)
#include <sleef.h>
#endif
#if defined(HMX_EXPCHK_MPFR)
#include <mpfr.h>
#endif

#define MAX_THREADS 64

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Float ulp at the (positive) exact value v. */
static double ulp_at(double v) {
  int e;
  if (v < 0x1p-126) return 0x1p-149;
  (void)frexp(v, &e); /* v in [2^(e-1), 2^e) */
  return ldexp(1.0, e - 1 - 23);
}

/* Error of y as a real number of float ulps of the exact value e (e > 0 or
 * e == +inf in double, i.e. exp(x) > DBL_MAX: then y must be +inf). */
static double ulp_err(float y, double e) {
  if (isinf(e)) return isinf(y) ? 0.0 : INFINITY;
  if (isinf(y)) {
    /* +inf is the correct rounding iff e >= FLT_MAX + ulp/2 = 2^128 - 2^103 */
    return e >= 0x1p128 - 0x1p103 ? 0.0 : INFINITY;
  }
  if (isnan(y)) return INFINITY;
  return fabs((double)y - e) / ulp_at(e);
}

#if defined(HMX_EXPCHK_MPFR)
static float mpfr_expf_rn(float x) {
  mpfr_t mx, my;
  int inex;
  float r;
  mpfr_set_emin(-148); /* binary32 with subnormals: emin = -148 in MPFR's convention */
  mpfr_set_emax(128);
  mpfr_init2(mx, 24);
  mpfr_init2(my, 24);
  mpfr_set_flt(mx, x, MPFR_RNDN);
  inex = mpfr_exp(my, mx, MPFR_RNDN);
  inex = mpfr_subnormalize(my, inex, MPFR_RNDN);
  r = mpfr_get_flt(my, MPFR_RNDN);
  mpfr_clear(mx);
  mpfr_clear(my);
  return r;
}
#endif

/* Correctly rounded float exp(x) for a finite x. *undecided is set when the
 * double reference is too close to a float rounding boundary and MPFR is
 * not available (then the double rounding is returned). *ed gets exp(x) in
 * double. */
static float cr_expf(float x, double *ed, int *undecided, long *mpfr_calls) {
  double e = exp((double)x);
  float f = (float)e;
  double lo, hi, tol;
  *ed = e;
  *undecided = 0;
  if (e == 0.0 || isinf(e)) return f; /* far from every boundary */
  /* Boundaries around f: the midpoints to its neighbours. */
  if (isinf(f)) {
    lo = 0x1p128 - 0x1p103;
    hi = INFINITY;
  } else {
    float fp = nextafterf(f, 0.0f), fn = nextafterf(f, INFINITY);
    lo = f == 0.0f ? -1.0 : 0.5 * ((double)fp + (double)f);
    hi = isinf(fn) ? 0x1p128 - 0x1p103 : 0.5 * ((double)f + (double)fn);
  }
  tol = 4.0 * (nextafter(e, INFINITY) - e);
  if (fabs(e - lo) > tol && fabs(hi - e) > tol) return f;
#if defined(HMX_EXPCHK_MPFR)
  (*mpfr_calls)++;
  return mpfr_expf_rn(x);
#else
  (void)mpfr_calls;
  *undecided = 1;
  return f;
#endif
}

typedef struct stats {
  double max_err;      /* max ulp error, all finite-result inputs */
  uint32_t max_at;
  double max_err_sub;  /* over inputs whose exact result is below 2^-126 */
  uint32_t max_sub_at;
  double max_err_norm; /* over inputs whose exact result is normal */
  uint32_t max_norm_at;
  uint64_t checked;
  uint64_t not_cr;     /* hmx result != correctly rounded */
  uint64_t over_1ulp;
  uint64_t undecided;
  uint64_t mpfr_calls;
  /* SLEEF */
  double s_max_err;
  uint32_t s_max_at;
  uint64_t s_not_cr;
  uint64_t s_differ; /* bits differ from hmx (all NaNs compare equal) */
} stats;

static void stats_init(stats *s) {
  memset(s, 0, sizeof *s);
  s->max_err = s->max_err_sub = s->max_err_norm = s->s_max_err = -1.0;
}

static void upd_max(double *m, uint32_t *at, double e, uint32_t u) {
  if (e > *m || (e == *m && u < *at)) {
    *m = e;
    *at = u;
  }
}

static void check_one(uint32_t u, stats *st) {
  float x = u2f(u);
  float y = hmx_expf(x);
  double ed;
  int und = 0;
  float cr;
  double err;
  st->checked++;
#if defined(HMX_EXPCHK_SLEEF)
  float ys = Sleef_expf_u10(x);
  if (!(isnan(ys) && isnan(y)) && f2u(ys) != f2u(y)) st->s_differ++;
#endif
  if (isnan(x)) {
    if (!isnan(y)) {
      st->not_cr++;
      st->over_1ulp++;
      upd_max(&st->max_err, &st->max_at, INFINITY, u);
    }
#if defined(HMX_EXPCHK_SLEEF)
    if (!isnan(ys)) {
      st->s_not_cr++;
      upd_max(&st->s_max_err, &st->s_max_at, INFINITY, u);
    }
#endif
    return;
  }
  if (isinf(x)) {
    ed = x > 0 ? INFINITY : 0.0;
    cr = x > 0 ? INFINITY : 0.0f;
  } else {
    long calls = 0;
    cr = cr_expf(x, &ed, &und, &calls);
    st->mpfr_calls += (uint64_t)calls;
  }
  st->undecided += (uint64_t)und;
  if (f2u(y) != f2u(cr)) st->not_cr++;
  err = ed == 0.0 ? (y == 0.0f && !signbit(y) ? 0.0 : INFINITY) : ulp_err(y, ed);
  if (ed == 0.0 && y == 0.0f && signbit(y)) err = INFINITY; /* -0 is wrong */
  if (err > 1.0) st->over_1ulp++;
  upd_max(&st->max_err, &st->max_at, err, u);
  if (ed < 0x1p-126)
    upd_max(&st->max_err_sub, &st->max_sub_at, err, u);
  else
    upd_max(&st->max_err_norm, &st->max_norm_at, err, u);
#if defined(HMX_EXPCHK_SLEEF)
  if (f2u(ys) != f2u(cr)) st->s_not_cr++;
  err = ed == 0.0 ? (ys == 0.0f ? 0.0 : INFINITY) : ulp_err(ys, ed);
  upd_max(&st->s_max_err, &st->s_max_at, err, u);
#endif
}

typedef struct job {
  uint64_t begin, end, stride; /* pattern index range, pattern = idx * stride */
  stats st;
} job;

static void *run_job(void *arg) {
  job *j = (job *)arg;
  uint64_t i;
  stats_init(&j->st);
  for (i = j->begin; i < j->end; i++) check_one((uint32_t)(i * j->stride), &j->st);
  return NULL;
}

static void merge(stats *a, const stats *b) {
  upd_max(&a->max_err, &a->max_at, b->max_err, b->max_at);
  upd_max(&a->max_err_sub, &a->max_sub_at, b->max_err_sub, b->max_sub_at);
  upd_max(&a->max_err_norm, &a->max_norm_at, b->max_err_norm, b->max_norm_at);
  upd_max(&a->s_max_err, &a->s_max_at, b->s_max_err, b->s_max_at);
  a->checked += b->checked;
  a->not_cr += b->not_cr;
  a->over_1ulp += b->over_1ulp;
  a->undecided += b->undecided;
  a->mpfr_calls += b->mpfr_calls;
  a->s_not_cr += b->s_not_cr;
  a->s_differ += b->s_differ;
}

/* Special values: exact expectations. Returns the number of failures. */
static int check_specials(void) {
  struct {
    float x, want;
    const char *what;
  } cases[] = {
      {0.0f, 1.0f, "exp(+0) = 1"},
      {-0.0f, 1.0f, "exp(-0) = 1"},
      {INFINITY, INFINITY, "exp(+inf) = +inf"},
      {-INFINITY, 0.0f, "exp(-inf) = +0"},
      {0x1.62e42ep+6f, 0x1.ffff08p+127f, "exp(largest finite-result x)"},
      {0x1.62e430p+6f, INFINITY, "exp(smallest overflowing x) = +inf"},
      {FLT_MAX, INFINITY, "exp(FLT_MAX) = +inf"},
      {-FLT_MAX, 0.0f, "exp(-FLT_MAX) = +0"},
      {-0x1.9fe368p+6f, 0x1p-149f, "exp(smallest nonzero-result x) = 2^-149"},
      {-0x1.9fe36ap+6f, 0.0f, "exp(largest zero-result x) = +0"},
      {0x1p-149f, 1.0f, "exp(2^-149) = 1"},
      {-0x1p-149f, 1.0f, "exp(-2^-149) = 1"},
      {1.0f, 0x1.5bf0a8p+1f, "exp(1) = e rounded"},
  };
  int fails = 0;
  size_t i;
  float qn = u2f(0x7fc00000u), sn = u2f(0x7f800001u), nn = u2f(0xffc00001u);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    float y = hmx_expf(cases[i].x);
    if (f2u(y) != f2u(cases[i].want)) {
      printf("  FAIL %s: hmx_expf(%a) = %a, want %a\n", cases[i].what, (double)cases[i].x,
             (double)y, (double)cases[i].want);
      fails++;
    }
  }
  if (!isnan(hmx_expf(qn)) || !isnan(hmx_expf(sn)) || !isnan(hmx_expf(nn))) {
    printf("  FAIL exp(NaN) is not NaN\n");
    fails++;
  }
#if defined(HMX_EXPCHK_MPFR)
  { /* the MPFR fallback agrees with glibc where glibc is unambiguous */
    const float xs[] = {1.0f, -1.5f, 10.0f, -87.5f, -100.0f, -103.9f, 88.7f};
    for (i = 0; i < sizeof xs / sizeof xs[0]; i++) {
      if (f2u(mpfr_expf_rn(xs[i])) != f2u((float)exp((double)xs[i]))) {
        printf("  FAIL MPFR reference disagrees with glibc at %a\n", (double)xs[i]);
        fails++;
      }
    }
  }
#endif
  /* The subnormal range is reached and rounded with the sign of +. */
  if (!(hmx_expf(-100.0f) > 0.0f && hmx_expf(-100.0f) < 0x1p-126f)) {
    printf("  FAIL exp(-100) is not a positive subnormal\n");
    fails++;
  }
  return fails;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: hmx-exp-check [--sample N] [--threads T]\n"
          "  Checks hmx_expf against the correctly rounded exp over all 2^32 inputs\n"
          "  (or N evenly spaced bit patterns with --sample N).\n");
}

int main(int argc, char **argv) {
  uint64_t sample = 0;
  int threads = 2, i, nth, spec_fails;
  uint64_t total, stride, per;
  static job jobs[MAX_THREADS];
  stats all;
  clock_t c0 = clock();
  time_t t0 = time(NULL);

  for (i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
      unsigned long long v = strtoull(argv[++i], &end, 10);
      if (!end || *end || v == 0 || v > (1ull << 32)) {
        fprintf(stderr, "hmx-exp-check: --sample needs 1..4294967296\n");
        return 2;
      }
      sample = v;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      long v = strtol(argv[++i], &end, 10);
      if (!end || *end || v < 1 || v > MAX_THREADS) {
        fprintf(stderr, "hmx-exp-check: --threads needs 1..%d\n", MAX_THREADS);
        return 2;
      }
      threads = (int)v;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
#if !defined(HMX_EXPCHK_THREADS)
  threads = 1;
#endif

  if (sample == 0 || sample == (1ull << 32)) {
    total = 1ull << 32;
    stride = 1;
  } else {
    stride = (1ull << 32) / sample;
    total = sample;
  }
  nth = threads;
  per = (total + (uint64_t)nth - 1) / (uint64_t)nth;
  for (i = 0; i < nth; i++) {
    jobs[i].begin = per * (uint64_t)i;
    jobs[i].end = per * (uint64_t)(i + 1) < total ? per * (uint64_t)(i + 1) : total;
    if (jobs[i].begin > jobs[i].end) jobs[i].begin = jobs[i].end;
    jobs[i].stride = stride;
  }
#if defined(HMX_EXPCHK_THREADS)
  {
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (i = 1; i < nth; i++) started[i] = pthread_create(&tid[i], NULL, run_job, &jobs[i]) == 0;
    run_job(&jobs[0]);
    for (i = 1; i < nth; i++) {
      if (started[i])
        pthread_join(tid[i], NULL);
      else
        run_job(&jobs[i]); /* could not start a thread: do it here */
    }
  }
#else
  run_job(&jobs[0]);
#endif
  stats_init(&all);
  for (i = 0; i < nth; i++) merge(&all, &jobs[i].st);

  printf("hmx-exp-check: %s, %llu inputs (stride %llu), %d thread(s)\n",
         stride == 1 ? "exhaustive" : "sampled", (unsigned long long)all.checked,
         (unsigned long long)stride, nth);
#if defined(HMX_EXPCHK_MPFR)
  printf("  reference      : glibc exp (double) rounded to float; MPFR %s decides %llu near-tie cases\n",
         mpfr_get_version(), (unsigned long long)all.mpfr_calls);
#else
  printf("  reference      : glibc exp (double) rounded to float; no MPFR: %llu near-tie cases "
         "UNDECIDED\n",
         (unsigned long long)all.undecided);
#endif
  printf("  hmx_expf       : max error %.4f ulp at x = %a (bits 0x%08x)\n", all.max_err,
         (double)u2f(all.max_at), (unsigned)all.max_at);
  if (all.max_err_norm >= 0)
    printf("                   max error %.4f ulp with a normal result (>= 2^-126), at x = %a\n",
           all.max_err_norm, (double)u2f(all.max_norm_at));
  if (all.max_err_sub >= 0)
    printf("                   max error %.4f ulp with a subnormal or zero result, at x = %a\n",
           all.max_err_sub, (double)u2f(all.max_sub_at));
  printf("                   %llu not correctly rounded (%.4f%% of inputs), %llu over 1 ulp\n",
         (unsigned long long)all.not_cr, 100.0 * (double)all.not_cr / (double)all.checked,
         (unsigned long long)all.over_1ulp);
#if defined(HMX_EXPCHK_SLEEF)
  printf("  Sleef_expf_u10 : max error %.4f ulp at x = %a; %llu not correctly rounded\n",
         all.s_max_err, (double)u2f(all.s_max_at), (unsigned long long)all.s_not_cr);
  printf("                   differs from hmx_expf on %llu inputs (%.4f%%)\n",
         (unsigned long long)all.s_differ, 100.0 * (double)all.s_differ / (double)all.checked);
#else
  printf("  Sleef_expf_u10 : not built with SLEEF, comparison skipped\n");
#endif
  spec_fails = check_specials();
  printf("  special values : %s\n", spec_fails ? "FAILED" : "ok (NaN, +-inf, +-0, thresholds)");
  printf("  time           : %.0f s wall, %.0f s CPU\n", difftime(time(NULL), t0),
         (double)(clock() - c0) / CLOCKS_PER_SEC);
  return (all.max_err <= 1.0 && spec_fails == 0) ? 0 : 1;
}
