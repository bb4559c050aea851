#!/usr/bin/env bash
# AArch64 instructions of one decode step of `hmx generate` on the neon
# backend, counted under qemu-aarch64 by tools/arm64/qemu_icount.c: the run
# with -n 3 minus the run with -n 1, halved (two more decode steps; the
# load and the prefill cancel). Deterministic, so two builds compare exactly
# where no AArch64 machine is at hand to time them (docs/NEON.md).
#   tools/arm64/icount_decode.sh HMX [MODEL ARGS...]
#   e.g. tools/arm64/icount_decode.sh build-arm64/tools/hmx --weights m.gguf
# HMX: an AArch64 build of tools/hmx (tools/test-arm64.sh builds one).
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,9p "$0"; exit 2; }
hmx=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/icount.so" "$here/qemu_icount.c"
run() { # $1 = tokens to generate, then the model arguments; prints the count, the ids on stderr
  local n=$1 out
  shift
  out=$(qemu-aarch64 -L /usr/aarch64-linux-gnu \
        -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib:/usr/lib/aarch64-linux-gnu \
        -plugin "$tmp/icount.so" "$hmx" generate "$@" --tokens 1,2,3,4 -n "$n" \
        --backend neon --threads 1 --print-ids 2>&1) || { echo "$out" >&2; exit 1; }
  echo "ids: $(echo "$out" | grep -E '^[0-9]+( [0-9]+)* *$' | head -1)" >&2
  echo "$out" | sed -n 's/^icount: //p'
}
n1=$(run 1 "$@"); n3=$(run 3 "$@")
echo "instructions: -n 1 $n1, -n 3 $n3, one decode step $(( (n3 - n1) / 2 ))"
