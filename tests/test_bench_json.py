#!/usr/bin/env python3
"""`hmx bench --json` (tools/hmx/bench.c, bench_targets.c) from a real run at toy
sizes: the file is one JSON array; every row of the printed table is a
"measurement" record with the documented keys (docs/BENCH.md), numbers where
numbers are documented, a note exactly on the rows that did not run (a peer not
given), pairs_q1 <= vs_peer <= pairs_q3 where the runs were paired; the
targets section's record closes it (toy sizes: "not judged").

usage: test_bench_json.py HMX_BINARY"""
import json
import os
import subprocess
import sys
import tempfile

MEASUREMENT_NUMBERS = ["threads", "median_ms", "min_ms", "runs", "gflops", "gbps", "vs_ref",
                       "pct_fma_peak", "pct_mem_bw", "vs_peer", "pairs_q1", "pairs_q3"]


def table_rows(stdout):
    """The table's rows: the lines after its header up to the first blank line,
    less the indented lines under a row (avx512's "best run: ...% of the
    vector-op bound", printed only where avx512 runs), which are not rows."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("op "))
    table = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if not line.startswith(" "):
            table.append(line)
    return table


def main():
    hmx = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.json")
        # exp has a peer (SLEEF) where it was built in: its ratios come from pairs
        run = subprocess.run([hmx, "bench", "fwht", "exp", "rmsnorm", "--reps", "3",
                              "--rounds", "2", "--size", "small", "--threads", "1",
                              "--json", path],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            sys.exit("hmx bench failed")
        with open(path) as f:
            records = json.load(f)
    if not isinstance(records, list) or not records:
        sys.exit("not a non-empty JSON array")
    table = table_rows(run.stdout)
    measurements = [r for r in records if r.get("record") == "measurement"]
    for r in measurements:
        for key in ["op", "shape", "impl"]:
            if not isinstance(r.get(key), str):
                failures.append(f"{r}: {key} is not a string")
        if not isinstance(r.get("peer"), bool):
            failures.append(f"{r}: peer is not a boolean")
        for key in MEASUREMENT_NUMBERS:
            if not isinstance(r.get(key), (int, float)):
                failures.append(f"{r}: {key} is not a number")
        ran = r.get("median_ms", -1) > 0
        if ran != (r.get("note") is None) or not (ran or isinstance(r.get("note"), str)):
            failures.append(f"{r}: a row that ran has no note, one that did not has its reason")
        if r.get("pairs_q1", -1) > 0:
            if not r["pairs_q1"] <= r["vs_peer"] <= r["pairs_q3"]:
                failures.append(f"{r}: vs_peer outside its pairs' middle half")
    if len(measurements) != len(table) or not measurements:
        failures.append(f"{len(measurements)} measurement records for {len(table)} table rows")
    last = records[-1]
    if last.get("record") != "targets" or last.get("verdict") != "not judged" or \
            "toy sizes" not in last.get("note", ""):
        failures.append(f"last record: {last}")
    if any(r.get("record") not in ("measurement", "target", "targets") for r in records):
        failures.append("a record of no documented kind")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(records)} records, {len(measurements)} measurements, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
