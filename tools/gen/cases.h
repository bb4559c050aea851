/* The golden vector cases: which op, which shapes, dtypes, fills and params. */
#ifndef HMX_GEN_CASES_H
#define HMX_GEN_CASES_H

#include "hadamix.h"

enum hmx_fill {
  FILL_UNIFORM = 0, /* rng_uniform * amp */
  FILL_SPECIAL,     /* as uniform, but element i with i % 7 == 3 is a special value */
  FILL_POS_SEQ,     /* i32 positions amp, amp + 1, ... */
  FILL_POS_RAND     /* i32 positions draw % amp */
};

typedef struct hmx_vtensor {
  const char *name;
  hmx_dtype dtype;
  int ndim;
  int64_t shape[HMX_MAX_DIMS];
  int fill;
  float amp;
} hmx_vtensor;

#define HMX_VCASE_MAX_TENSORS 8

typedef struct hmx_vcase {
  const char *op;
  const char *name;
  unsigned long long seed;
  const char *params;   /* "name=value,..." */
  const char *fill_doc; /* what is special about the inputs */
  int ntensors;
  hmx_vtensor tensors[HMX_VCASE_MAX_TENSORS];
} hmx_vcase;

extern const hmx_vcase hmx_vcases[];
extern const int hmx_vcase_count;

#endif
