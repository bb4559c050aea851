/* Staging for the entry points of src/ops_*.c files other than ops.c: the
 * same rule as ops.c (inputs widened to contiguous f32, one f32 output
 * written back once), shared by the newer ops so each file stays small. */
#ifndef HMX_OPS_STAGE_H
#define HMX_OPS_STAGE_H

#include "dispatch.h"

#define HMX_STAGE_MAX_IN 8

typedef struct hmx_staging {
  hmx_fbuf in[HMX_STAGE_MAX_IN];
  int nin;
  hmx_fbuf out;
} hmx_staging;

/* Stage inputs (NULL entries allowed) and the output. On failure whatever
 * was staged is released by hmx_staging_finish. */
hmx_status hmx_staging_begin(hmx_staging *st, const hmx_tensor *const *ins, int nin,
                             const hmx_tensor *out);
/* Commit the output when s is HMX_OK, release, and make sure a failure has
 * a message naming the op and backend. Returns s. */
hmx_status hmx_staging_finish(hmx_staging *st, const hmx_tensor *out, hmx_status s,
                              const char *op, const hmx_exec *ex);

/* These ops have no device-memory kernels yet: a device call is refused. */
hmx_status hmx_no_device(const char *op, const hmx_exec *ex);

#endif
