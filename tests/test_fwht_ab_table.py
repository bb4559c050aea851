#!/usr/bin/env python3
"""tools/cuda/fwht_ab_table.py (the side-by-side table of tools/cuda/fwht_ab.sh)
on made-up runs whose cells are known:

  test_fwht_ab_table.py FWHT_AB_TABLE_PY

Two variants, of two and three rounds, with different copy bandwidths per run:
  * default: a cell is the median GB/s over the rounds / the largest copy of
    any run;
  * --own-copy: a cell is the mean over the rounds of GB/s / the run's own
    copy, then each round's value in round order (round 10 after round 2);
  * '!' marks a configuration with a run that was not bit-exact, '-' one a
    variant did not run."""
import json
import os
import subprocess
import sys
import tempfile

from pycheck import check, finish


def write_run(d, name, rnd, copy, rows):
    with open(os.path.join(d, f"ab-{name}-{rnd}.jsonl"), "w") as f:
        f.write(json.dumps({"kind": "copy", "impl": "cudaMemcpy", "gbs": copy}) + "\n")
        for dtype, n, m, gbs, exact in rows:
            f.write(json.dumps({"kind": "fwht", "impl": "hmx", "dtype": dtype, "n": n, "m": m,
                                "gbs": gbs, "bitexact": exact}) + "\n")


def cells(out, dtype, n):
    for line in out.splitlines():
        f = line.split()
        if len(f) > 4 and f[0] == "fwht" and f[1] == dtype and f[2] == str(n):
            return line
    return None


def main():
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        # a: rounds 2 and 10 (sorted as numbers, not as text)
        write_run(d, "a", 2, 4000.0, [("f32", 1024, 0, 3600.0, True), ("bf16", 2048, 0, 3000.0, True)])
        write_run(d, "a", 10, 3800.0, [("f32", 1024, 0, 3420.0, True), ("bf16", 2048, 0, 3100.0, False)])
        write_run(d, "b", 1, 4200.0, [("f32", 1024, 0, 4116.0, True)])
        write_run(d, "b", 2, 4100.0, [("f32", 1024, 0, 4018.0, True)])
        write_run(d, "b", 3, 4000.0, [("f32", 1024, 0, 3000.0, True)])
        run = lambda *a: subprocess.run([sys.executable, tool, *a], capture_output=True, text=True)
        p = run(d, "a", "b")
        check(p.returncode == 0, f"default: exit {p.returncode}: {p.stderr}")
        # top copy 4200: a 1024 median(3600, 3420) = 3510 -> 83.6; b median(4116, 4018, 3000)
        # = 4018 -> 95.7 (the mean, 3711, would be 88.4)
        row = cells(p.stdout, "f32", 1024)
        check(row is not None and row.split()[4:] == ["83.6", "95.7"], f"default f32 1024: {row}")
        row = cells(p.stdout, "bf16", 2048)
        # a: median(3000, 3100) = 3050 -> 72.6, one run not bit-exact; b did not run it
        check(row is not None and row.split()[4:] == ["72.6!", "-"], f"default bf16 2048: {row}")
        p = run("--own-copy", d, "a", "b")
        check(p.returncode == 0, f"--own-copy: exit {p.returncode}: {p.stderr}")
        # a: 3600 / 4000 = 90.0, 3420 / 3800 = 90.0; b: 4116 / 4200 = 98.0, 4018 / 4100 = 98.0,
        # 3000 / 4000 = 75.0: mean 90.3
        row = cells(p.stdout, "f32", 1024)
        check(row is not None and row.split()[4:] == ["90.0", "(90.0", "90.0)", "90.3", "(98.0", "98.0", "75.0)"],
              f"--own-copy f32 1024: {row}")
        # a: 3000 / 4000 = 75.0 (round 2), 3100 / 3800 = 81.6 (round 10): mean 78.3
        row = cells(p.stdout, "bf16", 2048)
        check(row is not None and row.split()[4:] == ["78.3!", "(75.0", "81.6)", "-"],
              f"--own-copy bf16 2048: {row}")
        p = run(d, "nothing")
        check(p.returncode == 0 and "no bench results" in p.stdout, f"no runs: {p.stdout} {p.stderr}")
    return finish("test_fwht_ab_table")


if __name__ == "__main__":
    sys.exit(main())
