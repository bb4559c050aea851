/* hmx diff --tier A --vs B: the same backend in two numerical tiers (exact,
 * fast), for one op on a file's inputs or for a whole model forward pass;
 * prints the distribution of the difference (max/mean abs, ulp histogram)
 * and can plot the histogram as SVG. */
#include "dist.h"
#include "exec.h"
#include "model_opts.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx diff [OP] --tier A --vs B --in FILE [--backend NAME] [--param NAME=VALUE]...\n"
        "                [--threads N] [--plot FILE.svg]\n"
        "       hmx diff --model --tier A --vs B [--backend NAME] [--prompt TEXT | --tokens IDS]\n"
        "                [--threads N] [--plot FILE.svg] [model options]\n\n"
        "A and B are tiers (exact, fast). Runs OP (default: the file's \"op\" metadata) on\n"
        "the inputs of FILE, or one forward pass of the model over the prompt (logits of\n"
        "every position), on one backend (default: the best) in tier A and in tier B, all\n"
        "outputs f32. Prints the distribution of B - A per output: max and mean absolute\n"
        "difference, max relative difference, and the histogram of the distance in\n"
        "binary32 ulps; for the model also the max/mean abs per layer and intermediate\n"
        "tensor, and how many positions keep their top-1 token. --plot writes the\n"
        "histogram (the first output, or the model's logits) as an SVG bar chart.\n\n"
        "exit status: 0 compared (the tiers may differ: that is the measurement), 1 failure,\n"
        "2 usage error\n\n",
        out);
  hmx_model_opts_help(out);
}

typedef struct tier_opts {
  const char *opname, *in, *plot, *prompt, *toklist;
  const hmx_backend *be;
  hmx_tier ta, tb;
  int threads, model;
  const char **params;
  int nparams;
  hmx_model_opts mo;
} tier_opts;

static int parse_tier(const char *v, hmx_tier *t) {
  if (hmx_tier_parse(v, t) != HMX_OK)
    return hmx_cli_error(HMX_EXIT_USAGE, "diff: '%s' is not a tier (exact or fast)", v);
  return 0;
}

/* ------------------------------------------------------------------ op */

static int diff_op(const tier_opts *o) {
  const hmx_opspec *op = NULL;
  hmx_st_file *f = NULL;
  hmx_op_io ioa, iob;
  memset(&ioa, 0, sizeof ioa);
  memset(&iob, 0, sizeof iob);
  int rc = 0;
  if (!o->in) return hmx_cli_error(HMX_EXIT_USAGE, "diff: --in FILE is required (or --model)");
  if (o->opname) rc = hmx_resolve_op("diff", o->opname, NULL, &op);
  if (!rc) rc = hmx_load_file("diff", o->in, &f);
  if (!rc && !op) rc = hmx_resolve_op("diff", NULL, f, &op);
  if (!rc) rc = hmx_prepare("diff", o->in, op, f, o->params, o->nparams, HMX_F32, &ioa);
  if (!rc) rc = hmx_prepare("diff", o->in, op, f, o->params, o->nparams, HMX_F32, &iob);
  if (!rc) rc = hmx_check_runnable("diff", op, o->be, 1);
  if (!rc) rc = hmx_execute("diff", &ioa, o->be, 0, o->threads, o->ta);
  if (!rc) rc = hmx_execute("diff", &iob, o->be, 0, o->threads, o->tb);
  if (!rc) {
    const char *why = NULL;
    const char *uses = hmx_fast_op_kernel(o->be, op->name, &why);
    printf("diff %s on %s, backend %s: A = %s tier, B = %s tier (fast tier kernel: %s%s)\n",
           op->name, o->in, hmx_backend_name(o->be), hmx_tier_name(o->ta),
           hmx_tier_name(o->tb), uses ? uses : "none, the exact one",
           !uses && why ? why : "");
    int plotted = 0;
    for (int i = 0; i < op->nargs && !rc; i++) {
      if (!op->args[i].is_output) continue;
      hmx_dist d;
      hmx_dist_init(&d);
      hmx_dist_add(&d, iob.t[i].data, ioa.t[i].data, hmx_tensor_numel(&ioa.t[i]));
      hmx_dist_print(stdout, op->args[i].name, &d);
      if (o->plot && !plotted) {
        char title[256];
        snprintf(title, sizeof title, "hmx diff %s: %s tier vs %s tier, backend %s (output %s)",
                 op->name, hmx_tier_name(o->tb), hmx_tier_name(o->ta), hmx_backend_name(o->be),
                 op->args[i].name);
        rc = hmx_dist_svg(o->plot, title, &d);
        if (!rc) printf("plot: %s\n", o->plot);
        plotted = 1;
      }
    }
  }
  if (ioa.op) hmx_op_io_free(&ioa);
  if (iob.op) hmx_op_io_free(&iob);
  hmx_st_free(f);
  return rc;
}

/* ------------------------------------------------------------------ model */

typedef struct traced {
  int layer;
  char name[32];
  float *data;
  int64_t n;
} traced;

typedef struct trace_state {
  traced *t;
  int n, cap, at, failed;
  int compare; /* 0: record (run A), 1: compare with the record (run B) */
} trace_state;

static int on_trace(void *user, int layer, const char *tensor, const float *data, int64_t rows,
                    int64_t cols) {
  trace_state *s = user;
  int64_t n = rows * cols;
  if (!s->compare) {
    if (s->n == s->cap) {
      int cap = s->cap ? 2 * s->cap : 64;
      traced *t = realloc(s->t, (size_t)cap * sizeof *t);
      if (!t) return s->failed = 1;
      s->t = t;
      s->cap = cap;
    }
    traced *e = &s->t[s->n];
    e->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!e->data) return s->failed = 1;
    memcpy(e->data, data, (size_t)n * sizeof(float));
    e->layer = layer;
    e->n = n;
    snprintf(e->name, sizeof e->name, "%s", tensor);
    s->n++;
    return 0;
  }
  if (s->at >= s->n || s->t[s->at].n != n || s->t[s->at].layer != layer) return s->failed = 1;
  hmx_dist d;
  hmx_dist_init(&d);
  hmx_dist_add(&d, data, s->t[s->at].data, n);
  char where[16];
  if (layer >= 0) snprintf(where, sizeof where, "%d", layer);
  else snprintf(where, sizeof where, "-");
  printf("  %-5s %-11s %10lld %-12.4g %-12.4g %-10.0f\n", where, tensor, (long long)n, d.max_abs,
         d.n ? d.sum_abs / (double)d.n : 0.0, d.max_ulp);
  s->at++;
  return 0;
}

static int diff_model(const tier_opts *o) {
  int32_t *toks = NULL;
  int64_t n = 0;
  int rc = hmx_prompt_tokens("diff", o->prompt, o->toklist, "hadamix: bits!\n", &toks, &n);
  if (rc) return rc;
  hmx_model *m = NULL;
  rc = hmx_model_opts_open("diff", &o->mo, &m);
  float *la = NULL, *lb = NULL;
  trace_state ts;
  memset(&ts, 0, sizeof ts);
  if (!rc) {
    const hmx_model_config *c = hmx_model_get_config(m);
    size_t nl = (size_t)n * (size_t)c->vocab;
    la = malloc(nl * sizeof(float));
    lb = malloc(nl * sizeof(float));
    if (!la || !lb) rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: out of memory");
    printf("diff --model --tier: %d layers, d %d, %s weights, %lld tokens, backend %s, "
           "%d threads: A = %s tier, B = %s tier\n", c->n_layer, c->d_model,
           hmx_dtype_name(hmx_model_dtype(m)), (long long)n, hmx_backend_name(o->be),
           o->threads, hmx_tier_name(o->ta), hmx_tier_name(o->tb));
    printf("  %-5s %-11s %10s %-12s %-12s %-10s\n", "layer", "tensor", "elements", "max abs",
           "mean abs", "max ulp");
    for (int run = 0; run < 2 && !rc; run++) {
      hmx_context ctx = {o->be, o->threads, 0, run ? o->tb : o->ta};
      hmx_kv_cache *cache = NULL;
      hmx_status st = hmx_kv_cache_new(m, n, &cache);
      hmx_forward_opts fo = {1, on_trace, &ts};
      ts.compare = run;
      const int32_t *tp = toks;
      if (!st) st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &n, &fo, run ? lb : la);
      hmx_kv_cache_free(cache);
      if (st) rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: %s tier: %s", hmx_tier_name(ctx.tier),
                                 hmx_cli_status_message(st));
      else if (ts.failed) rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: the two runs traced different tensors");
    }
    if (!rc) {
      hmx_dist d;
      hmx_dist_init(&d);
      hmx_dist_add(&d, lb, la, (int64_t)nl);
      hmx_dist_print(stdout, "logits (every position)", &d);
      int64_t same = 0;
      for (int64_t p = 0; p < n; p++) {
        const float *a = la + p * c->vocab, *b = lb + p * c->vocab;
        int ia = 0, ib = 0;
        for (int j = 1; j < c->vocab; j++) {
          if (a[j] > a[ia]) ia = j;
          if (b[j] > b[ib]) ib = j;
        }
        same += ia == ib;
      }
      printf("top-1 token equal at %lld of %lld positions\n", (long long)same, (long long)n);
      if (o->plot) {
        char title[256];
        snprintf(title, sizeof title, "hmx diff --model: logits, %s tier vs %s tier, backend %s",
                 hmx_tier_name(o->tb), hmx_tier_name(o->ta), hmx_backend_name(o->be));
        rc = hmx_dist_svg(o->plot, title, &d);
        if (!rc) printf("plot: %s\n", o->plot);
      }
    }
  }
  for (int i = 0; i < ts.n; i++) free(ts.t[i].data);
  free(ts.t);
  free(la);
  free(lb);
  hmx_model_free(m);
  free(toks);
  return rc;
}

int hmx_cmd_diff_tier(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  tier_opts o;
  memset(&o, 0, sizeof o);
  hmx_model_opts_init(&o.mo);
  o.mo.config = "test";
  o.ta = o.tb = HMX_TIER_DEFAULT;
  int err = 0, have_a = 0, have_b = 0;
  const char *v = NULL;
  o.params = malloc(sizeof(char *) * (size_t)(argc > 0 ? argc : 1));
  if (!o.params) return hmx_cli_error(HMX_EXIT_FAIL, "diff: out of memory");
  while (a.i < argc && !err) {
    const char *s = argv[a.i];
    if (hmx_is_help(s) && strcmp(s, "help") != 0) {
      help(stdout);
      free(o.params);
      return HMX_EXIT_OK;
    }
    if (hmx_args_flag(&a, "--model")) o.model = 1;
    else if (hmx_args_value(&a, "--tier", &v, &err)) {
      if (!err && parse_tier(v, &o.ta)) err = 1;
      have_a = 1;
    } else if (hmx_args_value(&a, "--vs", &v, &err)) {
      if (!err && parse_tier(v, &o.tb)) err = 1;
      have_b = 1;
    } else if (hmx_args_value(&a, "--backend", &v, &err)) {
      if (!err && hmx_parse_backend("diff", v, &o.be)) err = 1;
    } else if (hmx_args_value(&a, "--in", &v, &err)) { if (!err) o.in = v; }
    else if (hmx_args_value(&a, "--plot", &v, &err)) { if (!err) o.plot = v; }
    else if (hmx_args_value(&a, "--prompt", &v, &err)) { if (!err) o.prompt = v; }
    else if (hmx_args_value(&a, "--tokens", &v, &err)) { if (!err) o.toklist = v; }
    else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("diff", v, &o.threads)) err = 1;
    } else if (hmx_args_value(&a, "--param", &v, &err)) {
      if (!err) o.params[o.nparams++] = v;
    } else if (hmx_model_opts_parse(&a, &o.mo, &err)) {
    } else if (s[0] == '-' && s[1] != '\0') {
      hmx_cli_error(HMX_EXIT_USAGE, "diff: unknown option '%s' with --tier (see `hmx diff "
                    "--tier exact --vs fast --help`)", s);
      err = 1;
    } else if (o.opname) {
      hmx_cli_error(HMX_EXIT_USAGE, "diff: unexpected argument '%s' (the op is '%s')", s, o.opname);
      err = 1;
    } else {
      o.opname = s;
      a.i++;
    }
  }
  int rc = err ? HMX_EXIT_USAGE : 0;
  if (!rc && (!have_a || !have_b))
    rc = hmx_cli_error(HMX_EXIT_USAGE, "diff: --tier A needs --vs B, both tiers (exact, fast)");
  if (!rc && !o.be) o.be = hmx_backend_default();
  if (!rc && !o.be) rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: %s", hmx_last_error());
  if (!rc && !hmx_backend_available(o.be))
    rc = hmx_cli_unavailable("diff", o.be);
  if (!rc) rc = o.model ? diff_model(&o) : diff_op(&o);
  free(o.params);
  return rc;
}
