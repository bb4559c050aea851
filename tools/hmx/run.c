/* hmx run OP --in FILE --out FILE: run an op on a file's tensors. */
#include "hmx.h"
#include "exec.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx run [OP] --in FILE --out FILE [--backend B] [--threads N]\n"
        "               [--param NAME=VALUE]... [--dtype f32|bf16|f16]\n\n"
        "Reads the op's input tensors by name from the safetensors file --in (see `hmx ops\n"
        "OP` for the names and ranks), its parameters from the file's \"param.NAME\"\n"
        "metadata and then from --param, runs it, and writes the outputs to --out with the\n"
        "metadata \"op\" and \"param.NAME\" for every parameter. Tensors named like the op's\n"
        "outputs (a golden vector's expected values) may be present in --in; they are not\n"
        "inputs.\n\n"
        "  OP              the operation; default: the file's \"op\" metadata\n"
        "  --in FILE       input safetensors file\n"
        "  --out FILE      output safetensors file (overwritten)\n"
        "  --backend B     run on B only (a missing kernel is an error); default: HMX_BACKEND,\n"
        "                  else the best available, with ref standing in for missing kernels\n"
        "  --threads N     threads (0 = the backend's default)\n"
        "  --param N=V     set a parameter (repeatable)\n"
        "  --dtype D       output dtype; default: the dtype of the output tensor stored in\n"
        "                  --in if any, else that of the first float input\n",
        out);
}

static int write_outputs(const char *path, const hmx_op_io *io) {
  const hmx_opspec *op = io->op;
  hmx_st_writer *w = hmx_st_writer_new();
  if (!w) return hmx_cli_error(HMX_EXIT_FAIL, "run: out of memory");
  hmx_status s = hmx_st_writer_meta(w, "op", op->name);
  for (int a = 0; s == HMX_OK && a < op->nargs; a++)
    if (op->args[a].is_output) s = hmx_st_writer_add(w, op->args[a].name, &io->t[a]);
  for (int i = 0; s == HMX_OK && i < op->nparams; i++) {
    char key[96], val[64];
    snprintf(key, sizeof key, "param.%s", op->params[i].name);
    hmx_op_format_param(&op->params[i], io->p[i], val, sizeof val);
    s = hmx_st_writer_meta(w, key, val);
  }
  if (s == HMX_OK) s = hmx_st_writer_save(w, path);
  hmx_st_writer_free(w);
  if (s != HMX_OK)
    return hmx_cli_error(HMX_EXIT_FAIL, "run: %s: %s", path, hmx_cli_status_message(s));
  return 0;
}

int hmx_cmd_run(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  const char *opname = NULL, *in = NULL, *out = NULL, *bname = NULL, *v = NULL;
  int threads = 0, dtype = -1, err = 0, rc;
  const char **params = malloc(sizeof(char *) * (size_t)(argc > 0 ? argc : 1));
  int nparams = 0;
  if (!params) return hmx_cli_error(HMX_EXIT_FAIL, "run: out of memory");

  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s) && strcmp(s, "help") != 0) {
      help(stdout);
      free(params);
      return HMX_EXIT_OK;
    }
    if (hmx_args_value(&a, "--in", &v, &err)) { if (!err) in = v; }
    else if (hmx_args_value(&a, "--out", &v, &err)) { if (!err) out = v; }
    else if (hmx_args_value(&a, "--backend", &v, &err)) { if (!err) bname = v; }
    else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("run", v, &threads)) err = 1;
    } else if (hmx_args_value(&a, "--dtype", &v, &err)) {
      if (!err && hmx_parse_dtype("run", v, &dtype)) err = 1;
    } else if (hmx_args_value(&a, "--param", &v, &err)) {
      if (!err) params[nparams++] = v;
    } else if (s[0] == '-' && s[1] != '\0') {
      hmx_cli_error(HMX_EXIT_USAGE, "run: unknown option '%s' (see `hmx run --help`)", s);
      err = 1;
    } else if (opname) {
      hmx_cli_error(HMX_EXIT_USAGE, "run: unexpected argument '%s' (the op is '%s')", s, opname);
      err = 1;
    } else {
      opname = s;
      a.i++;
    }
    if (err) {
      free(params);
      return HMX_EXIT_USAGE;
    }
  }

  const hmx_opspec *op = NULL;
  const hmx_backend *be = NULL;
  hmx_st_file *f = NULL;
  hmx_op_io io;
  memset(&io, 0, sizeof io);
  rc = 0;
  if (!in) rc = hmx_cli_error(HMX_EXIT_USAGE, "run: --in FILE is required (see `hmx run --help`)");
  else if (!out)
    rc = hmx_cli_error(HMX_EXIT_USAGE, "run: --out FILE is required (see `hmx run --help`)");
  if (!rc && opname) rc = hmx_resolve_op("run", opname, NULL, &op);
  if (!rc && bname) rc = hmx_parse_backend("run", bname, &be);
  if (!rc && !bname) {
    be = hmx_backend_default();
    if (!be) rc = hmx_cli_error(HMX_EXIT_USAGE, "run: %s", hmx_cli_status_message(HMX_ERR_NOT_FOUND));
  }
  if (!rc && op && nparams) {
    /* usage errors in --param come before any file error */
    hmx_op_io scratch;
    hmx_op_io_init(&scratch, op);
    for (int i = 0; !rc && i < nparams; i++) rc = hmx_apply_param("run", &scratch, params[i]);
  }
  if (!rc) rc = hmx_load_file("run", in, &f);
  if (!rc && !op) rc = hmx_resolve_op("run", NULL, f, &op);
  if (!rc) rc = hmx_prepare("run", in, op, f, params, nparams, dtype, &io);
  /* "best" means the best backend for this op: missing kernels fall back */
  int explicit_be = bname != NULL && strcmp(bname, "best") != 0;
  if (!rc) rc = hmx_check_runnable("run", op, be, explicit_be);
  if (!rc) rc = hmx_execute("run", &io, be, !explicit_be, threads, HMX_TIER_DEFAULT);
  if (!rc) rc = write_outputs(out, &io);
  if (!rc) {
    printf("%s on %s:", op->name, hmx_backend_name(hmx_op_backend(op, be, !explicit_be)));
    for (int i = 0; i < op->nargs; i++) {
      if (!op->args[i].is_output) continue;
      char shape[96];
      hmx_fmt_shape(shape, sizeof shape, io.t[i].ndim, io.t[i].shape);
      printf(" %s %s %s", op->args[i].name, hmx_dtype_name(io.t[i].dtype), shape);
    }
    printf(" -> %s\n", out);
  }
  if (io.op) hmx_op_io_free(&io);
  hmx_st_free(f);
  free(params);
  return rc;
}
