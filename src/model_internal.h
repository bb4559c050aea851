/* The model's in-memory layout, shared by src/model_*.c. */
#ifndef HMX_MODEL_INTERNAL_H
#define HMX_MODEL_INTERNAL_H

#include "hadamix_model.h"
#include "safetensors.h"
#include "gemm_quant.h"

#define HMX_MODEL_NAME_MAX 48
#define HMX_MODEL_FORMAT "hadamix-decoder-v1" /* metadata "format" of a weights file */

typedef enum hmx_init_kind {
  HMX_INIT_NORMAL,   /* uniform with std 0.02 */
  HMX_INIT_RESIDUAL, /* the same / sqrt(2 n_layer): projections into the residual stream */
  HMX_INIT_ONES,
  HMX_INIT_ZEROS
} hmx_init_kind;

/* One weight: its name and shape in the file layout (docs/MODEL.md). */
typedef struct hmx_weight_spec {
  char name[HMX_MODEL_NAME_MAX];
  int ndim;
  int64_t shape[2];
  hmx_init_kind init;
} hmx_weight_spec;

typedef struct hmx_layer_weights {
  const hmx_tensor *attn_norm, *wq, *wk, *wv, *wo, *alpha, *beta;
  const hmx_tensor *ffn_norm, *w1, *w3, *w2;
} hmx_layer_weights;

struct hmx_model {
  hmx_model_config cfg;
  int n_weights;
  hmx_weight_spec *specs;   /* n_weights, the canonical order */
  hmx_tensor *weights;      /* n_weights, same order */
  hmx_layer_weights *layers;
  const hmx_tensor *tok_emb, *norm, *lm_head; /* lm_head == tok_emb when tied */
  hmx_st_file *file;        /* a loaded file (mapped), or NULL */
  void *arena;              /* owned weight memory (synthetic, or realigned copies) */
  size_t arena_bytes;       /* its size: weights inside it may be rewritten in place
                             * (hmx_model_prepare) */
  /* NULL, or n_weights entries: q[i].data set when weight i is a GGUF matrix
   * kept in its file format and layout ([out, in] rows of blocks, read in
   * place by hmx_gemm_quant); weights[i] then has data NULL (its shape is
   * still the spec's). GGUF loads (model_gguf.c), and the float projections
   * and FFN matrices (these transposed to [out, in]) that hmx_model_prepare
   * puts in the G16 layout (model_prepare.c). */
  hmx_qmatrix *q;
  int64_t weight_bytes;
  /* GPU copies of the kept matrices that the forward pass reads by gemm
   * (hmx_model_prepare with a backend that has device kernels; q[i].dev
   * point into it), and how to free them; NULL when none */
  void *dev_weights;
  void (*dev_free)(void *p);
  /* NULL, or n_weights entries: the GPU copy (inside dev_weights) of each
   * vector weight (norm weights, alpha, beta), NULL for the others */
  const void **vdev;
  /* 1 when every weight the forward pass reads on the GPU has a copy there
   * (each matrix it reads by gemm, each vector): hmx_model_forward on the
   * backend that made them then keeps the whole pass on the GPU
   * (model_forward.c, docs/MODEL.md "The forward pass on the GPU") */
  int dev_forward;
};

struct hmx_kv_cache {
  const hmx_model *model;
  int n_layer;
  int64_t capacity, len;
  int64_t row;              /* n_kv_head * head_dim */
  hmx_dtype dtype;          /* of the elements: HMX_F32, HMX_BF16 or HMX_F16 */
  int64_t kblocks;          /* blocks of 16 positions per layer and kv head (capacity
                               rounded up to 64: a multiple of 4 blocks) */
  void *k;                  /* [n_layer][n_kv_head][kblocks][head_dim][16]: position t
                               of head g in block t / 16, lane t % 16 (HMX_KB16_ATTENTION) */
  void *v;                  /* [n_layer][n_kv_head][16 * kblocks][head_dim]: position t of
                               head g in row t of the head's run (HMX_KB16_ATTENTION) */
  /* The copy on the GPU (src/kv_cache.c), made by the first forward pass
   * there: K and V as rows, [n_layer][capacity][row] of dtype each, in one
   * allocation of dev (dk its start); NULL until then. */
  const struct hmx_device_ops *dev;
  void *dk, *dv;
  /* positions [0, host_len) are current in k and v, [0, dev_len) in dk and
   * dv; one of the two equals len */
  int64_t host_len, dev_len;
};

/* For the loaders of other formats (model_gguf.c), from model_weights.c: an
 * empty model of a checked config (specs laid out, weights zeroed), the
 * per-layer shortcuts once every weight is set, and the arena allocator
 * (64-byte aligned, freed with free). */
hmx_status hmx_model_alloc(const hmx_model_config *cfg, hmx_model **out);
/* Every weight a loader copies into its arena starts at a multiple of 64
 * bytes; hmx_model_arena_round(b) is b rounded up to one (callers check
 * that b + 64 does not overflow). */
#define HMX_MODEL_ARENA_ALIGN 64
static inline size_t hmx_model_arena_round(size_t b) {
  return (b + HMX_MODEL_ARENA_ALIGN - 1) / HMX_MODEL_ARENA_ALIGN * HMX_MODEL_ARENA_ALIGN;
}
/* hmx_model_config_check for a config read from the file at path (model_config.c):
 * the message names the file, and a value out of range is HMX_ERR_FORMAT. */
hmx_status hmx_model_config_check_file(const hmx_model_config *cfg, const char *path);
void hmx_model_link(hmx_model *m);
void *hmx_model_arena_alloc(size_t bytes);
/* A Llama-family GGUF file (model_gguf.c, docs/GGUF.md). */
hmx_status hmx_model_load_gguf(const char *path, hmx_model **out);
/* The same from a parsed file (path names it in messages; the weights are
 * copied, f may be freed after). Also the entry point of
 * tests/fuzz/fuzz_model_gguf.c. */
struct hmx_gguf;
hmx_status hmx_model_from_gguf(const struct hmx_gguf *f, const char *path, hmx_model **out);
/* A Hugging Face Llama checkpoint: a directory with config.json and
 * model.safetensors or model.safetensors.index.json + shards (model_hf.c). */
hmx_status hmx_model_load_hf(const char *dir, hmx_model **out);
/* A hadamix model file: safetensors with the config in its metadata
 * (model_safetensors.c, docs/MODEL.md). */
hmx_status hmx_model_load_safetensors(const char *path, hmx_model **out);

/* The matrix of weight w (a pointer into m->weights) when it is kept in its
 * GGUF format, else NULL. */
static inline const hmx_qmatrix *hmx_model_qweight(const hmx_model *m, const hmx_tensor *w) {
  if (!m->q) return NULL;
  const hmx_qmatrix *q = &m->q[w - m->weights];
  return q->data ? q : NULL;
}

/* The KV cache's layouts and moves (src/kv_cache.c). Layer `layer`'s K
 * (is_k) or V as a tensor of `len` positions: in the blocked host layout
 * (read by hmx_attention_kb16 only), or as the rows of the GPU copy (a
 * device tensor [1, len, n_kv_head, head_dim]). */
hmx_tensor hmx_kv_cache_blocks(const hmx_kv_cache *c, int is_k, int layer, int64_t len);
hmx_tensor hmx_kv_cache_rows(const hmx_kv_cache *c, int is_k, int layer, int64_t len);
/* Append n rows of K (is_k) or V ([n][row] f32) at position `at`: from host
 * memory into the blocks, heads split over `threads`; or from device memory
 * into the GPU copy, on stream. Each value is stored as the cache's dtype
 * (rounded to nearest even for a 16-bit cache). */
void hmx_kv_cache_store(hmx_kv_cache *c, int is_k, int layer, int64_t at, const float *src,
                        int64_t n, int threads);
hmx_status hmx_kv_cache_store_gpu(hmx_kv_cache *c, int is_k, int layer, int64_t at,
                                  const float *src, int64_t n, void *stream);
/* Make every position current on the GPU of d (allocating the copy at the
 * first call: HMX_ERR_NO_MEMORY when it does not fit), or on the host. */
hmx_status hmx_kv_cache_to_gpu(hmx_kv_cache *c, const struct hmx_device_ops *d, void *stream);
hmx_status hmx_kv_cache_to_host(hmx_kv_cache *c, void *stream);

/* The weights of a config in their canonical order; *n set. Caller frees. */
hmx_status hmx_model_layout(const hmx_model_config *cfg, hmx_weight_spec **specs, int *n);

#endif
