/* Stream-ordered device scratch for the device-memory calls (job.cuh's
 * job_alloc_bytes, stage.cu's 16-bit staging): one memory pool per device,
 * hadamix's own, that keeps up to HMX_CUDA_SCRATCH_KEEP_MIB (default 1024)
 * of freed scratch mapped between calls.
 *
 * Why: cudaMallocAsync takes from the device's default pool, whose release
 * threshold is 0, so at every synchronization it unmaps what was freed and
 * the next call maps it again. A call whose scratch is large (a bf16 / f16
 * fwht of rows above 2^17 elements, its f32 buffer; the f32 copies of 16-bit
 * tensors that src/dev_stage.c makes for gemm, the norms, rope, attention
 * and swiglu) then paid for that mapping on every call
 * (docs/results/h100/scratch_pool/). Our own pool keeps it, and leaves the
 * default pool's settings, which the caller may rely on, alone.
 *
 * HMX_CUDA_SCRATCH_KEEP_MIB: a whole number of MiB (0 .. 2^40); 0 takes the
 * device's current pool (cudaMallocAsync), CUDA's own behaviour. Anything
 * else (not a number, trailing text, out of range) is ignored with the
 * default kept: it is read once, when the first pool is made. */
#include "job.cuh"

#include <errno.h>
#include <mutex>
#include <stdlib.h>

namespace hmx_cuda {

namespace {

constexpr int kMaxDevices = 64;
constexpr uint64_t kDefaultKeepMib = 1024;

std::mutex pool_mutex;
cudaMemPool_t pools[kMaxDevices];
bool pool_made[kMaxDevices];
uint64_t keep_bytes_value = UINT64_MAX; /* UINT64_MAX: not read yet */

/* Bytes of freed scratch a pool keeps mapped (under pool_mutex). */
uint64_t keep_bytes() {
  if (keep_bytes_value != UINT64_MAX) return keep_bytes_value;
  uint64_t mib = kDefaultKeepMib;
  const char *env = getenv("HMX_CUDA_SCRATCH_KEEP_MIB");
  if (env && *env >= '0' && *env <= '9') {
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(env, &end, 10);
    if (*end == '\0' && errno == 0 && v <= (1ull << 40)) mib = v;
  }
  keep_bytes_value = mib << 20;
  return keep_bytes_value;
}

/* The pool of device dev (made on first use): SCRATCH_OWN_POOL and *pool,
 * or SCRATCH_DEFAULT_POOL when the keep is 0 (or dev out of the table's
 * range), or when making the pool failed (*err says why). */
enum scratch_pool_kind { SCRATCH_OWN_POOL, SCRATCH_DEFAULT_POOL };
scratch_pool_kind scratch_pool_for(int dev, cudaMemPool_t *pool, cudaError_t *err) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  *err = cudaSuccess;
  uint64_t keep = keep_bytes();
  if (keep == 0 || dev < 0 || dev >= kMaxDevices) return SCRATCH_DEFAULT_POOL;
  if (!pool_made[dev]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p;
    *err = cudaMemPoolCreate(&p, &props);
    if (*err != cudaSuccess) return SCRATCH_DEFAULT_POOL;
    *err = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
    if (*err != cudaSuccess) {
      (void)cudaMemPoolDestroy(p);
      return SCRATCH_DEFAULT_POOL;
    }
    pools[dev] = p;
    pool_made[dev] = true;
  }
  *pool = pools[dev];
  return SCRATCH_OWN_POOL;
}

} // namespace

cudaError_t scratch_malloc(void **p, size_t bytes, cudaStream_t stream) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  cudaMemPool_t pool;
  if (scratch_pool_for(dev, &pool, &e) == SCRATCH_OWN_POOL)
    return cudaMallocFromPoolAsync(p, bytes, pool, stream);
  if (e != cudaSuccess) return e;
  return cudaMallocAsync(p, bytes, stream);
}

} // namespace hmx_cuda
