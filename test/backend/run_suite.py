#!/usr/bin/python3
"""Compiles every ONNX backend test model for the CPU with `nncc` and runs it
with `nncc-run`, comparing against the test's expected outputs.

The main compile is `--target=cpu` (the CPU-only plan: direct convolution
kernels); `--check-plain` recompiles it without fusion and memory reuse and
requires the same bits; `--check-gpu-mapping` compiles the GPU plan for the
default targets (PTX and cubins when ptxas is found) and runs its thread
mapping emulated on the CPU.

Graph inputs that feed shapes (Reshape's shape, Slice's starts...) are given
as files in the backend tests; when a model does not compile with them as
run-time inputs, inputs of rank <= 1 are bound as constants
(`--bind-input`), which is how a static-shape compiler is used. Prints
`N passed, M failed, K skipped` and fails when a test of the checked-in pass
list fails. `--update` adds newly passing tests to the list (it only grows).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def read_tensor_header(path):
    """Returns (name, data_type, dims) of a TensorProto file by decoding the
    few wire-format fields needed (no protobuf module required)."""
    data = open(path, "rb").read()
    pos, name, dtype, dims = 0, "", 0, []

    def varint():
        nonlocal pos
        shift = result = 0
        while True:
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    while pos < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            v = varint()
            if field == 1:
                dims.append(v)
            elif field == 2:
                dtype = v
        elif wire == 2:
            n = varint()
            chunk = data[pos:pos + n]
            pos += n
            if field == 8:
                name = chunk.decode("utf-8", "replace")
            elif field == 1:  # packed dims
                sub = 0
                while sub < len(chunk):
                    shift = v = 0
                    while True:
                        b = chunk[sub]
                        sub += 1
                        v |= (b & 0x7F) << shift
                        if not b & 0x80:
                            break
                        shift += 7
                    dims.append(v)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            break
    return name, dtype, dims


def run(cmd, timeout=300):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stderr + p.stdout).strip()
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def run_test(args, suite, name, test_dir):
    data_dir = os.path.join(test_dir, "test_data_set_0")
    if not os.path.isdir(data_dir):
        return "skip", "no test_data_set_0"
    work = tempfile.mkdtemp(prefix="nncc-backend-")
    try:
        model = os.path.join(test_dir, "model.onnx")
        so = os.path.join(work, "model.so")
        inputs = sorted(glob.glob(os.path.join(data_dir, "input_*.pb")),
                        key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
        stats = os.path.join(work, "stats.json")
        gpu_stats = os.path.join(work, "gpu_stats.json")
        # The plan of a CPU-only module (direct convolution kernels); the GPU
        # plan is compiled (PTX, cubins) and run below with --check-gpu-mapping.
        rc, err = run([args.nncc, model, "-o", so, "--target=cpu", f"--stats={stats}"])
        bound = []
        if rc != 0 and inputs:
            for path in inputs:
                tname, dtype, dims = read_tensor_header(path)
                if tname and len(dims) <= 1:
                    bound.append((tname, path))
            if bound:
                rc, err = run([args.nncc, model, "-o", so, "--target=cpu", f"--stats={stats}"] +
                              [f"--bind-input={n}={p}" for n, p in bound])
        if rc != 0:
            return "fail", "compile: " + err.splitlines()[-1] if err else "compile failed"
        run_dir = data_dir
        if bound:
            # Renumber the remaining inputs for nncc-run.
            run_dir = os.path.join(work, "data")
            os.makedirs(run_dir)
            bound_paths = {p for _, p in bound}
            k = 0
            for path in inputs:
                if path not in bound_paths:
                    shutil.copy(path, os.path.join(run_dir, f"input_{k}.pb"))
                    k += 1
        out_dir = os.path.join(work, "out")
        os.makedirs(out_dir)
        rc, err = run([args.nncc_run, so, "--input-dir", run_dir, "--compare", data_dir,
                       "--rtol", str(args.rtol), "--atol", str(args.atol), "--threads", "1",
                       "--output-dir", out_dir])
        if rc != 0:
            return "fail", "run: " + (err.splitlines()[-1] if err else str(rc))
        if args.check_gpu_mapping:
            # The GPU plan for the default targets (cpu, plus sm_80/sm_90 when
            # ptxas is found: its PTX assembled), its thread mapping run on
            # the CPU thread by thread.
            emulated = os.path.join(work, "emulated.so")
            emulated_out = os.path.join(work, "emulated_out")
            os.makedirs(emulated_out)
            rc, err = run([args.nncc, model, "-o", emulated, "--emulate-gpu", f"--stats={gpu_stats}"] +
                          [f"--bind-input={n}={p}" for n, p in bound])
            if rc == 0:
                rc, err = run([args.nncc_run, emulated, "--input-dir", run_dir, "--compare", data_dir,
                               "--rtol", str(args.rtol), "--atol", str(args.atol), "--threads", "1",
                               "--output-dir", emulated_out])
            if rc != 0:
                return "fail", "gpu mapping: " + (err.splitlines()[-1] if err else str(rc))
        if args.check_plain:
            # Fusion and the memory plan must not change a single bit of the outputs.
            plain = os.path.join(work, "plain.so")
            plain_out = os.path.join(work, "plain_out")
            os.makedirs(plain_out)
            rc, err = run([args.nncc, model, "-o", plain, "--target=cpu", "--no-memory-reuse",
                           "--no-fusion"] +
                          [f"--bind-input={n}={p}" for n, p in bound])
            if rc == 0:
                rc, err = run([args.nncc_run, plain, "--input-dir", run_dir, "--threads", "1",
                               "--output-dir", plain_out])
            if rc != 0:
                return "fail", "plain: " + (err.splitlines()[-1] if err else str(rc))
            for name in sorted(os.listdir(out_dir)):
                with open(os.path.join(out_dir, name), "rb") as a, \
                        open(os.path.join(plain_out, name), "rb") as b:
                    if a.read() != b.read():
                        return "fail", f"{name} differs with fusion and memory reuse off"
        with open(stats) as f:
            figures = json.load(f)
        cubins = []
        if args.check_gpu_mapping:
            with open(gpu_stats) as f:
                cubins = json.load(f).get("gpu_cubins", [])
        return "pass", (figures["arena_bytes"]["forward"], figures["live_lower_bound_bytes"]["forward"], cubins)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--pass-list", required=True)
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--show-failures", action="store_true")
    parser.add_argument("--check-plain", action="store_true",
                        help="also compile with --no-fusion --no-memory-reuse and require "
                             "bit-identical outputs")
    parser.add_argument("--check-gpu-mapping", action="store_true",
                        help="also run each model with the GPU thread mapping emulated on the CPU")
    parser.add_argument("--filter", default="")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("-j", type=int, default=os.cpu_count())
    args = parser.parse_args()

    tests = []
    for suite in SUITES:
        for d in sorted(glob.glob(os.path.join(args.data, suite, "*"))):
            name = f"{suite}/{os.path.basename(d)}"
            if args.filter in name and os.path.exists(os.path.join(d, "model.onnx")):
                tests.append((suite, name, d))
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda t: run_test(args, *t), tests))

    counts = {"pass": 0, "fail": 0, "skip": 0}
    per_suite = {s: [0, 0] for s in SUITES}
    passed = set()
    for (suite, name, _), (status, why) in zip(tests, results):
        counts[status] += 1
        per_suite[suite][1] += 1
        if status == "pass":
            per_suite[suite][0] += 1
            passed.add(name)
        elif args.show_failures:
            print(f"{status.upper()} {name}: {why}")
    for suite in SUITES:
        print(f"{suite}: {per_suite[suite][0]} of {per_suite[suite][1]} pass on the CPU")
    # Memory plans of the passing models: arena against the live lower bound.
    ratios = [((r[1][0] / r[1][1]) if r[1][1] else 1.0, t[1])
              for t, r in zip(tests, results) if r[0] == "pass"]
    if ratios:
        worst = max(ratios)
        print(f"memory plan: worst arena / live lower bound {worst[0]:.3f} ({worst[1]}), "
              f"{sum(1 for r, _ in ratios if r > 1.05)} models above 1.05")
    gpu = {t[1]: r[1][2] for t, r in zip(tests, results) if r[0] == "pass"}
    archs = sorted({a for found in gpu.values() for a in found})
    for arch in archs:
        print(f"{arch}: PTX of {sum(1 for found in gpu.values() if arch in found)} of {len(gpu)} "
              f"passing models assembled with ptxas")
    # With the CUDA toolkit present every passing model must carry GPU code.
    without_gpu = sorted(name for name, found in gpu.items() if archs and found != archs)
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")

    listed = set()
    if os.path.exists(args.pass_list):
        with open(args.pass_list) as f:
            listed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    # --filter checks only the listed tests it selects; --update keeps the others.
    expected = {e for e in listed if args.filter in e}
    if args.update:
        with open(args.pass_list, "w") as f:
            f.write("# Backend tests that pass on the CPU target; this list may only grow.\n")
            for name in sorted(passed | listed):
                f.write(name + "\n")
    # A listed test that failed beside the rest of `make check` runs once more
    # alone: one that passes then is reported as flaky (with why it failed
    # first) rather than failing the suite; one that fails again is a regression.
    why_failed = {t[1]: r[1] for t, r in zip(tests, results) if r[0] != "pass"}
    by_name = {t[1]: t for t in tests}
    regressions = []
    for name in sorted(expected - passed):
        status, why = run_test(args, *by_name[name]) if name in by_name else ("fail", "not found")
        if status == "pass":
            print(f"FLAKY: {name} failed ({why_failed.get(name)}) and passed when run again alone")
        else:
            regressions.append(name)
            print(f"REGRESSION: {name} is in the pass list but fails: {why}")
    for name in without_gpu:
        print(f"NO GPU CODE: {name} passes on the CPU but its PTX did not assemble for {', '.join(archs)}")
    return 1 if regressions or without_gpu else 0


if __name__ == "__main__":
    sys.exit(main())
