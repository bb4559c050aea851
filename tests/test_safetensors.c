/* Tests of the strict safetensors reader and writer (src/safetensors.h):
 * round trips over every dtype and rank 0..4, zero-size tensors, strided
 * input, metadata and escaping; byte-exact determinism; file I/O; writer
 * argument errors; and a table of crafted malformed files, each of which must
 * be rejected with the expected status and a non-empty error message. */
#include "check.h"
#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

/* 8-byte little-endian length n, then hlen header bytes, then data_len bytes
 * of a counting pattern. */
static unsigned char *build(uint64_t n, const char *header, size_t hlen, size_t data_len,
                            size_t *len) {
  *len = 8 + hlen + data_len;
  unsigned char *b = malloc(*len ? *len : 1);
  if (!b) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(n >> (8 * i));
  if (hlen) memcpy(b + 8, header, hlen);
  for (size_t i = 0; i < data_len; i++) b[8 + hlen + i] = (unsigned char)(i * 7 + 1);
  return b;
}

static hmx_status parse_header(const char *header, size_t hlen, size_t data_len,
                               hmx_st_file **f) {
  size_t len;
  unsigned char *b = build(hlen, header, hlen, data_len, &len);
  hmx_status s = hmx_st_parse(b, len, f);
  free(b);
  return s;
}

/* HMX_TEST_VERBOSE=1 prints every rejection message. */
static int verbose = 0;

static int str_contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* ------------------------------------------------------------------ malformed */

typedef struct bad_case {
  const char *what;
  const char *header;
  size_t hlen;     /* 0: strlen(header) */
  size_t data_len; /* zero-filled data section after the header */
  hmx_status expect;
  const char *mention; /* substring the message must contain, or NULL */
} bad_case;

#define T1(dt, shape, offs) "{\"a\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}}"

static const bad_case bad_cases[] = {
    /* not a JSON object / bad JSON */
    {"array header", "[1,2]", 0, 0, HMX_ERR_FORMAT, NULL},
    {"string header", "\"abc\"", 0, 0, HMX_ERR_FORMAT, NULL},
    {"number header", "123", 0, 0, HMX_ERR_FORMAT, NULL},
    {"leading space", " {}", 0, 0, HMX_ERR_FORMAT, NULL},
    {"truncated JSON", "{\"a\":", 0, 0, HMX_ERR_FORMAT, "JSON"},
    {"single quotes", "{'a':1}", 0, 0, HMX_ERR_FORMAT, NULL},
    {"trailing comma", "{\"a\":{\"dtype\":\"F32\",}}", 0, 0, HMX_ERR_FORMAT, NULL},
    {"trailing garbage", "{}  x", 0, 0, HMX_ERR_FORMAT, "after"},
    {"two objects", "{}{}", 0, 0, HMX_ERR_FORMAT, NULL},
    {"extra brace", "{}}", 0, 0, HMX_ERR_FORMAT, NULL},
    {"embedded NUL", "{}\0     ", 8, 0, HMX_ERR_FORMAT, "NUL"},
    {"NUL padding", "{}\0\0\0\0\0\0", 8, 0, HMX_ERR_FORMAT, "NUL"},
    {"invalid UTF-8", "{\"\xff\":1}", 0, 0, HMX_ERR_FORMAT, "UTF-8"},
    {"overlong UTF-8", "{\"\xc0\xaf\":1}", 0, 0, HMX_ERR_FORMAT, "UTF-8"},
    {"UTF-8 surrogate", "{\"\xed\xa0\x80\":1}", 0, 0, HMX_ERR_FORMAT, "UTF-8"},
    {"\\u0000 in name", "{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}",
     0, 0, HMX_ERR_FORMAT, "u0000"},
    {"raw control char in name",
     "{\"a\x01\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0, 0, HMX_ERR_FORMAT,
     "control"},
    {"vertical tab between tokens", "{\x0b}", 0, 0, HMX_ERR_FORMAT, "unexpected character"},
    {"lone surrogate escape", "{\"\\ud800\":{}}", 0, 0, HMX_ERR_FORMAT, NULL},
    /* entries */
    {"entry not an object", "{\"a\":5}", 0, 0, HMX_ERR_FORMAT, "'a'"},
    {"entry is null", "{\"a\":null}", 0, 0, HMX_ERR_FORMAT, "'a'"},
    {"missing dtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, HMX_ERR_FORMAT,
     "dtype"},
    {"missing shape", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 0, 4, HMX_ERR_FORMAT,
     "shape"},
    {"missing data_offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 0, 0, HMX_ERR_FORMAT,
     "data_offsets"},
    {"unknown extra key",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"offsets\":[0,4]}}", 0, 4,
     HMX_ERR_FORMAT, "unknown key"},
    {"duplicate key in entry",
     "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4,
     HMX_ERR_FORMAT, "duplicate"},
    /* dtype */
    {"unknown dtype", T1("F33", "[1]", "[0,4]"), 0, 4, HMX_ERR_DTYPE, "F33"},
    {"lowercase dtype", T1("f32", "[1]", "[0,4]"), 0, 4, HMX_ERR_DTYPE, "f32"},
    {"unsupported dtype F64", T1("F64", "[1]", "[0,8]"), 0, 8, HMX_ERR_DTYPE, "unsupported"},
    {"unsupported dtype U8", T1("U8", "[1]", "[0,1]"), 0, 1, HMX_ERR_DTYPE, "unsupported"},
    {"unsupported dtype BOOL", T1("BOOL", "[1]", "[0,1]"), 0, 1, HMX_ERR_DTYPE, "unsupported"},
    {"dtype not a string",
     "{\"a\":{\"dtype\":3,\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, HMX_ERR_FORMAT,
     "dtype"},
    /* shape */
    {"shape not an array", T1("F32", "2", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "shape"},
    {"negative shape", T1("F32", "[-1]", "[0,4]"), 0, 4, HMX_ERR_FORMAT, "negative"},
    {"negative zero shape", T1("F32", "[-0]", "[0,0]"), 0, 0, HMX_ERR_FORMAT, "-0"},
    {"float shape", T1("F32", "[1.5]", "[0,4]"), 0, 4, HMX_ERR_FORMAT, "integer"},
    {"float-written integral shape", T1("F32", "[2.0]", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "2.0"},
    {"exponent shape", T1("F32", "[2e0]", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "2e0"},
    {"leading-zero shape", T1("F32", "[02]", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "02"},
    {"huge shape", T1("F32", "[1e300]", "[0,4]"), 0, 4, HMX_ERR_FORMAT, "too large"},
    {"shape entry 2^53+2", T1("F32", "[9007199254740994]", "[0,4]"), 0, 4, HMX_ERR_FORMAT,
     "too large"},
    {"shape entry 2^53+1 (rounds in a double)", T1("F32", "[9007199254740993,0]", "[0,0]"), 0, 0,
     HMX_ERR_FORMAT, "9007199254740993"},
    {"string shape entry", T1("F32", "[\"2\"]", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "number"},
    {"boolean shape entry", T1("F32", "[true]", "[0,4]"), 0, 4, HMX_ERR_FORMAT, "number"},
    {"overflowing shape product", T1("F32", "[4294967296,4294967296,4294967296]", "[0,4]"), 0, 4,
     HMX_ERR_FORMAT, "overflow"},
    {"overflowing shape product 2^53 x 2^53",
     T1("F32", "[9007199254740992,9007199254740992]", "[0,4]"), 0, 4, HMX_ERR_FORMAT, "overflow"},
    {"overflowing byte count", T1("I64", "[9007199254740992,512]", "[0,8]"), 0, 8, HMX_ERR_FORMAT,
     "byte size"},
    {"rank 5", T1("F32", "[1,1,1,1,2]", "[0,8]"), 0, 8, HMX_ERR_UNSUPPORTED, "rank 5"},
    /* data_offsets */
    {"offsets reversed", T1("F32", "[0]", "[8,0]"), 0, 8, HMX_ERR_FORMAT, "reversed"},
    {"offsets beyond data (data cut short)", T1("F32", "[4]", "[0,16]"), 0, 8, HMX_ERR_FORMAT,
     "beyond"},
    {"offsets wrong length for dtype x shape", T1("F32", "[2]", "[0,4]"), 0, 4, HMX_ERR_FORMAT,
     "needs 8"},
    {"offsets wrong length for BF16", T1("BF16", "[2]", "[0,8]"), 0, 8, HMX_ERR_FORMAT, "needs 4"},
    {"offsets one entry", T1("F32", "[0]", "[0]"), 0, 0, HMX_ERR_FORMAT, "data_offsets"},
    {"offsets three entries", T1("F32", "[0]", "[0,0,0]"), 0, 0, HMX_ERR_FORMAT, "data_offsets"},
    {"offsets not an array", T1("F32", "[0]", "0"), 0, 0, HMX_ERR_FORMAT, "data_offsets"},
    {"offsets negative", T1("F32", "[1]", "[-4,0]"), 0, 4, HMX_ERR_FORMAT, "negative"},
    {"offsets fractional", T1("F32", "[1]", "[0.5,4.5]"), 0, 5, HMX_ERR_FORMAT, "integer"},
    {"offsets strings", T1("F32", "[1]", "[\"0\",\"4\"]"), 0, 4, HMX_ERR_FORMAT, "number"},
    /* layout of the data section */
    {"overlapping tensors",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
     0, 12, HMX_ERR_FORMAT, "overlap"},
    {"identical ranges",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
     0, 4, HMX_ERR_FORMAT, "overlap"},
    {"empty tensor inside another",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
     0, 8, HMX_ERR_FORMAT, "overlap"},
    {"hole between tensors",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
     0, 12, HMX_ERR_FORMAT, "holes"},
    {"hole at the start", T1("F32", "[1]", "[4,8]"), 0, 8, HMX_ERR_FORMAT, "holes"},
    {"data after the last tensor", T1("F32", "[1]", "[0,4]"), 0, 8, HMX_ERR_FORMAT, "after"},
    {"data but no tensors", "{}", 0, 4, HMX_ERR_FORMAT, "after"},
    {"duplicate tensor names",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
     0, 8, HMX_ERR_FORMAT, "duplicate tensor name 'a'"},
    {"duplicate names through an escape",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"\\u0061\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
     0, 8, HMX_ERR_FORMAT, "duplicate"},
    /* __metadata__ */
    {"metadata with a number", "{\"__metadata__\":{\"k\":1}}", 0, 0, HMX_ERR_FORMAT, "'k'"},
    {"metadata with null", "{\"__metadata__\":{\"k\":null}}", 0, 0, HMX_ERR_FORMAT, "'k'"},
    {"metadata with an object", "{\"__metadata__\":{\"k\":{}}}", 0, 0, HMX_ERR_FORMAT, "'k'"},
    {"metadata not an object", "{\"__metadata__\":\"x\"}", 0, 0, HMX_ERR_FORMAT, "__metadata__"},
    {"metadata as an array", "{\"__metadata__\":[\"x\"]}", 0, 0, HMX_ERR_FORMAT, "__metadata__"},
    {"duplicate metadata key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, 0,
     HMX_ERR_FORMAT, "duplicate"},
    {"duplicate __metadata__", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, 0, HMX_ERR_FORMAT,
     "duplicate"},
};

static void test_malformed_table(void) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    size_t hlen = c->hlen ? c->hlen : strlen(c->header);
    hmx_st_file *f = (hmx_st_file *)&f; /* must be reset to NULL */
    hmx_status s = parse_header(c->header, hlen, c->data_len, &f);
    const char *msg = hmx_last_error();
    if (verbose) printf("  %-40s %-18s %s\n", c->what, hmx_status_string(s), msg);
    CHECK(s == c->expect, "%s: got %s (%s), expected %s", c->what, hmx_status_string(s), msg,
          hmx_status_string(c->expect));
    CHECK(f == NULL, "%s: out not NULL on failure", c->what);
    CHECK(msg[0] != '\0', "%s: empty error message", c->what);
    if (c->mention)
      CHECK(str_contains(msg, c->mention), "%s: message '%s' does not mention '%s'", c->what, msg,
            c->mention);
    if (s == HMX_OK) hmx_st_free(f);
  }
}

/* Broken framing: the 8-byte length and the header bounds. */
static void test_malformed_framing(void) {
  struct {
    const char *what;
    uint64_t n;       /* header length written in the prefix */
    size_t hlen;      /* bytes of "{}      "-style header actually present */
    long cut; /* if >= 0, truncate the buffer to this many bytes */
    const char *mention;
  } cases[] = {
      {"empty buffer", 8, 8, 0, "too short"},
      {"5-byte buffer", 8, 8, 5, "too short"},
      {"7-byte buffer", 8, 8, 7, "too short"},
      {"header length 0", 0, 0, -1, "length is 0"},
      {"header length 2^40", (uint64_t)1 << 40, 8, -1, "exceeds"},
      {"header length limit + 1", (uint64_t)HMX_ST_MAX_HEADER + 1, 8, -1, "exceeds"},
      {"header length UINT64_MAX", UINT64_MAX, 8, -1, "exceeds"},
      {"header length beyond file", 64, 8, -1, "past the end"},
      {"header cut short", 8, 8, 12, "past the end"},
      {"header length off by one", 9, 8, -1, "past the end"},
  };
  const char *hdr = "{}      ";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    unsigned char *b = build(cases[i].n, hdr, cases[i].hlen, 0, &len);
    if (cases[i].cut >= 0) len = (size_t)cases[i].cut;
    hmx_st_file *f = NULL;
    hmx_status s = hmx_st_parse(b, len, &f);
    const char *msg = hmx_last_error();
    if (verbose) printf("  %-40s %-18s %s\n", cases[i].what, hmx_status_string(s), msg);
    CHECK(s == HMX_ERR_FORMAT, "%s: got %s (%s)", cases[i].what, hmx_status_string(s), msg);
    CHECK(f == NULL, "%s: out not NULL", cases[i].what);
    CHECK(msg[0] != '\0', "%s: empty message", cases[i].what);
    if (cases[i].mention)
      CHECK(str_contains(msg, cases[i].mention), "%s: message '%s'", cases[i].what, msg);
    free(b);
  }
  /* NULL buffer with zero length is an empty file, not a crash */
  hmx_st_file *f = NULL;
  CHECK(hmx_st_parse(NULL, 0, &f) == HMX_ERR_FORMAT, "NULL, 0");
  CHECK(hmx_st_parse(NULL, 8, &f) == HMX_ERR_INVALID_ARGUMENT, "NULL, 8");
  CHECK(hmx_st_parse("12345678", 8, NULL) == HMX_ERR_INVALID_ARGUMENT, "out NULL");
}

/* ------------------------------------------------------------------ valid files */

/* A handcrafted file: metadata after the tensors, data in the opposite order
 * of the header, zero-size tensors sharing an offset, a rank-0 tensor, JSON
 * whitespace and padding. */
static void test_handcrafted_valid(void) {
  const char *hdr =
      "{ \"b\" : {\"shape\":[2], \"dtype\":\"F32\", \"data_offsets\":[6,14]},\n"
      "  \"a\": {\"dtype\":\"BF16\",\"shape\":[], \"data_offsets\":[4,6]},\n"
      "  \"e1\":{\"dtype\":\"I64\",\"shape\":[0,3],\"data_offsets\":[4,4]},\n"
      "  \"e0\":{\"dtype\":\"F16\",\"shape\":[5,0],\"data_offsets\":[4,4]},\n"
      "  \"c\":{\"dtype\":\"I32\",\"shape\":[1,1,1,1],\"data_offsets\":[0,4]},\n"
      "  \"__metadata__\":{\"z\":\"last\",\"format\":\"pt\",\"\":\"empty key\"},\n"
      "  \"e2\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[14,14]}\n"
      "}\t\r\n   ";
  hmx_st_file *f = NULL;
  hmx_status s = parse_header(hdr, strlen(hdr), 14, &f);
  CHECK(s == HMX_OK, "handcrafted: %s (%s)", hmx_status_string(s), hmx_last_error());
  if (s != HMX_OK) return;
  CHECK(hmx_st_count(f) == 6, "count %d", hmx_st_count(f));
  const char *order[] = {"b", "a", "e1", "e0", "c", "e2"};
  for (int i = 0; i < 6; i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    CHECK(t && strcmp(t->name, order[i]) == 0, "at(%d) is %s", i, t ? t->name : "NULL");
    CHECK(hmx_st_find(f, order[i]) == t, "find(%s)", order[i]);
  }
  CHECK(hmx_st_at(f, -1) == NULL && hmx_st_at(f, 6) == NULL, "at out of range");
  CHECK(hmx_st_find(f, "nope") == NULL && hmx_st_find(f, "") == NULL, "find absent");
  const unsigned char *data0 = (const unsigned char *)hmx_st_find(f, "c")->data;
  const hmx_st_tensor *b = hmx_st_find(f, "b");
  CHECK(b->dtype == HMX_F32 && b->ndim == 1 && b->shape[0] == 2 && b->nbytes == 8, "b desc");
  CHECK((const unsigned char *)b->data == data0 + 6, "b data pointer");
  CHECK(data0[6] == (unsigned char)(6 * 7 + 1), "b data content");
  const hmx_st_tensor *a = hmx_st_find(f, "a");
  CHECK(a->dtype == HMX_BF16 && a->ndim == 0 && a->nbytes == 2, "rank-0 a");
  hmx_tensor va = hmx_st_view(a);
  CHECK(va.ndim == 0 && hmx_tensor_numel(&va) == 1 && va.data == (void *)(data0 + 4), "view a");
  const hmx_st_tensor *e1 = hmx_st_find(f, "e1");
  CHECK(e1->dtype == HMX_I64 && e1->ndim == 2 && e1->shape[0] == 0 && e1->shape[1] == 3 &&
            e1->nbytes == 0,
        "zero-size e1");
  hmx_tensor vc = hmx_st_view(hmx_st_find(f, "c"));
  CHECK(vc.ndim == 4 && vc.dtype == HMX_I32 && hmx_tensor_numel(&vc) == 1 && vc.stride[0] == 0,
        "view c");
  CHECK(hmx_st_meta_count(f) == 3, "meta count %d", hmx_st_meta_count(f));
  const char *v = NULL;
  CHECK(strcmp(hmx_st_meta_at(f, 0, &v), "z") == 0 && strcmp(v, "last") == 0, "meta_at 0");
  CHECK(strcmp(hmx_st_meta_at(f, 2, &v), "") == 0 && strcmp(v, "empty key") == 0, "meta_at 2");
  CHECK(hmx_st_meta_at(f, 3, &v) == NULL && v == NULL, "meta_at out of range");
  CHECK(hmx_st_meta(f, "format") && strcmp(hmx_st_meta(f, "format"), "pt") == 0, "meta format");
  CHECK(hmx_st_meta(f, "") && strcmp(hmx_st_meta(f, ""), "empty key") == 0, "meta empty key");
  CHECK(hmx_st_meta(f, "absent") == NULL, "meta absent");
  hmx_st_free(f);

  /* the smallest valid files */
  f = NULL;
  CHECK(parse_header("{}", 2, 0, &f) == HMX_OK && hmx_st_count(f) == 0, "{} %s",
        hmx_last_error());
  hmx_st_free(f);
  f = NULL;
  CHECK(parse_header("{\"__metadata__\":{}}", 19, 0, &f) == HMX_OK && hmx_st_meta_count(f) == 0,
        "empty metadata %s", hmx_last_error());
  hmx_st_free(f);
  /* escapes decode; 2^53 is the largest accepted integer */
  f = NULL;
  const char *esc = "{\"x\\\"\\\\\\/\\u00e9\\n\":{\"dtype\":\"F16\",\"shape\":[9007199254740992,0],"
                    "\"data_offsets\":[0,0]}}";
  CHECK(parse_header(esc, strlen(esc), 0, &f) == HMX_OK, "escapes: %s", hmx_last_error());
  CHECK(hmx_st_find(f, "x\"\\/\xc3\xa9\n") != NULL, "escaped name");
  hmx_st_free(f);
  hmx_st_free(NULL);
  CHECK(hmx_st_count(NULL) == 0 && hmx_st_meta_count(NULL) == 0 && hmx_st_at(NULL, 0) == NULL,
        "NULL file");
}

/* ------------------------------------------------------------------ writer */

static uint16_t bf16_data[4] = {0x3f80, 0x4000, 0xc040, 0x7fc0};
static uint16_t f16_data[8] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x0001, 0x8000, 0x7c00, 0xfbff};
static int32_t i32_scalar = -123456;
static int64_t i64_data[3] = {INT64_MIN, 0, INT64_MAX};
static float f32_4d[6] = {1.5f, -2.25f, 3.0f, 0.0f, -0.0f, 1e-40f};
static float f32_src[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; /* [4, 3] row-major */

/* Fills w with the standard test content; metadata added out of order. */
static void fill_writer(hmx_st_writer *w) {
  hmx_tensor t;
  t = hmx_tensor_2d(f32_src, HMX_F32, 4, 3);
  CHECK(hmx_st_writer_add(w, "f32.matrix", &t) == HMX_OK, "add f32 %s", hmx_last_error());
  t = hmx_tensor_1d(bf16_data, HMX_BF16, 4);
  CHECK(hmx_st_writer_add(w, "bf16", &t) == HMX_OK, "add bf16 %s", hmx_last_error());
  t = hmx_tensor_3d(f16_data, HMX_F16, 2, 2, 2);
  CHECK(hmx_st_writer_add(w, "f16 \"quoted\"\\path\n", &t) == HMX_OK, "add f16 %s",
        hmx_last_error());
  t = hmx_tensor_make(&i32_scalar, HMX_I32, 0, NULL);
  CHECK(hmx_st_writer_add(w, "i32.scalar", &t) == HMX_OK, "add rank 0 %s", hmx_last_error());
  t = hmx_tensor_1d(i64_data, HMX_I64, 3);
  CHECK(hmx_st_writer_add(w, "i64", &t) == HMX_OK, "add i64 %s", hmx_last_error());
  t = hmx_tensor_2d(NULL, HMX_F32, 0, 5);
  CHECK(hmx_st_writer_add(w, "empty", &t) == HMX_OK, "add empty %s", hmx_last_error());
  t = hmx_tensor_4d(f32_4d, HMX_F32, 1, 2, 1, 3);
  CHECK(hmx_st_writer_add(w, "f32.4d", &t) == HMX_OK, "add 4d %s", hmx_last_error());
  /* transposed view of f32_src: [3, 4] with strides {1, 3} */
  t = hmx_tensor_2d(f32_src, HMX_F32, 3, 4);
  t.stride[0] = 1;
  t.stride[1] = 3;
  CHECK(hmx_st_writer_add(w, "f32.transposed", &t) == HMX_OK, "add strided %s", hmx_last_error());
  /* every other element of row 1: [2] with stride {2}, starting at f32_src[3] */
  t = hmx_tensor_1d(f32_src + 3, HMX_F32, 2);
  t.stride[0] = 2;
  CHECK(hmx_st_writer_add(w, "caf\xc3\xa9", &t) == HMX_OK, "add utf8 strided %s",
        hmx_last_error());
  CHECK(hmx_st_writer_meta(w, "seed", "42") == HMX_OK, "meta");
  CHECK(hmx_st_writer_meta(w, "op", "fwht") == HMX_OK, "meta");
  CHECK(hmx_st_writer_meta(w, "note", "tab\there \"q\" \\ \x01 \xe2\x82\xac") == HMX_OK, "meta");
  CHECK(hmx_st_writer_meta(w, "", "") == HMX_OK, "meta empty");
}

static void check_round_trip(const hmx_st_file *f) {
  CHECK(hmx_st_count(f) == 9, "count %d", hmx_st_count(f));
  const char *names[] = {"f32.matrix", "bf16", "f16 \"quoted\"\\path\n", "i32.scalar", "i64",
                         "empty",      "f32.4d", "f32.transposed", "caf\xc3\xa9"};
  for (int i = 0; i < 9 && i < hmx_st_count(f); i++)
    CHECK(strcmp(hmx_st_at(f, i)->name, names[i]) == 0, "order %d: %s", i, hmx_st_at(f, i)->name);
  const hmx_st_tensor *t;
  t = hmx_st_find(f, "f32.matrix");
  CHECK(t && t->dtype == HMX_F32 && t->ndim == 2 && t->shape[0] == 4 && t->shape[1] == 3 &&
            t->nbytes == 48 && memcmp(t->data, f32_src, 48) == 0,
        "f32.matrix");
  t = hmx_st_find(f, "bf16");
  CHECK(t && t->dtype == HMX_BF16 && t->ndim == 1 && t->nbytes == 8 &&
            memcmp(t->data, bf16_data, 8) == 0,
        "bf16");
  t = hmx_st_find(f, "f16 \"quoted\"\\path\n");
  CHECK(t && t->dtype == HMX_F16 && t->ndim == 3 && t->shape[2] == 2 &&
            memcmp(t->data, f16_data, 16) == 0,
        "f16");
  t = hmx_st_find(f, "i32.scalar");
  CHECK(t && t->dtype == HMX_I32 && t->ndim == 0 && t->nbytes == 4 &&
            memcmp(t->data, &i32_scalar, 4) == 0,
        "rank 0");
  t = hmx_st_find(f, "i64");
  CHECK(t && t->dtype == HMX_I64 && t->nbytes == 24 && memcmp(t->data, i64_data, 24) == 0, "i64");
  t = hmx_st_find(f, "empty");
  CHECK(t && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 5 && t->nbytes == 0, "empty");
  t = hmx_st_find(f, "f32.4d");
  CHECK(t && t->ndim == 4 && t->shape[1] == 2 && t->shape[3] == 3 &&
            memcmp(t->data, f32_4d, 24) == 0,
        "4d");
  t = hmx_st_find(f, "f32.transposed");
  CHECK(t && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 4 && t->nbytes == 48, "transp");
  if (t) {
    float got[12];
    memcpy(got, t->data, 48);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        CHECK(got[i * 4 + j] == f32_src[j * 3 + i], "transposed[%d][%d] = %g", i, j,
              got[i * 4 + j]);
  }
  t = hmx_st_find(f, "caf\xc3\xa9");
  CHECK(t != NULL, "utf8 name");
  if (t) {
    float got[2];
    memcpy(got, t->data, 8);
    CHECK(got[0] == 3.0f && got[1] == 5.0f, "stride-2 copy %g %g", got[0], got[1]);
  }
  /* metadata: sorted in the file */
  CHECK(hmx_st_meta_count(f) == 4, "meta count");
  const char *keys[] = {"", "note", "op", "seed"};
  for (int i = 0; i < 4 && i < hmx_st_meta_count(f); i++) {
    const char *v;
    CHECK(strcmp(hmx_st_meta_at(f, i, &v), keys[i]) == 0, "meta order %d", i);
  }
  CHECK(hmx_st_meta(f, "note") &&
            strcmp(hmx_st_meta(f, "note"), "tab\there \"q\" \\ \x01 \xe2\x82\xac") == 0,
        "meta escape");
  CHECK(hmx_st_meta(f, "seed") && strcmp(hmx_st_meta(f, "seed"), "42") == 0, "meta seed");
}

static void test_round_trip_and_determinism(void) {
  hmx_st_writer *w1 = hmx_st_writer_new(), *w2 = hmx_st_writer_new();
  CHECK(w1 && w2, "writer_new");
  if (!w1 || !w2) return;
  fill_writer(w1);
  fill_writer(w2);
  void *b1 = NULL, *b2 = NULL, *b3 = NULL;
  size_t l1 = 0, l2 = 0, l3 = 0;
  CHECK(hmx_st_writer_bytes(w1, &b1, &l1) == HMX_OK, "bytes 1: %s", hmx_last_error());
  CHECK(hmx_st_writer_bytes(w2, &b2, &l2) == HMX_OK, "bytes 2");
  CHECK(hmx_st_writer_bytes(w1, &b3, &l3) == HMX_OK, "bytes 1 again");
  CHECK(l1 == l2 && l1 == l3 && memcmp(b1, b2, l1) == 0 && memcmp(b1, b3, l1) == 0,
        "writer output not deterministic");
  /* header length is a multiple of 8 and the padding is spaces */
  const unsigned char *p = b1;
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | p[i];
  CHECK(n % 8 == 0 && n < l1, "header length %llu", (unsigned long long)n);
  size_t k = (size_t)n;
  while (k > 0 && p[8 + k - 1] == ' ') k--;
  CHECK(k > 0 && p[8 + k - 1] == '}' && n - k < 8, "padding");
  CHECK(memcmp(p + 8, "{\"__metadata__\":{\"\":\"\",\"note\":", 30) == 0, "metadata first");

  hmx_st_file *f = NULL;
  hmx_status s = hmx_st_parse(b1, l1, &f);
  CHECK(s == HMX_OK, "re-read: %s (%s)", hmx_status_string(s), hmx_last_error());
  if (s == HMX_OK) {
    check_round_trip(f);
    /* writing what was read gives the same bytes again */
    hmx_st_writer *w3 = hmx_st_writer_new();
    for (int i = 0; i < hmx_st_count(f); i++) {
      hmx_tensor v = hmx_st_view(hmx_st_at(f, i));
      CHECK(hmx_st_writer_add(w3, hmx_st_at(f, i)->name, &v) == HMX_OK, "re-add %d", i);
    }
    for (int i = hmx_st_meta_count(f) - 1; i >= 0; i--) {
      const char *v, *key = hmx_st_meta_at(f, i, &v);
      CHECK(hmx_st_writer_meta(w3, key, v) == HMX_OK, "re-meta %d", i);
    }
    void *b4 = NULL;
    size_t l4 = 0;
    CHECK(hmx_st_writer_bytes(w3, &b4, &l4) == HMX_OK, "bytes 4");
    CHECK(l4 == l1 && memcmp(b4, b1, l1) == 0, "rewrite differs");
    free(b4);
    hmx_st_writer_free(w3);
    hmx_st_free(f);
  }

  /* save / load through the file system */
  const char *path = "test_safetensors.tmp.safetensors";
  CHECK(hmx_st_writer_save(w1, path) == HMX_OK, "save: %s", hmx_last_error());
  f = NULL;
  s = hmx_st_load(path, &f);
  CHECK(s == HMX_OK, "load: %s (%s)", hmx_status_string(s), hmx_last_error());
  if (s == HMX_OK) {
    check_round_trip(f);
    hmx_st_free(f);
  }
  FILE *fp = fopen(path, "rb");
  if (fp) {
    unsigned char *disk = malloc(l1 + 1);
    size_t got = fread(disk, 1, l1 + 1, fp);
    fclose(fp);
    CHECK(got == l1 && memcmp(disk, b1, l1) == 0, "file bytes differ from writer_bytes");
    free(disk);
  }
  remove(path);
  free(b1);
  free(b2);
  free(b3);
  hmx_st_writer_free(w1);
  hmx_st_writer_free(w2);
}

/* The exact bytes of a small file. */
static void test_golden_bytes(void) {
  hmx_st_writer *w = hmx_st_writer_new();
  float x[2] = {1.0f, 2.0f};
  uint16_t y = 0x3c00;
  hmx_tensor tx = hmx_tensor_1d(x, HMX_F32, 2);
  hmx_tensor ty = hmx_tensor_make(&y, HMX_F16, 0, NULL);
  CHECK(hmx_st_writer_add(w, "x", &tx) == HMX_OK, "add x");
  CHECK(hmx_st_writer_add(w, "y", &ty) == HMX_OK, "add y");
  CHECK(hmx_st_writer_meta(w, "b", "2") == HMX_OK, "meta b");
  CHECK(hmx_st_writer_meta(w, "a", "1") == HMX_OK, "meta a");
  void *buf = NULL;
  size_t len = 0;
  CHECK(hmx_st_writer_bytes(w, &buf, &len) == HMX_OK, "bytes");
  const char *hdr = "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\"},"
                    "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"y\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[8,10]}}";
  size_t hl = strlen(hdr), padded = (hl + 7) / 8 * 8;
  CHECK(len == 8 + padded + 10, "golden length %zu", len);
  if (len == 8 + padded + 10) {
    const unsigned char *p = buf;
    CHECK(p[0] == (unsigned char)padded && p[1] == 0 && p[7] == 0, "golden prefix");
    CHECK(memcmp(p + 8, hdr, hl) == 0, "golden header: %.*s", (int)padded, (const char *)p + 8);
    for (size_t i = hl; i < padded; i++) CHECK(p[8 + i] == ' ', "golden pad %zu", i);
    CHECK(memcmp(p + 8 + padded, x, 8) == 0 && memcmp(p + 16 + padded, &y, 2) == 0, "golden data");
  }
  free(buf);
  hmx_st_writer_free(w);

  /* an empty writer gives "{}" padded */
  w = hmx_st_writer_new();
  CHECK(hmx_st_writer_bytes(w, &buf, &len) == HMX_OK, "empty bytes");
  CHECK(len == 16 && memcmp((char *)buf + 8, "{}      ", 8) == 0, "empty golden");
  hmx_st_file *f = NULL;
  CHECK(hmx_st_parse(buf, len, &f) == HMX_OK && hmx_st_count(f) == 0, "empty parse");
  hmx_st_free(f);
  free(buf);
  hmx_st_writer_free(w);
}

static void test_writer_errors(void) {
  hmx_st_writer *w = hmx_st_writer_new();
  float x[4] = {0};
  hmx_tensor t = hmx_tensor_1d(x, HMX_F32, 4);
#define EXPECT_ERR(call, st)                                                              \
  do {                                                                                    \
    hmx_status s_ = (call);                                                               \
    CHECK(s_ == (st), "%s: got %s", #call, hmx_status_string(s_));                        \
    CHECK(hmx_last_error()[0] != '\0', "%s: empty message", #call);                       \
  } while (0)
  EXPECT_ERR(hmx_st_writer_add(w, "", &t), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_add(w, "__metadata__", &t), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_add(w, NULL, &t), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_add(w, "x", NULL), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_add(NULL, "x", &t), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_add(w, "bad\xff", &t), HMX_ERR_INVALID_ARGUMENT);
  CHECK(hmx_st_writer_add(w, "x", &t) == HMX_OK, "add x");
  EXPECT_ERR(hmx_st_writer_add(w, "x", &t), HMX_ERR_INVALID_ARGUMENT);
  hmx_tensor bad = t;
  bad.dtype = HMX_DTYPE_COUNT;
  EXPECT_ERR(hmx_st_writer_add(w, "d", &bad), HMX_ERR_INVALID_ARGUMENT);
  bad = t;
  bad.ndim = 5;
  EXPECT_ERR(hmx_st_writer_add(w, "r", &bad), HMX_ERR_SHAPE);
  bad = t;
  bad.ndim = -1;
  EXPECT_ERR(hmx_st_writer_add(w, "r", &bad), HMX_ERR_SHAPE);
  bad = t;
  bad.shape[0] = -1;
  EXPECT_ERR(hmx_st_writer_add(w, "s", &bad), HMX_ERR_SHAPE);
  bad = hmx_tensor_3d(x, HMX_F32, INT64_C(1) << 40, INT64_C(1) << 40, 1 << 20);
  EXPECT_ERR(hmx_st_writer_add(w, "big", &bad), HMX_ERR_SHAPE);
  bad = t;
  bad.data = NULL;
  EXPECT_ERR(hmx_st_writer_add(w, "n", &bad), HMX_ERR_INVALID_ARGUMENT);
  bad = hmx_tensor_2d(x, HMX_F32, 2, 2);
  bad.stride[0] = -2;
  bad.stride[1] = 1;
  EXPECT_ERR(hmx_st_writer_add(w, "neg", &bad), HMX_ERR_INVALID_ARGUMENT);
  CHECK(hmx_st_writer_meta(w, "k", "v") == HMX_OK, "meta k");
  EXPECT_ERR(hmx_st_writer_meta(w, "k", "w"), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_meta(w, NULL, "w"), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_meta(w, "k2", NULL), HMX_ERR_INVALID_ARGUMENT);
  EXPECT_ERR(hmx_st_writer_meta(w, "k3", "\xc3"), HMX_ERR_INVALID_ARGUMENT);
  void *buf = (void *)&buf;
  size_t len = 1;
  EXPECT_ERR(hmx_st_writer_bytes(NULL, &buf, &len), HMX_ERR_INVALID_ARGUMENT);
  CHECK(buf == NULL && len == 0, "outputs cleared");
  EXPECT_ERR(hmx_st_writer_save(w, "/nonexistent-dir-hmx/x.safetensors"), HMX_ERR_IO);
  /* the failed calls left the writer usable and unchanged */
  CHECK(hmx_st_writer_bytes(w, &buf, &len) == HMX_OK, "bytes after errors");
  hmx_st_file *f = NULL;
  CHECK(hmx_st_parse(buf, len, &f) == HMX_OK && hmx_st_count(f) == 1 &&
            hmx_st_meta_count(f) == 1,
        "content after errors");
  hmx_st_free(f);
  free(buf);
  hmx_st_writer_free(w);
  hmx_st_writer_free(NULL);

  /* reader I/O errors */
  f = NULL;
  EXPECT_ERR(hmx_st_load("/nonexistent-dir-hmx/x.safetensors", &f), HMX_ERR_IO);
  CHECK(f == NULL, "load failure leaves NULL");
  EXPECT_ERR(hmx_st_load(".", &f), HMX_ERR_IO);
  EXPECT_ERR(hmx_st_load(NULL, &f), HMX_ERR_INVALID_ARGUMENT);
#undef EXPECT_ERR
}

int main(void) {
  verbose = getenv("HMX_TEST_VERBOSE") != NULL;
  test_malformed_table();
  test_malformed_framing();
  test_handcrafted_valid();
  test_round_trip_and_determinism();
  test_golden_bytes();
  test_writer_errors();
  return check_finish("test_safetensors");
}
