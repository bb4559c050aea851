/* The hadamix model file (docs/MODEL.md): a safetensors file whose metadata
 * holds the config and whose tensors are the weights, loaded mapped and
 * saved. safetensors headers are JSON, so this file is built only with cJSON
 * (json_absent.c stands in for it without). */
#include "model_internal.h"
#include "internal.h"
#include "gguf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ metadata */

static const char *outproj_name(hmx_outproj o) {
  return o == HMX_OUTPROJ_DENSE ? "dense" : "hadamard";
}
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

hmx_status hmx_model_load_safetensors(const char *path, hmx_model **out) {
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
  if ((st = hmx_model_alloc(&cfg, &m))) {
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
      realign += (size_t)t->nbytes + HMX_MODEL_ARENA_ALIGN;
    m->weight_bytes += (int64_t)t->nbytes;
  }
  if (realign && !(m->arena = hmx_model_arena_alloc(m->arena_bytes = realign))) {
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
      off = hmx_model_arena_round(off + (size_t)t->nbytes);
    }
    m->weights[i] = hmx_tensor_make(data, t->dtype, t->ndim, t->shape);
  }
  hmx_model_link(m);
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
