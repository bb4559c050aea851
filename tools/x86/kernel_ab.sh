#!/bin/bash
# Interleaved A/B of this tree's x86 gemm and attention kernels against those
# of git revision REV (docs/BENCH.md "A/B of x86 gemm and attention kernels").
# The library is built once (Release, without CUDA); REV's simd/ is taken out
# with `git archive` and its simd/<isa>/gemm.c and attention_<isa>.c are
# compiled with the library's own compile commands and old_ entry points;
# tools/x86/kernel_ab.c then times both in turn in one process and checks
# that they give the same bits. Run from the repository root:
#   REV=<commit> [B=build dir] [PIN=cpus] [PIN2=cpus] [CJ=dir] bash tools/x86/kernel_ab.sh \
#     [ROUNDS (default 7)]
# OLD_SIMD=<folder> takes REV's simd/ from that folder instead of from git
# (a copy whose .git lacks REV, e.g. on another machine; REV then only names it).
# It runs issue 3's gemm shapes (one thread; and one on two threads) and
# three attention cases on avx2 and, where the CPU has it, avx512. PIN: the
# CPUs of the one-thread runs (taskset -c), PIN2 those of the two-thread run
# (two of them; default: PIN's); CJ: a folder holding cJSON's include/ and
# lib/ where it is not installed.
set -euo pipefail
REV=${REV:?REV=<git revision> to compare with}
B=${B:-/tmp/x86-kernel-ab}
ROUNDS=${1:-7} # 1 .. 21 (kernel_ab takes at most 64 rounds; decode runs 3x ROUNDS)
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 21 ] || { echo "ROUNDS: 1 .. 21"; exit 2; }
. "$(dirname "$0")/ab_common.sh"
ab_build_library
rm -rf "$B/old" && mkdir -p "$B/old"
if [ -n "${OLD_SIMD:-}" ]; then
  cp -r "$OLD_SIMD" "$B/old/simd"
else
  git archive "$REV" simd | tar -x -C "$B/old"
fi
objs=()
for isa in avx2 avx512; do
  for f in gemm attention_$isa; do
    fn=$([ "$f" = gemm ] && echo gemm || echo attention)
    # The library's compile command for this file, the source swapped for REV's.
    ab_compile_command "simd/$isa/$f.c" "$B/old/simd/$isa/$f.c" > "$B/cmd.txt"
    mapfile -t cmd < "$B/cmd.txt"
    (cd "$B/lib" && "${cmd[@]}" -Dhmx_${isa}_$fn=old_${isa}_$fn -o "$B/old_${isa}_$fn.o") ||
      { echo "REV's simd/$isa/$f.c: compile failed"; exit 1; }
    objs+=("$B/old_${isa}_$fn.o")
  done
done
cc -O2 -std=c11 -Wall -Wextra -fopenmp -Iinclude -Isrc -Iref tools/x86/kernel_ab.c "${objs[@]}" \
  "$B/lib/libhadamix.a" -lm -ldl -o "$B/kernel_ab"
echo "== tools/x86/kernel_ab.sh REV=$REV ($(git rev-parse --short "$REV" 2>/dev/null || echo "simd/ from ${OLD_SIMD:-?}")) against $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- simd src || echo ' + changes') PIN=${PIN:-} PIN2=${PIN2:-}"
echo "== $(date -u) $(grep -m1 'model name' /proc/cpuinfo) ($(nproc) cpus), $(cc --version | head -1)"
pin=() pin2=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN") && pin2=(taskset -c "$PIN")
[ -n "${PIN2:-}" ] && pin2=(taskset -c "$PIN2")
for isa in avx2 avx512; do
  if "$B/kernel_ab" $isa gemm 1 1 1 1 1 | grep -q "not run"; then
    echo "$isa: not available on this CPU"
    continue
  fi
  for s in "64 768 768" "64 768 2048" "64 2048 768" "64 1536 1536" \
           "512 768 768" "512 768 2048" "512 2048 768" "512 1536 1536"; do
    "${pin[@]}" "$B/kernel_ab" $isa gemm "$ROUNDS" 1 $s
  done
  "${pin2[@]}" "$B/kernel_ab" $isa gemm "$ROUNDS" 2 512 768 2048
  "${pin[@]}" "$B/kernel_ab" $isa attention "$ROUNDS" 1 512 12 12 512
  "${pin[@]}" "$B/kernel_ab" $isa attention $((3 * ROUNDS)) 1 512 9 3 1
  "${pin[@]}" "$B/kernel_ab" $isa attention $((3 * ROUNDS)) 1 4096 12 12 1
done
