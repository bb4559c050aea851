#!/bin/bash
# Interleaved A/B of x86 fwht kernel variants (docs/BENCH.md "A/B of x86 fwht
# variants"). Each variant is a set of -D flags for simd/<isa>/fwht_<isa>.c
# (HX_CHUNK_LOG2, HX_RADIX_UNROLL, HX_DUP_LOAD, ...; none may change a bit):
# the library is built once (Release, without CUDA), the kernel file is
# compiled once per variant with the library's own compile command plus the
# variant's flags and a name of its own, and tools/x86/fwht_ab.c times them
# in turn in one process (and checks that each gives the base's bits). Run
# from the repository root:
#   VARIANTS='base:;u1:-DHX_RADIX_UNROLL=1' [ISA=avx512|avx2] [B=build dir]
#   [TUNING=profile] [CJ=dir] bash tools/x86/fwht_ab.sh [fwht_ab options:
#   --n 512,4096 --rounds 9 --mem-mib 1200 --ffht libffht.so ...]
# A variant named name@spec runs under the tuning profile spec (a profile
# with fields changed, src/tuning.h hmx_x86_tuning_parse), e.g. VARIANTS=
# 'zen@zen:;z2p@zen+fwht_two_pass_rows=1:' times two schedules of one kernel.
# TUNING sets HMX_X86_TUNING for the run (src/tuning.c's profiles); PIN, the
# CPUs the timed run is pinned to (taskset -c; the build uses every CPU); CJ,
# a folder holding cJSON's include/ and lib/ where it is not installed.
set -euo pipefail
ISA=${ISA:-avx512}
B=${B:-/tmp/x86-fwht-ab}
IFS=';' read -ra vs <<< "${VARIANTS:?VARIANTS='name:flags;...' (the first is the base)}"
. "$(dirname "$0")/ab_common.sh"
ab_build_library
# The kernel file's compile command, as the library built it (one word a line).
ab_compile_command "simd/$ISA/fwht_$ISA.c" > "$B/cmd.txt"
mapfile -t cmd < "$B/cmd.txt"
table="$B/ab_table.c"
echo '#include "fwht_ab.h"' > "$table"
objs=()
i=0
for v in "${vs[@]}"; do
  name=${v%%:*}
  name=${name%%@*}
  read -ra flags <<< "${v#*:}"
  "${cmd[@]}" "${flags[@]}" -DHX_FWHT_FN="ab_fwht_$i" -DHX_MIX_FN="ab_mix_$i" -o "$B/v$i.o" ||
    { echo "variant $name: compile failed"; exit 1; }
  echo "hmx_status ab_fwht_$i(const hmx_fwht_args *a);" >> "$table"
  objs+=("$B/v$i.o")
  i=$((i + 1))
done
{ echo 'const ab_variant ab_variants[] = {'
  i=0
  for v in "${vs[@]}"; do
    label=${v%%:*} spec=NULL
    [[ $label == *@* ]] && spec="\"${label#*@}\""
    echo "  {\"${label%%@*}\", ab_fwht_$i, $spec},"
    i=$((i + 1))
  done
  echo '};'
  echo "const int ab_nvariants = $i;"
} >> "$table"
cc -O2 -std=c11 -Wall -Wextra -fopenmp -Iinclude -Isrc -Iref -Itools/x86 tools/x86/fwht_ab.c "$table" "${objs[@]}" \
  "$B/lib/libhadamix.a" -lm -ldl -o "$B/fwht_ab"
echo "== tools/x86/fwht_ab.sh ISA=$ISA VARIANTS='$VARIANTS' TUNING=${TUNING:-} PIN=${PIN:-} $*"
echo "== $(date -u) $(grep -m1 'model name' /proc/cpuinfo) ($(nproc) cpus), $(cc --version | head -1)"
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
HMX_X86_TUNING=${TUNING:-} "${pin[@]}" "$B/fwht_ab" "$@"
