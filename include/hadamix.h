/* hadamix — transformer kernels that give the same bits on every backend.
 *
 * Public C API. Every function validates its arguments and returns an
 * hmx_status; on failure hmx_last_error() gives a human-readable detail
 * message for the calling thread. Nothing here aborts on bad input.
 *
 * Conventions (see docs/NUMERICS.md for the exact evaluation order):
 *   - math is row-major, x is a row vector, y = x W with W stored [in, out];
 *   - tensors may be f32, bf16 or f16; compute is always f32, inputs are
 *     widened exactly and outputs rounded to nearest-even;
 *   - a NULL context means the default context (backend chosen by the
 *     HMX_BACKEND environment variable, else the best available).
 */
#ifndef HADAMIX_H
#define HADAMIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one place the version is written: CMake reads it from here (project
 * version, the shared library's SONAME, the CMake package and pkg-config). */
#define HMX_VERSION_MAJOR 0
#define HMX_VERSION_MINOR 1
#define HMX_VERSION_PATCH 0

/* Everything declared between HMX_API_BEGIN and HMX_API_END in the public
 * headers is the library's API. The library is compiled with hidden
 * visibility, so a shared libhadamix exports these declarations and nothing
 * else (cmake/HmxInstall.cmake; the test install_package checks the list). */
#if defined(__GNUC__) && !defined(_WIN32)
#define HMX_API_BEGIN _Pragma("GCC visibility push(default)")
#define HMX_API_END _Pragma("GCC visibility pop")
#else
#define HMX_API_BEGIN
#define HMX_API_END
#endif

HMX_API_BEGIN

/* ------------------------------------------------------------------ status */

typedef enum hmx_status {
  HMX_OK = 0,
  HMX_ERR_INVALID_ARGUMENT, /* NULL pointer, bad enum, bad parameter value */
  HMX_ERR_SHAPE,            /* tensor shapes do not fit the operation */
  HMX_ERR_DTYPE,            /* dtype not supported for this tensor */
  HMX_ERR_UNSUPPORTED,      /* valid request this build/op does not support (e.g. size) */
  HMX_ERR_NO_MEMORY,        /* allocation failed or size overflows */
  HMX_ERR_IO,               /* file could not be opened/read/written */
  HMX_ERR_FORMAT,           /* malformed file contents */
  HMX_ERR_NOT_FOUND,        /* unknown name (backend, op, tensor) */
  HMX_ERR_NOT_IMPLEMENTED,  /* backend leaves this op unimplemented */
  HMX_ERR_BACKEND_UNAVAILABLE, /* backend exists but cannot run on this machine */
  HMX_ERR_INTERNAL,         /* a bug in hadamix: please report */
  HMX_STATUS_COUNT
} hmx_status;

/* The library's version, "MAJOR.MINOR.PATCH": the HMX_VERSION_* it was built
 * with, which a program can compare with the headers it was compiled with. */
const char *hmx_version_string(void);

/* Fixed English description of a status code (never NULL). */
const char *hmx_status_string(hmx_status s);
/* Detail message of the last failing call on this thread ("" if none). */
const char *hmx_last_error(void);

/* ------------------------------------------------------------------ tensors */

typedef enum hmx_dtype {
  HMX_F32 = 0,
  HMX_BF16 = 1,
  HMX_F16 = 2,
  HMX_I32 = 3, /* indices and positions only */
  HMX_I64 = 4, /* indices only (read from files) */
  HMX_DTYPE_COUNT
} hmx_dtype;

#define HMX_MAX_DIMS 4

/* Where a tensor's data lives (see "device memory" below). Zero, the value
 * every hmx_tensor_make / zero-initialised tensor has, is host memory. */
typedef enum hmx_memory {
  HMX_MEMORY_HOST = 0,
  HMX_MEMORY_CUDA = 1 /* CUDA device memory (cudaMalloc, cudaMallocAsync, a framework's tensor) */
} hmx_memory;

/* A view of caller-owned memory. stride[] is in elements; a tensor whose
 * strides are all zero is contiguous row-major (hmx_tensor_make fills them).
 * Strides must be positive; outputs must not overlap inputs unless an op says
 * it works in place. */
typedef struct hmx_tensor {
  void *data;
  hmx_dtype dtype;
  int ndim;
  int64_t shape[HMX_MAX_DIMS];
  int64_t stride[HMX_MAX_DIMS];
  hmx_memory memory; /* HMX_MEMORY_HOST (0) unless set */
} hmx_tensor;

/* Contiguous row-major view: ndim in 1..HMX_MAX_DIMS. */
hmx_tensor hmx_tensor_make(void *data, hmx_dtype dtype, int ndim, const int64_t *shape);
hmx_tensor hmx_tensor_1d(void *data, hmx_dtype dtype, int64_t n0);
hmx_tensor hmx_tensor_2d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1);
hmx_tensor hmx_tensor_3d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1, int64_t n2);
hmx_tensor hmx_tensor_4d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1, int64_t n2,
                         int64_t n3);
/* Number of elements, or -1 if the shape is invalid or overflows. */
int64_t hmx_tensor_numel(const hmx_tensor *t);
const char *hmx_dtype_name(hmx_dtype d);
size_t hmx_dtype_size(hmx_dtype d);

/* Exact scalar conversions used everywhere (round to nearest even). */
float hmx_bf16_to_f32(uint16_t h);
uint16_t hmx_f32_to_bf16(float f);
float hmx_f16_to_f32(uint16_t h);
uint16_t hmx_f32_to_f16(float f);

/* ------------------------------------------------------------------ backends */

typedef struct hmx_backend hmx_backend; /* dispatch table, see src/backend.h */

/* Number of backends compiled in (including ones this machine cannot run). */
int hmx_backend_count(void);
const hmx_backend *hmx_backend_at(int i);
const char *hmx_backend_name(const hmx_backend *b);
const char *hmx_backend_description(const hmx_backend *b);
/* 1 if this machine can run the backend (CPU features, GPU present). */
int hmx_backend_available(const hmx_backend *b);
/* Why this machine cannot run it, in one line ("" when it can, or when the
 * backend gives no reason; never NULL). */
const char *hmx_backend_unavailable_reason(const hmx_backend *b);
/* What the backend found on this machine (cuda: the build's architectures,
 * the driver, each device and the verdict) as lines of text in buf (always
 * terminated when cap > 0); returns the length written, 0 when the backend
 * has nothing to add. */
int hmx_backend_describe(const hmx_backend *b, char *buf, size_t cap);
/* Lookup by name; "best" picks the fastest available. NULL if unknown. */
const hmx_backend *hmx_backend_find(const char *name);
/* The best backend this machine can run (never NULL: ref always runs). */
const hmx_backend *hmx_backend_best(void);
/* HMX_BACKEND if set and valid, else hmx_backend_best(). On an unknown or
 * unavailable HMX_BACKEND, returns NULL and sets the error message. */
const hmx_backend *hmx_backend_default(void);

/* ------------------------------------------------------------------ context */

/* Numerical tier (docs/NUMERICS.md, "Fast tier"). The exact tier is the
 * default and gives the same bits on every backend. In the fast tier a
 * backend may run some ops through faster libraries (oneDNN, SLEEF, cuBLAS)
 * whose results differ from the exact ones within documented bounds; ops it
 * does not change run their exact kernels. `hmx ops` lists what changes. */
typedef enum hmx_tier {
  HMX_TIER_DEFAULT = 0, /* the HMX_TIER environment variable ("exact"/"fast"), else exact */
  HMX_TIER_EXACT = 1,
  HMX_TIER_FAST = 2
} hmx_tier;

typedef struct hmx_context {
  const hmx_backend *backend; /* NULL: hmx_backend_default() */
  int threads;                /* 0: backend default; ref is single-threaded */
  int allow_ref_fallback;     /* 1: ops the backend lacks run on the best
                                 available backend that has them (ref at worst) */
  hmx_tier tier;              /* last, so positional initialisers keep the default */
} hmx_context;

/* 1 if this build can run a call on several threads (OpenMP: the x86, NEON
 * and composed kernels split rows, heads and output tiles, never a sum); 0
 * if every call runs on the calling thread alone, whatever
 * hmx_context.threads asks (a build without OpenMP). No bit depends on it. */
int hmx_has_threads(void);

/* HMX_TIER resolved: HMX_TIER_FAST if it is "fast", HMX_TIER_EXACT if it is
 * unset, empty or "exact"; an unknown value is HMX_TIER_EXACT with the error
 * message set (ops then fail with HMX_ERR_INVALID_ARGUMENT). */
hmx_tier hmx_tier_default(void);
/* "exact", "fast" ("default" for HMX_TIER_DEFAULT); "?" when invalid. */
const char *hmx_tier_name(hmx_tier t);
/* Parse "exact" / "fast"; HMX_ERR_INVALID_ARGUMENT otherwise. */
hmx_status hmx_tier_parse(const char *s, hmx_tier *out);
/* What backend b runs for op (an op name of `hmx ops`) in the fast tier:
 * NULL when it runs the exact kernel there (the op is unchanged), else a
 * short description of the fast kernel (e.g. "oneDNN matmul"). When the op
 * is unchanged and *why_not is given, it receives the reason, e.g. "built
 * without oneDNN" (or NULL when the backend never changes the op). */
const char *hmx_fast_op_kernel(const hmx_backend *b, const char *op, const char **why_not);

/* ------------------------------------------------------------------ device memory
 * Tensors may live in CUDA device memory: make the view as usual, then set
 * t.memory = HMX_MEMORY_CUDA. The kernels then read and write it in place,
 * with no copy (host tensors keep working as before: the cuda backend copies
 * them to the GPU and back on every call). Rules, each checked (a violation
 * is an error and nothing runs):
 *   - in one call, every tensor is on the host or every tensor is on the
 *     device (HMX_ERR_INVALID_ARGUMENT otherwise);
 *   - device tensors are contiguous and aligned to their element size;
 *   - they need a backend that takes device memory (`cuda`): with no backend
 *     chosen (NULL context, NULL ctx->backend and HMX_BACKEND unset) the best
 *     such backend runs; a chosen backend that cannot is HMX_ERR_UNSUPPORTED;
 *     no fallback to another backend;
 *   - dtypes: x and y of fwht and hadamard_mix may be f32, bf16 or f16 (x
 *     and y of one dtype): the kernel widens on load and rounds once on
 *     store, so the bits are those of the host path, with half the bytes
 *     moved; alpha and beta may be f32, bf16 or f16, each of its own dtype (a
 *     16-bit one is widened into f32 device scratch first, exactly, as on the
 *     host). Every float tensor of the other ops may be f32, bf16
 *     or f16, each of its own dtype: a 16-bit one is widened into f32 device
 *     scratch and a 16-bit output rounded once from f32 (in the order of the
 *     stream, no wait), the host path's rule, so the bits are again those of
 *     the host path (the kernels then move f32; the fast tier's gemm reads
 *     16-bit a, b, c of one dtype itself);
 *   - the work is queued on the calling thread's CUDA stream (below) and the
 *     call returns without waiting, like a kernel launch: argument and launch
 *     errors are returned, a fault inside a kernel shows at the caller's next
 *     synchronisation. rope is the exception: it copies the positions to the
 *     host (the angle table is computed there, NUMERICS §E) and waits for them.
 */
/* The CUDA stream (a cudaStream_t) that device-memory calls of the calling
 * thread are queued on; NULL, the initial value, is the legacy default stream. */
void hmx_set_cuda_stream(void *stream);
void *hmx_get_cuda_stream(void);

/* ------------------------------------------------------------------ operations
 * One entry point per operation. Shapes are given per op; "[a, b]" means a
 * 2-d tensor with a rows of b elements. Batch dimensions may be flattened by
 * the caller. All float outputs may be f32/bf16/f16 unless noted. */

/* fwht: y[b, :] = scale * H_n x[b, :] for x, y of shape [batch, n].
 * n = 2^k (1 <= n <= 2^20) or m * 2^k with m in {12, 20, 28, 40} and
 * k <= 15. H_n is Sylvester's (natural order) for 2^k and
 * H_m (x) H_{2^k} for the others (docs/NUMERICS.md §fwht). y may equal x.
 * Any alignment works; batches far larger than the caches run fastest with
 * rows on a 64-byte line (x, y 64-byte aligned and n a multiple of 16): on a
 * Zen 4, n = 65536 from memory 91-93% of memcpy against 70-78% at malloc's
 * 16-byte offset (docs/results/session37/). Since session 62 the avx512
 * backend's passes after a row's first store on y's own lines at any offset,
 * which narrows that gap (docs/results/session62/). scale = 1 gives the
 * unnormalised transform (as FFHT computes it); the x86 backends then skip
 * the multiply, the same bits, 4-10% faster for n = 256 ... 4096 in cache
 * (docs/results/session63/). */
hmx_status hmx_fwht(const hmx_context *ctx, const hmx_tensor *x, hmx_tensor *y, float scale);
/* The same with the factor m chosen explicitly: every 40 * 2^k is also
 * 20 * 2^(k+1), and the two transforms differ. m = 0 is automatic: the
 * smallest of 1, 12, 20, 28, 40 that fits the limits (so 40 only when asked
 * for, as with Dao-AILab's hadamard_transform_40N, or for n = 40 * 2^15). */
hmx_status hmx_fwht_factor(const hmx_context *ctx, const hmx_tensor *x, hmx_tensor *y,
                           float scale, int m);

/* hadamard_mix: y = (H_n x / sqrt(n)) * alpha + beta, alpha, beta of shape [n],
 * H_n with the automatic factor of hmx_fwht_factor (m = 0).
 * The drop-in replacement for the attention output projection. */
hmx_status hmx_hadamard_mix(const hmx_context *ctx, const hmx_tensor *x,
                            const hmx_tensor *alpha, const hmx_tensor *beta, hmx_tensor *y);

/* gemm: c[M, N] = a[M, K] b + bias, where b is [K, N], or [N, K] when
 * trans_b is 1 (PyTorch Linear layout). bias ([N]) may be NULL. */
hmx_status hmx_gemm(const hmx_context *ctx, const hmx_tensor *a, const hmx_tensor *b,
                    int trans_b, const hmx_tensor *bias, hmx_tensor *c);

/* rmsnorm over the last dim: y = x / sqrt(mean(x^2) + eps) * weight. */
hmx_status hmx_rmsnorm(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *weight,
                       float eps, hmx_tensor *y);

/* layernorm over the last dim: y = (x - mean) / sqrt(var + eps) * weight + bias.
 * bias may be NULL (then no addition is performed). */
hmx_status hmx_layernorm(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *weight,
                         const hmx_tensor *bias, float eps, hmx_tensor *y);

typedef enum hmx_rope_style {
  HMX_ROPE_HALF = 0,        /* pairs (i, i + rot/2): GPT-NeoX, Hugging Face Llama */
  HMX_ROPE_INTERLEAVED = 1  /* pairs (2i, 2i + 1): GPT-J, original Llama, GGUF llama */
} hmx_rope_style;

/* rope: x, y of shape [T, H, D]; positions [T] (i32, >= 0, < 2^24);
 * rotates the first rot_dim (even, <= D) channels of every head by the
 * angle pos * base^(-2i/rot_dim); the rest are copied. y may equal x. */
hmx_status hmx_rope(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *positions,
                    float base, int rot_dim, hmx_rope_style style, hmx_tensor *y);

/* attention: q [B, Sq, Hq, D], k and v [B, Skv, Hkv, D], o [B, Sq, Hq, D],
 * Hq a multiple of Hkv (query head h reads kv head h / (Hq/Hkv)).
 * scores = q.k * scale, softmax over keys, o = P v. When causal, query i
 * sits at position q_offset + i and sees keys 0..q_offset+i; q_offset < 0
 * means Skv - Sq (the usual prefill/decode over a KV cache). scale <= 0 or
 * NaN means 1/sqrt(D). */
typedef struct hmx_attention_params {
  int causal;
  int64_t q_offset;
  float scale;
} hmx_attention_params;
hmx_status hmx_attention(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                         const hmx_tensor *v, const hmx_attention_params *p, hmx_tensor *o);

/* swiglu: y[T, d_out] = (silu(x W1) * (x W3)) W2 with x [T, d], W1 and W3
 * [d, h], W2 [h, d_out]; computed in blocks of `block` hidden units (0: the
 * backend's choice). The result does not depend on the block size. */
hmx_status hmx_swiglu(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w1,
                      const hmx_tensor *w3, const hmx_tensor *w2, int64_t block, hmx_tensor *y);

/* strassen: c[M, N] = a[M, K] b[K, N] by Strassen's recursion, its own op
 * (its rounding differs from hmx_gemm's): while min(M, K, N) > cutoff, every
 * odd dimension is padded with one zero row/column, the 2x2 blocks of halves
 * are combined through Strassen's seven products, and the padding is
 * dropped; at or below the cutoff the canonical gemm (no bias) runs, so
 * min(M, K, N) <= cutoff gives hmx_gemm's bits. cutoff = 0 means 64; at most
 * 2^20 (docs/NUMERICS.md §strassen). */
hmx_status hmx_strassen(const hmx_context *ctx, const hmx_tensor *a, const hmx_tensor *b,
                        int64_t cutoff, hmx_tensor *c);

/* mhffn, the naive multi-head FFN: q = x W_in split into H heads of dh; head
 * i: o_i = (silu(q_i W1_i) * (q_i W3_i)) W2_i; y = concat(o) W_out.
 * x [T, d], w_in [d, H*dh], w1 and w3 [H, dh, f], w2 [H, f, dh],
 * w_out [H*dh, d_out], y [T, d_out]. */
hmx_status hmx_mhffn(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w_in,
                     const hmx_tensor *w1, const hmx_tensor *w3, const hmx_tensor *w2,
                     const hmx_tensor *w_out, hmx_tensor *y);

/* flashmhf: q = x W_in split into H heads of dh; head i: gate
 * g = sigmoid(q_i G_i) in R^E, w = g / sum(g); E SwiGLU sub-networks of
 * width de, y_e = (silu(q_i K_ie) * (q_i U_ie)) V_ie; o_i = sum_e w_e y_e;
 * y = concat(o) W_out. Computed in blocks of `block` hidden units of a
 * sub-network (0: the backend's choice) with the gate folded into the hidden
 * values, so only one block is ever stored; the bits do not depend on block.
 * x [T, d], w_in [d, H*dh], gate [H, dh, E], wk and wu [H, E, dh, de],
 * wv [H, E, de, dh], w_out [H*dh, d_out], y [T, d_out]. */
hmx_status hmx_flashmhf(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w_in,
                        const hmx_tensor *gate, const hmx_tensor *wk, const hmx_tensor *wu,
                        const hmx_tensor *wv, const hmx_tensor *w_out, int64_t block,
                        hmx_tensor *y);

/* Sketched bidirectional attention, per head: q [B, S, Hq, D], k and v
 * [B, N, Hkv, D], o [B, S, Hq, D], Hq a multiple of Hkv (query head h reads
 * kv head h / (Hq/Hkv)); no causal mask. scale <= 0 or NaN means 1/sqrt(D).
 * The selecting methods choose `k` keys per (batch, kv head) and attend to
 * exactly those (the attention op with the others masked out); idx
 * [B, Hkv, k] (i32, may be NULL) receives them in increasing order. Ties in
 * the selection go to the lower index (docs/NUMERICS.md §sketch). */
typedef struct hmx_sketch_params {
  int64_t k;      /* keys kept, 1 <= k <= N */
  float scale;    /* score multiplier; <= 0 or NaN: 1/sqrt(D) */
  float lambda;   /* levattention, lewis: damping of K^T K, finite and > 0 */
  int iters;      /* lewis: fixed-point iterations, >= 1 */
  uint64_t seed;  /* priority: seed of the counter RNG */
} hmx_sketch_params;

/* linformer: K' = E K, V' = F V with e and f [kp, N] (1 <= kp), then
 * attention of every query over the kp projected keys. */
hmx_status hmx_linformer(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                         const hmx_tensor *v, const hmx_tensor *e, const hmx_tensor *f,
                         float scale, hmx_tensor *o);
/* levattention: the k keys with the largest leverage scores
 * tau_j = k_j (K^T K + lambda I)^-1 k_j^T (binary64 Cholesky solve). */
hmx_status hmx_levattention(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                            const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                            hmx_tensor *idx);
/* lewis: the k keys with the largest l1 Lewis weights after p->iters
 * iterations of w <- sqrt(w * tau(W^-1/2 K)) from w = 1 (binary64). */
hmx_status hmx_lewis(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                     const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                     hmx_tensor *idx);
/* priority: priority sampling with weights |k_j|^2: h_j uniform in (0, 1]
 * from the counter RNG (p->seed, stream b*Hkv + g, counter j); the k keys of
 * smallest rank h_j / |k_j|^2 are kept (no reweighting). */
hmx_status hmx_priority(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                        const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                        hmx_tensor *idx);

/* ------------------------------------------------------------------ canonical math
 * The scalar functions every backend mirrors op-for-op (docs/NUMERICS.md). */
float hmx_expf(float x);
float hmx_sigmoidf(float x);
float hmx_siluf(float x);

HMX_API_END

#ifdef __cplusplus
}
#endif
#endif /* HADAMIX_H */
