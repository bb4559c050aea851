/* hmx init-weights: write the synthetic weights of a config to a file
 * (docs/MODEL.md), e.g. to run the same model elsewhere or convert it. */
#include "model_opts.h"

#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx init-weights --out FILE [model options]\n\n"
        "Writes the deterministic synthetic weights of the config (seeded SplitMix64,\n"
        "docs/MODEL.md) as a hadamix weights file (safetensors).\n\n",
        out);
  hmx_model_opts_help(out);
}

int hmx_cmd_init_weights(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  hmx_model_opts mo;
  hmx_model_opts_init(&mo);
  const char *out = NULL, *v = NULL;
  int err = 0;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_model_opts_parse(&a, &mo, &err)) {
    } else if (hmx_args_value(&a, "--out", &v, &err)) {
      if (!err) out = v;
    } else
      return hmx_cli_error(HMX_EXIT_USAGE, "init-weights: unknown argument '%s'", s);
    if (err) return HMX_EXIT_USAGE;
  }
  if (!out) return hmx_cli_error(HMX_EXIT_USAGE, "init-weights: --out FILE is required");
  if (mo.weights) return hmx_cli_error(HMX_EXIT_USAGE, "init-weights: --weights makes no sense here");
  hmx_model *m;
  int rc = hmx_model_opts_open("init-weights", &mo, &m);
  if (rc) return rc;
  hmx_status st = hmx_model_save(m, out);
  if (st) rc = hmx_cli_error(HMX_EXIT_FAIL, "init-weights: %s", hmx_cli_status_message(st));
  else
    printf("wrote %s: %.1f MiB of %s weights\n", out, hmx_model_weight_bytes(m) / 1048576.0,
           hmx_dtype_name(hmx_model_dtype(m)));
  hmx_model_free(m);
  return rc;
}
