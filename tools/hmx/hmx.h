/* The `hmx` command-line tool: shared declarations of its subcommands and
 * helpers. docs/CLI.md documents every subcommand.
 *
 * Exit status (every subcommand):
 *   0   success (conform: every executed case passed; diff: identical)
 *   1   failure (bad file, failing case, run error, differing outputs)
 *   2   usage error (unknown subcommand/option/op/backend, bad option value)
 *   77  conform only: nothing was executed (only unavailable backends,
 *       missing kernels or no vectors for the selection); ctest: "skipped"
 */
#ifndef HMX_CLI_H
#define HMX_CLI_H

#include "hadamix.h"
#include "op_io.h"
#include "compare.h"

#include <stdio.h>

enum { HMX_EXIT_OK = 0, HMX_EXIT_FAIL = 1, HMX_EXIT_USAGE = 2, HMX_EXIT_SKIP = 77 };

#if defined(__GNUC__) || defined(__clang__)
#define HMX_CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HMX_CLI_PRINTF(a, b)
#endif

/* Subcommands: argv[0] is the subcommand name. */
int hmx_cmd_info(int argc, char **argv);
int hmx_cmd_ops(int argc, char **argv);
int hmx_cmd_run(int argc, char **argv);
int hmx_cmd_conform(int argc, char **argv);
int hmx_cmd_diff(int argc, char **argv);
int hmx_cmd_bench(int argc, char **argv);
int hmx_cmd_params(int argc, char **argv);
int hmx_cmd_generate(int argc, char **argv);
int hmx_cmd_init_weights(int argc, char **argv);
int hmx_cmd_diff_model(int argc, char **argv);
int hmx_cmd_diff_tier(int argc, char **argv);
int hmx_cmd_bench_model(int argc, char **argv);
int hmx_cmd_tokenize(int argc, char **argv);

/* Print "hmx: <message>\n" on stderr and return `code`. */
int hmx_cli_error(int code, const char *fmt, ...) HMX_CLI_PRINTF(2, 3);
/* "CMD: backend 'B' cannot run on this machine: why (see `hmx info`)" on
 * stderr; returns HMX_EXIT_FAIL. */
int hmx_cli_unavailable(const char *cmd, const hmx_backend *b);
/* The library's detail message for `s`, or its status string if none. */
const char *hmx_cli_status_message(hmx_status s);

/* ---- option parsing: "--name VALUE" or "--name=VALUE" ---- */
typedef struct hmx_args {
  int argc;
  char **argv;
  int i;             /* next argument to look at */
  const char *cmd;   /* subcommand name, for messages */
} hmx_args;

void hmx_args_init(hmx_args *a, int argc, char **argv);
/* 1 if argv[i] is the option `name` (e.g. "--in"); sets *value and advances.
 * A missing value prints a usage error and sets *err = 1 (returns 1). */
int hmx_args_value(hmx_args *a, const char *name, const char **value, int *err);
/* 1 if argv[i] is exactly the flag `name`; advances. */
int hmx_args_flag(hmx_args *a, const char *name);
int hmx_is_help(const char *s);

/* ---- parsing values ---- */
/* Non-negative thread count; 0 on success, else prints a usage error. */
int hmx_parse_threads(const char *cmd, const char *s, int *out);
/* "f32", "bf16", "f16": the value of --dtype, or of option `opt`. */
int hmx_parse_dtype(const char *cmd, const char *s, int *out);
int hmx_parse_dtype_opt(const char *cmd, const char *opt, const char *s, int *out);
/* A backend by name ("best" allowed); prints the known names on error. */
int hmx_parse_backend(const char *cmd, const char *s, const hmx_backend **out);
/* "NAME=VALUE" -> applies to io; usage error (exit code 2) on failure. */
int hmx_apply_param(const char *cmd, hmx_op_io *io, const char *assignment);
/* A comma-separated list of known backend names, for messages. */
const char *hmx_backend_names(void);

/* The golden vectors' directory when --vectors is not given: those installed
 * with this executable, else the source tree's (tools/hmx/data_dir.c). */
const char *hmx_cli_default_vectors(void);

/* Monotonic seconds (POSIX clock_gettime), for timings. */
double hmx_now(void);

/* ---- formatting ---- */
/* "[2, 3, 4]" */
void hmx_fmt_shape(char *buf, size_t len, int ndim, const int64_t *shape);
/* Flat row-major index -> "[i, j, k]". */
void hmx_fmt_index(char *buf, size_t len, const hmx_tensor *t, int64_t flat);
/* Element i as "0x3f800000 (1)": its bits in hex and its value. */
void hmx_fmt_element(char *buf, size_t len, const hmx_tensor *t, int64_t i);
/* One line describing the first difference of got vs expected (no newline). */
void hmx_fmt_first_diff(char *buf, size_t len, const hmx_tensor *got, const hmx_tensor *expected,
                        const hmx_diff_stats *st);

/* ---- running an op from a file ---- */
/* Resolve the op: `name` if given, else the file's "op" metadata. Prints
 * the error (usage error for an unknown name) and returns an exit code,
 * or 0 with *op set. */
int hmx_resolve_op(const char *cmd, const char *name, const hmx_st_file *f,
                   const hmx_opspec **op);
/* The library's message for a failed load of `path`, prefixed with "PATH: "
 * unless the message already names it. */
void hmx_fmt_load_error(char *buf, size_t len, const char *path, hmx_status s);
/* Load a safetensors file, printing "hmx: PATH: message" on failure. */
int hmx_load_file(const char *cmd, const char *path, hmx_st_file **f);

#endif
