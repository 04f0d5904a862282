#!/usr/bin/python3
"""End-to-end profiler test: nncc-run --profile (and NNCC_PROFILE) on a
compiled module, then check_trace.py on the trace it writes.

    profile_test.py --nncc-run EXE --runtime libnncc_runtime.so --work-dir D
                    (--module model.so | --nncc NNCC --example transformer)

--example compiles examples/models/make_models.py's model with the real
compiler first. Inputs are seeded random tensors of the entry's signature
(read through the runtime's C API), written as ONNX TensorProto files.
Checks, for a --bench run and for a single run under NNCC_PROFILE:
  - nncc-run exits 0, prints the top-steps table and says it wrote the file;
  - the number of steps nncc-run reports equals the module's plan length;
  - the trace is valid trace-event JSON in which every plan step appears once
    per run, with its node names (check_trace.py).
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BENCH_RUNS = 5


class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64))]


class EntryInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("num_inputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorDesc)), ("num_outputs", ctypes.c_int32),
                ("outputs", ctypes.POINTER(TensorDesc)), ("arena_bytes", ctypes.c_int64),
                ("num_steps", ctypes.c_int32)]


NUMPY_OF_DTYPE = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64,
                  9: np.bool_, 11: np.float64}


def signature(runtime, module, entry):
    """(input (name, dtype, dims) list, num_steps) of the entry."""
    rt = ctypes.CDLL(runtime)
    rt.nncc_last_error.restype = ctypes.c_char_p
    h = ctypes.c_void_p()
    if rt.nncc_module_load(module.encode(), ctypes.byref(h)) != 0:
        sys.exit(f"cannot load {module}: {rt.nncc_last_error().decode()}")
    index = ctypes.c_int32()
    info = EntryInfo()
    if rt.nncc_module_find_entry(h, entry.encode(), ctypes.byref(index)) != 0 or \
            rt.nncc_module_entry_info(h, index, ctypes.byref(info)) != 0:
        sys.exit(rt.nncc_last_error().decode())
    inputs = [(info.inputs[i].name.decode(), info.inputs[i].dtype,
               [info.inputs[i].dims[d] for d in range(info.inputs[i].rank)])
              for i in range(info.num_inputs)]
    steps = info.num_steps
    rt.nncc_module_release(h)
    return inputs, steps


def run(cmd, env=None):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    print(p.stdout, end="", flush=True)
    if p.returncode != 0:
        sys.exit(f"exit status {p.returncode}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nncc-run", required=True)
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--module")
    ap.add_argument("--nncc")
    ap.add_argument("--example", choices=["mlp", "cnn", "transformer"])
    ap.add_argument("--entry", default="forward")
    args = ap.parse_args()

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    module = args.module
    if args.example:
        if not args.nncc:
            sys.exit("--example needs --nncc")
        run(["/usr/bin/python3", os.path.join(REPO, "examples/models/make_models.py"), work])
        module = os.path.join(work, args.example + ".so")
        run([args.nncc, os.path.join(work, args.example + ".onnx"), "-o", module])
    if not module:
        sys.exit("give --module or --example")

    inputs, num_steps = signature(args.runtime, module, args.entry)
    in_dir = os.path.join(work, "inputs")
    os.makedirs(in_dir)
    rng = np.random.default_rng(0)
    for k, (name, dtype, dims) in enumerate(inputs):
        if dtype not in NUMPY_OF_DTYPE:
            sys.exit(f"input '{name}': dtype {dtype} not handled by this test")
        value = (rng.standard_normal(dims) * 2).astype(NUMPY_OF_DTYPE[dtype])
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())

    failures = 0
    cases = [
        # (label, extra nncc-run arguments, environment, expected runs, trace path)
        ("--profile with --bench", ["--bench", str(BENCH_RUNS), "--profile",
                                    os.path.join(work, "trace.json")],
         None, BENCH_RUNS, os.path.join(work, "trace.json")),
        ("NNCC_PROFILE, one run", [], dict(os.environ, NNCC_PROFILE=os.path.join(work, "env.json")),
         1, os.path.join(work, "env.json")),
    ]
    for label, extra, env, runs, trace in cases:
        print(f"--- {label}", flush=True)
        out = run([args.nncc_run, module, "--entry", args.entry, "--input-dir", in_dir] + extra,
                  env=env)
        m = re.search(r"profile: (\d+) runs? of '([^']+)', (\d+) steps", out)
        problems = []
        if not m:
            problems.append("nncc-run printed no profile summary")
        else:
            if int(m.group(1)) != runs:
                problems.append(f"nncc-run profiled {m.group(1)} runs, expected {runs}")
            if int(m.group(3)) != num_steps:
                problems.append(f"nncc-run reports {m.group(3)} steps, the module has {num_steps}")
        if not re.search(r"top \d+ steps by total time:", out):
            problems.append("no top-steps table")
        if f"profile: wrote {trace}" not in out:
            problems.append(f"nncc-run did not say it wrote {trace}")
        with open(trace, encoding="utf-8") as f:
            doc = json.load(f)
        events = check_trace.check_format(doc, problems)
        # The steps of the plan the session ran (the trace names its device kind).
        steps = check_trace.plan_steps(args.runtime, module, args.entry, doc["otherData"]["plan"])
        if len(steps) != num_steps:
            problems.append(f"nncc_module_step_info gave {len(steps)} steps, entry info {num_steps}")
        check_trace.check_steps(events, steps, args.entry, runs, problems)
        x_per_run = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") != "run") / max(runs, 1)
        if problems:
            failures += 1
            print(f"FAIL {label}: {trace}")
            for p in problems[:40]:
                print("  " + p)
        else:
            print(f"ok   {label}: {trace}: {len(events)} events, {x_per_run:g} step slices per run "
                  f"= {num_steps} plan steps, {runs} run(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
