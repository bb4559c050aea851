#!/usr/bin/env python3
"""Side-by-side table of tools/cuda/fwht_ab.sh: for each fwht configuration
(dtype, n, m) the % of copy bandwidth of every variant: the median GB/s over
the rounds divided by the largest copy bandwidth any bench run of the A/B
measured (one low copy measurement would otherwise flatter one variant);
'!' after a number whose run was not bit-exact.
    fwht_ab_table.py DIR NAME...   (reads DIR/ab-NAME-ROUND.jsonl)"""
import glob
import json
import statistics
import sys


def main():
    d, names = sys.argv[1], sys.argv[2:]
    vals, exact, order, copy = {}, {}, [], {}
    for name in names:
        for path in sorted(glob.glob(f"{d}/ab-{name}-*.jsonl")):
            for line in open(path):
                o = json.loads(line)
                if o.get("kind") == "copy":
                    copy.setdefault(name, []).append(o.get("gbs", 0))
                if o.get("kind") not in ("fwht", "hadamard_mix"):
                    continue
                key = (o["kind"], o["dtype"], o["n"], o.get("m", 0))
                if key not in order:
                    order.append(key)
                vals.setdefault((key, name), []).append(o["gbs"])
                exact[(key, name)] = exact.get((key, name), True) and o["bitexact"]
    if not copy:  # ROUNDS=0 (build and test only), or every bench run failed
        print(f"no bench results (ab-NAME-ROUND.jsonl with a copy line) in {d}")
        return
    top = max(max(v) for v in copy.values())
    print("copy GB/s of each bench run: " + "  ".join(f"{n} " + "/".join(f"{c:.0f}" for c in copy[n]) for n in names if n in copy)
          + f"; % below = of {top:.0f}")
    print(f"{'kind':13s}{'dtype':6s}{'n':>8s}{'m':>4s}" + "".join(f"{n:>10s}" for n in names))
    for key in order:
        cells = []
        for n in names:
            v = vals.get((key, n))
            cells.append(f"{100 * statistics.median(v) / top:9.1f}{'' if exact[(key, n)] else '!'}" if v else f"{'-':>10s}")
        print(f"{key[0]:13s}{key[1]:6s}{key[2]:8d}{key[3]:4d}" + "".join(f"{c:>10s}" for c in cells))


if __name__ == "__main__":
    main()
