/* Issue 3's speed targets, judged from one bench run (bench_targets.h). */
#include "bench_targets.h"

#include "canon.h" /* hmx_hadamard_factor_entry */
#include "ref.h"   /* hmx_fwht_split */

#include <string.h>

/* What a target compares. */
typedef enum metric {
  M_PEER,    /* x_peer >= goal */
  M_BW,      /* pct_bw >= goal */
  M_NEIGH,   /* per element no slower than both neighbouring powers of two */
  M_SCALING, /* gemm 2 threads / 1 thread >= goal */
} metric;

/* Context printed beside an M_BW verdict, not judged: the % of memcpy of
 * `impl` on the same op and shape in the same run, named by `label`. */
struct beside_row {
  const char *impl, *label;
};
static const struct beside_row g16_beside = {"avx512", "the [N, K] rows"};

/* One target: `op` on backend `impl`, at each n of `ns` (fwht, exp) or each
 * (M, K, N) of `shapes` (gemm), in L2 (memory 0), from memory (1) or both (-1). */
typedef struct target {
  const char *what; /* printed before the case */
  const char *op, *impl;
  int memory;
  const int64_t *ns;           /* 0-terminated, or NULL */
  const int64_t (*shapes)[3];  /* M = 0 terminates, or NULL */
  metric kind;
  double goal;
  const char *peer; /* names the note printed when the peer did not run */
  const struct beside_row *beside; /* M_BW: a row printed beside the verdict, or NULL */
} target;

static const int64_t n_small[] = {256, 512, 1024, 2048, 4096, 0};
static const int64_t n_large[] = {16384, 32768, 65536, 0};
static const int64_t n_pow2[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 0};
static const int64_t n_all[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 768, 1536, 0};
static const int64_t n_12[] = {768, 1536, 0};
static const int64_t n_lanes16[] = {16, 0};
static const int64_t gemm_model[][3] = {{64, 768, 768},   {64, 768, 2048},  {64, 2048, 768},
                                        {64, 1536, 1536}, {512, 768, 768},  {512, 768, 2048},
                                        {512, 2048, 768}, {512, 1536, 1536}, {0, 0, 0}};
static const int64_t gemm_decode[][3] = {{1, 2048, 2048}, {0, 0, 0}};

/* docs/BENCH.md "Targets" lists the same (issue 3, point 6). */
static const target targets[] = {
    {"fwht avx512 in L2 vs FFHT", "fwht", "avx512", 0, n_small, NULL, M_PEER, 2.5, "ffht", NULL},
    {"fwht avx512 in L2 vs FFHT", "fwht", "avx512", 0, n_large, NULL, M_PEER, 2.0, "ffht", NULL},
    {"fwht avx2 vs FFHT", "fwht", "avx2", -1, n_pow2, NULL, M_PEER, 1.0, "ffht", NULL},
    {"fwht avx512 from memory, % of memcpy", "fwht", "avx512", 1, n_all, NULL, M_BW, 90.0, NULL,
     NULL},
    {"fwht avx512 per element vs 2^k around", "fwht", "avx512", -1, n_12, NULL, M_NEIGH, 1.0,
     NULL, NULL},
    {"gemm avx512 vs oneDNN sgemm", "gemm", "avx512", -1, NULL, gemm_model, M_PEER, 0.85,
     "onednn", NULL},
    /* decode reads a model's projections in the G16 layout (hmx_model_prepare);
     * hmx_gemm on the same weights as [N, K] rows is printed beside it */
    {"gemm avx512 M=1 G16 weights, % of memcpy", "gemm", "avx512/g16", -1, NULL, gemm_decode,
     M_BW, 80.0, NULL, &g16_beside},
    {"gemm avx512 2 threads / 1", "gemm_scaling", "avx512", -1, NULL, gemm_model, M_SCALING, 1.8,
     "scaling", NULL},
    {"exp avx512 vs SLEEF expf16_u10", "exp", "avx512", 0, n_lanes16, NULL, M_PEER, 1.0, "sleef",
     NULL},
};
#define NTARGETS ((int)(sizeof targets / sizeof targets[0]))

static const hmx_bench_result *find(const hmx_bench_result *r, int nr, const char *op,
                                    const char *impl, int64_t n, int memory, const int64_t *shape) {
  for (int i = 0; i < nr; i++) {
    if (strcmp(r[i].op, op) != 0 || strcmp(r[i].impl, impl) != 0) continue;
    if (shape) {
      if (r[i].m == shape[0] && r[i].k == shape[1] && r[i].nn == shape[2]) return &r[i];
    } else if (r[i].n == n && (memory < 0 || r[i].memory == memory)) {
      return &r[i];
    }
  }
  return NULL;
}

/* Whether any result of this run is of `op`. */
static int has_op(const hmx_bench_result *r, int nr, const char *op) {
  for (int i = 0; i < nr; i++)
    if (strcmp(r[i].op, op) == 0) return 1;
  return 0;
}

/* The length of impl's backend name: impl up to its '/' ("avx512/g16" is
 * the avx512 backend). */
static int backend_len(const char *impl) {
  const char *slash = strchr(impl, '/');
  return slash ? (int)(slash - impl) : (int)strlen(impl);
}

/* Whether any result of this run is of impl's backend, whatever its op. */
static int has_backend(const hmx_bench_result *r, int nr, const char *impl) {
  const size_t len = (size_t)backend_len(impl);
  for (int i = 0; i < nr; i++)
    if (strncmp(r[i].impl, impl, len) == 0 && (r[i].impl[len] == '\0' || r[i].impl[len] == '/'))
      return 1;
  return 0;
}

void hmx_bench_fwht_neighbours(int64_t n, int64_t *lo, int64_t *hi) {
  int64_t p = 1;
  while (p * 2 < n) p *= 2;
  *lo = p;
  *hi = p * 2;
}

static const char *peer_note(const target *t, const hmx_bench_notes *notes) {
  const char *s = NULL;
  if (!t->peer || !notes) return "the peer did not run";
  if (strcmp(t->peer, "ffht") == 0) s = notes->ffht;
  else if (strcmp(t->peer, "onednn") == 0) s = notes->onednn;
  else if (strcmp(t->peer, "sleef") == 0) s = notes->sleef;
  else if (strcmp(t->peer, "scaling") == 0) s = notes->scaling;
  return s ? s : "the peer did not run";
}

void hmx_bench_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* Where the verdicts go: the text section, and the JSON array when asked. */
typedef struct sink {
  FILE *out, *json;
  int *json_first;
  hmx_target_tally tally;
} sink;

/* Opens one JSON record of the array (the comma before all but the first). */
static void json_open(sink *k) {
  fprintf(k->json, "%s\n  {", *k->json_first ? "" : ",");
  *k->json_first = 0;
}

/* One verdict: `value` against `goal` (unit "x" or "%"), or not measured
 * when `unmeasured` says why; `detail` (or NULL) is printed after it. In
 * JSON, json_extra (or NULL) adds its members (", \"key\": value" ...). */
static void line(sink *k, const char *what, const char *where, double value, double goal,
                 const char *unit, const char *unmeasured, const char *detail,
                 const char *json_extra) {
  char c_what[96], c_val[32], c_goal[32];
  const int pct = *unit == '%';
  snprintf(c_what, sizeof c_what, "%s %s", what, where);
  snprintf(c_goal, sizeof c_goal, ">= %.*f%s", pct ? 0 : 2, goal, unit);
  const char *verdict = unmeasured ? "not measured" : value >= goal ? "met" : "missed";
  if (k->json) {
    json_open(k);
    fprintf(k->json, "\"record\": \"target\", \"target\": ");
    hmx_bench_json_str(k->json, what);
    fprintf(k->json, ", \"case\": ");
    hmx_bench_json_str(k->json, where);
    if (unmeasured) fprintf(k->json, ", \"value\": null");
    else fprintf(k->json, ", \"value\": %.6g", value);
    fprintf(k->json, ", \"goal\": %.6g, \"unit\": \"%s\", \"verdict\": \"%s\", \"note\": ",
            goal, unit, verdict);
    if (unmeasured || detail) hmx_bench_json_str(k->json, unmeasured ? unmeasured : detail);
    else fprintf(k->json, "null");
    fprintf(k->json, "%s}", unmeasured || !json_extra ? "" : json_extra);
  }
  if (unmeasured) {
    fprintf(k->out, "  %-58s %9s %9s  not measured: %s\n", c_what, "-", c_goal, unmeasured);
    k->tally.unmeasured++;
    return;
  }
  snprintf(c_val, sizeof c_val, "%.*f%s", pct ? 0 : 2, value, unit);
  if (value >= goal) {
    fprintf(k->out, "  %-58s %9s %9s  met%s%s\n", c_what, c_val, c_goal, detail ? " " : "",
            detail ? detail : "");
    k->tally.met++;
  } else {
    fprintf(k->out, "  %-58s %9s %9s  missed by %.*f%s (%.0f%% of the target)%s%s\n", c_what,
            c_val, c_goal, pct ? 0 : 2, goal - value, unit, 100.0 * value / goal,
            detail ? " " : "", detail ? detail : "");
    k->tally.missed++;
  }
}

/* One target at one case (n and memory, or a gemm shape). */
static void judge(sink *k, const target *t, const hmx_bench_result *r, int nr, int64_t n,
                  int memory, const int64_t *shape, const hmx_bench_notes *notes) {
  char where[64];
  if (shape)
    snprintf(where, sizeof where, "M=%lld K=%lld N=%lld", (long long)shape[0],
             (long long)shape[1], (long long)shape[2]);
  else if (strcmp(t->op, "exp") == 0)
    snprintf(where, sizeof where, "%lld lanes", (long long)n);
  else
    snprintf(where, sizeof where, "n=%lld%s", (long long)n,
             t->memory >= 0 ? "" : memory ? " memory" : " L2");
  const char *unit = t->kind == M_BW ? "%" : "x";
  const hmx_bench_result *x = find(r, nr, t->op, t->impl, n, memory, shape);
  if (!x) {
    /* the vector exp rows exist only where SLEEF was built in and the CPU
     * has the ISA: their absence has the peer's reason */
    const int sleef = t->peer && strcmp(t->peer, "sleef") == 0;
    /* a backend with no rows at all did not run: say so, not that one row
     * is missing (avx512 targets on an AVX2-only CPU) */
    char why[128] = "no such row in this run";
    if (!sleef && !has_backend(r, nr, t->impl))
      snprintf(why, sizeof why,
               "no %.*s rows in this run (the backend is not available on this CPU, or not selected)",
               backend_len(t->impl), t->impl);
    line(k, t->what, where, 0, t->goal, unit, sleef ? peer_note(t, notes) : why, NULL, NULL);
    return;
  }
  switch (t->kind) {
  case M_PEER: {
    /* how much the pairs agreed: a verdict within their middle half is one a
     * quieter stretch of the machine could turn */
    char d[64] = "", j[96] = "";
    if (x->x_peer > 0 && x->peer_q1 > 0 && x->peer_q3 > 0) {
      snprintf(d, sizeof d, "(pairs' middle half %.2f-%.2fx)", x->peer_q1, x->peer_q3);
      snprintf(j, sizeof j, ", \"pairs_q1\": %.6g, \"pairs_q3\": %.6g", x->peer_q1, x->peer_q3);
    }
    line(k, t->what, where, x->x_peer, t->goal, unit,
         x->x_peer > 0 ? NULL : x->peer_note ? x->peer_note : peer_note(t, notes), *d ? d : NULL,
         j);
    return;
  }
  case M_BW: {
    char d[224] = "", j[160] = "";
    const int reads = x->pct_read_in_order > 0 && x->pct_read_16_rows > 0;
    /* context, not judged: the target's `beside` row (for the G16 row,
     * hmx_gemm on the [N, K] rows) in the same run */
    const hmx_bench_result *rows =
        t->beside ? find(r, nr, t->op, t->beside->impl, n, memory, shape) : NULL;
    if (rows && rows->pct_bw > 0) {
      snprintf(d, sizeof d, "(%s: %.0f%%", t->beside->label, rows->pct_bw);
      snprintf(j, sizeof j, ", \"beside_impl\": \"%s\", \"beside_pct\": %.6g", t->beside->impl,
               rows->pct_bw);
    }
    if (reads) {
      snprintf(d + strlen(d), sizeof d - strlen(d),
               "%sthe same bytes only read, same rounds: in order %.0f%%, 16 rows at a time %.0f%%",
               *d ? "; " : "(", x->pct_read_in_order, x->pct_read_16_rows);
      snprintf(j + strlen(j), sizeof j - strlen(j),
               ", \"read_in_order_pct\": %.6g, \"read_16_rows_pct\": %.6g", x->pct_read_in_order,
               x->pct_read_16_rows);
    }
    if (*d) snprintf(d + strlen(d), sizeof d - strlen(d), ")");
    line(k, t->what, where, x->pct_bw, t->goal, unit, x->pct_bw >= 0 ? NULL : "no memcpy probe",
         *d ? d : NULL, j);
    return;
  }
  case M_SCALING: {
    char d[96], j[128];
    if (x->x_peer > 0) /* context, not judged: the issue asks 1.8x of us alone */
      snprintf(d, sizeof d, "(rounds %.2f-%.2f; oneDNN %.2fx in the same rounds)", x->lo, x->hi,
               x->x_peer);
    else
      snprintf(d, sizeof d, "(rounds %.2f-%.2f)", x->lo, x->hi);
    snprintf(j, sizeof j, ", \"rounds_lo\": %.6g, \"rounds_hi\": %.6g, \"onednn\": %.6g", x->lo,
             x->hi, x->x_peer > 0 ? x->x_peer : -1.0);
    line(k, t->what, where, x->value, t->goal, unit, x->value > 0 ? NULL : "not run", d, j);
    return;
  }
  case M_NEIGH: {
    int64_t lo, hi;
    hmx_bench_fwht_neighbours(n, &lo, &hi);
    double ra, rb;
    const char *how;
    if (x->per_elem_lo > 0 && x->per_elem_hi > 0) {
      /* runs paired with each neighbour: the same state of the machine */
      ra = x->per_elem_lo, rb = x->per_elem_hi, how = "paired runs: ";
    } else {
      /* the rows' medians, measured minutes apart */
      const hmx_bench_result *a = find(r, nr, t->op, t->impl, lo, memory, NULL);
      const hmx_bench_result *b = find(r, nr, t->op, t->impl, hi, memory, NULL);
      if (!a || !b || a->gbs <= 0 || b->gbs <= 0) {
        line(k, t->what, where, 0, t->goal, unit, "a neighbour's row is missing", NULL, NULL);
        return;
      }
      ra = x->gbs / a->gbs, rb = x->gbs / b->gbs, how = "";
    }
    char d[160], ops[64] = "", j[224];
    if (x->ops_lo > 0 && x->ops_hi > 0) /* why: the operations an element */
      snprintf(ops, sizeof ops, "; vector operations allow %.2fx, %.2fx", x->ops_lo, x->ops_hi);
    snprintf(d, sizeof d, "(%svs %lld %.2fx, vs %lld %.2fx%s)", how, (long long)lo, ra,
             (long long)hi, rb, ops);
    snprintf(j, sizeof j,
             ", \"paired\": %s, \"n_lo\": %lld, \"vs_lo\": %.6g, \"n_hi\": %lld, \"vs_hi\": %.6g, "
             "\"allow_lo\": %.6g, \"allow_hi\": %.6g",
             *how ? "true" : "false", (long long)lo, ra, (long long)hi, rb,
             x->ops_lo > 0 ? x->ops_lo : -1.0, x->ops_hi > 0 ? x->ops_hi : -1.0);
    line(k, t->what, where, ra < rb ? ra : rb, t->goal, unit, NULL, d, j);
    return;
  }
  }
}

/* The x86 kernels' vector operations per vector of `lanes` (8: avx2, 16:
 * avx512) of a row n = m * 2^L (simd/x86/fwht_x86.h), all on the vector
 * ALU ports: stride 1 one fma fed by two duplicating loads, every other
 * stride inside the register a shuffle and an fma, one add or subtract per
 * stage across registers, the m-point sums, one multiply by the scale when
 * scale_mul (not at scale 1, where the kernels skip it). The
 * m-point sums of rows of H_m whose signs start alike share their partial
 * sums (the same operations in the same order: the compiler merges them), so
 * an output costs (distinct sign prefixes of length 2 .. m) / m operations,
 * plus one negation of u[0] shared by the rows that start - -. 0 when the
 * blocks are shorter than a vector. */
double hmx_bench_fwht_vector_ops(int64_t n, int lanes, int scale_mul) {
  int m;
  int64_t p;
  if (!hmx_fwht_split(n, 0, &m, &p)) return 0; /* the factor hmx_fwht takes */
  int L = 0, lw = 0;
  while (((int64_t)1 << L) < p) L++;
  while ((1 << lw) < lanes) lw++;
  if (lw < 1 || L < lw) return 0; /* blocks shorter than a vector: another schedule */
  double ops = 1 + 2.0 * (lw - 1) + (L - lw) + (scale_mul ? 1 : 0);
  if (m > 1) {
    /* rows r sharing the prefix of length k with an earlier row add nothing there */
    const int mi = m;
    int adds = 0, neg = 0;
    for (int k = 2; k <= mi; k++)
      for (int r = 0; r < mi; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++) {
          int same = 1;
          for (int c = 0; c < k && same; c++)
            same = hmx_hadamard_factor_entry(mi, r, c) == hmx_hadamard_factor_entry(mi, q, c);
          seen = same;
        }
        adds += !seen;
      }
    for (int r = 0; r < mi; r++)
      neg |= hmx_hadamard_factor_entry(mi, r, 0) < 0 && hmx_hadamard_factor_entry(mi, r, 1) < 0;
    ops += (double)(adds + neg) / (double)m;
  }
  return ops;
}

/* The section's one JSON record beside the verdicts: the tally, or why
 * nothing was judged. */
static void json_summary(sink *k, const char *not_judged) {
  if (!k->json) return;
  json_open(k);
  fprintf(k->json, "\"record\": \"targets\", ");
  if (not_judged) {
    fprintf(k->json, "\"verdict\": \"not judged\", \"note\": ");
    hmx_bench_json_str(k->json, not_judged);
  } else {
    fprintf(k->json, "\"met\": %d, \"missed\": %d, \"not_measured\": %d", k->tally.met,
            k->tally.missed, k->tally.unmeasured);
  }
  fprintf(k->json, "}");
}

hmx_target_tally hmx_bench_targets_print(FILE *out, FILE *json, int *json_first,
                                         const hmx_bench_result *r, int nr,
                                         const hmx_bench_notes *notes) {
  sink k = {out, json_first ? json : NULL, json_first, {0, 0, 0}};
  /* Only targets whose op this run measured (on any backend) are listed. */
  int any = 0;
  for (int t = 0; t < NTARGETS; t++) any |= has_op(r, nr, targets[t].op);
  if (!any) return k.tally;
  int threads = 1;
  for (int i = 0; i < nr; i++)
    if (strcmp(r[i].op, "exp") != 0 && r[i].threads != 1) threads = r[i].threads;
  fprintf(out, "\ntargets (issue 3: one thread, fp32; the ratios of the rows above)\n");
  if (threads != 1) {
    char why[96];
    snprintf(why, sizeof why, "this run used %d threads; the targets are for --threads 1",
             threads);
    fprintf(out, "  not judged: %s\n", why);
    json_summary(&k, why);
    return k.tally;
  }
  if (notes && notes->not_judged) {
    fprintf(out, "  not judged: %s\n", notes->not_judged);
    json_summary(&k, notes->not_judged);
    return k.tally;
  }
  for (int t = 0; t < NTARGETS; t++) {
    const target *g = &targets[t];
    /* gemm_scaling: judged wherever gemm ran */
    if (!has_op(r, nr, g->op) && !(strcmp(g->op, "gemm_scaling") == 0 && has_op(r, nr, "gemm")))
      continue;
    if (g->shapes) {
      for (int s = 0; g->shapes[s][0]; s++) {
        const int64_t *sh = g->shapes[s];
        int seen = 0; /* shapes no gemm of this run had (--size small) are left out */
        for (int i = 0; i < nr; i++)
          seen |= strcmp(r[i].op, "gemm") == 0 && r[i].m == sh[0] && r[i].k == sh[1] &&
                  r[i].nn == sh[2];
        if (seen) judge(&k, g, r, nr, 0, -1, sh, notes);
      }
      continue;
    }
    for (int s = 0; g->ns[s]; s++) {
      /* sizes this run did not measure at all (--size small) are left out */
      int seen = 0;
      for (int i = 0; i < nr; i++) seen |= strcmp(r[i].op, g->op) == 0 && r[i].n == g->ns[s];
      if (!seen && strcmp(g->op, "exp") != 0) continue; /* exp: lanes, not sizes */
      if (g->memory >= 0) judge(&k, g, r, nr, g->ns[s], g->memory, NULL, notes);
      else
        for (int mem = 0; mem < 2; mem++) judge(&k, g, r, nr, g->ns[s], mem, NULL, notes);
    }
  }
  fprintf(out, "  %d met, %d missed, %d not measured\n", k.tally.met, k.tally.missed,
          k.tally.unmeasured);
  json_summary(&k, NULL);
  return k.tally;
}
