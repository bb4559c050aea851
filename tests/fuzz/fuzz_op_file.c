/* libFuzzer target for running an op on a file's tensors (src/op_io.h: what
 * `hmx run`, `hmx diff` and `hmx conform` do with a user's safetensors file),
 * on `ref` and on the best backend of the machine (or HMX_FUZZ_BACKEND).
 *
 * An input is a safetensors file; its "op" metadata names the op (inputs
 * without a known op end there: fuzz_safetensors covers the reader). The
 * file's tensors and "param.NAME" metadata are loaded twice, once for each
 * backend, and the outputs allocated (at most 1 MiB each: HMX_MAX_OUTPUT_BYTES).
 * Properties:
 * - loading refuses with NOT_FOUND, SHAPE, DTYPE, INVALID_ARGUMENT,
 *   UNSUPPORTED or NO_MEMORY and a message, never anything else;
 * - the op refuses or accepts the same arguments on both backends, with the
 *   same status (argument checks do not depend on the backend);
 * - when it runs, every output has the same bits on both (NaN equal to NaN):
 *   the exact tier's promise, for any shapes, parameters and values a file
 *   can hold. The best backend runs with two threads, and ops it lacks fall
 *   back to the next backend that has them, as `hmx run` does.
 *
 * Built like the other fuzz targets (tests/t_fuzz.cmake): op_io.c and
 * safetensors.c are compiled into the libFuzzer binary with ASan and UBSan,
 * the ops and backends come from the hadamix library. The replay runs over
 * the golden vectors in vectors/, which are also the seeds. Half of
 * libFuzzer's mutations go to the tensor bytes only (LLVMFuzzerCustomMutator
 * below, with fuzz_mutate_values.h's edge values), so that most inputs stay
 * runnable. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "op_io.h"
#include "opspec.h"
#include "safetensors.h"
#include "fuzz_backend.h"
#include "fuzz_mutate_values.h"
#include "fuzz_resize.h"
#include "fuzz_assert.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

/* For fuzz_replay.c (seeds named ok_* / bad_*): does the file load as an op's
 * arguments? */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size) {
  hmx_st_file *f = NULL;
  hmx_status s = hmx_st_parse(data, size, &f);
  if (s) return s;
  const char *name = hmx_st_meta(f, "op");
  const hmx_opspec *op = name ? hmx_op_find(name) : NULL;
  hmx_op_io io;
  if (!op) s = HMX_ERR_NOT_FOUND;
  else {
    hmx_op_io_init(&io, op);
    s = hmx_op_io_load(&io, f);
    hmx_op_io_free(&io);
  }
  hmx_st_free(f);
  return s;
}

static int load_refusal(hmx_status s) {
  return s == HMX_ERR_NOT_FOUND || s == HMX_ERR_SHAPE || s == HMX_ERR_DTYPE ||
         s == HMX_ERR_INVALID_ARGUMENT || s == HMX_ERR_UNSUPPORTED || s == HMX_ERR_NO_MEMORY;
}

/* Loads the op's arguments and allocates its outputs; the status of either. */
static hmx_status prepare(hmx_op_io *io, const hmx_opspec *op, const hmx_st_file *f) {
  hmx_op_io_init(io, op);
  hmx_status s = hmx_op_io_load(io, f);
  if (!s) s = hmx_op_io_alloc_outputs(io, hmx_expected_dtype(op, f));
  if (s) FUZZ_ASSERT(load_refusal(s) && hmx_last_error()[0] != '\0');
  return s;
}

/* op's place in the op table (opspec.h) */
static int op_index(const hmx_opspec *op) {
  int i = 0;
  while (i < hmx_op_count() && hmx_op_at(i) != op) i++;
  return i;
}

#ifdef HMX_LIBFUZZER
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* A mutation picks one of three kinds (by seed):
 * - half change only the tensor bytes (after the 8-byte header length and the
 *   JSON header), with fuzz_mutate_values.h's edge values among them, so that
 *   the file stays loadable and the ops see new values;
 * - three eighths change one size throughout the file (fuzz_resize.h), so
 *   that the shapes keep agreeing with each other;
 * - one eighth are libFuzzer's own, over the whole file (dtypes, parameters
 *   and names live in the JSON).
 * A file that does not parse (a truncated seed, an earlier whole-file
 * mutation) only gets libFuzzer's own: the other two need its structure. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  const unsigned kind = seed % 8;
  hmx_st_file *f = NULL;
  if (hmx_st_parse(data, size, &f) != HMX_OK || kind == 7) {
    hmx_st_free(f);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const size_t resized = kind >= 4 ? fuzz_resize(f, data, max_size, seed / 8) : 0;
  hmx_st_free(f);
  if (resized) return resized;
  uint64_t header = 0;
  for (int i = 0; i < 8; i++) header |= (uint64_t)data[i] << (8 * i);
  fuzz_mutate_values(data, size, 8 + (size_t)header, seed / 8);
  return size;
}
#endif /* HMX_LIBFUZZER */

/* libFuzzer's coverage comes from op_io.c alone (tests/t_fuzz.cmake): the ops
 * and backends are not instrumented, and op_io.c is the same code for every
 * op. These counters (libFuzzer's extra counters, an ELF section) tell it
 * which op an input reached, how it ended (refused at loading, refused by
 * the op, ran) and the size class of its inputs (log2 of their elements), so
 * that the corpus keeps inputs of every op and size. */
/* ops counted, per op, by the features and the report (the table has 15) */
#define FUZZ_MAX_OPS 32
#if defined(HMX_LIBFUZZER) && defined(__linux__)
__attribute__((used, section("__libfuzzer_extra_counters")))
static uint8_t fuzz_features[FUZZ_MAX_OPS][3][24];

static void fuzz_feature(int index, int outcome, const hmx_st_file *f) {
  uint64_t elements = 0; /* from the byte counts: a product of shapes could overflow */
  for (int i = 0; i < hmx_st_count(f); i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    const size_t element_size = hmx_dtype_size(t->dtype);
    if (element_size) elements += t->nbytes / element_size;
  }
  int size_class = 0;
  while (size_class < 23 && (elements >> size_class) > 1) size_class++;
  if (index < FUZZ_MAX_OPS) fuzz_features[index][outcome][size_class]++;
}
#else
static void fuzz_feature(int index, int outcome, const hmx_st_file *f) {
  (void)index, (void)outcome, (void)f;
}
#endif

/* How many inputs ran the op on both backends, in all and per op (printed at
 * exit: a run whose inputs never reach the comparison checks nothing). */
static long n_ran, n_refused, n_ran_op[FUZZ_MAX_OPS];
static const char *other_name = "?";
static void report(void) {
  fprintf(stderr, "fuzz_op_file: %ld inputs ran on ref and %s with the same bits, %ld refused "
          "alike by both; ran per op:", n_ran, other_name, n_refused);
  for (int i = 0; i < hmx_op_count() && i < FUZZ_MAX_OPS; i++)
    fprintf(stderr, " %s %ld", hmx_op_at(i)->name, n_ran_op[i]);
  fprintf(stderr, "\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int once;
  if (!once) {
    once = 1;
    setenv("HMX_MAX_OUTPUT_BYTES", "1048576", 1); /* a file may ask for huge outputs */
    atexit(report);
  }
  hmx_st_file *f = NULL;
  if (hmx_st_parse(data, size, &f) != HMX_OK) return 0;
  const char *name = hmx_st_meta(f, "op");
  const hmx_opspec *op = name ? hmx_op_find(name) : NULL;
  if (!op) {
    hmx_st_free(f);
    return 0;
  }
  const hmx_backend *ref = hmx_backend_find("ref"), *best = fuzz_backend();
  FUZZ_ASSERT(ref && best);
  hmx_op_io a, b;
  hmx_status sa = prepare(&a, op, f), sb = prepare(&b, op, f);
  FUZZ_ASSERT(sa == sb);
  const int index = op_index(op);
  int outcome = 0; /* refused at loading; 1: refused by the op; 2: ran */
  if (!sa) {
    const hmx_context rctx = {ref, 1, 0, HMX_TIER_EXACT}, bctx = {best, 2, 1, HMX_TIER_EXACT};
    sa = hmx_op_io_run(&a, &rctx);
    sb = hmx_op_io_run(&b, &bctx);
    if (sa != sb)
      fprintf(stderr, "fuzz_op_file: %s: ref says %s, %s says %s\n", op->name,
              hmx_status_string(sa), hmx_backend_name(best), hmx_status_string(sb));
    FUZZ_ASSERT(sa == sb);
    for (int i = 0; !sa && i < op->nargs; i++) {
      if (!op->args[i].is_output) continue;
      char what[128];
      snprintf(what, sizeof what, "fuzz_op_file: %s: output '%s' on %s vs ref", op->name,
               op->args[i].name, hmx_backend_name(best));
      FUZZ_ASSERT(fuzz_same_bits(&a.t[i], &b.t[i], what));
    }
    other_name = hmx_backend_name(best);
    if (sa) n_refused++;
    else n_ran++;
    if (!sa && index < FUZZ_MAX_OPS) n_ran_op[index]++;
    outcome = sa ? 1 : 2;
  }
  fuzz_feature(index, outcome, f);
  hmx_op_io_free(&a);
  hmx_op_io_free(&b);
  hmx_st_free(f);
  return 0;
}
