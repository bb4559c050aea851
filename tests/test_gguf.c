/* The strict GGUF reader (src/gguf.h) on files built here byte by byte.
 *
 *   test_gguf                  the built-in checks below
 *   test_gguf --compare FILE   for every tensor NAME with a tensor NAME.expected
 *                              (F32) in FILE, dequantize NAME and compare the
 *                              bits with NAME.expected (tests/test_gguf.py writes
 *                              FILE with the gguf pip package's own dequantizer)
 *
 * Built-in: a valid file with every metadata type (and arrays of numbers,
 * bools and strings) and tensors of seven types is read back exactly; every
 * truncation of it is rejected with a message (never a crash); one-field
 * corruptions (counts, lengths, magic, version, value types, nested arrays,
 * booleans, alignment, ranks, dimensions, types, offsets, duplicates,
 * overlaps) are each rejected with the expected status; hand-computed
 * dequantization of each block type, including Q4_1's unfused d*q + m. */
#include "check.h"
#include "gguf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ a byte builder */

typedef struct buf {
  unsigned char *p;
  size_t len, cap;
} buf;

static void put(buf *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->len, src, n);
  b->len += n;
}
static void put_le(buf *b, uint64_t v, int n) {
  unsigned char t[8];
  for (int i = 0; i < n; i++) t[i] = (unsigned char)(v >> (8 * i));
  put(b, t, (size_t)n);
}
static void put_str(buf *b, const char *s) {
  put_le(b, strlen(s), 8);
  put(b, s, strlen(s));
}
static void put_f32(buf *b, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  put_le(b, u, 4);
}
static void put_f64(buf *b, double f) {
  uint64_t u;
  memcpy(&u, &f, 8);
  put_le(b, u, 8);
}
static void patch(buf *b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; i++) b->p[at + i] = (unsigned char)(v >> (8 * i));
}

/* Offsets of fields in the base file, for the corruption table. */
static struct {
  size_t version, n_tensors, n_kv, key0_len, u8_type, bool_val, arr_type, arr_len, strarr_len,
      align_val, t0_name_len, t0_ndim, t0_dim0, t0_type, t0_offset, t1_offset, t1_dim0;
} at;

/* tensors: a F32 [2, 4], b Q4_1 [32], c Q6_K [256], d BF16 [3], e F16 [2], f Q8_0 [32],
 * g Q4_0 [32, 2] */
static const struct {
  const char *name;
  uint32_t type;
  int nd;
  int64_t ne[2];
  size_t nbytes;
} T[] = {{"a", 0, 2, {2, 4}, 32},  {"b", 3, 1, {32, 1}, 20},   {"c", 14, 1, {256, 1}, 210},
         {"d", 30, 1, {3, 1}, 6},  {"e", 1, 1, {2, 1}, 4},     {"f", 8, 1, {32, 1}, 34},
         {"g", 2, 2, {32, 2}, 36}};
#define NT (sizeof T / sizeof T[0])

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static buf base_file(void) {
  buf b = {0};
  put(&b, "GGUF", 4);
  at.version = b.len;
  put_le(&b, 3, 4);
  at.n_tensors = b.len;
  put_le(&b, NT, 8);
  at.n_kv = b.len;
  put_le(&b, 17, 8);
  at.key0_len = b.len;
  put_str(&b, "general.architecture"); put_le(&b, 8, 4); put_str(&b, "llama");
  put_str(&b, "t.u8"); at.u8_type = b.len; put_le(&b, 0, 4); put_le(&b, 200, 1);
  put_str(&b, "t.i8"); put_le(&b, 1, 4); put_le(&b, 0x80, 1);          /* -128 */
  put_str(&b, "t.u16"); put_le(&b, 2, 4); put_le(&b, 65535, 2);
  put_str(&b, "t.i16"); put_le(&b, 3, 4); put_le(&b, 0xFFFE, 2);       /* -2 */
  put_str(&b, "t.u32"); put_le(&b, 4, 4); put_le(&b, 4000000000u, 4);
  put_str(&b, "t.i32"); put_le(&b, 5, 4); put_le(&b, 0x80000000u, 4);  /* INT32_MIN */
  put_str(&b, "t.f32"); put_le(&b, 6, 4); put_f32(&b, 1e-5f);
  put_str(&b, "t.bool"); put_le(&b, 7, 4); at.bool_val = b.len; put_le(&b, 1, 1);
  put_str(&b, "t.u64"); put_le(&b, 10, 4); put_le(&b, UINT64_MAX, 8);   /* > INT64_MAX */
  put_str(&b, "t.i64"); put_le(&b, 11, 4); put_le(&b, (uint64_t)-5, 8);
  put_str(&b, "t.f64"); put_le(&b, 12, 4); put_f64(&b, 100000.0);
  put_str(&b, "t.arr"); put_le(&b, 9, 4); at.arr_type = b.len; put_le(&b, 5, 4);
  at.arr_len = b.len; put_le(&b, 3, 8);
  put_le(&b, 7, 4); put_le(&b, (uint32_t)-1, 4); put_le(&b, 1 << 30, 4);
  put_str(&b, "t.strs"); put_le(&b, 9, 4); put_le(&b, 8, 4);
  at.strarr_len = b.len; put_le(&b, 3, 8);
  put_str(&b, "a"); put_str(&b, ""); put_le(&b, 3, 8); put(&b, "x\0y", 3);
  put_str(&b, "t.bools"); put_le(&b, 9, 4); put_le(&b, 7, 4); put_le(&b, 2, 8);
  put_le(&b, 0, 1); put_le(&b, 1, 1);
  put_str(&b, "t.empty"); put_le(&b, 9, 4); put_le(&b, 4, 4); put_le(&b, 0, 8);
  put_str(&b, "general.alignment"); put_le(&b, 4, 4); at.align_val = b.len; put_le(&b, 64, 4);
  size_t off = 0;
  for (size_t i = 0; i < NT; i++) {
    if (i == 0) at.t0_name_len = b.len;
    put_str(&b, T[i].name);
    if (i == 0) at.t0_ndim = b.len;
    put_le(&b, (uint64_t)T[i].nd, 4);
    for (int d = 0; d < T[i].nd; d++) {
      if (i == 0 && d == 0) at.t0_dim0 = b.len;
      if (i == 1 && d == 0) at.t1_dim0 = b.len;
      put_le(&b, (uint64_t)T[i].ne[d], 8);
    }
    if (i == 0) at.t0_type = b.len;
    put_le(&b, T[i].type, 4);
    if (i == 0) at.t0_offset = b.len;
    if (i == 1) at.t1_offset = b.len;
    put_le(&b, off, 8);
    off = align_up(off + T[i].nbytes, 64);
  }
  size_t data = align_up(b.len, 64);
  while (b.len < data) put_le(&b, 0, 1);
  /* data: byte k of tensor i is (k * 7 + i * 13) & 0xFF, except where the
   * hand-checked values below are planted */
  off = 0;
  for (size_t i = 0; i < NT; i++) {
    while (b.len < data + off) put_le(&b, 0, 1);
    for (size_t k = 0; k < T[i].nbytes; k++) put_le(&b, (k * 7 + i * 13) & 0xFF, 1);
    off = align_up(off + T[i].nbytes, 64);
  }
  /* the last tensor ends the file: every truncation cuts into something */
  return b;
}

/* memmem is not C11 */
static unsigned char *find(const buf *b, const char *s, size_t n) {
  for (size_t i = 0; i + n <= b->len; i++)
    if (!memcmp(b->p + i, s, n)) return b->p + i;
  return NULL;
}

/* ------------------------------------------------------------------ checks */

static void test_valid(void) {
  buf b = base_file();
  hmx_gguf *f = NULL;
  hmx_status st = hmx_gguf_parse(b.p, b.len, "base", &f);
  CHECK(st == HMX_OK, "base file rejected: %s", hmx_last_error());
  if (st) {
    free(b.p);
    return;
  }
  CHECK(hmx_gguf_version(f) == 3 && hmx_gguf_alignment(f) == 64, "version/alignment");
  CHECK(hmx_gguf_kv_count(f) == 17 && hmx_gguf_tensor_count(f) == (int64_t)NT, "counts");
  int64_t x = 0;
  float fl = 0;
  int bo = -1;
  hmx_gguf_str s = {0};
  CHECK(!hmx_gguf_get_int(f, "t.u8", &x) && x == 200, "u8 %lld", (long long)x);
  CHECK(!hmx_gguf_get_int(f, "t.i8", &x) && x == -128, "i8 %lld", (long long)x);
  CHECK(!hmx_gguf_get_int(f, "t.u16", &x) && x == 65535, "u16");
  CHECK(!hmx_gguf_get_int(f, "t.i16", &x) && x == -2, "i16");
  CHECK(!hmx_gguf_get_int(f, "t.u32", &x) && x == 4000000000LL, "u32");
  CHECK(!hmx_gguf_get_int(f, "t.i32", &x) && x == INT32_MIN, "i32");
  CHECK(!hmx_gguf_get_int(f, "t.i64", &x) && x == -5, "i64");
  CHECK(hmx_gguf_get_int(f, "t.u64", &x) == HMX_ERR_FORMAT, "u64 over INT64_MAX must not fit");
  CHECK(!hmx_gguf_get_f32(f, "t.f32", &fl) && fl == 1e-5f, "f32");
  CHECK(!hmx_gguf_get_f32(f, "t.f64", &fl) && fl == 100000.0f, "f64");
  CHECK(hmx_gguf_get_f32(f, "t.u8", &fl) == HMX_ERR_FORMAT && hmx_last_error()[0], "f32 of u8");
  CHECK(!hmx_gguf_get_bool(f, "t.bool", &bo) && bo == 1, "bool");
  CHECK(!hmx_gguf_get_str(f, "general.architecture", &s) && s.len == 5 &&
        !memcmp(s.ptr, "llama", 5), "string");
  CHECK(hmx_gguf_get_int(f, "no.such.key", &x) == HMX_ERR_NOT_FOUND, "absent key");
  CHECK(hmx_gguf_get_int(f, "t.arr", &x) == HMX_ERR_FORMAT, "array as scalar");
  const hmx_gguf_value *v = hmx_gguf_find_kv(f, "t.arr");
  CHECK(v && v->type == HMX_GGUF_ARRAY && v->elem == HMX_GGUF_I32 && v->n == 3 &&
        hmx_gguf_array_int(v, 0) == 7 && hmx_gguf_array_int(v, 1) == -1 &&
        hmx_gguf_array_int(v, 2) == 1 << 30 && hmx_gguf_array_int(v, 3) == 0, "i32 array");
  v = hmx_gguf_find_kv(f, "t.strs");
  CHECK(v && v->elem == HMX_GGUF_STRING && v->n == 3 && v->strs[0].len == 1 &&
        v->strs[1].len == 0 && v->strs[2].len == 3 && !memcmp(v->strs[2].ptr, "x\0y", 3),
        "string array (with an empty string and a NUL byte)");
  v = hmx_gguf_find_kv(f, "t.bools");
  CHECK(v && v->elem == HMX_GGUF_BOOL && v->n == 2 && v->raw[1] == 1, "bool array");
  v = hmx_gguf_find_kv(f, "t.empty");
  CHECK(v && v->n == 0, "empty array");
  CHECK(!strcmp(hmx_gguf_kv_at(f, 0)->key, "general.architecture") && !hmx_gguf_kv_at(f, 17),
        "kv order");
  for (size_t i = 0; i < NT; i++) {
    const hmx_gguf_tensor *t = hmx_gguf_find_tensor(f, T[i].name);
    CHECK(t && t == hmx_gguf_tensor_at(f, (int64_t)i) && t->type == T[i].type &&
          t->ndim == T[i].nd && t->ne[0] == T[i].ne[0] && t->ne[1] == T[i].ne[1] &&
          t->nbytes == T[i].nbytes && t->numel == T[i].ne[0] * T[i].ne[1], "tensor %s",
          T[i].name);
    if (!t) continue;
    const unsigned char *d = t->data;
    CHECK(d[0] == ((i * 13) & 0xFF) && d[1] == ((7 + i * 13) & 0xFF), "tensor %s data",
          T[i].name);
    float *y = malloc((size_t)t->numel * sizeof *y);
    CHECK(y && hmx_gguf_tensor_to_f32(t, y) == HMX_OK, "dequantize %s", T[i].name);
    free(y);
  }
  CHECK(!hmx_gguf_find_tensor(f, "z") && !hmx_gguf_tensor_at(f, (int64_t)NT), "lookups");
  hmx_gguf_free(f);
  free(b.p);
}

static void test_truncations(void) {
  buf b = base_file();
  int bad = 0;
  for (size_t n = 0; n < b.len; n++) {
    hmx_gguf *f = (hmx_gguf *)(uintptr_t)1;
    hmx_status st = hmx_gguf_parse(b.p, n, "cut", &f);
    if (st == HMX_OK || f != NULL || !hmx_last_error()[0] || st != HMX_ERR_FORMAT) {
      if (bad++ < 5)
        fprintf(stderr, "truncation to %zu bytes: status %d, out %p, message '%s'\n", n, (int)st,
                (void *)f, hmx_last_error());
      hmx_gguf_free(st == HMX_OK ? f : NULL);
    }
  }
  CHECK(bad == 0, "%d of %zu truncations were not rejected as HMX_ERR_FORMAT", bad, b.len);
  free(b.p);
}

static void expect_reject(const buf *b, hmx_status want, const char *what, const char *needle) {
  hmx_gguf *f = NULL;
  hmx_status st = hmx_gguf_parse(b->p, b->len, "bad", &f);
  CHECK(st == want && f == NULL && strstr(hmx_last_error(), needle),
        "%s: status %d (want %d), message '%s' (want '%s')", what, (int)st, (int)want,
        hmx_last_error(), needle);
  if (st == HMX_OK) hmx_gguf_free(f);
}

static void test_corruptions(void) {
  const struct {
    const char *what;
    size_t *at;
    int delta, width;
    uint64_t value;
    hmx_status want;
    const char *needle;
  } cases[] = {
    {"magic", NULL, 0, 4, 0x46554746, HMX_ERR_FORMAT, "not a GGUF file"},
    {"version 2", &at.version, 0, 4, 2, HMX_ERR_UNSUPPORTED, "version 2"},
    {"huge tensor count", &at.n_tensors, 0, 8, UINT64_MAX, HMX_ERR_FORMAT, "cannot fit"},
    {"huge kv count", &at.n_kv, 0, 8, (uint64_t)1 << 62, HMX_ERR_FORMAT, "cannot fit"},
    {"one kv too many", &at.n_kv, 0, 8, 18, HMX_ERR_FORMAT, ""},
    {"huge key length", &at.key0_len, 0, 8, UINT64_MAX, HMX_ERR_FORMAT, "truncated"},
    {"empty key", &at.key0_len, 0, 8, 0, HMX_ERR_FORMAT, ""},
    {"value type 13", &at.u8_type, 0, 4, 13, HMX_ERR_FORMAT, "unknown value type"},
    {"bool 2", &at.bool_val, 0, 1, 2, HMX_ERR_FORMAT, "bool"},
    {"array of arrays", &at.arr_type, 0, 4, 9, HMX_ERR_FORMAT, "array of arrays"},
    {"array elem type 99", &at.arr_type, 0, 4, 99, HMX_ERR_FORMAT, "unknown array element"},
    {"huge array", &at.arr_len, 0, 8, (uint64_t)1 << 61, HMX_ERR_FORMAT, "truncated"},
    {"huge string array", &at.strarr_len, 0, 8, (uint64_t)1 << 60, HMX_ERR_FORMAT, "truncated"},
    {"alignment 48", &at.align_val, 0, 4, 48, HMX_ERR_FORMAT, "power of two"},
    {"alignment 0", &at.align_val, 0, 4, 0, HMX_ERR_FORMAT, "power of two"},
    {"rank 0", &at.t0_ndim, 0, 4, 0, HMX_ERR_FORMAT, "rank 0"},
    {"rank 5", &at.t0_ndim, 0, 4, 5, HMX_ERR_FORMAT, "rank"},
    {"dim 2^63", &at.t0_dim0, 0, 8, (uint64_t)1 << 63, HMX_ERR_FORMAT, "too large"},
    {"dims overflow", &at.t0_dim0, 0, 8, (uint64_t)1 << 62, HMX_ERR_FORMAT, "2^63"},
    {"bigger than the file", &at.t0_dim0, 0, 8, 1000, HMX_ERR_FORMAT, "past the end"},
    {"unknown ggml type", &at.t0_type, 0, 4, 77, HMX_ERR_UNSUPPORTED, "unknown ggml type"},
    {"partial block", &at.t1_dim0, 0, 8, 16, HMX_ERR_FORMAT, "block size"},
    {"misaligned offset", &at.t0_offset, 0, 8, 4, HMX_ERR_FORMAT, "alignment"},
    {"offset past the end", &at.t0_offset, 0, 8, (uint64_t)1 << 40, HMX_ERR_FORMAT, "past"},
    {"offset wraps", &at.t0_offset, 0, 8, UINT64_MAX - 63, HMX_ERR_FORMAT, "past"},
    {"overlap", &at.t1_offset, 0, 8, 0, HMX_ERR_FORMAT, "overlap"},
    {"tensor name too long", &at.t0_name_len, 0, 8, 65, HMX_ERR_FORMAT, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    buf b = base_file();
    size_t where = cases[i].at ? *cases[i].at : 0;
    patch(&b, where, cases[i].value, cases[i].width);
    expect_reject(&b, cases[i].want, cases[i].what, cases[i].needle);
    free(b.p);
  }
  /* duplicates: rename t.u16 to t.u8; rename tensor b to a */
  buf b = base_file();
  unsigned char *k = find(&b, "t.u16", 5);
  if (k) memcpy(k, "t.u8\0", 5); /* the length still says 5: a NUL in a key */
  expect_reject(&b, HMX_ERR_FORMAT, "NUL in a key", "NUL");
  free(b.p);
  b = base_file();
  k = find(&b, "t.i16", 5);
  if (k) memcpy(k, "t.u16", 5);
  expect_reject(&b, HMX_ERR_FORMAT, "duplicate key", "appears twice");
  free(b.p);
  b = base_file();
  b.p[at.t0_name_len + 8] = 'b';
  expect_reject(&b, HMX_ERR_FORMAT, "duplicate tensor", "appears twice");
  free(b.p);
  /* empty input, and a file with no tensors and no padding */
  hmx_gguf *f = NULL;
  CHECK(hmx_gguf_parse(NULL, 0, NULL, &f) == HMX_ERR_FORMAT && !f, "empty input");
  buf e = {0};
  put(&e, "GGUF", 4); put_le(&e, 3, 4); put_le(&e, 0, 8); put_le(&e, 0, 8);
  CHECK(hmx_gguf_parse(e.p, e.len, "empty", &f) == HMX_OK && f && hmx_gguf_kv_count(f) == 0,
        "header-only file: %s", hmx_last_error());
  hmx_gguf_free(f);
  free(e.p);
  CHECK(hmx_gguf_parse(NULL, 5, NULL, &f) == HMX_ERR_INVALID_ARGUMENT, "NULL buffer");
  CHECK(hmx_gguf_parse("GGUF", 4, NULL, NULL) == HMX_ERR_INVALID_ARGUMENT, "NULL out");
  CHECK(hmx_gguf_open("/nonexistent/x.gguf", &f) == HMX_ERR_IO && !f, "missing file");
}

static uint16_t f16_bits(float x) { return hmx_f32_to_f16(x); }

/* (dd * s) * q, rounded after each product, equals dd * (s * q) and the
 * exact product: the K types' products (dd an f16 scale widened) are exact. */
static int scaled_product_exact(float dd, int s, int q) {
  volatile float ds = dd * (float)s;
  volatile float a = ds * (float)q, b = dd * (float)(s * q);
  return a == b && (double)a == (double)dd * s * q;
}

/* Q4_K, Q5_K, Q5_0 and Q5_1 (docs/NUMERICS.md "GGUF dequantization"):
 * hand-placed values, then the exactness the rule relies on. */
static void test_dequant_k(void) {
  float y[256];
  for (int five = 0; five <= 1; five++) {
    unsigned char b[176] = {0};
    const int qs = five ? 48 : 16;
    const uint16_t two = f16_bits(2.0f), half = f16_bits(0.5f);
    b[0] = (unsigned char)two; b[1] = (unsigned char)(two >> 8);   /* d = 2 */
    b[2] = (unsigned char)half; b[3] = (unsigned char)(half >> 8); /* dmin = 0.5 */
    unsigned char *sc = b + 4;
    /* sub-block 1: sc = 5, m = 9 (low 6 bits of scales[1], scales[5]);
     * sub-block 6: sc = 0x0C | 2 << 4 = 44 (scales[10] low nibble, top bits of
     * scales[2]), m = 0x3 | 1 << 4 = 19 (scales[10] high nibble, top bits of
     * scales[6]) */
    sc[1] = 5; sc[5] = 9;
    sc[2] = 2 << 6; sc[6] = 1 << 6; sc[10] = 0x3C;
    b[qs + 32 * 0 + 7] = 0xB0;  /* element 32 + 7 (j 0, high nibble): 11 */
    b[qs + 32 * 3 + 4] = 0x0D;  /* element 192 + 4 (j 3, low nibble, sub-block 6): 13 */
    if (five) {
      b[16 + 7] = 1 << 1;       /* bit 1 of qh[7]: element 39 gets +16 */
      b[16 + 4] = 1 << 6;       /* bit 6 of qh[4]: element 196 gets +16 */
    }
    const uint32_t type = five ? HMX_GGML_Q5_K : HMX_GGML_Q4_K;
    CHECK(hmx_gguf_dequantize(type, b, 256, y) == HMX_OK, "q%d_k: %s", five ? 5 : 4,
          hmx_last_error());
    /* (2 * 5) * q - 0.5 * 9; (2 * 44) * q - 0.5 * 19; sub-block 0: sc = m = 0 */
    const float w39 = 10.0f * (five ? 27 : 11) - 4.5f, w196 = 88.0f * (five ? 29 : 13) - 9.5f;
    const float w33 = 10.0f * 0 - 4.5f;
    CHECK(y[39] == w39 && y[196] == w196 && y[33] == w33 && y[0] == 0.0f && !signbit(y[0]),
          "q%d_k values %g %g %g %g (want %g %g %g 0)", five ? 5 : 4, (double)y[39],
          (double)y[196], (double)y[33], (double)y[0], (double)w39, (double)w196, (double)w33);
    for (int e = 0; e < 256; e++)
      CHECK(hmx_gguf_quant_at(type, b, e) == y[e] ||
                (isnan(y[e]) && isnan(hmx_gguf_quant_at(type, b, e))),
            "q%d_k element %d: quant_at %g, dequantize %g", five ? 5 : 4, e,
            (double)hmx_gguf_quant_at(type, b, e), (double)y[e]);
  }
  /* Q5_0 / Q5_1: element j's bit 4 is bit j of qh (little-endian 32 bits) */
  for (int one = 0; one <= 1; one++) {
    unsigned char b[24] = {0};
    const int hdr = one ? 4 : 2;
    const uint16_t two = f16_bits(2.0f), m = f16_bits(-1.5f);
    b[0] = (unsigned char)two; b[1] = (unsigned char)(two >> 8);
    if (one) { b[2] = (unsigned char)m; b[3] = (unsigned char)(m >> 8); }
    b[hdr + 0] = 0x01;           /* bit 0: element 0 */
    b[hdr + 2] = 0x02;           /* bit 17: element 17 */
    b[hdr + 3] = 0x80;           /* bit 31: element 31 */
    b[hdr + 4 + 0] = 0x3A;       /* element 0: 0xA, element 16: 0x3 */
    b[hdr + 4 + 1] = 0x5F;       /* element 1: 0xF, element 17: 0x5 */
    b[hdr + 4 + 15] = 0xC0;      /* element 15: 0, element 31: 0xC */
    const uint32_t type = one ? HMX_GGML_Q5_1 : HMX_GGML_Q5_0;
    CHECK(hmx_gguf_dequantize(type, b, 32, y) == HMX_OK, "q5_%d: %s", one, hmx_last_error());
    const int want_q[6][2] = {{0, 26}, {16, 3}, {1, 15}, {17, 21}, {15, 0}, {31, 28}};
    for (int t = 0; t < 6; t++) {
      const int e = want_q[t][0], q = want_q[t][1];
      const float w = one ? (float)q * 2.0f + -1.5f : (float)(q - 16) * 2.0f;
      CHECK(y[e] == w, "q5_%d element %d: %g, want %g", one, e, (double)y[e], (double)w);
    }
    for (int e = 0; e < 32; e++)
      CHECK(hmx_gguf_quant_at(type, b, e) == y[e], "q5_%d element %d: quant_at %g, dequantize %g",
            one, e, (double)hmx_gguf_quant_at(type, b, e), (double)y[e]);
  }
  /* d * sc * q (11 + 6 + 5 significant bits) and dmin * m (11 + 6) are exact
   * for every finite f16 d: so only the subtraction rounds, in either
   * association of the product, and an fma gives the same bits */
  int exact = 1;
  const int scv[] = {63, 1, 37, 0}, qv[] = {31, 15, 1, 22};
  for (uint32_t h = 0; h < 0x7C00; h++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        const float dd = hmx_f16_to_f32((uint16_t)h);
        volatile float ds = dd * (float)scv[i], ms = dd * (float)scv[3 - i];
        volatile float diff = ds * (float)qv[j] - ms;
        if (!scaled_product_exact(dd, scv[i], qv[j]) || (double)ms != (double)dd * scv[3 - i] ||
            diff != fmaf(ds, (float)qv[j], -ms))
          exact = 0;
      }
  CHECK(exact, "q4_k / q5_k: d*sc*q and dmin*m exact for every finite f16 d; fma agrees");
  /* (Q2_K's sc, m <= 15 and q <= 3 lie inside these ranges, and Q3_K's
   * |sc - 32| <= 32, |q| <= 4 inside Q6_K's below: the same exactness) */
}

/* Q2_K and Q3_K: hand-placed values (element e = 128h + 32g + l, sub-block
 * e / 16), and quant_at against dequantize for every element. */
static void test_dequant_k23(void) {
  float y[256];
  const uint16_t two = f16_bits(2.0f), half = f16_bits(0.5f);
  /* Q2_K: scales[16] (sc low nibble, m high), qs[64], d, dmin */
  unsigned char b2[84] = {0};
  b2[80] = (unsigned char)two; b2[81] = (unsigned char)(two >> 8);   /* d = 2 */
  b2[82] = (unsigned char)half; b2[83] = (unsigned char)(half >> 8); /* dmin = 0.5 */
  b2[10] = 0x73;              /* sub-block 10 (elements 160..175): sc 3, m 7 */
  b2[16 + 32 + 5] = 0x0B;     /* h 1, l 5: g 0 (element 133) q 3, g 1 (element 165) q 2 */
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q2_K, b2, 256, y) == HMX_OK, "q2_k: %s", hmx_last_error());
  /* 165: (2 * 3) * 2 - 0.5 * 7 = 8.5; 133 (sub-block 8: sc = m = 0): +0;
   * 166 (q 0): 0 - 3.5 */
  CHECK(y[165] == 8.5f && y[133] == 0.0f && !signbit(y[133]) && y[166] == -3.5f,
        "q2_k values %g %g %g (want 8.5 0 -3.5)", (double)y[165], (double)y[133], (double)y[166]);
  for (int e = 0; e < 256; e++)
    CHECK(hmx_gguf_quant_at(HMX_GGML_Q2_K, b2, e) == y[e], "q2_k element %d: quant_at %g, "
          "dequantize %g", e, (double)hmx_gguf_quant_at(HMX_GGML_Q2_K, b2, e), (double)y[e]);
  /* Q3_K: hmask[32], qs[64], scales[12], d; u = low 2 bits | hmask bit << 2, q = u - 4 */
  unsigned char b3[110] = {0};
  b3[108] = (unsigned char)two; b3[109] = (unsigned char)(two >> 8); /* d = 2 */
  unsigned char *sc = b3 + 96;
  /* scale 13 (elements 208..223): low nibble = high nibble of scales[5], top
   * bits = bits 6, 7 of scales[9]: 0x9 | 2 << 4 = 41, - 32 = 9; scale 2
   * (elements 32..47): low nibble of scales[2], bits 0, 1 of scales[10]:
   * 0x4 | 0 = 4, - 32 = -28 */
  sc[5] = 0x90; sc[9] = 2 << 6; sc[2] = 0x04;
  b3[32 + 32 + 17] = 0x80;    /* h 1, l 17, g 3 (element 128 + 96 + 17 = 241): low 2 */
  b3[17] = 1 << 7;            /* hmask[17] bit 4h + g = 7: element 241's bit 2 */
  b3[32 + 0 + 3] = 0x04;      /* h 0, l 3, g 1 (element 35): low 1, bit 2 clear */
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q3_K, b3, 256, y) == HMX_OK, "q3_k: %s", hmx_last_error());
  /* scale 15 (element 241): low nibble of scales[7] >> 4, top of scales[11] >> 6: 0 - 32;
   * 241: u = 2 | 4 = 6, q = 2: (2 * -32) * 2 = -128; 35: u = 1, q = -3: (2 * -28) * -3 = 168;
   * 213 (scale 13, u = 0 | hmask bit 7 of hmask[21] = 0): q = -4: (2 * 9) * -4 = -72 */
  CHECK(y[241] == -128.0f && y[35] == 168.0f && y[213] == -72.0f,
        "q3_k values %g %g %g (want -128 168 -72)", (double)y[241], (double)y[35], (double)y[213]);
  for (int e = 0; e < 256; e++)
    CHECK(hmx_gguf_quant_at(HMX_GGML_Q3_K, b3, e) == y[e], "q3_k element %d: quant_at %g, "
          "dequantize %g", e, (double)hmx_gguf_quant_at(HMX_GGML_Q3_K, b3, e), (double)y[e]);
}

/* IQ4_NL and IQ4_XS: hand-placed quants against the table (llama.cpp's
 * kvalues_iq4nl, written out here rather than read from the library). */
static void test_dequant_iq4(void) {
  static const int kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  float y[256];
  const uint16_t two = f16_bits(2.0f), quarter = f16_bits(0.25f);
  /* IQ4_NL: f16 d, qs[16]; element j < 16 the low nibble of qs[j], j + 16 the high */
  unsigned char nl[18] = {0};
  nl[0] = (unsigned char)quarter; nl[1] = (unsigned char)(quarter >> 8); /* d = 0.25 */
  nl[2 + 3] = 0xF8;           /* element 3: u 8 (1), element 19: u 15 (113) */
  nl[2 + 15] = 0x0E;          /* element 15: u 14 (89), element 31: u 0 (-127) */
  CHECK(hmx_gguf_dequantize(HMX_GGML_IQ4_NL, nl, 32, y) == HMX_OK, "iq4_nl: %s", hmx_last_error());
  CHECK(y[3] == 0.25f && y[19] == 28.25f && y[15] == 22.25f && y[31] == -31.75f &&
        y[0] == -31.75f, "iq4_nl values %g %g %g %g %g (want 0.25 28.25 22.25 -31.75 -31.75)",
        (double)y[3], (double)y[19], (double)y[15], (double)y[31], (double)y[0]);
  /* IQ4_XS: f16 d, scales_h (u16), scales_l[4], qs[128]; sub-block s's
   * scale = nibble s % 2 of scales_l[s / 2] | bits 2s, 2s+1 of scales_h << 4 */
  unsigned char xs[136] = {0};
  xs[0] = (unsigned char)two; xs[1] = (unsigned char)(two >> 8); /* d = 2 */
  xs[4 + 2] = 0x05 | 0x0C << 4;  /* sub-block 4: low 5; sub-block 5: low 12 */
  const uint16_t sh = (uint16_t)(3u << 8 | 1u << 10); /* sub-block 4: top 3 (53 - 32 = 21); 5: top 1 (28 - 32 = -4) */
  xs[2] = (unsigned char)sh; xs[3] = (unsigned char)(sh >> 8);
  xs[8 + 16 * 4 + 7] = 0x3A;     /* sub-block 4: element 135 u 10 (25), element 151 u 3 (-65) */
  xs[8 + 16 * 5 + 0] = 0x90;     /* sub-block 5: element 160 u 0 (-127), element 176 u 9 (13) */
  CHECK(hmx_gguf_dequantize(HMX_GGML_IQ4_XS, xs, 256, y) == HMX_OK, "iq4_xs: %s", hmx_last_error());
  /* (2 * 21) * 25 = 1050, (2 * 21) * -65 = -2730, (2 * -4) * -127 = 1016,
   * (2 * -4) * 13 = -104; sub-block 0 (scale 0 - 32): (2 * -32) * -127 */
  CHECK(y[135] == 1050.0f && y[151] == -2730.0f && y[160] == 1016.0f && y[176] == -104.0f &&
        y[0] == 8128.0f, "iq4_xs values %g %g %g %g %g (want 1050 -2730 1016 -104 8128)",
        (double)y[135], (double)y[151], (double)y[160], (double)y[176], (double)y[0]);
  for (int u = 0; u < 16; u++)
    CHECK(hmx_gguf_iq4_values[u] == kv[u] && hmx_gguf_iq4_f32[u] == (float)kv[u],
          "iq4 value %d: %d / %g, want %d", u, hmx_gguf_iq4_values[u],
          (double)hmx_gguf_iq4_f32[u], kv[u]);
  for (int e = 0; e < 256; e++)
    CHECK(hmx_gguf_quant_at(HMX_GGML_IQ4_XS, xs, e) == y[e], "iq4_xs element %d: quant_at %g, "
          "dequantize %g", e, (double)hmx_gguf_quant_at(HMX_GGML_IQ4_XS, xs, e), (double)y[e]);
  CHECK(hmx_gguf_dequantize(HMX_GGML_IQ4_NL, nl, 32, y) == HMX_OK, "iq4_nl");
  for (int e = 0; e < 32; e++)
    CHECK(hmx_gguf_quant_at(HMX_GGML_IQ4_NL, nl, e) == y[e], "iq4_nl element %d", e);
}

static void test_dequant_values(void) {
  float y[256];
  /* Q4_1: d = 0.1 (f16), m = -1 (f16): y = q * d + m with two roundings */
  unsigned char q41[20];
  const uint16_t d = f16_bits(0.1f), m = f16_bits(-1.0f);
  q41[0] = (unsigned char)d; q41[1] = (unsigned char)(d >> 8);
  q41[2] = (unsigned char)m; q41[3] = (unsigned char)(m >> 8);
  for (int j = 0; j < 16; j++) q41[4 + j] = (unsigned char)(j | (15 - j) << 4);
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q4_1, q41, 32, y) == HMX_OK, "q4_1");
  const float df = hmx_f16_to_f32(d);
  int ok = 1;
  for (int j = 0; j < 16; j++) {
    volatile float p0 = (float)j * df, p1 = (float)(15 - j) * df; /* rounded products */
    if (y[j] != p0 + -1.0f || y[j + 16] != p1 + -1.0f) ok = 0;
  }
  CHECK(ok, "q4_1 values");
  /* d (11 significant bits) times a 4-bit q is exact in f32, so an fma gives
   * the same bits (docs/NUMERICS.md relies on this) */
  for (uint32_t h = 0; h < 0x7C00; h += 7)
    for (int q = 0; q < 16; q++) {
      const float dd = hmx_f16_to_f32((uint16_t)h);
      volatile float p = (float)q * dd;
      if (p + -1.0f != fmaf((float)q, dd, -1.0f) || p + 3.5f != fmaf((float)q, dd, 3.5f)) ok = 0;
    }
  CHECK(ok, "q4_1: fma and mul+add agree (exact product)");
  /* Q6_K's d * s * q is exact too (11 + 7 + 5 significant bits): any order
   * gives the same bits, equal to the exact product */
  int exact = 1;
  const int sv[] = {-128, 127, -77, 1}, qv[] = {-32, 31, -19, 1};
  for (uint32_t h = 0; h < 0x7C00; h++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        if (!scaled_product_exact(hmx_f16_to_f32((uint16_t)h), sv[i], qv[j])) exact = 0;
      }
  CHECK(exact, "q6_k: d*s*q exact for every finite f16 d");
  /* Q4_0: q - 8 */
  unsigned char q40[18] = {0};
  const uint16_t two = f16_bits(2.0f);
  q40[0] = (unsigned char)two; q40[1] = (unsigned char)(two >> 8);
  q40[2] = 0xF0; /* element 0: 0 - 8 = -8; element 16: 15 - 8 = 7 */
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q4_0, q40, 32, y) == HMX_OK && y[0] == -16.0f &&
        y[16] == 14.0f && y[1] == -16.0f, "q4_0 values %g %g", (double)y[0], (double)y[16]);
  /* Q8_0 */
  unsigned char q80[34] = {0};
  q80[0] = (unsigned char)two; q80[1] = (unsigned char)(two >> 8);
  q80[2] = 0x81; q80[33] = 127;
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q8_0, q80, 32, y) == HMX_OK && y[0] == -254.0f &&
        y[31] == 254.0f && y[1] == 0.0f, "q8_0 values");
  /* Q6_K: element e = 128h + 32g + l */
  unsigned char q6[210] = {0};
  q6[208] = (unsigned char)two; q6[209] = (unsigned char)(two >> 8);
  for (int i = 0; i < 16; i++) q6[192 + i] = (unsigned char)(i - 8);
  q6[64 + 32 + 5] = 0xA3;   /* h=1, g=1 low nibble 3 (elem 128+32+5=165), g=3 high nibble 0xA */
  q6[128 + 32 + 5] = 0x9C;  /* qh for h=1, l=5: bits g0=00, g1=11, g2=01, g3=10 */
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q6_K, q6, 256, y) == HMX_OK, "q6_k");
  /* elem 165: q = 3 | 3<<4 = 51 - 32 = 19, scale index 10 -> 2; 2*2*19 = 76
   * elem 229 (g=3): q = 0xA | 2<<4 = 42 - 32 = 10, scale index 14 -> 6: 2*6*10 = 120
   * elem 197 (g=2): q = 0 | 1<<4 = 16 - 32 = -16, scale 12 -> 4: 2*4*-16 = -128
   * elem 0: q = -32, scale -8: 2*-8*-32 = 512 */
  CHECK(y[165] == 76.0f && y[229] == 120.0f && y[197] == -128.0f && y[0] == 512.0f,
        "q6_k values %g %g %g %g", (double)y[165], (double)y[229], (double)y[197], (double)y[0]);
  /* BF16 / F16 / F32 exact, NaN payloads kept */
  const unsigned char bf[4] = {0x80, 0x3F, 0x81, 0x7F}; /* 1.0, NaN 0x7F81 (signaling) */
  CHECK(hmx_gguf_dequantize(HMX_GGML_BF16, bf, 2, y) == HMX_OK && y[0] == 1.0f, "bf16");
  uint32_t bits;
  memcpy(&bits, &y[1], 4);
  CHECK(bits == 0x7F810000u, "bf16 NaN bits %08x", (unsigned)bits);
  CHECK(hmx_gguf_dequantize(HMX_GGML_Q4_1, q41, 31, y) == HMX_ERR_INVALID_ARGUMENT, "part block");
  CHECK(hmx_gguf_dequantize(21, q41, 256, y) == HMX_ERR_UNSUPPORTED && hmx_last_error()[0],
        "IQ3_S is not dequantized");
  test_dequant_k();
  test_dequant_k23();
  test_dequant_iq4();
}

/* ------------------------------------------------------------------ --compare */

static int compare_file(const char *path) {
  hmx_gguf *f = NULL;
  if (hmx_gguf_open(path, &f)) {
    fprintf(stderr, "test_gguf: %s\n", hmx_last_error());
    return 1;
  }
  int compared = 0;
  for (int64_t i = 0; i < hmx_gguf_tensor_count(f); i++) {
    const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, i);
    char want_name[HMX_GGUF_MAX_NAME + 16];
    snprintf(want_name, sizeof want_name, "%s.expected", t->name);
    const hmx_gguf_tensor *w = hmx_gguf_find_tensor(f, want_name);
    if (!w) continue;
    CHECK(w->type == HMX_GGML_F32 && w->numel == t->numel, "%s: expected tensor shape", t->name);
    float *y = malloc((size_t)t->numel * sizeof *y);
    if (!y || w->numel != t->numel) {
      free(y);
      continue;
    }
    hmx_status st = hmx_gguf_tensor_to_f32(t, y);
    CHECK(st == HMX_OK, "%s: %s", t->name, hmx_last_error());
    int64_t bad = 0, first = -1;
    for (int64_t k = 0; k < t->numel && !st; k++) {
      uint32_t a, b;
      memcpy(&a, &y[k], 4);
      memcpy(&b, (const unsigned char *)w->data + 4 * k, 4);
      if (a != b && bad++ == 0) first = k;
    }
    if (first >= 0) {
      uint32_t a, b;
      memcpy(&a, &y[first], 4);
      memcpy(&b, (const unsigned char *)w->data + 4 * first, 4);
      fprintf(stderr, "%s element %lld: hadamix %08x, reference %08x\n", t->name,
              (long long)first, (unsigned)a, (unsigned)b);
    }
    CHECK(bad == 0, "%s (%s, %lld elements): %lld differ in bits", t->name,
          hmx_gguf_type_name(t->type), (long long)t->numel, (long long)bad);
    printf("%-12s %-5s %8lld elements: %s\n", t->name, hmx_gguf_type_name(t->type),
           (long long)t->numel, bad ? "DIFFER" : "bit-identical");
    compared++;
    free(y);
  }
  CHECK(compared > 0, "no NAME / NAME.expected pairs in %s", path);
  hmx_gguf_free(f);
  return check_finish("test_gguf --compare");
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--compare")) return compare_file(argv[2]);
  test_valid();
  test_truncations();
  test_corruptions();
  test_dequant_values();
  return check_finish("test_gguf");
}
