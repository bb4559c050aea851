/* hmx ops [OP]: the operation table, or one op's tensors and parameters. */
#include "hmx.h"

#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx ops [OP]\n\n"
        "Without OP: every operation, whether each backend implements it (a missing kernel\n"
        "is an error with an explicit --backend and falls back to ref otherwise), and its\n"
        "summary.\n"
        "With OP: the tensors a file must hold for `hmx run OP` (name, in/out, rank, dtype,\n"
        "optional, shape and meaning) and the parameters, read from the file's\n"
        "\"param.NAME\" metadata or given with --param NAME=VALUE.\n",
        out);
}

/* The fast tier (--tier fast, HMX_TIER=fast): per backend, the ops it
 * changes and what it runs for them; every op not listed runs its exact
 * kernel. An op that would change but cannot (a library absent at build
 * time) is listed as exact with the reason. */
static void list_fast(void) {
  hmx_tier now = hmx_tier_default();
  printf("\nfast tier (--tier fast or HMX_TIER=fast; now: %s): ops each backend changes\n",
         hmx_tier_name(now));
  for (int b = 0; b < hmx_backend_count(); b++) {
    const hmx_backend *be = hmx_backend_at(b);
    int any = 0;
    for (int i = 0; i < hmx_op_count(); i++) {
      const char *why = NULL;
      const char *uses = hmx_fast_op_kernel(be, hmx_op_at(i)->name, &why);
      if (!uses && !why) continue;
      printf("  %-8s %-13s %s%s\n", hmx_backend_name(be), hmx_op_at(i)->name,
             uses ? "fast: " : "exact (fallback): ", uses ? uses : why);
      any = 1;
    }
    if (!any) printf("  %-8s (none: every op runs its exact kernel)\n", hmx_backend_name(be));
  }
  printf("Every other op runs its exact kernel in the fast tier too. Error bounds of the\n"
         "fast kernels: docs/NUMERICS.md, \"Fast tier\".\n");
}

static void list_ops(void) {
  int nb = hmx_backend_count();
  printf("%-13s", "op");
  for (int b = 0; b < nb; b++) printf(" %-8s", hmx_backend_name(hmx_backend_at(b)));
  printf(" summary\n");
  for (int i = 0; i < hmx_op_count(); i++) {
    const hmx_opspec *op = hmx_op_at(i);
    printf("%-13s", op->name);
    for (int b = 0; b < nb; b++)
      printf(" %-8s", hmx_op_implemented(op, hmx_backend_at(b)) ? "yes" : "-");
    printf(" %s\n", op->summary);
  }
  printf("\nyes = the backend has its own kernel; - = missing (conformance reports it as "
         "missing).\nBackends this machine cannot run are listed too (see `hmx info`).\n"
         "`hmx ops OP` lists an op's tensor names and parameters.\n");
  list_fast();
}

static void describe(const hmx_opspec *op) {
  printf("%s: %s\n\n", op->name, op->summary);
  printf("tensors (safetensors names; inputs f32/bf16/f16 unless noted, outputs written by "
         "`hmx run`):\n");
  printf("  %-10s %-4s %-5s %-6s %-9s %s\n", "name", "dir", "rank", "dtype", "required", "shape "
         "and meaning");
  for (int a = 0; a < op->nargs; a++) {
    const hmx_argspec *as = &op->args[a];
    printf("  %-10s %-4s %-5d %-6s %-9s %s\n", as->name, as->is_output ? "out" : "in", as->rank,
           as->is_int ? "i32" : "float", as->is_output ? "-" : as->optional ? "optional" : "yes",
           as->doc);
  }
  printf("\nparameters (file metadata \"param.NAME\", overridden by --param NAME=VALUE):\n");
  if (op->nparams == 0) {
    printf("  (none)\n");
  } else {
    printf("  %-10s %-6s %-9s %s\n", "name", "type", "default", "meaning");
    for (int i = 0; i < op->nparams; i++) {
      const hmx_paramspec *ps = &op->params[i];
      char def[64];
      hmx_op_format_param(ps, ps->def, def, sizeof def);
      printf("  %-10s %-6s %-9s %s\n", ps->name, ps->is_int ? "int" : "float", def, ps->doc);
    }
  }
  printf("\nimplemented by:");
  int any = 0;
  for (int b = 0; b < hmx_backend_count(); b++)
    if (hmx_op_implemented(op, hmx_backend_at(b))) {
      printf(" %s", hmx_backend_name(hmx_backend_at(b)));
      any = 1;
    }
  printf("%s\n", any ? "" : " (none)");
  printf("missing in:    ");
  any = 0;
  for (int b = 0; b < hmx_backend_count(); b++)
    if (!hmx_op_implemented(op, hmx_backend_at(b))) {
      printf(" %s", hmx_backend_name(hmx_backend_at(b)));
      any = 1;
    }
  printf("%s\n", any ? "" : " (none)");
}

int hmx_cmd_ops(int argc, char **argv) {
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (hmx_is_help(argv[i])) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (argv[i][0] == '-')
      return hmx_cli_error(HMX_EXIT_USAGE, "ops: unknown option '%s' (see `hmx ops --help`)",
                           argv[i]);
    if (name)
      return hmx_cli_error(HMX_EXIT_USAGE, "ops: one OP at most (got '%s' and '%s')", name,
                           argv[i]);
    name = argv[i];
  }
  if (!name) {
    list_ops();
    return HMX_EXIT_OK;
  }
  const hmx_opspec *op = hmx_op_find(name);
  if (!op) return hmx_cli_error(HMX_EXIT_USAGE, "ops: unknown op '%s' (see `hmx ops`)", name);
  describe(op);
  return HMX_EXIT_OK;
}
