/* Preparing and running an op from a file: shared by run, diff and conform. */
#include "hmx.h"
#include "exec.h"

#include <string.h>

int hmx_prepare(const char *cmd, const char *path, const hmx_opspec *op, const hmx_st_file *f,
                const char *const *params, int nparams, int dtype, hmx_op_io *io) {
  hmx_op_io_init(io, op);
  hmx_status s = hmx_op_io_load(io, f);
  if (s != HMX_OK)
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s: %s", cmd, path, hmx_cli_status_message(s));
  for (int i = 0; i < nparams; i++) {
    int rc = hmx_apply_param(cmd, io, params[i]);
    if (rc) return rc;
  }
  if (dtype < 0) dtype = hmx_expected_dtype(op, f);
  s = hmx_op_io_alloc_outputs(io, dtype);
  if (s != HMX_OK)
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s: %s", cmd, path, hmx_cli_status_message(s));
  return 0;
}

int hmx_check_runnable(const char *cmd, const hmx_opspec *op, const hmx_backend *b,
                       int explicit_backend) {
  if (!hmx_backend_available(b))
    return hmx_cli_unavailable(cmd, b);
  /* Without an explicit backend, the best backend that has the kernel runs
   * it (hmx_op_backend); with one, a missing kernel is an error. */
  if (explicit_backend && !hmx_op_implemented(op, b))
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: backend '%s' does not implement %s (see `hmx "
                         "ops`); leave out --backend (or use best) to fall back", cmd,
                         hmx_backend_name(b), op->name);
  return 0;
}

int hmx_execute(const char *cmd, hmx_op_io *io, const hmx_backend *b, int allow_fallback,
                int threads, hmx_tier tier) {
  hmx_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.backend = b;
  ctx.threads = threads;
  ctx.allow_ref_fallback = allow_fallback;
  ctx.tier = tier;
  hmx_status s = hmx_op_io_run(io, &ctx);
  if (s != HMX_OK)
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: backend %s: %s", cmd, hmx_backend_name(b),
                         hmx_cli_status_message(s));
  return 0;
}
