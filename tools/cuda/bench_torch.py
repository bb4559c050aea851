#!/usr/bin/env python3
"""The peer side of tools/cuda/bench_h100.sh: PyTorch and Dao-AILab's
fast-hadamard-transform on the same GPU, the same shapes and the same
timing rule as tools/cuda/bench_cuda.c (CUDA events around each call,
median of the timed calls after two warm-ups, inputs of --mib MiB so the
50 MB L2 is cold). One JSON object per line.

  bench_torch.py [--out FILE] [--mib M] [--reps R] [--dao DIR] [--quick] [--only LIST]

--dao DIR: a directory holding an already built `fast_hadamard_transform_cuda`
extension module (built from github.com/Dao-AILab/fast-hadamard-transform
outside this repository, docs/CUDA.md says how); without it the Dao rows
are left out. gemm is cuBLAS SGEMM through torch.mm with TF32 off;
attention is torch.nn.functional.scaled_dot_product_attention in fp32."""
import argparse
import json
import math
import sys

import torch


def median_ms(fn, reps):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    fn()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="-")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--dao", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=None,
                    help="comma-separated kinds to run: fwht, gemm, attention, attention_tier (default all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else {"fwht", "gemm", "attention", "attention_tier"}
    out = sys.stdout if args.out == "-" else open(args.out, "w")

    def emit(**kv):
        out.write(json.dumps(kv) + "\n")
        out.flush()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    emit(kind="gpu", impl="torch", name=props.name, torch=torch.__version__,
         cuda=torch.version.cuda)

    nbytes = args.mib << 20
    src = torch.randn(nbytes // 4, device=dev)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), args.reps)
    emit(kind="copy", impl="torch", bytes=nbytes, ms=ms, gbs=2 * nbytes / ms * 1e-6)
    del src, dst

    dao = None
    if args.dao:
        sys.path.insert(0, args.dao)
        try:
            import fast_hadamard_transform_cuda as dao  # noqa: F401
        except ImportError as e:
            emit(kind="note", what="Dao-AILab module not loaded: %s" % e)
            dao = None

    sizes = [(n, 1) for n in (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)]
    for m in (12, 20, 28, 40):
        sizes += [(m * (1 << k), m) for k in range(5, 11) if m * (1 << k) <= m * 1024]
    if args.quick:
        sizes = [s for s in sizes if s[0] in (768, 1024, 16384)]
    if dao is not None and "fwht" in only:
        fn_of = {1: dao.fast_hadamard_transform, 12: dao.fast_hadamard_transform_12N,
                 20: dao.fast_hadamard_transform_20N, 28: dao.fast_hadamard_transform_28N,
                 40: dao.fast_hadamard_transform_40N}
        for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16"),
                            (torch.float16, "f16")):
            es = torch.tensor([], dtype=dtype).element_size()
            for n, m in sizes:
                rows = nbytes // (n * es)
                x = torch.randn(rows, n, device=dev, dtype=dtype)
                f = fn_of[m]
                ms = median_ms(lambda: f(x, 0.125), args.reps)
                moved = 2.0 * rows * n * es
                emit(kind="fwht", impl="dao", dtype=name, n=n, m=m, rows=rows, ms=ms,
                     gbs=moved / ms * 1e-6)
                del x
            x = torch.randn(8, 1024, device=dev, dtype=dtype)
            ms = median_ms(lambda: dao.fast_hadamard_transform(x, 0.125), 200)
            emit(kind="latency", what="fwht 8x1024 %s" % name, impl="dao", ms=ms)

    for m_ in ((4096, 16384) if "gemm" in only else ()):
        for k, n in ((768, 768), (768, 2048), (2048, 768), (1536, 1536)):
            if args.quick and (m_, k, n) != (4096, 768, 768):
                continue
            a = torch.randn(m_, k, device=dev)
            b = torch.randn(k, n, device=dev)
            ms = median_ms(lambda: torch.mm(a, b), max(args.reps, 10))
            emit(kind="gemm", impl="cublas", m=m_, k=k, n=n, ms=ms,
                 tflops=2.0 * m_ * n * k / ms * 1e-9)

    sdpa = torch.nn.functional.scaled_dot_product_attention

    def att(what, b, sq, skv, h, d, causal, reps):
        # torch's layout is [B, H, S, D]; ours [B, S, H, D]: same bytes moved
        q = torch.randn(b, h, sq, d, device=dev)
        k = torch.randn(b, h, skv, d, device=dev)
        v = torch.randn(b, h, skv, d, device=dev)
        # a causal single-query decode over the whole cache is the non-causal call
        c = causal and sq > 1
        ms = median_ms(lambda: sdpa(q, k, v, is_causal=c), reps)
        flops = 4.0 * b * h * sq * skv * d * (0.5 if c else 1.0)
        moved = 4.0 * (2 * b * skv * h * d + 2 * b * sq * h * d)
        emit(kind="attention", what=what, impl="torch_sdpa", b=b, sq=sq, skv=skv, h=h, d=d,
             causal=int(causal), ms=ms, tflops=flops / ms * 1e-9, gbs=moved / ms * 1e-6)

    def att_tier(what, b, sq, skv, h, d, causal, reps):
        # the fast tier's peers: SDPA with TF32 matmuls allowed, and in bf16
        c = causal and sq > 1
        flops = 4.0 * b * h * sq * skv * d * (0.5 if c else 1.0)
        moved = 4.0 * (2 * b * skv * h * d + 2 * b * sq * h * d)
        for impl, dtype, tf32 in (("torch_sdpa_f32", torch.float32, False),
                                  ("torch_sdpa_tf32", torch.float32, True),
                                  ("torch_sdpa_bf16", torch.bfloat16, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            q = torch.randn(b, h, sq, d, device=dev, dtype=dtype)
            k = torch.randn(b, h, skv, d, device=dev, dtype=dtype)
            v = torch.randn(b, h, skv, d, device=dev, dtype=dtype)
            ms = median_ms(lambda: sdpa(q, k, v, is_causal=c), reps)
            emit(kind="attention_tier", what=what, impl=impl, b=b, sq=sq, skv=skv, h=h, d=d,
                 causal=int(causal), ms=ms, tflops=flops / ms * 1e-9, gbs=moved / ms * 1e-6)
            del q, k, v
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    if "attention_tier" in only:
        att_tier("prefill", 8, 1024, 1024, 12, 64, True, 10)
        att_tier("prefill", 8, 1024, 1024, 12, 64, False, 10)
        att_tier("prefill", 4, 2048, 2048, 16, 128, True, 10)
        att_tier("decode", 64, 1, 4096, 12, 64, True, 10)
    if "attention" in only:
        att("prefill", 8, 1024, 1024, 12, 64, True, 10)
        if not args.quick:
            att("decode", 64, 1, 1024, 12, 64, True, 20)
            att("decode", 64, 1, 4096, 12, 64, True, 20)
            att("prefill", 4, 2048, 2048, 16, 128, True, 10)  # no target: D = 128
        att("decode step", 1, 1, 1024, 12, 64, True, 100)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
