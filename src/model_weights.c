/* Model weights: the file layout, synthetic initialization, and which
 * loader a path goes to (docs/MODEL.md; the hadamix file itself is read and
 * written by model_safetensors.c). */
#include "model_internal.h"
#include "internal.h"
#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ layout */

static void spec_set(hmx_weight_spec *s, const char *name, int ndim, int64_t d0, int64_t d1,
                     hmx_init_kind init) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->ndim = ndim;
  s->shape[0] = d0;
  s->shape[1] = d1;
  s->init = init;
}

hmx_status hmx_model_layout(const hmx_model_config *c, hmx_weight_spec **specs, int *n) {
  hmx_status st = hmx_model_config_check(c);
  if (st) return st;
  const int per_layer = c->outproj == HMX_OUTPROJ_DENSE ? 9 : 10;
  const int total = 1 + c->n_layer * per_layer + 1 + (c->tied ? 0 : 1);
  hmx_weight_spec *s = hmx_alloc_array((size_t)total, sizeof *s);
  if (!s) return hmx_fail(HMX_ERR_NO_MEMORY, "model layout: out of memory");
  const int64_t d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim, ff = c->d_ff;
  int i = 0;
  char nm[HMX_MODEL_NAME_MAX];
  spec_set(&s[i++], "tok_emb", 2, c->vocab, d, HMX_INIT_NORMAL);
  for (int l = 0; l < c->n_layer; l++) {
#define LAYER(suffix, nd, a, b, init)                                                          \
  do {                                                                                         \
    snprintf(nm, sizeof nm, "layers.%d.%s", l, suffix);                                        \
    spec_set(&s[i++], nm, nd, a, b, init);                                                     \
  } while (0)
    LAYER("attn_norm", 1, d, 0, HMX_INIT_ONES);
    /* projections in PyTorch Linear layout [out, in] (gemm trans_b) */
    LAYER("attn.wq", 2, hd, d, HMX_INIT_NORMAL);
    LAYER("attn.wk", 2, kvd, d, HMX_INIT_NORMAL);
    LAYER("attn.wv", 2, kvd, d, HMX_INIT_NORMAL);
    if (c->outproj == HMX_OUTPROJ_DENSE) LAYER("attn.wo", 2, d, hd, HMX_INIT_RESIDUAL);
    else {
      LAYER("attn.alpha", 1, d, 0, HMX_INIT_ONES);
      LAYER("attn.beta", 1, d, 0, HMX_INIT_ZEROS);
    }
    LAYER("ffn_norm", 1, d, 0, HMX_INIT_ONES);
    /* hmx_swiglu's layout: W1, W3 [d, d_ff], W2 [d_ff, d] */
    LAYER("ffn.w1", 2, d, ff, HMX_INIT_NORMAL);
    LAYER("ffn.w3", 2, d, ff, HMX_INIT_NORMAL);
    LAYER("ffn.w2", 2, ff, d, HMX_INIT_RESIDUAL);
#undef LAYER
  }
  spec_set(&s[i++], "norm", 1, d, 0, HMX_INIT_ONES);
  if (!c->tied) spec_set(&s[i++], "lm_head", 2, c->vocab, d, HMX_INIT_NORMAL);
  *specs = s;
  *n = i;
  return HMX_OK;
}

static int64_t spec_numel(const hmx_weight_spec *s) {
  return s->ndim == 1 ? s->shape[0] : s->shape[0] * s->shape[1];
}

/* ------------------------------------------------------------------ model object */

static hmx_status model_new(const hmx_model_config *cfg, hmx_model **out) {
  hmx_model *m = calloc(1, sizeof *m);
  if (!m) return hmx_fail(HMX_ERR_NO_MEMORY, "model: out of memory");
  m->cfg = *cfg;
  hmx_status st = hmx_model_layout(cfg, &m->specs, &m->n_weights);
  if (st) {
    free(m);
    return st;
  }
  m->weights = calloc((size_t)m->n_weights, sizeof *m->weights);
  m->layers = calloc((size_t)cfg->n_layer, sizeof *m->layers);
  if (!m->weights || !m->layers) {
    hmx_model_free(m);
    return hmx_fail(HMX_ERR_NO_MEMORY, "model: out of memory");
  }
  *out = m;
  return HMX_OK;
}

/* Point the per-layer shortcuts at the weights (canonical order). */
static void model_link(hmx_model *m) {
  int i = 0;
  m->tok_emb = &m->weights[i++];
  for (int l = 0; l < m->cfg.n_layer; l++) {
    hmx_layer_weights *L = &m->layers[l];
    L->attn_norm = &m->weights[i++];
    L->wq = &m->weights[i++];
    L->wk = &m->weights[i++];
    L->wv = &m->weights[i++];
    if (m->cfg.outproj == HMX_OUTPROJ_DENSE) L->wo = &m->weights[i++];
    else {
      L->alpha = &m->weights[i++];
      L->beta = &m->weights[i++];
    }
    L->ffn_norm = &m->weights[i++];
    L->w1 = &m->weights[i++];
    L->w3 = &m->weights[i++];
    L->w2 = &m->weights[i++];
  }
  m->norm = &m->weights[i++];
  m->lm_head = m->cfg.tied ? m->tok_emb : &m->weights[i++];
}

static void *arena_alloc(size_t bytes) {
  /* aligned_alloc needs a multiple of the alignment */
  size_t rounded = hmx_model_arena_round(bytes);
  if (rounded < bytes) return NULL;
  return aligned_alloc(HMX_MODEL_ARENA_ALIGN, rounded ? rounded : HMX_MODEL_ARENA_ALIGN);
}

/* Total bytes of the weights with each tensor's start rounded up to HMX_MODEL_ARENA_ALIGN. */
static hmx_status arena_size(const hmx_model *m, const hmx_dtype *dtypes, size_t *total) {
  size_t t = 0;
  for (int i = 0; i < m->n_weights; i++) {
    size_t b;
    if (!hmx_mul_size((size_t)spec_numel(&m->specs[i]), hmx_dtype_size(dtypes[i]), &b) ||
        t + b + HMX_MODEL_ARENA_ALIGN < t)
      return hmx_fail(HMX_ERR_NO_MEMORY, "model: weights too large for this machine");
    t = hmx_model_arena_round(t + b);
  }
  *total = t;
  return HMX_OK;
}

void hmx_model_free(hmx_model *m) {
  if (!m) return;
  if (m->dev_weights) m->dev_free(m->dev_weights);
  free(m->vdev);
  hmx_st_free(m->file);
  free(m->arena);
  free(m->q);
  free(m->specs);
  free(m->weights);
  free(m->layers);
  free(m);
}

/* ------------------------------------------------------------------ synthetic */

static void store_value(void *data, hmx_dtype dt, int64_t i, float v) {
  if (dt == HMX_F32) ((float *)data)[i] = v;
  else if (dt == HMX_BF16) ((uint16_t *)data)[i] = hmx_f32_to_bf16(v);
  else ((uint16_t *)data)[i] = hmx_f32_to_f16(v);
}

hmx_status hmx_model_synthetic(const hmx_model_config *cfg, uint64_t seed, hmx_dtype dtype,
                               hmx_model **out) {
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_synthetic: out is NULL");
  *out = NULL;
  if (dtype != HMX_F32 && dtype != HMX_BF16 && dtype != HMX_F16)
    return hmx_fail(HMX_ERR_DTYPE, "hmx_model_synthetic: weights must be f32, bf16 or f16");
  hmx_model *m = NULL; /* set by model_new on success (gcc 12 cannot see it) */
  hmx_status st = model_new(cfg, &m);
  if (st) return st;
  hmx_dtype *dts = hmx_alloc_array((size_t)m->n_weights, sizeof *dts);
  if (!dts) {
    hmx_model_free(m);
    return hmx_fail(HMX_ERR_NO_MEMORY, "model: out of memory");
  }
  for (int i = 0; i < m->n_weights; i++) dts[i] = dtype;
  size_t total = 0;
  st = arena_size(m, dts, &total);
  free(dts);
  if (st || !(m->arena = arena_alloc(m->arena_bytes = total))) {
    hmx_model_free(m);
    return st ? st : hmx_fail(HMX_ERR_NO_MEMORY, "model: cannot allocate %zu bytes of weights",
                              total);
  }
  /* std 0.02 as a uniform on [-a, a), a = 0.02 sqrt(3), rounded once to f32;
   * residual projections also / sqrt(2 n_layer) (GPT-2's scheme) */
  const float a = (float)(0.02 * sqrt(3.0));
  const float a_res = (float)(0.02 * sqrt(3.0) / sqrt(2.0 * cfg->n_layer));
  size_t off = 0;
  for (int i = 0; i < m->n_weights; i++) {
    const hmx_weight_spec *s = &m->specs[i];
    void *data = (char *)m->arena + off;
    const int64_t n = spec_numel(s);
    for (int64_t j = 0; j < n; j++) {
      float v;
      switch (s->init) {
      case HMX_INIT_ONES: v = 1.0f; break;
      case HMX_INIT_ZEROS: v = 0.0f; break;
      case HMX_INIT_RESIDUAL: v = hmx_rng_uniform(seed, (uint64_t)i, (uint64_t)j) * a_res; break;
      default: v = hmx_rng_uniform(seed, (uint64_t)i, (uint64_t)j) * a; break;
      }
      store_value(data, dtype, j, v);
    }
    m->weights[i] = hmx_tensor_make(data, dtype, s->ndim, s->shape);
    size_t b = (size_t)n * hmx_dtype_size(dtype);
    off = hmx_model_arena_round(off + b);
    m->weight_bytes += (int64_t)b;
  }
  model_link(m);
  *out = m;
  return HMX_OK;
}

/* ------------------------------------------------------------------ load */

hmx_status hmx_model_load(const char *path, hmx_model **out) {
  hmx_clear_error();
  if (!out || !path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_load: NULL argument");
  *out = NULL;
  /* a Hugging Face checkpoint: a directory with config.json (docs/GGUF.md) */
  char cfg_path[4096];
  FILE *fp = NULL;
  if (snprintf(cfg_path, sizeof cfg_path, "%s/config.json", path) < (int)sizeof cfg_path &&
      (fp = fopen(cfg_path, "rb")) != NULL) {
    fclose(fp);
    return hmx_model_load_hf(path, out);
  }
  /* a GGUF file (docs/GGUF.md) by its magic; everything else is safetensors */
  fp = fopen(path, "rb");
  if (!fp) return hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char magic[4] = {0};
  size_t got = fread(magic, 1, 4, fp);
  fclose(fp);
  if (got == 4 && memcmp(magic, "GGUF", 4) == 0) return hmx_model_load_gguf(path, out);
  return hmx_model_load_safetensors(path, out);
}

/* ------------------------------------------------------------------ for other loaders */

hmx_status hmx_model_alloc(const hmx_model_config *cfg, hmx_model **out) {
  return model_new(cfg, out);
}
void hmx_model_link(hmx_model *m) { model_link(m); }
void *hmx_model_arena_alloc(size_t bytes) { return arena_alloc(bytes); }

/* ------------------------------------------------------------------ accessors */

const hmx_model_config *hmx_model_get_config(const hmx_model *m) { return m ? &m->cfg : NULL; }
hmx_dtype hmx_model_dtype(const hmx_model *m) { return m ? m->tok_emb->dtype : HMX_F32; }
int64_t hmx_model_weight_bytes(const hmx_model *m) { return m ? m->weight_bytes : 0; }

const hmx_tensor *hmx_model_weight(const hmx_model *m, const char *name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < m->n_weights; i++)
    if (strcmp(m->specs[i].name, name) == 0)
      return m->q && m->q[i].data ? NULL : &m->weights[i]; /* GGUF blocks: no tensor view */
  return NULL;
}
