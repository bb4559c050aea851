/* Every committed golden vector of the ops with device kernels, run by the
 * cuda backend on device memory, bit for bit against the outputs stored in
 * the vector (docs/VECTORS.md).
 *
 * `hmx conform --backend cuda` passes host memory: the dispatcher widens
 * 16-bit tensors to f32 and the backend copies them to the GPU, so the
 * kernels that read and write bf16 / f16 themselves (fwht, hadamard_mix) and
 * the device staging of the other ops (src/dev_stage.c) never see a vector
 * there. Here every tensor of a case (inputs, outputs, i32 positions) goes to
 * cudaMalloc'd memory in its own dtype, with `memory = HMX_MEMORY_CUDA`, so
 * the device-memory path of include/hadamix.h runs exactly as a framework
 * calling hadamix on its own tensors would.
 *
 *   test_cuda_vectors VECTORS_DIR      (the files listed in VECTORS_DIR/MANIFEST)
 *
 * Exits 77 (skipped) without a cuda backend or GPU. */
#include "check.h"
#include "compare.h"
#include "hadamix.h"
#include "op_io.h"
#include "safetensors.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ops whose cuda kernels take device memory (issue 5's eight); the
 * others are host compositions and refuse device tensors. */
static const char *const device_ops[] = {"fwht",    "hadamard_mix", "gemm",      "rmsnorm",
                                         "layernorm", "rope",       "attention", "swiglu"};
#define NOPS ((int)(sizeof device_ops / sizeof device_ops[0]))

static int op_slot(const char *name) {
  for (int i = 0; i < NOPS; i++)
    if (strcmp(device_ops[i], name) == 0) return i;
  return -1;
}

static int cuda_ok(cudaError_t e, const char *what, const char *file) {
  CHECK(e == cudaSuccess, "%s: %s: %s", file, what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

/* One vector on device memory. Returns 1 when it ran (passed or failed:
 * CHECK counts the failures), 0 when the file is not a case for this test. */
static int run_vector(const char *path, const char *file, const hmx_backend *cuda, int *ran) {
  hmx_st_file *f = NULL;
  hmx_status s = hmx_st_load(path, &f);
  CHECK(s == HMX_OK, "%s: cannot load: %s", file, hmx_status_string(s));
  if (s != HMX_OK) return 1;
  const char *tier = hmx_st_meta(f, "tier"), *opn = hmx_st_meta(f, "op");
  const hmx_opspec *op = opn ? hmx_op_find(opn) : NULL;
  const int slot = opn ? op_slot(opn) : -1;
  if (!tier || strcmp(tier, "exact") != 0 || !op || slot < 0) {
    hmx_st_free(f);
    return 0;
  }
  hmx_op_io io;
  hmx_op_io_init(&io, op);
  s = hmx_op_io_load(&io, f);
  if (s == HMX_OK) s = hmx_op_io_alloc_outputs(&io, hmx_expected_dtype(op, f));
  CHECK(s == HMX_OK, "%s: cannot prepare the case: %s", file, hmx_status_string(s));

  void *host[HMX_OP_MAX_ARGS] = {0}, *dev[HMX_OP_MAX_ARGS] = {0};
  size_t bytes[HMX_OP_MAX_ARGS] = {0};
  int on_device = s == HMX_OK;
  for (int a = 0; on_device && a < op->nargs; a++) {
    if (!io.tp[a]) continue; /* an absent optional input */
    hmx_tensor *t = &io.t[a];
    bytes[a] = (size_t)hmx_tensor_numel(t) * hmx_dtype_size(t->dtype);
    /* at least one byte, so an empty tensor still has a device address */
    if (!cuda_ok(cudaMalloc(&dev[a], bytes[a] ? bytes[a] : 1), "cudaMalloc", file) ||
        (bytes[a] && !cuda_ok(cudaMemcpy(dev[a], t->data, bytes[a], cudaMemcpyHostToDevice),
                              "cudaMemcpy H2D", file))) {
      on_device = 0;
      break;
    }
    host[a] = t->data;
    t->data = dev[a];
    t->memory = HMX_MEMORY_CUDA;
  }
  if (on_device) {
    hmx_context ctx = {cuda, 0, 0, HMX_TIER_EXACT};
    s = hmx_op_io_run(&io, &ctx);
    CHECK(s == HMX_OK, "%s: the device-memory call failed: %s", file, hmx_last_error());
    /* the call only queues the work: a fault in a kernel shows here */
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize", file);
  }
  for (int a = 0; a < op->nargs; a++) {
    if (!dev[a]) continue;
    if (on_device && s == HMX_OK && op->args[a].is_output && bytes[a])
      cuda_ok(cudaMemcpy(host[a], dev[a], bytes[a], cudaMemcpyDeviceToHost), "cudaMemcpy D2H",
              file);
    if (host[a]) {
      io.t[a].data = host[a];
      io.t[a].memory = HMX_MEMORY_HOST;
    }
    cudaFree(dev[a]);
  }
  if (on_device && s == HMX_OK) {
    for (int a = 0; a < op->nargs; a++) {
      if (!op->args[a].is_output) continue;
      const hmx_st_tensor *st = hmx_st_find(f, op->args[a].name);
      CHECK(st != NULL, "%s: no expected output '%s'", file, op->args[a].name);
      if (!st) continue;
      hmx_tensor want = hmx_st_view(st);
      hmx_diff_stats ds;
      hmx_status cs = hmx_compare(&io.t[a], &want, &ds);
      CHECK(cs == HMX_OK && ds.differing == 0,
            "%s: output '%s' on device memory: %s (%lld of %lld elements differ, the first at "
            "%lld)",
            file, op->args[a].name, cs == HMX_OK ? "not bit-exact" : hmx_status_string(cs),
            (long long)ds.differing, (long long)ds.count, (long long)ds.first_index);
    }
  }
  ran[slot]++;
  hmx_op_io_free(&io);
  hmx_st_free(f);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_cuda_vectors VECTORS_DIR\n");
    return 2;
  }
  const hmx_backend *cuda = hmx_backend_find("cuda");
  if (!cuda || !hmx_backend_available(cuda)) {
    printf("test_cuda_vectors: no cuda backend or no GPU here: skipped\n");
    return 77;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/MANIFEST", argv[1]);
  FILE *m = fopen(path, "r");
  CHECK(m != NULL, "cannot open %s", path);
  if (!m) return check_finish("test_cuda_vectors");
  int ran[NOPS] = {0}, total = 0;
  char line[1024];
  while (fgets(line, sizeof line, m)) {
    /* "sha256  file" */
    char hash[128], file[512];
    if (sscanf(line, "%127s %511s", hash, file) != 2) continue;
    snprintf(path, sizeof path, "%s/%s", argv[1], file);
    total += run_vector(path, file, cuda, ran);
  }
  fclose(m);
  /* every op with device kernels must have had vectors: an empty or wrong
   * directory, or a MANIFEST the loop misread, is a failure, not a pass */
  for (int i = 0; i < NOPS; i++) {
    CHECK(ran[i] > 0, "no vector of %s ran", device_ops[i]);
    printf("test_cuda_vectors: %-12s %3d vectors on device memory\n", device_ops[i], ran[i]);
  }
  printf("test_cuda_vectors: %d vectors\n", total);
  return check_finish("test_cuda_vectors");
}
