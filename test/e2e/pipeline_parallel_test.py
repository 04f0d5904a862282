#!/usr/bin/python3
"""Pipeline parallelism (and dp x pp) over MPI on the CPU target (docs/distributed.md).

    /usr/bin/python3 test/e2e/pipeline_parallel_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--mpirun mpirun]

The example transformer (one encoder layer) compiled with `--parallel=pp:2
--micro-batches=4` is cut into two stages, each run by its own rank over four
micro-batches of 4 samples (1F1B in training). Checks:
- inference: `mpirun -np 2 nncc-run` gives the one-process output (relative
  1e-5 of its largest magnitude), on a batch of 16;
- training (mse, SGD with momentum, 20 steps at a global batch of 16): pp=2
  with 4 micro-batches on 2 ranks, dp=2 x pp=2 and tp=2 x pp=2 on 4 ranks, and
  dp=2 x tp=2 x pp=2 on 8, give the losses of one process (relative 1e-5); the checkpoint rank 0 writes (each weight
  read from the stage that trains it) loads into the one-process module and
  gives its next loss;
- pp=3 with 4 micro-batches (the middle stage receives and sends both ways):
  the same training check;
- --grad-clip=0.05 (below the gradients' norm, so every step is clipped by the
  norm summed over the stages and tensor parts): pp=2 and tp=2 x pp=2 against
  one process with the same clip;
- refusals: micro-batches that do not divide the batch, and a pp:2 module run
  by one process.
Exits 77 (reported by ctest as skipped) when mpirun is missing.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import run, run_checks, work_folder  # noqa: E402
from tensor_parallel_test import BATCH, MAKE_MODELS, TRAIN, Setup, check_inference, train_against_single  # noqa: E402


FREEZE = ["--freeze=.*_(scale|sqrt2|one|half)"]


def check_training(setup, layout, ranks):
    label = layout + (" --grad-clip" if any(f.startswith("--grad-clip") for f in setup.flags) else "")
    return train_against_single(setup, layout.split(), ranks, label)


def check_refusals(setup):
    args = setup.args
    p = subprocess.run([args.nncc, setup.model, *TRAIN, "--parallel=pp:2", "--micro-batches=3", "-o",
                        os.path.join(setup.work, "pp-m3.so")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    micro_ok = p.returncode != 0 and "16" in p.stdout and "3" in p.stdout
    so = setup.compile("infer-parallelpp2-micro-batches4", ["--target=cpu", "--parallel=pp:2", "--micro-batches=4"])
    q = subprocess.run([args.nncc_run, so, "--input-dir", os.path.join(setup.work, "inputs")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    world_ok = q.returncode != 0 and "mpirun -np 2" in q.stdout
    ok = micro_ok and world_ok
    last = lambda s: (s.strip().splitlines() or [""])[-1]  # noqa: E731
    return ok, (f"refusals: {'ok' if ok else 'FAIL'}: 3 micro-batches of 16: {last(p.stdout)}; pp=2 in one "
                f"process: {last(q.stdout)}")


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
    work, tmp = work_folder(args.work_dir, "nncc-pipeline-parallel-")
    run([sys.executable, MAKE_MODELS, work, "--batch", str(BATCH)], "make_models.py")
    setup = Setup(args, work, "transformer", TRAIN + FREEZE)
    # A norm limit below the gradients' norm from the first step on: every
    # step is clipped by the norm over all stages (and tensor parts).
    clipped = Setup(args, work, "transformer-clip", TRAIN + FREEZE + ["--grad-clip=0.05"], model="transformer")
    checks = [
        ("inference", lambda: check_inference(setup, ["--parallel=pp:2", "--micro-batches=4"], 2)),
        ("pp=2", lambda: check_training(setup, "--parallel=pp:2 --micro-batches=4", 2)),
        ("pp=3", lambda: check_training(setup, "--parallel=pp:3 --micro-batches=4", 3)),
        ("dp=2 x pp=2", lambda: check_training(setup, "--parallel=dp:2,pp:2 --micro-batches=2", 4)),
        ("tp=2 x pp=2", lambda: check_training(setup, "--parallel=tp:2,pp:2 --micro-batches=2", 4)),
        ("dp=2 x tp=2 x pp=2", lambda: check_training(setup, "--parallel=dp:2,tp:2,pp:2 --micro-batches=2", 8)),
        ("pp=2, --grad-clip", lambda: check_training(clipped, "--parallel=pp:2 --micro-batches=4", 2)),
        ("tp=2 x pp=2, --grad-clip", lambda: check_training(clipped, "--parallel=tp:2,pp:2 --micro-batches=2", 4)),
        ("refusals", lambda: check_refusals(setup)),
    ]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
