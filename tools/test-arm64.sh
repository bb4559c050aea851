#!/usr/bin/env bash
# AArch64 / NEON: cross-build with aarch64-linux-gnu-gcc (-Werror) and run the
# whole ctest suite under qemu-aarch64 (docs/NEON.md, README "AArch64 / NEON").
#   tools/test-arm64.sh            build in build-arm64/, then every test
#   tools/test-arm64.sh -- ARGS    extra arguments for ctest (e.g. -- -L neon)
#
# ctest runs target executables through CMAKE_CROSSCOMPILING_EMULATOR (see
# cmake/toolchain-aarch64-linux-gnu.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = "--" ] && shift
bash tools/install-deps.sh --arm64
dir=build-arm64
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
      -DCMAKE_BUILD_TYPE=Release -DHMX_WERROR=ON
cmake --build "$dir" -j "$jobs"
built=$(date +%s)

rc=0
# ctest runs every test binary through CMAKE_CROSSCOMPILING_EMULATOR; the
# CMake-script tests (CLI, vectors_regenerate) get generated qemu wrappers
# (tests/hmx_test_helpers.cmake, hmx_target_command).
ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" || rc=$?
end=$(date +%s)
echo "test-arm64: build $((built - start)) s, tests $((end - built)) s"
exit $rc
