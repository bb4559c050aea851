#!/bin/bash
# The benchmark of issue 5 on an sm_90 GPU (H100, H200; docs/CUDA.md,
# "Speed"; the name is from its first GPU). One run measures,
# side by side on the same GPU: hadamix's cuda kernels on device memory
# (build/hmx-cuda-bench, tools/cuda/bench_cuda.c), the device-to-device copy
# bandwidth, Dao-AILab's fast-hadamard-transform (when DAO names a directory
# holding its built extension module; it is never built or kept here) and
# PyTorch: cuBLAS SGEMM with TF32 off and scaled_dot_product_attention in
# fp32 (tools/cuda/bench_torch.py), and the GPU's FP32 add rate for each fwht
# row's issue cap (tools/cuda/fp32_peak.cu). Prints the tables of docs/CUDA.md
# (tools/cuda/bench_table.py) and keeps the raw JSON lines in $OUT.
#
# Run from the repository root on the GPU machine:
#   [B=/tmp/b] [OUT=dir] [DAO=dir] [MIB=1024] [REPS=15] [QUICK=1] [ONLY=gemm,attention] bash tools/cuda/bench_h100.sh
# ONLY: the kinds to measure (fwht, gemm, attention; default all).
# B: a build directory (configured and built here when it has no
# hmx-cuda-bench); .devcarry/ (cJSON for machines without libcjson-dev) is
# used when present.
set -u
OUT=${OUT:-/tmp/hmx-bench}
B=${B:-/tmp/b}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
cjson=()
if [ -d .devcarry/include ]; then
  cjson=(-DHMX_CJSON_INCLUDE="$PWD/.devcarry/include" -DHMX_CJSON_LIBRARY="$PWD/.devcarry/lib/libcjson.so")
  export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ ! -x "$B/hmx-cuda-bench" ]; then
  { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release "${cjson[@]}" &&
    cmake --build "$B" -j"$(nproc)" --target hmx-cuda-bench; } > "$OUT/bench_build.txt" 2>&1 ||
    { echo "bench_h100.sh: build failed"; tail -30 "$OUT/bench_build.txt"; exit 1; }
fi
{
  echo "== tools/cuda/bench_h100.sh (MIB=${MIB:-1024} REPS=${REPS:-15} QUICK=${QUICK:-0} ONLY=${ONLY:-} DAO=${DAO:-})"
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} > "$OUT/bench_gpu.txt" 2>&1
quick=()
[ "${QUICK:-0}" = 1 ] && quick=(--quick)
[ -n "${ONLY:-}" ] && quick+=(--only "$ONLY")
"$B/hmx-cuda-bench" --out "$OUT/bench_hmx.jsonl" --mib "${MIB:-1024}" --reps "${REPS:-15}" \
  "${quick[@]}" || { echo "bench_h100.sh: hmx-cuda-bench failed"; exit 1; }
dao=()
[ -n "${DAO:-}" ] && dao=(--dao "$DAO")
python3 tools/cuda/bench_torch.py --out "$OUT/bench_torch.jsonl" --mib "${MIB:-1024}" \
  --reps "${REPS:-15}" "${dao[@]}" "${quick[@]}" || { echo "bench_h100.sh: bench_torch.py failed"; exit 1; }
python3 tools/cuda/bench_table.py "$OUT/bench_hmx.jsonl" "$OUT/bench_torch.jsonl" |
  tee "$OUT/bench_table.md"
