/* A description of every operation by name: its tensors (inputs and
 * outputs, in a fixed order), its scalar parameters with defaults, and a
 * generic way to call it. Used by the `hmx` tool, the vector generator and
 * the conformance runner, so that "any safetensors file with the op's tensor
 * names" can be run. `hmx ops OP` prints this. */
#ifndef HMX_OPSPEC_H
#define HMX_OPSPEC_H

#include "backend.h"

#define HMX_OP_MAX_ARGS 8
#define HMX_OP_MAX_PARAMS 6

typedef struct hmx_argspec {
  const char *name;
  int is_output;
  int rank;
  int optional;    /* an input that may be absent */
  int is_int;      /* i32 tensor (positions); float otherwise */
  const char *doc; /* shape and meaning, e.g. "[batch, n] input rows" */
} hmx_argspec;

typedef struct hmx_paramspec {
  const char *name;
  double def;
  int is_int;
  const char *doc;
} hmx_paramspec;

typedef struct hmx_opspec {
  const char *name;
  const char *summary;
  int nargs;
  hmx_argspec args[HMX_OP_MAX_ARGS];
  int nparams;
  hmx_paramspec params[HMX_OP_MAX_PARAMS];
  size_t kernel_offset; /* offsetof(hmx_backend, <kernel>) */
  /* Fill the shape of output argument `arg` from the inputs and params. */
  hmx_status (*out_shape)(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out);
  /* Call the public entry point; t[i] is NULL for an absent optional input. */
  hmx_status (*invoke)(const hmx_context *ctx, hmx_tensor *const *t, const double *p);
} hmx_opspec;

int hmx_op_count(void);
const hmx_opspec *hmx_op_at(int i);
const hmx_opspec *hmx_op_find(const char *name);
/* 1 if backend b has a kernel for the op (not counting ref fallback). */
int hmx_op_implemented(const hmx_opspec *op, const hmx_backend *b);
/* The backend whose kernel runs op when `b` is asked for: b itself if it has
 * the kernel; else, with fallback, the highest-priority available backend
 * that has it (as src/dispatch.h HMX_PICK does); else NULL. */
const hmx_backend *hmx_op_backend(const hmx_opspec *op, const hmx_backend *b, int fallback);
int hmx_op_param_index(const hmx_opspec *op, const char *name);
int hmx_op_arg_index(const hmx_opspec *op, const char *name);

#endif
