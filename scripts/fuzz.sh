#!/usr/bin/env bash
# Builds a libFuzzer target (clang-22, ASan + coverage, in build-fuzz/) and
# fuzzes it for a bounded time:
#   import  fuzz/ImportFuzzer.cpp: the ONNX importer on mutated models (seeds
#           from fuzz/make_corpus.py and the backend test data)
#   module  fuzz/ModuleFuzzer.cpp: the runtime's bounds-checked table walk and
#           verifier over edit lists applied to a module in memory
# Usage: scripts/fuzz.sh import|module [SECONDS] [extra libFuzzer flags]   (default 60)
# Exits non-zero when the fuzzer finds a crash, leak, OOM or timeout; the
# reproducer is left in build-fuzz/artifacts/ (rerun: build-fuzz/bin/nncc-<target>-fuzzer FILE).
set -euo pipefail

TARGET=${1:?usage: scripts/fuzz.sh import|module [SECONDS] [libFuzzer flags]}
SECONDS_TO_RUN=${2:-60}
shift $(( $# < 2 ? $# : 2 ))
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
ninja -C "$BUILD" "nncc-$TARGET-fuzzer"

mkdir -p "$BUILD/artifacts"
case $TARGET in
  import)
    CORPUS=$BUILD/corpus
    mkdir -p "$CORPUS"
    /usr/bin/python3 "$ROOT/fuzz/make_corpus.py" "$CORPUS"
    TESTDATA=/usr/share/libonnx-testdata/data/node
    for t in test_add test_conv_with_strides_padding test_relu test_matmul_2d \
             test_gemm_default_matrix_bias test_reshape_reduced_dims test_slice \
             test_reduce_mean_default_axes_keepdims_example test_transpose_default \
             test_concat_2d_axis_0; do
      if [[ -f $TESTDATA/$t/model.onnx ]]; then
        cp "$TESTDATA/$t/model.onnx" "$CORPUS/$t.onnx"
      fi
    done
    RSS_MB=4096
    ;;
  module)
    # The inputs are edit lists over a built-in module: no seed corpus needed.
    CORPUS=$BUILD/module-corpus
    mkdir -p "$CORPUS"
    RSS_MB=2048
    ;;
  *)
    echo "scripts/fuzz.sh: unknown target '$TARGET' (import or module)" >&2
    exit 2
    ;;
esac

# libMLIR/libLLVM/libonnx/libprotobuf are g++-built and not instrumented; ASan
# runs fine with them at its defaults (no ODR or new/delete-mismatch reports).
if [[ -x /usr/lib/llvm-22/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
fi
"$BUILD/bin/nncc-$TARGET-fuzzer" "$CORPUS" \
  -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb="$RSS_MB" -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/" "$@"
