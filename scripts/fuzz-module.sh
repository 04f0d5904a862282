#!/usr/bin/env bash
# Builds the module-loader libFuzzer target (fuzz/ModuleFuzzer.cpp: the
# runtime's bounds-checked table walk and verifier over modules in memory;
# clang-22, ASan + coverage, in build-fuzz/) and fuzzes for a bounded time.
# Usage: scripts/fuzz-module.sh [SECONDS] [extra libFuzzer flags]   (default 60)
# Exits non-zero when the fuzzer finds a crash, leak, OOM or timeout; the
# reproducer is left in build-fuzz/artifacts/ (rerun: build-fuzz/bin/nncc-module-fuzzer FILE).
set -euo pipefail

SECONDS_TO_RUN=${1:-60}
shift || true
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NNCC_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
CC=${CC_FUZZ:-clang-22}
CXX=${CXX_FUZZ:-clang++-22}
command -v "$CXX" >/dev/null || { CC=/usr/lib/llvm-22/bin/clang; CXX=/usr/lib/llvm-22/bin/clang++; }

if [[ ! -f $BUILD/build.ninja ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DNNCC_ENABLE_FUZZERS=ON -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$BUILD" nncc-module-fuzzer

# The inputs are edit lists over a built-in module: no seed corpus needed.
CORPUS=$BUILD/module-corpus
mkdir -p "$CORPUS" "$BUILD/artifacts"
if [[ -x /usr/lib/llvm-22/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
fi
"$BUILD/bin/nncc-module-fuzzer" "$CORPUS" \
  -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/" "$@"
