/* Model weights: the file layout, synthetic initialization, load (mapped) and
 * save (docs/MODEL.md). */
#include "model_internal.h"
#include "internal.h"
#include "rng.h"
#include "gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 64

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
  size_t rounded = (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  if (rounded < bytes) return NULL;
  return aligned_alloc(ARENA_ALIGN, rounded ? rounded : ARENA_ALIGN);
}

/* Total bytes of the weights with each tensor's start rounded up to ARENA_ALIGN. */
static hmx_status arena_size(const hmx_model *m, const hmx_dtype *dtypes, size_t *total) {
  size_t t = 0;
  for (int i = 0; i < m->n_weights; i++) {
    size_t b;
    if (!hmx_mul_size((size_t)spec_numel(&m->specs[i]), hmx_dtype_size(dtypes[i]), &b) ||
        t + b + ARENA_ALIGN < t)
      return hmx_fail(HMX_ERR_NO_MEMORY, "model: weights too large for this machine");
    t = (t + b + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  }
  *total = t;
  return HMX_OK;
}

void hmx_model_free(hmx_model *m) {
  if (!m) return;
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
  hmx_model *m;
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
    off = (off + b + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    m->weight_bytes += (int64_t)b;
  }
  model_link(m);
  *out = m;
  return HMX_OK;
}

/* ------------------------------------------------------------------ metadata */

static const char *outproj_name(hmx_outproj o) { return o == HMX_OUTPROJ_DENSE ? "dense" : "hadamard"; }
static const char *rope_style_name(hmx_rope_style s) {
  return s == HMX_ROPE_HALF ? "half" : "interleaved";
}

/* A decimal integer in [lo, hi], the whole string. */
static hmx_status meta_int(const hmx_st_file *f, const char *path, const char *key, int lo,
                           int hi, int *out) {
  const char *v = hmx_st_meta(f, key);
  if (!v) return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is missing", path, key);
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || errno || x < lo || x > hi)
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata %s = '%s' is not an integer in [%d, %d]", path,
                    key, v, lo, hi);
  *out = (int)x;
  return HMX_OK;
}

static hmx_status meta_float(const hmx_st_file *f, const char *path, const char *key, float *out) {
  const char *v = hmx_st_meta(f, key);
  if (!v) return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is missing", path, key);
  char *end;
  errno = 0;
  float x = strtof(v, &end);
  if (end == v || *end || errno || !isfinite(x))
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata %s = '%s' is not a finite number", path, key, v);
  *out = x;
  return HMX_OK;
}

static hmx_status meta_enum(const hmx_st_file *f, const char *path, const char *key,
                            const char *a, const char *b, int *out) {
  const char *v = hmx_st_meta(f, key);
  if (!v) return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is missing", path, key);
  if (strcmp(v, a) == 0) *out = 0;
  else if (strcmp(v, b) == 0) *out = 1;
  else
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata %s = '%s' is not '%s' or '%s'", path, key, v,
                    a, b);
  return HMX_OK;
}

static hmx_status config_from_meta(const hmx_st_file *f, const char *path, hmx_model_config *c) {
  memset(c, 0, sizeof *c);
  const char *fmt = hmx_st_meta(f, "format");
  if (!fmt || strcmp(fmt, HMX_MODEL_FORMAT) != 0)
    return hmx_fail(HMX_ERR_FORMAT, "%s: not a hadamix model (metadata format = '%s', expected "
                    "'%s'; see docs/MODEL.md)", path, fmt ? fmt : "(missing)", HMX_MODEL_FORMAT);
  hmx_status st;
  int op = 0, rs = 0;
  if ((st = meta_int(f, path, "n_layer", 1, 4096, &c->n_layer)) ||
      (st = meta_int(f, path, "d_model", 1, 1 << 16, &c->d_model)) ||
      (st = meta_int(f, path, "n_head", 1, 1024, &c->n_head)) ||
      (st = meta_int(f, path, "n_kv_head", 1, 1024, &c->n_kv_head)) ||
      (st = meta_int(f, path, "head_dim", 2, 1024, &c->head_dim)) ||
      (st = meta_int(f, path, "d_ff", 1, 1 << 18, &c->d_ff)) ||
      (st = meta_int(f, path, "vocab", 1, 1 << 22, &c->vocab)) ||
      (st = meta_int(f, path, "context", 1, 1 << 24, &c->context)) ||
      (st = meta_int(f, path, "tied", 0, 1, &c->tied)) ||
      (st = meta_float(f, path, "rope_base", &c->rope_base)) ||
      (st = meta_float(f, path, "norm_eps", &c->norm_eps)) ||
      (st = meta_enum(f, path, "outproj", "dense", "hadamard", &op)) ||
      (st = meta_enum(f, path, "rope_style", "half", "interleaved", &rs)))
    return st;
  c->outproj = (hmx_outproj)op;
  c->rope_style = (hmx_rope_style)rs;
  return HMX_OK;
}

/* ------------------------------------------------------------------ load / save */

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
  char magic[4] = {0};
  if (fp) {
    size_t got = fread(magic, 1, 4, fp);
    fclose(fp);
    if (got == 4 && memcmp(magic, "GGUF", 4) == 0) return hmx_model_load_gguf(path, out);
  }
  hmx_st_file *f;
  hmx_status st = hmx_st_map(path, &f);
  if (st) return st;
  hmx_model_config cfg;
  if ((st = config_from_meta(f, path, &cfg))) {
    hmx_st_free(f);
    return st;
  }
  if ((st = hmx_model_config_check_file(&cfg, path))) {
    hmx_st_free(f);
    return st;
  }
  hmx_model *m;
  if ((st = model_new(&cfg, &m))) {
    hmx_st_free(f);
    return st;
  }
  m->file = f;
  if (hmx_st_count(f) != m->n_weights) {
    /* name the first unexpected tensor, or the first missing one below */
    for (int i = 0; i < hmx_st_count(f); i++) {
      const char *name = hmx_st_at(f, i)->name;
      int known = 0;
      for (int j = 0; j < m->n_weights && !known; j++) known = !strcmp(name, m->specs[j].name);
      if (!known) { /* the message first: name lives in the file that m owns */
        st = hmx_fail(HMX_ERR_FORMAT, "%s: unexpected tensor '%s' for this config "
                      "(docs/MODEL.md lists the layout)", path, name);
        hmx_model_free(m);
        return st;
      }
    }
  }
  /* the tensors, checked; those whose data are not aligned to their element
   * size are copied into an aligned arena */
  size_t realign = 0;
  for (int i = 0; i < m->n_weights; i++) {
    const hmx_weight_spec *s = &m->specs[i];
    const hmx_st_tensor *t = hmx_st_find(f, s->name);
    /* each message is made before hmx_model_free: s and t point into m */
    st = HMX_OK;
    if (!t)
      st = hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' is missing", path, s->name);
    else if (t->dtype != HMX_F32 && t->dtype != HMX_BF16 && t->dtype != HMX_F16)
      st = hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%s' is %s (weights are f32, bf16 or f16)", path,
                    s->name, hmx_dtype_name(t->dtype));
    else if (t->ndim != s->ndim || t->shape[0] != s->shape[0] ||
             (s->ndim == 2 && t->shape[1] != s->shape[1])) {
      if (s->ndim == 1)
        st = hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' must have shape [%lld]", path, s->name,
                      (long long)s->shape[0]);
      else
        st = hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' must have shape [%lld, %lld]", path,
                      s->name, (long long)s->shape[0], (long long)s->shape[1]);
    }
    if (st) {
      hmx_model_free(m);
      return st;
    }
    if ((uintptr_t)t->data % hmx_dtype_size(t->dtype))
      realign += (size_t)t->nbytes + ARENA_ALIGN;
    m->weight_bytes += (int64_t)t->nbytes;
  }
  if (realign && !(m->arena = arena_alloc(m->arena_bytes = realign))) {
    hmx_model_free(m);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory realigning weights", path);
  }
  size_t off = 0;
  for (int i = 0; i < m->n_weights; i++) {
    const hmx_st_tensor *t = hmx_st_find(f, m->specs[i].name);
    void *data = (void *)(uintptr_t)t->data; /* read-only: the model never writes weights */
    if ((uintptr_t)t->data % hmx_dtype_size(t->dtype)) {
      data = (char *)m->arena + off;
      memcpy(data, t->data, (size_t)t->nbytes);
      off = (off + (size_t)t->nbytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    }
    m->weights[i] = hmx_tensor_make(data, t->dtype, t->ndim, t->shape);
  }
  model_link(m);
  *out = m;
  return HMX_OK;
}

hmx_status hmx_model_save(const hmx_model *m, const char *path) {
  hmx_clear_error();
  if (!m || !path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_save: NULL argument");
  hmx_st_writer *w = hmx_st_writer_new();
  if (!w) return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_save: out of memory");
  const hmx_model_config *c = &m->cfg;
  char buf[64];
  for (int i = 0; i < m->n_weights; i++)
    if (m->q && m->q[i].data) {
      hmx_st_writer_free(w);
      return hmx_fail(HMX_ERR_UNSUPPORTED, "hmx_model_save: weight '%s' is kept as %s %s "
                      "(a GGUF load or hmx_model_prepare); saving such a model is not supported",
                      m->specs[i].name, hmx_gguf_type_name(m->q[i].type),
                      m->q[i].layout == HMX_QLAYOUT_G16 ? "in the G16 layout" : "blocks");
    }
  hmx_status st = hmx_st_writer_meta(w, "format", HMX_MODEL_FORMAT);
#define META_INT(key, v)                                                                      \
  if (!st) {                                                                                  \
    snprintf(buf, sizeof buf, "%d", (v));                                                     \
    st = hmx_st_writer_meta(w, key, buf);                                                     \
  }
  META_INT("n_layer", c->n_layer);
  META_INT("d_model", c->d_model);
  META_INT("n_head", c->n_head);
  META_INT("n_kv_head", c->n_kv_head);
  META_INT("head_dim", c->head_dim);
  META_INT("d_ff", c->d_ff);
  META_INT("vocab", c->vocab);
  META_INT("context", c->context);
  META_INT("tied", c->tied);
#undef META_INT
  /* %.9g round-trips every float exactly */
  if (!st) {
    snprintf(buf, sizeof buf, "%.9g", (double)c->rope_base);
    st = hmx_st_writer_meta(w, "rope_base", buf);
  }
  if (!st) {
    snprintf(buf, sizeof buf, "%.9g", (double)c->norm_eps);
    st = hmx_st_writer_meta(w, "norm_eps", buf);
  }
  if (!st) st = hmx_st_writer_meta(w, "outproj", outproj_name(c->outproj));
  if (!st) st = hmx_st_writer_meta(w, "rope_style", rope_style_name(c->rope_style));
  for (int i = 0; i < m->n_weights && !st; i++)
    st = hmx_st_writer_add(w, m->specs[i].name, &m->weights[i]);
  if (!st) st = hmx_st_writer_save(w, path);
  hmx_st_writer_free(w);
  return st;
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
