/* hmx bench's targets section (tools/hmx/bench_targets.c) on made-up
 * results: each verdict (met, missed by how much, not measured and why)
 * and the cases that must not be judged. No timing happens here. */
#include "bench_targets.h"

#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if HMX_HAVE_CJSON
#include <cjson/cJSON.h>
#endif

/* The section for r[0..nr) as a string (static buffer) and its tally. */
static const char *section(const hmx_bench_result *r, int nr, const hmx_bench_notes *notes,
                           hmx_target_tally *tally) {
  static char text[16384];
  FILE *f = tmpfile();
  if (!f) {
    fprintf(stderr, "tmpfile failed\n");
    exit(1);
  }
  *tally = hmx_bench_targets_print(f, NULL, NULL, r, nr, notes);
  rewind(f);
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = 0;
  fclose(f);
  return text;
}

static hmx_bench_result fwht(const char *impl, int64_t n, int memory, double x_peer,
                             double pct_bw, double gbs) {
  hmx_bench_result x;
  memset(&x, 0, sizeof x);
  x.op = "fwht";
  snprintf(x.impl, sizeof x.impl, "%s", impl);
  x.threads = 1;
  x.n = n;
  x.memory = memory;
  x.x_peer = x_peer;
  x.pct_bw = pct_bw;
  x.gbs = gbs;
  return x;
}

#if HMX_HAVE_CJSON
/* The section's JSON records for r[0..nr), parsed as the array `hmx bench
 * --json` wraps them in (the caller deletes it), or NULL when not valid
 * JSON; *tally is the section's. */
static cJSON *section_json(const hmx_bench_result *r, int nr, const hmx_bench_notes *notes,
                           hmx_target_tally *tally) {
  static char text[32768];
  FILE *out = tmpfile(), *json = tmpfile();
  if (!out || !json) {
    fprintf(stderr, "tmpfile failed\n");
    exit(1);
  }
  int first = 1;
  fprintf(json, "[");
  *tally = hmx_bench_targets_print(out, json, &first, r, nr, notes);
  fprintf(json, "\n]\n");
  rewind(json);
  const size_t len = fread(text, 1, sizeof text - 1, json);
  text[len] = 0;
  fclose(out);
  fclose(json);
  cJSON *a = cJSON_Parse(text);
  if (!a) fprintf(stderr, "not JSON:\n%s\n", text);
  return a;
}

/* The record whose "case" contains `where` and "target" contains `what`. */
static const cJSON *record_of(const cJSON *a, const char *what, const char *where) {
  const cJSON *x;
  cJSON_ArrayForEach(x, a) {
    const cJSON *t = cJSON_GetObjectItem(x, "target"), *c = cJSON_GetObjectItem(x, "case");
    if (cJSON_IsString(t) && cJSON_IsString(c) && strstr(t->valuestring, what) &&
        strstr(c->valuestring, where))
      return x;
  }
  return NULL;
}

static double num(const cJSON *x, const char *key) {
  const cJSON *v = x ? cJSON_GetObjectItem(x, key) : NULL;
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *x, const char *key) {
  const cJSON *v = x ? cJSON_GetObjectItem(x, key) : NULL;
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* `hmx bench --json`'s target records: one per verdict with its numbers,
 * then the tally; or "not judged" alone. */
static void check_json(hmx_bench_notes notes) {
  hmx_bench_result r[8];
  int nr = 0;
  hmx_target_tally t;
  r[nr++] = fwht("avx512", 256, 0, 2.36, 150, 40);
  r[0].peer_q1 = 2.21, r[0].peer_q3 = 2.58;
  r[nr++] = fwht("avx2", 256, 0, -1, 100, 25); /* the peer did not run */
  r[nr] = fwht("avx512", 768, 0, -1, 100, 10.0);
  r[nr].per_elem_lo = 0.69, r[nr].per_elem_hi = 0.74, r[nr].ops_lo = 0.67, r[nr].ops_hi = 0.72;
  nr++;
  hmx_bench_result g;
  memset(&g, 0, sizeof g);
  g.op = "gemm";
  g.threads = 1;
  g.m = 1, g.k = 2048, g.nn = 2048;
  snprintf(g.impl, sizeof g.impl, "avx512/g16");
  g.pct_bw = 69, g.pct_read_in_order = 52, g.pct_read_16_rows = 56;
  r[nr++] = g;
  snprintf(g.impl, sizeof g.impl, "avx512");
  g.pct_bw = 66, g.pct_read_in_order = 0, g.pct_read_16_rows = 0;
  r[nr++] = g;
  g.m = 512, g.k = 768, g.nn = 2048; /* the scaling target's shapes are those gemm ran */
  g.pct_bw = -1, g.x_peer = 0.9;
  r[nr++] = g;
  g.op = "gemm_scaling";
  g.value = 1.45, g.lo = 1.4, g.hi = 1.5, g.x_peer = 1.47;
  r[nr++] = g;
  /* a note the JSON must escape: quotes, a backslash, a newline */
  notes.ffht = "FFHT \"not\" at C:\\ffht\nsee --ffht";
  cJSON *a = section_json(r, nr, &notes, &t);
  CHECK(cJSON_IsArray(a), "the target records are not a JSON array");
  if (!a) return;
  const int n = cJSON_GetArraySize(a);
  CHECK(n == t.met + t.missed + t.unmeasured + 1, "%d records for %d verdicts", n,
        t.met + t.missed + t.unmeasured);
  const cJSON *x;
  int bad = 0;
  cJSON_ArrayForEach(x, a) { /* value null exactly when not measured */
    if (strcmp(str(x, "record"), "target") != 0) continue;
    const int unmeasured = strcmp(str(x, "verdict"), "not measured") == 0;
    bad |= unmeasured != cJSON_IsNull(cJSON_GetObjectItem(x, "value"));
    bad |= !unmeasured && (num(x, "value") >= num(x, "goal")) !=
                              (strcmp(str(x, "verdict"), "met") == 0);
  }
  CHECK(!bad, "a record's value and verdict disagree");
  x = record_of(a, "avx512 in L2 vs FFHT", "n=256");
  CHECK(x && strcmp(str(x, "verdict"), "missed") == 0 && num(x, "value") == 2.36 &&
            num(x, "goal") == 2.5 && strcmp(str(x, "unit"), "x") == 0 &&
            num(x, "pairs_q1") == 2.21 && num(x, "pairs_q3") == 2.58,
        "fwht 256 record");
  x = record_of(a, "avx2 vs FFHT", "n=256 L2");
  CHECK(x && strcmp(str(x, "note"), notes.ffht) == 0, "the escaped note: %s", str(x, "note"));
  x = record_of(a, "per element", "n=768 L2");
  CHECK(x && cJSON_IsTrue(cJSON_GetObjectItem(x, "paired")) && num(x, "n_lo") == 512 &&
            num(x, "vs_lo") == 0.69 && num(x, "n_hi") == 1024 && num(x, "vs_hi") == 0.74 &&
            num(x, "allow_lo") == 0.67 && num(x, "allow_hi") == 0.72 && num(x, "value") == 0.69,
        "768 record");
  x = record_of(a, "M=1 G16", "M=1 K=2048 N=2048");
  CHECK(x && num(x, "value") == 69 && strcmp(str(x, "unit"), "%") == 0 &&
            strcmp(str(x, "beside_impl"), "avx512") == 0 && num(x, "beside_pct") == 66 &&
            num(x, "read_in_order_pct") == 52 && num(x, "read_16_rows_pct") == 56,
        "G16 record");
  x = record_of(a, "2 threads / 1", "M=512 K=768 N=2048");
  CHECK(x && num(x, "value") == 1.45 && num(x, "rounds_lo") == 1.4 && num(x, "rounds_hi") == 1.5 &&
            num(x, "onednn") == 1.47,
        "scaling record");
  x = cJSON_GetArrayItem(a, n - 1);
  CHECK(strcmp(str(x, "record"), "targets") == 0 && num(x, "met") == t.met &&
            num(x, "missed") == t.missed && num(x, "not_measured") == t.unmeasured,
        "the tally record");
  cJSON_Delete(a);
  /* not judged: that record alone */
  r[0].threads = 2;
  a = section_json(r, 1, &notes, &t);
  CHECK(a && cJSON_GetArraySize(a) == 1 &&
            strcmp(str(cJSON_GetArrayItem(a, 0), "verdict"), "not judged") == 0 &&
            strstr(str(cJSON_GetArrayItem(a, 0), "note"), "2 threads"),
        "not judged record");
  cJSON_Delete(a);
}
#endif

/* The line of the section that contains every one of a, b (NULL: any). */
static int has_line(const char *text, const char *a, const char *b) {
  const char *p = text;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char buf[512];
    if (len >= sizeof buf) len = sizeof buf - 1;
    memcpy(buf, p, len);
    buf[len] = 0;
    if (strstr(buf, a) && (!b || strstr(buf, b))) return 1;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

/* Lines of the section that contain `what`. */
static int count_lines(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* The tally agrees with the verdicts printed. */
static int tally_matches(const char *s, hmx_target_tally t) {
  return count_lines(s, "  met") == t.met && count_lines(s, "  missed by ") == t.missed &&
         count_lines(s, "  not measured: ") == t.unmeasured &&
         (t.met + t.missed + t.unmeasured == 0 ||
          strstr(s, "met, ") != NULL);
}

int main(void) {
  hmx_bench_notes notes = {"no --ffht", "no --onednn", "no sleef", "no scaling", NULL};
  hmx_target_tally t;
  const char *s;

  /* fwht in L2 against FFHT: 2.5x below 16384, 2x from 16384 */
  hmx_bench_result r[16];
  int nr = 0;
  r[nr++] = fwht("avx512", 256, 0, 2.36, 150, 40);
  r[nr++] = fwht("avx512", 1024, 0, 2.60, 140, 33);
  r[nr++] = fwht("avx512", 16384, 0, 2.01, 110, 28);
  r[nr++] = fwht("avx2", 256, 0, -1, 100, 25); /* the peer did not run */
  s = section(r, nr, &notes, &t);
  CHECK(t.met == 2 && t.missed == 1, "tally %d met %d missed:\n%s", t.met, t.missed, s);
  CHECK(has_line(s, "n=256", "missed by 0.14x (94% of the target)"), "%s", s);
  CHECK(has_line(s, "n=1024", "met"), "%s", s);
  CHECK(has_line(s, "n=16384", ">= 2.00x  met"), "2x from 16384:\n%s", s);
  CHECK(has_line(s, "avx2 vs FFHT n=256 L2", "not measured: no --ffht"), "%s", s);
  /* avx2 from memory: no row at all */
  CHECK(has_line(s, "avx2 vs FFHT n=256 memory", "no such row"), "%s", s);
  CHECK(tally_matches(s, t), "tally %d %d %d:\n%s", t.met, t.missed, t.unmeasured, s);
  /* no quartiles (ratios of medians): no spread printed; with them, the
   * pairs' middle half follows the verdict */
  CHECK(!has_line(s, "n=256", "middle half"), "%s", s);
  r[0].peer_q1 = 2.21, r[0].peer_q3 = 2.58;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "in L2 vs FFHT n=256",
                 "missed by 0.14x (94% of the target) (pairs' middle half 2.21-2.58x)"),
        "%s", s);

  /* a backend without any row (avx512 targets on an AVX2-only CPU): the
   * reason is that the backend did not run, not a missing row */
  nr = 0;
  r[nr++] = fwht("avx2", 256, 0, 1.4, 100, 25);
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "avx512 in L2 vs FFHT n=256",
                 "not measured: no avx512 rows in this run (the backend is not available"),
        "%s", s);
  CHECK(has_line(s, "avx2 vs FFHT n=256 L2", "met"), "%s", s);
  CHECK(has_line(s, "avx2 vs FFHT n=256 memory", "not measured: no such row in this run"), "%s",
        s);
  CHECK(t.met == 1 && tally_matches(s, t), "%d %d %d:\n%s", t.met, t.missed, t.unmeasured, s);

  /* from memory: 90% of the memcpy probe, exactly at the line is met */
  nr = 0;
  r[nr++] = fwht("avx512", 4096, 1, 2.0, 90.0, 22);
  r[nr++] = fwht("avx512", 65536, 1, 2.0, 75.4, 19);
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "% of memcpy n=4096", "met"), "%s", s);
  CHECK(has_line(s, "% of memcpy n=65536", "missed by 15% (84% of the target)"), "%s", s);
  CHECK(t.met == 1 && t.missed == 1 && tally_matches(s, t), "%d %d %d:\n%s", t.met, t.missed,
        t.unmeasured, s);

  /* 768 against both neighbours (512 and 1024), per element */
  nr = 0;
  r[nr++] = fwht("avx512", 512, 0, -1, 100, 11.0);
  r[nr++] = fwht("avx512", 1024, 0, -1, 100, 9.0);
  r[nr++] = fwht("avx512", 768, 0, -1, 100, 10.0);
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2", "0.91x  >= 1.00x  missed by 0.09x"),
        "the slower ratio is judged:\n%s", s);
  CHECK(has_line(s, "n=768 L2", "(vs 512 0.91x, vs 1024 1.11x)"), "%s", s);
  CHECK(has_line(s, "n=768 memory", "no such row"), "%s", s);
  r[2].gbs = 11.0;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2", "met"), "%s", s);
  /* runs paired with the neighbours, when the bench has them, are judged
   * instead of the medians (here the medians say met, the pairs missed) */
  r[2].per_elem_lo = 0.95, r[2].per_elem_hi = 0.80;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2", "0.80x  >= 1.00x  missed by 0.20x"), "%s", s);
  CHECK(has_line(s, "n=768 L2", "(paired runs: vs 512 0.95x, vs 1024 0.80x)"), "%s", s);
  /* paired ratios need no neighbour rows */
  r[0] = r[2];
  nr = 1;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2", "(paired runs: vs 512 0.95x, vs 1024 0.80x)"), "%s", s);
  /* with the kernels' operation counts, the detail says what they allow */
  r[0].ops_lo = 0.67, r[0].ops_hi = 0.72;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2",
                 "(paired runs: vs 512 0.95x, vs 1024 0.80x; vector operations allow 0.67x, 0.72x)"),
        "%s", s);
  /* one of the two missing: the medians again (the neighbours' rows are gone) */
  r[0].per_elem_hi = 0;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2^k around n=768 L2", "a neighbour's row is missing"), "%s", s);

  /* the x86 kernels' vector operations a vector (counted by hand from
   * simd/x86/fwht_x86.h): avx512 n = 2^L: L + 4 (7 for strides 1 .. 8 in the
   * register, L - 4 across, 1 scale unless the scale is 1); 768 = 12 * 64: 7 + 2 + 1 + 112 / 12
   * (H_12's 111 distinct sign prefixes of length 2 .. 12, and one negation
   * for its rows that start - -); avx2 (5 in the register) */
  CHECK(hmx_bench_fwht_vector_ops(512, 16, 1) == 13.0, "%g", hmx_bench_fwht_vector_ops(512, 16, 1));
  CHECK(hmx_bench_fwht_vector_ops(65536, 16, 1) == 20.0, "%g",
        hmx_bench_fwht_vector_ops(65536, 16, 1));
  CHECK(fabs(hmx_bench_fwht_vector_ops(768, 16, 1) - (10.0 + 112.0 / 12)) < 1e-12, "%g",
        hmx_bench_fwht_vector_ops(768, 16, 1));
  CHECK(fabs(hmx_bench_fwht_vector_ops(1536, 8, 1) - (5.0 + 4 + 1 + 112.0 / 12)) < 1e-12, "%g",
        hmx_bench_fwht_vector_ops(1536, 8, 1));
  CHECK(hmx_bench_fwht_vector_ops(512, 8, 1) == 12.0, "%g", hmx_bench_fwht_vector_ops(512, 8, 1));
  /* at scale 1 the kernels skip the multiply: one operation less */
  CHECK(hmx_bench_fwht_vector_ops(256, 16, 0) == 11.0, "%g", hmx_bench_fwht_vector_ops(256, 16, 0));
  CHECK(fabs(hmx_bench_fwht_vector_ops(768, 16, 0) - (9.0 + 112.0 / 12)) < 1e-12, "%g",
        hmx_bench_fwht_vector_ops(768, 16, 0));
  /* blocks shorter than a vector have no model: 0 */
  CHECK(hmx_bench_fwht_vector_ops(8, 16, 1) == 0.0, "%g", hmx_bench_fwht_vector_ops(8, 16, 1));
  CHECK(hmx_bench_fwht_vector_ops(48, 8, 1) == 0.0, "%g", hmx_bench_fwht_vector_ops(48, 8, 1));

  /* gemm: oneDNN ratio, M = 1 bandwidth, 2 threads over 1 */
  nr = 0;
  hmx_bench_result g;
  memset(&g, 0, sizeof g);
  g.op = "gemm";
  snprintf(g.impl, sizeof g.impl, "avx512");
  g.threads = 1;
  g.m = 512, g.k = 768, g.nn = 2048;
  g.x_peer = 0.84;
  g.pct_bw = -1;
  r[nr++] = g;
  /* M = 1: judged on the G16 row (decode's layout); hmx_gemm on the [N, K]
   * rows printed beside it when that row exists */
  g.m = 1, g.k = 2048, g.nn = 2048;
  g.pct_bw = 93;
  snprintf(g.impl, sizeof g.impl, "avx512/g16");
  r[nr++] = g;
  hmx_bench_result sc = g;
  snprintf(sc.impl, sizeof sc.impl, "avx512");
  sc.op = "gemm_scaling";
  sc.m = 512, sc.k = 768, sc.nn = 2048;
  sc.value = 1.85, sc.lo = 1.7, sc.hi = 1.9;
  sc.x_peer = -1; /* oneDNN's scaling not measured: the rounds alone */
  r[nr++] = sc;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "oneDNN sgemm M=512 K=768 N=2048", "missed by 0.01x"), "%s", s);
  CHECK(has_line(s, "M=1 G16 weights, % of memcpy M=1 K=2048 N=2048", "met"), "%s", s);
  CHECK(!has_line(s, "M=1 G16 weights, % of memcpy M=1 K=2048 N=2048", "only read"), "%s", s);
  CHECK(!has_line(s, "M=1 G16 weights, % of memcpy M=1 K=2048 N=2048", "rows"), "%s", s);
  /* with the rows layout's row and the reads of the same weights: printed
   * beside, the verdict the G16 row's alone */
  hmx_bench_result rows = r[1];
  snprintf(rows.impl, sizeof rows.impl, "avx512");
  rows.pct_bw = 85;
  r[nr++] = rows;
  r[1].pct_bw = 69, r[1].pct_read_in_order = 135, r[1].pct_read_16_rows = 67;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "M=1 G16 weights, % of memcpy M=1 K=2048 N=2048",
                 "missed by 11% (86% of the target) (the [N, K] rows: 85%; the same bytes only "
                 "read, same rounds: in order 135%, 16 rows at a time 67%)"),
        "%s", s);
  nr--;
  r[1].pct_bw = 93, r[1].pct_read_in_order = 0, r[1].pct_read_16_rows = 0;
  CHECK(has_line(s, "2 threads / 1 M=512 K=768 N=2048", "met (rounds 1.70-1.90)"), "%s", s);
  CHECK(!has_line(s, "2 threads / 1 M=512 K=768 N=2048", "oneDNN"), "%s", s);
  /* with oneDNN's own scaling: printed beside ours, the verdict still ours alone */
  r[nr - 1].value = 1.45, r[nr - 1].lo = 1.4, r[nr - 1].hi = 1.5, r[nr - 1].x_peer = 1.47;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2 threads / 1 M=512 K=768 N=2048",
                 "missed by 0.35x (81% of the target) (rounds 1.40-1.50; oneDNN 1.47x in the same rounds)"),
        "%s", s);
  r[nr - 1].value = 1.85, r[nr - 1].lo = 1.7, r[nr - 1].hi = 1.9, r[nr - 1].x_peer = -1;
  s = section(r, nr, &notes, &t);
  /* shapes no gemm row had are left out, not reported as missing */
  CHECK(!has_line(s, "M=64 K=768 N=768", NULL), "%s", s);
  CHECK(t.met == 2 && t.missed == 1 && t.unmeasured == 0, "%d %d %d:\n%s", t.met, t.missed,
        t.unmeasured, s);
  /* without the scaling rows: not measured, with the reason */
  nr = 2;
  s = section(r, nr, &notes, &t);
  CHECK(has_line(s, "2 threads / 1 M=512 K=768 N=2048", "not measured: no such row"), "%s", s);

  /* exp: our vector exp against SLEEF's */
  hmx_bench_result e;
  memset(&e, 0, sizeof e);
  e.op = "exp";
  snprintf(e.impl, sizeof e.impl, "avx512");
  e.threads = 1;
  e.n = 16;
  e.x_peer = 1.4;
  s = section(&e, 1, &notes, &t);
  CHECK(t.met == 1 && has_line(s, "expf16_u10 16 lanes", "met"), "%s", s);
  /* only the scalar row (no SLEEF, or no avx512): not measured, with the note */
  e.n = 1;
  snprintf(e.impl, sizeof e.impl, "hmx_expf");
  s = section(&e, 1, &notes, &t);
  CHECK(t.unmeasured == 1 && has_line(s, "expf16_u10 16 lanes", "not measured: no sleef"), "%s",
        s);

  /* not judged: more than one thread, or toy sizes */
  nr = 0;
  r[nr++] = fwht("avx512", 256, 0, 3.0, 150, 40);
  r[0].threads = 2;
  s = section(r, nr, &notes, &t);
  CHECK(t.met + t.missed + t.unmeasured == 0 && has_line(s, "not judged", "2 threads"), "%s", s);
  r[0].threads = 1;
  notes.not_judged = "toy sizes";
  s = section(r, nr, &notes, &t);
  CHECK(t.met + t.missed + t.unmeasured == 0 && has_line(s, "not judged: toy sizes", NULL), "%s",
        s);
  notes.not_judged = NULL;
  /* no op of a target measured: no section at all */
  hmx_bench_result o;
  memset(&o, 0, sizeof o);
  o.op = "rmsnorm";
  snprintf(o.impl, sizeof o.impl, "avx512");
  o.threads = 1;
  s = section(&o, 1, &notes, &t);
  CHECK(s[0] == 0, "no section expected:\n%s", s);
#if HMX_HAVE_CJSON
  check_json(notes);
#endif
  return check_finish("test_bench_targets");
}
