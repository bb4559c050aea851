/* Every op in every full backend's table. A backend with a NULL kernel still
 * works (the op falls back to ref) and conformance only reports it as
 * skipped or "missing", so a lost kernel would go unnoticed; this test fails
 * instead. It reads the tables, which exist whether or not this machine can
 * run the backend, so it never skips.
 *
 * Arguments: the backend names CMake compiled in (HMX_BACKEND_NAMES), so that
 * a backend the build has but the registry lost fails too. */
#include "backend.h"
#include "check.h"
#include "opspec.h"

#include <string.h>

/* Which backends must implement every op: the one place that says so. ref is
 * the definition of every op and the fallback of the others; the SIMD and
 * CUDA backends promise every op (docs/BACKENDS.md), so a kernel lost in a
 * change must fail here rather than turn into a quiet ref fallback. A
 * backend registered but not listed here fails the test until it is listed:
 * with 0, and a comment why, if it may be partial. */
static const struct {
  const char *name;
  int complete;
} policy[] = {
    {"ref", 1}, {"avx2", 1}, {"avx512", 1}, {"neon", 1}, {"cuda", 1},
};

static int policy_of(const char *name) {
  for (size_t i = 0; i < sizeof policy / sizeof policy[0]; i++)
    if (strcmp(policy[i].name, name) == 0) return policy[i].complete;
  return -1;
}

/* The number of ops b has no kernel for; with report, each is printed. */
static int missing_ops(const hmx_backend *b, int report) {
  int missing = 0;
  for (int i = 0; i < hmx_op_count(); i++) {
    const hmx_opspec *op = hmx_op_at(i);
    if (!hmx_op_implemented(op, b)) {
      missing++;
      if (report)
        fprintf(stderr, "backend %s: no kernel for op %s\n", hmx_backend_name(b), op->name);
    }
  }
  return missing;
}

/* The check itself must see a NULL in any slot: a copy of ref with exactly
 * one op's kernel cleared, for each op, is one op short. Also every op must
 * have a slot of its own (two ops on one offset would leave a slot unread). */
static void self_check(void) {
  const hmx_backend *ref = hmx_backend_find("ref");
  CHECK(ref != NULL, "no ref backend");
  if (!ref) return;
  CHECK(hmx_op_count() > 0, "the op table is empty");
  for (int i = 0; i < hmx_op_count(); i++) {
    const hmx_opspec *op = hmx_op_at(i);
    CHECK(op->kernel_offset + sizeof(void (*)(void)) <= sizeof(hmx_backend),
          "op %s: kernel offset %zu outside hmx_backend", op->name, op->kernel_offset);
    for (int j = 0; j < i; j++)
      CHECK(hmx_op_at(j)->kernel_offset != op->kernel_offset, "ops %s and %s share a kernel slot",
            hmx_op_at(j)->name, op->name);
    hmx_backend partial = *ref;
    partial.name = "partial";
    void (*none)(void) = NULL; /* stored as hmx_op_implemented reads it */
    memcpy((char *)&partial + op->kernel_offset, &none, sizeof none);
    CHECK(missing_ops(&partial, 0) == 1, "ref without %s: %d ops reported missing, expected 1",
          op->name, missing_ops(&partial, 0));
    CHECK(!hmx_op_implemented(op, &partial), "ref without %s: %s reported implemented", op->name,
          op->name);
  }
  /* and the named-field form, as a backend table would lose a kernel */
  hmx_backend partial = *ref;
  partial.fwht = NULL;
  CHECK(missing_ops(&partial, 0) == 1, "ref with fwht = NULL not reported incomplete");
}

int main(int argc, char **argv) {
  self_check();
  for (int i = 1; i < argc; i++)
    CHECK(hmx_backend_find(argv[i]) != NULL, "backend %s compiled in but not registered",
          argv[i]);
  int checked = 0;
  for (int i = 0; i < hmx_backend_count(); i++) {
    const hmx_backend *b = hmx_backend_at(i);
    const char *name = hmx_backend_name(b);
    const int complete = policy_of(name);
    CHECK(complete >= 0, "backend %s is not in this test's policy table: say whether it must "
          "implement every op", name);
    if (complete != 1) continue;
    const int missing = missing_ops(b, 1);
    CHECK(missing == 0, "backend %s lacks %d of %d ops", name, missing, hmx_op_count());
    printf("%-8s %d of %d ops%s\n", name, hmx_op_count() - missing, hmx_op_count(),
           hmx_backend_available(b) ? "" : " (cannot run here; its table checked)");
    checked++;
  }
  /* ref at least: a loop that checked nothing must not pass */
  CHECK(checked >= 1, "no backend checked");
  return check_finish("test_backend_complete");
}
