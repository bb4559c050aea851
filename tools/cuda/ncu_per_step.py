#!/usr/bin/env python3
"""GPU time of one decode step, per kernel, from two Nsight Compute runs.

Run `hmx generate` under ncu twice, with the same prompt and 1 and 9 decoded
tokens; the difference of the two is 8 decode steps (prefill and setup
cancel out):

  for n in 1 9; do
    ncu --metrics gpu__time_duration.sum --csv hmx generate --config tiny \\
        --backend cuda --tokens 1,2,3,4,5,6,7,8 -n $n > ncu_$n.csv
  done
  python3 tools/cuda/ncu_per_step.py ncu_1.csv ncu_9.csv

Prints, per kernel and grid size, the launches and the microseconds of one
step. ncu runs each kernel alone with cold caches, so the sum is above what
a step takes in a normal run; the shares are what it is for
(docs/results/session58/)."""
import collections
import csv
import sys

STEPS = 8


def load(path):
    """Total microseconds and launches per (kernel, grid) of one ncu csv."""
    rows = list(csv.reader(line for line in open(path) if line.startswith('"')))
    head = rows[0]
    kname, value, unit, grid = (head.index(c) for c in
                                ("Kernel Name", "Metric Value", "Metric Unit", "Grid Size"))
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
    total, count = collections.Counter(), collections.Counter()
    for r in rows[1:]:
        if r[unit] not in scale:
            sys.exit(f"{path}: unexpected unit {r[unit]!r}")
        name = r[kname].replace("void ", "").replace("<unnamed>::", "").split("(")[0]
        key = f"{name} {r[grid]}"
        total[key] += float(r[value].replace(",", "")) * scale[r[unit]]
        count[key] += 1
    return total, count


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    t1, c1 = load(sys.argv[1])
    t9, c9 = load(sys.argv[2])
    launches = (sum(c9.values()) - sum(c1.values())) / STEPS
    gpu_us = (sum(t9.values()) - sum(t1.values())) / STEPS
    print(f"per decode step: kernels {launches:.1f} GPU us {gpu_us:.1f}")
    for k in sorted(t9, key=lambda k: -(t9[k] - t1[k])):
        us = (t9[k] - t1[k]) / STEPS
        n = (c9[k] - c1.get(k, 0)) / STEPS
        if n > 0:
            print(f"  {k:50s} {n:6.1f}/step {us:9.1f} us/step  {us / n:8.2f} us each")


if __name__ == "__main__":
    main()
