/* A structure-aware libFuzzer mutation for safetensors op files
 * (fuzz_op_file.c): change one size everywhere it appears. The shapes of an
 * op's tensors share sizes (gemm's K is a column count of A and a row count
 * of B), so a byte-level mutation of one dimension almost always makes the
 * shapes disagree and the op refuses the file: few such inputs reach the
 * comparison of the backends. Here a size s of the file is picked, and every
 * tensor dimension equal to s, and every integer "param.*" equal to s, becomes
 * a new size s' (odd sizes, neighbours, powers of two and the m * 2^k sizes of
 * the fwht among them). Tensor data are refilled by repeating the old bytes,
 * so the values keep their kind. The file is written back with the project's
 * safetensors writer.
 * Only for libFuzzer builds (HMX_LIBFUZZER, set by hmx_add_fuzz_target). */
#ifndef HMX_FUZZ_RESIZE_H
#define HMX_FUZZ_RESIZE_H

#ifdef HMX_LIBFUZZER
#include "safetensors.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The new size for s: a neighbour, a half or a double, or one of these. */
static const int64_t FUZZ_SIZES[] = {1,  2,  3,  4,  5,  7,  8,  9,   12,  15,  16,  17,
                                     20, 24, 28, 31, 32, 33, 40, 48,  63,  64,  65,  80,
                                     96, 97, 100, 127, 128, 129, 160, 255, 256, 257, 384, 512};

static int64_t fuzz_new_size(int64_t s, unsigned pick) {
  switch (pick % 6) {
    case 0: return s + 1;
    case 1: return s > 1 ? s - 1 : 2;
    case 2: return s > 1 ? s / 2 : 3;
    case 3: return s * 2;
    default: return FUZZ_SIZES[(pick / 6) % (sizeof FUZZ_SIZES / sizeof FUZZ_SIZES[0])];
  }
}

/* Writes over data the safetensors file f (the caller's parse of data, which
 * keeps its own copy of the bytes) with one size changed as above; returns
 * the new size, or 0 when it does not apply (no size, or the result would
 * exceed max_size): the caller then mutates otherwise. */
static size_t fuzz_resize(const hmx_st_file *f, uint8_t *data, size_t max_size, unsigned seed) {
  /* the file's distinct sizes, in order of appearance */
  int64_t sizes[64];
  int n_sizes = 0;
  for (int i = 0; i < hmx_st_count(f); i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    for (int d = 0; d < t->ndim; d++) {
      int seen = 0;
      for (int k = 0; k < n_sizes && !seen; k++) seen = sizes[k] == t->shape[d];
      if (!seen && t->shape[d] > 0 && n_sizes < 64) sizes[n_sizes++] = t->shape[d];
    }
  }
  size_t out_len = 0;
  void *out = NULL;
  hmx_st_writer *w = n_sizes ? hmx_st_writer_new() : NULL;
  if (w) {
    const int64_t s = sizes[seed % (unsigned)n_sizes];
    int64_t s2 = fuzz_new_size(s, seed / 64);
    if (s2 == s) s2 = s + 1;
    char from[32], to[32];
    snprintf(from, sizeof from, "%" PRId64, s);
    snprintf(to, sizeof to, "%" PRId64, s2);
    hmx_status st = HMX_OK;
    for (int i = 0; i < hmx_st_meta_count(f) && !st; i++) {
      const char *value, *key = hmx_st_meta_at(f, i, &value);
      const int is_param = !strncmp(key, "param.", 6) && !strcmp(value, from);
      st = hmx_st_writer_meta(w, key, is_param ? to : value);
    }
    size_t total = 0;
    for (int i = 0; i < hmx_st_count(f) && !st; i++) {
      const hmx_st_tensor *t = hmx_st_at(f, i);
      int64_t shape[HMX_MAX_DIMS];
      size_t n = 1, too_large = 0;
      for (int d = 0; d < t->ndim; d++) {
        shape[d] = t->shape[d] == s ? s2 : t->shape[d];
        if (shape[d] && n > max_size / (size_t)shape[d]) too_large = 1;
        else n *= (size_t)shape[d];
      }
      const size_t bytes = n * hmx_dtype_size(t->dtype);
      total += bytes;
      if (too_large || total > max_size) {
        st = HMX_ERR_NO_MEMORY; /* too large for libFuzzer's limit */
        break;
      }
      uint8_t *buf = malloc(bytes ? bytes : 1);
      if (!buf) {
        st = HMX_ERR_NO_MEMORY;
        break;
      }
      const uint8_t *old = t->data;
      for (size_t b = 0; b < bytes; b++) buf[b] = t->nbytes ? old[b % t->nbytes] : 0;
      hmx_tensor view = hmx_tensor_make(buf, t->dtype, t->ndim, shape);
      st = hmx_st_writer_add(w, t->name, &view);
      free(buf);
    }
    if (!st) st = hmx_st_writer_bytes(w, &out, &out_len);
    if (st || out_len > max_size) out_len = 0;
    hmx_st_writer_free(w);
  }
  if (out_len) memcpy(data, out, out_len);
  free(out);
  return out_len;
}
#endif
#endif
