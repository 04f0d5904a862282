#!/usr/bin/python3
"""The scaling model (scripts/scaling_model.py) against measured data-parallel step times on this
machine: the example MLP and transformer at a global batch of 16, dp = 1, 2, 4 over MPI.

    /usr/bin/python3 bench/dp_scaling.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        --nncc-info build/bin/nncc-info [--ranks 2,4] [--repeats 3] [--work-dir DIR]

Per model: the one-process module at the global batch (T1) and at each shard's batch 16/N (one
rank's compute alone), the dp:N module (`--bucket-bytes 16384`, as e2e.distributed; `nncc
--stats` gives its K buckets and G bytes all-reduced per step) under `mpirun --oversubscribe -np N`, and `nncc-info --bandwidth` at N
ranks for 8 bytes (its time is the latency L) and 1 MiB (busbw: the bandwidth term, as the
model separates the two). Step times are rank 0's
steps/s over the run (median of `repeats`), `--threads 1` per rank. Prints measured against
predicted: "model T1/N" with compute T1/N, "model shard" with the measured shard's step time,
stretched by N/cores when the ranks outnumber the cores. Uses Debian's python3-onnx.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.dont_write_bytecode = True
from scaling_model import predict  # noqa: E402

BATCH, SAMPLES, BUCKET = 16, 320, 16384
MODELS = {  # name: (sample shape, nncc flags, float target shape or None for classes)
    "mlp": ((64,), [], None),
    "transformer": ((16, 64), ["--loss=mse", "--freeze=.*_(scale|sqrt2|one|half)"], (16, 64)),
}
MPI = ["--allow-run-as-root", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"]


def sh(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout


def step_ms(args, cmd, steps):
    times = []
    for _ in range(args.repeats):
        out = sh(cmd + ["--train", "--steps", str(steps), "--lr", "0.05", "--threads", "1"])
        times.append(1e3 / float(re.findall(r"\(([\d.]+) steps/s\)", out)[-1]))
    return statistics.median(times)


def bandwidth(args, n, size):
    out = sh([args.mpirun, *MPI, "-np", str(n), args.nncc_info, "--bandwidth", "--sizes", f"8,{size}", "--iters",
              "50"])
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s*\d+\s", line)]
    return float(rows[0][2]), float(rows[1][4])  # latency us, busbw GB/s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nncc", required=True)
    ap.add_argument("--nncc-run", required=True)
    ap.add_argument("--nncc-info", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="mlp,transformer")
    ap.add_argument("--steps", default="mlp=2000,transformer=100")
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="nncc-dp-scaling-")
    ranks = [int(n) for n in args.ranks.split(",")]
    cores = len(os.sched_getaffinity(0))
    steps = {k: int(v) for k, v in (item.split("=") for item in args.steps.split(","))}
    for b in {BATCH} | {BATCH // n for n in ranks}:
        os.makedirs(os.path.join(work, f"b{b}"), exist_ok=True)
        sh([sys.executable, os.path.join(REPO, "examples", "models", "make_models.py"), os.path.join(work, f"b{b}"),
            "--batch", str(b)])
    for name in args.models.split(","):
        shape, flags, target = MODELS[name]
        flags = ["--train", "--target=cpu", "--optimizer=momentum"] + flags
        data = os.path.join(work, f"{name}-data")
        os.makedirs(data, exist_ok=True)
        rng = np.random.default_rng(5)
        np.save(os.path.join(data, "x.npy"), rng.standard_normal((SAMPLES,) + shape).astype(np.float32))
        np.save(os.path.join(data, "labels.npy"),
                rng.integers(0, 10, SAMPLES).astype(np.int64) if target is None
                else rng.standard_normal((SAMPLES,) + target).astype(np.float32))

        def module(batch, n):
            so, stats = (os.path.join(work, f"{name}-b{batch}-dp{n}{ext}") for ext in (".so", ".json"))
            extra = [f"--parallel=dp:{n}", "--bucket-bytes", str(BUCKET)] if n > 1 else []
            sh([args.nncc, os.path.join(work, f"b{batch}", f"{name}.onnx"), *flags, *extra, f"--stats={stats}",
                "-o", so])
            with open(stats) as f:
                return so, json.load(f)

        single, _ = module(BATCH, 1)
        t1 = step_ms(args, [args.nncc_run, single, "--data", data], steps[name])
        print(f"{name}: global batch {BATCH}, T1 {t1:.3f} ms per step; {cores} cores")
        print(f"{'N':>3} {'G bytes':>8} {'K':>3} {'L us':>6} {'busbw GB/s':>10} {'shard ms':>9} {'measured ms':>11} "
              f"{'model T1/N':>10} {'model shard':>11}")
        print(f"{1:>3} {'-':>8} {'-':>3} {'-':>6} {'-':>10} {t1:>9.3f} {t1:>11.3f} {t1:>10.3f} {t1:>11.3f}")
        for n in ranks:
            shard_so, _ = module(BATCH // n, 1)
            shard = step_ms(args, [args.nncc_run, shard_so, "--data", data], steps[name])
            dp_so, stats = module(BATCH, n)
            grad = stats["collective_bytes_per_run"]["train_step"]
            buckets = stats["collectives_per_run"]["train_step"]
            measured = step_ms(args, [args.mpirun, *MPI, "-np", str(n), args.nncc_run, dp_so, "--data", data],
                               steps[name])
            latency, busbw = bandwidth(args, n, 1 << 20)
            by_n = predict(t1, grad, busbw, n, buckets, latency)[0]
            # N ranks on fewer cores take turns: one rank's compute stretches by N / cores.
            by_shard = predict(t1, grad, busbw, n, buckets, latency, compute_ms=shard * max(1, n / cores))[0]
            print(f"{n:>3} {grad:>8} {buckets:>3} {latency:>6.1f} {busbw:>10.4f} {shard:>9.3f} {measured:>11.3f} "
                  f"{by_n:>10.3f} {by_shard:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
