/* A qemu-user TCG plugin that counts the guest instructions a run executes
 * and prints "icount: N" on stderr at exit: a deterministic measure of the
 * neon kernels' work where this project has no AArch64 hardware to time
 * them on (tools/arm64/icount_decode.sh, docs/NEON.md).
 *
 * Each translated block adds its instruction count to one counter when it
 * runs (an inline add, no callback), so the count is exact for one guest
 * thread; with several the unsynchronized adds may lose a few, so measure
 * with --threads 1.
 *
 * The few plugin API declarations below are written out here (from QEMU's
 * documented plugin API, version 1: Debian 12's qemu 7.2) so that no QEMU
 * header is needed; QEMU_PLUGIN_INLINE_ADD_U64 is operation 0. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;

#define ICOUNT_EXPORT __attribute__((visibility("default")))

ICOUNT_EXPORT int qemu_plugin_version = 1;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *),
                                    void *userdata);

static uint64_t executed;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, 0 /* ADD_U64 */, &executed,
                                           (uint64_t)qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  fprintf(stderr, "icount: %llu\n", (unsigned long long)executed);
}

ICOUNT_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
                                      int argc, char **argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, NULL);
  return 0;
}
