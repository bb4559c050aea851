/* A structure-aware mutation for the GGUF fuzz targets: parse the input,
 * change one thing a byte mutation rarely reaches while keeping the file
 * well-formed, and write it again (GGUF version 3, as src/gguf.h describes).
 *
 * Byte mutations of a GGUF file mostly break its lengths and offsets, so the
 * reader refuses it and the loader behind the reader never sees it. Here the
 * file is rewritten whole, with every length, offset and padding recomputed,
 * so the edit reaches the loader (model_gguf.c, model_config.c):
 *   - a numeric metadata value set to an edge (0, 1, -1, off by one, doubled,
 *     halved, the type's extremes; NaN, infinities, subnormals for floats);
 *   - a metadata value retyped (an integer as another width or signedness, as
 *     a float, as a string), an array cut short, or a key dropped;
 *   - a tensor's dimension changed (its data grown or cut to fit), its type
 *     changed to another ggml type (data resized), its name pointed at
 *     another layer, or the tensor dropped.
 * tests/fuzz/test_gguf_rewrite.c checks that what it writes parses, holds
 * the edit and, unedited, is the file it read. */
#ifndef HMX_FUZZ_GGUF_REWRITE_H
#define HMX_FUZZ_GGUF_REWRITE_H

#include "gguf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the writer */

typedef struct rw_buf {
  uint8_t *p;
  size_t n, cap;
  int full; /* something did not fit: the result is unusable */
} rw_buf;

static void rw_bytes(rw_buf *b, const void *src, size_t n) {
  if (b->full || n > b->cap - b->n) {
    b->full = 1;
    return;
  }
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}
/* v's low n bytes, little-endian */
static void rw_le(uint8_t *to, uint64_t v, int n) {
  for (int i = 0; i < n; i++) to[i] = (uint8_t)(v >> (8 * i));
}
static void rw_uint(rw_buf *b, uint64_t v, int n) {
  uint8_t le[8];
  rw_le(le, v, n);
  rw_bytes(b, le, (size_t)n);
}
static void rw_str(rw_buf *b, const char *s, uint64_t len) {
  rw_uint(b, len, 8);
  rw_bytes(b, s, (size_t)len);
}
static void rw_pad(rw_buf *b, size_t align) {
  while (!b->full && b->n % align) rw_bytes(b, "", 1);
}

static int rw_is_int(uint32_t t) {
  return t <= HMX_GGUF_I32 || t == HMX_GGUF_U64 || t == HMX_GGUF_I64;
}

/* ---------------------------------------------------------------- the edit */

enum {
  RW_KV_VALUE, /* a numeric scalar to an edge value */
  RW_KV_RETYPE,
  RW_KV_ARRAY_CUT,
  RW_KV_DROP,
  RW_T_DIM,
  RW_T_TYPE,
  RW_T_RENAME,
  RW_T_DROP,
  RW_KINDS /* as an edit's kind: none (with index -1) */
};

typedef struct rw_edit {
  int kind;
  int64_t index;       /* the metadata pair or tensor edited */
  uint32_t vtype;      /* KV_VALUE, KV_RETYPE: the value's (new) type */
  uint8_t raw[8];      /* KV_VALUE, KV_RETYPE (numbers): the new value, little-endian */
  char text[24];       /* KV_RETYPE to a string */
  uint64_t n;          /* KV_ARRAY_CUT: elements kept */
  int dim;             /* T_DIM */
  int64_t ne;          /* T_DIM: the new extent */
  uint32_t ttype;      /* T_TYPE */
  char name[HMX_GGUF_MAX_NAME + 1]; /* T_RENAME */
} rw_edit;

/* A metadata value as a signed number (integers, bools, floats truncated). */
static int64_t rw_scalar_int(const hmx_gguf_value *v) {
  return v->type == HMX_GGUF_ARRAY || v->type == HMX_GGUF_STRING ? 0 : hmx_gguf_array_int(v, 0);
}

/* An edge value for an integer of type t near `was` (unsigned arithmetic:
 * it wraps where `was` is at an end of the type, as the file's bytes would). */
static uint64_t rw_int_edge(uint32_t t, int64_t was, unsigned r) {
  const int bits = (int)hmx_gguf_vtype_size(t) * 8;
  const uint64_t max_u = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  const uint64_t w = (uint64_t)was;
  switch (r % 10) {
  case 0: return 0;
  case 1: return 1;
  case 2: return w - 1;
  case 3: return w + 1;
  case 4: return w * 2;
  case 5: return (uint64_t)(was / 2);
  case 6: return UINT64_MAX; /* -1 in a signed type */
  case 7: return max_u >> 1; /* the signed maximum */
  case 8: return (uint64_t)1 << (bits - 1); /* the signed minimum */
  default: return w + (r >> 4) % 64;
  }
}

static float rw_f32_edge(float was, unsigned r) {
  static const uint32_t bits[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                                  0x80000000u, 0x7f7fffffu, 0xbf800000u};
  float f;
  switch (r % 10) {
  case 0: return 0.0f;
  case 1: return was * 2.0f;
  case 2: return was * 0.5f;
  default: memcpy(&f, &bits[(r / 10) % 7], 4); return f;
  }
}

/* Pick an edit of f from r; 0 if the picked kind has nothing to act on. */
static int rw_pick(const hmx_gguf *f, unsigned r, rw_edit *e) {
  memset(e, 0, sizeof *e);
  e->kind = (int)(r % RW_KINDS);
  r /= RW_KINDS;
  const int64_t nkv = hmx_gguf_kv_count(f), nt = hmx_gguf_tensor_count(f);
  if (e->kind <= RW_KV_DROP) {
    if (nkv == 0) return 0;
    e->index = (int64_t)(r % (unsigned)nkv);
    r /= (unsigned)nkv;
    const hmx_gguf_value *v = &hmx_gguf_kv_at(f, e->index)->value;
    switch (e->kind) {
    case RW_KV_VALUE:
      if (v->type == HMX_GGUF_F32) {
        float was, now;
        memcpy(&was, v->raw, 4);
        now = rw_f32_edge(was, r);
        memcpy(e->raw, &now, 4);
      } else if (rw_is_int(v->type)) {
        rw_le(e->raw, rw_int_edge(v->type, rw_scalar_int(v), r), 8);
      } else {
        return 0;
      }
      e->vtype = v->type;
      return 1;
    case RW_KV_RETYPE: {
      if (v->type == HMX_GGUF_ARRAY || v->type == HMX_GGUF_STRING) return 0;
      static const uint32_t to[] = {HMX_GGUF_U8,  HMX_GGUF_I16, HMX_GGUF_U32, HMX_GGUF_I32,
                                    HMX_GGUF_U64, HMX_GGUF_I64, HMX_GGUF_F32, HMX_GGUF_F64,
                                    HMX_GGUF_BOOL, HMX_GGUF_STRING};
      e->vtype = to[r % 10];
      if (e->vtype == v->type) return 0;
      const int64_t was = rw_scalar_int(v);
      if (e->vtype == HMX_GGUF_STRING) {
        snprintf(e->text, sizeof e->text, "%lld", (long long)was);
      } else if (e->vtype == HMX_GGUF_F32) {
        const float x = (float)was;
        memcpy(e->raw, &x, 4);
      } else if (e->vtype == HMX_GGUF_F64) {
        const double x = (double)was;
        memcpy(e->raw, &x, 8);
      } else if (e->vtype == HMX_GGUF_BOOL) {
        e->raw[0] = was != 0;
      } else {
        rw_le(e->raw, (uint64_t)was, 8); /* truncated to the new width when written */
      }
      return 1;
    }
    case RW_KV_ARRAY_CUT:
      if (v->type != HMX_GGUF_ARRAY || v->n == 0) return 0;
      e->n = (r & 1) ? v->n - 1 : v->n / 2;
      return 1;
    default: /* RW_KV_DROP */
      return 1;
    }
  }
  if (nt == 0) return 0;
  e->index = (int64_t)(r % (unsigned)nt);
  r /= (unsigned)nt;
  const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, e->index);
  switch (e->kind) {
  case RW_T_DIM: {
    int64_t block = 1, bytes = 0;
    hmx_gguf_type_block(t->type, &block, &bytes);
    e->dim = (int)(r % (unsigned)t->ndim);
    r /= (unsigned)t->ndim;
    const int64_t was = t->ne[e->dim], step = e->dim == 0 ? block : 1; /* whole blocks */
    if (was > (INT64_C(1) << 20)) return 0; /* no overflow below; such a file is too large */
    static const int64_t by[] = {-1, 1, 2, -2, 0};
    const int pick = (int)(r % 6);
    e->ne = pick == 5 ? was * 2 : was + by[pick] * step;
    if (pick == 4) e->ne = step; /* one row, one block */
    return e->ne > 0 && e->ne != was && e->ne <= (INT64_C(1) << 20);
  }
  case RW_T_TYPE: {
    static const uint32_t to[] = {HMX_GGML_F32,  HMX_GGML_F16,  HMX_GGML_BF16, HMX_GGML_Q8_0,
                                  HMX_GGML_Q4_0, HMX_GGML_Q4_1, HMX_GGML_Q4_K, HMX_GGML_Q5_K,
                                  HMX_GGML_Q6_K, HMX_GGML_Q5_0, HMX_GGML_Q5_1, HMX_GGML_Q2_K,
                                  HMX_GGML_Q3_K, HMX_GGML_IQ4_NL, HMX_GGML_IQ4_XS,
                                  21 /* IQ3_S: refused */};
    e->ttype = to[r % (sizeof to / sizeof *to)];
    int64_t block = 1, bytes = 0;
    return e->ttype != t->type && hmx_gguf_type_block(e->ttype, &block, &bytes) &&
           t->ne[0] % block == 0;
  }
  case RW_T_RENAME: {
    /* a digit of the name changed: blk.0.attn_q.weight -> blk.1.attn_q.weight */
    const size_t len = strlen(t->name);
    if (len > HMX_GGUF_MAX_NAME) return 0;
    memcpy(e->name, t->name, len + 1);
    for (size_t i = 0; i < len; i++)
      if (e->name[i] >= '0' && e->name[i] <= '9') {
        e->name[i] = (char)('0' + (e->name[i] - '0' + 1 + (int)(r % 3)) % 10);
        return 1;
      }
    return 0;
  }
  default: /* RW_T_DROP */
    return 1;
  }
}

/* ---------------------------------------------------------------- writing */

static void rw_value(rw_buf *b, const hmx_gguf_value *v, const rw_edit *e, int edited) {
  if (edited && (e->kind == RW_KV_VALUE || e->kind == RW_KV_RETYPE)) {
    rw_uint(b, e->vtype, 4);
    if (e->vtype == HMX_GGUF_STRING) rw_str(b, e->text, strlen(e->text));
    else rw_bytes(b, e->raw, hmx_gguf_vtype_size(e->vtype));
    return;
  }
  rw_uint(b, v->type, 4);
  uint64_t n = v->n;
  if (v->type == HMX_GGUF_ARRAY) {
    if (edited && e->kind == RW_KV_ARRAY_CUT) n = e->n;
    rw_uint(b, v->elem, 4);
    rw_uint(b, n, 8);
  }
  if (v->elem == HMX_GGUF_STRING) {
    for (uint64_t i = 0; i < n && !b->full; i++) rw_str(b, v->strs[i].ptr, v->strs[i].len);
  } else {
    const size_t sz = hmx_gguf_vtype_size(v->elem);
    if (n > (b->cap - b->n) / (sz ? sz : 1)) b->full = 1;
    else rw_bytes(b, v->raw, (size_t)n * sz);
  }
}

/* The bytes a tensor of `type` and extents ne[] takes; 0 if not whole blocks
 * or too large. */
static uint64_t rw_tensor_bytes(uint32_t type, int ndim, const int64_t *ne) {
  int64_t block = 1, bytes = 0;
  if (!hmx_gguf_type_block(type, &block, &bytes) || ne[0] % block) return 0;
  uint64_t n = (uint64_t)(ne[0] / block) * (uint64_t)bytes;
  for (int d = 1; d < ndim; d++) {
    if (ne[d] <= 0 || n > (UINT64_C(1) << 32) / (uint64_t)ne[d]) return 0;
    n *= (uint64_t)ne[d];
  }
  return n;
}

/* f with edit e, as a GGUF file in out[0..cap); its size, or 0 if it does not
 * fit (or a tensor's new size cannot be written). */
static size_t rw_write(const hmx_gguf *f, const rw_edit *e, uint8_t *out, size_t cap) {
  rw_buf b = {out, 0, cap, 0};
  const int64_t nkv = hmx_gguf_kv_count(f), nt = hmx_gguf_tensor_count(f);
  const int kv_edit = e->kind <= RW_KV_DROP;
  const size_t align = hmx_gguf_alignment(f); /* an edited general.alignment: kept as it was */
  enum { MAX_T = 4096 };
  if (nt > MAX_T) return 0;
  static uint64_t size[MAX_T]; /* each tensor's bytes as written */

  rw_bytes(&b, "GGUF", 4);
  rw_uint(&b, 3, 4);
  rw_uint(&b, (uint64_t)(nt - (e->kind == RW_T_DROP)), 8);
  rw_uint(&b, (uint64_t)(nkv - (e->kind == RW_KV_DROP)), 8);
  for (int64_t i = 0; i < nkv; i++) {
    const int edited = kv_edit && i == e->index;
    if (edited && e->kind == RW_KV_DROP) continue;
    const hmx_gguf_kv *kv = hmx_gguf_kv_at(f, i);
    rw_str(&b, kv->key, strlen(kv->key));
    rw_value(&b, &kv->value, e, edited);
  }
  uint64_t at = 0;
  for (int64_t i = 0; i < nt; i++) {
    const int edited = !kv_edit && i == e->index;
    if (edited && e->kind == RW_T_DROP) continue;
    const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, i);
    int64_t ne[HMX_GGUF_MAX_DIMS];
    memcpy(ne, t->ne, sizeof ne);
    uint32_t type = t->type;
    const char *name = t->name;
    if (edited && e->kind == RW_T_DIM) ne[e->dim] = e->ne;
    if (edited && e->kind == RW_T_TYPE) type = e->ttype;
    if (edited && e->kind == RW_T_RENAME) name = e->name;
    size[i] = edited ? rw_tensor_bytes(type, t->ndim, ne) : t->nbytes;
    if (size[i] == 0 && t->nbytes != 0) return 0;
    const uint64_t offset = at;
    at += (size[i] + align - 1) / align * align;
    rw_str(&b, name, strlen(name));
    rw_uint(&b, (uint32_t)t->ndim, 4);
    for (int d = 0; d < t->ndim; d++) rw_uint(&b, (uint64_t)ne[d], 8);
    rw_uint(&b, type, 4);
    rw_uint(&b, offset, 8);
  }
  rw_pad(&b, align); /* the data section */
  for (int64_t i = 0; i < nt && !b.full; i++) {
    if (!kv_edit && i == e->index && e->kind == RW_T_DROP) continue;
    const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, i);
    rw_pad(&b, align); /* each tensor at the offset written above */
    /* the old bytes, repeated or cut to the new size (zeros for an empty one) */
    for (uint64_t done = 0; done < size[i] && !b.full;) {
      const uint64_t left = size[i] - done, n = t->nbytes && t->nbytes < left ? t->nbytes : left;
      if (t->nbytes) rw_bytes(&b, t->data, (size_t)n);
      else for (uint64_t j = 0; j < n; j++) rw_bytes(&b, "", 1);
      done += n;
    }
  }
  return b.full ? 0 : b.n;
}

/* Rewrites data[0..size) with one structural edit picked by seed, in place (at
 * most max_size bytes); returns the new size, or 0 when the input does not
 * parse, the edit has nothing to act on, or the result would not fit. */
static size_t fuzz_gguf_rewrite(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
  hmx_gguf *f = NULL;
  if (hmx_gguf_parse(data, size, "rewrite", &f) != HMX_OK) return 0;
  rw_edit e;
  size_t n = 0;
  uint8_t *out = NULL;
  if (rw_pick(f, seed, &e) && (out = malloc(max_size)) != NULL)
    n = rw_write(f, &e, out, max_size); /* f points into data: write elsewhere first */
  hmx_gguf_free(f);
  if (n) memcpy(data, out, n);
  free(out);
  return n;
}
#endif
