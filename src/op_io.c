/* Running an op on safetensors contents (see op_io.h). */
#include "op_io.h"
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hmx_op_io_init(hmx_op_io *io, const hmx_opspec *op) {
  memset(io, 0, sizeof *io);
  io->op = op;
  for (int i = 0; i < op->nparams; i++) io->p[i] = op->params[i].def;
}

void hmx_op_io_free(hmx_op_io *io) {
  for (int i = 0; i < HMX_OP_MAX_ARGS; i++) free(io->owned[i]);
  memset(io, 0, sizeof *io);
}

void hmx_op_format_param(const hmx_paramspec *ps, double v, char *buf, size_t len) {
  if (ps->is_int) snprintf(buf, len, "%lld", (long long)v);
  else snprintf(buf, len, "%.9g", v); /* 9 significant digits round-trip a float */
}

hmx_status hmx_op_io_set_param(hmx_op_io *io, const char *name, const char *value) {
  int i = hmx_op_param_index(io->op, name);
  if (i < 0)
    return hmx_fail(HMX_ERR_NOT_FOUND, "%s has no parameter '%s' (see `hmx ops %s`)",
                    io->op->name, name, io->op->name);
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  if (end == value || *end != '\0' || errno == ERANGE || !isfinite(v))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: parameter %s = '%s' is not a finite number",
                    io->op->name, name, value);
  /* integer parameters reach the ops as int: keep them inside its range */
  if (io->op->params[i].is_int && (v != floor(v) || fabs(v) > 2147483647.0))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "%s: parameter %s = '%s' must be an integer of magnitude < 2^31",
                    io->op->name, name, value);
  io->p[i] = v;
  return HMX_OK;
}

hmx_status hmx_op_io_load(hmx_op_io *io, const hmx_st_file *f) {
  const hmx_opspec *op = io->op;
  for (int i = 0; i < hmx_st_count(f); i++) {
    const hmx_st_tensor *st = hmx_st_at(f, i);
    if (hmx_op_arg_index(op, st->name) < 0)
      return hmx_fail(HMX_ERR_NOT_FOUND, "%s: file has a tensor '%s' that the op does not take "
                      "(see `hmx ops %s`)", op->name, st->name, op->name);
  }
  for (int a = 0; a < op->nargs; a++) {
    const hmx_argspec *as = &op->args[a];
    if (as->is_output) continue;
    const hmx_st_tensor *st = hmx_st_find(f, as->name);
    if (!st) {
      if (as->optional) continue;
      return hmx_fail(HMX_ERR_NOT_FOUND, "%s: input tensor '%s' %s is missing", op->name,
                      as->name, as->doc);
    }
    if (st->ndim != as->rank)
      return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' has %d dims, expected %d %s", op->name,
                      as->name, st->ndim, as->rank, as->doc);
    /* aligned private copy: stored data may be unaligned and is read-only */
    void *copy = malloc(st->nbytes ? st->nbytes : 1);
    if (!copy) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: cannot copy tensor '%s'", op->name, as->name);
    if (st->nbytes) memcpy(copy, st->data, st->nbytes);
    io->owned[a] = copy;
    io->t[a] = hmx_tensor_make(copy, st->dtype, st->ndim, st->shape);
    io->tp[a] = &io->t[a];
  }
  for (int i = 0; i < hmx_st_meta_count(f); i++) {
    const char *value;
    const char *key = hmx_st_meta_at(f, i, &value);
    if (strncmp(key, "param.", 6) != 0) continue;
    hmx_status s = hmx_op_io_set_param(io, key + 6, value);
    if (s != HMX_OK) return s;
  }
  return HMX_OK;
}

uint64_t hmx_op_output_limit(void) {
  const char *env = getenv("HMX_MAX_OUTPUT_BYTES");
  if (env && *env) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == '\0' && errno == 0 && v > 0) return v;
  }
  return UINT64_C(2) << 30; /* 2 GiB */
}

hmx_status hmx_op_io_alloc_outputs(hmx_op_io *io, int dt) {
  const hmx_opspec *op = io->op;
  hmx_dtype first = HMX_F32;
  for (int a = 0; a < op->nargs; a++)
    if (!op->args[a].is_output && io->tp[a] && !op->args[a].is_int) {
      first = io->t[a].dtype;
      break;
    }
  for (int a = 0; a < op->nargs; a++) {
    if (!op->args[a].is_output) continue;
    /* index outputs (selected keys) are always i32 */
    hmx_dtype odt = op->args[a].is_int ? HMX_I32 : dt < 0 ? first : (hmx_dtype)dt;
    hmx_tensor out = hmx_tensor_make(NULL, odt, 0, NULL);
    hmx_status s = op->out_shape(io->tp, io->p, a, &out);
    if (s != HMX_OK) return s;
    int64_t n = hmx_tensor_numel(&out);
    if (n < 0) return hmx_fail(HMX_ERR_SHAPE, "%s: invalid output shape", op->name);
    /* A file with zero-size inputs can imply a huge output (gemm [M,0] x [0,N]):
     * refuse outputs over the limit rather than be killed filling them. */
    uint64_t limit = hmx_op_output_limit();
    if ((uint64_t)n > limit / hmx_dtype_size(out.dtype))
      return hmx_fail(HMX_ERR_UNSUPPORTED,
                      "%s: output '%s' would need %lld elements, over the limit of %llu bytes "
                      "(set HMX_MAX_OUTPUT_BYTES to raise it)", op->name, op->args[a].name,
                      (long long)n, (unsigned long long)limit);
    void *buf = calloc((size_t)(n ? n : 1), hmx_dtype_size(out.dtype));
    if (!buf) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: cannot allocate output '%s'", op->name,
                              op->args[a].name);
    free(io->owned[a]);
    io->owned[a] = buf;
    out.data = buf;
    io->t[a] = out;
    io->tp[a] = &io->t[a];
  }
  return HMX_OK;
}

int hmx_expected_dtype(const hmx_opspec *op, const hmx_st_file *f) {
  for (int a = 0; a < op->nargs; a++) {
    if (!op->args[a].is_output) continue;
    const hmx_st_tensor *t = hmx_st_find(f, op->args[a].name);
    if (t && (t->dtype == HMX_F32 || t->dtype == HMX_BF16 || t->dtype == HMX_F16))
      return (int)t->dtype;
    return -1;
  }
  return -1;
}

hmx_status hmx_op_io_run(hmx_op_io *io, const hmx_context *ctx) {
  for (int a = 0; a < io->op->nargs; a++)
    if (io->op->args[a].is_output && !io->tp[a])
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: outputs not allocated", io->op->name);
  return io->op->invoke(ctx, io->tp, io->p);
}
