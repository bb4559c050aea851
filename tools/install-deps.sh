#!/usr/bin/env bash
# Installs what hadamix builds and tests with on Debian/Ubuntu (apt-get).
# Every package is optional for the core library; see README "Dependencies".
set -euo pipefail
pkgs=(cmake gcc make clang libcjson-dev libsleef-dev libmpfr-dev libgmp-dev libomp-dev
      libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get; please install: ${missing[*]}" >&2
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
# libclang-rt-14-dev is clang 14's sanitizer/libFuzzer runtime (Debian 12 name);
# install what exists on this release and carry on without the rest.
for p in "${missing[@]}"; do
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null ||
    echo "install-deps: could not install $p (optional), continuing" >&2
done
