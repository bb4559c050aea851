/* Running an operation on tensors read from a safetensors file: inputs by
 * the op's tensor names, parameters from "param.NAME" metadata (or the
 * caller), outputs allocated from the op's shape rule. */
#ifndef HMX_OP_IO_H
#define HMX_OP_IO_H

#include "opspec.h"
#include "safetensors.h"

typedef struct hmx_op_io {
  const hmx_opspec *op;
  hmx_tensor t[HMX_OP_MAX_ARGS];
  hmx_tensor *tp[HMX_OP_MAX_ARGS]; /* &t[i], or NULL for an absent optional input */
  void *owned[HMX_OP_MAX_ARGS];
  double p[HMX_OP_MAX_PARAMS];
} hmx_op_io;

/* Parameters at their defaults, every tensor absent. */
void hmx_op_io_init(hmx_op_io *io, const hmx_opspec *op);
/* Copy the op's inputs from f (aligned copies) and read "param.NAME" metadata.
 * Missing required inputs, wrong ranks, and unknown tensors or params
 * (other than the op's outputs, kept in vectors as expected values) are errors. */
hmx_status hmx_op_io_load(hmx_op_io *io, const hmx_st_file *f);
/* Set a parameter from text ("1e-5", "1"); validated against its type. */
hmx_status hmx_op_io_set_param(hmx_op_io *io, const char *name, const char *value);
/* Largest output, in bytes, that hmx_op_io_alloc_outputs allocates:
 * HMX_MAX_OUTPUT_BYTES if set to a positive integer, else 2 GiB. */
uint64_t hmx_op_output_limit(void);
/* Allocate the outputs (zero-filled) with dtype `dt`, or the first input's
 * dtype when dt < 0; outputs over hmx_op_output_limit() are refused. */
hmx_status hmx_op_io_alloc_outputs(hmx_op_io *io, int dt);
/* The float dtype of the op's first output tensor stored in f (a golden
 * vector's expected output), or -1 if f has none (or it is not a float): the
 * dt for hmx_op_io_alloc_outputs when a vector is run (hmx conform, run, diff,
 * tests/test_cuda_vectors.c). */
int hmx_expected_dtype(const hmx_opspec *op, const hmx_st_file *f);
hmx_status hmx_op_io_run(hmx_op_io *io, const hmx_context *ctx);
void hmx_op_io_free(hmx_op_io *io);

/* Format a parameter value the way vectors store it (round-trips exactly). */
void hmx_op_format_param(const hmx_paramspec *ps, double v, char *buf, size_t len);

#endif
