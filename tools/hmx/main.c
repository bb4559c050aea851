/* hmx: the hadamix command-line tool (docs/CLI.md). */
#include "hmx.h"

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
          "  HMX_BACKEND   default backend when --backend is not given (see `hmx info`)\n\n"
          "exit status: 0 ok, 1 failure, 2 usage error, 77 (conform) nothing could run\n");
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
    printf("hmx %d.%d.%d\n", HMX_VERSION_MAJOR, HMX_VERSION_MINOR, HMX_VERSION_PATCH);
    return HMX_EXIT_OK;
  }
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, cmd) == 0) return commands[i].fn(argc - 1, argv + 1);
  return hmx_cli_error(HMX_EXIT_USAGE, "unknown command '%s' (see `hmx --help`)", cmd);
}
