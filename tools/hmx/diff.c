/* hmx diff: one op on two backends (or a backend vs a file's expected
 * outputs), with error statistics per output tensor. */
#include "hmx.h"
#include "exec.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx diff [OP] --backend A --vs B|expected --in FILE [--param NAME=VALUE]...\n"
        "                [--threads N] [--dtype f32|bf16|f16]\n\n"
        "Runs OP (default: the file's \"op\" metadata) on the inputs of FILE on backend A\n"
        "and on backend B (no fallback to ref on either), or compares A with the output\n"
        "tensors stored in FILE when B is the word \"expected\" (a golden vector). Prints,\n"
        "per output tensor: elements, differing elements (bits differ; NaN equals NaN),\n"
        "the first differing index with both values, max abs error, max relative error\n"
        "(relative to B) and max distance in ulps of the output dtype.\n\n"
        "exit status: 0 identical, 1 different (or a failure), 2 usage error\n\n"
        "hmx diff --model ... compares a whole model run (see `hmx diff --model --help`).\n"
        "hmx diff [--model] --tier exact --vs fast ... compares the two numerical tiers of\n"
        "one backend (see `hmx diff --tier exact --vs fast --help`).\n",
        out);
}

static void print_stats(const char *name, const hmx_tensor *a, const hmx_tensor *b,
                        const hmx_diff_stats *st) {
  char first[96] = "-";
  if (st->first_index >= 0) {
    char idx[80];
    hmx_fmt_index(idx, sizeof idx, b, st->first_index);
    snprintf(first, sizeof first, "%lld %s", (long long)st->first_index, idx);
  }
  printf("%-8s %10lld %10lld  %-18s %-12.6g %-12.6g %-10.0f %lld\n", name, (long long)st->count,
         (long long)st->differing, first, st->max_abs, st->max_rel, st->max_ulp,
         (long long)st->nonfinite_mismatch);
  if (st->first_index >= 0) {
    char va[64], vb[64];
    hmx_fmt_element(va, sizeof va, a, st->first_index);
    hmx_fmt_element(vb, sizeof vb, b, st->first_index);
    printf("         first difference: A = %s, B = %s\n", va, vb);
  }
}

int hmx_cmd_diff(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--tier") == 0 || strncmp(argv[i], "--tier=", 7) == 0)
      return hmx_cmd_diff_tier(argc, argv);
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--model") == 0) return hmx_cmd_diff_model(argc, argv);
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  const char *opname = NULL, *in = NULL, *aname = NULL, *bname = NULL, *v = NULL;
  int threads = 0, dtype = -1, err = 0;
  const char **params = malloc(sizeof(char *) * (size_t)(argc > 0 ? argc : 1));
  int nparams = 0;
  if (!params) return hmx_cli_error(HMX_EXIT_FAIL, "diff: out of memory");
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s) && strcmp(s, "help") != 0) {
      help(stdout);
      free(params);
      return HMX_EXIT_OK;
    }
    if (hmx_args_value(&a, "--in", &v, &err)) { if (!err) in = v; }
    else if (hmx_args_value(&a, "--backend", &v, &err)) { if (!err) aname = v; }
    else if (hmx_args_value(&a, "--vs", &v, &err)) { if (!err) bname = v; }
    else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("diff", v, &threads)) err = 1;
    } else if (hmx_args_value(&a, "--dtype", &v, &err)) {
      if (!err && hmx_parse_dtype("diff", v, &dtype)) err = 1;
    } else if (hmx_args_value(&a, "--param", &v, &err)) {
      if (!err) params[nparams++] = v;
    } else if (s[0] == '-' && s[1] != '\0') {
      hmx_cli_error(HMX_EXIT_USAGE, "diff: unknown option '%s' (see `hmx diff --help`)", s);
      err = 1;
    } else if (opname) {
      hmx_cli_error(HMX_EXIT_USAGE, "diff: unexpected argument '%s' (the op is '%s')", s,
                    opname);
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
  const hmx_backend *ba = NULL, *bb = NULL;
  int vs_expected = bname && strcmp(bname, "expected") == 0;
  hmx_st_file *f = NULL;
  hmx_op_io ioa, iob;
  memset(&ioa, 0, sizeof ioa);
  memset(&iob, 0, sizeof iob);
  int rc = 0;
  if (!in) rc = hmx_cli_error(HMX_EXIT_USAGE, "diff: --in FILE is required (see `hmx diff --help`)");
  else if (!aname)
    rc = hmx_cli_error(HMX_EXIT_USAGE, "diff: --backend A is required (see `hmx diff --help`)");
  else if (!bname)
    rc = hmx_cli_error(HMX_EXIT_USAGE, "diff: --vs B|expected is required (see `hmx diff --help`)");
  if (!rc && opname) rc = hmx_resolve_op("diff", opname, NULL, &op);
  if (!rc) rc = hmx_parse_backend("diff", aname, &ba);
  if (!rc && !vs_expected) rc = hmx_parse_backend("diff", bname, &bb);
  if (!rc && op && nparams) {
    /* usage errors in --param come before any file error */
    hmx_op_io scratch;
    hmx_op_io_init(&scratch, op);
    for (int i = 0; !rc && i < nparams; i++) rc = hmx_apply_param("diff", &scratch, params[i]);
  }
  if (!rc) rc = hmx_load_file("diff", in, &f);
  if (!rc && !op) rc = hmx_resolve_op("diff", NULL, f, &op);
  if (!rc) rc = hmx_prepare("diff", in, op, f, params, nparams, dtype, &ioa);
  if (!rc && !vs_expected) rc = hmx_prepare("diff", in, op, f, params, nparams, dtype, &iob);
  if (!rc) rc = hmx_check_runnable("diff", op, ba, 1);
  if (!rc && bb) rc = hmx_check_runnable("diff", op, bb, 1);
  if (!rc) rc = hmx_execute("diff", &ioa, ba, 0, threads, HMX_TIER_DEFAULT);
  if (!rc && bb) rc = hmx_execute("diff", &iob, bb, 0, threads, HMX_TIER_DEFAULT);

  if (!rc) {
    int differ = 0;
    printf("diff %s on %s: A = %s, B = %s\n", op->name, in, hmx_backend_name(ba),
           vs_expected ? "expected (stored in the file)" : hmx_backend_name(bb));
    printf("%-8s %10s %10s  %-18s %-12s %-12s %-10s %s\n", "tensor", "elements", "differing",
           "first index", "max abs", "max rel", "max ulp", "non-finite");
    for (int i = 0; i < op->nargs && !rc; i++) {
      if (!op->args[i].is_output) continue;
      const char *tn = op->args[i].name;
      hmx_tensor tb;
      if (vs_expected) {
        const hmx_st_tensor *st = hmx_st_find(f, tn);
        if (!st) {
          rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: %s has no output tensor '%s' to compare with",
                             in, tn);
          break;
        }
        tb = hmx_st_view(st);
      } else {
        tb = iob.t[i];
      }
      hmx_diff_stats st;
      hmx_status s = hmx_compare(&ioa.t[i], &tb, &st);
      if (s != HMX_OK) {
        rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: output '%s': %s", tn, hmx_cli_status_message(s));
        break;
      }
      print_stats(tn, &ioa.t[i], &tb, &st);
      if (st.differing) differ = 1;
    }
    if (!rc) {
      printf("%s\n", differ ? "result: DIFFERENT" : "result: identical");
      rc = differ ? HMX_EXIT_FAIL : HMX_EXIT_OK;
    }
  }
  if (ioa.op) hmx_op_io_free(&ioa);
  if (iob.op) hmx_op_io_free(&iob);
  hmx_st_free(f);
  free(params);
  return rc;
}
