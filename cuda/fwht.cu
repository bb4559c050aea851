/* fwht and hadamard_mix entry points of the cuda backend. The kernels and
 * their order of operations are in cuda/fwht_impl.cuh; fwht_run<dtype> is
 * instantiated once per dtype in fwht_f32.cu, fwht_bf16.cu, fwht_f16.cu. */
#include "fwht_impl.cuh"

namespace hmx_cuda {
namespace fw {
std::atomic<int> pow2_last_elems{0}, pow2_last_persistent{0};
extern template void fwht_run<Dt::F32>(Job *, const void *, void *, int64_t, int64_t, int,
                                       int64_t, float, int, const float *, const float *);
extern template void fwht_run<Dt::BF16>(Job *, const void *, void *, int64_t, int64_t, int,
                                        int64_t, float, int, const float *, const float *);
extern template void fwht_run<Dt::F16>(Job *, const void *, void *, int64_t, int64_t, int,
                                       int64_t, float, int, const float *, const float *);
} // namespace fw

namespace {

using fw::Dt;

void fwht_dispatch(Job *j, hmx_dtype dt, const void *x, void *y, int64_t batch, int64_t n, int m,
                   int64_t p, float scale, int mix, const float *alpha, const float *beta) {
  switch (dt) {
  case HMX_F32: fw::fwht_run<Dt::F32>(j, x, y, batch, n, m, p, scale, mix, alpha, beta); return;
  case HMX_BF16: fw::fwht_run<Dt::BF16>(j, x, y, batch, n, m, p, scale, mix, alpha, beta); return;
  case HMX_F16: fw::fwht_run<Dt::F16>(j, x, y, batch, n, m, p, scale, mix, alpha, beta); return;
  default: break;
  }
  if (j->st == HMX_OK)
    j->st = hmx_fail(HMX_ERR_DTYPE, "cuda %s: dtype %s on the device", j->op, hmx_dtype_name(dt));
}

int split(Job *j, int64_t n, int m_in, int *m, int64_t *p) {
  if (j->st != HMX_OK) return 0;
  if (!hmx_fwht_split(n, m_in, m, p)) {
    j->st = hmx_fail(HMX_ERR_UNSUPPORTED, "cuda %s: n = %lld is no supported size", j->op,
                     (long long)n);
    return 0;
  }
  return 1;
}

/* Host buffers: one f32 device copy of x, transformed in place, copied back. */
hmx_status host_call(const char *op, const float *x, float *y, const float *alpha,
                     const float *beta, int64_t batch, int64_t n, int m_in, float scale, int mix) {
  Job j;
  job_begin(&j, op);
  int m = 1;
  int64_t p = 1;
  const int64_t total = batch * n;
  if (split(&j, n, m_in, &m, &p) && total > 0) {
    float *d = (float *)job_upload(&j, x, total);
    const float *da = mix ? job_upload(&j, alpha, n) : NULL;
    const float *db = mix ? job_upload(&j, beta, n) : NULL;
    fwht_dispatch(&j, HMX_F32, d, d, batch, n, m, p, scale, mix, da, db);
    job_out_done(&j, y, d, total);
  }
  return job_end(&j);
}

/* Device buffers: the caller's, on the caller's stream. */
hmx_status device_call(const char *op, const hmx_device_call *c, const void *x, void *y,
                       const float *alpha, const float *beta, int64_t batch, int64_t n,
                       int m_in, float scale, int mix) {
  Job j;
  job_begin_device(&j, op, c->stream);
  int m = 1;
  int64_t p = 1;
  if (split(&j, n, m_in, &m, &p) && batch * n > 0)
    fwht_dispatch(&j, c->io_dtype, x, y, batch, n, m, p, scale, mix, alpha, beta);
  return job_end(&j);
}

} // namespace
} // namespace hmx_cuda

using namespace hmx_cuda;

extern "C" hmx_status hmx_cuda_fwht(const hmx_fwht_args *a) {
  return host_call("fwht", a->x, a->y, NULL, NULL, a->batch, a->n, a->m, a->scale, 0);
}

extern "C" hmx_status hmx_cuda_hadamard_mix(const hmx_hadamard_mix_args *a) {
  return host_call("hadamard_mix", a->x, a->y, a->alpha, a->beta, a->batch, a->n, a->m,
                   hmx_inv_sqrt_n(a->n), 1);
}

extern "C" hmx_status hmx_cuda_dev_fwht(const hmx_fwht_args *a, const hmx_device_call *c) {
  return device_call("fwht", c, a->x, a->y, NULL, NULL, a->batch, a->n, a->m, a->scale, 0);
}

extern "C" hmx_status hmx_cuda_dev_hadamard_mix(const hmx_hadamard_mix_args *a,
                                                const hmx_device_call *c) {
  return device_call("hadamard_mix", c, a->x, a->y, a->alpha, a->beta, a->batch, a->n, a->m,
                     hmx_inv_sqrt_n(a->n), 1);
}

extern "C" int hmx_cuda_fwht_pow2_last_elems(void) {
  return hmx_cuda::fw::pow2_last_elems.load(std::memory_order_relaxed);
}
extern "C" int hmx_cuda_fwht_pow2_last_persistent(void) {
  return hmx_cuda::fw::pow2_last_persistent.load(std::memory_order_relaxed);
}
