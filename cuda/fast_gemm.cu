/* The cuda backend's fast tier (docs/NUMERICS.md, "Fast tier"): gemm through
 * cuBLASLt on tensor cores. f32 operands run with CUBLAS_COMPUTE_32F_FAST_TF32
 * (inputs rounded to TF32, products and sums in f32); bf16/f16 device
 * operands with CUBLAS_COMPUTE_32F (exact products, f32 sums, the result
 * rounded once to the output dtype). The bias goes through the epilogue
 * (CUBLASLT_EPILOGUE_BIAS, added in f32; f32 operands only). Bound:
 * NUMERICS.md "Bounds", gemm on tensor cores.
 *
 * What is created once: the cuBLASLt handle; per (shape, trans_b, bias,
 * dtype, alignment, workspace) one plan (operation descriptor, three
 * layouts and the heuristic's algorithm), kept until exit; per caller
 * stream one workspace (device calls; host calls own a fresh stream and run
 * without workspace). All of it is kept until the process exits (CUDA calls
 * in atexit handlers are unsafe), so compute-sanitizer --leak-check reports
 * the workspaces (32 MiB each). A mutex guards the tables and the bias pointer, which
 * is an attribute of the shared descriptor, until the matmul is queued.
 *
 * Row-major C[M][N] = A[M][K] B is column-major C^T = B^T A^T, so cuBLASLt's
 * "A" is our B (N x K column-major: trans_b = 0 stores B[K][N] as the N x K
 * column-major matrix with ld N; trans_b = 1 stores B[N][K] as K x N with
 * ld K, transposed) and its "B" is our A (K x M, ld K). */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <mutex>

#include "dev_math.cuh"
#include "job.cuh"

extern "C" {
#include "fast.h"
}

namespace {

using namespace hmx_cuda;

const size_t kWorkspaceBytes = (size_t)32 << 20;
const int kMaxPlans = 256, kMaxStreams = 16;

struct PlanKey {
  int64_t m, n, k;
  int trans_b, bias, dtype, align, ws;
};

struct Plan {
  PlanKey key;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
};

struct Workspace {
  cudaStream_t stream;
  void *ptr;
};

std::mutex lock;
cublasLtHandle_t handle;
int handle_ok = 0;
Plan plans[kMaxPlans];
int plan_count = 0;
Workspace workspaces[kMaxStreams];
int workspace_count = 0;

int same_key(const PlanKey &a, const PlanKey &b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.trans_b == b.trans_b && a.bias == b.bias &&
         a.dtype == b.dtype && a.align == b.align && a.ws == b.ws;
}

int lt_check(Job *j, cublasStatus_t e, const char *what) {
  if (e == CUBLAS_STATUS_SUCCESS) return 1;
  if (j->st == HMX_OK)
    j->st = hmx_fail(e == CUBLAS_STATUS_ALLOC_FAILED ? HMX_ERR_NO_MEMORY : HMX_ERR_INTERNAL,
                     "cuda fast %s: %s failed: %s", j->op, what, cublasLtGetStatusString(e));
  return 0;
}

/* The largest power of two <= 16 dividing every pointer: cuBLASLt picks
 * vectorized algorithms only when told the operands allow them. */
int alignment_of(const void *a, const void *b, const void *c, const void *bias) {
  uintptr_t u = (uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)bias | 16u;
  return (int)(u & (~u + 1));
}

cudaDataType_t cuda_type(hmx_dtype d) {
  return d == HMX_BF16 ? CUDA_R_16BF : d == HMX_F16 ? CUDA_R_16F : CUDA_R_32F;
}

/* Called with the lock held. NULL: cuBLASLt has no algorithm for it (the
 * caller then runs the exact kernel, which is within the bound too). */
Plan *plan_for(Job *j, const PlanKey &key) {
  for (int i = 0; i < plan_count; i++)
    if (same_key(plans[i].key, key)) return &plans[i];
  if (!handle_ok) {
    if (!lt_check(j, cublasLtCreate(&handle), "cublasLtCreate")) return NULL;
    handle_ok = 1;
  }
  if (plan_count == kMaxPlans) { /* a long-running process with many shapes: start over */
    for (int i = 0; i < plan_count; i++) {
      cublasLtMatmulDescDestroy(plans[i].desc);
      cublasLtMatrixLayoutDestroy(plans[i].la);
      cublasLtMatrixLayoutDestroy(plans[i].lb);
      cublasLtMatrixLayoutDestroy(plans[i].lc);
    }
    plan_count = 0;
  }
  Plan p;
  p.key = key;
  const cudaDataType_t t = cuda_type((hmx_dtype)key.dtype);
  const cublasComputeType_t compute =
      key.dtype == HMX_F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (!lt_check(j, cublasLtMatmulDescCreate(&p.desc, compute, CUDA_R_32F), "MatmulDescCreate"))
    return NULL;
  cublasOperation_t op_a = key.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b);
  if (key.bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    cudaDataType_t bt = CUDA_R_32F; /* hadamix's bias is f32 whatever the operands */
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
  }
  /* cuBLASLt "A" = our B, "B" = our A, D = C^T (column-major, N x M) */
  const uint64_t n = (uint64_t)key.n, m = (uint64_t)key.m, k = (uint64_t)key.k;
  int ok = lt_check(j, key.trans_b ? cublasLtMatrixLayoutCreate(&p.la, t, k, n, (int64_t)k)
                                   : cublasLtMatrixLayoutCreate(&p.la, t, n, k, (int64_t)n),
                    "MatrixLayoutCreate");
  ok = ok && lt_check(j, cublasLtMatrixLayoutCreate(&p.lb, t, k, m, (int64_t)k), "MatrixLayoutCreate");
  ok = ok && lt_check(j, cublasLtMatrixLayoutCreate(&p.lc, t, n, m, (int64_t)n), "MatrixLayoutCreate");
  cublasLtMatmulPreference_t pref = NULL;
  ok = ok && lt_check(j, cublasLtMatmulPreferenceCreate(&pref), "MatmulPreferenceCreate");
  int found = 0;
  if (ok) {
    size_t ws = key.ws ? kWorkspaceBytes : 0;
    uint32_t al = (uint32_t)key.align;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof al);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof al);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof al);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof al);
    cublasLtMatmulHeuristicResult_t res;
    int count = 0;
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.la, p.lb, p.lc, p.lc,
                                                       pref, 1, &res, &count);
    if (hs == CUBLAS_STATUS_SUCCESS && count > 0) {
      p.algo = res.algo;
      found = 1;
    } else if (hs != CUBLAS_STATUS_NOT_SUPPORTED) {
      lt_check(j, hs, "MatmulAlgoGetHeuristic");
    }
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (!found) { /* not cached: an unsupported shape asks again next time (rare) */
    cublasLtMatmulDescDestroy(p.desc);
    if (ok) {
      cublasLtMatrixLayoutDestroy(p.la);
      cublasLtMatrixLayoutDestroy(p.lb);
      cublasLtMatrixLayoutDestroy(p.lc);
    }
    return NULL;
  }
  plans[plan_count] = p;
  return &plans[plan_count++];
}

/* Called with the lock held: the workspace of a caller's stream, or NULL
 * (no workspace) when the table is full. */
void *workspace_for(Job *j, cudaStream_t s) {
  for (int i = 0; i < workspace_count; i++)
    if (workspaces[i].stream == s) return workspaces[i].ptr;
  if (workspace_count == kMaxStreams) return NULL;
  void *p = NULL;
  if (cudaMalloc(&p, kWorkspaceBytes) != cudaSuccess) {
    (void)cudaGetLastError(); /* no room for it: run without */
    return NULL;
  }
  (void)j;
  workspaces[workspace_count].stream = s;
  workspaces[workspace_count].ptr = p;
  workspace_count++;
  return p;
}

/* Queue C = A B (+ bias) on j->stream. Returns 0 when cuBLASLt has no
 * algorithm (nothing queued). */
int lt_gemm(Job *j, const void *d_a, const void *d_b, const float *d_bias, void *d_c, int64_t m,
            int64_t n, int64_t k, int trans_b, hmx_dtype dt) {
  std::lock_guard<std::mutex> guard(lock);
  void *ws = j->device ? workspace_for(j, j->stream) : NULL;
  PlanKey key = {m, n, k, trans_b, d_bias != NULL, (int)dt,
                 alignment_of(d_a, d_b, d_c, d_bias), ws != NULL};
  Plan *p = plan_for(j, key);
  if (!p) return 0;
  if (d_bias)
    cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &d_bias,
                                   sizeof d_bias);
  const float one = 1.0f, zero = 0.0f;
  lt_check(j, cublasLtMatmul(handle, p->desc, &one, d_b, p->la, d_a, p->lb, &zero, d_c, p->lc,
                             d_c, p->lc, &p->algo, ws, ws ? kWorkspaceBytes : 0, j->stream),
           "cublasLtMatmul");
  return 1;
}

} // namespace

/* Host buffers: copy in, run, copy back, like every host call of the
 * backend (cuda/job.cuh). K = 0, or a shape cuBLASLt declines, runs the
 * exact kernel (its result obeys the same bound). */
extern "C" hmx_status hmx_cuda_fast_gemm(const hmx_gemm_args *g) {
  if (g->k <= 0) return hmx_cuda_gemm(g);
  Job j;
  job_begin(&j, "gemm");
  int ran = 1;
  if (j.st == HMX_OK && g->m > 0 && g->n > 0) {
    const float *d_a = job_in(&j, g->a, g->m * g->k);
    const float *d_b = job_in(&j, g->b, g->k * g->n);
    const float *d_bias = job_in(&j, g->bias, g->n);
    float *d_c = job_out(&j, g->c, g->m * g->n);
    if (j.st == HMX_OK) ran = lt_gemm(&j, d_a, d_b, d_bias, d_c, g->m, g->n, g->k, g->trans_b, HMX_F32);
    if (ran) job_out_done(&j, g->c, d_c, g->m * g->n);
  }
  hmx_status s = job_end(&j);
  return s == HMX_OK && !ran ? hmx_cuda_gemm(g) : s;
}

/* Device buffers (a, b, c of c->io_dtype; bias f32), queued on c->stream. */
extern "C" hmx_status hmx_cuda_fast_dev_gemm(const hmx_gemm_args *g, const hmx_device_call *c) {
  const hmx_dtype dt = c->io_dtype;
  if (dt == HMX_F32 && g->k <= 0) return hmx_cuda_dev_gemm(g, c);
  Job j;
  job_begin_device(&j, "gemm", c->stream);
  int ran = 1;
  if (j.st == HMX_OK && g->m > 0 && g->n > 0) {
    if (dt != HMX_F32 && g->bias) {
      /* cuBLASLt's bias epilogue wants a bias of C's dtype with 16-bit C
       * (measured on cuBLASLt 13.0: no algorithm for an f32 bias), and
       * hadamix's bias is f32: rounding it first would add an error */
      j.st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda fast gemm: %s device operands take no bias "
                      "(add it separately, or use f32 operands)", hmx_dtype_name(dt));
    } else if (g->k <= 0) { /* 16-bit C = bias or 0: cuBLASLt takes no K = 0 */
      j.st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda fast gemm: K = 0 with %s operands",
                      hmx_dtype_name(dt));
    } else {
      ran = lt_gemm(&j, g->a, g->b, g->bias, g->c, g->m, g->n, g->k, g->trans_b, dt);
      if (!ran && dt != HMX_F32)
        j.st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda fast gemm: cuBLASLt has no %s algorithm for "
                        "%lld x %lld x %lld", hmx_dtype_name(dt), (long long)g->m,
                        (long long)g->k, (long long)g->n);
    }
  }
  hmx_status s = job_end(&j);
  return s == HMX_OK && !ran && dt == HMX_F32 ? hmx_cuda_dev_gemm(g, c) : s;
}

/* swiglu: a = x W1 and b = x W3 by cuBLASLt (TF32), g = silu(a) * b by
 * the exact tier's SiLU (one product), y = g W2 by cuBLASLt (bound:
 * NUMERICS.md "Bounds", swiglu on tensor cores). Host buffers, like the
 * exact swiglu of cuda/kernels.cu; d = 0 or h = 0 (cuBLASLt takes no empty
 * reduction), or a shape cuBLASLt declines, runs the exact kernel. */
extern "C" hmx_status hmx_cuda_fast_swiglu(const hmx_swiglu_args *s) {
  if (s->d <= 0 || s->h <= 0) return hmx_cuda_swiglu(s);
  Job j;
  job_begin(&j, "swiglu");
  int ran = 1;
  if (j.st == HMX_OK && s->t > 0 && s->d_out > 0) {
    const int64_t th = s->t * s->h;
    const float *d_x = job_in(&j, s->x, s->t * s->d);
    const float *d_w1 = job_in(&j, s->w1, s->d * s->h);
    const float *d_w3 = job_in(&j, s->w3, s->d * s->h);
    const float *d_w2 = job_in(&j, s->w2, s->h * s->d_out);
    float *d_a = job_alloc(&j, th), *d_b = job_alloc(&j, th);
    float *d_y = job_out(&j, s->y, s->t * s->d_out);
    if (j.st == HMX_OK) ran = lt_gemm(&j, d_x, d_w1, NULL, d_a, s->t, s->h, s->d, 0, HMX_F32);
    if (j.st == HMX_OK && ran) ran = lt_gemm(&j, d_x, d_w3, NULL, d_b, s->t, s->h, s->d, 0, HMX_F32);
    if (j.st == HMX_OK && ran) {
      swiglu_gate<<<grid_for(th, 256), 256, 0, j.stream>>>(d_a, d_b, th);
      job_launched(&j, "swiglu_gate");
    }
    if (j.st == HMX_OK && ran) ran = lt_gemm(&j, d_a, d_w2, NULL, d_y, s->t, s->d_out, s->h, 0, HMX_F32);
    if (ran) job_out_done(&j, s->y, d_y, s->t * s->d_out);
  }
  hmx_status st = job_end(&j);
  return st == HMX_OK && !ran ? hmx_cuda_swiglu(s) : st;
}

/* The cuda fast-tier table (src/fast.h, src/fast_registry.c). */
extern "C" const hmx_fast_ops hmx_cuda_fast_ops = {
    "cuda-fast",
    hmx_cuda_fast_gemm,
    "cuBLASLt matmul, TF32 tensor cores (bf16/f16 device operands: f32 accumulate), plan "
    "cached per shape",
    NULL,
    hmx_cuda_fast_attention,
    "flash attention on TF32 tensor cores (wmma), online softmax in 64-key tiles, exact-tier "
    "exp; D = 64, 128 and Sq >= 16 (else the exact kernel)",
    NULL,
    hmx_cuda_fast_swiglu, "cuBLASLt matmul x3 (TF32) + exact-tier silu", NULL,
    hmx_cuda_fast_dev_gemm,
    hmx_cuda_fast_dev_attention,
};
