/* hmx-gen-vectors: writes the golden vectors (docs/VECTORS.md).
 *
 *   hmx-gen-vectors OUTDIR        write every case as OUTDIR/<case>.safetensors
 *   hmx-gen-vectors --list        list the cases
 *
 * Inputs come from the SplitMix64 streams of src/rng.h (stream = the
 * tensor's position in the case), outputs from the `ref` backend through the
 * same generic op path that `hmx run` and `hmx conform` use. The output is a
 * pure function of this file and the reference: regenerating on any machine
 * must reproduce vectors/MANIFEST byte for byte (ctest: vectors_regenerate).
 */
#include "cases.h"
#include "op_io.h"
#include "rng.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The special values of the `FILL_SPECIAL` fill, cycled through at every
 * element i with i % 7 == 3 (docs/VECTORS.md). */
static float special_value(int64_t k) {
  static const uint32_t bits[] = {
      0x00000000u, /* +0 */
      0x80000000u, /* -0 */
      0x00000001u, /* smallest subnormal */
      0x807fffffu, /* largest subnormal, negative */
      0x00400000u, /* subnormal 2^-127 */
      0x7f7fffffu, /* FLT_MAX */
      0xff7fffffu, /* -FLT_MAX */
      0x7f800000u, /* +inf */
      0xff800000u, /* -inf */
      0x7fc00000u, /* quiet NaN */
      0x70000000u, /* 2^97: large */
      0x0d800000u, /* 2^-100: tiny normal */
  };
  float f;
  uint32_t u = bits[k % (int64_t)(sizeof bits / sizeof bits[0])];
  memcpy(&f, &u, 4);
  return f;
}

static float fill_value(const hmx_vtensor *ts, uint64_t seed, int stream, int64_t i) {
  float u = hmx_rng_uniform(seed, (uint64_t)stream, (uint64_t)i);
  switch (ts->fill) {
  case FILL_SPECIAL:
    if (i % 7 == 3) return special_value(i / 7);
    return u * ts->amp;
  default:
    return u * ts->amp;
  }
}

static hmx_status make_tensor(const hmx_vtensor *ts, uint64_t seed, int stream, hmx_tensor *t,
                              void **owned) {
  *t = hmx_tensor_make(NULL, ts->dtype, ts->ndim, ts->shape);
  int64_t n = hmx_tensor_numel(t);
  void *buf = calloc((size_t)(n ? n : 1), hmx_dtype_size(ts->dtype));
  if (!buf) return HMX_ERR_NO_MEMORY;
  for (int64_t i = 0; i < n; i++) {
    if (ts->dtype == HMX_I32) {
      int32_t v;
      if (ts->fill == FILL_POS_SEQ) v = (int32_t)(ts->amp + (float)i);
      else v = (int32_t)(hmx_rng_u64(seed, (uint64_t)stream, (uint64_t)i) % (uint64_t)ts->amp);
      ((int32_t *)buf)[i] = v;
      continue;
    }
    float f = fill_value(ts, seed, stream, i);
    if (ts->dtype == HMX_F32) ((float *)buf)[i] = f;
    else if (ts->dtype == HMX_BF16) ((uint16_t *)buf)[i] = hmx_f32_to_bf16(f);
    else ((uint16_t *)buf)[i] = hmx_f32_to_f16(f);
  }
  t->data = buf;
  *owned = buf;
  return HMX_OK;
}

/* NaN payloads and signs are not part of the contract (docs/NUMERICS.md §C):
 * compilers may swap the operands of a commutative operation, and which NaN
 * propagates then changes. Stored outputs use one canonical quiet NaN so
 * that the files, and vectors/MANIFEST, are the same from every build. */
static void canonicalize_nans(hmx_tensor *t) {
  int64_t n = hmx_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    if (t->dtype == HMX_F32) {
      uint32_t u;
      memcpy(&u, (char *)t->data + 4 * i, 4);
      if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u;
      memcpy((char *)t->data + 4 * i, &u, 4);
    } else if (t->dtype == HMX_BF16 || t->dtype == HMX_F16) {
      uint16_t h, inf = t->dtype == HMX_BF16 ? 0x7f80u : 0x7c00u;
      memcpy(&h, (char *)t->data + 2 * i, 2);
      if ((h & 0x7fffu) > inf) h = t->dtype == HMX_BF16 ? 0x7fc0u : 0x7e00u;
      memcpy((char *)t->data + 2 * i, &h, 2);
    }
  }
}

/* Build the case's inputs, run ref, and write inputs + outputs + metadata. */
static int write_case(const hmx_vcase *c, const char *dir, size_t *bytes) {
  const hmx_opspec *op = hmx_op_find(c->op);
  if (!op) {
    fprintf(stderr, "hmx-gen-vectors: case %s: unknown op %s\n", c->name, c->op);
    return 1;
  }
  hmx_op_io io;
  hmx_op_io_init(&io, op);
  int rc = 1;
  hmx_st_writer *w = NULL;
  char inputs[256] = "", outputs[256] = "";
  for (int k = 0; k < c->ntensors; k++) {
    const hmx_vtensor *ts = &c->tensors[k];
    int a = hmx_op_arg_index(op, ts->name);
    if (a < 0 || op->args[a].is_output) {
      fprintf(stderr, "hmx-gen-vectors: case %s: %s is not an input of %s\n", c->name, ts->name,
              op->name);
      goto done;
    }
    if (make_tensor(ts, c->seed, k, &io.t[a], &io.owned[a]) != HMX_OK) goto done;
    io.tp[a] = &io.t[a];
  }
  /* params: "name=value,name=value" */
  char pbuf[256];
  snprintf(pbuf, sizeof pbuf, "%s", c->params ? c->params : "");
  for (char *tok = strtok(pbuf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) goto done;
    *eq = '\0';
    if (hmx_op_io_set_param(&io, tok, eq + 1) != HMX_OK) {
      fprintf(stderr, "hmx-gen-vectors: case %s: %s\n", c->name, hmx_last_error());
      goto done;
    }
  }
  hmx_context ctx = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  hmx_status s = hmx_op_io_alloc_outputs(&io, -1);
  if (s == HMX_OK) s = hmx_op_io_run(&io, &ctx);
  if (s != HMX_OK) {
    fprintf(stderr, "hmx-gen-vectors: case %s: %s: %s\n", c->name, hmx_status_string(s),
            hmx_last_error());
    goto done;
  }
  for (int a = 0; a < op->nargs; a++)
    if (op->args[a].is_output && io.tp[a]) canonicalize_nans(io.tp[a]);
  w = hmx_st_writer_new();
  if (!w) goto done;
  for (int a = 0; a < op->nargs; a++) {
    if (!io.tp[a]) continue;
    char *list = op->args[a].is_output ? outputs : inputs;
    if (*list) strcat(list, ",");
    strcat(list, op->args[a].name);
    if (hmx_st_writer_add(w, op->args[a].name, io.tp[a]) != HMX_OK) goto done;
  }
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
  hmx_st_writer_meta(w, "format", "hadamix-vector-1");
  hmx_st_writer_meta(w, "op", op->name);
  hmx_st_writer_meta(w, "case", c->name);
  hmx_st_writer_meta(w, "tier", "exact");
  hmx_st_writer_meta(w, "seed", seed);
  hmx_st_writer_meta(w, "inputs", inputs);
  hmx_st_writer_meta(w, "outputs", outputs);
  hmx_st_writer_meta(w, "fill", c->fill_doc ? c->fill_doc : "uniform");
  for (int i = 0; i < op->nparams; i++) {
    char key[64], val[64];
    snprintf(key, sizeof key, "param.%s", op->params[i].name);
    hmx_op_format_param(&op->params[i], io.p[i], val, sizeof val);
    hmx_st_writer_meta(w, key, val);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->name);
  if (hmx_st_writer_save(w, path) != HMX_OK) {
    fprintf(stderr, "hmx-gen-vectors: %s: %s\n", path, hmx_last_error());
    goto done;
  }
  FILE *f = fopen(path, "rb");
  if (f) {
    fseek(f, 0, SEEK_END);
    *bytes += (size_t)ftell(f);
    fclose(f);
  }
  rc = 0;
done:
  hmx_st_writer_free(w);
  hmx_op_io_free(&io);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: hmx-gen-vectors OUTDIR | --list\n");
    return 2;
  }
  if (strcmp(argv[1], "--list") == 0) {
    for (int i = 0; i < hmx_vcase_count; i++)
      printf("%-40s %s\n", hmx_vcases[i].name, hmx_vcases[i].op);
    return 0;
  }
  size_t bytes = 0;
  int failures = 0;
  for (int i = 0; i < hmx_vcase_count; i++) failures += write_case(&hmx_vcases[i], argv[1], &bytes);
  printf("hmx-gen-vectors: %d cases, %d failed, %.2f MiB in %s\n", hmx_vcase_count, failures,
         (double)bytes / (1024.0 * 1024.0), argv[1]);
  return failures ? 1 : 0;
}
