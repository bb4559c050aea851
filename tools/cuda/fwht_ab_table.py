#!/usr/bin/env python3
"""Side-by-side table of tools/cuda/fwht_ab.sh: for each fwht configuration
(dtype, n, m) the % of copy bandwidth of every variant; '!' after a number
whose run was not bit-exact.

    fwht_ab_table.py [--own-copy] DIR NAME...   (reads DIR/ab-NAME-ROUND.jsonl)

By default a cell is the median GB/s over the rounds divided by the largest
copy bandwidth any bench run of the A/B measured (one low copy measurement
would otherwise flatter one variant). With --own-copy a cell is the mean
over the rounds of each run's GB/s divided by that run's own copy, followed
by each round's value (the form docs/results/h200/split_store/ quotes): it
takes out the drift of the memory between runs, which the default keeps."""
import glob
import json
import statistics
import sys


def load(d, names):
    """runs[name] = [(copy GB/s, {key: (GB/s, bitexact)}), ...] in round order;
    order = the configurations in the order first seen."""
    runs, order = {}, []
    for name in names:
        paths = sorted(glob.glob(f"{d}/ab-{name}-*.jsonl"),
                       key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))
        for path in paths:
            copy, res = None, {}
            for line in open(path):
                o = json.loads(line)
                if o.get("kind") == "copy":
                    copy = o.get("gbs", 0)
                if o.get("kind") not in ("fwht", "hadamard_mix"):
                    continue
                key = (o["kind"], o["dtype"], o["n"], o.get("m", 0))
                if key not in order:
                    order.append(key)
                res[key] = (o["gbs"], o["bitexact"])
            if copy:
                runs.setdefault(name, []).append((copy, res))
    return runs, order


def main():
    args = sys.argv[1:]
    own = "--own-copy" in args
    args = [a for a in args if a != "--own-copy"]
    d, names = args[0], args[1:]
    runs, order = load(d, names)
    if not runs:  # ROUNDS=0 (build and test only), or every bench run failed
        print(f"no bench results (ab-NAME-ROUND.jsonl with a copy line) in {d}")
        return
    top = max(c for rs in runs.values() for c, _ in rs)
    print("copy GB/s of each bench run: " +
          "  ".join(f"{n} " + "/".join(f"{c:.0f}" for c, _ in runs[n]) for n in names if n in runs) +
          ("; % below = of each run's own copy, mean (rounds)" if own else f"; % below = of {top:.0f}"))
    width = 10 + (7 * max(len(rs) for rs in runs.values()) if own else 0)
    print(f"{'kind':13s}{'dtype':6s}{'n':>8s}{'m':>4s}" + "".join(f"{n:>{width}s}" for n in names))
    for key in order:
        cells = []
        for n in names:
            got = [(g, c, ok) for c, res in runs.get(n, []) if key in res for g, ok in [res[key]]]
            if not got:
                cells.append("-")
                continue
            bang = "" if all(ok for _, _, ok in got) else "!"
            if own:
                pct = [100 * g / c for g, c, _ in got]
                cells.append(f"{statistics.mean(pct):.1f}{bang} (" + " ".join(f"{p:.1f}" for p in pct) + ")")
            else:
                cells.append(f"{100 * statistics.median(g for g, _, _ in got) / top:.1f}{bang}")
        print(f"{key[0]:13s}{key[1]:6s}{key[2]:8d}{key[3]:4d}" + "".join(f"{c:>{width}s}" for c in cells))


if __name__ == "__main__":
    main()
