/* hmx conform: every backend against the golden vectors, bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include "hmx.h"
#include "exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <dirent.h>
#include <sys/stat.h>
#endif

static void help(FILE *out) {
  fprintf(out, "usage: hmx conform [--backend B|all] [--op OP] [--vectors DIR|FILE] [--threads N] [-v]\n\n"
        "Runs every exact-tier golden vector (*.safetensors in DIR, in name order; metadata\n"
        "\"tier\" = \"exact\", \"op\" = the op) on each selected backend, with no fallback to\n"
        "ref, and compares every output with the expected tensor stored in the vector: the\n"
        "bits must be identical (any NaN equals any NaN). Prints one line per failing case\n"
        "(every case with -v), then a coverage table of backends x ops:\n"
        "  pass n/n      all n vectors passed\n"
        "  FAIL k/n      k of the n vectors failed\n"
        "  missing       the backend has no kernel for the op (never counted as passed)\n"
        "  unavailable   this machine cannot run the backend\n"
        "  no vectors    DIR holds no exact-tier vector for the op\n\n"
        "  --backend B   a backend name, or all (default)\n"
        "  --op OP       only this op (default: all)\n"
        "  --vectors P   a directory of vectors, or one vector file (default: those\n"
        "                installed with this hmx, else the source tree's; here:\n"
        "                %s)\n"
        "  --threads N   threads per run (0 = the backend's default)\n"
        "  -v            one line per case and backend\n\n"
        "exit status: 1 if any case failed or any file could not be read or run; otherwise\n"
        "77 if nothing was executed (only unavailable backends, missing kernels or no\n"
        "vectors: ctest reports \"skipped\"); otherwise 0.\n",
        hmx_cli_default_vectors());
}

/* ---------------------------------------------------------------- listing files */

#if !defined(_WIN32)
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}
#endif

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir), m = strlen(name);
  char *p = malloc(n + m + 2);
  if (!p) return NULL;
  memcpy(p, dir, n);
  size_t k = n;
  if (n && dir[n - 1] != '/') p[k++] = '/';
  memcpy(p + k, name, m + 1);
  return p;
}

static void free_list(char **list, int n) {
  for (int i = 0; i < n; i++) free(list[i]);
  free(list);
}

/* The vector files: the sorted *.safetensors of a directory, or one file. */
static int list_vectors(const char *path, char ***out, int *count) {
  *out = NULL;
  *count = 0;
#if defined(_WIN32)
  if (ends_with(path, ".safetensors")) {
    char **list = malloc(sizeof(char *));
    if (!list || !(list[0] = join("", path))) {
      free(list);
      return hmx_cli_error(HMX_EXIT_FAIL, "conform: out of memory");
    }
    *out = list;
    *count = 1;
    return 0;
  }
  return hmx_cli_error(HMX_EXIT_FAIL, "conform: reading a directory is not supported on Windows "
                       "yet; pass one vector with --vectors FILE");
#else
  struct stat sb;
  if (stat(path, &sb) != 0)
    return hmx_cli_error(HMX_EXIT_FAIL, "conform: %s: %s", path, strerror(errno));
  if (!S_ISDIR(sb.st_mode)) {
    char **list = malloc(sizeof(char *));
    if (!list || !(list[0] = join("", path))) {
      free(list);
      return hmx_cli_error(HMX_EXIT_FAIL, "conform: out of memory");
    }
    *out = list;
    *count = 1;
    return 0;
  }
  DIR *d = opendir(path);
  if (!d) return hmx_cli_error(HMX_EXIT_FAIL, "conform: %s: %s", path, strerror(errno));
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  int oom = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, ".safetensors")) continue;
    if (n == cap) {
      int ncap = cap ? 2 * cap : 64;
      char **nn = realloc(names, sizeof(char *) * (size_t)ncap);
      if (!nn) {
        oom = 1;
        break;
      }
      names = nn;
      cap = ncap;
    }
    if (!(names[n] = join(path, e->d_name))) {
      oom = 1;
      break;
    }
    n++;
  }
  closedir(d);
  if (oom) {
    free_list(names, n);
    return hmx_cli_error(HMX_EXIT_FAIL, "conform: out of memory listing %s", path);
  }
  if (n > 1) qsort(names, (size_t)n, sizeof(char *), cmp_str);
  *out = names;
  *count = n;
  return 0;
#endif
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* ---------------------------------------------------------------- one case */

typedef struct cell {
  int pass, fail;
} cell;

typedef struct conform_opts {
  int verbose;
  int threads;
} conform_opts;

/* Run one vector on one backend and compare. Returns 1 when it passed;
 * otherwise prints one "FAIL" line per problem. */
static int run_case(const conform_opts *o, const char *path, const hmx_st_file *f,
                    const hmx_opspec *op, const hmx_backend *be) {
  const char *bn = hmx_backend_name(be), *fn = base_name(path);
  hmx_op_io io;
  hmx_op_io_init(&io, op);
  hmx_status s = hmx_op_io_load(&io, f);
  if (s == HMX_OK) s = hmx_op_io_alloc_outputs(&io, hmx_expected_dtype(op, f));
  if (s != HMX_OK) {
    printf("FAIL  %-8s %-13s %s: cannot load the vector: %s\n", bn, op->name, fn,
           hmx_cli_status_message(s));
    hmx_op_io_free(&io);
    return 0;
  }
  hmx_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.backend = be;
  ctx.threads = o->threads;
  ctx.allow_ref_fallback = 0;
  ctx.tier = HMX_TIER_EXACT; /* conformance is the exact tier's bit-for-bit check */
  s = hmx_op_io_run(&io, &ctx);
  if (s != HMX_OK) {
    printf("FAIL  %-8s %-13s %s: the run failed: %s\n", bn, op->name, fn,
           hmx_cli_status_message(s));
    hmx_op_io_free(&io);
    return 0;
  }
  int ok = 1;
  int64_t elements = 0;
  for (int a = 0; a < op->nargs; a++) {
    if (!op->args[a].is_output) continue;
    const char *tn = op->args[a].name;
    const hmx_st_tensor *st = hmx_st_find(f, tn);
    if (!st) {
      printf("FAIL  %-8s %-13s %s: the vector has no expected output '%s'\n", bn, op->name, fn,
             tn);
      ok = 0;
      continue;
    }
    hmx_tensor expected = hmx_st_view(st);
    hmx_diff_stats ds;
    s = hmx_compare(&io.t[a], &expected, &ds);
    if (s != HMX_OK) {
      printf("FAIL  %-8s %-13s %s: output '%s': %s\n", bn, op->name, fn, tn,
             hmx_cli_status_message(s));
      ok = 0;
      continue;
    }
    elements += ds.count;
    if (ds.differing) {
      char detail[512];
      hmx_fmt_first_diff(detail, sizeof detail, &io.t[a], &expected, &ds);
      printf("FAIL  %-8s %-13s %s: output '%s': %lld of %lld elements differ; %s\n", bn,
             op->name, fn, tn, (long long)ds.differing, (long long)ds.count, detail);
      ok = 0;
    }
  }
  if (ok && o->verbose)
    printf("pass  %-8s %-13s %s (%lld elements)\n", bn, op->name, fn, (long long)elements);
  hmx_op_io_free(&io);
  return ok;
}

/* ---------------------------------------------------------------- the command */

int hmx_cmd_conform(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  const char *bname = "all", *opname = NULL, *dir = hmx_cli_default_vectors(), *v = NULL;
  conform_opts o = {0, 0};
  int err = 0;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_args_value(&a, "--backend", &v, &err)) { if (!err) bname = v; }
    else if (hmx_args_value(&a, "--op", &v, &err)) { if (!err) opname = v; }
    else if (hmx_args_value(&a, "--vectors", &v, &err)) { if (!err) dir = v; }
    else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("conform", v, &o.threads)) err = 1;
    } else if (hmx_args_flag(&a, "-v") || hmx_args_flag(&a, "--verbose")) {
      o.verbose = 1;
    } else {
      hmx_cli_error(HMX_EXIT_USAGE, "conform: unexpected argument '%s' (see `hmx conform "
                    "--help`)", s);
      err = 1;
    }
    if (err) return HMX_EXIT_USAGE;
  }

  int nb = hmx_backend_count(), nops = hmx_op_count();
  const hmx_backend *single = NULL;
  const hmx_opspec *opsel = NULL;
  if (strcmp(bname, "all") != 0 && hmx_parse_backend("conform", bname, &single))
    return HMX_EXIT_USAGE;
  if (opname && !(opsel = hmx_op_find(opname)))
    return hmx_cli_error(HMX_EXIT_USAGE, "conform: unknown op '%s' (see `hmx ops`)", opname);

  char **files;
  int nfiles;
  if (list_vectors(dir, &files, &nfiles)) return HMX_EXIT_FAIL;

  cell *cells = calloc((size_t)nb * (size_t)nops, sizeof(cell));
  int *nvec = calloc((size_t)nops, sizeof(int));
  if (!cells || !nvec) {
    free(cells);
    free(nvec);
    free_list(files, nfiles);
    return hmx_cli_error(HMX_EXIT_FAIL, "conform: out of memory");
  }
  int file_errors = 0, skipped_tier = 0, executed = 0, failed = 0;

  for (int fi = 0; fi < nfiles; fi++) {
    const char *path = files[fi];
    hmx_st_file *f = NULL;
    hmx_status s = hmx_st_load(path, &f);
    if (s != HMX_OK) {
      char msg[1024];
      hmx_fmt_load_error(msg, sizeof msg, path, s);
      hmx_cli_error(HMX_EXIT_FAIL, "conform: ERROR %s", msg);
      file_errors++;
      continue;
    }
    const char *tier = hmx_st_meta(f, "tier");
    const char *opn = hmx_st_meta(f, "op");
    if (!tier || strcmp(tier, "exact") != 0) {
      skipped_tier++;
      if (o.verbose)
        printf("skip  %s (tier '%s', not exact)\n", base_name(path), tier ? tier : "(none)");
      hmx_st_free(f);
      continue;
    }
    const hmx_opspec *op = opn ? hmx_op_find(opn) : NULL;
    if (!op) {
      if (opn)
        hmx_cli_error(HMX_EXIT_FAIL, "conform: ERROR %s: unknown op '%s' in its \"op\" metadata",
                      path, opn);
      else
        hmx_cli_error(HMX_EXIT_FAIL, "conform: ERROR %s: no \"op\" metadata", path);
      file_errors++;
      hmx_st_free(f);
      continue;
    }
    if (opsel && op != opsel) {
      hmx_st_free(f);
      continue;
    }
    int oi = 0;
    while (oi < nops && hmx_op_at(oi) != op) oi++;
    nvec[oi]++;
    for (int bi = 0; bi < nb; bi++) {
      const hmx_backend *be = hmx_backend_at(bi);
      if (single && be != single) continue;
      if (!hmx_backend_available(be)) {
        if (o.verbose)
          printf("skip  %-8s %-13s %s (unavailable)\n", hmx_backend_name(be), op->name,
                 base_name(path));
        continue;
      }
      if (!hmx_op_implemented(op, be)) {
        if (o.verbose)
          printf("miss  %-8s %-13s %s (missing: no kernel)\n", hmx_backend_name(be), op->name,
                 base_name(path));
        continue;
      }
      executed++;
      if (run_case(&o, path, f, op, be)) {
        cells[bi * nops + oi].pass++;
      } else {
        cells[bi * nops + oi].fail++;
        failed++;
      }
    }
    hmx_st_free(f);
  }

  /* ---- coverage table */
  enum { CELL = 24 };
  char(*text)[CELL] = calloc((size_t)nb * (size_t)nops, CELL);
  int *w = calloc((size_t)nops, sizeof(int));
  if (!text || !w) {
    free(text);
    free(w);
    free(cells);
    free(nvec);
    free_list(files, nfiles);
    return hmx_cli_error(HMX_EXIT_FAIL, "conform: out of memory");
  }
  int wb = 7;
  for (int bi = 0; bi < nb; bi++) {
    int l = (int)strlen(hmx_backend_name(hmx_backend_at(bi)));
    if (l > wb) wb = l;
  }
  printf("\ncoverage (%d vector file%s in %s):\n", nfiles, nfiles == 1 ? "" : "s", dir);
  printf("%-*s", wb, "backend");
  for (int oi = 0; oi < nops; oi++) {
    const hmx_opspec *op = hmx_op_at(oi);
    if (opsel && op != opsel) continue;
    w[oi] = (int)strlen(op->name);
    for (int bi = 0; bi < nb; bi++) {
      const hmx_backend *be = hmx_backend_at(bi);
      if (single && be != single) continue;
      char *t = text[bi * nops + oi];
      const cell *c = &cells[bi * nops + oi];
      if (!hmx_backend_available(be)) snprintf(t, CELL, "unavailable");
      else if (!hmx_op_implemented(op, be)) snprintf(t, CELL, "missing");
      else if (nvec[oi] == 0) snprintf(t, CELL, "no vectors");
      else if (c->fail) snprintf(t, CELL, "FAIL %d/%d", c->fail, c->pass + c->fail);
      else snprintf(t, CELL, "pass %d/%d", c->pass, c->pass + c->fail);
      if ((int)strlen(t) > w[oi]) w[oi] = (int)strlen(t);
    }
  }
  int last = -1;
  for (int oi = 0; oi < nops; oi++)
    if (!opsel || hmx_op_at(oi) == opsel) last = oi;
  for (int oi = 0; oi < nops; oi++)
    if (!opsel || hmx_op_at(oi) == opsel)
      printf("  %-*s", oi == last ? 0 : w[oi], hmx_op_at(oi)->name);
  printf("\n");
  for (int bi = 0; bi < nb; bi++) {
    const hmx_backend *be = hmx_backend_at(bi);
    if (single && be != single) continue;
    printf("%-*s", wb, hmx_backend_name(be));
    for (int oi = 0; oi < nops; oi++)
      if (!opsel || hmx_op_at(oi) == opsel)
        printf("  %-*s", oi == last ? 0 : w[oi], text[bi * nops + oi]);
    printf("\n");
  }
  if (skipped_tier) printf("(%d file%s skipped: tier not \"exact\")\n", skipped_tier,
                           skipped_tier == 1 ? "" : "s");

  int rc;
  if (failed || file_errors) {
    printf("result: FAILED (%d of %d case%s failed, %d file error%s)\n", failed, executed,
           executed == 1 ? "" : "s", file_errors, file_errors == 1 ? "" : "s");
    rc = HMX_EXIT_FAIL;
  } else if (executed == 0) {
    printf("result: nothing executed (selection has only unavailable backends, missing "
           "kernels or no vectors)\n");
    rc = HMX_EXIT_SKIP;
  } else {
    printf("result: ok (%d case%s passed)\n", executed, executed == 1 ? "" : "s");
    rc = HMX_EXIT_OK;
  }
  fflush(stdout);
  free(w);
  free(text);
  free(cells);
  free(nvec);
  free_list(files, nfiles);
  return rc;
}
