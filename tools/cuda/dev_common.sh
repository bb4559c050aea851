# Sourced by the device batch scripts (tools/cuda/gemm_att_check.sh,
# tools/cuda/fast_tier_h100.sh), run from the repository root on the GPU
# machine with .devcarry (cJSON) present: the environment, the GPU's
# description and the Release build they share.

export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH

# dev_gpu_info SCRIPT LOGFILE: the GPU, driver and nvcc, into LOGFILE and on stdout
dev_gpu_info() {
  {
    echo "== command: $1"; date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    nvcc --version | tail -2
  } > "$2" 2>&1
  cat "$2"
}

# dev_build BUILD_DIR LOGFILE: configure (Release, -Werror, .devcarry's cJSON)
# and build; the log's tail and a non-zero status on failure
dev_build() {
  ( set -o pipefail
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DHMX_WERROR=ON \
      -DHMX_CJSON_INCLUDE="$PWD/.devcarry/include" -DHMX_CJSON_LIBRARY="$PWD/.devcarry/lib/libcjson.so" &&
    cmake --build "$1" -j16 ) > "$2" 2>&1 || { echo BUILD FAILED; tail -40 "$2"; return 1; }
  echo "== build ok $(date -u +%T)"
}
