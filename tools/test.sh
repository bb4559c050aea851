#!/usr/bin/env bash
# The test command: install dependencies, build, run every test.
#   tools/test.sh              gcc Release build in build/, then ctest
#   tools/test.sh --sanitize   the same under AddressSanitizer + UBSan (build-asan/)
#   tools/test.sh --clang      clang build with -Werror and the libFuzzer targets
#                              (build-clang/), then ctest (includes 20 s of fuzzing
#                              for each of the five targets of tests/fuzz/)
#   tools/test.sh --minimal    gcc build with none of the optional dependencies
#                              (no cJSON, OpenMP, SLEEF, oneDNN, MPFR or CUDA;
#                              build-minimal/): the library and the tests that
#                              need none of them; the JSON formats must then be
#                              refused (tests/test_no_cjson.c)
#   --sanitize and --minimal also build the shared libhadamix (HMX_SHARED),
#   which the test install_package links a program against; --minimal's
#   install_package also builds hadamix inside that program's project
#   (add_subdirectory)
# Extra arguments after -- go to ctest (e.g. -- -L ref).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=gcc
case "${1:-}" in --sanitize|--clang|--minimal) mode=${1#--}; shift ;; esac
[ "${1:-}" = "--" ] && shift
bash tools/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
case $mode in
  gcc)      dir=build;       opts=(-DCMAKE_C_COMPILER=gcc -DHMX_WERROR=ON) ;;
  clang)    dir=build-clang; opts=(-DCMAKE_C_COMPILER=clang -DHMX_WERROR=ON -DHMX_FUZZ=ON) ;;
  minimal)  dir=build-minimal; opts=(-DCMAKE_C_COMPILER=gcc -DHMX_WERROR=ON -DHMX_SHARED=ON -DHMX_TEST_SUBPROJECT=ON -DHMX_WITH_CJSON=OFF
                                     -DHMX_WITH_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON
                                     -DHMX_SLEEF_INCLUDE= -DHMX_SLEEF_LIBRARY=
                                     -DHMX_DNNL_INCLUDE= -DHMX_DNNL_LIBRARY=
                                     -DHMX_MPFR_INCLUDE= -DHMX_MPFR_LIBRARY=) ;;
  sanitize) dir=build-asan;  opts=(-DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
                                   -DHMX_SANITIZE=address,undefined -DHMX_SHARED=ON) ;;
esac
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "${opts[@]}"
cmake --build "$dir" -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@"
