#!/usr/bin/python3
"""Tensor parallelism (and dp x tp) over MPI on the CPU target (docs/distributed.md).

    /usr/bin/python3 test/e2e/tensor_parallel_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--mpirun mpirun]

The example transformer (one encoder layer: four heads, a 256-wide MLP)
compiled with `--parallel=tp:2` holds, on each of two ranks, half of the
heads (Q, K, V split in columns, the output projection in rows) and half of
the MLP (the first layer in columns, the second in rows); the partial
products meet in one sum over the tensor group per block. Checks:
- inference: `mpirun -np 2 nncc-run` gives the one-process output (relative
  1e-5 of its largest magnitude), on a batch of 16;
- training (mse, SGD with momentum, 20 steps at a global batch of 16): tp=2 on
  2 ranks (the CPU plan, and the GPU plan's mapping run on the CPU with
  --emulate-gpu) and dp=2 x tp=2 on 4 ranks give the losses of one process
  (relative 1e-5), and the checkpoint rank 0 writes at tp=2 (the parts gathered) loads
  into the one-process module and gives its next loss;
- a GPT-2 block (fused Q/K/V projection split in three) at tp=2: the same
  training check, its fused weight cut in three blocks;
- a token model (int64 ids -> Gather of a 64 x 64 embedding -> the GPT-2 block)
  at tp=2: its embedding split over the vocabulary (Megatron's
  VocabParallelEmbedding: each rank its 32 rows, the ids outside them
  zeroed, one sum over the group); inference, the same training checks at
  tp=2 (CPU and GPU plans) and dp=2 x tp=2, and the one-process checkpoint
  loaded at tp=2 (next loss);
- placement: a tensor group whose ranks say they run on different machines
  (NNCC_HOST_NAME per rank) makes rank 0 warn naming its ranks, and tensor
  groups each on one machine make no warning;
- a layout the model cannot take (tp=3: 4 heads and 64 features do not
  split in 3) is refused naming it, and a tp=2 module run by one process is
  refused naming the world it needs.
Exits 77 (reported by ctest as skipped) when mpirun is missing.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import run, run_checks, work_folder  # noqa: E402
from distributed_test import mpirun, losses  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
BATCH = 16
STEPS = 20
SAMPLES = 320
LR = "0.5"
VOCAB = 64
TRAIN = ["--train", "--target=cpu", "--optimizer=momentum", "--loss=mse"]


def token_ids(rng, n):
    """n samples of 16 int64 token ids in [-VOCAB, VOCAB) (ONNX Gather: a negative id counts from the end)."""
    return {"ids": rng.integers(-VOCAB, VOCAB, size=(n, 16), dtype=np.int64)}


class Setup:
    """A model at the global batch (x and mse labels of [16, 64] per sample), its data and the one-process
    reference losses; `name` prefixes its files, and names the model unless `model` does."""

    def __init__(self, args, work, name, flags, model=None, inputs=None):
        """`inputs(rng, n)`: n samples of each model input by name (default: x, float [n, 16, 64])."""
        self.args, self.work, self.name, self.flags = args, work, name, flags
        self.model = os.path.join(work, f"{model or name}.onnx")
        self.data = os.path.join(work, f"{name}-data")
        self.inputs = inputs or (lambda rng, n: {"x": rng.standard_normal((n, 16, 64)).astype(np.float32)})
        os.makedirs(self.data, exist_ok=True)
        rng = np.random.default_rng(11)
        for input_name, value in self.inputs(rng, SAMPLES).items():
            np.save(os.path.join(self.data, f"{input_name}.npy"), value)
        np.save(os.path.join(self.data, "labels.npy"), rng.standard_normal((SAMPLES, 16, 64)).astype(np.float32))
        self.single = self.compile("single", flags)
        self.single_losses = os.path.join(work, f"{name}-single.txt")
        run([args.nncc_run, self.single, "--train", "--data", self.data, "--steps", str(STEPS + 1), "--lr", LR,
             "--threads", "1", "--loss-file", self.single_losses], "nncc-run --train (one process)")

    def compile(self, name, flags):
        so = os.path.join(self.work, f"{self.name}-{name}.so")
        if not os.path.exists(so):
            run([self.args.nncc, self.model, *flags, "-o", so], f"nncc {' '.join(flags)}")
        return so


def check_inference(setup, flags=("--parallel=tp:2",), ranks=2):
    """The output of `flags`' module on `ranks` ranks against one process's."""
    args, work = setup.args, setup.work
    inputs = os.path.join(work, f"{setup.name}-inputs" if setup.name != "transformer" else "inputs")
    os.makedirs(inputs, exist_ok=True)
    for i, (input_name, value) in enumerate(setup.inputs(np.random.default_rng(3), BATCH).items()):
        with open(os.path.join(inputs, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, input_name).SerializeToString())
    outputs = {}
    layout = " ".join(flags)
    parallel = "infer-" + layout.replace("--", "").replace("=", "").replace(":", "").replace(" ", "-")
    for name, fl, n in (("infer-single", [], 1), (parallel, list(flags), ranks)):
        so = setup.compile(name, ["--target=cpu", *fl])
        out = os.path.join(work, f"{name}-out")
        os.makedirs(out, exist_ok=True)
        cmd = [args.nncc_run, so, "--input-dir", inputs, "--output-dir", out, "--threads", "1"]
        run(mpirun(args, n) + cmd if n > 1 else cmd, f"nncc-run {name}")
        with open(os.path.join(out, "output_0.pb"), "rb") as f:
            t = TensorProto()
            t.ParseFromString(f.read())
            outputs[name] = numpy_helper.to_array(t)
    want, got = outputs["infer-single"], outputs[parallel]
    rel = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    ok = got.shape == want.shape and rel <= 1e-5
    return ok, (f"{setup.name} {layout} inference on {ranks} ranks: {'ok' if ok else 'FAIL'}: worst difference "
                f"{rel:.2g} of the largest output")


def check_training(setup, dp, tp, plan="cpu"):
    """`plan` "gpu": the module's GPU plan (its thread mapping and GEMM forms) run on the CPU."""
    layout = ",".join(p for p in (f"dp:{dp}" if dp > 1 else "", f"tp:{tp}") if p)
    flags = [f"--parallel={layout}"] + (["--emulate-gpu"] if plan == "gpu" else [])
    return train_against_single(setup, flags, dp * tp, f"{layout} ({plan} plan)")


def train_against_single(setup, flags, ranks, label):
    """20 training steps of the module compiled with `flags` on `ranks` ranks against one process's losses
    (relative 1e-5), and the checkpoint rank 0 writes loaded by the one-process module: its next loss."""
    args, work = setup.args, setup.work
    tag = re.sub(r"[^a-z0-9]+", "-", " ".join(flags)).strip("-")
    so = setup.compile(f"train-{tag}", setup.flags + flags)
    out = os.path.join(work, f"{setup.name}-{tag}.txt")
    ckpt = os.path.join(work, f"{setup.name}-{tag}.ckpt")
    for f in (out, ckpt):
        if os.path.exists(f):
            os.remove(f)
    run(mpirun(setup.args, ranks) + [args.nncc_run, so, "--train", "--data", setup.data, "--steps", str(STEPS),
                                     "--lr", LR, "--threads", "1", "--loss-file", out, "--save-checkpoint", ckpt],
        f"mpirun -np {ranks} nncc-run --train ({label})")
    got, want = losses(out), losses(setup.single_losses)[:STEPS]
    rel = float(np.max(np.abs(got - want) / np.abs(want)))
    ok = len(got) == STEPS and rel <= 1e-5
    # The checkpoint (every part gathered), loaded by the one-process module.
    nxt = os.path.join(work, f"{setup.name}-{tag}-next.txt")
    run([args.nncc_run, setup.single, "--train", "--data", setup.data, "--steps", "1", "--lr", LR, "--threads", "1",
         "--load-checkpoint", ckpt, "--loss-file", nxt], "nncc-run --load-checkpoint (one process)")
    want_next = losses(setup.single_losses)[STEPS]
    next_rel = abs(losses(nxt)[0] - want_next) / abs(want_next)
    ok = ok and next_rel <= 1e-5
    return ok, (f"{setup.name} {label} training on {ranks} ranks: {'ok' if ok else 'FAIL'}: {len(got)} losses, "
                f"worst relative difference {rel:.2g} (loss {want[0]:.6f} -> {want[-1]:.6f}); checkpoint at one "
                f"process: next loss relative difference {next_rel:.2g}")


def check_checkpoint_into_parallel(setup, flags, ranks):
    """The other direction: the one-process module's checkpoint after 20 steps, loaded by the module of `flags`
    on `ranks` ranks (each rank taking its part; the layout's own state is in no checkpoint): its next loss."""
    args, work = setup.args, setup.work
    tag = re.sub(r"[^a-z0-9]+", "-", " ".join(flags)).strip("-")
    so = setup.compile(f"train-{tag}", setup.flags + flags)
    ckpt, nxt = (os.path.join(work, f"{setup.name}-single-{n}") for n in ("20.ckpt", f"next-{tag}.txt"))
    for f in (ckpt, nxt):
        if os.path.exists(f):
            os.remove(f)
    common = ["--train", "--data", setup.data, "--lr", LR, "--threads", "1"]
    run([args.nncc_run, setup.single, *common, "--steps", str(STEPS), "--save-checkpoint", ckpt],
        "nncc-run --save-checkpoint (one process)")
    run(mpirun(args, ranks) + [args.nncc_run, so, *common, "--steps", "1", "--load-checkpoint", ckpt,
                               "--loss-file", nxt], f"mpirun -np {ranks} nncc-run --load-checkpoint")
    want = losses(setup.single_losses)[STEPS]
    rel = abs(losses(nxt)[0] - want) / abs(want)
    ok = rel <= 1e-5
    return ok, (f"{setup.name}: the one-process checkpoint at {' '.join(flags)} on {ranks} ranks: "
                f"{'ok' if ok else 'FAIL'}: next loss relative difference {rel:.2g}")


def check_placement(setup):
    """A tensor group whose ranks run on different machines (NNCC_HOST_NAME per rank) makes rank 0 warn,
    naming the group's ranks; tensor groups each on one machine do not."""
    args = setup.args
    inputs = os.path.join(setup.work, "inputs")
    results = []
    for layout, ranks, machine, want in (("tp:2", 2, "$OMPI_COMM_WORLD_RANK", "(ranks 0-1)"),
                                         ("dp:2,tp:2", 4, "$((OMPI_COMM_WORLD_RANK % 2))", "(ranks 0-1, 2-3)"),
                                         ("dp:2,tp:2", 4, "$((OMPI_COMM_WORLD_RANK / 2))", None)):
        # The modules of the inference and training checks (dp needs --train): one step.
        if layout.startswith("dp"):
            so = setup.compile("train-" + re.sub(r"[^a-z0-9]+", "-", f"--parallel={layout}").strip("-"),
                               setup.flags + [f"--parallel={layout}"])
            run_args = ["--train", "--data", setup.data, "--steps", "1", "--lr", LR]
        else:
            so = setup.compile("infer-parallel" + layout.replace(":", ""), ["--target=cpu", f"--parallel={layout}"])
            run_args = ["--input-dir", inputs]
        cmd = f'NNCC_HOST_NAME=machine{machine} exec "$0" "$@"'
        p = subprocess.run(mpirun(args, ranks) + ["sh", "-c", cmd, args.nncc_run, so, *run_args, "--threads", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        warned = [line for line in p.stdout.splitlines() if "tensor-parallel group" in line]
        good = p.returncode == 0 and (len(warned) == 1 and want in warned[0] if want else not warned)
        results.append((good, f"{layout} on machines {machine}: {warned[0] if warned else 'no warning'}"))
    ok = all(good for good, _ in results)
    return ok, f"placement: {'ok' if ok else 'FAIL'}: " + "; ".join(text for _, text in results)


def check_refusals(setup):
    args = setup.args
    p = subprocess.run([args.nncc, setup.model, "--target=cpu", "--parallel=tp:3", "-o",
                        os.path.join(setup.work, "tp3.so")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    split_ok = p.returncode != 0 and "no layer of 'forward' splits over 3 ranks" in p.stdout
    so = setup.compile("infer-paralleltp2", ["--target=cpu", "--parallel=tp:2"])
    q = subprocess.run([args.nncc_run, so, "--input-dir", os.path.join(setup.work, "inputs")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    world_ok = q.returncode != 0 and "tp:2" in q.stdout and "mpirun -np 2" in q.stdout
    ok = split_ok and world_ok
    last = lambda s: (s.strip().splitlines() or [""])[-1]  # noqa: E731
    return ok, (f"refusals: {'ok' if ok else 'FAIL'}: tp=3: {last(p.stdout)}; tp=2 in one process: "
                f"{last(q.stdout)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    if not shutil.which(args.mpirun):
        print(f"SKIP: {args.mpirun} not found (scripts/install-deps.sh installs openmpi-bin)")
        return 77
    work, tmp = work_folder(args.work_dir, "nncc-tensor-parallel-")
    run([sys.executable, MAKE_MODELS, work, "--batch", str(BATCH)], "make_models.py")
    setup = Setup(args, work, "transformer", TRAIN + ["--freeze=.*_(scale|sqrt2|one|half)"])
    # GPT-2's block: its Q, K and V come from one fused projection and a
    # Split, so the fused weight is cut in three blocks (each rank its heads
    # of Q, of K and of V).
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import models  # noqa: E402
    import onnx  # noqa: E402
    onnx.save(models.gpt(BATCH, hidden=64, heads=4, ffn=256, layers=1, seq=16), os.path.join(work, "gpt.onnx"))
    gpt = Setup(args, work, "gpt", TRAIN + ["--trainable=.*_(w|b|g)"])
    # The same block fed by token ids: Gather(wte [64, 64], ids) + wpe. The
    # token table is split over the vocabulary (rank t: rows [32t, 32t + 32)),
    # the position table (16 rows, gathered by no ids) is an Add operand and
    # stays whole. Ids in [-64, 64): negative ones count from the end.
    onnx.save(models.gpt(BATCH, hidden=64, heads=4, ffn=256, layers=1, seq=16, vocab=VOCAB),
              os.path.join(work, "tokens.onnx"))
    tokens = Setup(args, work, "tokens", TRAIN + ["--trainable=.*_(w|b|g)|wte|wpe"], inputs=token_ids)
    checks = [
        ("inference", lambda: check_inference(setup)),
        ("tp=2", lambda: check_training(setup, 1, 2)),
        ("dp=2 x tp=2", lambda: check_training(setup, 2, 2)),
        ("tp=2 gpu plan", lambda: check_training(setup, 1, 2, "gpu")),
        ("gpt tp=2", lambda: check_training(gpt, 1, 2)),
        ("tokens inference", lambda: check_inference(tokens)),
        ("tokens tp=2", lambda: check_training(tokens, 1, 2)),
        ("tokens dp=2 x tp=2", lambda: check_training(tokens, 2, 2)),
        ("tokens tp=2 gpu plan", lambda: check_training(tokens, 1, 2, "gpu")),
        ("tokens checkpoint into tp=2", lambda: check_checkpoint_into_parallel(tokens, ["--parallel=tp:2"], 2)),
        ("placement", lambda: check_placement(setup)),
        ("refusals", lambda: check_refusals(setup)),
    ]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
