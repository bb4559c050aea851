/* libFuzzer target for the strict safetensors reader (src/safetensors.h).
 *
 * Every input goes through hmx_st_parse. A rejection must leave *out NULL,
 * return a file-format status and set a message. An accepted file is walked
 * completely (every tensor, its view, every data byte, every metadata entry,
 * the lookups), then written back with the writer and read again: the second
 * reading must give the same tensors and metadata, and writing that again
 * must give the same bytes (the writer is deterministic and idempotent).
 * Any violated property aborts, which libFuzzer reports as a crash.
 *
 * Built two ways (tests/t_fuzz.cmake): as a libFuzzer binary with HMX_FUZZ=ON
 * under clang, and always inside tests/fuzz/fuzz_replay.c, which runs the
 * seed corpus through this entry point as a normal unit test. */
#include "safetensors.h"
#include "fuzz_assert.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

/* For fuzz_replay.c: does the reader accept this input (ok_* / bad_* seeds)? */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size) {
  hmx_st_file *f = NULL;
  hmx_status s = hmx_st_parse(data, size, &f);
  hmx_st_free(f);
  return s;
}

/* Keeps the byte reads of the walk from being optimized away. */
static volatile unsigned fuzz_sink;

static void walk(const hmx_st_file *f) {
  int n = hmx_st_count(f);
  FUZZ_ASSERT(n >= 0);
  FUZZ_ASSERT(hmx_st_at(f, -1) == NULL && hmx_st_at(f, n) == NULL);
  unsigned acc = 0;
  for (int i = 0; i < n; i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    FUZZ_ASSERT(t != NULL && t->name != NULL);
    FUZZ_ASSERT(hmx_st_find(f, t->name) == t);
    FUZZ_ASSERT((int)t->dtype >= 0 && t->dtype < HMX_DTYPE_COUNT);
    FUZZ_ASSERT(t->ndim >= 0 && t->ndim <= HMX_MAX_DIMS);
    hmx_tensor v = hmx_st_view(t);
    int64_t numel = hmx_tensor_numel(&v);
    FUZZ_ASSERT(numel >= 0);
    FUZZ_ASSERT((uint64_t)numel * hmx_dtype_size(t->dtype) == t->nbytes);
    FUZZ_ASSERT(v.data == t->data && v.ndim == t->ndim && v.dtype == t->dtype);
    const unsigned char *p = t->data;
    for (uint64_t k = 0; k < t->nbytes; k++) acc += p[k];
    acc += (unsigned)strlen(t->name);
  }
  int m = hmx_st_meta_count(f);
  FUZZ_ASSERT(m >= 0);
  for (int i = 0; i < m; i++) {
    const char *value = NULL;
    const char *key = hmx_st_meta_at(f, i, &value);
    FUZZ_ASSERT(key != NULL && value != NULL);
    const char *found = hmx_st_meta(f, key);
    FUZZ_ASSERT(found != NULL && strcmp(found, value) == 0);
    acc += (unsigned)strlen(key) + (unsigned)strlen(value);
  }
  const char *dummy = NULL;
  FUZZ_ASSERT(hmx_st_meta_at(f, m, &dummy) == NULL);
  fuzz_sink = acc;
}

/* Serializes f with the writer. Returns 0 if f holds something the writer
 * refuses by design (an empty tensor name). */
static int rewrite(const hmx_st_file *f, void **buf, size_t *len) {
  hmx_st_writer *w = hmx_st_writer_new();
  FUZZ_ASSERT(w != NULL);
  int ok = 1;
  for (int i = 0; i < hmx_st_count(f) && ok; i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    hmx_tensor v = hmx_st_view(t);
    hmx_status s = hmx_st_writer_add(w, t->name, &v);
    if (t->name[0] == '\0') {
      FUZZ_ASSERT(s == HMX_ERR_INVALID_ARGUMENT);
      ok = 0;
    } else {
      FUZZ_ASSERT(s == HMX_OK);
    }
  }
  for (int i = 0; i < hmx_st_meta_count(f) && ok; i++) {
    const char *value, *key = hmx_st_meta_at(f, i, &value);
    FUZZ_ASSERT(hmx_st_writer_meta(w, key, value) == HMX_OK);
  }
  if (ok) FUZZ_ASSERT(hmx_st_writer_bytes(w, buf, len) == HMX_OK);
  hmx_st_writer_free(w);
  return ok;
}

static void check_same(const hmx_st_file *a, const hmx_st_file *b) {
  FUZZ_ASSERT(hmx_st_count(a) == hmx_st_count(b));
  for (int i = 0; i < hmx_st_count(a); i++) {
    const hmx_st_tensor *x = hmx_st_at(a, i), *y = hmx_st_at(b, i);
    FUZZ_ASSERT(strcmp(x->name, y->name) == 0);
    FUZZ_ASSERT(x->dtype == y->dtype && x->ndim == y->ndim && x->nbytes == y->nbytes);
    for (int d = 0; d < x->ndim; d++) FUZZ_ASSERT(x->shape[d] == y->shape[d]);
    FUZZ_ASSERT(x->nbytes == 0 || memcmp(x->data, y->data, (size_t)x->nbytes) == 0);
  }
  FUZZ_ASSERT(hmx_st_meta_count(a) == hmx_st_meta_count(b));
  for (int i = 0; i < hmx_st_meta_count(a); i++) {
    const char *value, *key = hmx_st_meta_at(a, i, &value);
    const char *other = hmx_st_meta(b, key);
    FUZZ_ASSERT(other != NULL && strcmp(other, value) == 0);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hmx_st_file *f = (hmx_st_file *)&f; /* must be overwritten */
  hmx_status s = hmx_st_parse(data, size, &f);
  if (s != HMX_OK) {
    FUZZ_ASSERT(f == NULL);
    FUZZ_ASSERT(hmx_last_error()[0] != '\0');
    FUZZ_ASSERT(s == HMX_ERR_FORMAT || s == HMX_ERR_DTYPE || s == HMX_ERR_UNSUPPORTED ||
                s == HMX_ERR_NO_MEMORY);
    return 0;
  }
  FUZZ_ASSERT(f != NULL);
  walk(f);

  void *b1 = NULL;
  size_t l1 = 0;
  if (rewrite(f, &b1, &l1)) {
    hmx_st_file *g = NULL;
    FUZZ_ASSERT(hmx_st_parse(b1, l1, &g) == HMX_OK);
    walk(g);
    check_same(f, g);
    void *b2 = NULL;
    size_t l2 = 0;
    FUZZ_ASSERT(rewrite(g, &b2, &l2));
    FUZZ_ASSERT(l1 == l2 && memcmp(b1, b2, l1) == 0);
    free(b2);
    hmx_st_free(g);
    free(b1);
  }
  hmx_st_free(f);
  return 0;
}
