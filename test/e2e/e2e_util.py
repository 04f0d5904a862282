"""What the end-to-end tests share: running the tools, compiling for the CPU
and GPU plans, reading their TensorProto outputs, and the work folder."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import onnx
from onnx import numpy_helper


def run(cmd, what):
    """Runs `cmd`; on a non-zero exit raises with `what`, the command and its output.
    A module nncc writes is checked by check_module_symbols."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stdout}")
    if os.path.basename(cmd[0]) == "nncc" and "-o" in cmd and cmd[cmd.index("-o") + 1].endswith(".so"):
        check_module_symbols(cmd[cmd.index("-o") + 1])
    return p.stdout


# The two plans a model compiles to: the CPU's, and the GPU's with its thread
# mapping run on the CPU (--emulate-gpu).
PLANS = {"cpu": ["--target=cpu"], "gpu-plan": ["--emulate-gpu"]}


def ptxas_found():
    return bool(shutil.which("ptxas")) or os.path.exists("/usr/local/cuda/bin/ptxas")


def compile_for_plan(nncc, path, so, plan, extra=()):
    """Compiles `path` to `so` for `plan` (a PLANS key); for the GPU plan the
    PTX must have assembled (cubins for the default CUDA targets) wherever
    ptxas is found."""
    stats = so + ".stats.json"
    run([nncc, path, "-o", so, f"--stats={stats}"] + list(extra) + PLANS[plan], "nncc")
    if plan == "gpu-plan" and ptxas_found():
        with open(stats) as f:
            if not json.load(f).get("gpu_cubins", []):
                raise RuntimeError(f"{so}: no cubin assembled although ptxas is found")


def compile_and_run(nncc, nncc_run, case, model, feeds, plan):
    """Saves `model` and its inputs `feeds` ([(name, array)]) under `case`,
    compiles it for `plan` and runs it; returns the outputs as arrays."""
    in_dir, out_dir = os.path.join(case, "inputs"), os.path.join(case, "outputs")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(case, "model.onnx")
    onnx.save(model, path)
    for k, (input_name, value) in enumerate(feeds):
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, input_name).SerializeToString())
    so = os.path.join(case, "model.so")
    compile_for_plan(nncc, path, so, plan)
    run([nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")
    return [read_tensor(os.path.join(out_dir, f"output_{k}.pb")) for k in range(len(model.graph.output))]


def check_module_symbols(so):
    """A model.so needs nothing beyond libc and libm: every undefined dynamic
    symbol is versioned GLIBC (or weak), every DT_NEEDED libc or libm. A
    compiler-rt builtin left undefined loads on one machine and not on
    another."""
    undefined = subprocess.run(["nm", "-D", "--undefined-only", so], stdout=subprocess.PIPE,
                               text=True, check=True).stdout.split("\n")
    bad = [line.split()[-1] for line in undefined
           if line.split() and line.split()[0] == "U" and "@GLIBC_" not in line]
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]",
                        subprocess.run(["readelf", "-d", so], stdout=subprocess.PIPE, text=True,
                                       check=True).stdout)
    bad += [lib for lib in needed if not re.match(r"lib(c|m)\.so\.\d+$", lib)]
    if bad:
        raise RuntimeError(f"{so} needs symbols or libraries beyond libc/libm: {', '.join(bad)}")


def module_states(nncc_run, so):
    """[(name, type)] of the module state `nncc-run --info` lists, in state
    order (type like "f32[64,128]"); [] without state."""
    info = run([nncc_run, so, "--info"], "nncc-run --info")
    line = next((line for line in info.splitlines() if line.startswith("state: ")), "")
    parts = line[len("state: "):].split("], ") if line else []
    return [tuple((part if part.endswith("]") else part + "]").split(" ", 1)) for part in parts]


def read_tensor_proto(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def read_tensor(path):
    return numpy_helper.to_array(read_tensor_proto(path))


def work_folder(work_dir, prefix):
    """(folder, handle): `work_dir` when given (kept), else a temporary folder
    removed when the handle is cleaned up or collected."""
    if work_dir:
        os.makedirs(work_dir, exist_ok=True)
        return work_dir, None
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    return tmp.name, tmp


def run_checks(checks, tmp=None):
    """Runs each (label, check) of `checks`, where check() returns (ok, line):
    prints each line (`label: FAIL error` when the check raises, and goes on
    with the next), removes `tmp` (a work_folder handle) and prints how many
    passed. Returns the exit status: 1 when any failed."""
    failures = 0
    for label, check in checks:
        try:
            ok, line = check()
        except Exception as e:  # noqa: BLE001 - report and go on with the next check
            ok, line = False, f"{label}: FAIL {e}"
        print(line, flush=True)
        failures += not ok
    if tmp:
        tmp.cleanup()
    print(f"{len(checks) - failures}/{len(checks)} passed")
    return 1 if failures else 0
