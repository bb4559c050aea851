# Sourced by tools/x86/fwht_ab.sh and tools/x86/kernel_ab.sh: the library
# built once for an A/B, and a kernel file's compile command as that build
# ran it.

# Build the library (Release, no CUDA, no tests) in $B/lib, with the compile
# commands recorded; CJ: a folder holding cJSON's include/ and lib/ where it
# is not installed.
ab_build_library() {
  local cj=()
  [ -n "${CJ:-}" ] && cj=(-DHMX_CJSON_INCLUDE="$CJ/include" -DHMX_CJSON_LIBRARY="$CJ/lib/libcjson.so")
  mkdir -p "$B"
  cmake -S . -B "$B/lib" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=OFF \
    -DHMX_BUILD_TESTS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${cj[@]}" > "$B/cmake.txt" 2>&1 ||
    { tail -20 "$B/cmake.txt"; return 1; }
  cmake --build "$B/lib" -j"$(nproc)" --target hadamix >> "$B/cmake.txt" 2>&1 ||
    { tail -40 "$B/cmake.txt"; return 1; }
}

# ab_compile_command FILE [SOURCE]: the library's compile command for FILE
# (a path ending, e.g. simd/avx2/gemm.c), one word a line, without its -o;
# with SOURCE, that file compiled in FILE's place. Run it in $B/lib.
ab_compile_command() {
  python3 - "$B/lib/compile_commands.json" "$1" "${2:-}" <<'PY'
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith(sys.argv[2]):
        w = shlex.split(e["command"])
        i = w.index("-o")
        del w[i:i + 2]
        if sys.argv[3]:
            w = [sys.argv[3] if x == e["file"] else x for x in w]
        print("\n".join(w))
        break
else:
    sys.exit("no compile command for " + sys.argv[2])
PY
}
