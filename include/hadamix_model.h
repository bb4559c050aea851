/* hadamix_model.h: a decoder-only transformer built from the hadamix ops.
 *
 * x = embed(tokens); for each layer: x += attn(rmsnorm(x)); x += swiglu(rmsnorm(x));
 * logits = rmsnorm(x) W_lm^T. Attention: Q/K/V projections, RoPE, causal
 * attention with grouped KV heads over a KV cache, and an output projection
 * that is either a dense W_O or hadamard_mix (alpha, beta). Every step calls
 * the public ops on the context's backend, so the logits have the same bits
 * on every backend, for any batching, thread count, or prefill/decode split
 * (docs/MODEL.md states why). */
#ifndef HADAMIX_MODEL_H
#define HADAMIX_MODEL_H

#include "hadamix.h"

#ifdef __cplusplus
extern "C" {
#endif

HMX_API_BEGIN

typedef enum hmx_outproj {
  HMX_OUTPROJ_DENSE = 0,    /* x W_O^T, W_O [d_model, n_head * head_dim] */
  HMX_OUTPROJ_HADAMARD = 1  /* hadamard_mix: (H x / sqrt(d)) * alpha + beta */
} hmx_outproj;

typedef struct hmx_model_config {
  int n_layer;
  int d_model;
  int n_head;     /* query heads */
  int n_kv_head;  /* key/value heads (divides n_head) */
  int head_dim;
  int d_ff;       /* SwiGLU hidden width */
  int vocab;
  int context;    /* longest sequence (KV cache capacity limit) */
  float rope_base;
  float norm_eps;
  int tied;       /* 1: the LM head is the token embedding */
  hmx_outproj outproj;
  hmx_rope_style rope_style;
} hmx_model_config;

/* Presets: "tiny" (12 layers, d 768, 12x64), "small" (24, 1024, 16x64),
 * "base" (24, 1536, 16x96), all with vocab 50304, context 1024, tied
 * embeddings, d_ff = 8d/3 rounded up to a multiple of 64; and "test" (2
 * layers, d 64, 4 heads of 16, 2 KV heads, vocab 256) for the tests. */
hmx_status hmx_model_preset(const char *name, hmx_outproj outproj, hmx_model_config *cfg);
/* The names of the presets, NULL-terminated. */
const char *const *hmx_model_preset_names(void);
/* Validate a config (ranges, divisibility, hadamard needs n_head*head_dim ==
 * d_model and a supported fwht size). */
hmx_status hmx_model_config_check(const hmx_model_config *cfg);

typedef struct hmx_param_count {
  int64_t embedding;  /* token embedding */
  int64_t attn_qkv;   /* Q, K, V projections, all layers */
  int64_t attn_out;   /* W_O, or alpha + beta */
  int64_t ffn;        /* W1, W3, W2 */
  int64_t norms;      /* rmsnorm weights (2 per layer + final) */
  int64_t lm_head;    /* 0 when tied */
  int64_t total;
} hmx_param_count;
hmx_status hmx_model_param_count(const hmx_model_config *cfg, hmx_param_count *out);

typedef struct hmx_model hmx_model;

/* Deterministic synthetic weights (docs/MODEL.md: SplitMix64 streams, one per
 * tensor), stored as `dtype` (f32, bf16 or f16). */
hmx_status hmx_model_synthetic(const hmx_model_config *cfg, uint64_t seed, hmx_dtype dtype,
                               hmx_model **out);
/* Load a model: a hadamix weights file (safetensors, layout in docs/MODEL.md;
 * memory-mapped where the platform allows), a Llama GGUF file, or a Hugging
 * Face checkpoint directory (docs/GGUF.md). Save writes a hadamix weights
 * file. safetensors headers and config.json are JSON: a hadamix built
 * without cJSON (README "Dependencies") refuses those formats with
 * HMX_ERR_UNSUPPORTED and still loads GGUF. A path that cannot be opened is
 * HMX_ERR_IO. */
hmx_status hmx_model_load(const char *path, hmx_model **out);
hmx_status hmx_model_save(const hmx_model *m, const char *path);
void hmx_model_free(hmx_model *m);

const hmx_model_config *hmx_model_get_config(const hmx_model *m);
hmx_dtype hmx_model_dtype(const hmx_model *m);
int64_t hmx_model_weight_bytes(const hmx_model *m);
/* Named weight tensor ("layers.3.attn.wq", ...; docs/MODEL.md), or NULL (also for a
 * GGUF matrix kept in its block format, or a matrix hmx_model_prepare rewrote:
 * they have no tensor view). */
const hmx_tensor *hmx_model_weight(const hmx_model *m, const char *name);

/* Lay the model's float projection matrices (Q, K, V, O, the embedding and
 * LM head: f32, bf16 or f16, [out, in] with out a multiple of 16) out in the
 * layout that ctx's backend reads fastest: the G16 layout of docs/MODEL.md
 * ("Weight layout") for a backend whose exact gemm reads it in place (avx2,
 * avx512); nothing for any other backend or for the fast tier. It changes no
 * logit by a bit, on any backend (a backend that does not read G16 converts
 * the matrix back on each call: slower, same bits); it makes one-token
 * decode faster. Only weights in memory the model owns are rewritten, in
 * place (synthetic, GGUF and Hugging Face loads; not the memory-mapped
 * tensors of a hadamix weights file); those then have no tensor view
 * (hmx_model_weight returns NULL) and hmx_model_save refuses the model.
 * For a ctx whose gemm runs on the cuda backend it also lays the FFN out so
 * and copies every matrix the forward pass reads by gemm to the current GPU,
 * once, and the vectors it reads (norm weights, alpha, beta) (docs/MODEL.md
 * "Weights on the GPU"): cuda's calls then read that copy instead of
 * sending the weights over PCIe every call, and hmx_model_forward runs the
 * whole pass on the GPU (below); the host bytes stay, so the model still
 * runs on any backend; hmx_model_free frees the copy; without the GPU
 * memory for it, no copy (same bits, slower). The weights are read-only
 * after this call.
 * *changed (may be NULL): the number of matrices rewritten. Call it before
 * any forward pass, never during one. */
hmx_status hmx_model_prepare(hmx_model *m, const hmx_context *ctx, int *changed);

/* The KV cache of one sequence (host memory; a forward pass on the GPU adds
 * a GPU copy, freed with the cache). */
typedef struct hmx_kv_cache hmx_kv_cache;
/* capacity 0 means the model's context. An f32 cache. */
hmx_status hmx_kv_cache_new(const hmx_model *m, int64_t capacity, hmx_kv_cache **out);
/* A cache that stores K and V (after RoPE) as `dtype`: HMX_F32, or HMX_BF16 /
 * HMX_F16 (half the bytes to read per decode step, as llama.cpp's default
 * F16 cache). A 16-bit cache rounds each K and V element to nearest even
 * when it is stored (hmx_f32_to_bf16 / hmx_f32_to_f16) and attention widens
 * it exactly, so the logits are those of a model whose K and V are rounded:
 * not those of an f32 cache, but the same bits on every backend, in prefill
 * and decode, batched or alone (docs/MODEL.md, "KV cache"). */
hmx_status hmx_kv_cache_new_typed(const hmx_model *m, int64_t capacity, hmx_dtype dtype,
                                  hmx_kv_cache **out);
hmx_dtype hmx_kv_cache_dtype(const hmx_kv_cache *c);
void hmx_kv_cache_free(hmx_kv_cache *c);
int64_t hmx_kv_cache_len(const hmx_kv_cache *c);
/* Forget the last n positions (n = len: empty the cache). */
hmx_status hmx_kv_cache_truncate(hmx_kv_cache *c, int64_t new_len);

/* Called after each intermediate tensor of a forward pass ([rows, cols] f32,
 * rows = tokens of the step); layer -1 for the embedding and the final
 * tensors. Return non-zero to stop the pass: hmx_model_forward then returns
 * HMX_ERR_INVALID_ARGUMENT with "stopped by the trace callback". */
typedef int (*hmx_trace_fn)(void *user, int layer, const char *tensor, const float *data,
                            int64_t rows, int64_t cols);

typedef struct hmx_forward_opts {
  int all_logits;       /* 1: logits of every token; 0: of each sequence's last token */
  hmx_trace_fn trace;   /* may be NULL */
  void *trace_user;
} hmx_forward_opts;

/* One step over n_seq sequences: sequence s appends n_tokens[s] >= 1 tokens
 * (tokens[s]) to caches[s] (distinct caches) and gets logits [rows, vocab]
 * in `logits`, rows = sum(n_tokens) with all_logits, else n_seq (in sequence
 * order). A prompt is one step with many tokens (prefill); decoding is one
 * token per step. opts may be NULL (last-token logits, no trace). On failure
 * the caches are left as they were.
 * A model prepared for cuda (hmx_model_prepare with the GPU's memory for its
 * copies) whose ctx runs gemm on cuda keeps the step on the GPU: activations
 * and a GPU copy of each KV cache in device memory, work queued on the
 * thread's CUDA stream (hmx_set_cuda_stream), one wait for the logits; a
 * step with a trace callback, or with HMX_GPU_FORWARD=0 in the environment,
 * runs as host calls, and each cache moves its newer positions between the
 * two as needed. The same bits either way (docs/MODEL.md "The forward pass
 * on the GPU"). */
hmx_status hmx_model_forward(const hmx_context *ctx, const hmx_model *m, int n_seq,
                             hmx_kv_cache *const *caches, const int32_t *const *tokens,
                             const int64_t *n_tokens, const hmx_forward_opts *opts,
                             float *logits);

/* Where two contexts (e.g. two backends) first differ on a forward pass of
 * `tokens` from an empty cache: the first intermediate tensor, in execution
 * order, whose bits differ (NaN = NaN). */
typedef struct hmx_model_diff_report {
  int differs;          /* 0: every intermediate tensor identical */
  int layer;            /* -1: embedding or final tensors */
  char tensor[32];
  int64_t index;        /* first differing element (row-major) */
  float a, b;           /* its values */
  int64_t n_different;  /* elements of that tensor that differ */
  double max_abs;       /* over that tensor (elements finite in both runs) */
  int tensors_compared;
} hmx_model_diff_report;
hmx_status hmx_model_diff(const hmx_context *a, const hmx_context *b, const hmx_model *m,
                          const int32_t *tokens, int64_t n_tokens,
                          hmx_model_diff_report *report);

/* Sampling over one row of logits. temperature <= 0: greedy (the first
 * maximum). Otherwise softmax(logits / temperature) restricted to the top_k
 * (0: all) most likely tokens and to the smallest set whose probability
 * reaches top_p (>= 1: all), then one draw from SplitMix64 (seed, step). */
typedef struct hmx_sampler {
  float temperature;
  int top_k;
  float top_p;
  uint64_t seed;
} hmx_sampler;
hmx_status hmx_sample(const hmx_sampler *s, const float *logits, int vocab, uint64_t step,
                      int32_t *token);

HMX_API_END

#ifdef __cplusplus
}
#endif
#endif /* HADAMIX_MODEL_H */
