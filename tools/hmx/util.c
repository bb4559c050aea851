/* Helpers shared by the hmx subcommands: messages, option parsing, value
 * parsing and formatting. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "hmx.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double hmx_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int hmx_cli_error(int code, const char *fmt, ...) {
  va_list ap;
  fputs("hmx: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return code;
}

int hmx_cli_unavailable(const char *cmd, const hmx_backend *b) {
  const char *why = hmx_backend_unavailable_reason(b);
  return hmx_cli_error(HMX_EXIT_FAIL, "%s: backend '%s' cannot run on this machine%s%s (see "
                       "`hmx info`)", cmd, hmx_backend_name(b), *why ? ": " : "", why);
}

const char *hmx_cli_status_message(hmx_status s) {
  const char *m = hmx_last_error();
  return m && *m ? m : hmx_status_string(s);
}

/* ---------------------------------------------------------------- options */

void hmx_args_init(hmx_args *a, int argc, char **argv) {
  a->argc = argc;
  a->argv = argv;
  a->i = 1;
  a->cmd = argc > 0 ? argv[0] : "hmx";
}

int hmx_args_value(hmx_args *a, const char *name, const char **value, int *err) {
  const char *s = a->argv[a->i];
  size_t n = strlen(name);
  if (strncmp(s, name, n) != 0) return 0;
  if (s[n] == '=') {
    *value = s + n + 1;
    a->i++;
    return 1;
  }
  if (s[n] != '\0') return 0;
  if (a->i + 1 >= a->argc) {
    hmx_cli_error(HMX_EXIT_USAGE, "%s: option %s needs a value (see `hmx %s --help`)", a->cmd,
                  name, a->cmd);
    *err = 1;
    a->i++;
    return 1;
  }
  *value = a->argv[a->i + 1];
  a->i += 2;
  return 1;
}

int hmx_args_flag(hmx_args *a, const char *name) {
  if (strcmp(a->argv[a->i], name) != 0) return 0;
  a->i++;
  return 1;
}

int hmx_is_help(const char *s) {
  return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0 || strcmp(s, "help") == 0;
}

/* ---------------------------------------------------------------- values */

int hmx_parse_threads(const char *cmd, const char *s, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 4096)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: --threads '%s' is not an integer in 0..4096 "
                         "(0 = the backend's default)", cmd, s);
  *out = (int)v;
  return 0;
}

int hmx_parse_dtype_opt(const char *cmd, const char *opt, const char *s, int *out) {
  if (strcmp(s, "f32") == 0) *out = HMX_F32;
  else if (strcmp(s, "bf16") == 0) *out = HMX_BF16;
  else if (strcmp(s, "f16") == 0) *out = HMX_F16;
  else
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: %s '%s' is not one of f32, bf16, f16", cmd, opt,
                         s);
  return 0;
}

int hmx_parse_dtype(const char *cmd, const char *s, int *out) {
  return hmx_parse_dtype_opt(cmd, "--dtype", s, out);
}

const char *hmx_backend_names(void) {
  static char buf[512];
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < hmx_backend_count(); i++) {
    const char *n = hmx_backend_name(hmx_backend_at(i));
    int w = snprintf(buf + used, sizeof buf - used, "%s%s", i ? ", " : "", n);
    if (w < 0 || (size_t)w >= sizeof buf - used) break;
    used += (size_t)w;
  }
  return buf;
}

int hmx_parse_backend(const char *cmd, const char *s, const hmx_backend **out) {
  const hmx_backend *b = hmx_backend_find(s);
  if (!b)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: unknown backend '%s' (known: %s, best)", cmd, s,
                         hmx_backend_names());
  *out = b;
  return 0;
}

int hmx_apply_param(const char *cmd, hmx_op_io *io, const char *assignment) {
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: --param '%s' is not NAME=VALUE", cmd, assignment);
  char name[64];
  size_t n = (size_t)(eq - assignment);
  if (n >= sizeof name)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: --param name too long in '%s'", cmd, assignment);
  memcpy(name, assignment, n);
  name[n] = '\0';
  hmx_status s = hmx_op_io_set_param(io, name, eq + 1);
  if (s != HMX_OK)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: --param: %s", cmd, hmx_cli_status_message(s));
  return 0;
}

/* ---------------------------------------------------------------- formatting */

void hmx_fmt_shape(char *buf, size_t len, int ndim, const int64_t *shape) {
  size_t used = 0;
  if (len == 0) return;
  buf[0] = '\0';
  for (int i = 0; i <= ndim && used < len; i++) {
    int w;
    if (i == ndim) w = snprintf(buf + used, len - used, "]");
    else w = snprintf(buf + used, len - used, "%s%lld", i ? ", " : "[", (long long)shape[i]);
    if (w < 0) return;
    used += (size_t)w;
  }
  if (ndim == 0) snprintf(buf, len, "[]");
}

void hmx_fmt_index(char *buf, size_t len, const hmx_tensor *t, int64_t flat) {
  int64_t idx[HMX_MAX_DIMS] = {0};
  int nd = t->ndim > 0 && t->ndim <= HMX_MAX_DIMS ? t->ndim : 0;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t s = t->shape[d] > 0 ? t->shape[d] : 1;
    idx[d] = flat % s;
    flat /= s;
  }
  hmx_fmt_shape(buf, len, nd, idx);
}

void hmx_fmt_element(char *buf, size_t len, const hmx_tensor *t, int64_t i) {
  const unsigned char *p = (const unsigned char *)t->data + (size_t)i * hmx_dtype_size(t->dtype);
  uint16_t h;
  uint32_t u;
  int32_t i32;
  int64_t i64;
  float f;
  switch (t->dtype) {
  case HMX_F32:
    memcpy(&u, p, 4);
    memcpy(&f, p, 4);
    snprintf(buf, len, "0x%08lx (%.9g)", (unsigned long)u, (double)f);
    break;
  case HMX_BF16:
    memcpy(&h, p, 2);
    snprintf(buf, len, "0x%04x (%.9g)", (unsigned)h, (double)hmx_bf16_to_f32(h));
    break;
  case HMX_F16:
    memcpy(&h, p, 2);
    snprintf(buf, len, "0x%04x (%.9g)", (unsigned)h, (double)hmx_f16_to_f32(h));
    break;
  case HMX_I32:
    memcpy(&i32, p, 4);
    memcpy(&u, p, 4);
    snprintf(buf, len, "0x%08lx (%ld)", (unsigned long)u, (long)i32);
    break;
  case HMX_I64:
    memcpy(&i64, p, 8);
    snprintf(buf, len, "0x%016llx (%lld)", (unsigned long long)i64, (long long)i64);
    break;
  default:
    snprintf(buf, len, "?");
  }
}

void hmx_fmt_first_diff(char *buf, size_t len, const hmx_tensor *got, const hmx_tensor *expected,
                        const hmx_diff_stats *st) {
  if (st->first_index < 0) {
    snprintf(buf, len, "identical");
    return;
  }
  char idx[96], a[64], b[64];
  hmx_fmt_index(idx, sizeof idx, expected, st->first_index);
  hmx_fmt_element(a, sizeof a, got, st->first_index);
  hmx_fmt_element(b, sizeof b, expected, st->first_index);
  snprintf(buf, len, "first differing index %lld %s: got %s, expected %s; max ulp %.0f, "
           "max abs %.9g, max rel %.9g, non-finite mismatches %lld",
           (long long)st->first_index, idx, a, b, st->max_ulp, st->max_abs, st->max_rel,
           (long long)st->nonfinite_mismatch);
}

/* ---------------------------------------------------------------- files and ops */

void hmx_fmt_load_error(char *buf, size_t len, const char *path, hmx_status s) {
  const char *m = hmx_cli_status_message(s);
  if (strstr(m, path)) snprintf(buf, len, "%s", m);
  else snprintf(buf, len, "%s: %s", path, m);
}

int hmx_load_file(const char *cmd, const char *path, hmx_st_file **f) {
  *f = NULL;
  hmx_status s = hmx_st_load(path, f);
  if (s != HMX_OK) {
    char msg[1024];
    *f = NULL;
    hmx_fmt_load_error(msg, sizeof msg, path, s);
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s", cmd, msg);
  }
  return 0;
}

int hmx_resolve_op(const char *cmd, const char *name, const hmx_st_file *f,
                   const hmx_opspec **op) {
  if (name) {
    *op = hmx_op_find(name);
    if (!*op)
      return hmx_cli_error(HMX_EXIT_USAGE, "%s: unknown op '%s' (see `hmx ops`)", cmd, name);
    return 0;
  }
  const char *m = f ? hmx_st_meta(f, "op") : NULL;
  if (!m)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: no OP given and the file has no \"op\" metadata "
                         "(see `hmx ops`)", cmd);
  *op = hmx_op_find(m);
  if (!*op)
    return hmx_cli_error(HMX_EXIT_FAIL, "%s: the file's \"op\" metadata names an unknown op "
                         "'%s' (see `hmx ops`)", cmd, m);
  return 0;
}
