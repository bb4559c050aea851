/* See ops_stage.h. */
#include "ops_stage.h"

hmx_status hmx_staging_begin(hmx_staging *st, const hmx_tensor *const *ins, int nin,
                             const hmx_tensor *out) {
  st->nin = 0;
  st->out.p = NULL;
  st->out.owned = 0;
  for (int i = 0; i < nin; i++) {
    hmx_status s = hmx_stage_in(ins[i], &st->in[i]);
    st->nin = i + 1;
    if (s != HMX_OK) return s;
  }
  return hmx_stage_out(out, &st->out);
}

hmx_status hmx_staging_finish(hmx_staging *st, const hmx_tensor *out, hmx_status s,
                              const char *op, const hmx_exec *ex) {
  if (s == HMX_OK) hmx_commit_out(out, &st->out);
  for (int i = 0; i < st->nin; i++) hmx_fbuf_release(&st->in[i]);
  hmx_fbuf_release(&st->out);
  if (s != HMX_OK && hmx_last_error()[0] == '\0')
    hmx_fail(s, "%s: backend '%s' failed: %s", op, ex->be->name, hmx_status_string(s));
  return s;
}

hmx_status hmx_no_device(const char *op, const hmx_exec *ex) {
  return hmx_fail(HMX_ERR_NOT_IMPLEMENTED, "%s: backend '%s' has no device-memory kernel for it",
                  op, ex->be->name);
}
