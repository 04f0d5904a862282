#!/usr/bin/python3
"""Compiles ONNX backend tests for a CUDA target and lays them out for
scripts/gpu-check.sh run: OUT/<suite>__<test>/{model.so, input/input_K.pb,
expected/output_K.pb}. Tests come from a pass list (those passing on the
CPU), smallest first, until the byte budget is spent (at most 64 MiB travel
to the GPU machine).

Graph inputs that feed shapes are bound as constants (--bind-input) when the
model does not compile with them as run-time inputs, as test/backend/
run_suite.py does; the remaining inputs are renumbered.
"""
import argparse
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys
import tempfile

# The TensorProto header decoder of the CPU backend suite (no protobuf module needed).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "backend"))
from run_suite import read_tensor_header  # noqa: E402


def numbered(folder, prefix):
    return sorted(glob.glob(os.path.join(folder, prefix + "_*.pb")),
                  key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))


def compile_test(args, test):
    """Returns (bytes, work folder) of a packed test, or (None, reason)."""
    test_dir = os.path.join(args.data, test)
    data_dir = os.path.join(test_dir, "test_data_set_0")
    if not os.path.isdir(data_dir):
        return None, "no test_data_set_0"
    work = tempfile.mkdtemp(prefix="nncc-gpu-pack-")
    so = os.path.join(work, "model.so")
    model = os.path.join(test_dir, "model.onnx")
    inputs = numbered(data_dir, "input")
    cmd = [args.nncc, model, "-o", so, "--target=" + args.target]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    bound = []
    if p.returncode != 0 and inputs:
        for path in inputs:
            name, _, dims = read_tensor_header(path)
            if name and len(dims) <= 1:
                bound.append((name, path))
        if bound:
            p = subprocess.run(cmd + [f"--bind-input={n}={q}" for n, q in bound],
                               capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        shutil.rmtree(work)
        lines = p.stderr.strip().splitlines()
        return None, "compile: " + (lines[-1] if lines else "failed")
    os.makedirs(os.path.join(work, "input"))
    os.makedirs(os.path.join(work, "expected"))
    bound_paths = {q for _, q in bound}
    k = 0
    for path in inputs:
        if path not in bound_paths:
            shutil.copy(path, os.path.join(work, "input", f"input_{k}.pb"))
            k += 1
    for path in numbered(data_dir, "output"):
        shutil.copy(path, os.path.join(work, "expected", os.path.basename(path)))
    # Files and a 4 KiB block per folder (3 per test), as `du -sb` counts the bundle.
    size = sum(4096 + sum(os.path.getsize(os.path.join(r, f)) for f in fs) for r, _, fs in os.walk(work))
    return size, work


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--pass-list", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget-bytes", type=int, required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--target", default="cuda:sm_90")
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()

    tests = [line.strip() for line in open(args.pass_list)
             if line.strip() and not line.startswith("#")]
    packed, failed = [], []
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for test, (size, work) in zip(tests, pool.map(lambda t: compile_test(args, t), tests)):
            (packed if size is not None else failed).append((test, size, work))
    packed.sort(key=lambda t: t[1])
    used = kept = 0
    for test, size, work in packed:
        if used + size > args.budget_bytes:
            shutil.rmtree(work)
            continue
        shutil.move(work, os.path.join(args.out, test.replace("/", "__")))
        used += size
        kept += 1
    print(f"gpu_pack_models: {kept} of {len(tests)} tests packed ({used >> 20} MiB), "
          f"{len(packed) - kept} left out for size, {len(failed)} did not compile for "
          f"{args.target}")
    for test, _, reason in failed[:20]:
        print(f"  {test}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
