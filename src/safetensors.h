/* Strict safetensors reader and writer (https://github.com/huggingface/safetensors
 * format: u64 little-endian header length N, N bytes of JSON header, data).
 *
 * The reader rejects, with a clear message: files shorter than 8 bytes, header
 * lengths beyond the file or over HMX_ST_MAX_HEADER, JSON that is not an
 * object, unknown dtypes, ranks over HMX_MAX_DIMS, negative or overflowing
 * shapes, data_offsets that are not [begin, end] with begin <= end inside the
 * data section, byte ranges that disagree with dtype x shape, overlapping
 * tensors, duplicate names, and a __metadata__ that is not a string->string map.
 */
#ifndef HMX_SAFETENSORS_H
#define HMX_SAFETENSORS_H

#include "hadamix.h"

#define HMX_ST_MAX_HEADER (100u * 1024u * 1024u) /* same limit as the Rust crate */

typedef struct hmx_st_tensor {
  const char *name;
  hmx_dtype dtype;
  int ndim;                         /* 0..HMX_MAX_DIMS */
  int64_t shape[HMX_MAX_DIMS];
  uint64_t nbytes;
  const void *data;                 /* points into the file buffer, may be unaligned */
} hmx_st_tensor;

typedef struct hmx_st_file hmx_st_file;

/* Read and validate a whole file. */
hmx_status hmx_st_load(const char *path, hmx_st_file **out);
/* Validate a buffer; the file keeps its own copy of the bytes. */
hmx_status hmx_st_parse(const void *buf, size_t len, hmx_st_file **out);
/* Like hmx_st_load, but the data are a read-only memory map of the file
 * where the platform has mmap (the tensors' data pointers point into it). */
hmx_status hmx_st_map(const char *path, hmx_st_file **out);
void hmx_st_free(hmx_st_file *f);

int hmx_st_count(const hmx_st_file *f);
const hmx_st_tensor *hmx_st_at(const hmx_st_file *f, int i);  /* in header order */
const hmx_st_tensor *hmx_st_find(const hmx_st_file *f, const char *name);
int hmx_st_meta_count(const hmx_st_file *f);
/* i-th metadata entry; returns its key and sets *value. */
const char *hmx_st_meta_at(const hmx_st_file *f, int i, const char **value);
const char *hmx_st_meta(const hmx_st_file *f, const char *key); /* NULL if absent */

/* A view of a stored tensor as an hmx_tensor (contiguous). The data may be
 * unaligned and is read-only: callers that need alignment or write copy it. */
hmx_tensor hmx_st_view(const hmx_st_tensor *t);

/* Writer: tensors are written in the order added, metadata keys sorted, the
 * header padded with spaces to a multiple of 8 bytes. Output is a pure
 * function of the inputs (byte-for-byte reproducible). */
typedef struct hmx_st_writer hmx_st_writer;
hmx_st_writer *hmx_st_writer_new(void);
/* Copies the tensor's data (strided input allowed); the name is copied. */
hmx_status hmx_st_writer_add(hmx_st_writer *w, const char *name, const hmx_tensor *t);
hmx_status hmx_st_writer_meta(hmx_st_writer *w, const char *key, const char *value);
hmx_status hmx_st_writer_save(const hmx_st_writer *w, const char *path);
/* Serialize to a malloc'ed buffer (for tests); caller frees *buf. */
hmx_status hmx_st_writer_bytes(const hmx_st_writer *w, void **buf, size_t *len);
void hmx_st_writer_free(hmx_st_writer *w);

#endif
