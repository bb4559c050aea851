#!/bin/bash
# The cuda fast tier on the H100 in one device call: build, the cuda and
# fast-tier tests, and the gemm measurement side by side with PyTorch
# (hmx-cuda-fast-bench, then bench_fast_gemm_torch.py, twice in alternation;
# the table takes each side's best round). Logs in $OUT.
# Run from the repository root with .devcarry carried (cJSON):
#   [B=build dir] [ROUNDS=2] bash tools/cuda/fast_gemm_h100.sh
set -u
OUT=${OUT:-/tmp/hmx-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=${B:-/tmp/b}
cjson=()
if [ -d .devcarry/include ]; then
  cjson=(-DHMX_CJSON_INCLUDE="$PWD/.devcarry/include" -DHMX_CJSON_LIBRARY="$PWD/.devcarry/lib/libcjson.so")
  export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{
  echo "== tools/cuda/fast_gemm_h100.sh"; date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
( set -o pipefail
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DHMX_WERROR=ON "${cjson[@]}" &&
  cmake --build "$B" -j"$(nproc)" ) > "$OUT/build.txt" 2>&1 || { echo BUILD FAILED; tail -40 "$OUT/build.txt"; exit 1; }
grep -i "cuda fast tier\|backends compiled" "$OUT/build.txt"
timeout 240 ctest --test-dir "$B" -R 'cuda|fast' --output-on-failure > "$OUT/ctest.txt" 2>&1
echo "ctest rc=$?"; tail -15 "$OUT/ctest.txt"
"$B/tests/test_fast_tier" --backend cuda vectors > "$OUT/test_fast_tier_cuda.txt" 2>&1
echo "test_fast_tier --backend cuda rc=$?"; grep -E "^fast tier|gemm [0-9]|planted|checks|SKIP" "$OUT/test_fast_tier_cuda.txt" | head -20
"$B/tools/hmx" ops 2>&1 | grep -i "fast:\|exact (" | head -12
for r in $(seq 1 "${ROUNDS:-2}"); do
  timeout 120 "$B/hmx-cuda-fast-bench" >> "$OUT/bench_hmx.jsonl" 2>> "$OUT/bench_err.txt"; echo "hmx bench round $r rc=$?"
  timeout 120 python3 tools/cuda/bench_fast_gemm_torch.py >> "$OUT/bench_torch.jsonl" 2>> "$OUT/bench_err.txt"; echo "torch bench round $r rc=$?"
done
tail -5 "$OUT/bench_err.txt"
python3 tools/cuda/fast_gemm_table.py "$OUT/bench_hmx.jsonl" "$OUT/bench_torch.jsonl" | tee "$OUT/table.md"
