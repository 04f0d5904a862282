#!/usr/bin/env bash
# Installs (with apt) everything building and testing nncc needs. Idempotent:
# when every package is already installed it touches nothing, not even the
# apt lists, so it is cheap to run before every build.
set -euo pipefail

PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 libclang-rt-22-dev
  libonnx-dev libonnx-testdata python3-onnx python3-numpy
  libprotobuf-dev protobuf-compiler
  libgtest-dev
  cmake ninja-build ccache g++
  libopenblas-dev
  openmpi-bin libopenmpi-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  # dpkg -s also succeeds for removed-but-configured packages: check the state.
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
