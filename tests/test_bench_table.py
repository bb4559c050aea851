#!/usr/bin/env python3
"""tools/cuda/bench_table.py (the CUDA benchmark's tables, docs/CUDA.md) on
made-up results: the fwht verdicts, the issue cap and the tally.

  test_bench_table.py BENCH_TABLE_PY

Checks, each of which fails on a wrong table or count:
  * the matrices it reads from src/hadamard_factors.c are Hadamard matrices
    of orders 12, 20, 28, 40 (H H^T = m I);
  * its shared-prefix count of the m-point additions equals a count made
    another way (inserting each row's signs into a trie and counting the
    nodes that add), lies between m - 1 + (m - 1) and m * (m - 1), and is
    below m * (m - 1) for every m (H_m's rows share some prefixes);
  * on a made-up run: a met row, a missed row under its cap, a missed row
    above its cap (bf16 40 * 64 at an issue rate that cannot reach 90% of
    the copy), the cap's value for f32 1024, and the tally line."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from pycheck import check, finish


def trie_adds(rows):
    """Additions of the m-point sums with shared prefixes, counted by
    building the trie of the rows' sign sequences: every node below depth 1
    is one addition (depth 1 is +-u[0], a negation, free)."""
    root, adds = {}, 0
    for r in rows:
        node = root
        for depth, sign in enumerate(r):
            if sign not in node:
                node[sign] = {}
                if depth >= 1:
                    adds += 1
            node = node[sign]
    return adds


def main():
    path = sys.argv[1]
    spec = importlib.util.spec_from_file_location("bench_table", path)
    bt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bt)

    hs = bt.hadamard_factors()
    check(sorted(hs) == [12, 20, 28, 40], "orders read: %s" % sorted(hs))
    for m, rows in hs.items():
        check(len(rows) == m and all(len(r) == m for r in rows), "H_%d is %d x m" % (m, len(rows)))
        gram_ok = all(sum(a * b for a, b in zip(rows[i], rows[j])) == (m if i == j else 0)
                      for i in range(m) for j in range(m))
        check(gram_ok, "H_%d H_%d^T = %d I" % (m, m, m))
        adds = bt.MPOINT_ADDS[m]
        check(adds == trie_adds(rows), "H_%d: %d shared-prefix additions, the trie has %d"
              % (m, adds, trie_adds(rows)))
        check(2 * (m - 1) <= adds < m * (m - 1), "H_%d: %d additions out of range" % (m, adds))

    # A made-up run: copy 4000 GB/s, 32 T FP32 adds a second.
    lines = [
        {"kind": "gpu", "name": "made-up", "sms": 132, "cuda_driver": 13000},
        {"kind": "copy", "impl": "cudaMemcpy", "bytes": 1 << 30, "ms": 1.0, "gbs": 4000.0},
        {"kind": "peak", "what": "fp32_add", "gops": 32000.0},
        {"kind": "fwht", "impl": "hmx", "dtype": "f32", "n": 1024, "m": 0, "rows": 1,
         "ms": 1.0, "gbs": 3960.0, "pct_copy": 99.0, "bitexact": True},
        {"kind": "fwht", "impl": "hmx", "dtype": "bf16", "n": 1024, "m": 0, "rows": 1,
         "ms": 1.0, "gbs": 3200.0, "pct_copy": 80.0, "bitexact": True},
        {"kind": "fwht", "impl": "hmx", "dtype": "bf16", "n": 2560, "m": 40, "rows": 1,
         "ms": 1.0, "gbs": 2400.0, "pct_copy": 60.0, "bitexact": True},
    ]
    with tempfile.TemporaryDirectory() as d:
        jl = os.path.join(d, "hmx.jsonl")
        with open(jl, "w") as f:
            for o in lines:
                f.write(json.dumps(o) + "\n")
        out = subprocess.run([sys.executable, path, jl], capture_output=True, text=True)
    check(out.returncode == 0, "bench_table.py exit %d: %s" % (out.returncode, out.stderr))
    rows = {}
    for ln in out.stdout.splitlines():
        c = [x.strip() for x in ln.split("|")]
        if len(c) > 12 and c[1].isdigit():
            rows[(c[1], c[2], c[3])] = c
    f1024 = rows.get(("1024", "1", "f32"))
    # f32 1024: 10 stages + scale = 11 instructions; 32000e9 / 11 elements a
    # second * 8 bytes / 4000 GB/s = 581.8% of the copy
    check(f1024 is not None and f1024[10] == "yes" and f1024[11] == "582%",
          "f32 1024 row: %s" % f1024)
    b1024 = rows.get(("1024", "1", "bf16"))
    check(b1024 is not None and b1024[10] == "no (-10.0 pt)", "bf16 1024 row: %s" % b1024)
    # bf16 40 * 64: 6 + 1129 / 40 + 1 + 1.5 = 36.7 an element: cap 87.2% < 90
    b40 = rows.get(("2560", "40", "bf16"))
    check(b40 is not None and b40[10] == "no (-30.0 pt), beyond the cap" and b40[11] == "87%",
          "bf16 40 * 64 row: %s" % b40)
    check("fwht targets: 1 met, 2 missed (1 of them above their issue cap)" in out.stdout,
          "tally line missing:\n" + out.stdout)
    return finish("test_bench_table")


if __name__ == "__main__":
    sys.exit(main())
