/* Options shared by the model subcommands (params, generate, diff --model,
 * bench-model, init-weights): which model, from a file or synthesized. */
#ifndef HMX_CLI_MODEL_OPTS_H
#define HMX_CLI_MODEL_OPTS_H

#include "hmx.h"
#include "hadamix_model.h"

#define HMX_MODEL_MAX_SETS 32

typedef struct hmx_model_opts {
  const char *weights;  /* --weights FILE (else synthetic) */
  const char *config;   /* --config PRESET (default "tiny") */
  int config_given;     /* --config was on the command line */
  int outproj;          /* --outproj dense|hadamard; -1: dense */
  int dtype;            /* --dtype f32|bf16|f16 of synthetic weights; -1: f32 */
  uint64_t weights_seed;/* --weights-seed N */
  const char *sets[HMX_MODEL_MAX_SETS]; /* --set KEY=VALUE */
  int nsets;
  int rows_layout;      /* --weight-layout rows: skip hmx_model_prepare */
  int kv_dtype;         /* --kv-dtype f32|bf16|f16 of generate's and bench-model's KV
                           cache; -1: f32 */
} hmx_model_opts;

void hmx_model_opts_init(hmx_model_opts *o);
/* If argv[a->i] is a model option, consume it and return 1 (*err = 1 after
 * printing a usage error); else return 0. */
int hmx_model_opts_parse(hmx_args *a, hmx_model_opts *o, int *err);
/* The config of the options (preset, outproj, --set), or an exit code. */
int hmx_model_opts_config(const char *cmd, const hmx_model_opts *o, int outproj,
                          hmx_model_config *cfg);
/* Load --weights or synthesize; prints errors; returns an exit code. */
int hmx_model_opts_open(const char *cmd, const hmx_model_opts *o, hmx_model **m);
/* hmx_model_prepare for ctx unless --weight-layout rows; prints errors;
 * returns an exit code (generate and bench-model call it). */
int hmx_model_opts_prepare(const char *cmd, const hmx_model_opts *o, hmx_model *m,
                           const hmx_context *ctx);
/* The KV cache dtype of the options (--kv-dtype; f32 when not given). */
hmx_dtype hmx_model_opts_kv_dtype(const hmx_model_opts *o);
/* The help text of these options. */
void hmx_model_opts_help(FILE *out);

/* The prompt's token ids (malloc'ed): --tokens "1,2,3" when given, else the
 * bytes of --prompt TEXT, or of `fallback` (the default byte-level
 * vocabulary: byte b is token b). Exit code on error, 0 on success. */
int hmx_prompt_tokens(const char *cmd, const char *prompt, const char *toklist,
                      const char *fallback, int32_t **ids, int64_t *n);

#endif
