/* Preparing and running an op from a file (shared by run, diff, conform). */
#ifndef HMX_CLI_EXEC_H
#define HMX_CLI_EXEC_H

#include "hmx.h"

/* hmx_op_io_init + load from f (params from "param.*" metadata) + the
 * "NAME=VALUE" overrides + output allocation with `dtype` (< 0: the dtype of
 * the expected output stored in f, else of the first input). Prints the
 * error and returns an exit code, or 0. The caller always frees io. */
int hmx_prepare(const char *cmd, const char *path, const hmx_opspec *op, const hmx_st_file *f,
                const char *const *params, int nparams, int dtype, hmx_op_io *io);

/* Availability of b and its kernel for op: an error (exit 1) when b cannot
 * run here or, with explicit_backend, lacks the kernel; a note on stderr
 * when ref will stand in. */
int hmx_check_runnable(const char *cmd, const hmx_opspec *op, const hmx_backend *b,
                       int explicit_backend);

/* Run io on backend b in tier `tier` (HMX_TIER_DEFAULT: HMX_TIER / --tier);
 * prints the error and returns 1 on failure. */
int hmx_execute(const char *cmd, hmx_op_io *io, const hmx_backend *b, int allow_fallback,
                int threads, hmx_tier tier);

#endif
