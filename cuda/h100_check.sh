#!/bin/bash
# One device batch for the cuda backend on an sm_90 GPU (H100, H200;
# docs/CUDA.md): build, conformance, differential, the device-memory tests,
# compute-sanitizer, a small timing. Logs go to $OUT. Run from the
# repository root with .devcarry carried (cJSON).
#   [B=build dir] [SKIP_BUILD=1] [PARTS="tests sanitize bench"] bash cuda/h100_check.sh
# PARTS: which of the three to run after the build (default all). The whole
# takes longer than one 600-second device call; `PARTS=tests` and then
# `PARTS="sanitize bench"` in a second call fit.
set -u
PARTS=${PARTS:-tests sanitize bench}
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
OUT=${OUT:-/tmp/hmx-out}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
B=${B:-/tmp/b}
{
  echo "== command: cuda/h100_check.sh"; date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvidia-smi | head -5; nvcc --version | tail -2
} > "$OUT/gpu.txt" 2>&1
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ( set -o pipefail
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DHMX_WERROR=ON \
      -DHMX_CJSON_INCLUDE="$PWD/.devcarry/include" -DHMX_CJSON_LIBRARY="$PWD/.devcarry/lib/libcjson.so" &&
    cmake --build "$B" -j16 ) > "$OUT/build.txt" 2>&1 || { echo BUILD FAILED; tail -40 "$OUT/build.txt"; exit 1; }
  grep -i "backends compiled\|cuda backend" "$OUT/build.txt"
fi
if part tests; then
timeout 300 ctest --test-dir "$B" -R 'conform_cuda|differential_cuda|conform_ref|test_cuda' --output-on-failure \
  > "$OUT/ctest.txt" 2>&1; echo "ctest rc=$?"; tail -25 "$OUT/ctest.txt"
{ echo "== hmx conform --backend cuda -v"; "$B/tools/hmx" conform --backend cuda -v; echo "rc=$?"; } \
  > "$OUT/conform.txt" 2>&1; tail -6 "$OUT/conform.txt"
fi
part sanitize &&
{ echo "== compute-sanitizer --tool memcheck hmx conform --backend cuda"
  timeout 150 compute-sanitizer --tool memcheck --leak-check full "$B/tools/hmx" conform --backend cuda; echo "rc=$?"
  echo "== compute-sanitizer --tool memcheck --leak-check full test_cuda_device quick (device-memory path)"
  timeout 200 compute-sanitizer --tool memcheck --leak-check full "$B/tests/test_cuda_device" quick | tail -4; echo "rc=$?"
  for op in fwht hadamard_mix gemm rmsnorm layernorm rope attention swiglu; do
    echo "== compute-sanitizer --tool racecheck hmx conform --backend cuda --op $op"
    timeout 60 compute-sanitizer --tool racecheck --racecheck-report all "$B/tools/hmx" conform --backend cuda --op $op | tail -4; echo "rc=$?"
  done
  echo "== compute-sanitizer --tool racecheck test_cuda_device quick"
  timeout 200 compute-sanitizer --tool racecheck --racecheck-report all "$B/tests/test_cuda_device" quick | tail -4; echo "rc=$?"
  # the kernels with named / warp barriers and cluster exchanges, alone
  # (tests/test_cuda_device.c: test_fwht_colsplit, test_fwht_pow2_warp,
  # test_fwht_cluster_blocks)
  for mode in colsplit pow2 cluster; do
    for tool in "racecheck --racecheck-report all" "synccheck" "memcheck --leak-check full"; do
      echo "== compute-sanitizer --tool $tool test_cuda_device $mode"
      timeout 120 compute-sanitizer --tool $tool "$B/tests/test_cuda_device" $mode | tail -4; echo "rc=$?"
    done
  done
} > "$OUT/sanitizer.txt" 2>&1 &&
  grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|rc=|result|checks" "$OUT/sanitizer.txt"
part bench || exit 0
timeout 90 "$B/tools/hmx" bench fwht hadamard_mix gemm rmsnorm layernorm rope attention swiglu --backend cuda --size small \
  > "$OUT/bench.txt" 2>&1; echo "bench rc=$?"; head -40 "$OUT/bench.txt"
