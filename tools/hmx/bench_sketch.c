/* Study "sketch": the sketched attentions against exact attention (issue 7,
 * point 4). For N = 512, 1024, 4096 keys (S = N queries, bidirectional,
 * B = 1, H = 4 heads of D = 64) and k = 64, 128, 256 kept/projected keys:
 *   - time of each sketch over the time of hmx_attention (causal = 0), both
 *     on the study's backend, measured side by side;
 *   - the output error ||O_sketch - O||_F / ||O||_F (binary64 sums);
 *   - the row-wise attention distribution's total variation
 *     TV = 1/2 sum_j |p_sketch(j) - p(j)|, mean and max over 128 evenly
 *     spaced query rows of every head, computed in binary64: p is softmax
 *     over all N keys; a selecting method's p_sketch is softmax over its kept
 *     keys (0 elsewhere); linformer has no distribution over the N keys, so
 *     its row is the effective weight vector w = softmax(q (E K)^T) F over
 *     the N values (a distribution here, see E and F below).
 * Linformer's E and F are learned in the paper; here both are mean pooling
 * over k contiguous segments of the sequence (E[l][j] = 1/|segment l| for j
 * in segment l), a fixed projection whose rows sum to 1. (Random Gaussian
 * E and F of variance 1/k, the other common stand-in, scale the output by
 * about sqrt(N/k) and give relative errors above 1 by construction.)
 * Two inputs: "random" (q, k, v uniform in [-1, 1)) and "dominant": 8 keys
 * (spread over the sequence) get +12 u and every query +4 u along one unit
 * direction u per head, so those keys carry most of the softmax mass. */
#define _POSIX_C_SOURCE 200809L
#include "bench_study.h"
#include "hmx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEADS = 4, DIM = 64, SAMPLE_ROWS = 128, DOMINANT = 8 };
enum { M_LINFORMER, M_LEV, M_LEWIS, M_PRIORITY, M_COUNT };
static const char *const k_mname[M_COUNT] = {"linformer", "levattention", "lewis", "priority"};

typedef struct sk_run {
  hmx_context ctx;
  int method;       /* -1: exact attention */
  int64_t n, kk;
  float *q, *k, *v, *e, *f, *o;
  int32_t *idx;
} sk_run;

static int run_sketch(void *p) {
  sk_run *r = p;
  hmx_tensor q = hmx_tensor_4d(r->q, HMX_F32, 1, r->n, HEADS, DIM);
  hmx_tensor k = hmx_tensor_4d(r->k, HMX_F32, 1, r->n, HEADS, DIM);
  hmx_tensor v = hmx_tensor_4d(r->v, HMX_F32, 1, r->n, HEADS, DIM);
  hmx_tensor o = hmx_tensor_4d(r->o, HMX_F32, 1, r->n, HEADS, DIM);
  hmx_tensor idx = hmx_tensor_3d(r->idx, HMX_I32, 1, HEADS, r->kk);
  hmx_sketch_params sp = {r->kk, 0.0f, 1.0f, 3, 1};
  hmx_status st;
  if (r->method < 0) {
    hmx_attention_params ap = {0, 0, 0.0f};
    st = hmx_attention(&r->ctx, &q, &k, &v, &ap, &o);
  } else if (r->method == M_LINFORMER) {
    hmx_tensor e = hmx_tensor_2d(r->e, HMX_F32, r->kk, r->n);
    hmx_tensor f = hmx_tensor_2d(r->f, HMX_F32, r->kk, r->n);
    st = hmx_linformer(&r->ctx, &q, &k, &v, &e, &f, 0.0f, &o);
  } else if (r->method == M_LEV) {
    st = hmx_levattention(&r->ctx, &q, &k, &v, &sp, &o, &idx);
  } else if (r->method == M_LEWIS) {
    st = hmx_lewis(&r->ctx, &q, &k, &v, &sp, &o, &idx);
  } else {
    st = hmx_priority(&r->ctx, &q, &k, &v, &sp, &o, &idx);
  }
  return st != HMX_OK;
}

/* Plants the "dominant" structure (see the top comment). */
static void plant_dominant(float *q, float *k, int64_t n) {
  float *u = hmx_study_rand(HEADS * DIM, 99);
  if (!u) return;
  for (int h = 0; h < HEADS; h++) {
    double nrm = 0;
    for (int c = 0; c < DIM; c++) nrm += (double)u[h * DIM + c] * u[h * DIM + c];
    float inv = (float)(1.0 / sqrt(nrm));
    for (int c = 0; c < DIM; c++) u[h * DIM + c] *= inv;
  }
  for (int64_t i = 0; i < n; i++)
    for (int h = 0; h < HEADS; h++)
      for (int c = 0; c < DIM; c++) q[(i * HEADS + h) * DIM + c] += 4.0f * u[h * DIM + c];
  for (int j = 0; j < DOMINANT; j++) {
    int64_t row = (n / DOMINANT) * j + (n / DOMINANT) / 3;
    for (int h = 0; h < HEADS; h++)
      for (int c = 0; c < DIM; c++) k[(row * HEADS + h) * DIM + c] += 12.0f * u[h * DIM + c];
  }
  free(u);
}

/* Exact row distribution p[0..n) of query `i`, head `h`, in binary64. */
static void exact_row(const sk_run *r, int64_t i, int h, double *p) {
  double scale = 1.0 / sqrt((double)DIM), mx = -INFINITY, sum = 0;
  const float *qi = r->q + (i * HEADS + h) * DIM;
  for (int64_t j = 0; j < r->n; j++) {
    const float *kj = r->k + (j * HEADS + h) * DIM;
    double s = 0;
    for (int c = 0; c < DIM; c++) s += (double)qi[c] * kj[c];
    p[j] = s * scale;
    if (p[j] > mx) mx = p[j];
  }
  for (int64_t j = 0; j < r->n; j++) sum += (p[j] = exp(p[j] - mx));
  for (int64_t j = 0; j < r->n; j++) p[j] /= sum;
}

/* The sketch's row (see the top comment) of query i, head h, into w.
 * ek: linformer's projected keys E K of head h, [kk, DIM], binary64. */
static void sketch_row(const sk_run *r, int64_t i, int h, const double *ek, double *w,
                       double *tmp) {
  double scale = 1.0 / sqrt((double)DIM), mx = -INFINITY, sum = 0;
  const float *qi = r->q + (i * HEADS + h) * DIM;
  for (int64_t j = 0; j < r->n; j++) w[j] = 0;
  if (r->method == M_LINFORMER) {
    for (int64_t l = 0; l < r->kk; l++) {
      double s = 0;
      for (int c = 0; c < DIM; c++) s += (double)qi[c] * ek[l * DIM + c];
      tmp[l] = s * scale;
      if (tmp[l] > mx) mx = tmp[l];
    }
    for (int64_t l = 0; l < r->kk; l++) sum += (tmp[l] = exp(tmp[l] - mx));
    for (int64_t l = 0; l < r->kk; l++)
      for (int64_t j = 0; j < r->n; j++) w[j] += tmp[l] / sum * r->f[l * r->n + j];
    return;
  }
  const int32_t *sel = r->idx + (int64_t)h * r->kk;
  for (int64_t l = 0; l < r->kk; l++) {
    const float *kj = r->k + ((int64_t)sel[l] * HEADS + h) * DIM;
    double s = 0;
    for (int c = 0; c < DIM; c++) s += (double)qi[c] * kj[c];
    tmp[l] = s * scale;
    if (tmp[l] > mx) mx = tmp[l];
  }
  for (int64_t l = 0; l < r->kk; l++) sum += (tmp[l] = exp(tmp[l] - mx));
  for (int64_t l = 0; l < r->kk; l++) w[sel[l]] = tmp[l] / sum;
}

static double rel_fro(const float *a, const float *ref, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = (double)a[i] - ref[i];
    num += d * d;
    den += (double)ref[i] * ref[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Mean and max TV over the sampled rows of every head. The exact rows are
 * cached in pex[h][row][n] by the caller. */
static void row_tv(const sk_run *r, const double *pex, int64_t rows, double *mean, double *max) {
  double *w = malloc((size_t)r->n * sizeof *w), *tmp = malloc((size_t)r->kk * sizeof *tmp);
  double *ek = malloc((size_t)(r->kk * DIM) * sizeof *ek);
  double tot = 0, mx = 0;
  int ok = w && tmp && ek;
  if (ok)
    for (int h = 0; h < HEADS; h++) {
      if (r->method == M_LINFORMER)
        for (int64_t l = 0; l < r->kk; l++)
          for (int c = 0; c < DIM; c++) {
            double a = 0;
            for (int64_t j = 0; j < r->n; j++)
              a += (double)r->e[l * r->n + j] * r->k[(j * HEADS + h) * DIM + c];
            ek[l * DIM + c] = a;
          }
      for (int64_t s = 0; s < rows; s++) {
        int64_t i = s * r->n / rows;
        sketch_row(r, i, h, ek, w, tmp);
        const double *p = pex + ((int64_t)h * rows + s) * r->n;
        double tv = 0;
        for (int64_t j = 0; j < r->n; j++) tv += fabs(w[j] - p[j]);
        tv *= 0.5;
        tot += tv;
        if (tv > mx) mx = tv;
      }
    }
  *mean = ok ? tot / (double)(HEADS * rows) : NAN;
  *max = ok ? mx : NAN;
  free(w);
  free(tmp);
  free(ek);
}

static int study_case(const hmx_study *S, int dominant, int64_t n, const int64_t *ks, int nk) {
  sk_run r;
  int failed = 0;
  memset(&r, 0, sizeof r);
  r.ctx = hmx_study_context(S);
  r.n = n;
  int64_t elems = n * HEADS * DIM, rows = n < SAMPLE_ROWS ? n : SAMPLE_ROWS;
  r.q = hmx_study_rand(elems, 11);
  r.k = hmx_study_rand(elems, 12);
  r.v = hmx_study_rand(elems, 13);
  r.o = malloc((size_t)elems * sizeof(float));
  float *o_exact = malloc((size_t)elems * sizeof(float));
  double *pex = malloc((size_t)(HEADS * rows * n) * sizeof(double));
  const char *kind = dominant ? "dominant" : "random";
  if (!r.q || !r.k || !r.v || !r.o || !o_exact || !pex) {
    printf("%-9s %6lld  out of memory\n", kind, (long long)n);
    failed++;
    goto done;
  }
  if (dominant) plant_dominant(r.q, r.k, n);
  r.method = -1;
  r.kk = 1;
  double t_exact = hmx_study_time_ms(S, run_sketch, &r);
  if (t_exact < 0) {
    printf("%-9s %6lld %4s %-12s %s\n", kind, (long long)n, "-", "exact", hmx_last_error());
    failed++;
    goto done;
  }
  memcpy(o_exact, r.o, (size_t)elems * sizeof(float));
  printf("%-9s %6lld %4s %-12s %10.3f %7s %9s %8s %8s\n", kind, (long long)n, "N", "exact", t_exact,
         "1.00", "0", "0", "0");
  for (int h = 0; h < HEADS; h++)
    for (int64_t s = 0; s < rows; s++) exact_row(&r, s * n / rows, h, pex + ((int64_t)h * rows + s) * n);
  for (int ki = 0; ki < nk; ki++) {
    r.kk = ks[ki];
    r.e = calloc((size_t)(r.kk * n), sizeof(float));
    r.f = calloc((size_t)(r.kk * n), sizeof(float));
    r.idx = malloc((size_t)(HEADS * r.kk) * sizeof(int32_t));
    if (!r.e || !r.f || !r.idx) {
      printf("%-9s %6lld %4lld  out of memory\n", kind, (long long)n, (long long)r.kk);
      failed++;
    } else {
      for (int64_t l = 0; l < r.kk; l++) { /* mean pooling over segment l */
        int64_t j0 = l * n / r.kk, j1 = (l + 1) * n / r.kk;
        for (int64_t j = j0; j < j1; j++)
          r.e[l * n + j] = r.f[l * n + j] = 1.0f / (float)(j1 - j0);
      }
      for (int m = 0; m < M_COUNT; m++) {
        r.method = m;
        double t = hmx_study_time_ms(S, run_sketch, &r);
        if (t < 0) {
          printf("%-9s %6lld %4lld %-12s %s\n", kind, (long long)n, (long long)r.kk, k_mname[m],
                 hmx_last_error());
          failed++;
          continue;
        }
        double mean, mx;
        row_tv(&r, pex, rows, &mean, &mx);
        printf("%-9s %6lld %4lld %-12s %10.3f %7.3f %9.4f %8.4f %8.4f\n", kind, (long long)n,
               (long long)r.kk, k_mname[m], t, t / t_exact, rel_fro(r.o, o_exact, elems), mean, mx);
        fflush(stdout);
      }
    }
    free(r.e); free(r.f); free(r.idx);
    r.e = r.f = NULL;
    r.idx = NULL;
  }
done:
  free(r.q); free(r.k); free(r.v); free(r.o); free(o_exact); free(pex);
  return failed;
}

int hmx_study_sketch(const hmx_study *S) {
  int failed = 0;
  static const int64_t ns[] = {512, 1024, 4096}, ks[] = {64, 128, 256};
  static const int64_t ns_small[] = {128}, ks_small[] = {16, 32};
  printf("\nstudy sketch: backend %s, B=1 S=N H=%d D=%d; x exact = time / exact attention's; "
         "rel_fro = ||O_s - O||_F / ||O||_F; TV over %d rows per head; linformer E = F = mean pooling\n",
         hmx_backend_name(S->be), HEADS, DIM, SAMPLE_ROWS);
  printf("%-9s %6s %4s %-12s %10s %7s %9s %8s %8s\n", "input", "N", "k", "method", "median_ms",
         "x exact", "rel_fro", "TV_mean", "TV_max");
  for (int dom = 0; dom < 2; dom++) {
    if (S->small) failed += study_case(S, dom, ns_small[0], ks_small, 2);
    else
      for (int i = 0; i < 3; i++) failed += study_case(S, dom, ns[i], ks, 3);
  }
  return failed;
}
