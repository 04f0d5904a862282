#!/usr/bin/env bash
# Fused against unfused kernels on the CPU target: compiles the repo's
# 2-layer transformer encoder and the ResNet-style CNN with and without
# fusion (--no-fusion), prints launches and bytes moved per run (--stats),
# and the median latency of interleaved runs (nncc-run --bench, one thread)
# with the ratio unfused / fused.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BATCH=${BATCH:-32}
RUNS=${RUNS:-100}
ROUNDS=${ROUNDS:-3}
ninja -C "$BUILD_DIR" nncc nncc-run > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 examples/models/make_models.py "$work" --batch "$BATCH" > /dev/null
/usr/bin/python3 - "$work" "$BATCH" <<'PY'
import os, sys
import numpy as np
from onnx import numpy_helper
work, batch = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
for name, shape in (("transformer", (batch, 16, 64)), ("cnn", (batch, 3, 32, 32))):
    os.makedirs(f"{work}/{name}-in")
    x = rng.standard_normal(shape).astype(np.float32)
    with open(f"{work}/{name}-in/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
PY
median() { "$BUILD_DIR/bin/nncc-run" "$1" --input-dir "$2" --bench "$RUNS" --threads 1 |
           sed -n 's/^median \([0-9.]*\) ms.*/\1/p'; }
for model in transformer cnn; do
  for variant in fused unfused; do
    flag=$([ "$variant" = unfused ] && echo --no-fusion || true)
    "$BUILD_DIR/bin/nncc" "$work/$model.onnx" -o "$work/$model-$variant.so" $flag \
      --stats="$work/$model-$variant.json"
  done
  fused=(); unfused=()
  for _ in $(seq "$ROUNDS"); do   # interleaved, so load changes hit both alike
    fused+=("$(median "$work/$model-fused.so" "$work/$model-in")")
    unfused+=("$(median "$work/$model-unfused.so" "$work/$model-in")")
  done
  /usr/bin/python3 - "$work" "$model" "$BATCH" "${fused[*]}" "${unfused[*]}" <<'PY'
import json, statistics, sys
work, model, batch, fused, unfused = sys.argv[1:]
f = [float(v) for v in fused.split()]; u = [float(v) for v in unfused.split()]
sf = json.load(open(f"{work}/{model}-fused.json")); su = json.load(open(f"{work}/{model}-unfused.json"))
g = lambda s, k: s[k]["forward"]
print(f"{model} batch {batch}: launches {g(su, 'launches_per_run')} -> {g(sf, 'launches_per_run')}, "
      f"bytes moved {g(su, 'bytes_moved_per_run')} -> {g(sf, 'bytes_moved_per_run')} "
      f"({g(su, 'bytes_moved_per_run') / g(sf, 'bytes_moved_per_run'):.2f}x less), "
      f"median {statistics.median(u):.3f} ms unfused, {statistics.median(f):.3f} ms fused: "
      f"fused is {statistics.median(u) / statistics.median(f):.2f}x faster")
PY
done
