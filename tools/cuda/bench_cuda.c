/* The H100 benchmark driver for the cuda backend (tools/cuda/bench_h100.sh,
 * docs/CUDA.md "Speed"): hadamix's kernels on DEVICE memory
 * (HMX_MEMORY_CUDA), timed with CUDA events, next to the device-to-device
 * copy bandwidth of the same GPU. One JSON object per line on stdout or
 * --out FILE; tools/cuda/bench_table.py joins it with the PyTorch / Dao-AILab
 * side (tools/cuda/bench_torch.py).
 *
 *   hmx-cuda-bench [--out FILE] [--mib M] [--reps R] [--quick] [--only LIST]
 *                  [--fwht-n LIST]
 *
 * fwht: every size of the table below, f32 / bf16 / f16, inputs of M MiB
 * (default 1024: cold L2) out of place; each timed call is checked against
 * ref on its first rows (bit for bit) so a broken kernel is never timed.
 * Medians of R calls (default 15). gemm and attention: the shapes of issue 5. */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"

#include "cuda_check.h"
#include "cuda_kernels.h" /* hmx_cuda_attention_reruns */
#include "fp32_peak.h"
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static int reps = 15, quick;
static const char *only; /* --only LIST: comma-separated kinds (fwht, gemm, attention) */
/* kind is one of the comma-separated names of --only (whole names only:
 * "attention" does not select "attention_tier") */
static int want(const char *kind) {
  if (!only) return 1;
  size_t n = strlen(kind);
  for (const char *p = only; (p = strstr(p, kind)) != NULL; p += n)
    if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}
static size_t mib = 1024;
/* --fwht-n LIST: only these row lengths of the fwht table (comma-separated,
 * e.g. 1792,2560; for A/B runs of a few sizes), parsed once by parse_fwht_n */
enum { MAX_FWHT_N = 64 };
static int64_t fwht_ns[MAX_FWHT_N];
static int n_fwht_ns; /* 0: every size */
static int want_n(int64_t n) {
  if (n_fwht_ns == 0) return 1;
  for (int i = 0; i < n_fwht_ns; i++)
    if (fwht_ns[i] == n) return 1;
  return 0;
}
/* Fills fwht_ns from LIST; 0 (with a message) unless it is 1 to MAX_FWHT_N
 * positive integers separated by commas. */
static int parse_fwht_n(const char *list) {
  for (const char *p = list;;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v <= 0 || (*end != ',' && *end != '\0') || n_fwht_ns == MAX_FWHT_N) {
      fprintf(stderr, "hmx-cuda-bench: --fwht-n wants row lengths like 1792,2560, not '%s'\n", list);
      return 0;
    }
    fwht_ns[n_fwht_ns++] = v;
    if (*end == '\0') return 1;
    p = end + 1;
  }
}

#define HK(call)                                                                        \
  do {                                                                                  \
    hmx_status s_ = (call);                                                             \
    if (s_ != HMX_OK) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hmx_last_error());  \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static uint64_t rng = 0x243F6A8885A308D3ull;
static float rnd(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (float)(z >> 40) * 0x1p-23f - 1.0f;
}

static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Median over `reps` of the event time of fn(arg), after 2 warm-up calls. */
typedef void (*bench_fn)(void *arg);
static float time_median(bench_fn fn, void *arg, int r) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  fn(arg);
  fn(arg);
  CK(cudaDeviceSynchronize());
  float *t = malloc((size_t)r * sizeof *t);
  for (int i = 0; i < r; i++) {
    CK(cudaEventRecord(a, 0));
    fn(arg);
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&t[i], a, b));
  }
  qsort(t, (size_t)r, sizeof *t, cmp_f);
  float m = t[r / 2];
  free(t);
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return m;
}

/* Device buffer of `bytes` filled with random data of dtype dt: a 64 MiB
 * random chunk made on the host, repeated on the device. */
static void *dev_random(size_t bytes, hmx_dtype dt) {
  size_t chunk = (size_t)64 << 20;
  if (chunk > bytes) chunk = bytes;
  unsigned char *h = malloc(chunk);
  size_t es = hmx_dtype_size(dt);
  for (size_t i = 0; i + es <= chunk; i += es) {
    float f = rnd();
    if (dt == HMX_F32) memcpy(h + i, &f, 4);
    else {
      uint16_t v = dt == HMX_BF16 ? hmx_f32_to_bf16(f) : hmx_f32_to_f16(f);
      memcpy(h + i, &v, 2);
    }
  }
  void *d;
  CK(cudaMalloc(&d, bytes));
  for (size_t off = 0; off < bytes; off += chunk) {
    size_t n = bytes - off < chunk ? bytes - off : chunk;
    CK(cudaMemcpy((char *)d + off, h, n, cudaMemcpyHostToDevice));
  }
  free(h);
  return d;
}

/* ------------------------------------------------------------------ FP32 adds */

/* one launch of the probe; *(double *)p: the adds it does */
static void run_fp32_adds(void *p) { *(double *)p = hmx_bench_fp32_add_launch(); }

/* ------------------------------------------------------------------ copy */

typedef struct copy_arg { void *dst; const void *src; size_t bytes; } copy_arg;
static void run_copy(void *p) {
  copy_arg *c = p;
  CK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0));
}

/* ------------------------------------------------------------------ fwht */

typedef struct fwht_arg {
  hmx_context ctx;
  hmx_tensor x, y, alpha, beta;
  int m, mix;
} fwht_arg;
static void run_fwht(void *p) {
  fwht_arg *a = p;
  if (a->mix) HK(hmx_hadamard_mix(&a->ctx, &a->x, &a->alpha, &a->beta, &a->y));
  else HK(hmx_fwht_factor(&a->ctx, &a->x, &a->y, 0.125f, a->m));
}

/* The first `rows` rows of a's output against ref on the host, bytewise. */
static int verify(const fwht_arg *a, int64_t rows) {
  int64_t n = a->x.shape[1];
  size_t es = hmx_dtype_size(a->x.dtype), bytes = (size_t)(rows * n) * es;
  void *hx = malloc(bytes), *hy = malloc(bytes), *want = malloc(bytes);
  float *al = malloc((size_t)n * 4), *be = malloc((size_t)n * 4);
  CK(cudaMemcpy(hx, a->x.data, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hy, a->y.data, bytes, cudaMemcpyDeviceToHost));
  hmx_context ref = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  hmx_tensor x = hmx_tensor_2d(hx, a->x.dtype, rows, n), w = hmx_tensor_2d(want, a->x.dtype, rows, n);
  if (a->mix) {
    CK(cudaMemcpy(al, a->alpha.data, (size_t)n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(be, a->beta.data, (size_t)n * 4, cudaMemcpyDeviceToHost));
    hmx_tensor ta = hmx_tensor_1d(al, HMX_F32, n), tb = hmx_tensor_1d(be, HMX_F32, n);
    HK(hmx_hadamard_mix(&ref, &x, &ta, &tb, &w));
  } else {
    HK(hmx_fwht_factor(&ref, &x, &w, 0.125f, a->m));
  }
  int ok = memcmp(hy, want, bytes) == 0;
  free(hx), free(hy), free(want), free(al), free(be);
  return ok;
}

static void bench_fwht(const hmx_backend *cuda, double copy_gbs) {
  static const int64_t sizes[][2] = {
      /* n, m (0: automatic) */
      {256, 0},   {512, 0},   {1024, 0},   {2048, 0},   {4096, 0},    {8192, 0},
      {16384, 0}, {32768, 0}, {65536, 0},  {1048576, 0},
      {384, 0},   {768, 0},   {1536, 0},   {3072, 0},   {6144, 0},    {12288, 0},  {24576, 0},
      {640, 0},   {1280, 0},  {2560, 0},   {5120, 0},   {10240, 0},   {20480, 0},
      {896, 0},   {1792, 0},  {3584, 0},   {7168, 0},   {14336, 0},   {28672, 0},
      {1280, 40}, {2560, 40}, {5120, 40},  {10240, 40}, {20480, 40},  {40960, 40},
      /* one pass by a thread-block cluster above 32768 (cuda/fwht_impl.cuh, fwht_cluster) */
      {40960, 0}, {49152, 0}, {57344, 0},  {81920, 40}, {131072, 0}};
  static const hmx_dtype dts[3] = {HMX_F32, HMX_BF16, HMX_F16};
  size_t bytes = mib << 20;
  for (int d = 0; d < 3; d++) {
    size_t es = hmx_dtype_size(dts[d]);
    void *x = dev_random(bytes, dts[d]), *y;
    CK(cudaMalloc(&y, bytes));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      int64_t n = sizes[i][0];
      if ((quick && n != 1024 && n != 16384 && n != 768) || !want_n(n)) continue;
      int64_t rows = (int64_t)(bytes / ((size_t)n * es));
      fwht_arg a;
      memset(&a, 0, sizeof a);
      a.ctx.backend = cuda;
      a.m = (int)sizes[i][1];
      a.x = hmx_tensor_2d(x, dts[d], rows, n);
      a.y = hmx_tensor_2d(y, dts[d], rows, n);
      a.x.memory = a.y.memory = HMX_MEMORY_CUDA;
      float ms = time_median(run_fwht, &a, reps);
      int ok = verify(&a, rows < 3 ? rows : 3);
      double moved = 2.0 * (double)rows * (double)n * (double)es;
      fprintf(out,
              "{\"kind\":\"fwht\",\"impl\":\"hmx\",\"dtype\":\"%s\",\"n\":%lld,\"m\":%d,"
              "\"rows\":%lld,\"ms\":%.5f,\"gbs\":%.2f,\"pct_copy\":%.2f,\"bitexact\":%s}\n",
              hmx_dtype_name(dts[d]), (long long)n, a.m, (long long)rows, ms, moved / ms * 1e-6,
              100.0 * moved / ms * 1e-6 / copy_gbs, ok ? "true" : "false");
      fflush(out);
    }
    /* hadamard_mix at two model widths */
    for (int64_t n = 768; n <= 4096; n += 4096 - 768) {
      if (n_fwht_ns > 0) continue; /* an A/B of chosen sizes: fwht only */
      int64_t rows = (int64_t)(bytes / ((size_t)n * es));
      fwht_arg a;
      memset(&a, 0, sizeof a);
      a.ctx.backend = cuda;
      a.mix = 1;
      a.x = hmx_tensor_2d(x, dts[d], rows, n);
      a.y = hmx_tensor_2d(y, dts[d], rows, n);
      void *al = dev_random((size_t)n * 4, HMX_F32), *be = dev_random((size_t)n * 4, HMX_F32);
      a.alpha = hmx_tensor_1d(al, HMX_F32, n);
      a.beta = hmx_tensor_1d(be, HMX_F32, n);
      a.x.memory = a.y.memory = a.alpha.memory = a.beta.memory = HMX_MEMORY_CUDA;
      float ms = time_median(run_fwht, &a, reps);
      int ok = verify(&a, 3);
      double moved = 2.0 * (double)rows * (double)n * (double)es;
      fprintf(out,
              "{\"kind\":\"hadamard_mix\",\"impl\":\"hmx\",\"dtype\":\"%s\",\"n\":%lld,"
              "\"rows\":%lld,\"ms\":%.5f,\"gbs\":%.2f,\"pct_copy\":%.2f,\"bitexact\":%s}\n",
              hmx_dtype_name(dts[d]), (long long)n, (long long)rows, ms, moved / ms * 1e-6,
              100.0 * moved / ms * 1e-6 / copy_gbs, ok ? "true" : "false");
      CK(cudaFree(al));
      CK(cudaFree(be));
    }
    CK(cudaFree(x));
    CK(cudaFree(y));
  }
  /* small batch: latency of one 8 x 1024 call (launch included) */
  for (int d = 0; d < 3; d++) {
    size_t b = (size_t)8 * 1024 * hmx_dtype_size(dts[d]);
    void *x = dev_random(b, dts[d]), *y;
    CK(cudaMalloc(&y, b));
    fwht_arg a;
    memset(&a, 0, sizeof a);
    a.ctx.backend = cuda;
    a.x = hmx_tensor_2d(x, dts[d], 8, 1024);
    a.y = hmx_tensor_2d(y, dts[d], 8, 1024);
    a.x.memory = a.y.memory = HMX_MEMORY_CUDA;
    float ms = time_median(run_fwht, &a, 200);
    fprintf(out, "{\"kind\":\"latency\",\"what\":\"fwht 8x1024 %s\",\"impl\":\"hmx\",\"ms\":%.5f}\n",
            hmx_dtype_name(dts[d]), ms);
    CK(cudaFree(x));
    CK(cudaFree(y));
  }
}

/* ------------------------------------------------------------------ gemm, attention */

typedef struct gemm_arg { hmx_context ctx; hmx_tensor a, b, c; } gemm_arg;
static void run_gemm(void *p) {
  gemm_arg *g = p;
  HK(hmx_gemm(&g->ctx, &g->a, &g->b, 0, NULL, &g->c));
}

static void bench_gemm(const hmx_backend *cuda) {
  static const int64_t kn[4][2] = {{768, 768}, {768, 2048}, {2048, 768}, {1536, 1536}};
  static const int64_t ms[2] = {4096, 16384};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) {
      int64_t m = ms[i], k = kn[j][0], n = kn[j][1];
      if (quick && (i || j)) continue;
      gemm_arg g;
      memset(&g, 0, sizeof g);
      g.ctx.backend = cuda;
      void *a = dev_random((size_t)(m * k) * 4, HMX_F32), *b = dev_random((size_t)(k * n) * 4, HMX_F32), *c;
      CK(cudaMalloc(&c, (size_t)(m * n) * 4));
      g.a = hmx_tensor_2d(a, HMX_F32, m, k);
      g.b = hmx_tensor_2d(b, HMX_F32, k, n);
      g.c = hmx_tensor_2d(c, HMX_F32, m, n);
      g.a.memory = g.b.memory = g.c.memory = HMX_MEMORY_CUDA;
      float t = time_median(run_gemm, &g, 3);
      fprintf(out, "{\"kind\":\"gemm\",\"impl\":\"hmx\",\"m\":%lld,\"k\":%lld,\"n\":%lld,"
                   "\"ms\":%.4f,\"tflops\":%.3f}\n",
              (long long)m, (long long)k, (long long)n, t, 2.0 * m * n * k / t * 1e-9);
      fflush(out);
      CK(cudaFree(a));
      CK(cudaFree(b));
      CK(cudaFree(c));
    }
}

typedef struct att_arg { hmx_context ctx; hmx_tensor q, k, v, o; hmx_attention_params p; } att_arg;
static void run_att(void *p) {
  att_arg *a = p;
  HK(hmx_attention(&a->ctx, &a->q, &a->k, &a->v, &a->p, &a->o));
}

/* kind "attention" (the exact tier, issue 5's table) or, with tier =
 * HMX_TIER_FAST or for the tier comparison, kind "attention_tier" with impl
 * "hmx-exact" / "hmx-fast" (docs/CUDA.md, fast tier) */
static void bench_attention_run(const hmx_backend *cuda, const char *what, int64_t b, int64_t sq,
                                int64_t skv, int64_t h, int64_t d, int causal, int r,
                                const char *kind, hmx_tier tier) {
  att_arg a;
  memset(&a, 0, sizeof a);
  a.ctx.backend = cuda;
  a.ctx.tier = tier;
  size_t qb = (size_t)(b * sq * h * d) * 4, kb = (size_t)(b * skv * h * d) * 4;
  void *q = dev_random(qb, HMX_F32), *k = dev_random(kb, HMX_F32), *v = dev_random(kb, HMX_F32), *o;
  CK(cudaMalloc(&o, qb));
  a.q = hmx_tensor_4d(q, HMX_F32, b, sq, h, d);
  a.k = hmx_tensor_4d(k, HMX_F32, b, skv, h, d);
  a.v = hmx_tensor_4d(v, HMX_F32, b, skv, h, d);
  a.o = hmx_tensor_4d(o, HMX_F32, b, sq, h, d);
  a.q.memory = a.k.memory = a.v.memory = a.o.memory = HMX_MEMORY_CUDA;
  a.p.causal = causal;
  a.p.q_offset = -1;
  const long long r0 = hmx_cuda_attention_reruns();
  float t = time_median(run_att, &a, r);
  /* tiles whose guessed row maxima were wrong (cuda/attention_maxguess.cuh),
   * over all the calls timed (warm-up included) */
  const long long reruns = hmx_cuda_attention_reruns() - r0;
  double flops = 4.0 * b * h * sq * skv * d * (causal && sq > 1 ? 0.5 : 1.0);
  const char *impl = strcmp(kind, "attention") == 0 ? "hmx"
                     : tier == HMX_TIER_FAST       ? "hmx-fast"
                                                   : "hmx-exact";
  fprintf(out, "{\"kind\":\"%s\",\"what\":\"%s\",\"impl\":\"%s\",\"b\":%lld,\"sq\":%lld,"
               "\"skv\":%lld,\"h\":%lld,\"d\":%lld,\"causal\":%d,\"ms\":%.4f,\"tflops\":%.3f,"
               "\"gbs\":%.1f,\"reruns\":%lld}\n",
          kind, what, impl, (long long)b, (long long)sq, (long long)skv, (long long)h, (long long)d, causal, t,
          flops / t * 1e-9, (2.0 * kb + 2.0 * qb) / t * 1e-6, reruns);
  fflush(out);
  CK(cudaFree(q));
  CK(cudaFree(k));
  CK(cudaFree(v));
  CK(cudaFree(o));
}

/* ------------------------------------------------------------------ staged 16-bit */

/* rmsnorm of [rows, 4096] bf16 on device memory: the norms' kernels take
 * f32, so the call stages the tensor through f32 device scratch (widen,
 * the f32 kernel, narrow; src/dev_stage.c), 8 bytes of scratch per element
 * from the scratch pool (cuda/scratch_pool.cu). Only with --only staged (no
 * target; docs/results/h100/scratch_pool/). GB/s: the bf16 tensor read and
 * written once, as a copy of it would. */
typedef struct norm_arg { hmx_context ctx; hmx_tensor x, w, y; } norm_arg;
static void run_norm(void *p) {
  norm_arg *a = p;
  HK(hmx_rmsnorm(&a->ctx, &a->x, &a->w, 1e-5f, &a->y));
}
static void bench_staged(const hmx_backend *cuda, double copy_gbs) {
  const int64_t d = 4096, rows = (int64_t)((mib << 20) / (size_t)(d * 2));
  norm_arg a;
  memset(&a, 0, sizeof a);
  a.ctx.backend = cuda;
  void *x = dev_random((size_t)(rows * d) * 2, HMX_BF16), *y, *w = dev_random((size_t)d * 4, HMX_F32);
  CK(cudaMalloc(&y, (size_t)(rows * d) * 2));
  a.x = hmx_tensor_2d(x, HMX_BF16, rows, d);
  a.y = hmx_tensor_2d(y, HMX_BF16, rows, d);
  a.w = hmx_tensor_1d(w, HMX_F32, d);
  a.x.memory = a.y.memory = a.w.memory = HMX_MEMORY_CUDA;
  float ms = time_median(run_norm, &a, reps);
  double moved = 2.0 * (double)(rows * d) * 2.0;
  fprintf(out, "{\"kind\":\"staged\",\"op\":\"rmsnorm\",\"impl\":\"hmx\",\"dtype\":\"bf16\","
               "\"rows\":%lld,\"d\":%lld,\"ms\":%.5f,\"gbs\":%.2f,\"pct_copy\":%.2f}\n",
          (long long)rows, (long long)d, ms, moved / ms * 1e-6, 100.0 * moved / ms * 1e-6 / copy_gbs);
  fflush(out);
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(w));
}

static void bench_attention_case(const hmx_backend *cuda, const char *what, int64_t b, int64_t sq,
                                 int64_t skv, int64_t h, int64_t d, int causal, int r) {
  bench_attention_run(cuda, what, b, sq, skv, h, d, causal, r, "attention", HMX_TIER_EXACT);
}

/* both tiers of one shape, one after the other in the same run */
static void bench_attention_tiers(const hmx_backend *cuda, const char *what, int64_t b, int64_t sq,
                                  int64_t skv, int64_t h, int64_t d, int causal, int r) {
  bench_attention_run(cuda, what, b, sq, skv, h, d, causal, r, "attention_tier", HMX_TIER_EXACT);
  bench_attention_run(cuda, what, b, sq, skv, h, d, causal, r, "attention_tier", HMX_TIER_FAST);
}

int main(int argc, char **argv) {
  out = stdout;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = fopen(argv[++i], "w");
      if (!out) { perror(argv[i]); return 1; }
    } else if (!strcmp(argv[i], "--mib") && i + 1 < argc) {
      mib = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--fwht-n") && i + 1 < argc) {
      if (!parse_fwht_n(argv[++i])) return 2;
    } else if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else {
      fprintf(stderr, "usage: hmx-cuda-bench [--out FILE] [--mib M] [--reps R] [--quick] [--only fwht,gemm,attention,staged,peak] [--fwht-n LIST]\n");
      return 2;
    }
  }
  if (reps < 1 || mib < 1) return 2;
  const hmx_backend *cuda = hmx_backend_find("cuda");
  if (!cuda || !hmx_backend_available(cuda)) {
    fprintf(stderr, "hmx-cuda-bench: no cuda backend or no GPU\n");
    return 77;
  }
  struct cudaDeviceProp prop;
  int drv = 0, rt = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  fprintf(out, "{\"kind\":\"gpu\",\"name\":\"%s\",\"sms\":%d,\"l2_mib\":%.1f,\"cuda_driver\":%d,"
               "\"cuda_runtime\":%d}\n",
          prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, drv, rt);

  /* device-to-device copy of the same size as the fwht inputs: read + write */
  size_t bytes = mib << 20;
  copy_arg c;
  c.bytes = bytes;
  c.src = dev_random(bytes, HMX_F32);
  CK(cudaMalloc(&c.dst, bytes));
  float ms = time_median(run_copy, &c, reps);
  double copy_gbs = 2.0 * (double)bytes / ms * 1e-6;
  fprintf(out, "{\"kind\":\"copy\",\"impl\":\"cudaMemcpy\",\"bytes\":%zu,\"ms\":%.5f,\"gbs\":%.2f}\n",
          bytes, ms, copy_gbs);
  CK(cudaFree((void *)c.src));
  CK(cudaFree(c.dst));

  /* the FP32 add rate: with the copy, the two ceilings of an fwht row
   * (tools/cuda/fp32_peak.cu; bench_table.py's "issue cap") */
  if (want("fwht") || want("peak")) {
    double adds = 0.0;
    float pms = time_median(run_fp32_adds, &adds, reps);
    fprintf(out, "{\"kind\":\"peak\",\"what\":\"fp32_add\",\"gops\":%.1f}\n",
            adds / pms * 1e-6);
  }
  if (want("fwht")) bench_fwht(cuda, copy_gbs);
  if (want("gemm")) bench_gemm(cuda);
  if (only && want("staged")) bench_staged(cuda, copy_gbs);
  if (want("attention")) {
    bench_attention_case(cuda, "prefill", 8, 1024, 1024, 12, 64, 1, 10);
    if (!quick) {
      bench_attention_case(cuda, "decode", 64, 1, 1024, 12, 64, 1, 10);
      bench_attention_case(cuda, "decode", 64, 1, 4096, 12, 64, 1, 10);
      /* no target: D = 128 heads (Llama's), attention_tiled<128> */
      bench_attention_case(cuda, "prefill", 4, 2048, 2048, 16, 128, 1, 10);
    }
    bench_attention_case(cuda, "decode step", 1, 1, 1024, 12, 64, 1, 100);
  }
  if (want("attention_tier")) { /* exact vs fast tier (TF32 tensor cores) */
    bench_attention_tiers(cuda, "prefill", 8, 1024, 1024, 12, 64, 1, 10);
    bench_attention_tiers(cuda, "prefill", 8, 1024, 1024, 12, 64, 0, 10);
    bench_attention_tiers(cuda, "prefill", 4, 2048, 2048, 16, 128, 1, 10);
    bench_attention_tiers(cuda, "decode", 64, 1, 4096, 12, 64, 1, 10);
  }
  if (out != stdout) fclose(out);
  return 0;
}
