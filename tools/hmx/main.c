/* hmx: the hadamix command-line tool (docs/CLI.md). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "hmx.h"

#include <stdlib.h>
#include <string.h>


typedef struct hmx_command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
} hmx_command;

static const hmx_command commands[] = {
    {"info", hmx_cmd_info, "version, build, CPU features, backends, threads"},
    {"ops", hmx_cmd_ops, "list the operations, or describe one (its tensors and parameters)"},
    {"run", hmx_cmd_run, "run an operation on the tensors of a safetensors file"},
    {"conform", hmx_cmd_conform, "check backends bit-for-bit against the golden vectors"},
    {"diff", hmx_cmd_diff, "compare two backends (or a backend and a file's expected outputs)"},
    {"bench", hmx_cmd_bench, "time the ops per backend against ref, the machine's ceilings, peers"},
    {"params", hmx_cmd_params, "parameter counts of a model config, dense vs Hadamard"},
    {"generate", hmx_cmd_generate, "run the model: prefill a prompt, decode tokens"},
    {"init-weights", hmx_cmd_init_weights, "write synthetic model weights to a file"},
    {"bench-model", hmx_cmd_bench_model, "prefill/decode tokens/s and memory, dense vs Hadamard"},
    {"tokenize", hmx_cmd_tokenize, "encode text / decode ids with a GGUF file's tokenizer"},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *out) {
  fprintf(out,
          "hmx %d.%d.%d: hadamix transformer kernels, the same bits on every backend\n\n"
          "usage: hmx COMMAND [OPTIONS]    (hmx COMMAND --help for its options)\n\n"
          "commands:\n",
          HMX_VERSION_MAJOR, HMX_VERSION_MINOR, HMX_VERSION_PATCH);
  for (int i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\nenvironment:\n"
          "  HMX_BACKEND   default backend when --backend is not given (see `hmx info`)\n"
          "  HMX_TIER      exact (the default) or fast: the numerical tier (`hmx ops`)\n"
          "  HMX_X86_TUNING  zen, intel, zen4 or zen3: the x86 kernels' schedule profile\n"
          "                (default: by CPU; same bits either way; `hmx info`)\n"
          "  HMX_GPU_FORWARD 0: a model prepared for cuda runs its forward pass as host\n"
          "                calls instead of on the GPU (A/B; same bits; docs/MODEL.md)\n\n"
          "every command takes --tier exact|fast (sets HMX_TIER for its run; `hmx diff\n"
          "--tier exact --vs fast` compares the two tiers)\n\n"
          "exit status: 0 ok, 1 failure, 2 usage error, 77 (conform) nothing could run\n");
}

/* --tier exact|fast (or --tier=...) anywhere after the command: sets
 * HMX_TIER for this run, which every library call without an explicit tier
 * follows, and is removed from argv. `diff` parses its own --tier (it may
 * compare two tiers). Returns 0, or an exit code after a usage error. */
static int take_tier(int *argc, char **argv) {
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    int used = 1;
    if (strcmp(argv[i], "--tier") == 0) {
      if (i + 1 >= *argc) return hmx_cli_error(HMX_EXIT_USAGE, "--tier needs a value (exact or fast)");
      v = argv[i + 1];
      used = 2;
    } else if (strncmp(argv[i], "--tier=", 7) == 0) {
      v = argv[i] + 7;
    }
    if (!v) {
      argv[out++] = argv[i];
      continue;
    }
    hmx_tier t;
    if (hmx_tier_parse(v, &t) != HMX_OK)
      return hmx_cli_error(HMX_EXIT_USAGE, "--tier '%s': expected exact or fast", v);
    if (setenv("HMX_TIER", v, 1) != 0) return hmx_cli_error(HMX_EXIT_FAIL, "cannot set HMX_TIER");
    i += used - 1;
  }
  argv[out] = NULL;
  *argc = out;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return HMX_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (hmx_is_help(cmd)) {
    if (strcmp(cmd, "help") == 0 && argc > 2) {
      /* "hmx help run" == "hmx run --help" */
      for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, argv[2]) == 0) {
          static char help[] = "--help";
          char *sub[2] = {argv[2], help};
          return commands[i].fn(2, sub);
        }
      return hmx_cli_error(HMX_EXIT_USAGE, "unknown command '%s' (see `hmx --help`)", argv[2]);
    }
    usage(stdout);
    return HMX_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("hmx %s\n", hmx_version_string());
    return HMX_EXIT_OK;
  }
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, cmd) == 0) {
      if (strcmp(cmd, "diff") != 0) {
        int sub = argc - 1, rc = take_tier(&sub, argv + 1);
        if (rc) return rc;
        return commands[i].fn(sub, argv + 1);
      }
      return commands[i].fn(argc - 1, argv + 1);
    }
  return hmx_cli_error(HMX_EXIT_USAGE, "unknown command '%s' (see `hmx --help`)", cmd);
}
