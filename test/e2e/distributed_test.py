#!/usr/bin/python3
"""Data-parallel training over MPI on the CPU target (docs/distributed.md).

    /usr/bin/python3 test/e2e/distributed_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        --runtime build/lib/libnncc_runtime.so [--work-dir DIR] [--mpirun mpirun]

The example MLP (and CNN, BatchNorm statistics frozen, and transformer, mse
against a random target, its scalar constants frozen) compiled at a global
batch of 16 with `--train` (SGD with momentum: the update scales with the
gradient, so a sum where a mean belongs shows) is trained for 20 steps by one
process on the global batch, and by `mpirun -np N nncc-run --train` for a
module compiled with `--parallel=dp:N` (MLP and transformer: N = 2, 4; CNN:
N = 2; each rank takes its 16/N samples of every global batch): the losses
must agree within relative 1e-5. The transformer's Reshapes hold the global
batch in constant shapes, which the shard's import rewrites. Also: only rank 0
prints and writes the loss file and checkpoint; the checkpoint rank 0 wrote
loads into the one-process module and gives its next loss; a dp:2 module
outside mpirun is refused naming the world sizes; a rank whose run fails
(a label out of range in its shard only) names itself and aborts the job;
and when one rank is killed mid-run the job exits non-zero within 60 s,
naming the lost rank. Overlap: the dp=2 MLP run with --profile, whose trace
(check_trace.py: every step once per run, one communication span and one wait
per collective step) must show the first bucket's all-reduce span
overlapping a backward step that follows it in the plan in at least 15 of the
20 runs. Each all-reduce is held 2 ms first (NNCC_COLLECTIVE_DELAY_US), longer
than those steps: without it, on a 2-vCPU host, both ranks' communication
threads took the cores from their session threads and polled in MPI until the
reduction was done (0 to 11 of 20 runs overlapped), which measured the
scheduler, not the runtime. The same run with NNCC_SYNC_COLLECTIVES=1
(collectives on the session's thread) gives the same
losses and a trace in which it never does, so the check can fail.
Exits 77 (reported by ctest as skipped) when mpirun is missing.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import run, run_checks, work_folder  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "unit", "runtime"))
import check_trace  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
BATCH = 16
STEPS = 20
SAMPLES = 320
LR = "0.05"
# NNCC_COLLECTIVE_DELAY_US of the overlap runs: each all-reduce waits this
# long on the thread that runs it, far longer than the MLP's backward steps.
DELAY_US = 2000
TRAIN = ["--train", "--target=cpu", "--optimizer=momentum"]


def mpirun(args, n):
    # As root in a container: allowed explicitly; more ranks than cores; no
    # cross-process memory attach (ptrace is often restricted there).
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism",
            "none", "-np", str(n)]


def losses(path):
    with open(path) as f:
        return np.array([float(line) for line in f if line.strip()], np.float64)


class Setup:
    """One model at the global batch, its data, and the one-process reference losses."""

    def __init__(self, args, work, name, shape, flags, labels=None):
        """`labels`: the shape of one sample's float target (mse), or None for a class in [0, 10)."""
        self.args, self.work, self.name, self.flags = args, work, name, TRAIN + flags
        self.model = os.path.join(work, f"{name}.onnx")
        self.data = os.path.join(work, f"{name}-data")
        os.makedirs(self.data, exist_ok=True)
        rng = np.random.default_rng(5)
        np.save(os.path.join(self.data, "x.npy"), rng.standard_normal((SAMPLES,) + shape).astype(np.float32))
        target = (rng.integers(0, 10, size=SAMPLES).astype(np.int64) if labels is None
                  else rng.standard_normal((SAMPLES,) + labels).astype(np.float32))
        np.save(os.path.join(self.data, "labels.npy"), target)
        self.single = os.path.join(work, f"{name}-single.so")
        run([args.nncc, self.model, *self.flags, "-o", self.single], "nncc --train")
        self.single_losses = os.path.join(work, f"{name}-single.txt")
        run([args.nncc_run, self.single, "--train", "--data", self.data, "--steps", str(STEPS + 1), "--lr", LR,
             "--threads", "1", "--loss-file", self.single_losses], "nncc-run --train (one process)")

    def module(self, n):
        so = os.path.join(self.work, f"{self.name}-dp{n}.so")
        if not os.path.exists(so):
            run([self.args.nncc, self.model, *self.flags, f"--parallel=dp:{n}", "--bucket-bytes", "16384", "-o", so],
                f"nncc --parallel=dp:{n}")
        return so


def check_dp(setup, n):
    args, work = setup.args, setup.work
    out = os.path.join(work, f"{setup.name}-dp{n}.txt")
    ckpt = os.path.join(work, f"{setup.name}-dp{n}.ckpt")
    for f in (out, ckpt):
        if os.path.exists(f):
            os.remove(f)
    text = run(mpirun(args, n) + [args.nncc_run, setup.module(n), "--train", "--data", setup.data, "--steps",
                                  str(STEPS), "--lr", LR, "--threads", "1", "--loss-file", out,
                                  "--save-checkpoint", ckpt], f"mpirun -np {n} nncc-run --train")
    got, want = losses(out), losses(setup.single_losses)[:STEPS]
    rel = float(np.max(np.abs(got - want) / np.abs(want)))
    headers = text.count("training: ")
    ok = len(got) == STEPS and rel <= 1e-5 and headers == 1 and f"{n} data-parallel ranks of {BATCH // n}" in text
    # The checkpoint rank 0 wrote, loaded by the one-process module: its next
    # loss is the one-process run's step 21.
    nxt = os.path.join(work, f"{setup.name}-dp{n}-next.txt")
    run([args.nncc_run, setup.single, "--train", "--data", setup.data, "--steps", "1", "--lr", LR, "--threads", "1",
         "--load-checkpoint", ckpt, "--loss-file", nxt], "nncc-run --load-checkpoint (one process)")
    next_rel = abs(losses(nxt)[0] - losses(setup.single_losses)[STEPS]) / abs(losses(setup.single_losses)[STEPS])
    ok = ok and next_rel <= 1e-5
    return ok, (f"{setup.name} dp={n}: {'ok' if ok else 'FAIL'}: {len(got)} losses, worst relative difference {rel:.2g} "
                f"(loss {want[0]:.6f} -> {want[-1]:.6f}); 'training:' printed {headers}x; checkpoint at dp=1: "
                f"next loss relative difference {next_rel:.2g}")


def bucket_overlaps(events):
    """Per run of train_step: the collective steps whose communication span overlaps (in time) a
    kernel, GEMM or copy step after it in the plan, before the step it was waited for at."""
    runs = {}
    for e in events:
        if e.get("ph") == "X" and e.get("args", {}).get("entry") == "train_step" and e.get("cat") != "run":
            runs.setdefault(e["args"]["run"], []).append(e)
    return {r: {span["args"]["step"] for span in evs if span["cat"] == "communication" and overlaps_later_step(span, evs)}
            for r, evs in sorted(runs.items())}


def overlaps_later_step(span, evs):
    c, before = span["args"]["step"], span["args"]["waited_before_step"]
    begin, end = span["ts"], span["ts"] + span["dur"]
    return any(e["cat"] in ("kernel", "gemm", "copy") and c < e["args"]["step"] < before
               and e["ts"] < end and e["ts"] + e["dur"] > begin for e in evs)


def check_overlap(setup, sync):
    """dp=2 with --profile and an emulated interconnect latency: the first bucket's all-reduce
    overlaps the backward steps after it (asynchronous, in most runs), or no bucket's ever does
    (NNCC_SYNC_COLLECTIVES=1); the losses are the one process's either way."""
    args, work, mode = setup.args, setup.work, "sync" if sync else "async"
    out, trace = (os.path.join(work, f"{setup.name}-dp2-{mode}.{ext}") for ext in ("txt", "json"))
    env = ["-x", f"NNCC_COLLECTIVE_DELAY_US={DELAY_US}"] + (["-x", "NNCC_SYNC_COLLECTIVES=1"] if sync else [])
    run(mpirun(args, 2) + env + [args.nncc_run, setup.module(2), "--train", "--data", setup.data, "--steps",
                                 str(STEPS), "--lr", LR, "--threads", "1", "--loss-file", out, "--profile", trace],
        f"mpirun -np 2 nncc-run --train --profile ({mode})")
    got, want = losses(out), losses(setup.single_losses)[:STEPS]
    rel = float(np.max(np.abs(got - want) / np.abs(want)))
    problems = []
    with open(trace) as f:
        doc = json.load(f)
    events = check_trace.check_format(doc, problems)
    steps = check_trace.plan_steps(args.runtime, setup.module(2), "train_step", doc["otherData"]["plan"])
    check_trace.check_steps(events, steps, "train_step", STEPS, problems)
    overlaps = bucket_overlaps(events) if not problems else {}
    first = min((i for i, s in enumerate(steps) if s["kind"] == "collective"), default=-1)
    n_first = sum(first in o for o in overlaps.values())
    n_any = sum(bool(o) for o in overlaps.values())
    comm_tids = {e["tid"] for e in events if e.get("cat") == "communication"}
    run_tids = {e["tid"] for e in events if e.get("cat") == "run"}
    own_track = bool(comm_tids) and not comm_tids & run_tids
    ok = not problems and len(got) == STEPS and rel <= 1e-5 and len(overlaps) == STEPS and \
        (n_any == 0 and not own_track if sync else n_first >= STEPS * 3 // 4 and own_track)
    return ok, (f"{setup.name} dp=2 {mode} --profile, {DELAY_US} us emulated latency: {'ok' if ok else 'FAIL'}: "
                f"the first bucket's all-reduce overlaps a later backward step in {n_first} of {len(overlaps)} runs "
                f"(any bucket's: {n_any}); on its own thread: {own_track}; "
                f"losses: worst relative difference {rel:.2g}; trace problems: {problems[:5]}")


def check_world_refused(setup):
    p = subprocess.run([setup.args.nncc_run, setup.module(2), "--train", "--data", setup.data, "--steps", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    want = "was compiled for 2 data-parallel ranks (--parallel=dp:2), but this session's world has 1"
    ok = p.returncode != 0 and want in p.stdout
    return ok, f"dp:2 module without mpirun: {'refused' if ok else 'FAIL'}: {p.stdout.strip().splitlines()[-1:]}"


def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def rank_pids(root, rank):
    """PIDs of the descendants of `root` whose environment says OMPI_COMM_WORLD_RANK=rank."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() not in env:
            continue
        p = int(pid)
        while p > 1 and p != root:
            p = parent(p)
        if p == root:
            found.append(int(pid))
    return found


def check_killed_rank(setup):
    args = setup.args
    cmd = mpirun(args, 2) + [args.nncc_run, setup.module(2), "--train", "--data", setup.data, "--steps", "100000000",
                             "--lr", "0.0", "--threads", "1"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        victims, deadline = [], time.time() + 30
        while not victims and time.time() < deadline:
            time.sleep(0.5)
            victims = rank_pids(p.pid, 1)
        if not victims:
            return False, "killed rank: FAIL: rank 1 of the job never started"
        time.sleep(2)  # mid-run: both ranks in their training loop
        os.kill(victims[0], signal.SIGKILL)
        killed = time.time()
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            return False, "killed rank: FAIL: the job did not exit within 60 s of the kill"
        took = time.time() - killed
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    named = "rank 1" in out
    ok = p.returncode != 0 and named
    line = next((l for l in out.splitlines() if "rank 1" in l), out.strip().splitlines()[-1:] or "")
    return ok, (f"killed rank: {'ok' if ok else 'FAIL'}: exit {p.returncode} {took:.1f} s after rank 1 was killed; "
                f"names it: {named} ({str(line).strip()})")


def check_failed_rank(setup):
    """A label out of range in rank 1's shard of the first batch alone: rank 1's run fails, it names
    itself and aborts the job, so rank 0 does not wait for it in the all-reduce."""
    data = os.path.join(setup.work, "bad-labels")
    os.makedirs(data, exist_ok=True)
    shutil.copy(os.path.join(setup.data, "x.npy"), os.path.join(data, "x.npy"))
    labels = np.load(os.path.join(setup.data, "labels.npy"))
    labels[BATCH // 2] = 99
    np.save(os.path.join(data, "labels.npy"), labels)
    start = time.time()
    p = subprocess.run(mpirun(setup.args, 2) + [setup.args.nncc_run, setup.module(2), "--train", "--data", data,
                                                "--steps", "5", "--threads", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    took = time.time() - start
    want = "nncc-run: error: rank 1 of 2: "
    line = next((l for l in p.stdout.splitlines() if want in l), "")
    ok = p.returncode != 0 and "a label is outside the classes [0, 10)" in line and took < 60
    return ok, f"failed rank: {'ok' if ok else 'FAIL'}: exit {p.returncode} after {took:.1f} s: {line.strip()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--runtime", required=True, help="libnncc_runtime.so (check_trace reads the plan with it)")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    if not shutil.which(args.mpirun):
        print(f"SKIP: {args.mpirun} not found (scripts/install-deps.sh installs openmpi-bin)")
        return 77
    work, tmp = work_folder(args.work_dir, "nncc-distributed-")
    run([sys.executable, MAKE_MODELS, work, "--batch", str(BATCH)], "make_models.py")
    mlp = Setup(args, work, "mlp", (64,), [])
    cnn = Setup(args, work, "cnn", (3, 32, 32), ["--freeze=.*_(mean|var)"])
    # Its Reshapes to and from the heads hold the global batch in constant
    # shapes ([16, 16, 4, 16], [16, 16, 64]), rewritten for the shard.
    transformer = Setup(args, work, "transformer", (16, 64), ["--loss=mse", "--freeze=.*_(scale|sqrt2|one|half)"],
                        labels=(16, 64))
    checks = [
        ("mlp dp=2", lambda: check_dp(mlp, 2)),
        ("mlp dp=4", lambda: check_dp(mlp, 4)),
        ("overlap", lambda: check_overlap(mlp, sync=False)),
        ("synchronous", lambda: check_overlap(mlp, sync=True)),
        ("cnn dp=2", lambda: check_dp(cnn, 2)),
        ("transformer dp=2", lambda: check_dp(transformer, 2)),
        ("transformer dp=4", lambda: check_dp(transformer, 4)),
        ("world", lambda: check_world_refused(mlp)),
        ("failed rank", lambda: check_failed_rank(mlp)),
        ("killed rank", lambda: check_killed_rank(mlp)),
    ]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
