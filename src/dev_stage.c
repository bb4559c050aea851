/* Device staging of 16-bit tensors (dev_stage.h). */
#include "dev_stage.h"
#include "internal.h" /* hmx_fail, hmx_mul_size */

#include <string.h>

static int is16(const hmx_tensor *t) { return t->dtype == HMX_BF16 || t->dtype == HMX_F16; }

/* f32 scratch of t's element count, kept in st for release */
static hmx_status scratch_for(hmx_dev_staging *st, const hmx_exec *ex, const hmx_tensor *t,
                              void **p) {
  size_t bytes;
  *p = NULL;
  if (!hmx_mul_size((size_t)hmx_tensor_numel(t), sizeof(float), &bytes))
    return hmx_fail(HMX_ERR_NO_MEMORY, "device staging: size overflows");
  hmx_status s = ex->dev->stage_alloc(p, bytes, ex->call.stream);
  if (s == HMX_OK && *p) st->scratch[st->nscratch++] = *p;
  return s;
}

hmx_status hmx_dev_staging_begin(hmx_dev_staging *st, const hmx_exec *ex,
                                 const hmx_tensor *const *ins, int nin, const hmx_tensor *out) {
  memset(st, 0, sizeof *st);
  if (nin > HMX_DEV_STAGE_MAX_IN)
    return hmx_fail(HMX_ERR_INTERNAL, "device staging: %d inputs (at most %d)", nin,
                    HMX_DEV_STAGE_MAX_IN);
  for (int i = 0; i < nin; i++) {
    const hmx_tensor *t = ins[i];
    if (!t) continue;
    if (!is16(t)) {
      st->in[i] = t->data;
      continue;
    }
    void *p;
    hmx_status s = scratch_for(st, ex, t, &p);
    if (s == HMX_OK)
      s = ex->dev->convert(p, HMX_F32, t->data, t->dtype, hmx_tensor_numel(t), ex->call.stream);
    if (s != HMX_OK) return s;
    st->in[i] = p;
  }
  if (!out || !is16(out)) {
    st->out = out ? out->data : NULL;
    return HMX_OK;
  }
  return scratch_for(st, ex, out, &st->out);
}

hmx_status hmx_dev_staging_finish(hmx_dev_staging *st, const hmx_exec *ex, const hmx_tensor *out,
                                  hmx_status s) {
  if (s == HMX_OK && out && is16(out) && st->out)
    s = ex->dev->convert(out->data, out->dtype, st->out, HMX_F32, hmx_tensor_numel(out),
                         ex->call.stream);
  for (int i = 0; i < st->nscratch; i++) {
    const hmx_status r = ex->dev->stage_free(st->scratch[i], ex->call.stream);
    if (s == HMX_OK) s = r;
  }
  st->nscratch = 0;
  return s;
}
