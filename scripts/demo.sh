#!/usr/bin/env bash
# The end-to-end demo (`make demo` runs it after building):
#   1. installs the runtime into $BUILD_DIR/install (cmake --install),
#   2. generates the example models into $BUILD_DIR/models,
#   3. compiles each with nncc for the CPU target into $BUILD_DIR/models/NAME.so,
#   4. builds examples/cpp against $BUILD_DIR/install (find_package(nncc))
#      in $BUILD_DIR/example,
#   5. runs it on each model: signature, first outputs, median latency.
# Uses only what the build produces (run `make build` first).
#
#   scripts/demo.sh                     # BUILD_DIR=build, all three models
#   BUILD_DIR=build DEMO_MODELS="mlp" DEMO_RUNS=100 PYTHON=/usr/bin/python3 scripts/demo.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
BUILD=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || {
  echo "demo: no build folder '$BUILD_DIR' (run 'make build' first)" >&2; exit 1; }
PYTHON=${PYTHON:-/usr/bin/python3}
DEMO_MODELS=${DEMO_MODELS:-mlp cnn transformer}
DEMO_RUNS=${DEMO_RUNS:-100}
PREFIX=$BUILD/install
MODELS=$BUILD/models
EXAMPLE=$BUILD/example

for tool in nncc nncc-run; do
  if [[ ! -x $BUILD/bin/$tool ]]; then
    echo "demo: $BUILD/bin/$tool is missing (run 'make build' first)" >&2
    exit 1
  fi
done

step() { printf '\n== %s\n' "$*"; }

step "installing the runtime into $PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX"

step "generating the example models into $MODELS"
"$PYTHON" examples/models/make_models.py "$MODELS"

for model in $DEMO_MODELS; do
  step "compiling $model.onnx"
  "$BUILD/bin/nncc" "$MODELS/$model.onnx" -o "$MODELS/$model.so"
  ls -l "$MODELS/$model.so" | awk '{print $5 " bytes  " $NF}'
done

step "building examples/cpp against $PREFIX"
generator=()
if [[ ! -f $EXAMPLE/CMakeCache.txt ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
if ! log=$(cmake "${generator[@]}" -S examples/cpp -B "$EXAMPLE" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_PREFIX_PATH="$PREFIX" 2>&1); then
  echo "$log" >&2
  exit 1
fi
grep '^-- Found nncc' <<<"$log" || true
cmake --build "$EXAMPLE"

for model in $DEMO_MODELS; do
  step "running $model.so"
  "$EXAMPLE/infer" "$MODELS/$model.so" --runs "$DEMO_RUNS"
done
