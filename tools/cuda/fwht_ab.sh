#!/bin/bash
# A/B of fwht kernel variants on the H100 (docs/CUDA.md, "Speed"). Each
# variant is a set of -D flags for cuda/fwht_impl.cuh (HMX_FWHT_E_F32,
# HMX_FWHT_E_16, HMX_FWHT_ONE_COLUMN_MIN_M, HMX_FWHT_STCS, ...): the tree is
# configured and built once per variant (in parallel), the cuda conformance
# and differential tests run on the variants named in TEST, then
# hmx-cuda-bench --only fwht runs on every variant, one after the other,
# ROUNDS times, and tools/cuda/fwht_ab_table.py prints the % of copy side by
# side (each run's own cudaMemcpy copy bandwidth; every timed configuration
# checked bit for bit against ref). Without TEST only hmx-cuda-bench is
# built. Run from the repository root:
#   VARIANTS='base:;e16:-DHMX_FWHT_E_F32=16' [TEST='e16'] [ROUNDS=1]
#   [CJ=dir holding cJSON's include/ and lib/] [OUT=dir] [B=build prefix]
#   [NCU='regex ...'] [FWHT_N=1792,2560] bash tools/cuda/fwht_ab.sh
# FWHT_N: only those row lengths (hmx-cuda-bench --fwht-n).
# NCU: mangled kernel names (regexes) profiled with Nsight Compute on the
# first variant (64 MiB inputs, the first matching launch), into
# $OUT/ncu-N.txt.
set -u
OUT=${OUT:-/tmp/fwht-ab}
mkdir -p "$OUT"
B=${B:-/tmp/ab}
CJ=${CJ:-$PWD/.devcarry}
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$CJ/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
only_bench=()
[ -z "${TEST:-}" ] && only_bench=(--target hmx-cuda-bench)
IFS=';' read -ra vs <<< "${VARIANTS:?VARIANTS='name:flags;...'}"
names=()
{ echo "== tools/cuda/fwht_ab.sh VARIANTS='$VARIANTS' TEST='${TEST:-}' ROUNDS=${ROUNDS:-1}"; date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
} > "$OUT/ab_gpu.txt" 2>&1
for v in "${vs[@]}"; do
  name=${v%%:*}
  names+=("$name")
  ( cmake -S . -B "$B-$name" -DCMAKE_BUILD_TYPE=Release -DHMX_WERROR=ON \
      -DHMX_CJSON_INCLUDE="$CJ/include" -DHMX_CJSON_LIBRARY="$CJ/lib/libcjson.so" \
      -DCMAKE_CUDA_FLAGS="${v#*:}" > "$OUT/build-$name.txt" 2>&1 &&
      cmake --build "$B-$name" -j8 "${only_bench[@]}" >> "$OUT/build-$name.txt" 2>&1 ||
      { echo "BUILD FAILED: $name"; tail -30 "$OUT/build-$name.txt"; } ) &
done
wait
date -u
for name in ${TEST:-}; do
  timeout 240 ctest --test-dir "$B-$name" -R 'conform_cuda|differential_cuda|test_cuda' \
    --output-on-failure > "$OUT/ctest-$name.txt" 2>&1
  echo "ctest $name rc=$?: $(grep 'tests passed' "$OUT/ctest-$name.txt")"
done
for r in $(seq 1 "${ROUNDS:-1}"); do
  for name in "${names[@]}"; do
    "$B-$name/hmx-cuda-bench" --only fwht --out "$OUT/ab-$name-$r.jsonl" --mib "${MIB:-1024}" \
      --reps "${REPS:-15}" ${FWHT_N:+--fwht-n "$FWHT_N"} || echo "bench $name failed"
  done
done
date -u
i=0
for re in ${NCU:-}; do
  i=$((i + 1))
  timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:$re" -c 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats \
    "$B-${names[0]}/hmx-cuda-bench" --only fwht --out /dev/null --mib 64 --reps 1 > "$OUT/ncu-$i.txt" 2>&1
  echo "ncu $re rc=$?"
done
python3 tools/cuda/fwht_ab_table.py "$OUT" "${names[@]}" | tee "$OUT/ab_table.txt"
