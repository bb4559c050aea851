/* fwht_run for bf16 rows (cuda/fwht_impl.cuh): one dtype per file so that
 * the three compile in parallel. */
#include "fwht_impl.cuh"

template void hmx_cuda::fw::fwht_run<hmx_cuda::fw::Dt::BF16>(hmx_cuda::Job *, const void *, void *,
                                                          int64_t, int64_t, int, int64_t, float,
                                                          int, const float *, const float *);
