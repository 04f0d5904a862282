"""What the end-to-end tests share: running the tools, reading their
TensorProto outputs, and the work folder."""
import os
import subprocess
import tempfile

import onnx
from onnx import numpy_helper


def run(cmd, what):
    """Runs `cmd`; on a non-zero exit raises with `what`, the command and its output."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stdout}")
    return p.stdout


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
