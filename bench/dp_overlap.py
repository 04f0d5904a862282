#!/usr/bin/python3
"""Step time of data-parallel training with the all-reduces overlapping the
backward (the default) against synchronous collectives
(NNCC_SYNC_COLLECTIVES=1), on a wide MLP where communication matters.

    /usr/bin/python3 bench/dp_overlap.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--ranks 2] [--threads 1] [--width 1024] [--layers 4] [--batch 64]
        [--bucket-bytes 4194304] [--steps 40] [--repeats 5] [--work-dir DIR]

The MLP: x[batch, 256] -> layers x (MatMul + Add + Relu, `width` wide) -> 10
classes, trained with SGD+momentum (cross-entropy); --parallel=dp:ranks at the
global batch. The modes alternate, `repeats` times each, and the median time
per step (rank 0's steps/s over the whole run) is printed per mode.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples", "models"))
sys.dont_write_bytecode = True
from make_models import Builder  # noqa: E402

IN, CLASSES = 256, 10


def wide_mlp(path, batch, width, layers):
    b = Builder(3)
    h, dims = "x", [IN] + [width] * layers + [CLASSES]
    for i in range(layers + 1):
        h = b.op("MatMul", [h, b.weight(f"w{i}", [dims[i], dims[i + 1]])])
        h = b.op("Add", [h, b.weight(f"b{i}", [dims[i + 1]], 0.1)])
        if i < layers:
            h = b.op("Relu", [h])
    b.rename_last_output("logits")
    model = b.model("wide_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, IN])],
                    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, CLASSES])])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nncc", required=True)
    ap.add_argument("--nncc-run", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--bucket-bytes", type=int, default=4 << 20)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="nncc-dp-overlap-")
    os.makedirs(os.path.join(work, "data"), exist_ok=True)
    onnx_path, so = os.path.join(work, "wide_mlp.onnx"), os.path.join(work, f"wide_mlp-dp{args.ranks}.so")
    wide_mlp(onnx_path, args.batch, args.width, args.layers)
    rng = np.random.default_rng(1)
    samples = args.batch * 8
    np.save(os.path.join(work, "data", "x.npy"), rng.standard_normal((samples, IN)).astype(np.float32))
    np.save(os.path.join(work, "data", "labels.npy"), rng.integers(0, CLASSES, samples).astype(np.int64))
    subprocess.run([args.nncc, onnx_path, "--train", "--target=cpu", "--optimizer=momentum",
                    f"--parallel=dp:{args.ranks}", "--bucket-bytes", str(args.bucket_bytes), "-o", so], check=True)
    times = {"async": [], "sync": []}
    for _ in range(args.repeats):
        for mode in times:
            env = ["-x", "NNCC_SYNC_COLLECTIVES=1"] if mode == "sync" else []
            out = subprocess.run([args.mpirun, "--allow-run-as-root", "--oversubscribe", "--mca",
                                  "btl_vader_single_copy_mechanism", "none", "-np", str(args.ranks), *env,
                                  args.nncc_run, so, "--train", "--data", os.path.join(work, "data"), "--steps",
                                  str(args.steps), "--lr", "0.01", "--threads", str(args.threads)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
            rate = float(re.findall(r"\(([\d.]+) steps/s\)", out)[-1])
            times[mode].append(1e3 / rate)
    params = sum(a * b + b for a, b in zip([IN] + [args.width] * args.layers, [args.width] * args.layers + [CLASSES]))
    print(f"wide MLP {IN}-{'-'.join([str(args.width)] * args.layers)}-{CLASSES} ({params * 4 / 2**20:.1f} MiB of "
          f"gradients), global batch {args.batch}, dp={args.ranks}, {args.threads} thread(s) per rank, buckets of "
          f"{args.bucket_bytes} bytes, {args.steps} steps x {args.repeats}")
    for mode, ms in times.items():
        print(f"{mode:5s}: median {statistics.median(ms):.2f} ms per step (runs: {', '.join(f'{t:.2f}' for t in ms)})")
    print(f"async/sync: {statistics.median(times['async']) / statistics.median(times['sync']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
