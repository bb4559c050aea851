/* Strict GGUF (version 3) reader and dequantization (docs/GGUF.md for the
 * format as read here, docs/NUMERICS.md "GGUF dequantization" for the rule).
 *
 * A GGUF file is: magic "GGUF", u32 version, u64 tensor count, u64 metadata
 * count, the metadata key/value pairs, the tensor infos, padding to
 * general.alignment (default 32), then the tensor data; all little-endian.
 *
 * The reader checks every length, count, size and offset against the bytes
 * that are actually there (with overflow-checked arithmetic) before it
 * allocates or reads, and rejects with HMX_ERR_FORMAT (HMX_ERR_UNSUPPORTED for
 * a version or tensor type it does not know) and a message naming the source,
 * the byte offset and the entry: truncation anywhere, a bad magic, version
 * other than 3, unknown value types, nested arrays, booleans other than 0/1,
 * keys or names that are empty, too long or hold a NUL byte, duplicate keys
 * or tensor names, a general.alignment that is not a u32 power of two, ranks
 * outside 1..4, element counts that overflow or are not whole blocks,
 * offsets that are not aligned, data past the end of the file, and tensors
 * that overlap. An accepted file can be walked without further checks. */
#ifndef HMX_GGUF_H
#define HMX_GGUF_H

#include "hadamix.h"

#define HMX_GGUF_MAX_DIMS 4
#define HMX_GGUF_MAX_NAME 64          /* bytes of a tensor name (the format's limit) */
#define HMX_GGUF_MAX_KEY 65535        /* bytes of a metadata key */
#define HMX_GGUF_DEFAULT_ALIGNMENT 32

/* Metadata value types (the numbers in the file). */
typedef enum hmx_gguf_vtype {
  HMX_GGUF_U8 = 0, HMX_GGUF_I8 = 1, HMX_GGUF_U16 = 2, HMX_GGUF_I16 = 3,
  HMX_GGUF_U32 = 4, HMX_GGUF_I32 = 5, HMX_GGUF_F32 = 6, HMX_GGUF_BOOL = 7,
  HMX_GGUF_STRING = 8, HMX_GGUF_ARRAY = 9, HMX_GGUF_U64 = 10, HMX_GGUF_I64 = 11,
  HMX_GGUF_F64 = 12
} hmx_gguf_vtype;

/* Tensor (ggml) types that hadamix dequantizes; the reader knows the block
 * sizes of the other ggml types too, so that files holding them parse. */
enum {
  HMX_GGML_F32 = 0, HMX_GGML_F16 = 1, HMX_GGML_Q4_0 = 2, HMX_GGML_Q4_1 = 3,
  HMX_GGML_Q5_0 = 6, HMX_GGML_Q5_1 = 7, HMX_GGML_Q8_0 = 8, HMX_GGML_Q2_K = 10, HMX_GGML_Q3_K = 11,
  HMX_GGML_Q4_K = 12, HMX_GGML_Q5_K = 13, HMX_GGML_Q6_K = 14, HMX_GGML_IQ4_NL = 20,
  HMX_GGML_IQ4_XS = 23, HMX_GGML_BF16 = 30
};

/* A string in the file: bytes (not NUL-terminated, may hold any byte). */
typedef struct hmx_gguf_str {
  const char *ptr;
  uint64_t len;
} hmx_gguf_str;

typedef struct hmx_gguf_value {
  hmx_gguf_vtype type;       /* a scalar type, or HMX_GGUF_ARRAY */
  hmx_gguf_vtype elem;       /* arrays: the element type (never ARRAY); scalars: = type */
  uint64_t n;                /* arrays: element count; scalars: 1 */
  const unsigned char *raw;  /* the first value byte (little-endian, may be unaligned) */
  const hmx_gguf_str *strs;  /* string values: n strings; NULL otherwise */
} hmx_gguf_value;

typedef struct hmx_gguf_kv {
  const char *key;           /* NUL-terminated copy */
  hmx_gguf_value value;
} hmx_gguf_kv;

typedef struct hmx_gguf_tensor {
  const char *name;          /* NUL-terminated copy */
  uint32_t type;             /* ggml type */
  int ndim;                  /* 1..4 */
  int64_t ne[HMX_GGUF_MAX_DIMS]; /* ne[0] is the innermost (contiguous) dimension; unused = 1 */
  int64_t numel;
  uint64_t offset;           /* from the start of the data section */
  uint64_t nbytes;
  const void *data;          /* inside the file's bytes; may be unaligned */
} hmx_gguf_tensor;

typedef struct hmx_gguf hmx_gguf;

/* Validate a buffer; the result keeps its own copy of the bytes. `source`
 * names the input in messages (may be NULL). */
hmx_status hmx_gguf_parse(const void *buf, size_t len, const char *source, hmx_gguf **out);
/* Read (or memory-map, where the platform has mmap) and validate a file. */
hmx_status hmx_gguf_open(const char *path, hmx_gguf **out);
void hmx_gguf_free(hmx_gguf *f);

uint32_t hmx_gguf_version(const hmx_gguf *f);
uint32_t hmx_gguf_alignment(const hmx_gguf *f);
int64_t hmx_gguf_kv_count(const hmx_gguf *f);
const hmx_gguf_kv *hmx_gguf_kv_at(const hmx_gguf *f, int64_t i);     /* file order */
const hmx_gguf_value *hmx_gguf_find_kv(const hmx_gguf *f, const char *key); /* or NULL */
int64_t hmx_gguf_tensor_count(const hmx_gguf *f);
const hmx_gguf_tensor *hmx_gguf_tensor_at(const hmx_gguf *f, int64_t i); /* file order */
const hmx_gguf_tensor *hmx_gguf_find_tensor(const hmx_gguf *f, const char *name);

/* Typed metadata lookups. Each returns HMX_ERR_NOT_FOUND (no message) when
 * the key is absent and HMX_ERR_FORMAT (with a message) when the value is of
 * another type or does not fit: get_int takes any scalar integer type whose
 * value fits in int64; get_f32 takes f32, or f64 rounded to nearest f32;
 * get_str gives the bytes of a string; get_bool a bool (0 or 1). */
hmx_status hmx_gguf_get_int(const hmx_gguf *f, const char *key, int64_t *out);
hmx_status hmx_gguf_get_f32(const hmx_gguf *f, const char *key, float *out);
hmx_status hmx_gguf_get_str(const hmx_gguf *f, const char *key, hmx_gguf_str *out);
hmx_status hmx_gguf_get_bool(const hmx_gguf *f, const char *key, int *out);
/* Element i of an integer array (any integer element type) as int64. */
int64_t hmx_gguf_array_int(const hmx_gguf_value *v, uint64_t i);

const char *hmx_gguf_vtype_name(uint32_t t);
/* Bytes of one value of a fixed-size metadata type; 0 for string, array, unknown. */
size_t hmx_gguf_vtype_size(uint32_t t);
/* ggml type name ("Q4_1"), or NULL when unknown. */
const char *hmx_gguf_type_name(uint32_t type);
/* Block size (elements) and bytes per block of a ggml type; 0 when unknown. */
int hmx_gguf_type_block(uint32_t type, int64_t *block, int64_t *bytes);
/* 1 when hmx_gguf_dequantize handles the type: */
#define HMX_GGUF_DEQUANT_TYPES \
  "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS"
int hmx_gguf_can_dequantize(uint32_t type);

/* The unsigned quant of element e of one Q5_0 / Q5_1 / IQ4_NL (32
 * elements) or Q2_K / Q3_K / Q4_K / Q5_K / Q6_K / IQ4_XS (256) block at b,
 * before the rule's offset (or, IQ4, its table) and scales. */
int hmx_gguf_block_u(uint32_t type, const unsigned char *b, int e);
/* The 6-bit scale and min of sub-block s (< 8) of a Q4_K / Q5_K block's
 * scales[12] (docs/NUMERICS.md "GGUF dequantization"). */
void hmx_gguf_k_scale_min(const unsigned char *scales, int s, int *sc, int *m);
/* The 6-bit scale (0..63, before the rule's - 32) of sub-block s (< 16) of
 * a Q3_K block's scales[12]. */
int hmx_gguf_q3_k_scale(const unsigned char *scales, int s);
/* IQ4_NL's and IQ4_XS's 16 values (llama.cpp's kvalues_iq4nl): quant u
 * stands for hmx_gguf_iq4_values[u]; hmx_gguf_iq4_f32 holds the same
 * integers as floats (exact), the table the vector kernels permute. */
#define HMX_GGUF_IQ4_VALUES -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
extern const int8_t hmx_gguf_iq4_values[16];
extern const float hmx_gguf_iq4_f32[16];
/* The 6-bit scale (0..63, before the rule's - 32) of sub-block s (< 8) of
 * an IQ4_XS block at b. */
int hmx_gguf_iq4_xs_scale(const unsigned char *b, int s);

/* Dequantize n elements (a whole number of blocks) of `type` stored at src
 * to f32, by the rule of docs/NUMERICS.md "GGUF dequantization". */
hmx_status hmx_gguf_dequantize(uint32_t type, const void *src, int64_t n, float *dst);
/* Element i of a run of `type` blocks starting at src (block i / B, its
 * element i % B), by the same rule: the scalar form that the in-place
 * kernels (HMX_WQ_GEMM, src/backend.h) vectorize and use at edges. type
 * must be one that hmx_gguf_dequantize handles; no checks. */
float hmx_gguf_quant_at(uint32_t type, const void *src, int64_t i);

/* Dequantize a whole tensor to dst (numel floats, ne[0] contiguous). */
hmx_status hmx_gguf_tensor_to_f32(const hmx_gguf_tensor *t, float *dst);

#endif
