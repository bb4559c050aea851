/* The project's exp and SiLU on the device (docs/NUMERICS.md §E), shared
 * by the exact kernels (cuda/kernels.cu) and the fast tier's attention
 * (cuda/fast_attention.cu), which uses the same exp so that its only
 * departures from the exact tier are the ones its bound names; and the two
 * launch helpers both tiers share (the SiLU gate, the shared-memory opt-in). */
#ifndef HMX_CUDA_DEV_MATH_CUH
#define HMX_CUDA_DEV_MATH_CUH

#include "device_slots.cuh"

/* docs/NUMERICS.md §E: hmx_expf (src/canon_exp.c) op for op. Every rounding is
 * its _rn intrinsic, the 2^n bits are built on the bits of z, and the selects
 * of lines 27-31 come last, in order, with ordered compares (NaN test last).
 * -ftz=false keeps the subnormal path (lines 25-26) exact. */
static __device__ __forceinline__ float dev_expf(float x) {
  const float z = __fmaf_rn(x, 0x1.715476p+0f, 0x1.8p+23f); /*  1 */
  const float n = __fsub_rn(z, 0x1.8p+23f);                  /*  2 */
  const float r1 = __fmaf_rn(n, -0x1.62e43p-1f, x);          /*  3 */
  const float rl = __fmul_rn(n, 0x1.05c61p-29f);             /*  4 */
  const float r = __fadd_rn(r1, rl);                         /*  5 */
  float q = __fmaf_rn(0x1.6ac74ep-10f, r, 0x1.123dep-7f);    /*  6 */
  q = __fmaf_rn(q, r, 0x1.555858p-5f);                       /*  7 */
  q = __fmaf_rn(q, r, 0x1.55548cp-3f);                       /*  8 */
  q = __fmaf_rn(q, r, 0x1.fffffcp-2f);                       /*  9 */
  const float m = __fmul_rn(__fadd_rn(r1, r1), rl);          /* 10 */
  const float r2 = __fmaf_rn(r1, r1, m);                     /* 11 */
  const float c = __fmaf_rn(r2, q, rl);                      /* 12 */
  const float w = __fadd_rn(1.0f, r1);                       /* 13 */
  const float wm1 = __fsub_rn(w, 1.0f);                      /* 14 */
  const float e1 = __fsub_rn(r1, wm1);                       /* 15 */
  const float cc = __fadd_rn(e1, c);                         /* 16 */
  const float p = __fadd_rn(w, cc);                          /* 17 */
  const float t = __fadd_rn(wm1, cc);                        /* 18 */
  const unsigned kb = __float_as_uint(z) - 0x4B3FFF00u;      /* 19 */
  const unsigned k1 = kb >> 1;                               /* 20 */
  const unsigned k2 = kb - k1;                               /* 21 */
  const float a = __uint_as_float((k1 - 1u) << 23);          /* 22 */
  const float b = __uint_as_float((k2 - 1u) << 23);          /* 23 */
  const float yn = __fmul_rn(__fmul_rn(p, a), b);            /* 24 */
  const float s = __fmul_rn(a, b);                           /* 25 */
  const float ys = __fmaf_rn(s, t, s);                       /* 26 */
  float y = (yn < 0x1p-126f) ? ys : yn;                      /* 27 */
  y = (n < -149.0f) ? 0x1p-149f : y;                         /* 28 */
  y = (x > 0x1.62e42ep+6f) ? __uint_as_float(0x7F800000u) : y; /* 29: +inf */
  y = (x < -0x1.9fe368p+6f) ? 0.0f : y;                      /* 30 */
  y = (x != x) ? __fadd_rn(x, x) : y;                        /* 31 */
  return y;
}

/* silu(x) = x / (1 + exp(-x)): negate (exact), exp, one add, one division. */
static __device__ __forceinline__ float dev_siluf(float x) {
  return __fdiv_rn(x, __fadd_rn(1.0f, dev_expf(-x)));
}

/* g = silu(a) * b elementwise, in place in a (swiglu, both tiers). */
static __global__ void swiglu_gate(float *__restrict__ a, const float *__restrict__ b,
                                   int64_t total) {
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x)
    a[idx] = __fmul_rn(dev_siluf(a[idx]), b[idx]);
}

/* The dynamic shared memory a kernel may use: 48 KB without asking; more
 * after cudaFuncSetAttribute, asked once per kernel and device for `want`
 * bytes (capped by the device's opt-in limit less the kernel's static shared
 * memory); granted[kDeviceSlots] keeps each device's answer (0: not yet
 * asked; cuda/device_slots.cuh). If asking fails (a tool such as
 * compute-sanitizer may keep some shared memory), the error is cleared and
 * 48 KB is the limit: the caller then takes the general kernel, which gives
 * the same bits. The race of two
 * first calls is benign: both ask for the same size. Before session 61 the
 * answer was kept once per process, so a second GPU would have launched
 * these kernels without its limit raised (an error, not a wrong answer). */
template <typename F>
static size_t att_smem_limit(F *kernel, size_t want, volatile long long *granted) {
  int dev;
  const int slot = current_device_slot(&dev);
  if (dev < 0) return 48 * 1024; /* the general kernel runs */
  if (slot >= 0 && granted[slot] > 0) return (size_t)granted[slot];
  size_t lim = 48 * 1024;
  int optin = 0;
  cudaFuncAttributes fa;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      cudaFuncGetAttributes(&fa, kernel) == cudaSuccess) {
    size_t cap = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
    size_t ask = want < cap ? want : cap;
    if (ask > lim &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ask) ==
            cudaSuccess)
      lim = ask;
  }
  (void)cudaGetLastError(); /* a refusal is not an error of this call */
  if (slot >= 0) granted[slot] = (long long)lim;
  return lim;
}

#endif
