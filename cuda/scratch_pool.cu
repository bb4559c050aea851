/* Stream-ordered device scratch for every call (job.cuh's job_alloc_bytes;
 * host-memory calls since session 56, whose cudaMalloc / cudaFree cost
 * more than the rest of a small call) and stage.cu's 16-bit staging: one
 * memory pool per device,
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
 * default kept: it is read once, when the first pool is made. A device that
 * cannot make a pool takes its current pool too. */
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
enum { POOL_NOT_YET, POOL_MADE, POOL_FAILED };
int pool_state[kMaxDevices];
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

/* The pool of device dev, made on first use (true, *pool), or false: the
 * keep is 0, dev is beyond the table, or the device could not make one
 * (memory pools unsupported, say; tried once per device, its error cleared),
 * and the device's current pool serves instead. */
bool own_pool(int dev, cudaMemPool_t *pool) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  uint64_t keep = keep_bytes();
  if (keep == 0 || dev < 0 || dev >= kMaxDevices || pool_state[dev] == POOL_FAILED) return false;
  if (pool_state[dev] == POOL_NOT_YET) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p;
    if (cudaMemPoolCreate(&p, &props) != cudaSuccess) {
      (void)cudaGetLastError();
      pool_state[dev] = POOL_FAILED;
      return false;
    }
    if (cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaMemPoolDestroy(p);
      pool_state[dev] = POOL_FAILED;
      return false;
    }
    pools[dev] = p;
    pool_state[dev] = POOL_MADE;
  }
  *pool = pools[dev];
  return true;
}

} // namespace

cudaError_t scratch_malloc(void **p, size_t bytes, cudaStream_t stream) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  cudaMemPool_t pool;
  if (own_pool(dev, &pool)) return cudaMallocFromPoolAsync(p, bytes, pool, stream);
  return cudaMallocAsync(p, bytes, stream);
}

} // namespace hmx_cuda

extern "C" long long hmx_cuda_scratch_reserved(int device) {
  cudaMemPool_t pool;
  if (!hmx_cuda::own_pool(device, &pool) && cudaDeviceGetMemPool(&pool, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  unsigned long long bytes = 0; /* the attribute's value type, cuuint64_t */
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return (long long)bytes;
}
