/* Study "strassen": Strassen's recursion against the backend's gemm (issue
 * 7, point 4), square n x n x n for n = 64 ... 2048, cutoffs 64 (the
 * default) and 256, both on the study's backend, measured side by side:
 *   - time and the ratio gemm time / strassen time (> 1: Strassen wins);
 *   - the error against a binary64 product over 64 evenly spaced rows:
 *       cw  = max_ij |c_ij - exact_ij| / (|A| |B|)_ij   (componentwise)
 *       nw  = max_ij |c_ij - exact_ij| / max_ij |exact_ij|  (normwise)
 *     for gemm and for strassen, so the growth of Strassen's error with the
 *     recursion depth is visible next to gemm's;
 *   - the crossover: the smallest n above the cutoff from which Strassen
 *     (cutoff 64) is faster at every larger n measured, or "none" (at or
 *     below the cutoff Strassen is the gemm itself). */
#define _POSIX_C_SOURCE 200809L
#include "bench_study.h"
#include "hmx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ERR_ROWS = 64 };

typedef struct st_run {
  hmx_context ctx;
  int64_t n, cutoff; /* cutoff < 0: hmx_gemm */
  float *a, *b, *c;
} st_run;

static int run_mm(void *p) {
  st_run *r = p;
  hmx_tensor a = hmx_tensor_2d(r->a, HMX_F32, r->n, r->n), b = hmx_tensor_2d(r->b, HMX_F32, r->n, r->n);
  hmx_tensor c = hmx_tensor_2d(r->c, HMX_F32, r->n, r->n);
  hmx_status st = r->cutoff < 0 ? hmx_gemm(&r->ctx, &a, &b, 0, NULL, &c)
                                : hmx_strassen(&r->ctx, &a, &b, r->cutoff, &c);
  return st != HMX_OK;
}

/* Componentwise and normwise max errors of r->c over the sampled rows. */
static void mm_error(const st_run *r, double *cw, double *nw) {
  int64_t n = r->n, rows = n < ERR_ROWS ? n : ERR_ROWS;
  double worst_cw = 0, worst_abs = 0, max_exact = 0;
  for (int64_t s = 0; s < rows; s++) {
    int64_t i = s * n / rows;
    for (int64_t j = 0; j < n; j++) {
      double e = 0, m = 0;
      for (int64_t p = 0; p < n; p++) {
        double t = (double)r->a[i * n + p] * r->b[p * n + j];
        e += t;
        m += fabs(t);
      }
      double d = fabs((double)r->c[i * n + j] - e);
      if (m > 0 && d / m > worst_cw) worst_cw = d / m;
      if (d > worst_abs) worst_abs = d;
      if (fabs(e) > max_exact) max_exact = fabs(e);
    }
  }
  *cw = worst_cw;
  *nw = max_exact > 0 ? worst_abs / max_exact : worst_abs;
}

int hmx_study_strassen(const hmx_study *S) {
  int failed = 0;
  static const int64_t ns[] = {64, 128, 256, 512, 1024, 2048}, cutoffs[] = {64, 256};
  int count = S->small ? 2 : 6;
  double win[6] = {0};
  printf("\nstudy strassen: backend %s, square n x n x n; x gemm = gemm time / this time; "
         "errors vs binary64 over %d rows (cw: / (|A||B|)_ij, nw: / max|C|)\n",
         hmx_backend_name(S->be), ERR_ROWS);
  printf("%6s %-16s %10s %7s %10s %10s\n", "n", "impl", "median_ms", "x gemm", "err_cw", "err_nw");
  for (int i = 0; i < count; i++) {
    st_run r;
    memset(&r, 0, sizeof r);
    r.ctx = hmx_study_context(S);
    r.n = ns[i];
    r.a = hmx_study_rand(r.n * r.n, 31);
    r.b = hmx_study_rand(r.n * r.n, 32);
    r.c = malloc((size_t)(r.n * r.n) * sizeof(float));
    if (!r.a || !r.b || !r.c) {
      printf("%6lld out of memory\n", (long long)r.n);
      failed++;
    } else {
      r.cutoff = -1;
      double t_gemm = hmx_study_time_ms(S, run_mm, &r), cw, nw;
      if (t_gemm < 0) {
        printf("%6lld %-16s %s\n", (long long)r.n, "gemm", hmx_last_error());
        failed++;
      } else {
        mm_error(&r, &cw, &nw);
        printf("%6lld %-16s %10.3f %7s %10.2e %10.2e\n", (long long)r.n, "gemm", t_gemm, "1.00", cw, nw);
        for (int c = 0; c < 2; c++) {
          r.cutoff = cutoffs[c];
          double t = hmx_study_time_ms(S, run_mm, &r);
          char name[32];
          snprintf(name, sizeof name, "strassen/%lld", (long long)r.cutoff);
          if (t < 0) {
            printf("%6lld %-16s %s\n", (long long)r.n, name, hmx_last_error());
            failed++;
            continue;
          }
          mm_error(&r, &cw, &nw);
          printf("%6lld %-16s %10.3f %7.2f %10.2e %10.2e\n", (long long)r.n, name, t, t_gemm / t, cw, nw);
          if (c == 0 && r.n > r.cutoff) win[i] = t_gemm / t; /* below: the same gemm */
        }
      }
      fflush(stdout);
    }
    free(r.a); free(r.b); free(r.c);
  }
  int from = -1;
  for (int i = count - 1; i >= 0 && win[i] > 1.0; i--) from = i;
  if (from >= 0)
    printf("crossover (cutoff 64): Strassen is faster from n = %lld on (to the largest n measured)\n",
           (long long)ns[from]);
  else
    printf("crossover (cutoff 64): none: Strassen is not faster than gemm at the largest n measured\n");
  return failed;
}
