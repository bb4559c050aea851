#!/usr/bin/env python3
"""The PyTorch side of tools/cuda/fast_gemm_h100.sh: torch.matmul on the
shapes of hmx-cuda-fast-bench (tools/cuda/bench_fast_gemm_cuda.c) with the
same timing rule (R batches of C back-to-back calls after 3 warm-ups, CUDA
events, the median batch / C): f32 with TF32 on
(torch.backends.cuda.matmul.allow_tf32) and bf16. One JSON object per line.

  bench_fast_gemm_torch.py [--reps R] [--calls C]"""
import argparse
import json

import torch


def per_call_us(fn, reps, calls):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return 1000.0 * times[len(times) // 2] / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    m = 4096
    for name, dt in (("tf32", torch.float32), ("bf16", torch.bfloat16)):
        for k, n in ((768, 768), (768, 2048), (2048, 768), (1536, 1536)):
            a = (torch.rand(m, k, device="cuda") * 2 - 1).to(dt)
            b = (torch.rand(k, n, device="cuda") * 2 - 1).to(dt)
            c = torch.empty(m, n, device="cuda", dtype=dt)
            us = per_call_us(lambda: torch.matmul(a, b, out=c), args.reps, args.calls)
            print(json.dumps({"impl": "torch.matmul", "dtype": name, "m": m, "k": k, "n": n,
                              "us": round(us, 3), "tflops": round(2.0 * m * k * n / (us * 1e-6) / 1e12, 1),
                              "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
