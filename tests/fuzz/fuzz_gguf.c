/* libFuzzer target for the strict GGUF reader (src/gguf.h).
 *
 * Every input goes through hmx_gguf_parse. A rejection must leave *out NULL,
 * return a file-format status (FORMAT, UNSUPPORTED or NO_MEMORY) and set a
 * message. An accepted file is walked completely: every metadata entry
 * through every typed getter (each answers OK or FORMAT, never anything
 * else), every array element, every string byte, every tensor (lookup by
 * name, its bytes inside the file, nbytes = numel / block x block bytes) and
 * the dequantization of every tensor of a supported type (finite or not, it
 * must not crash). Any violated property aborts, which libFuzzer reports.
 *
 * Built like fuzz_safetensors.c (tests/t_gguf.cmake): a libFuzzer binary with
 * HMX_FUZZ=ON under clang, and always inside tests/fuzz/fuzz_replay.c over
 * the seed corpus corpus_gguf/. */
#include "gguf.h"
#include "fuzz_assert.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

static volatile unsigned fuzz_sink;

/* For fuzz_replay.c: does the reader accept this input (ok_* / bad_* seeds)? */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size) {
  hmx_gguf *f = NULL;
  hmx_status s = hmx_gguf_parse(data, size, "seed", &f);
  hmx_gguf_free(f);
  return s;
}

static int ok_or_format(hmx_status s) { return s == HMX_OK || s == HMX_ERR_FORMAT; }

static void walk(const hmx_gguf *f, size_t size) {
  unsigned acc = 0;
  FUZZ_ASSERT(hmx_gguf_version(f) == 3);
  const uint32_t a = hmx_gguf_alignment(f);
  FUZZ_ASSERT(a && !(a & (a - 1)));
  const int64_t nkv = hmx_gguf_kv_count(f), nt = hmx_gguf_tensor_count(f);
  FUZZ_ASSERT(nkv >= 0 && nt >= 0 && (uint64_t)nkv <= size && (uint64_t)nt <= size);
  FUZZ_ASSERT(!hmx_gguf_kv_at(f, -1) && !hmx_gguf_kv_at(f, nkv));
  FUZZ_ASSERT(!hmx_gguf_tensor_at(f, -1) && !hmx_gguf_tensor_at(f, nt));
  for (int64_t i = 0; i < nkv; i++) {
    const hmx_gguf_kv *kv = hmx_gguf_kv_at(f, i);
    FUZZ_ASSERT(kv && kv->key && kv->key[0]);
    FUZZ_ASSERT(hmx_gguf_find_kv(f, kv->key) == &kv->value);
    const hmx_gguf_value *v = &kv->value;
    int64_t x;
    float fl;
    int b;
    hmx_gguf_str s;
    FUZZ_ASSERT(ok_or_format(hmx_gguf_get_int(f, kv->key, &x)));
    FUZZ_ASSERT(ok_or_format(hmx_gguf_get_f32(f, kv->key, &fl)));
    FUZZ_ASSERT(ok_or_format(hmx_gguf_get_bool(f, kv->key, &b)));
    FUZZ_ASSERT(ok_or_format(hmx_gguf_get_str(f, kv->key, &s)));
    FUZZ_ASSERT(v->type != HMX_GGUF_ARRAY ? v->n == 1 && v->elem == v->type
                                          : v->elem != HMX_GGUF_ARRAY);
    if (v->elem == HMX_GGUF_STRING) {
      FUZZ_ASSERT(v->strs != NULL);
      for (uint64_t k = 0; k < v->n; k++) {
        const unsigned char *p = (const unsigned char *)v->strs[k].ptr;
        FUZZ_ASSERT(v->strs[k].len <= size);
        for (uint64_t j = 0; j < v->strs[k].len; j++) acc += p[j];
      }
    } else {
      for (uint64_t k = 0; k < v->n; k++) acc += (unsigned)hmx_gguf_array_int(v, k);
    }
  }
  FUZZ_ASSERT(hmx_gguf_find_kv(f, "") == NULL);
  for (int64_t i = 0; i < nt; i++) {
    const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, i);
    FUZZ_ASSERT(t && t->name && t->name[0] && strlen(t->name) <= HMX_GGUF_MAX_NAME);
    FUZZ_ASSERT(hmx_gguf_find_tensor(f, t->name) == t);
    FUZZ_ASSERT(t->ndim >= 1 && t->ndim <= HMX_GGUF_MAX_DIMS && t->numel >= 0);
    int64_t block = 0, bytes = 0;
    FUZZ_ASSERT(hmx_gguf_type_block(t->type, &block, &bytes));
    FUZZ_ASSERT(t->ne[0] % block == 0);
    FUZZ_ASSERT(t->nbytes == (uint64_t)(t->numel / block * bytes));
    FUZZ_ASSERT(t->offset % a == 0);
    FUZZ_ASSERT(t->nbytes <= size);
    /* the data lie inside the parsed copy: read every byte (ASan checks) */
    const unsigned char *p = t->data;
    for (uint64_t k = 0; k < t->nbytes; k++) acc += p[k];
    if (hmx_gguf_can_dequantize(t->type)) {
      float *y = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *y);
      FUZZ_ASSERT(y != NULL);
      FUZZ_ASSERT(hmx_gguf_tensor_to_f32(t, y) == HMX_OK);
      const int blocks = t->type != HMX_GGML_F32 && t->type != HMX_GGML_F16 &&
                         t->type != HMX_GGML_BF16;
      for (int64_t k = 0; k < t->numel; k++) {
        uint32_t u;
        memcpy(&u, &y[k], 4);
        acc += u;
        /* one element at a time (the in-place kernels' scalar form) gives
         * the same bits, or NaN where the rule gives NaN */
        if (blocks) {
          const float e = hmx_gguf_quant_at(t->type, t->data, k);
          FUZZ_ASSERT(memcmp(&e, &y[k], 4) == 0 || (e != e && y[k] != y[k]));
        }
      }
      free(y);
    } else {
      FUZZ_ASSERT(hmx_gguf_tensor_to_f32(t, NULL) != HMX_OK);
    }
  }
  fuzz_sink = acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hmx_gguf *f = (hmx_gguf *)(uintptr_t)1;
  hmx_status s = hmx_gguf_parse(data, size, "fuzz", &f);
  if (s != HMX_OK) {
    FUZZ_ASSERT(f == NULL);
    FUZZ_ASSERT(s == HMX_ERR_FORMAT || s == HMX_ERR_UNSUPPORTED || s == HMX_ERR_NO_MEMORY);
    FUZZ_ASSERT(hmx_last_error()[0] != '\0');
    return 0;
  }
  FUZZ_ASSERT(f != NULL);
  walk(f, size);
  hmx_gguf_free(f);
  return 0;
}
