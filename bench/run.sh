#!/usr/bin/env bash
# One command for the whole benchmark (see docs/performance.md):
#
#   bench/run.sh [--budget S] [--models mlp,bert] [--batches 1,32] [--as-avx2] [--update-docs]
#
# builds nncc and nncc-run (configuring build/ first if needed), installs onnxruntime-node under
# bench/node_modules if missing, builds the small native helpers (bench/nncc_bench.cpp against
# the runtime, bench/sgemm.c, and bench/cpuid_as_avx2.c for --as-avx2), then runs bench/bench.py:
# generates the zoo, compiles every model with nncc, measures nncc and onnxruntime interleaved,
# single thread, prints the table and writes bench/results.json (and bench/out/table.md).
# Arguments go to bench/bench.py.
set -euo pipefail

START=$(date +%s.%N)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
OUT="$ROOT/bench/out"
cd "$ROOT"

step() { printf '\n### %s\n' "$*"; }

step "build nncc, nncc-run (runtime)"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  make -C "$ROOT" configure BUILD_DIR="$BUILD_DIR"
fi
ninja -C "$BUILD_DIR" nncc nncc-run

step "onnxruntime-node"
if [ ! -f "$ROOT/bench/node_modules/onnxruntime-node/package.json" ]; then
  # The default install script downloads GPU files and fails here; the CPU library ships in
  # the package itself.
  (cd "$ROOT/bench" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi
node -e "require('$ROOT/bench/node_modules/onnxruntime-node'); console.log('onnxruntime-node', require('$ROOT/bench/node_modules/onnxruntime-node/package.json').version)"

step "native helpers"
mkdir -p "$OUT/bin"
CXX="${CXX:-c++}"; CC="${CC:-cc}"
"$CXX" -O2 -std=c++17 -Wall -I"$ROOT/include" "$ROOT/bench/nncc_bench.cpp" \
  -L"$BUILD_DIR/lib" -lnncc_runtime -Wl,-rpath,"$BUILD_DIR/lib" -o "$OUT/bin/nncc_bench"
"$CC" -O2 -Wall -I"$ROOT/include" "$ROOT/bench/sgemm.c" -L"$BUILD_DIR/lib" -lnncc_runtime \
  -Wl,-rpath,"$BUILD_DIR/lib" -ldl -o "$OUT/bin/sgemm"
if [[ " $* " == *" --as-avx2 "* ]]; then
  "$CC" -O2 -Wall -shared -fPIC "$ROOT/bench/cpuid_as_avx2.c" -ldl -o "$OUT/bin/cpuid_as_avx2.so"
fi

step "benchmark"
# onnxruntime picks its GEMM kernels by CPU detection; so does OpenBLAS,
# unless OPENBLAS_CORETYPE pins it (this workplace's environment sets Haswell,
# which halves OpenBLAS's sgemm on AVX-512 machines: 104 vs 204 GFLOP/s).
unset OPENBLAS_CORETYPE
exec "$PYTHON" "$ROOT/bench/bench.py" --out "$OUT" --bin-dir "$OUT/bin" --build-dir "$BUILD_DIR" --started "$START" "$@"
