/* hmx bench-model: prefill and decode tokens/s, peak RSS and weight bytes of
 * the model, dense vs Hadamard output projection side by side, and the
 * decode rate as a fraction of the measured memory bandwidth (weight bytes
 * per token). docs/BENCH.md describes the method. */
#define _POSIX_C_SOURCE 200809L
#include "dispatch.h" /* hmx_device_ops_of */
#include "model_opts.h"
#include "rng.h"
#include "read_bandwidth.h" /* hmx_read_bandwidth */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREFILL_REPS 3 /* timed prefills per variant and round, as llama-bench -r 3 */
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void help(FILE *out) {
  fputs("usage: hmx bench-model [--outproj dense|hadamard|both] [--prompt-len N]\n"
        "                       [--decode N] [--backend B] [--threads N] [--tiers both]\n"
        "                       [--llama-bench PATH --gguf FILE] [--repeat N] [--ops]\n"
        "                       [model options]\n\n"
        "For each output projection (default both), in a fresh child process: build the\n"
        "model (synthetic weights unless --weights), prefill N random tokens (default\n"
        "512) in one step, then decode 128 tokens greedily one at a time. Prints prefill\n"
        "and decode tokens/s, the child's peak RSS, the weight bytes, decode weight\n"
        "traffic (weight bytes x tokens/s) as %% of the measured read bandwidth (N threads),\n"
        "and the Hadamard/dense ratios. Prefill: the mean tokens/s of 3 timed prefills\n"
        "(llama-bench -r 3's avg_ts). Warm-ups, as llama-bench's: the timed prefills\n"
        "follow an untimed one of the same tokens; the first decode token is not timed.\n\n"
        "  --backend B      backend (default: HMX_BACKEND or the best available)\n"
        "  --threads N      threads (0 = default)\n"
        "  --tiers both     each variant in the exact and in the fast tier (docs/NUMERICS.md\n"
        "                   \"Fast tier\"), side by side, with the fast/exact ratios and the\n"
        "                   logit difference of the tiers (prefill's last position, then 16\n"
        "                   decode steps fed the exact tier's greedy tokens); default: the\n"
        "                   tier of --tier / HMX_TIER only\n"
        "  --llama-bench P  also run llama.cpp's llama-bench (a build of it, never part of\n"
        "  --gguf FILE      hadamix) on FILE, a GGUF of the same shapes (tools/gguf_random.py),\n"
        "                   with the same threads and lengths (-r 3; its decode at depth\n"
        "                   N, -d N, after a prompt of N tokens like ours; a build without\n"
        "                   -d: the time of -pg N,M less that of -p N), and print its\n"
        "                   tokens/s and our ratios to it\n"
        "  --repeat N       N rounds (default 1), each running every variant and then\n"
        "                   llama-bench, one after the other: prints the medians, the\n"
        "                   range, and the median of the per-round ratios (this machine's\n"
        "                   bandwidth drifts between runs; a round compares neighbours)\n"
        "  --ops            also the prefill's time by step (each step ends where the\n"
        "                   forward pass traces a tensor: ms per prefill over all layers,\n"
        "                   medians of the rounds)\n\n",
        out);
  hmx_model_opts_help(out);
}

#define OPS_MAX 24 /* distinct traced tensors of a forward pass (model_forward.c has 15) */

typedef struct result {
  int ok;
  double prefill_tps, decode_tps;
  double peak_rss_mib, weight_mib;
  int64_t params;
  /* --ops: the timed prefills' time per step, a step ending where the
   * forward pass traces a tensor (ms per prefill, summed over layers) */
  int n_ops;
  char op_name[OPS_MAX][16];
  double op_ms[OPS_MAX];
  char error[256];
} result;

/* The trace callback of --ops: the time since the previous traced tensor
 * (or since the pass began) is charged to this tensor's name. */
typedef struct op_clock {
  result *r;
  double last;
} op_clock;

static int op_trace(void *user, int layer, const char *tensor, const float *data, int64_t rows,
                    int64_t cols) {
  (void)layer, (void)data, (void)rows, (void)cols;
  op_clock *c = user;
  result *r = c->r;
  const double now = hmx_now();
  int i = 0;
  while (i < r->n_ops && strcmp(r->op_name[i], tensor)) i++;
  if (i == r->n_ops && r->n_ops < OPS_MAX) {
    snprintf(r->op_name[i], sizeof r->op_name[i], "%s", tensor);
    r->n_ops++;
  }
  if (i < r->n_ops) r->op_ms[i] += 1e3 * (now - c->last);
  c->last = hmx_now(); /* the callback's own time is charged to no one */
  return 0;
}

/* What the step ending at each traced tensor computes (src/model_forward.c). */
static const char *op_what(const char *tensor, int dense) {
  static const char *const map[][2] = {
      {"embed", "token embedding"},       {"attn_norm", "rmsnorm"},
      {"q", "Q, K, V projections"},       {"k", "(with q)"},
      {"v", "(with q)"},                  {"q_rope", "rope of Q and K"},
      {"k_rope", "(with q_rope)"},        {"attn", "KV cache store, attention"},
      {"resid_attn", "residual add"},     {"ffn_norm", "rmsnorm"},
      {"ffn", "swiglu"},                  {"resid_ffn", "residual add"},
      {"final_norm", "final rmsnorm"},    {"logits", "LM head (last token)"}};
  if (!strcmp(tensor, "attn_out")) return dense ? "output projection (gemm)" : "hadamard_mix";
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i][0], tensor)) return map[i][1];
  return "";
}

static double peak_rss_mib(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru)) return 0;
#ifdef __APPLE__
  return ru.ru_maxrss / 1048576.0; /* bytes */
#else
  return ru.ru_maxrss / 1024.0; /* KiB */
#endif
}

static int want_ops = 0; /* --ops */

static void run_variant(const hmx_model_opts *mo, int outproj, hmx_tier tier,
                        const hmx_backend *be, int threads, int64_t n_prompt, int64_t n_decode,
                        result *r) {
  memset(r, 0, sizeof *r);
  hmx_model_opts o = *mo;
  if (!mo->weights) o.outproj = outproj; /* a file fixes its own */
  hmx_model *m = NULL;
  if (hmx_model_opts_open("bench-model", &o, &m)) {
    snprintf(r->error, sizeof r->error, "cannot build the model");
    return;
  }
  const hmx_model_config *c = hmx_model_get_config(m);
  hmx_param_count pc;
  hmx_model_param_count(c, &pc);
  r->params = pc.total;
  int32_t *toks = malloc((size_t)n_prompt * sizeof *toks);
  float *logits = malloc((size_t)c->vocab * sizeof *logits);
  hmx_kv_cache *cache = NULL;
  hmx_status st = toks && logits ? hmx_kv_cache_new_typed(m, n_prompt + n_decode + 1,
                                                          hmx_model_opts_kv_dtype(&o), &cache)
                                 : HMX_ERR_NO_MEMORY;
  hmx_context ctx = {be, threads, 0, tier};
  if (!st && hmx_model_opts_prepare("bench-model", &o, m, &ctx)) st = HMX_ERR_INVALID_ARGUMENT;
  if (!st) {
    for (int64_t i = 0; i < n_prompt; i++)
      toks[i] = (int32_t)(hmx_rng_u64(7, 0, (uint64_t)i) % (uint64_t)c->vocab);
    const int32_t *tp = toks;
    /* one untimed prefill first, as llama-bench warms up each test: the
     * first pass pays for starting the threads and first-touching every
     * buffer (without it: 506 tokens/s where a loop of prefills in one
     * process reached 645, SmolLM2 bf16, prompt 64) */
    st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &n_prompt, NULL, logits);
    /* then PREFILL_REPS timed prefills from an empty cache and the mean of
     * their tokens/s: llama-bench's avg_ts over its -r 3 repetitions, the
     * same statistic (one timed prefill swung by 20-30% on a shared VM) */
    double tps = 0;
    op_clock clk = {r, 0};
    hmx_forward_opts fo = {0, op_trace, &clk};
    for (int rep = 0; !st && rep < PREFILL_REPS; rep++) {
      st = hmx_kv_cache_truncate(cache, 0);
      const double t0 = hmx_now();
      clk.last = t0;
      if (!st) st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &n_prompt, want_ops ? &fo : NULL,
                                      logits);
      tps += n_prompt / (hmx_now() - t0);
    }
    r->prefill_tps = tps / PREFILL_REPS;
    for (int i = 0; i < r->n_ops; i++) r->op_ms[i] /= PREFILL_REPS;
  }
  double t1 = 0;
  for (int64_t i = 0; !st && i <= n_decode; i++) {
    if (i == 1) t1 = hmx_now(); /* token 0 warms up the decode path */
    int32_t next = 0;
    for (int j = 1; j < c->vocab; j++)
      if (logits[j] > logits[next]) next = j;
    const int32_t *tp = &next;
    int64_t one = 1;
    st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &one, NULL, logits);
  }
  if (!st) {
    r->decode_tps = n_decode / (hmx_now() - t1);
    r->weight_mib = hmx_model_weight_bytes(m) / 1048576.0;
    r->peak_rss_mib = peak_rss_mib();
    r->ok = 1;
  } else
    snprintf(r->error, sizeof r->error, "%s", hmx_cli_status_message(st));
  hmx_kv_cache_free(cache);
  free(toks);
  free(logits);
  hmx_model_free(m);
}

/* A device driver's state does not survive fork(): the child of a process
 * that has probed the GPU gets cudaErrorInitializationError from CUDA. So
 * only a backend without device memory (src/dispatch.h) runs in a child. */
static int fork_safe(const hmx_backend *be) { return hmx_device_ops_of(be) == NULL; }

/* Run in a child so that each variant's peak RSS is its own (in this
 * process for a backend that cannot run in a forked child: then the peak
 * RSS is the process's so far). */
static void run_isolated(const hmx_model_opts *mo, int outproj, hmx_tier tier,
                         const hmx_backend *be, int threads, int64_t n_prompt, int64_t n_decode,
                         result *r) {
  int fd[2];
  if (!fork_safe(be) || pipe(fd)) {
    run_variant(mo, outproj, tier, be, threads, n_prompt, n_decode, r);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    result cr;
    run_variant(mo, outproj, tier, be, threads, n_prompt, n_decode, &cr);
    ssize_t w = write(fd[1], &cr, sizeof cr);
    _exit(w == (ssize_t)sizeof cr ? 0 : 1);
  }
  close(fd[1]);
  memset(r, 0, sizeof *r);
  if (pid < 0) {
    close(fd[0]);
    run_variant(mo, outproj, tier, be, threads, n_prompt, n_decode, r);
    return;
  }
  ssize_t got = read(fd[0], r, sizeof *r);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof *r) {
    memset(r, 0, sizeof *r);
    snprintf(r->error, sizeof r->error, "the benchmark process failed (status %d)", status);
  }
}

/* The logit difference of the fast tier from the exact one: prefill the same
 * n_prompt tokens in both tiers, compare the last position's logits, then 16
 * decode steps feeding both the exact tier's greedy token. Prints one line. */
static void tier_logit_diff(const hmx_model_opts *mo, int outproj, const hmx_backend *be,
                            int threads, int64_t n_prompt) {
  hmx_model_opts o = *mo;
  if (!mo->weights) o.outproj = outproj;
  hmx_model *m = NULL;
  if (hmx_model_opts_open("bench-model", &o, &m)) return;
  const hmx_model_config *c = hmx_model_get_config(m);
  int32_t *toks = malloc((size_t)n_prompt * sizeof *toks);
  float *la = malloc((size_t)c->vocab * sizeof *la), *lb = malloc((size_t)c->vocab * sizeof *lb);
  hmx_kv_cache *ca = NULL, *cb = NULL;
  const hmx_dtype kvdt = hmx_model_opts_kv_dtype(&o);
  hmx_status st = toks && la && lb ? hmx_kv_cache_new_typed(m, n_prompt + 17, kvdt, &ca)
                                   : HMX_ERR_NO_MEMORY;
  if (!st) st = hmx_kv_cache_new_typed(m, n_prompt + 17, kvdt, &cb);
  hmx_context xa = {be, threads, 0, HMX_TIER_EXACT}, xb = {be, threads, 0, HMX_TIER_FAST};
  double max_abs = 0, max_logit = 0, sum_abs = 0;
  int64_t count = 0;
  int agree = 0, steps = 0;
  if (!st) {
    for (int64_t i = 0; i < n_prompt; i++)
      toks[i] = (int32_t)(hmx_rng_u64(7, 0, (uint64_t)i) % (uint64_t)c->vocab);
    const int32_t *tp = toks;
    st = hmx_model_forward(&xa, m, 1, &ca, &tp, &n_prompt, NULL, la);
    if (!st) st = hmx_model_forward(&xb, m, 1, &cb, &tp, &n_prompt, NULL, lb);
  }
  for (int step = 0; !st && step <= 16; step++) {
    int32_t ia = 0, ib = 0;
    for (int j = 0; j < c->vocab; j++) {
      double d = fabs((double)la[j] - (double)lb[j]);
      if (d > max_abs) max_abs = d;
      if (fabs((double)la[j]) > max_logit) max_logit = fabs((double)la[j]);
      sum_abs += d;
      count++;
      if (la[j] > la[ia]) ia = j;
      if (lb[j] > lb[ib]) ib = j;
    }
    agree += ia == ib;
    steps++;
    if (step == 16) break;
    const int32_t *tp = &ia;
    int64_t one = 1;
    st = hmx_model_forward(&xa, m, 1, &ca, &tp, &one, NULL, la);
    if (!st) st = hmx_model_forward(&xb, m, 1, &cb, &tp, &one, NULL, lb);
  }
  if (!st)
    printf("%-9s logits fast vs exact over %d positions (prefill's last + 16 decode steps): max "
           "abs %.3g (%.2g of max |logit| %.3g), mean abs %.3g, top-1 equal %d/%d\n",
           outproj == HMX_OUTPROJ_DENSE ? "dense" : "hadamard", steps, max_abs,
           max_logit > 0 ? max_abs / max_logit : 0.0, max_logit, count ? sum_abs / count : 0.0,
           agree, steps);
  else
    printf("%-9s logit difference: %s\n", outproj == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
           hmx_cli_status_message(st));
  hmx_kv_cache_free(ca);
  hmx_kv_cache_free(cb);
  free(toks);
  free(la);
  free(lb);
  hmx_model_free(m);
}

/* One llama-bench run (-o csv) with extra arguments `args`: the avg_ts of
 * the row whose n_prompt (want_gen = 0) or n_gen (want_gen = 1) is positive
 * and the other zero, or (want_gen = 2) of the row with both positive (a -pg
 * test). Returns 0 on success. */
static int llama_bench_row(const char *exe, const char *gguf, const char *args, int want_gen,
                           double *ts) {
  char cmd[4096];
  /* single quotes around the paths: refuse paths that contain one */
  if (strchr(exe, '\'') || strchr(gguf, '\'')) return -1;
  snprintf(cmd, sizeof cmd, "'%s' -m '%s' %s -r 3 -o csv 2>/dev/null", exe, gguf, args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char line[8192];
  int col_np = -1, col_ng = -1, col_ts = -1, header = 1;
  *ts = 0;
  while (fgets(line, sizeof line, p)) {
    int col = 0;
    long vnp = -1, vng = -1;
    double vts = 0;
    for (char *tok = line, *next; tok; tok = next, col++) {
      next = strchr(tok, ',');
      if (next) *next++ = '\0';
      if (*tok == '"') tok++;
      char *q = strchr(tok, '"');
      if (q) *q = '\0';
      tok[strcspn(tok, "\r\n")] = '\0';
      if (header) {
        if (!strcmp(tok, "n_prompt")) col_np = col;
        if (!strcmp(tok, "n_gen")) col_ng = col;
        if (!strcmp(tok, "avg_ts")) col_ts = col;
      } else if (col == col_np) vnp = atol(tok);
      else if (col == col_ng) vng = atol(tok);
      else if (col == col_ts) vts = atof(tok);
    }
    if (header) {
      header = 0;
      if (col_np < 0 || col_ng < 0 || col_ts < 0) break;
      continue;
    }
    if (!want_gen && vng == 0 && vnp > 0) *ts = vts;
    if (want_gen == 1 && vnp == 0 && vng > 0) *ts = vts;
    if (want_gen == 2 && vnp > 0 && vng > 0) *ts = vts;
  }
  int st = pclose(p);
  return (st != 0 || *ts <= 0) ? -1 : 0;
}

/* llama-bench on the same work as ours: prefill of np tokens from an empty
 * cache, and nd decode steps at depth np (-d: after np tokens, as our decode
 * runs after the prompt). Returns 0 on success. */
static int llama_depth0 = 0; /* set when llama-bench had no -d (decode at depth 0) */
static int llama_pg = 0;     /* set when the decode at depth came from -pg minus -p */

static int run_llama_bench(const char *exe, const char *gguf, int threads, long np, long nd,
                           double *pp, double *tg) {
  char args[256];
  const int t = threads > 0 ? threads : 1;
  snprintf(args, sizeof args, "-t %d -p %ld -n 0", t, np);
  if (llama_bench_row(exe, gguf, args, 0, pp)) return -1;
  snprintf(args, sizeof args, "-t %d -p 0 -n %ld -d %ld", t, nd, np);
  if (!llama_bench_row(exe, gguf, args, 1, tg)) return 0;
  /* A llama-bench older than its -d option (before mid 2025). Its -pg np,nd
   * test prefills np tokens, then decodes nd after them, and reports
   * (np + nd) / (its total time): the decode's time at depth np is that total
   * less the prefill's, np / pp (from the -p run just before). */
  double pg = 0;
  snprintf(args, sizeof args, "-t %d -pg %ld,%ld", t, np, nd);
  if (!llama_bench_row(exe, gguf, args, 2, &pg)) {
    const double t_dec = (double)(np + nd) / pg - (double)np / *pp;
    if (t_dec > 0) {
      *tg = (double)nd / t_dec;
      llama_pg = 1;
      return 0;
    }
  }
  /* else the decode from an empty cache, which favours llama.cpp (less
   * attention work per token) */
  snprintf(args, sizeof args, "-t %d -p 0 -n %ld", t, nd);
  if (llama_bench_row(exe, gguf, args, 1, tg)) return -1;
  llama_depth0 = 1;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0 .. n) (n >= 1; v is sorted in place). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A token count in [1, 2^24]; 0, or a usage error. */
static int parse_count(const char *v, long *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (!*v || *end || x < 1 || x > (1L << 24))
    return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: '%s' is not a token count >= 1", v);
  *out = x;
  return 0;
}

int hmx_cmd_bench_model(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  hmx_model_opts mo;
  hmx_model_opts_init(&mo);
  const char *v = NULL, *which = "both", *llama = NULL, *gguf = NULL;
  const hmx_backend *be = NULL;
  int threads = 0, err = 0, outproj_given = 0, both_tiers = 0;
  long n_prompt = 512, n_decode = 128, repeat = 1;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_args_value(&a, "--outproj", &v, &err)) {
      if (!err) which = v;
      outproj_given = 1;
    } else if (hmx_model_opts_parse(&a, &mo, &err)) {
    } else if (hmx_args_value(&a, "--backend", &v, &err)) {
      if (!err && hmx_parse_backend("bench-model", v, &be)) err = 1;
    } else if (hmx_args_value(&a, "--llama-bench", &v, &err)) {
      if (!err) llama = v;
    } else if (hmx_args_value(&a, "--gguf", &v, &err)) {
      if (!err) gguf = v;
    } else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("bench-model", v, &threads)) err = 1;
    } else if (hmx_args_value(&a, "--tiers", &v, &err)) {
      if (!err && strcmp(v, "both") != 0) {
        hmx_cli_error(HMX_EXIT_USAGE, "bench-model: --tiers '%s': only 'both' (one tier: "
                      "--tier exact|fast)", v);
        err = 1;
      }
      both_tiers = 1;
    } else if (!strcmp(s, "--ops")) {
      want_ops = 1;
      a.i++;
    } else if (hmx_args_value(&a, "--prompt-len", &v, &err)) {
      if (!err && parse_count(v, &n_prompt)) err = 1;
    } else if (hmx_args_value(&a, "--decode", &v, &err)) {
      if (!err && parse_count(v, &n_decode)) err = 1;
    } else if (hmx_args_value(&a, "--repeat", &v, &err)) {
      if (!err && (parse_count(v, &repeat) || repeat > 50)) {
        if (repeat > 50) hmx_cli_error(HMX_EXIT_USAGE, "bench-model: --repeat %ld: at most 50", repeat);
        err = 1;
      }
    } else
      return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: unknown argument '%s'", s);
    if (err) return HMX_EXIT_USAGE;
  }
  /* a file fixes the projection: one run (a GGUF model is dense) */
  if (mo.weights && !outproj_given) which = "dense";
  /* --model FILE.gguf with --llama-bench: llama.cpp runs the same file */
  if (llama && !gguf && mo.weights) {
    FILE *fp = fopen(mo.weights, "rb");
    char magic[4] = {0};
    if (fp && fread(magic, 1, 4, fp) == 4 && !memcmp(magic, "GGUF", 4)) gguf = mo.weights;
    if (fp) fclose(fp);
  }
  /* variants: projections x tiers (both tiers: exact then fast per projection) */
  int variants[4], nv = 0;
  hmx_tier tiers[4];
  const hmx_tier one_tier = hmx_tier_default();
  for (int p = 0; p < 2; p++) {
    const int proj = p ? HMX_OUTPROJ_HADAMARD : HMX_OUTPROJ_DENSE;
    if (strcmp(which, "both") && strcmp(which, p ? "hadamard" : "dense")) continue;
    for (int t = 0; t < (both_tiers ? 2 : 1); t++) {
      variants[nv] = proj;
      tiers[nv++] = both_tiers ? (t ? HMX_TIER_FAST : HMX_TIER_EXACT) : one_tier;
    }
  }
  if (!nv) return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: --outproj '%s' is not dense, "
                                "hadamard or both", which);
  if (mo.weights && nv > (both_tiers ? 2 : 1))
    return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: with --weights the file fixes the "
                         "projection: drop --outproj");
  if (mo.weights) mo.outproj = -1;
  if (!llama != !gguf)
    return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: --llama-bench and --gguf go together");
  if (!be && !(be = hmx_backend_default()))
    return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: %s", hmx_last_error());
  if (!hmx_backend_available(be))
    return hmx_cli_error(HMX_EXIT_FAIL, "bench-model: backend '%s' cannot run here",
                         hmx_backend_name(be));
  if (!mo.weights) {
    hmx_model_config c;
    int rc = hmx_model_opts_config("bench-model", &mo, variants[0], &c);
    if (rc) return rc;
    if (n_prompt + n_decode + 1 > c.context)
      return hmx_cli_error(HMX_EXIT_USAGE, "bench-model: %ld + %ld + 1 tokens exceed the context "
                           "(%d)", n_prompt, n_decode, c.context);
  }
  /* rounds: every variant (a child each), then llama-bench; the medians of
   * the rounds and of the per-round ratios are reported */
  enum { MAXR = 50 };
  static result rr[MAXR][4];
  static double lpp[MAXR], ltg[MAXR];
  int llama_ok = llama != NULL, rc = HMX_EXIT_OK;
  for (int r = 0; r < repeat; r++) {
    for (int i = 0; i < nv; i++)
      run_isolated(&mo, variants[i], tiers[i], be, threads, n_prompt, n_decode, &rr[r][i]);
    if (llama_ok && run_llama_bench(llama, gguf, threads, n_prompt, n_decode, &lpp[r], &ltg[r])) {
      rc = hmx_cli_error(HMX_EXIT_FAIL, "bench-model: running %s on %s failed (or printed no "
                         "pp/tg rows)", llama, gguf);
      llama_ok = 0;
    }
  }
  /* measured after the variants, in the parent: OpenMP threads in the parent
   * before a fork() would hang the children (libgomp is not fork-safe) */
  const double bw = hmx_read_bandwidth(threads);
  printf("hmx bench-model: config %s, %s weights, %s KV cache, backend %s, %d threads, "
         "prompt %ld, decode %ld, %ld round%s, tier %s\nceiling: read bandwidth (%d threads) "
         "%.1f GB/s\n\n",
         mo.weights ? mo.weights : mo.config, mo.weights ? "file" : hmx_dtype_name(
             mo.dtype < 0 ? HMX_F32 : (hmx_dtype)mo.dtype),
         hmx_dtype_name(hmx_model_opts_kv_dtype(&mo)), hmx_backend_name(be), threads,
         n_prompt, n_decode, repeat, repeat > 1 ? "s (medians; decode range)" : "",
         both_tiers ? "exact and fast" : hmx_tier_name(one_tier), threads, bw);
  /* the ceiling is the host's memory: a backend with device kernels (cuda)
   * reads the weights from GPU memory, so its decode %bw would mean nothing */
  const int host_ceiling = hmx_device_ops_of(be) == NULL;
  if (!fork_safe(be))
    printf("(backend %s runs the variants in this process, one after the other: each peak RSS "
           "is the process's peak so far)\n", hmx_backend_name(be));
  if (!host_ceiling)
    printf("(backend %s reads the weights from GPU memory: decode %%bw, against the host's "
           "read bandwidth, is not shown)\n", hmx_backend_name(be));
  printf("%-9s %12s %12s %12s %12s %12s %10s\n", "outproj", "params", "weights MiB",
         "peak RSS MiB", "prefill t/s", "decode t/s", "decode %bw");
  result res[4];
  double pmed[4] = {0}, dmed[4] = {0}, dlo[4] = {0}, dhi[4] = {0};
  for (int i = 0; i < nv; i++) {
    char name[32];
    snprintf(name, sizeof name, "%s%s", variants[i] == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
             both_tiers ? (tiers[i] == HMX_TIER_FAST ? "/fast" : "/exact") : "");
    double pv[MAXR], dv[MAXR], mv[MAXR];
    int ok = 1;
    for (int r = 0; r < repeat; r++) {
      if (!rr[r][i].ok) {
        rc = hmx_cli_error(HMX_EXIT_FAIL, "bench-model: %s: %s", name, rr[r][i].error);
        ok = 0;
        break;
      }
      pv[r] = rr[r][i].prefill_tps;
      dv[r] = rr[r][i].decode_tps;
      mv[r] = rr[r][i].peak_rss_mib;
    }
    res[i] = rr[0][i];
    if (!ok) {
      res[i].ok = 0;
      continue;
    }
    pmed[i] = median(pv, (int)repeat);
    dmed[i] = median(dv, (int)repeat);
    dlo[i] = dv[0];
    dhi[i] = dv[repeat - 1];
    res[i].prefill_tps = pmed[i];
    res[i].decode_tps = dmed[i];
    res[i].peak_rss_mib = median(mv, (int)repeat);
    const double traffic = res[i].weight_mib * 1048576.0 * res[i].decode_tps / 1e9;
    printf("%-9s %11.2fM %12.1f %12.1f %12.1f %12.2f", name, res[i].params / 1e6,
           res[i].weight_mib, res[i].peak_rss_mib, res[i].prefill_tps, res[i].decode_tps);
    if (host_ceiling) printf(" %9.0f%%", bw > 0 ? 100.0 * traffic / bw : 0.0);
    else printf(" %10s", "-");
    if (repeat > 1) printf("   (decode %.2f .. %.2f)", dlo[i], dhi[i]);
    printf("\n");
  }
  if (llama_ok) {
    double pp[MAXR], tg[MAXR];
    memcpy(pp, lpp, sizeof pp);
    memcpy(tg, ltg, sizeof tg);
    printf("%-9s %12s %12s %12s %12.1f %12.2f   (llama-bench, %s; decode at depth %ld)\n",
           "llama.cpp", "", "", "", median(pp, (int)repeat), median(tg, (int)repeat), gguf,
           llama_depth0 ? 0 : n_prompt);
    if (llama_depth0)
      printf("          (this llama-bench has no -d: its decode ran from an empty cache, ours "
             "at depth %ld)\n", n_prompt);
    if (llama_pg)
      printf("          (this llama-bench has no -d: decode at depth %ld = %ld tokens / (time of "
             "-pg %ld,%ld less that of -p %ld))\n", n_prompt, n_decode, n_prompt, n_decode,
             n_prompt);
    for (int i = 0; i < nv; i++) {
      if (!res[i].ok) continue;
      double rp[MAXR], rd[MAXR];
      for (int r = 0; r < repeat; r++) {
        rp[r] = rr[r][i].prefill_tps / lpp[r];
        rd[r] = rr[r][i].decode_tps / ltg[r];
      }
      const double mp = median(rp, (int)repeat), md = median(rd, (int)repeat);
      printf("%-9s %12s %12s %12s %11.2fx %11.2fx   (%s / llama.cpp", "ratio", "", "", "", mp,
             md, variants[i] == HMX_OUTPROJ_DENSE ? "dense" : "hadamard");
      if (repeat > 1)
        printf("; per round: prefill %.2f .. %.2fx, decode %.2f .. %.2fx", rp[0],
               rp[repeat - 1], rd[0], rd[repeat - 1]);
      printf(")\n");
    }
  }
  if (both_tiers) {
    for (int i = 0; i + 1 < nv; i += 2) {
      if (!res[i].ok || !res[i + 1].ok) continue;
      const char *name = variants[i] == HMX_OUTPROJ_DENSE ? "dense" : "hadamard";
      double rp[MAXR], rd[MAXR];
      for (int r = 0; r < repeat; r++) {
        rp[r] = rr[r][i + 1].prefill_tps / rr[r][i].prefill_tps;
        rd[r] = rr[r][i + 1].decode_tps / rr[r][i].decode_tps;
      }
      printf("%-9s %12s %12s %12s %11.2fx %11.2fx   (fast / exact, median of per-round ratios)\n",
             name, "", "", "", median(rp, (int)repeat), median(rd, (int)repeat));
    }
    for (int i = 0; i + 1 < nv; i += 2) tier_logit_diff(&mo, variants[i], be, threads, n_prompt);
  }
  if (!both_tiers && nv == 2 && res[0].ok && res[1].ok)
    printf("%-9s %12.4f %12.4f %12.4f %12.4f %12.4f\n", "had/dense",
           (double)res[1].params / res[0].params, res[1].weight_mib / res[0].weight_mib,
           res[1].peak_rss_mib / res[0].peak_rss_mib, res[1].prefill_tps / res[0].prefill_tps,
           res[1].decode_tps / res[0].decode_tps);
  if (want_ops)
    for (int i = 0; i < nv; i++) {
      if (!res[i].ok) continue;
      printf("\nprefill by step, %s%s (ms per prefill of %ld tokens, all layers; median of "
             "%ld round%s):\n", variants[i] == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
             both_tiers ? (tiers[i] == HMX_TIER_FAST ? "/fast" : "/exact") : "", n_prompt,
             repeat, repeat > 1 ? "s" : "");
      double total = 0, ms[OPS_MAX];
      for (int o = 0; o < res[i].n_ops; o++) {
        double v[MAXR];
        for (int r = 0; r < repeat; r++) {
          int j = 0; /* the same tensor in round r (the order is the same in every round) */
          while (j < rr[r][i].n_ops && strcmp(rr[r][i].op_name[j], res[i].op_name[o])) j++;
          v[r] = j < rr[r][i].n_ops ? rr[r][i].op_ms[j] : 0;
        }
        ms[o] = median(v, (int)repeat);
        total += ms[o];
      }
      for (int o = 0; o < res[i].n_ops; o++)
        printf("  %-11s %9.2f ms %5.1f%%  %s\n", res[i].op_name[o], ms[o],
               total > 0 ? 100.0 * ms[o] / total : 0.0,
               op_what(res[i].op_name[o], variants[i] == HMX_OUTPROJ_DENSE));
    }
  return rc;
}
