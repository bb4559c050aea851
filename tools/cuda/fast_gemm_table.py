#!/usr/bin/env python3
"""Join the JSON lines of hmx-cuda-fast-bench and bench_fast_gemm_torch.py
(tools/cuda/fast_gemm_h100.sh) into one markdown table: per dtype and shape,
the best time of each side over the rounds and hadamix as % of PyTorch
(torch time / hadamix time).

  fast_gemm_table.py FILE..."""
import json
import sys

best = {}
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["dtype"], r["m"], r["k"], r["n"], r["impl"])
        best[key] = min(best.get(key, float("inf")), r["us"])
print("| dtype | M x K x N | hadamix fast us | torch.matmul us | hadamix TFLOP/s | % of PyTorch |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for dt in ("tf32", "bf16"):
    for (d, m, k, n, impl), us in sorted(best.items()):
        if d != dt or impl != "hadamix-fast":
            continue
        t = best.get((d, m, k, n, "torch.matmul"))
        pct = "%.1f" % (100.0 * t / us) if t else "-"
        print("| %s | %dx%dx%d | %.2f | %s | %.0f | %s |" % (
            d, m, k, n, us, "%.2f" % t if t else "-", 2.0 * m * k * n / us / 1e6, pct))
