#!/bin/bash
# One device batch for the cuda fast tier (issue 8) and the issue-7 ops on
# cuda (issue 5): build; the cuda ctests (conformance of every op, the
# differential test, the device tests, the fast tier's bound tests);
# compute-sanitizer memcheck and racecheck on the fast tier's device test;
# the attention benchmark of both tiers next to PyTorch SDPA (f32, TF32,
# bf16) in one run; `hmx bench-model --backend cuda --tiers both` on the tiny
# model. Logs under $OUT (the device tool brings back what is there). Run
# from the repository root with .devcarry (cJSON) present:
#   [B=build dir] [SAN=0] [BENCH=0] [MODEL=0] [SMALL=1] bash tools/cuda/fast_tier_h100.sh
set -u
OUT=${OUT:-/tmp/hmx-out}; mkdir -p "$OUT"
B=${B:-/tmp/b}
. tools/cuda/dev_common.sh
dev_gpu_info tools/cuda/fast_tier_h100.sh "$OUT/gpu.txt"
dev_build "$B" "$OUT/build.txt" || exit 1
timeout ${CTEST_TIMEOUT:-240} ctest --test-dir "$B" -R 'conform_cuda|differential_cuda|test_cuda|fast_cuda|fast_tier_cuda' \
  --output-on-failure > "$OUT/ctest.txt" 2>&1; echo "ctest rc=$?"
grep -E "tests passed|Failed|\*\*\*|Test +#" "$OUT/ctest.txt" | tail -30
"$B/tests/test_fast_tier" --backend cuda "$PWD/vectors" > "$OUT/test_fast_tier_cuda.txt" 2>&1; echo "test_fast_tier cuda rc=$?"
grep -E "attention|swiglu|FAIL|fast tier on" "$OUT/test_fast_tier_cuda.txt" | head -30
"$B/tests/test_fast_cuda_device" > "$OUT/test_fast_cuda_device.txt" 2>&1; echo "test_fast_cuda_device rc=$?"
grep -E "attention|FAIL|checks" "$OUT/test_fast_cuda_device.txt" | head
echo "== tests done $(date -u +%T)"
if [ "${SAN:-1}" = 1 ]; then
  { echo "== compute-sanitizer --tool memcheck test_fast_cuda_device"
    timeout 120 compute-sanitizer --tool memcheck "$B/tests/test_fast_cuda_device" 2>&1 | tail -4
    echo "== compute-sanitizer --tool racecheck --racecheck-report all test_fast_cuda_device"
    timeout 120 compute-sanitizer --tool racecheck --racecheck-report all "$B/tests/test_fast_cuda_device" 2>&1 | tail -4
  } > "$OUT/sanitizer.txt" 2>&1
  grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY|checks" "$OUT/sanitizer.txt"
  echo "== sanitizers done $(date -u +%T)"
fi
if [ "${BENCH:-1}" = 1 ]; then
  "$B/hmx-cuda-bench" --out "$OUT/bench_hmx.jsonl" --only attention_tier --reps 15 > "$OUT/bench_hmx.txt" 2>&1
  python3 tools/cuda/bench_torch.py --out "$OUT/bench_torch.jsonl" --only attention_tier --reps 15 > "$OUT/bench_torch.txt" 2>&1
  python3 tools/cuda/bench_table.py "$OUT/bench_hmx.jsonl" "$OUT/bench_torch.jsonl" > "$OUT/bench_table.md" 2>&1
  sed -n '/exact vs fast/,$p' "$OUT/bench_table.md"
  echo "== bench done $(date -u +%T)"
fi
if [ "${MODEL:-1}" = 1 ]; then
  timeout ${MODEL_TIMEOUT:-200} "$B/tools/hmx" bench-model --config tiny --backend cuda --tiers both \
    > "$OUT/bench_model_cuda_tiny.txt" 2>&1; echo "bench-model rc=$?"
  tail -25 "$OUT/bench_model_cuda_tiny.txt"
  if [ "${SMALL:-0}" = 1 ]; then
    timeout ${MODEL_TIMEOUT:-200} "$B/tools/hmx" bench-model --config small --backend cuda --tiers both \
      > "$OUT/bench_model_cuda_small.txt" 2>&1; echo "bench-model small rc=$?"
    tail -25 "$OUT/bench_model_cuda_small.txt"
  fi
fi
