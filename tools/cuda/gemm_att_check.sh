#!/bin/bash
# One device batch for the gemm and attention kernels (docs/CUDA.md, issue 5):
# build, the cuda ctests (conformance, differential, device-memory tests),
# compute-sanitizer memcheck and racecheck on the gemm / attention / swiglu
# conformance runs and on `test_cuda_device quick`, then the gemm + attention
# part of tools/cuda/bench_h100.sh (hadamix vs cuBLAS SGEMM and PyTorch SDPA
# in the same run). Logs in $LOGS, packed into $OUT/gemm_att_logs.tgz (the
# device tool brings back at most 8 files). Run from the repository root with
# .devcarry (cJSON) present:
#   [B=build dir] [LOGS=dir] [SAN=0] [SAN_OPS="gemm attention swiglu"] [BENCH=0] [NCU=1]
#   bash tools/cuda/gemm_att_check.sh
set -u
OUT=${OUT:-/tmp/hmx-out}; mkdir -p "$OUT"
LOGS=${LOGS:-/tmp/gemm_att_logs}; mkdir -p "$LOGS"
B=${B:-/tmp/b}
. tools/cuda/dev_common.sh
pack() { tar czf "$OUT/gemm_att_logs.tgz" -C "$LOGS" . ; }
dev_gpu_info tools/cuda/gemm_att_check.sh "$LOGS/gpu.txt"
dev_build "$B" "$LOGS/build.txt" || { pack; exit 1; }
if [ "${SASS:-0}" = 1 ]; then # the attention and gemm kernels' SASS, for reading offsets in sanitizer reports
  cuobjdump -sass "$B/tools/hmx" | awk '/Function : .*(attention|gemm_kernel)/{p=1} /Function : /&&!/(attention|gemm_kernel)/{p=0} p' \
    > "$LOGS/sass.txt" 2>&1; echo "sass lines: $(wc -l < "$LOGS/sass.txt")"
fi
timeout 300 ctest --test-dir "$B" -R 'conform_cuda|differential_cuda|test_cuda' --output-on-failure \
  > "$LOGS/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$LOGS/ctest.txt" | tail -12
"$B/tests/test_cuda_device" 2>&1 | grep -E "gemm|attention|FAIL|checks" | tail -30 > "$LOGS/test_cuda_device.txt"
tail -5 "$LOGS/test_cuda_device.txt"
echo "== tests done $(date -u +%T)"
if [ "${SAN:-1}" = 1 ]; then
  { for op in ${SAN_OPS:-gemm attention swiglu}; do
      echo "== compute-sanitizer --tool memcheck --leak-check full hmx conform --backend cuda --op $op"
      timeout 100 compute-sanitizer --tool memcheck --leak-check full "$B/tools/hmx" conform --backend cuda --op $op > "$LOGS/mc.txt" 2>&1; echo "rc=$?"
      grep -m1 -B2 -A14 "Invalid\|Program hit\|Error" "$LOGS/mc.txt"; tail -4 "$LOGS/mc.txt"
      echo "== compute-sanitizer --tool racecheck --racecheck-report all hmx conform --backend cuda --op $op"
      timeout 100 compute-sanitizer --tool racecheck --racecheck-report all "$B/tools/hmx" conform --backend cuda --op $op | tail -4; echo "rc=$?"
    done
    echo "== compute-sanitizer --tool memcheck --leak-check full test_cuda_device quick"
    timeout 150 compute-sanitizer --tool memcheck --leak-check full "$B/tests/test_cuda_device" quick > "$LOGS/mc.txt" 2>&1; echo "rc=$?"
    grep -m1 -B2 -A14 "Invalid\|Program hit\|Error" "$LOGS/mc.txt"; tail -4 "$LOGS/mc.txt"
    echo "== compute-sanitizer --tool racecheck --racecheck-report all test_cuda_device quick"
    timeout 150 compute-sanitizer --tool racecheck --racecheck-report all "$B/tests/test_cuda_device" quick | tail -4; echo "rc=$?"
  } > "$LOGS/sanitizer.txt" 2>&1
  grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|rc=|checks" "$LOGS/sanitizer.txt"
  echo "== sanitizers done $(date -u +%T)"
fi
if [ "${BENCH:-1}" = 1 ]; then
  OUT="$LOGS" B="$B" ONLY=gemm,attention REPS=${REPS:-15} bash tools/cuda/bench_h100.sh
fi
if [ "${NCU:-0}" = 1 ]; then
  # Nsight Compute on one prefill call of the tiled attention kernel and on
  # one gemm (the benchmark's first shapes)
  timeout 120 ncu --clock-control none -k regex:attention_tiled -c 1 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section LaunchStats \
    "$B/hmx-cuda-bench" --only attention --quick --reps 1 --mib 64 > "$LOGS/ncu_attention.txt" 2>&1
  echo "ncu attention rc=$?"
  timeout 120 ncu --clock-control none -k regex:gemm_kernel -c 1 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis \
    "$B/hmx-cuda-bench" --only gemm --quick --reps 1 --mib 64 > "$LOGS/ncu_gemm.txt" 2>&1
  echo "ncu gemm rc=$?"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issue Slots Busy|Executed Ipc A" "$LOGS/ncu_attention.txt" | head -20
fi
pack
