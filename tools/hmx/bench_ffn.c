/* Study "ffn": FlashMHF against SwiGLU and the naive multi-head FFN at equal
 * parameter count (issue 7, point 4): time, the op's working memory and the
 * whole process's peak RSS at a long sequence.
 *
 * Each (config, variant) runs in a forked child, so one variant's freed
 * memory never hides in another's numbers. In the child: inputs, weights and
 * the output are allocated and touched, the RSS high-water mark is reset
 * (/proc/self/clear_refs) after a 256^3 gemm has started the backend's
 * threads and a one-token call has paged the op's code in, the op runs once, and
 *   working = VmHWM after - VmRSS before   (what the op itself touched),
 *   peak    = VmHWM after                  (the whole process),
 * then the op is timed. Four variants:
 *   swiglu-mat  SwiGLU as a framework runs it: x W1 and x W3 materialized as
 *               [T, h] tensors (hmx_gemm), silu(a) * b in place, then @ W2;
 *   swiglu      hmx_swiglu, blocked over h (block = the backend's choice);
 *   mhffn       hmx_mhffn, per-head SwiGLU of width f = E * de;
 *   flashmhf    hmx_flashmhf, E gated sub-networks of width de, blocked.
 * The SwiGLU width h is chosen so that 3 d h is within 0.5% of flashmhf's
 * parameter count (rounded to a multiple of 64). */
#define _POSIX_C_SOURCE 200809L
#include "bench_study.h"
#include "hmx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#define STUDY_FORK 1
#include <sys/wait.h>
#include <unistd.h>
#endif

typedef struct ffn_cfg { int64_t d, heads, dh, e, de; } ffn_cfg;

/* The FlashMHF paper's configurations (d, H, d_h, E, d_e). */
static const ffn_cfg k_cfgs[] = {{768, 6, 128, 8, 256}, {1024, 8, 128, 7, 384}};
/* --size small: one toy configuration, for the smoke test. */
static const ffn_cfg k_small_cfg = {64, 2, 32, 4, 32};

enum { V_SWIGLU_MAT, V_SWIGLU, V_MHFFN, V_FLASHMHF, V_COUNT };
static const char *const k_vname[V_COUNT] = {"swiglu-mat", "swiglu", "mhffn", "flashmhf"};

typedef struct ffn_run {
  const hmx_study *S;
  hmx_context ctx;
  int variant;
  int64_t t, d, heads, dh, e, de, h; /* h: swiglu width */
  float *x, *y, *w_in, *gate, *w1, *w3, *w2, *w_out, *ha, *hb;
} ffn_run;

typedef struct ffn_result {
  int ok;
  double ms;
  int64_t params, working, peak;
  char err[160];
} ffn_result;

static int64_t flash_params(const ffn_cfg *c) {
  int64_t hd = c->heads * c->dh;
  return 2 * c->d * hd + hd * c->e + 3 * c->heads * c->e * c->dh * c->de;
}

static int64_t swiglu_width(const ffn_cfg *c) {
  int64_t h = (int64_t)llround((double)flash_params(c) / (3.0 * (double)c->d) / 64.0) * 64;
  return h < 64 ? 64 : h;
}

static int run_variant(void *p) {
  ffn_run *r = p;
  hmx_status st = HMX_OK;
  hmx_tensor x = hmx_tensor_2d(r->x, HMX_F32, r->t, r->d), y = hmx_tensor_2d(r->y, HMX_F32, r->t, r->d);
  int64_t hd = r->heads * r->dh;
  if (r->variant == V_SWIGLU_MAT) {
    hmx_tensor w1 = hmx_tensor_2d(r->w1, HMX_F32, r->d, r->h), w3 = hmx_tensor_2d(r->w3, HMX_F32, r->d, r->h);
    hmx_tensor w2 = hmx_tensor_2d(r->w2, HMX_F32, r->h, r->d);
    hmx_tensor a = hmx_tensor_2d(r->ha, HMX_F32, r->t, r->h), b = hmx_tensor_2d(r->hb, HMX_F32, r->t, r->h);
    st = hmx_gemm(&r->ctx, &x, &w1, 0, NULL, &a);
    if (st == HMX_OK) st = hmx_gemm(&r->ctx, &x, &w3, 0, NULL, &b);
    if (st == HMX_OK) {
      int64_t n = r->t * r->h;
      for (int64_t i = 0; i < n; i++) r->ha[i] = hmx_siluf(r->ha[i]) * r->hb[i];
      st = hmx_gemm(&r->ctx, &a, &w2, 0, NULL, &y);
    }
  } else if (r->variant == V_SWIGLU) {
    hmx_tensor w1 = hmx_tensor_2d(r->w1, HMX_F32, r->d, r->h), w3 = hmx_tensor_2d(r->w3, HMX_F32, r->d, r->h);
    hmx_tensor w2 = hmx_tensor_2d(r->w2, HMX_F32, r->h, r->d);
    st = hmx_swiglu(&r->ctx, &x, &w1, &w3, &w2, 0, &y);
  } else if (r->variant == V_MHFFN) {
    int64_t f = r->e * r->de;
    hmx_tensor w_in = hmx_tensor_2d(r->w_in, HMX_F32, r->d, hd);
    hmx_tensor w1 = hmx_tensor_3d(r->w1, HMX_F32, r->heads, r->dh, f);
    hmx_tensor w3 = hmx_tensor_3d(r->w3, HMX_F32, r->heads, r->dh, f);
    hmx_tensor w2 = hmx_tensor_3d(r->w2, HMX_F32, r->heads, f, r->dh);
    hmx_tensor w_out = hmx_tensor_2d(r->w_out, HMX_F32, hd, r->d);
    st = hmx_mhffn(&r->ctx, &x, &w_in, &w1, &w3, &w2, &w_out, &y);
  } else {
    hmx_tensor w_in = hmx_tensor_2d(r->w_in, HMX_F32, r->d, hd);
    hmx_tensor gate = hmx_tensor_3d(r->gate, HMX_F32, r->heads, r->dh, r->e);
    hmx_tensor wk = hmx_tensor_4d(r->w1, HMX_F32, r->heads, r->e, r->dh, r->de);
    hmx_tensor wu = hmx_tensor_4d(r->w3, HMX_F32, r->heads, r->e, r->dh, r->de);
    hmx_tensor wv = hmx_tensor_4d(r->w2, HMX_F32, r->heads, r->e, r->de, r->dh);
    hmx_tensor w_out = hmx_tensor_2d(r->w_out, HMX_F32, hd, r->d);
    st = hmx_flashmhf(&r->ctx, &x, &w_in, &gate, &wk, &wu, &wv, &w_out, 0, &y);
  }
  return st != HMX_OK;
}

/* Weights scaled by 1/sqrt(fan-in) keep the activations O(1). */
static float *weights(int64_t n, int64_t fan_in, uint64_t seed) {
  float *w = hmx_study_rand(n, seed);
  if (w) {
    float s = 1.0f / sqrtf((float)fan_in);
    for (int64_t i = 0; i < n; i++) w[i] *= s;
  }
  return w;
}

/* Allocates what `variant` reads and writes, runs it, fills *res. */
static void measure_variant(const hmx_study *S, const ffn_cfg *c, int64_t t, int variant,
                            ffn_result *res) {
  ffn_run r;
  memset(&r, 0, sizeof r);
  memset(res, 0, sizeof *res);
  r.S = S;
  r.ctx = hmx_study_context(S);
  r.variant = variant;
  r.t = t; r.d = c->d; r.heads = c->heads; r.dh = c->dh; r.e = c->e; r.de = c->de;
  r.h = swiglu_width(c);
  int64_t hd = c->heads * c->dh, f = c->e * c->de;
  r.x = hmx_study_rand(t * c->d, 1);
  r.y = hmx_study_rand(t * c->d, 2); /* touched: the output is the caller's */
  int ok = r.x && r.y;
  if (variant == V_SWIGLU_MAT || variant == V_SWIGLU) {
    r.w1 = weights(c->d * r.h, c->d, 3);
    r.w3 = weights(c->d * r.h, c->d, 4);
    r.w2 = weights(r.h * c->d, r.h, 5);
    ok = ok && r.w1 && r.w3 && r.w2;
    res->params = 3 * c->d * r.h;
  } else {
    r.w_in = weights(c->d * hd, c->d, 6);
    r.w_out = weights(hd * c->d, hd, 7);
    r.w1 = weights(c->heads * c->dh * f, c->dh, 3);
    r.w3 = weights(c->heads * c->dh * f, c->dh, 4);
    r.w2 = weights(c->heads * f * c->dh, c->de, 5);
    ok = ok && r.w_in && r.w_out && r.w1 && r.w3 && r.w2;
    res->params = 2 * c->d * hd + 3 * c->heads * c->dh * f;
    if (variant == V_FLASHMHF) {
      r.gate = weights(c->heads * c->dh * c->e, c->dh, 8);
      ok = ok && r.gate;
      res->params += c->heads * c->dh * c->e;
    }
  }
  if (!ok) {
    snprintf(res->err, sizeof res->err, "out of memory for the inputs");
  } else {
    /* Start the backend's runtime (OpenMP threads, their stacks and malloc
     * arenas) with a gemm large enough to use every thread, its buffers freed
     * again, so none of that is counted as the op's working memory. */
    {
      float *wa = hmx_study_rand(256 * 256, 9), *wc = malloc(256 * 256 * sizeof(float));
      if (wa && wc) {
        hmx_tensor a2 = hmx_tensor_2d(wa, HMX_F32, 256, 256), c2 = hmx_tensor_2d(wc, HMX_F32, 256, 256);
        (void)hmx_gemm(&r.ctx, &a2, &a2, 0, NULL, &c2);
      }
      free(wa);
      free(wc);
      if (variant != V_SWIGLU_MAT) { /* and the op's code pages: one token */
        r.t = 1;
        (void)run_variant(&r);
        r.t = t;
      }
    }
    int reset = hmx_study_reset_peak();
    int64_t before = hmx_study_rss();
    if (variant == V_SWIGLU_MAT) { /* the materialized hidden tensors are the op's own */
      r.ha = malloc((size_t)(t * r.h) * sizeof(float));
      r.hb = malloc((size_t)(t * r.h) * sizeof(float));
    }
    if (variant == V_SWIGLU_MAT && (!r.ha || !r.hb)) {
      snprintf(res->err, sizeof res->err, "out of memory for the [T, h] hidden tensors");
    } else if (run_variant(&r) != 0) {
      snprintf(res->err, sizeof res->err, "%s", hmx_last_error());
    } else {
      int64_t peak = hmx_study_peak_rss();
      res->peak = reset == 0 ? peak : -1;
      res->working = reset == 0 && peak >= 0 && before >= 0 ? peak - before : -1;
      res->ms = hmx_study_time_ms(S, run_variant, &r);
      res->ok = res->ms >= 0;
      if (!res->ok) snprintf(res->err, sizeof res->err, "%s", hmx_last_error());
    }
  }
  free(r.x); free(r.y); free(r.w_in); free(r.gate); free(r.w1); free(r.w3); free(r.w2);
  free(r.w_out); free(r.ha); free(r.hb);
}

/* measure_variant in a child process (where fork exists). */
static void measure_isolated(const hmx_study *S, const ffn_cfg *c, int64_t t, int variant,
                             ffn_result *res) {
#if defined(STUDY_FORK)
  int fd[2];
  fflush(stdout);
  if (pipe(fd) == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      measure_variant(S, c, t, variant, res);
      ssize_t w = write(fd[1], res, sizeof *res);
      _exit(w == (ssize_t)sizeof *res ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0) {
      ssize_t got = read(fd[0], res, sizeof *res);
      int status = 0;
      waitpid(pid, &status, 0);
      close(fd[0]);
      if (got == (ssize_t)sizeof *res) return;
      memset(res, 0, sizeof *res);
      snprintf(res->err, sizeof res->err, "the measuring process died (status %d)", status);
      return;
    }
    close(fd[0]);
  }
#endif
  measure_variant(S, c, t, variant, res); /* in process: RSS numbers less isolated */
}

static void fmt_bytes(char *buf, size_t n, int64_t bytes, double unit) {
  if (bytes < 0) snprintf(buf, n, "n/a");
  else snprintf(buf, n, "%.1f", (double)bytes / unit);
}

int hmx_study_ffn(const hmx_study *S) {
  int failed = 0;
  int64_t t = S->small ? 16 : 8192;
  printf("\nstudy ffn: backend %s, T = %lld tokens; working = RSS growth during the op "
         "(VmHWM - VmRSS before), peak = process VmHWM\n",
         hmx_backend_name(S->be), (long long)t);
  printf("%-28s %-10s %8s %10s %7s %11s %9s %9s\n", "config", "variant", "params_M", "median_ms",
         "x flash", "working_KiB", "x flash", "peak_MiB");
  size_t ncfg = S->small ? 1 : sizeof k_cfgs / sizeof k_cfgs[0];
  for (size_t i = 0; i < ncfg; i++) {
    const ffn_cfg *c = S->small ? &k_small_cfg : &k_cfgs[i];
    char name[64];
    snprintf(name, sizeof name, "d%lld H%lld dh%lld E%lld de%lld", (long long)c->d,
             (long long)c->heads, (long long)c->dh, (long long)c->e, (long long)c->de);
    ffn_result res[V_COUNT];
    for (int v = 0; v < V_COUNT; v++) measure_isolated(S, c, t, v, &res[v]);
    const ffn_result *fl = &res[V_FLASHMHF];
    for (int v = 0; v < V_COUNT; v++) {
      const ffn_result *r = &res[v];
      if (!r->ok) {
        printf("%-28s %-10s %s\n", name, k_vname[v], r->err[0] ? r->err : "failed");
        failed++;
        continue;
      }
      char wk[32], pk[32], xt[16] = "-", xw[16] = "-";
      fmt_bytes(wk, sizeof wk, r->working, 1024.0);
      fmt_bytes(pk, sizeof pk, r->peak, 1024.0 * 1024.0);
      if (fl->ok && fl->ms > 0) snprintf(xt, sizeof xt, "%.2f", r->ms / fl->ms);
      if (fl->ok && fl->working > 0 && r->working >= 0)
        snprintf(xw, sizeof xw, "%.1f", (double)r->working / (double)fl->working);
      printf("%-28s %-10s %8.2f %10.2f %7s %11s %9s %9s\n", name, k_vname[v],
             (double)r->params * 1e-6, r->ms, xt, wk, xw, pk);
    }
    fflush(stdout);
  }
  return failed;
}
