/* Strict GGUF v3 reader (see src/gguf.h and docs/GGUF.md).
 *
 * Written from the format description, not from another reader. The parse
 * is one forward pass over the bytes with a bounds-checked cursor; every
 * count is checked against the bytes left (each entry needs at least a fixed
 * number of bytes) before anything is allocated for it, so a hostile count
 * cannot make the reader allocate more than a small multiple of the file.
 * Then the data section: general.alignment, the aligned start, and each
 * tensor's range inside the file, sorted by offset to reject overlaps.
 * Lookups by key or name use tables sorted once (duplicates found there). */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "gguf.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define HMX_HAVE_MMAP 1
#endif

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3u
#define MAX_SOURCE 200

struct hmx_gguf {
  unsigned char *bytes;   /* the whole file (owned copy or a read-only map) */
  size_t len;
  int mapped;
  char source[MAX_SOURCE];
  uint32_t version, alignment;
  int64_t n_kv, n_tensors;
  hmx_gguf_kv *kvs;       /* file order */
  hmx_gguf_tensor *tensors;
  int64_t *kv_sorted;     /* indices sorted by key (bytewise) */
  int64_t *t_sorted;      /* indices sorted by name */
  char *names;            /* every key and tensor name, NUL-terminated, one block */
  size_t names_len, names_cap;
  hmx_gguf_str **str_tables; /* one per string value / string array */
  int64_t n_str_tables;
  uint64_t data_start;
};

/* ------------------------------------------------------------------ cursor */

typedef struct cursor {
  const unsigned char *p;
  size_t len, pos;
  const char *src;
} cursor;

static size_t left(const cursor *c) { return c->len - c->pos; }

static hmx_status truncated(const cursor *c, const char *what) {
  return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: %s at byte %zu runs past the end (%zu bytes)",
                  c->src, what, c->pos, c->len);
}

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static hmx_status rd_u32(cursor *c, uint32_t *v, const char *what) {
  if (left(c) < 4) return truncated(c, what);
  *v = (uint32_t)le(c->p + c->pos, 4);
  c->pos += 4;
  return HMX_OK;
}

static hmx_status rd_u64(cursor *c, uint64_t *v, const char *what) {
  if (left(c) < 8) return truncated(c, what);
  *v = le(c->p + c->pos, 8);
  c->pos += 8;
  return HMX_OK;
}

/* A string: u64 length, then the bytes (checked to be there). */
static hmx_status rd_str(cursor *c, hmx_gguf_str *s, const char *what) {
  uint64_t n = 0;
  hmx_status st = rd_u64(c, &n, what);
  if (st) return st;
  if (n > left(c))
    return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: %s at byte %zu has length %llu but only %zu "
                    "bytes follow", c->src, what, c->pos - 8, (unsigned long long)n, left(c));
  s->ptr = (const char *)c->p + c->pos;
  s->len = n;
  c->pos += (size_t)n;
  return HMX_OK;
}

/* ------------------------------------------------------------------ types */

static const struct {
  uint32_t type;
  const char *name;
  int64_t block, bytes;
} ggml_types[] = {
  /* sizes of every ggml type of the format as of 2025, so that a file using
   * any of them parses (only some are dequantized: gguf_dequant.c) */
  {0, "F32", 1, 4},        {1, "F16", 1, 2},        {2, "Q4_0", 32, 18},
  {3, "Q4_1", 32, 20},     {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},
  {8, "Q8_0", 32, 34},     {9, "Q8_1", 32, 36},     {10, "Q2_K", 256, 84},
  {11, "Q3_K", 256, 110},  {12, "Q4_K", 256, 144},  {13, "Q5_K", 256, 176},
  {14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292},  {16, "IQ2_XXS", 256, 66},
  {17, "IQ2_XS", 256, 74}, {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
  {20, "IQ4_NL", 32, 18},  {21, "IQ3_S", 256, 110}, {22, "IQ2_S", 256, 82},
  {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},       {25, "I16", 1, 2},
  {26, "I32", 1, 4},       {27, "I64", 1, 8},       {28, "F64", 1, 8},
  {29, "IQ1_M", 256, 56},  {30, "BF16", 1, 2},      {34, "TQ1_0", 256, 54},
  {35, "TQ2_0", 256, 66},  {39, "MXFP4", 32, 17},
};

int hmx_gguf_type_block(uint32_t type, int64_t *block, int64_t *bytes) {
  for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++)
    if (ggml_types[i].type == type) {
      if (block) *block = ggml_types[i].block;
      if (bytes) *bytes = ggml_types[i].bytes;
      return 1;
    }
  return 0;
}

const char *hmx_gguf_type_name(uint32_t type) {
  for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++)
    if (ggml_types[i].type == type) return ggml_types[i].name;
  return NULL;
}

static const char *const vtype_names[] = {"u8",  "i8",     "u16",   "i16", "u32", "i32", "f32",
                                          "bool", "string", "array", "u64", "i64", "f64"};

const char *hmx_gguf_vtype_name(uint32_t t) {
  return t < sizeof vtype_names / sizeof vtype_names[0] ? vtype_names[t] : "unknown";
}

size_t hmx_gguf_vtype_size(uint32_t t) {
  switch (t) {
  case HMX_GGUF_U8: case HMX_GGUF_I8: case HMX_GGUF_BOOL: return 1;
  case HMX_GGUF_U16: case HMX_GGUF_I16: return 2;
  case HMX_GGUF_U32: case HMX_GGUF_I32: case HMX_GGUF_F32: return 4;
  case HMX_GGUF_U64: case HMX_GGUF_I64: case HMX_GGUF_F64: return 8;
  default: return 0;
  }
}

/* ------------------------------------------------------------------ names */

/* Copies a key or tensor name into the names block; returns its offset. The
 * block is sized before the parse (at most the file length plus one NUL per
 * entry), so nothing moves and the offsets become pointers at the end. */
static size_t add_name(hmx_gguf *f, const hmx_gguf_str *s) {
  size_t at = f->names_len;
  memcpy(f->names + at, s->ptr, (size_t)s->len);
  f->names[at + (size_t)s->len] = '\0';
  f->names_len += (size_t)s->len + 1;
  return at;
}

static hmx_status check_name(const cursor *c, const hmx_gguf_str *s, size_t max,
                             const char *what, size_t at) {
  if (s->len == 0)
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s at byte %zu is empty", c->src, what, at);
  if (s->len > max)
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s at byte %zu is %llu bytes long (at most %zu)", c->src,
                    what, at, (unsigned long long)s->len, max);
  if (memchr(s->ptr, '\0', (size_t)s->len))
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s at byte %zu holds a NUL byte", c->src, what, at);
  return HMX_OK;
}

/* ------------------------------------------------------------------ values */

static hmx_status read_strings(hmx_gguf *f, cursor *c, uint64_t n, hmx_gguf_value *v,
                               const char *key) {
  /* every string takes at least its 8-byte length */
  if (n > left(c) / 8)
    return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: '%s' claims %llu strings at byte %zu but only "
                    "%zu bytes follow", c->src, key, (unsigned long long)n, c->pos, left(c));
  hmx_gguf_str *t = hmx_alloc_array(n ? (size_t)n : 1, sizeof *t);
  if (!t) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory for '%s'", c->src, key);
  f->str_tables[f->n_str_tables++] = t;
  for (uint64_t i = 0; i < n; i++) {
    hmx_status st = rd_str(c, &t[i], key);
    if (st) return st;
  }
  v->strs = t;
  return HMX_OK;
}

static hmx_status read_value(hmx_gguf *f, cursor *c, uint32_t type, hmx_gguf_value *v,
                             const char *key) {
  memset(v, 0, sizeof *v);
  v->type = v->elem = (hmx_gguf_vtype)type;
  v->n = 1;
  v->raw = c->p + c->pos;
  if (type == HMX_GGUF_STRING) return read_strings(f, c, 1, v, key);
  if (type == HMX_GGUF_ARRAY) {
    uint32_t et = 0;
    uint64_t n = 0;
    hmx_status st;
    if ((st = rd_u32(c, &et, key)) || (st = rd_u64(c, &n, key))) return st;
    v->elem = (hmx_gguf_vtype)et;
    v->n = n;
    v->raw = c->p + c->pos;
    if (et == HMX_GGUF_ARRAY)
      return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is an array of arrays (not supported)", c->src,
                      key);
    if (et == HMX_GGUF_STRING) return read_strings(f, c, n, v, key);
    size_t es = hmx_gguf_vtype_size(et);
    if (!es)
      return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' has unknown array element type %u", c->src, key,
                      et);
    if (n > left(c) / es)
      return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: '%s' claims %llu elements of %zu bytes at "
                      "byte %zu but only %zu bytes follow", c->src, key, (unsigned long long)n,
                      es, c->pos, left(c));
    if (et == HMX_GGUF_BOOL)
      for (uint64_t i = 0; i < n; i++)
        if (v->raw[i] > 1)
          return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' element %llu is a bool of value %u (0 or 1)",
                          c->src, key, (unsigned long long)i, v->raw[i]);
    c->pos += (size_t)(n * es);
    return HMX_OK;
  }
  size_t es = hmx_gguf_vtype_size(type);
  if (!es) return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' has unknown value type %u", c->src, key, type);
  if (left(c) < es) return truncated(c, key);
  if (type == HMX_GGUF_BOOL && v->raw[0] > 1)
    return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is a bool of value %u (0 or 1)", c->src, key,
                    v->raw[0]);
  c->pos += es;
  return HMX_OK;
}

/* ------------------------------------------------------------------ sorting */

/* Index tables are sorted by a merge sort of our own: qsort has no context
 * argument in C11, and a global would make parsing thread-unsafe. */
typedef int (*idx_cmp)(const hmx_gguf *f, int64_t a, int64_t b);

static int cmp_key(const hmx_gguf *f, int64_t a, int64_t b) {
  return strcmp(f->kvs[a].key, f->kvs[b].key);
}
static int cmp_tname(const hmx_gguf *f, int64_t a, int64_t b) {
  return strcmp(f->tensors[a].name, f->tensors[b].name);
}
static int cmp_offset(const hmx_gguf *f, int64_t a, int64_t b) {
  const hmx_gguf_tensor *x = &f->tensors[a], *y = &f->tensors[b];
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  if (x->nbytes != y->nbytes) return x->nbytes < y->nbytes ? -1 : 1;
  return 0;
}

static void sort_idx(const hmx_gguf *f, int64_t *idx, int64_t *tmp, int64_t n, idx_cmp cmp) {
  if (n < 2) return;
  int64_t h = n / 2;
  sort_idx(f, idx, tmp, h, cmp);
  sort_idx(f, idx + h, tmp, n - h, cmp);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = cmp(f, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* ------------------------------------------------------------------ parse */

static hmx_status parse_header(hmx_gguf *f, cursor *c) {
  hmx_status st;
  if (c->len < 4 || memcmp(c->p, GGUF_MAGIC, 4) != 0)
    return hmx_fail(HMX_ERR_FORMAT, "%s: not a GGUF file (the first 4 bytes are not \"GGUF\")",
                    c->src);
  c->pos = 4;
  if ((st = rd_u32(c, &f->version, "the version"))) return st;
  if (f->version != GGUF_VERSION)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: GGUF version %u (only version 3 is read)", c->src,
                    f->version);
  uint64_t nt = 0, nkv = 0;
  if ((st = rd_u64(c, &nt, "the tensor count")) || (st = rd_u64(c, &nkv, "the metadata count")))
    return st;
  /* a key/value takes at least 8 (key length) + 1 (key) + 4 (type) + 1 bytes,
   * a tensor info at least 8 + 1 (name) + 4 (rank) + 8 (a dim) + 4 + 8 */
  if (nkv > left(c) / 14)
    return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: %llu metadata entries cannot fit in the %zu "
                    "bytes that follow the header", c->src, (unsigned long long)nkv, left(c));
  if (nt > left(c) / 33)
    return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: %llu tensor infos cannot fit in the %zu bytes "
                    "that follow the header", c->src, (unsigned long long)nt, left(c));
  f->n_kv = (int64_t)nkv;
  f->n_tensors = (int64_t)nt;
  return HMX_OK;
}

static hmx_status parse_kvs(hmx_gguf *f, cursor *c, size_t *key_at) {
  for (int64_t i = 0; i < f->n_kv; i++) {
    hmx_gguf_str k = {NULL, 0};
    size_t at = c->pos;
    hmx_status st = rd_str(c, &k, "a metadata key");
    if (st || (st = check_name(c, &k, HMX_GGUF_MAX_KEY, "metadata key", at))) return st;
    key_at[i] = add_name(f, &k);
    const char *key = f->names + key_at[i];
    uint32_t type = 0;
    if ((st = rd_u32(c, &type, key))) return st;
    if ((st = read_value(f, c, type, &f->kvs[i].value, key))) return st;
  }
  return HMX_OK;
}

static hmx_status parse_tensor_info(hmx_gguf *f, cursor *c, int64_t i, size_t *name_at) {
  hmx_gguf_tensor *t = &f->tensors[i];
  hmx_gguf_str s = {NULL, 0};
  size_t at = c->pos;
  hmx_status st = rd_str(c, &s, "a tensor name");
  if (st || (st = check_name(c, &s, HMX_GGUF_MAX_NAME, "tensor name", at))) return st;
  name_at[i] = add_name(f, &s);
  const char *name = f->names + name_at[i];
  uint32_t nd = 0;
  if ((st = rd_u32(c, &nd, name))) return st;
  if (nd < 1 || nd > HMX_GGUF_MAX_DIMS)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' has rank %u (1 to %d)", c->src, name, nd,
                    HMX_GGUF_MAX_DIMS);
  t->ndim = (int)nd;
  int64_t numel = 1;
  for (int d = 0; d < HMX_GGUF_MAX_DIMS; d++) t->ne[d] = 1;
  for (uint32_t d = 0; d < nd; d++) {
    uint64_t ne = 0;
    if ((st = rd_u64(c, &ne, name))) return st;
    if (ne > (uint64_t)INT64_MAX)
      return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' dimension %u is %llu (too large)", c->src,
                      name, d, (unsigned long long)ne);
    t->ne[d] = (int64_t)ne;
    if (ne && numel > INT64_MAX / (int64_t)ne)
      return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' has more than 2^63 elements", c->src, name);
    numel *= (int64_t)ne;
  }
  t->numel = numel;
  if ((st = rd_u32(c, &t->type, name)) || (st = rd_u64(c, &t->offset, name))) return st;
  int64_t block, bytes;
  if (!hmx_gguf_type_block(t->type, &block, &bytes))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tensor '%s' has unknown ggml type %u", c->src, name,
                    t->type);
  if (t->ne[0] % block)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' of type %s: dimension 0 (%lld) is not a "
                    "multiple of the block size %lld", c->src, name, hmx_gguf_type_name(t->type),
                    (long long)t->ne[0], (long long)block);
  if (numel / block > INT64_MAX / bytes)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' is too large", c->src, name);
  t->nbytes = (uint64_t)(numel / block * bytes);
  return HMX_OK;
}

static hmx_status parse_alignment(hmx_gguf *f) {
  f->alignment = HMX_GGUF_DEFAULT_ALIGNMENT;
  const hmx_gguf_value *v = hmx_gguf_find_kv(f, "general.alignment");
  if (!v) return HMX_OK;
  if (v->type != HMX_GGUF_U32)
    return hmx_fail(HMX_ERR_FORMAT, "%s: general.alignment is a %s (must be u32)", f->source,
                    hmx_gguf_vtype_name(v->type));
  uint32_t a = (uint32_t)le(v->raw, 4);
  if (a == 0 || (a & (a - 1)))
    return hmx_fail(HMX_ERR_FORMAT, "%s: general.alignment = %u is not a power of two",
                    f->source, a);
  f->alignment = a;
  return HMX_OK;
}

/* The data section: aligned start, each tensor inside the file, no overlap. */
static hmx_status parse_data(hmx_gguf *f, size_t end_of_infos, int64_t *tmp) {
  const uint64_t a = f->alignment;
  uint64_t start = ((uint64_t)end_of_infos + a - 1) / a * a; /* end_of_infos < 2^63: no wrap */
  f->data_start = start;
  if (f->n_tensors == 0) return HMX_OK;
  if (start > f->len)
    return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: the data section would start at byte %llu "
                    "after the end of the file (%zu bytes)", f->source,
                    (unsigned long long)start, f->len);
  const uint64_t size = f->len - start;
  int64_t *idx = hmx_alloc_array((size_t)f->n_tensors, sizeof *idx);
  if (!idx) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", f->source);
  for (int64_t i = 0; i < f->n_tensors; i++) {
    hmx_gguf_tensor *t = &f->tensors[i];
    idx[i] = i;
    if (t->offset % a) {
      free(idx);
      return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' offset %llu is not a multiple of the "
                      "alignment %llu", f->source, t->name, (unsigned long long)t->offset,
                      (unsigned long long)a);
    }
    if (t->offset > size || t->nbytes > size - t->offset) {
      free(idx);
      return hmx_fail(HMX_ERR_FORMAT, "%s: truncated: tensor '%s' (%llu bytes at data offset "
                      "%llu) runs past the end of the file (%llu data bytes)", f->source, t->name,
                      (unsigned long long)t->nbytes, (unsigned long long)t->offset,
                      (unsigned long long)size);
    }
    t->data = f->bytes + start + t->offset;
  }
  sort_idx(f, idx, tmp, f->n_tensors, cmp_offset);
  for (int64_t i = 1; i < f->n_tensors; i++) {
    const hmx_gguf_tensor *p = &f->tensors[idx[i - 1]], *q = &f->tensors[idx[i]];
    if (p->nbytes && q->nbytes && p->offset + p->nbytes > q->offset) {
      free(idx);
      return hmx_fail(HMX_ERR_FORMAT, "%s: tensors '%s' and '%s' overlap in the data section",
                      f->source, p->name, q->name);
    }
  }
  free(idx);
  return HMX_OK;
}

static hmx_status parse_all(hmx_gguf *f) {
  cursor c = {f->bytes, f->len, 0, f->source};
  hmx_status st = parse_header(f, &c);
  if (st) return st;
  /* Every key, name and string value comes from distinct file bytes, so the
   * copies fit in len + one NUL each; string tables are at most one per kv. */
  /* (the counts were checked against the length: this cannot wrap) */
  size_t cap = f->len + (size_t)f->n_kv + (size_t)f->n_tensors + 1;
  f->names_cap = cap;
  size_t n_idx = (size_t)(f->n_kv > f->n_tensors ? f->n_kv : f->n_tensors) + 1;
  f->names = malloc(cap);
  f->kvs = hmx_alloc_array((size_t)f->n_kv + 1, sizeof *f->kvs);
  f->tensors = hmx_alloc_array((size_t)f->n_tensors + 1, sizeof *f->tensors);
  f->str_tables = hmx_alloc_array((size_t)f->n_kv + 1, sizeof *f->str_tables);
  f->kv_sorted = hmx_alloc_array((size_t)f->n_kv + 1, sizeof *f->kv_sorted);
  f->t_sorted = hmx_alloc_array((size_t)f->n_tensors + 1, sizeof *f->t_sorted);
  size_t *at = hmx_alloc_array(n_idx * 2, sizeof *at);
  int64_t *tmp = hmx_alloc_array(n_idx, sizeof *tmp);
  if (!f->names || !f->kvs || !f->tensors || !f->str_tables || !f->kv_sorted || !f->t_sorted ||
      !at || !tmp) {
    free(at);
    free(tmp);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", f->source);
  }
  size_t *key_at = at, *name_at = at + n_idx;
  if (!(st = parse_kvs(f, &c, key_at))) {
    for (int64_t i = 0; i < f->n_tensors && !st; i++) st = parse_tensor_info(f, &c, i, name_at);
  }
  if (!st) {
    /* the names block is complete: offsets become pointers */
    for (int64_t i = 0; i < f->n_kv; i++) {
      f->kvs[i].key = f->names + key_at[i];
      f->kv_sorted[i] = i;
    }
    for (int64_t i = 0; i < f->n_tensors; i++) {
      f->tensors[i].name = f->names + name_at[i];
      f->t_sorted[i] = i;
    }
    sort_idx(f, f->kv_sorted, tmp, f->n_kv, cmp_key);
    sort_idx(f, f->t_sorted, tmp, f->n_tensors, cmp_tname);
    for (int64_t i = 1; i < f->n_kv && !st; i++)
      if (!strcmp(f->kvs[f->kv_sorted[i - 1]].key, f->kvs[f->kv_sorted[i]].key))
        st = hmx_fail(HMX_ERR_FORMAT, "%s: metadata key '%s' appears twice", f->source,
                      f->kvs[f->kv_sorted[i]].key);
    for (int64_t i = 1; i < f->n_tensors && !st; i++)
      if (!strcmp(f->tensors[f->t_sorted[i - 1]].name, f->tensors[f->t_sorted[i]].name))
        st = hmx_fail(HMX_ERR_FORMAT, "%s: tensor name '%s' appears twice", f->source,
                      f->tensors[f->t_sorted[i]].name);
  }
  if (!st) st = parse_alignment(f);
  if (!st) st = parse_data(f, c.pos, tmp);
  free(at);
  free(tmp);
  return st;
}

/* ------------------------------------------------------------------ open / free */

static hmx_status parse_owned(unsigned char *bytes, size_t len, int mapped, const char *source,
                              hmx_gguf **out) {
  hmx_gguf *f = calloc(1, sizeof *f);
  if (!f) {
#ifdef HMX_HAVE_MMAP
    if (mapped) munmap(bytes, len);
    else
#endif
      free(bytes);
    return hmx_fail(HMX_ERR_NO_MEMORY, "gguf: out of memory");
  }
  f->bytes = bytes;
  f->len = len;
  f->mapped = mapped;
  snprintf(f->source, sizeof f->source, "%s", source ? source : "gguf");
  hmx_status st = parse_all(f);
  if (st) {
    hmx_gguf_free(f);
    return st;
  }
  *out = f;
  return HMX_OK;
}

hmx_status hmx_gguf_parse(const void *buf, size_t len, const char *source, hmx_gguf **out) {
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_parse: out is NULL");
  *out = NULL;
  if (!buf && len) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_parse: buf is NULL");
  unsigned char *copy = malloc(len ? len : 1);
  if (!copy) return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_gguf_parse: out of memory (%zu bytes)", len);
  if (len) memcpy(copy, buf, len);
  return parse_owned(copy, len, 0, source, out);
}

static hmx_status read_whole(const char *path, hmx_gguf **out) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap) break;
    unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
    if (!nb) {
      free(b);
      b = NULL;
      break;
    }
    b = nb;
    cap *= 2;
  }
  int err = ferror(fp);
  fclose(fp);
  if (!b) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory reading the file", path);
  if (err) {
    free(b);
    return hmx_fail(HMX_ERR_IO, "%s: read error", path);
  }
  return parse_owned(b, n, 0, path, out);
}

hmx_status hmx_gguf_open(const char *path, hmx_gguf **out) {
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_open: out is NULL");
  *out = NULL;
  if (!path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_open: path is NULL");
#ifdef HMX_HAVE_MMAP
  int fd = open(path, O_RDONLY);
  if (fd < 0) return hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
      (uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return read_whole(path, out); /* not a plain non-empty file: read it (clear errors) */
  }
  size_t len = (size_t)sb.st_size;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd); /* the mapping stays valid */
  if (p == MAP_FAILED) return read_whole(path, out);
  return parse_owned((unsigned char *)p, len, 1, path, out);
#else
  return read_whole(path, out);
#endif
}

void hmx_gguf_free(hmx_gguf *f) {
  if (!f) return;
#ifdef HMX_HAVE_MMAP
  if (f->mapped) munmap(f->bytes, f->len);
  else
#endif
    free(f->bytes);
  for (int64_t i = 0; i < f->n_str_tables; i++) free(f->str_tables[i]);
  free(f->str_tables);
  free(f->kvs);
  free(f->tensors);
  free(f->kv_sorted);
  free(f->t_sorted);
  free(f->names);
  free(f);
}

/* ------------------------------------------------------------------ access */

uint32_t hmx_gguf_version(const hmx_gguf *f) { return f ? f->version : 0; }
uint32_t hmx_gguf_alignment(const hmx_gguf *f) { return f ? f->alignment : 0; }
int64_t hmx_gguf_kv_count(const hmx_gguf *f) { return f ? f->n_kv : 0; }
int64_t hmx_gguf_tensor_count(const hmx_gguf *f) { return f ? f->n_tensors : 0; }

const hmx_gguf_kv *hmx_gguf_kv_at(const hmx_gguf *f, int64_t i) {
  return f && i >= 0 && i < f->n_kv ? &f->kvs[i] : NULL;
}
const hmx_gguf_tensor *hmx_gguf_tensor_at(const hmx_gguf *f, int64_t i) {
  return f && i >= 0 && i < f->n_tensors ? &f->tensors[i] : NULL;
}

const hmx_gguf_value *hmx_gguf_find_kv(const hmx_gguf *f, const char *key) {
  if (!f || !key) return NULL;
  int64_t lo = 0, hi = f->n_kv; /* binary search over the sorted index */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = strcmp(f->kvs[f->kv_sorted[mid]].key, key);
    if (c == 0) return &f->kvs[f->kv_sorted[mid]].value;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

const hmx_gguf_tensor *hmx_gguf_find_tensor(const hmx_gguf *f, const char *name) {
  if (!f || !name) return NULL;
  int64_t lo = 0, hi = f->n_tensors;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = strcmp(f->tensors[f->t_sorted[mid]].name, name);
    if (c == 0) return &f->tensors[f->t_sorted[mid]];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* An integer element of a scalar or array value; 0 on a non-integer type. */
static int int_at(const hmx_gguf_value *v, uint64_t i, int64_t *out) {
  const unsigned char *p = v->raw + i * hmx_gguf_vtype_size(v->elem);
  switch (v->elem) {
  case HMX_GGUF_U8: *out = p[0]; return 1;
  case HMX_GGUF_I8: *out = (int8_t)p[0]; return 1;
  case HMX_GGUF_U16: *out = (int64_t)le(p, 2); return 1;
  case HMX_GGUF_I16: *out = (int16_t)(uint16_t)le(p, 2); return 1;
  case HMX_GGUF_U32: *out = (int64_t)le(p, 4); return 1;
  case HMX_GGUF_I32: *out = (int32_t)(uint32_t)le(p, 4); return 1;
  case HMX_GGUF_U64: {
    uint64_t u = le(p, 8);
    if (u > (uint64_t)INT64_MAX) return 0;
    *out = (int64_t)u;
    return 1;
  }
  case HMX_GGUF_I64: {
    uint64_t u = le(p, 8);
    /* two's complement without implementation-defined conversion */
    *out = u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
    return 1;
  }
  default: return 0;
  }
}

int64_t hmx_gguf_array_int(const hmx_gguf_value *v, uint64_t i) {
  int64_t x = 0;
  if (!v || i >= v->n || !int_at(v, i, &x)) return 0;
  return x;
}

static const hmx_gguf_value *scalar(const hmx_gguf *f, const char *key, hmx_status *st) {
  *st = HMX_OK;
  if (!f || !key) {
    *st = hmx_fail(HMX_ERR_INVALID_ARGUMENT, "gguf: NULL argument");
    return NULL;
  }
  const hmx_gguf_value *v = hmx_gguf_find_kv(f, key);
  if (!v) *st = HMX_ERR_NOT_FOUND;
  else if (v->type == HMX_GGUF_ARRAY) {
    *st = hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is an array (a single value expected)",
                   f->source, key);
    v = NULL;
  }
  return v;
}

hmx_status hmx_gguf_get_int(const hmx_gguf *f, const char *key, int64_t *out) {
  hmx_status st;
  const hmx_gguf_value *v = scalar(f, key, &st);
  if (!v) return st;
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_get_int: out is NULL");
  if (!int_at(v, 0, out))
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is a %s (an integer expected%s)",
                    f->source, key, hmx_gguf_vtype_name(v->type),
                    v->type == HMX_GGUF_U64 ? ", at most 2^63-1" : "");
  return HMX_OK;
}

hmx_status hmx_gguf_get_f32(const hmx_gguf *f, const char *key, float *out) {
  hmx_status st;
  const hmx_gguf_value *v = scalar(f, key, &st);
  if (!v) return st;
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_get_f32: out is NULL");
  if (v->type == HMX_GGUF_F32) {
    uint32_t b = (uint32_t)le(v->raw, 4);
    memcpy(out, &b, 4);
  } else if (v->type == HMX_GGUF_F64) {
    uint64_t b = le(v->raw, 8);
    double d;
    memcpy(&d, &b, 8);
    *out = (float)d;
  } else
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is a %s (f32 or f64 expected)", f->source,
                    key, hmx_gguf_vtype_name(v->type));
  return HMX_OK;
}

hmx_status hmx_gguf_get_str(const hmx_gguf *f, const char *key, hmx_gguf_str *out) {
  hmx_status st;
  const hmx_gguf_value *v = scalar(f, key, &st);
  if (!v) return st;
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_get_str: out is NULL");
  if (v->type != HMX_GGUF_STRING)
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is a %s (a string expected)", f->source,
                    key, hmx_gguf_vtype_name(v->type));
  *out = v->strs[0];
  return HMX_OK;
}

hmx_status hmx_gguf_get_bool(const hmx_gguf *f, const char *key, int *out) {
  hmx_status st;
  const hmx_gguf_value *v = scalar(f, key, &st);
  if (!v) return st;
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_get_bool: out is NULL");
  if (v->type != HMX_GGUF_BOOL)
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is a %s (a bool expected)", f->source, key,
                    hmx_gguf_vtype_name(v->type));
  *out = v->raw[0];
  return HMX_OK;
}
