#!/usr/bin/env bash
# Fused against unfused kernels: compiles the repo's 2-layer transformer
# encoder (examples/models, as PyTorch exports it) and the ResNet-style CNN
# with and without fusion (--no-fusion), prints launches (per layer for the
# encoder) and bytes moved per run (--stats) for the CPU target and, where
# ptxas exists, the CUDA target (sm_90, whose GEMMs carry bias and GELU in
# the cuBLASLt epilogue), and the CPU median latency of interleaved runs
# (nncc-run --bench, one thread) with the ratio unfused / fused.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BATCH=${BATCH:-32}
RUNS=${RUNS:-100}
ROUNDS=${ROUNDS:-3}
LAYERS=2
ninja -C "$BUILD_DIR" nncc nncc-run > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" "$BATCH" "$LAYERS" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
sys.path.insert(0, "examples/models")
import make_models
work, batch, layers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
onnx.save(make_models.transformer(batch, layers=layers), f"{work}/transformer.onnx")
onnx.save(make_models.cnn(batch), f"{work}/cnn.onnx")
rng = np.random.default_rng(0)
for name, shape in (("transformer", (batch, 16, 64)), ("cnn", (batch, 3, 32, 32))):
    os.makedirs(f"{work}/{name}-in")
    x = rng.standard_normal(shape).astype(np.float32)
    with open(f"{work}/{name}-in/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
PY
targets=(cpu)
command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ] && targets+=(cuda:sm_90)
median() { "$BUILD_DIR/bin/nncc-run" "$1" --input-dir "$2" --bench "$RUNS" --threads 1 |
           sed -n 's/^median \([0-9.]*\) ms.*/\1/p'; }
for model in transformer cnn; do
  layers=$([ "$model" = transformer ] && echo "$LAYERS" || echo 1)
  for target in "${targets[@]}"; do
    for variant in fused unfused; do
      flag=$([ "$variant" = unfused ] && echo --no-fusion || true)
      "$BUILD_DIR/bin/nncc" "$work/$model.onnx" -o "$work/$model-$target-$variant.so" \
        --target="$target" $flag --stats="$work/$model-$target-$variant.json"
    done
    /usr/bin/python3 - "$work" "$model" "$target" "$BATCH" "$layers" <<'PY'
import json, sys
work, model, target, batch, layers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
s = {v: json.load(open(f"{work}/{model}-{target}-{v}.json")) for v in ("fused", "unfused")}
g = lambda v, k: s[v][k]["forward"]
per = f" ({g('unfused', 'launches_per_run') / layers:g} -> {g('fused', 'launches_per_run') / layers:g} per layer)" if layers > 1 else ""
print(f"{model} batch {batch} --target={target}: ops {s['unfused']['ops_before_fusion']} -> "
      f"{s['fused']['ops_before_fusion']} before fusion, launches {g('unfused', 'launches_per_run')} -> "
      f"{g('fused', 'launches_per_run')}{per}, bytes moved {g('unfused', 'bytes_moved_per_run')} -> "
      f"{g('fused', 'bytes_moved_per_run')} ({g('unfused', 'bytes_moved_per_run') / g('fused', 'bytes_moved_per_run'):.2f}x less)")
PY
  done
  fused=(); unfused=()
  for _ in $(seq "$ROUNDS"); do   # interleaved, so load changes hit both alike
    fused+=("$(median "$work/$model-cpu-fused.so" "$work/$model-in")")
    unfused+=("$(median "$work/$model-cpu-unfused.so" "$work/$model-in")")
  done
  /usr/bin/python3 - "$model" "$BATCH" "${fused[*]}" "${unfused[*]}" <<'PY'
import statistics, sys
model, batch, fused, unfused = sys.argv[1:]
f = statistics.median(float(v) for v in fused.split())
u = statistics.median(float(v) for v in unfused.split())
print(f"{model} batch {batch} CPU, one thread: median {u:.3f} ms unfused, {f:.3f} ms fused: "
      f"fused is {u / f:.2f}x faster")
PY
done
