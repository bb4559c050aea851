/* Strict safetensors reader and writer (see src/safetensors.h).
 *
 * Reader: the whole file is copied into one buffer owned by the hmx_st_file;
 * the header is validated in four passes, each of which rejects with
 * HMX_ERR_FORMAT (or HMX_ERR_DTYPE / HMX_ERR_UNSUPPORTED) and a message that
 * names the source and the offending tensor:
 *   1. framing: length prefix, header bounds, no NUL, valid UTF-8, starts '{';
 *   2. JSON syntax (cJSON), nothing but whitespace after the object;
 *   3. a lexical pass over the raw header for what cJSON is lenient about:
 *      no raw control characters in strings, only valid \u escapes and no
 *      "\u0000" (cJSON turns both into NUL bytes that truncate names), only
 *      JSON whitespace between tokens, and numbers that are plain integers
 *      ("1.0", "1e2", "-0", "01", "9007199254740993" are refused; this one is
 *      reported after pass 4, whose messages are more specific);
 *   4. semantics: entries, dtypes, shapes, data_offsets, __metadata__,
 *      duplicate names, and exact contiguous coverage of the data section.
 * Names and metadata strings point into the cJSON tree kept by the file.
 *
 * Writer: tensors in the order added, keys dtype, shape, data_offsets;
 * __metadata__ first with its keys sorted bytewise; the JSON is produced
 * here (no floating point, no locale) so the bytes are a pure function of the
 * inputs; the header is padded with spaces to a multiple of 8 bytes.
 */
/* mmap (hmx_st_map) is POSIX; elsewhere the file is read into memory. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "safetensors.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
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

/* Largest shape entry / offset accepted: every integer up to 2^53 is exact in
 * the double that cJSON stores. */
#define ST_MAX_INT ((uint64_t)1 << 53)

typedef struct st_meta {
  const char *key;
  const char *value;
} st_meta;

struct hmx_st_file {
  unsigned char *bytes; /* the whole file */
  size_t len;
  int mapped;           /* bytes is a read-only mmap of the file (hmx_st_map) */
  cJSON *root;          /* owns every name and metadata string */
  hmx_st_tensor *tensors; /* header order */
  int count;
  const hmx_st_tensor **by_name; /* sorted by name, for lookups */
  st_meta *meta;                 /* header order */
  int meta_count;
  const st_meta **meta_by_key;   /* sorted by key */
};

/* ------------------------------------------------------------------ helpers */

static uint64_t read_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void write_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Offset of the first invalid UTF-8 sequence, or n if all of s is valid
 * (no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_invalid_at(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t need;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      need = 2, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (n - i - 1 < need) return i;
    for (size_t k = 1; k <= need; k++) {
      unsigned b = s[i + k];
      if ((b & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return n;
}

static int is_json_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_hex(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_number_char(unsigned char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

typedef struct st_dtype_name {
  const char *name;
  int hmx; /* hmx_dtype, or -1: a valid safetensors dtype hadamix does not read */
} st_dtype_name;

static const st_dtype_name st_dtypes[] = {
    {"F32", HMX_F32},     {"BF16", HMX_BF16},   {"F16", HMX_F16},
    {"I32", HMX_I32},     {"I64", HMX_I64},     {"BOOL", -1},
    {"U8", -1},           {"I8", -1},           {"U16", -1},
    {"I16", -1},          {"U32", -1},          {"U64", -1},
    {"F64", -1},          {"C64", -1},          {"F8_E5M2", -1},
    {"F8_E4M3", -1},      {"F8_E8M0", -1},      {"F8_E4M3FNUZ", -1},
    {"F8_E5M2FNUZ", -1},  {"F4", -1},           {"F6_E2M3", -1},
    {"F6_E3M2", -1},
};

static const char *st_dtype_string(hmx_dtype d) {
  switch (d) {
  case HMX_F32: return "F32";
  case HMX_BF16: return "BF16";
  case HMX_F16: return "F16";
  case HMX_I32: return "I32";
  case HMX_I64: return "I64";
  default: return NULL;
  }
}

static int cmp_tensor_name(const void *a, const void *b) {
  const hmx_st_tensor *x = *(const hmx_st_tensor *const *)a;
  const hmx_st_tensor *y = *(const hmx_st_tensor *const *)b;
  return strcmp(x->name, y->name);
}

static int cmp_meta_key(const void *a, const void *b) {
  const st_meta *x = *(const st_meta *const *)a;
  const st_meta *y = *(const st_meta *const *)b;
  return strcmp(x->key, y->key);
}

/* ------------------------------------------------------------------ reader */

typedef struct st_range {
  uint64_t begin, end;
  int index;
} st_range;

static int cmp_range(const void *a, const void *b) {
  const st_range *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Parse context: the source name for messages and the data section. */
typedef struct st_ctx {
  const char *src;
  const unsigned char *data;
  uint64_t data_size;
} st_ctx;

/* Reads a JSON number that must be an integer in 0..2^53. `what` names it. */
static hmx_status get_uint(const st_ctx *c, const char *name, const char *what,
                           const cJSON *item, uint64_t *out) {
  if (!cJSON_IsNumber(item))
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': %s is not a number", c->src, name,
                    what);
  double d = item->valuedouble;
  if (!(d >= 0.0)) /* also catches NaN, which cJSON never produces */
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': %s is negative (%.16g)", c->src, name,
                    what, d);
  if (d > (double)ST_MAX_INT)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': %s is too large (%.16g > 2^53)", c->src,
                    name, what, d);
  uint64_t v = (uint64_t)d;
  if ((double)v != d)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': %s is not an integer (%.16g)", c->src,
                    name, what, d);
  *out = v;
  return HMX_OK;
}

static hmx_status parse_entry(const st_ctx *c, const cJSON *item, hmx_st_tensor *t,
                              st_range *r) {
  const char *name = item->string;
  if (!cJSON_IsObject(item))
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': entry is not a JSON object", c->src,
                    name);
  const cJSON *jdtype = NULL, *jshape = NULL, *joffs = NULL;
  for (const cJSON *k = item->child; k; k = k->next) {
    const cJSON **slot = NULL;
    if (strcmp(k->string, "dtype") == 0) slot = &jdtype;
    else if (strcmp(k->string, "shape") == 0) slot = &jshape;
    else if (strcmp(k->string, "data_offsets") == 0) slot = &joffs;
    if (!slot)
      return hmx_fail(HMX_ERR_FORMAT,
                      "%s: tensor '%.200s': unknown key '%.100s' (expected dtype, shape, "
                      "data_offsets)",
                      c->src, name, k->string);
    if (*slot)
      return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': duplicate key '%s'", c->src, name,
                      k->string);
    *slot = k;
  }
  if (!jdtype)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': missing \"dtype\"", c->src, name);
  if (!jshape)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': missing \"shape\"", c->src, name);
  if (!joffs)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': missing \"data_offsets\"", c->src,
                    name);

  /* dtype */
  if (!cJSON_IsString(jdtype))
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': \"dtype\" is not a string", c->src,
                    name);
  const char *ds = jdtype->valuestring;
  int found = -2;
  for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
    if (strcmp(ds, st_dtypes[i].name) == 0) found = st_dtypes[i].hmx;
  if (found == -2)
    return hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%.200s': unknown dtype '%.40s'", c->src, name,
                    ds);
  if (found == -1)
    return hmx_fail(HMX_ERR_DTYPE,
                    "%s: tensor '%.200s': unsupported dtype '%s' (hadamix reads F32, BF16, "
                    "F16, I32, I64)",
                    c->src, name, ds);
  t->dtype = (hmx_dtype)found;
  uint64_t esize = hmx_dtype_size(t->dtype);

  /* shape */
  if (!cJSON_IsArray(jshape))
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': \"shape\" is not an array", c->src,
                    name);
  int rank = 0;
  uint64_t numel = 1;
  int overflow = 0;
  for (const cJSON *e = jshape->child; e; e = e->next, rank++) {
    uint64_t d;
    hmx_status s = get_uint(c, name, "a shape entry", e, &d);
    if (s != HMX_OK) return s;
    if (rank < HMX_MAX_DIMS) t->shape[rank] = (int64_t)d;
    /* the running product must stay within int64, as hmx_tensor_numel does */
    if (d != 0 && numel > (uint64_t)INT64_MAX / d) overflow = 1;
    else numel *= d;
  }
  if (rank > HMX_MAX_DIMS)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tensor '%.200s': rank %d exceeds the maximum of %d",
                    c->src, name, rank, HMX_MAX_DIMS);
  t->ndim = rank;
  if (overflow)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%.200s': the shape's element count overflows",
                    c->src, name);
  if (numel > UINT64_MAX / esize)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.200s': the byte size (%" PRIu64 " elements of %s) overflows",
                    c->src, name, numel, ds);
  uint64_t nbytes = numel * esize;

  /* data_offsets */
  if (!cJSON_IsArray(joffs) || !joffs->child || !joffs->child->next || joffs->child->next->next)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.200s': \"data_offsets\" is not an array [begin, end]", c->src,
                    name);
  uint64_t begin, end;
  hmx_status s = get_uint(c, name, "data_offsets begin", joffs->child, &begin);
  if (s != HMX_OK) return s;
  s = get_uint(c, name, "data_offsets end", joffs->child->next, &end);
  if (s != HMX_OK) return s;
  if (begin > end)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.200s': data_offsets [%" PRIu64 ", %" PRIu64 "] are reversed",
                    c->src, name, begin, end);
  if (end > c->data_size)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.200s': data_offsets end %" PRIu64
                    " is beyond the data section (%" PRIu64 " bytes)",
                    c->src, name, end, c->data_size);
  if (end - begin != nbytes)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.200s': data_offsets span %" PRIu64
                    " bytes but %s x shape needs %" PRIu64,
                    c->src, name, end - begin, ds, nbytes);
  t->name = name;
  t->nbytes = nbytes;
  t->data = c->data + begin;
  r->begin = begin;
  r->end = end;
  return HMX_OK;
}

static hmx_status parse_metadata(const st_ctx *c, hmx_st_file *f, const cJSON *m) {
  if (!cJSON_IsObject(m))
    return hmx_fail(HMX_ERR_FORMAT, "%s: __metadata__ is not a JSON object", c->src);
  size_t n = 0;
  for (const cJSON *e = m->child; e; e = e->next) {
    if (!cJSON_IsString(e))
      return hmx_fail(HMX_ERR_FORMAT, "%s: __metadata__ value of '%.200s' is not a string",
                      c->src, e->string);
    n++;
  }
  if (n > (size_t)INT_MAX)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: too many __metadata__ entries", c->src);
  f->meta = hmx_alloc_array(n, sizeof *f->meta);
  f->meta_by_key = hmx_alloc_array(n, sizeof *f->meta_by_key);
  if (!f->meta || !f->meta_by_key)
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory for %zu metadata entries", c->src, n);
  size_t i = 0;
  for (const cJSON *e = m->child; e; e = e->next, i++) {
    f->meta[i].key = e->string;
    f->meta[i].value = e->valuestring;
    f->meta_by_key[i] = &f->meta[i];
  }
  f->meta_count = (int)n;
  if (n > 1) qsort(f->meta_by_key, n, sizeof *f->meta_by_key, cmp_meta_key);
  for (i = 1; i < n; i++)
    if (strcmp(f->meta_by_key[i - 1]->key, f->meta_by_key[i]->key) == 0)
      return hmx_fail(HMX_ERR_FORMAT, "%s: duplicate __metadata__ key '%.200s'", c->src,
                      f->meta_by_key[i]->key);
  return HMX_OK;
}

/* 1 if h[start, end) is a plain integer in 0..2^53: digits only, no sign,
 * no leading zero, no fraction or exponent. */
static int plain_integer(const char *h, size_t start, size_t end) {
  size_t n = end - start;
  if (n == 0 || (n > 1 && h[start] == '0')) return 0;
  uint64_t v = 0;
  for (size_t i = start; i < end; i++) {
    unsigned d = (unsigned)((unsigned char)h[i] - '0');
    if (d > 9 || v > (ST_MAX_INT - d) / 10) return 0;
    v = v * 10 + d;
  }
  return 1;
}

/* The first number token of the header that is not a plain integer. */
typedef struct st_bad_number {
  int found;
  size_t start, end;
  const char *key; /* raw text of the top-level key it sits under, or NULL */
  size_t key_len;
} st_bad_number;

static hmx_status bad_number_error(const char *src, const char *h, const st_bad_number *b) {
  size_t n = b->end - b->start;
  int shown = (int)(n > 40 ? 40 : n);
  if (b->key)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: tensor '%.*s': number '%.*s' at header offset %zu is not a plain "
                    "integer in 0..2^53",
                    src, (int)(b->key_len > 200 ? 200 : b->key_len), b->key, shown, h + b->start,
                    b->start);
  return hmx_fail(HMX_ERR_FORMAT,
                  "%s: number '%.*s' at header offset %zu is not a plain integer in 0..2^53", src,
                  shown, h + b->start, b->start);
}

/* Pass 3: what cJSON accepts but JSON does not (raw control characters in
 * strings, bad or NUL \u escapes, control characters as whitespace). Number
 * tokens that are not plain integers are only recorded in *bad: the semantic
 * pass gives better messages for most of them, so they are reported last. */
static hmx_status lex_check(const char *src, const char *h, size_t n, st_bad_number *bad) {
  size_t i = 0;
  int depth = 0;
  const char *key = NULL; /* the last key of the top-level object (raw text) */
  size_t key_len = 0;
  while (i < n) {
    unsigned char ch = (unsigned char)h[i];
    if (ch == '"') {
      size_t start = ++i;
      for (;;) {
        if (i >= n) return hmx_fail(HMX_ERR_FORMAT, "%s: unterminated string in header", src);
        ch = (unsigned char)h[i];
        if (ch == '"') {
          size_t j = ++i;
          while (j < n && is_json_space((unsigned char)h[j])) j++;
          if (depth == 1 && j < n && h[j] == ':') {
            key = h + start;
            key_len = i - 1 - start;
          }
          break;
        }
        if (ch < 0x20)
          return hmx_fail(HMX_ERR_FORMAT,
                          "%s: raw control character 0x%02x in a string at header offset %zu",
                          src, ch, i);
        if (ch != '\\') {
          i++;
          continue;
        }
        unsigned char e = i + 1 < n ? (unsigned char)h[i + 1] : 0;
        if (e == 'u') {
          if (n - i < 6 || !is_hex((unsigned char)h[i + 2]) || !is_hex((unsigned char)h[i + 3]) ||
              !is_hex((unsigned char)h[i + 4]) || !is_hex((unsigned char)h[i + 5]))
            return hmx_fail(HMX_ERR_FORMAT, "%s: bad \\u escape at header offset %zu", src, i);
          if (memcmp(h + i + 2, "0000", 4) == 0)
            return hmx_fail(HMX_ERR_FORMAT,
                            "%s: \\u0000 (NUL) escape in a string at header offset %zu", src, i);
          i += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                   e == 'r' || e == 't') {
          i += 2;
        } else {
          return hmx_fail(HMX_ERR_FORMAT, "%s: bad escape at header offset %zu", src, i);
        }
      }
    } else if (ch == '{' || ch == '[') {
      depth++;
      i++;
    } else if (ch == '}' || ch == ']') {
      depth--;
      i++;
    } else if (is_json_space(ch) || ch == ',' || ch == ':') {
      i++;
    } else if (ch >= 'a' && ch <= 'z') {
      /* true, false, null: left to the semantic pass, which names the entry */
      size_t start = i;
      while (i < n && h[i] >= 'a' && h[i] <= 'z') i++;
      size_t len = i - start;
      int literal = (len == 4 && memcmp(h + start, "true", 4) == 0) ||
                    (len == 4 && memcmp(h + start, "null", 4) == 0) ||
                    (len == 5 && memcmp(h + start, "false", 5) == 0);
      if (!literal)
        return hmx_fail(HMX_ERR_FORMAT, "%s: unexpected word '%.*s' at header offset %zu", src,
                        (int)(len > 20 ? 20 : len), h + start, start);
    } else if (is_number_char(ch)) {
      size_t start = i;
      while (i < n && is_number_char((unsigned char)h[i])) i++;
      if (!bad->found && !plain_integer(h, start, i)) {
        bad->found = 1;
        bad->start = start;
        bad->end = i;
        bad->key = depth >= 2 ? key : NULL;
        bad->key_len = key_len;
      }
    } else {
      return hmx_fail(HMX_ERR_FORMAT, "%s: unexpected character 0x%02x at header offset %zu",
                      src, ch, i);
    }
  }
  return HMX_OK;
}

/* Fills f from f->bytes / f->len. On failure f is left for hmx_st_free. */
static hmx_status parse_file(hmx_st_file *f, const char *src) {
  const unsigned char *b = f->bytes;
  size_t len = f->len;

  /* pass 1: framing */
  if (len < 8)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: %zu bytes is too short for a safetensors file (8-byte header length)",
                    src, len);
  uint64_t n64 = read_le64(b);
  if (n64 == 0) return hmx_fail(HMX_ERR_FORMAT, "%s: header length is 0", src);
  if (n64 > HMX_ST_MAX_HEADER)
    return hmx_fail(HMX_ERR_FORMAT, "%s: header length %" PRIu64 " exceeds the limit of %u bytes",
                    src, n64, (unsigned)HMX_ST_MAX_HEADER);
  if (n64 > (uint64_t)(len - 8))
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: header length %" PRIu64 " runs past the end of the file (%zu bytes "
                    "follow the length field)",
                    src, n64, len - 8);
  size_t hlen = (size_t)n64;
  const char *h = (const char *)b + 8;
  st_ctx c = {src, b + 8 + hlen, (uint64_t)(len - 8 - hlen)};
  const char *nul = memchr(h, 0, hlen);
  if (nul)
    return hmx_fail(HMX_ERR_FORMAT, "%s: header contains a NUL byte at offset %zu", src,
                    (size_t)(nul - h));
  size_t bad = utf8_invalid_at((const unsigned char *)h, hlen);
  if (bad != hlen)
    return hmx_fail(HMX_ERR_FORMAT, "%s: header is not valid UTF-8 (offset %zu)", src, bad);
  if (h[0] != '{')
    return hmx_fail(HMX_ERR_FORMAT, "%s: header does not start with '{' (not a JSON object)",
                    src);

  /* pass 2: JSON syntax. cJSON gets a NUL-terminated private copy. */
  char *copy = malloc(hlen + 1);
  if (!copy)
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory for a %zu-byte header", src, hlen);
  memcpy(copy, h, hlen);
  copy[hlen] = '\0';
  const char *end = NULL;
  f->root = cJSON_ParseWithLengthOpts(copy, hlen, &end, 0);
  size_t end_off = (end && end >= copy && end <= copy + hlen) ? (size_t)(end - copy) : 0;
  free(copy);
  if (!f->root)
    return hmx_fail(HMX_ERR_FORMAT, "%s: header is not valid JSON (error near offset %zu)", src,
                    end_off);
  if (!end) return hmx_fail(HMX_ERR_FORMAT, "%s: header could not be parsed", src);
  for (size_t i = end_off; i < hlen; i++)
    if (!is_json_space((unsigned char)h[i]))
      return hmx_fail(HMX_ERR_FORMAT,
                      "%s: unexpected bytes after the header's JSON object (offset %zu)", src, i);
  if (!cJSON_IsObject(f->root))
    return hmx_fail(HMX_ERR_FORMAT, "%s: header is not a JSON object", src);

  /* pass 3: lexical strictness */
  st_bad_number bad_number = {0, 0, 0, NULL, 0};
  hmx_status s = lex_check(src, h, hlen, &bad_number);
  if (s != HMX_OK) return s;

  /* pass 4: semantics */
  const cJSON *meta = NULL;
  size_t nt = 0;
  for (const cJSON *e = f->root->child; e; e = e->next) {
    if (strcmp(e->string, "__metadata__") == 0) {
      if (meta) return hmx_fail(HMX_ERR_FORMAT, "%s: duplicate __metadata__", src);
      meta = e;
    } else {
      nt++;
    }
  }
  if (nt > (size_t)INT_MAX) return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: too many tensors", src);
  if (meta) {
    s = parse_metadata(&c, f, meta);
    if (s != HMX_OK) return s;
  }
  f->tensors = hmx_alloc_array(nt, sizeof *f->tensors);
  f->by_name = hmx_alloc_array(nt, sizeof *f->by_name);
  st_range *ranges = hmx_alloc_array(nt, sizeof *ranges);
  if (!f->tensors || !f->by_name || !ranges) {
    free(ranges);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory for %zu tensors", src, nt);
  }
  if (nt) memset(f->tensors, 0, nt * sizeof *f->tensors);
  size_t i = 0;
  for (const cJSON *e = f->root->child; e; e = e->next) {
    if (e == meta) continue;
    s = parse_entry(&c, e, &f->tensors[i], &ranges[i]);
    if (s != HMX_OK) {
      free(ranges);
      return s;
    }
    ranges[i].index = (int)i;
    f->by_name[i] = &f->tensors[i];
    i++;
  }
  f->count = (int)nt;

  if (nt > 1) qsort(f->by_name, nt, sizeof *f->by_name, cmp_tensor_name);
  for (i = 1; i < nt; i++)
    if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0) {
      free(ranges);
      return hmx_fail(HMX_ERR_FORMAT, "%s: duplicate tensor name '%.200s'", src,
                      f->by_name[i]->name);
    }

  /* the tensors must tile the data section exactly, like the reference
   * implementation: no overlap, no hole, nothing after the last one */
  if (nt > 1) qsort(ranges, nt, sizeof *ranges, cmp_range);
  uint64_t pos = 0;
  int prev = -1;
  for (i = 0; i < nt; i++) {
    const st_range *r = &ranges[i];
    const char *name = f->tensors[r->index].name;
    if (r->begin < pos) {
      const char *pname = f->tensors[prev].name;
      s = hmx_fail(HMX_ERR_FORMAT,
                   "%s: tensors '%.150s' [%" PRIu64 ", %" PRIu64 ") and '%.150s' [%" PRIu64
                   ", %" PRIu64 ") overlap",
                   src, pname, ranges[i - 1].begin, ranges[i - 1].end, name, r->begin, r->end);
      break;
    }
    if (r->begin > pos) {
      s = hmx_fail(HMX_ERR_FORMAT,
                   "%s: %" PRIu64 " unused bytes at data offset %" PRIu64
                   " before tensor '%.200s' (tensors must cover the data section without holes)",
                   src, r->begin - pos, pos, name);
      break;
    }
    pos = r->end;
    prev = r->index;
  }
  free(ranges);
  if (s != HMX_OK) return s;
  if (pos != c.data_size)
    return hmx_fail(HMX_ERR_FORMAT,
                    "%s: %" PRIu64 " bytes of data after the last tensor (data section is %" PRIu64
                    " bytes, tensors cover %" PRIu64 ")",
                    src, c.data_size - pos, c.data_size, pos);

  /* numbers such as 1.0, 1e2, -0, 01 or 2^53+1 that cJSON read as integers */
  if (bad_number.found) return bad_number_error(src, h, &bad_number);
  return HMX_OK;
}

static void release_bytes(unsigned char *bytes, size_t len, int mapped) {
#ifdef HMX_HAVE_MMAP
  if (mapped) {
    if (len) munmap(bytes, len);
    return;
  }
#else
  (void)len;
  (void)mapped;
#endif
  free(bytes);
}

/* Takes ownership of bytes (released on failure). */
static hmx_status parse_owned(unsigned char *bytes, size_t len, const char *src, int mapped,
                              hmx_st_file **out) {
  hmx_st_file *f = calloc(1, sizeof *f);
  if (!f) {
    release_bytes(bytes, len, mapped);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", src);
  }
  f->bytes = bytes;
  f->len = len;
  f->mapped = mapped;
  hmx_status s = parse_file(f, src);
  if (s != HMX_OK) {
    hmx_st_free(f);
    return s;
  }
  *out = f;
  return HMX_OK;
}

hmx_status hmx_st_parse(const void *buf, size_t len, hmx_st_file **out) {
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_parse: out is NULL");
  *out = NULL;
  if (!buf && len) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_parse: buf is NULL");
  unsigned char *copy = malloc(len ? len : 1);
  if (!copy)
    return hmx_fail(HMX_ERR_NO_MEMORY, "safetensors buffer: out of memory (%zu bytes)", len);
  if (len) memcpy(copy, buf, len);
  return parse_owned(copy, len, "safetensors buffer", 0, out);
}

hmx_status hmx_st_load(const char *path, hmx_st_file **out) {
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_load: out is NULL");
  *out = NULL;
  if (!path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_load: path is NULL");
  FILE *fp = fopen(path, "rb");
  if (!fp) return hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  /* The size from ftell is only a hint, used once a first 64 KiB chunk has
   * been read: a directory, for instance, may report anything and fails on
   * the first read. */
  size_t hint = 0;
  if (fseek(fp, 0, SEEK_END) == 0) {
    long sz = ftell(fp);
    if (sz > 0 && (unsigned long)sz < (size_t)-1) hint = (size_t)sz + 1;
    if (fseek(fp, 0, SEEK_SET) != 0) {
      int eno = errno;
      fclose(fp);
      return hmx_fail(HMX_ERR_IO, "%s: cannot seek: %s", path, strerror(eno));
    }
  }
  size_t cap = (size_t)1 << 16, len = 0;
  unsigned char *b = malloc(cap);
  if (!b) {
    fclose(fp);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", path);
  }
  for (;;) {
    if (len == cap) {
      size_t ncap = cap > (size_t)-1 / 2 ? (size_t)-1 : cap * 2;
      if (hint > ncap) ncap = hint;
      unsigned char *nb = ncap > cap ? realloc(b, ncap) : NULL;
      if (!nb) {
        free(b);
        fclose(fp);
        return hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory reading the file", path);
      }
      b = nb;
      cap = ncap;
    }
    size_t want = cap - len;
    size_t r = fread(b + len, 1, want, fp);
    len += r;
    if (r < want) break; /* end of file or error */
  }
  int err = ferror(fp);
  int eno = errno;
  fclose(fp);
  if (err) {
    free(b);
    return hmx_fail(HMX_ERR_IO, "%s: read error: %s", path, strerror(eno));
  }
  return parse_owned(b, len, path, 0, out);
}

hmx_status hmx_st_map(const char *path, hmx_st_file **out) {
#ifdef HMX_HAVE_MMAP
  hmx_clear_error();
  if (!out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_map: out is NULL");
  *out = NULL;
  if (!path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_map: path is NULL");
  int fd = open(path, O_RDONLY);
  if (fd < 0) return hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
      (uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return hmx_st_load(path, out); /* not a plain non-empty file: read it (clear errors) */
  }
  size_t len = (size_t)sb.st_size;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd); /* the mapping stays valid */
  if (p == MAP_FAILED) return hmx_st_load(path, out);
  /* A file truncated by someone else while mapped would fault on access;
   * weights files are not expected to change under a running model. */
  return parse_owned((unsigned char *)p, len, path, 1, out);
#else
  return hmx_st_load(path, out);
#endif
}

void hmx_st_free(hmx_st_file *f) {
  if (!f) return;
  cJSON_Delete(f->root);
  free(f->tensors);
  free(f->by_name);
  free(f->meta);
  free(f->meta_by_key);
  release_bytes(f->bytes, f->len, f->mapped);
  free(f);
}

int hmx_st_count(const hmx_st_file *f) { return f ? f->count : 0; }

const hmx_st_tensor *hmx_st_at(const hmx_st_file *f, int i) {
  if (!f || i < 0 || i >= f->count) return NULL;
  return &f->tensors[i];
}

const hmx_st_tensor *hmx_st_find(const hmx_st_file *f, const char *name) {
  if (!f || !name) return NULL;
  size_t lo = 0, hi = (size_t)f->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(f->by_name[mid]->name, name);
    if (c == 0) return f->by_name[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

int hmx_st_meta_count(const hmx_st_file *f) { return f ? f->meta_count : 0; }

const char *hmx_st_meta_at(const hmx_st_file *f, int i, const char **value) {
  if (!f || i < 0 || i >= f->meta_count) {
    if (value) *value = NULL;
    return NULL;
  }
  if (value) *value = f->meta[i].value;
  return f->meta[i].key;
}

const char *hmx_st_meta(const hmx_st_file *f, const char *key) {
  if (!f || !key) return NULL;
  size_t lo = 0, hi = (size_t)f->meta_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(f->meta_by_key[mid]->key, key);
    if (c == 0) return f->meta_by_key[mid]->value;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* The view's data pointer is the file's read-only storage with const cast
 * away: callers must not write through it. */
hmx_tensor hmx_st_view(const hmx_st_tensor *t) {
  if (!t) {
    hmx_tensor z;
    memset(&z, 0, sizeof z);
    return z;
  }
  return hmx_tensor_make((void *)(uintptr_t)t->data, t->dtype, t->ndim, t->shape);
}

/* ------------------------------------------------------------------ writer */

typedef struct st_wtensor {
  char *name;
  hmx_dtype dtype;
  int ndim;
  int64_t shape[HMX_MAX_DIMS];
  unsigned char *data; /* contiguous copy */
  size_t nbytes;
} st_wtensor;

typedef struct st_wmeta {
  char *key;
  char *value;
} st_wmeta;

struct hmx_st_writer {
  st_wtensor *t;
  size_t nt, capt;
  st_wmeta *m;
  size_t nm, capm;
};

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Grows *arr (of *cap elements of size sz) to hold at least need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz) {
  if (need <= *cap) return 1;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < need) {
    if (ncap > (size_t)-1 / 2) return 0;
    ncap *= 2;
  }
  size_t bytes;
  if (!hmx_mul_size(ncap, sz, &bytes)) return 0;
  void *p = realloc(*arr, bytes);
  if (!p) return 0;
  *arr = p;
  *cap = ncap;
  return 1;
}

hmx_st_writer *hmx_st_writer_new(void) {
  hmx_clear_error();
  hmx_st_writer *w = calloc(1, sizeof *w);
  if (!w) hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_new: out of memory");
  return w;
}

void hmx_st_writer_free(hmx_st_writer *w) {
  if (!w) return;
  for (size_t i = 0; i < w->nt; i++) {
    free(w->t[i].name);
    free(w->t[i].data);
  }
  for (size_t i = 0; i < w->nm; i++) {
    free(w->m[i].key);
    free(w->m[i].value);
  }
  free(w->t);
  free(w->m);
  free(w);
}

hmx_status hmx_st_writer_add(hmx_st_writer *w, const char *name, const hmx_tensor *t) {
  hmx_clear_error();
  if (!w || !name || !t)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_add: NULL argument");
  size_t nlen = strlen(name);
  if (nlen == 0) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_add: empty tensor name");
  if (strcmp(name, "__metadata__") == 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "hmx_st_writer_add: '__metadata__' is reserved and cannot name a tensor");
  if (utf8_invalid_at((const unsigned char *)name, nlen) != nlen)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "hmx_st_writer_add: tensor name '%.200s' is not valid UTF-8", name);
  for (size_t i = 0; i < w->nt; i++)
    if (strcmp(w->t[i].name, name) == 0)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_add: duplicate tensor name '%.200s'",
                      name);
  if ((int)t->dtype < 0 || t->dtype >= HMX_DTYPE_COUNT)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_add: tensor '%.200s': bad dtype %d",
                    name, (int)t->dtype);
  if (t->ndim < 0 || t->ndim > HMX_MAX_DIMS)
    return hmx_fail(HMX_ERR_SHAPE, "hmx_st_writer_add: tensor '%.200s': ndim %d not in 0..%d",
                    name, t->ndim, HMX_MAX_DIMS);
  size_t es = hmx_dtype_size(t->dtype);
  int64_t numel = 1;
  int contiguous = 1;
  for (int i = 0; i < t->ndim; i++) {
    int64_t d = t->shape[i];
    if (d < 0 || (uint64_t)d > ST_MAX_INT)
      return hmx_fail(HMX_ERR_SHAPE,
                      "hmx_st_writer_add: tensor '%.200s': dimension %d is %" PRId64
                      " (must be in 0..2^53)",
                      name, i, d);
    if (d != 0 && numel > INT64_MAX / d)
      return hmx_fail(HMX_ERR_SHAPE, "hmx_st_writer_add: tensor '%.200s': element count overflows",
                      name);
    numel *= d;
    if (t->stride[i] != 0) contiguous = 0;
  }
  size_t nbytes;
  if ((uint64_t)numel > (uint64_t)SIZE_MAX || !hmx_mul_size((size_t)numel, es, &nbytes) ||
      (uint64_t)nbytes > ST_MAX_INT)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "hmx_st_writer_add: tensor '%.200s' is too large", name);
  if (numel > 0 && !t->data)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_add: tensor '%.200s': data is NULL",
                    name);
  if (!contiguous && numel > 0) {
    for (int i = 0; i < t->ndim; i++)
      if (t->shape[i] > 1 && t->stride[i] <= 0)
        return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                        "hmx_st_writer_add: tensor '%.200s': stride %d is %" PRId64
                        " (strides must be positive)",
                        name, i, t->stride[i]);
    /* the furthest element must be addressable */
    int64_t last = 0;
    for (int i = 0; i < t->ndim; i++) {
      if (t->shape[i] <= 1) continue;
      int64_t span = t->shape[i] - 1;
      if (span > (INT64_MAX - last) / t->stride[i])
        return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                        "hmx_st_writer_add: tensor '%.200s': strides overflow", name);
      last += span * t->stride[i];
    }
    if ((uint64_t)last > (uint64_t)SIZE_MAX / es)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                      "hmx_st_writer_add: tensor '%.200s': strides overflow", name);
  }

  if (!grow((void **)&w->t, &w->capt, w->nt + 1, sizeof *w->t))
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_add: out of memory");
  st_wtensor *e = &w->t[w->nt];
  memset(e, 0, sizeof *e);
  e->name = dup_string(name);
  e->data = malloc(nbytes ? nbytes : 1);
  if (!e->name || !e->data) {
    free(e->name);
    free(e->data);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_add: out of memory for tensor '%.200s'",
                    name);
  }
  e->dtype = t->dtype;
  e->ndim = t->ndim;
  for (int i = 0; i < t->ndim; i++) e->shape[i] = t->shape[i];
  e->nbytes = nbytes;
  const unsigned char *src = t->data;
  if (contiguous || numel == 0) {
    if (nbytes) memcpy(e->data, src, nbytes);
  } else {
    int64_t idx[HMX_MAX_DIMS] = {0};
    for (int64_t k = 0; k < numel; k++) {
      int64_t off = 0;
      for (int i = 0; i < t->ndim; i++) off += idx[i] * t->stride[i];
      memcpy(e->data + (size_t)k * es, src + (size_t)off * es, es);
      for (int i = t->ndim - 1; i >= 0; i--) {
        if (++idx[i] < t->shape[i]) break;
        idx[i] = 0;
      }
    }
  }
  w->nt++;
  return HMX_OK;
}

hmx_status hmx_st_writer_meta(hmx_st_writer *w, const char *key, const char *value) {
  hmx_clear_error();
  if (!w || !key || !value)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_meta: NULL argument");
  size_t kl = strlen(key), vl = strlen(value);
  if (utf8_invalid_at((const unsigned char *)key, kl) != kl)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_meta: key is not valid UTF-8");
  if (utf8_invalid_at((const unsigned char *)value, vl) != vl)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "hmx_st_writer_meta: value of '%.200s' is not valid UTF-8", key);
  for (size_t i = 0; i < w->nm; i++)
    if (strcmp(w->m[i].key, key) == 0)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_meta: duplicate key '%.200s'", key);
  if (!grow((void **)&w->m, &w->capm, w->nm + 1, sizeof *w->m))
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_meta: out of memory");
  char *k = dup_string(key), *v = dup_string(value);
  if (!k || !v) {
    free(k);
    free(v);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_meta: out of memory");
  }
  w->m[w->nm].key = k;
  w->m[w->nm].value = v;
  w->nm++;
  return HMX_OK;
}

/* A growable byte string; an allocation failure sticks in `oom`. */
typedef struct st_buf {
  char *p;
  size_t len, cap;
  int oom;
} st_buf;

static void sb_put(st_buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (n > (size_t)-1 - b->len) {
    b->oom = 1;
    return;
  }
  size_t need = b->len + n;
  if (need > b->cap) {
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < need) {
      if (ncap > (size_t)-1 / 2) {
        ncap = need;
        break;
      }
      ncap *= 2;
    }
    char *p = realloc(b->p, ncap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = ncap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

static void sb_puts(st_buf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_putu(st_buf *b, uint64_t v) {
  char tmp[24];
  int i = (int)sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  sb_put(b, tmp + i, sizeof tmp - (size_t)i);
}

/* JSON string with the minimal escapes (serde_json's choice): \" \\ and
 * control characters, as \b \f \n \r \t or \u00xx (lowercase hex). */
static void sb_putstr(st_buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  sb_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    char esc[6];
    switch (c) {
    case '"': sb_put(b, "\\\"", 2); break;
    case '\\': sb_put(b, "\\\\", 2); break;
    case '\b': sb_put(b, "\\b", 2); break;
    case '\f': sb_put(b, "\\f", 2); break;
    case '\n': sb_put(b, "\\n", 2); break;
    case '\r': sb_put(b, "\\r", 2); break;
    case '\t': sb_put(b, "\\t", 2); break;
    default:
      if (c < 0x20) {
        esc[0] = '\\', esc[1] = 'u', esc[2] = '0', esc[3] = '0';
        esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
        sb_put(b, esc, 6);
      } else {
        sb_put(b, (const char *)p, 1);
      }
    }
  }
  sb_put(b, "\"", 1);
}

static int cmp_wmeta(const void *a, const void *b) {
  const st_wmeta *x = *(const st_wmeta *const *)a;
  const st_wmeta *y = *(const st_wmeta *const *)b;
  return strcmp(x->key, y->key);
}

hmx_status hmx_st_writer_bytes(const hmx_st_writer *w, void **buf, size_t *len) {
  hmx_clear_error();
  if (buf) *buf = NULL;
  if (len) *len = 0;
  if (!w || !buf || !len)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_bytes: NULL argument");

  const st_wmeta **sorted = hmx_alloc_array(w->nm, sizeof *sorted);
  if (!sorted) return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_bytes: out of memory");
  for (size_t i = 0; i < w->nm; i++) sorted[i] = &w->m[i];
  if (w->nm > 1) qsort(sorted, w->nm, sizeof *sorted, cmp_wmeta);

  st_buf h = {NULL, 0, 0, 0};
  sb_put(&h, "{", 1);
  if (w->nm) {
    sb_puts(&h, "\"__metadata__\":{");
    for (size_t i = 0; i < w->nm; i++) {
      if (i) sb_put(&h, ",", 1);
      sb_putstr(&h, sorted[i]->key);
      sb_put(&h, ":", 1);
      sb_putstr(&h, sorted[i]->value);
    }
    sb_put(&h, "}", 1);
  }
  free(sorted);
  uint64_t off = 0;
  for (size_t i = 0; i < w->nt; i++) {
    const st_wtensor *t = &w->t[i];
    if (i || w->nm) sb_put(&h, ",", 1);
    sb_putstr(&h, t->name);
    sb_puts(&h, ":{\"dtype\":\"");
    sb_puts(&h, st_dtype_string(t->dtype));
    sb_puts(&h, "\",\"shape\":[");
    for (int d = 0; d < t->ndim; d++) {
      if (d) sb_put(&h, ",", 1);
      sb_putu(&h, (uint64_t)t->shape[d]);
    }
    sb_puts(&h, "],\"data_offsets\":[");
    sb_putu(&h, off);
    sb_put(&h, ",", 1);
    if ((uint64_t)t->nbytes > ST_MAX_INT - off) {
      free(h.p);
      return hmx_fail(HMX_ERR_UNSUPPORTED, "hmx_st_writer_bytes: data section exceeds 2^53 bytes");
    }
    off += t->nbytes;
    sb_putu(&h, off);
    sb_puts(&h, "]}");
  }
  sb_put(&h, "}", 1);
  while (!h.oom && h.len % 8) sb_put(&h, " ", 1);
  if (h.oom) {
    free(h.p);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_bytes: out of memory for the header");
  }
  if (h.len > HMX_ST_MAX_HEADER) {
    free(h.p);
    return hmx_fail(HMX_ERR_UNSUPPORTED,
                    "hmx_st_writer_bytes: header of %zu bytes exceeds the limit of %u", h.len,
                    (unsigned)HMX_ST_MAX_HEADER);
  }
  if (off > (uint64_t)(SIZE_MAX - 8 - h.len)) {
    free(h.p);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_bytes: file too large");
  }
  size_t total = 8 + h.len + (size_t)off;
  unsigned char *out = malloc(total);
  if (!out) {
    free(h.p);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_st_writer_bytes: out of memory (%zu bytes)", total);
  }
  write_le64(out, (uint64_t)h.len);
  memcpy(out + 8, h.p, h.len);
  free(h.p);
  unsigned char *p = out + 8 + h.len;
  for (size_t i = 0; i < w->nt; i++) {
    if (w->t[i].nbytes) memcpy(p, w->t[i].data, w->t[i].nbytes);
    p += w->t[i].nbytes;
  }
  *buf = out;
  *len = total;
  return HMX_OK;
}

hmx_status hmx_st_writer_save(const hmx_st_writer *w, const char *path) {
  hmx_clear_error();
  if (!w || !path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_st_writer_save: NULL argument");
  void *buf;
  size_t len;
  hmx_status s = hmx_st_writer_bytes(w, &buf, &len);
  if (s != HMX_OK) return s;
  FILE *fp = fopen(path, "wb");
  if (!fp) {
    int eno = errno;
    free(buf);
    return hmx_fail(HMX_ERR_IO, "%s: cannot open for writing: %s", path, strerror(eno));
  }
  int failed = fwrite(buf, 1, len, fp) != len;
  int eno = failed ? errno : 0;
  free(buf);
  if (fclose(fp) != 0 && !failed) {
    failed = 1;
    eno = errno;
  }
  if (failed) {
    remove(path);
    return hmx_fail(HMX_ERR_IO, "%s: write failed: %s", path, strerror(eno));
  }
  return HMX_OK;
}
