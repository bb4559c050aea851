/* Running ops from safetensors contents: parameter parsing limits and the
 * output-size guard against files whose zero-size inputs imply huge outputs. */
#include "check.h"
#include "op_io.h"

#include <stdlib.h>
#include <string.h>

static hmx_st_file *file_with(const hmx_tensor *a, const hmx_tensor *b) {
  hmx_st_writer *w = hmx_st_writer_new();
  void *buf = NULL;
  size_t len = 0;
  hmx_st_file *f = NULL;
  if (w && hmx_st_writer_add(w, "a", a) == HMX_OK && hmx_st_writer_add(w, "b", b) == HMX_OK &&
      hmx_st_writer_bytes(w, &buf, &len) == HMX_OK)
    hmx_st_parse(buf, len, &f);
  free(buf);
  hmx_st_writer_free(w);
  return f;
}

int main(void) {
  const hmx_opspec *gemm = hmx_op_find("gemm");
  hmx_op_io io;

  /* gemm [65536, 0] x [0, 65536] = a 16 GiB output from a few bytes of file */
  float dummy = 0;
  hmx_tensor a = hmx_tensor_2d(&dummy, HMX_F32, 65536, 0), b = hmx_tensor_2d(&dummy, HMX_F32, 0, 65536);
  hmx_st_file *f = file_with(&a, &b);
  CHECK(f != NULL, "could not build the file: %s", hmx_last_error());
  if (f) {
    hmx_op_io_init(&io, gemm);
    CHECK(hmx_op_io_load(&io, f) == HMX_OK, "load: %s", hmx_last_error());
    hmx_status s = hmx_op_io_alloc_outputs(&io, -1);
    CHECK(s == HMX_ERR_UNSUPPORTED, "huge output allocated: %s", hmx_status_string(s));
    CHECK(strstr(hmx_last_error(), "HMX_MAX_OUTPUT_BYTES") != NULL, "message: %s", hmx_last_error());
    hmx_op_io_free(&io);
    hmx_st_free(f);
  }

  /* a small zero-K gemm is fine: c = bias-free zeros */
  hmx_tensor a2 = hmx_tensor_2d(&dummy, HMX_F32, 3, 0), b2 = hmx_tensor_2d(&dummy, HMX_F32, 0, 2);
  f = file_with(&a2, &b2);
  if (f) {
    hmx_op_io_init(&io, gemm);
    hmx_context ctx = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
    CHECK(hmx_op_io_load(&io, f) == HMX_OK && hmx_op_io_alloc_outputs(&io, -1) == HMX_OK &&
          hmx_op_io_run(&io, &ctx) == HMX_OK, "K = 0 gemm: %s", hmx_last_error());
    hmx_op_io_free(&io);
    hmx_st_free(f);
  }

  /* parameters: type and range */
  hmx_op_io_init(&io, hmx_op_find("rope"));
  static const char *const bad[] = {"1e12", "-3000000000", "2.5", "nan", "inf", "", "7x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(hmx_op_io_set_param(&io, "rot_dim", bad[i]) == HMX_ERR_INVALID_ARGUMENT,
          "rot_dim=%s accepted", bad[i]);
  CHECK(hmx_op_io_set_param(&io, "rot_dim", "64") == HMX_OK, "rot_dim=64 rejected");
  CHECK(hmx_op_io_set_param(&io, "base", "1e-3") == HMX_OK, "float param rejected");
  CHECK(hmx_op_io_set_param(&io, "nope", "1") == HMX_ERR_NOT_FOUND, "unknown param accepted");
  hmx_op_io_free(&io);
  return check_finish("test_op_io");
}
