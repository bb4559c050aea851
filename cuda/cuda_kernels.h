/* The cuda kernels' host entry points (cuda/kernels.cu, cuda/fwht.cu).
 *
 * hmx_cuda_OP take the validated, contiguous f32 HOST buffers of their
 * src/backend.h argument struct, copy the inputs to the GPU, run, copy the
 * output back and wait (the backend table, cuda/backend.c).
 * hmx_cuda_dev_OP take the same structs holding DEVICE pointers (rope's
 * angle table excepted: host memory), queue the work on c->stream and
 * return without waiting (the device-memory table of src/dispatch.h). */
#ifndef HMX_CUDA_KERNELS_H
#define HMX_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

#include "backend.h"
#include "compose.h"
#include "dispatch.h"

/* cuda/probe.cu: can this machine run the backend, why not, what is there */
int hmx_cuda_probe(void);
const char *hmx_cuda_unavailable_reason(void);
int hmx_cuda_describe(char *buf, size_t cap);
/* cuda/device_balance.cu: 1 when the device's memory is fast for its SMs
 * (>= 16 bytes per SM clock: the H200, not the H100), which picks some fwht
 * kernels; *bytes_per_clock (may be NULL) gets the ratio (0: unknown).
 * HMX_CUDA_FWHT_FAST_MEMORY=0 or 1 overrides the answer (read per call). */
int hmx_cuda_fast_memory(int device, double *bytes_per_clock);
/* that override: 0 or 1 when HMX_CUDA_FWHT_FAST_MEMORY is "0" or "1", else -1 */
int hmx_cuda_fast_memory_override(void);
/* elements a thread of the last fwht_pow2 launch (16 or 32; 0: none yet),
 * for tests of that choice */
int hmx_cuda_fwht_pow2_last_elems(void);
/* 1 when the last fwht_pow2 launch was its persistent kernel, else 0 */
int hmx_cuda_fwht_pow2_last_persistent(void);
/* cuda/scratch_pool.cu: bytes that the pool device scratch comes from on
 * `device` holds mapped now (hadamix's own pool; the device's current pool
 * with HMX_CUDA_SCRATCH_KEEP_MIB=0), or -1 on error. This process's pool
 * alone, unlike cudaMemGetInfo's free memory, which other processes on the
 * GPU move (tests run in parallel measure the keep with it). */
long long hmx_cuda_scratch_reserved(int device);
hmx_status hmx_cuda_fwht(const hmx_fwht_args *a);
hmx_status hmx_cuda_hadamard_mix(const hmx_hadamard_mix_args *a);
hmx_status hmx_cuda_gemm(const hmx_gemm_args *a);
hmx_status hmx_cuda_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_cuda_layernorm(const hmx_norm_args *a);
hmx_status hmx_cuda_rope(const hmx_rope_args *a);
hmx_status hmx_cuda_attention(const hmx_attention_args *a);
/* tiles of attention_tiled whose guessed row maxima were wrong (each ran
 * its second pass again) since the process started; -1 on error */
long long hmx_cuda_attention_reruns(void);
hmx_status hmx_cuda_swiglu(const hmx_swiglu_args *a);
/* strassen .. priority: host compositions of the three above (cuda/compose.c) */
HMX_COMPOSE_DECLARE(hmx_cuda)

/* The fast tier's attention on TF32 tensor cores (cuda/fast_attention.cu);
 * shapes it does not take run the exact kernel. */
hmx_status hmx_cuda_fast_attention(const hmx_attention_args *a);
hmx_status hmx_cuda_fast_dev_attention(const hmx_attention_args *a, const hmx_device_call *c);

hmx_status hmx_cuda_to_host(void *dst, const void *src, size_t bytes, void *stream);
/* a forward pass on the GPU (cuda/forward_ops.cu) */
hmx_status hmx_cuda_to_device(void *dst, const void *src, size_t bytes, void *stream);
hmx_status hmx_cuda_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t rows, void *stream);
hmx_status hmx_cuda_add(float *x, const float *y, int64_t n, void *stream);
/* long-lived GPU memory: a model's weights (cuda/resident.cu) */
hmx_status hmx_cuda_resident_alloc(void **p, size_t bytes);
hmx_status hmx_cuda_upload(void *dst, const void *src, size_t bytes);
void hmx_cuda_resident_free(void *p);
int hmx_cuda_on_current_device(const void *p);
/* 16-bit device staging (cuda/stage.cu, src/dev_stage.c) */
hmx_status hmx_cuda_stage_alloc(void **p, size_t bytes, void *stream);
hmx_status hmx_cuda_stage_free(void *p, void *stream);
hmx_status hmx_cuda_convert(void *dst, hmx_dtype ddt, const void *src, hmx_dtype sdt, int64_t n,
                            void *stream);
hmx_status hmx_cuda_dev_fwht(const hmx_fwht_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_hadamard_mix(const hmx_hadamard_mix_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_gemm(const hmx_gemm_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_rmsnorm(const hmx_norm_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_layernorm(const hmx_norm_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_rope(const hmx_rope_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_attention(const hmx_attention_args *a, const hmx_device_call *c);
hmx_status hmx_cuda_dev_swiglu(const hmx_swiglu_args *a, const hmx_device_call *c);

#ifdef __cplusplus
}
#endif

#endif
