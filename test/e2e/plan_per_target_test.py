#!/usr/bin/python3
"""A module carries one plan per device kind (ABI v6, docs/compiler.md).

For each example model (MLP, CNN, transformer, batch 4), a module built for
the default targets (cpu,cuda:sm_80,cuda:sm_90 where the CUDA toolkit is
present) and one built with --target=cpu, both for the same --cpu:

- the default module's CPU plan is the --target=cpu module's plan, step for
  step (names, kinds, kernels, via the runtime's C API), so it runs the CPU's
  direct convolution kernels rather than the GPU plan's im2col + GEMM;
- its CUDA plan is another schedule (for the CNN: its convolutions are GEMM
  library calls where the CPU plan has kernels);
- both modules give bit-identical outputs on the CPU;
- their CPU medians (nncc-run --bench) are printed side by side, not asserted
  (speed is the benchmark's business, bench/run.sh).

Run with /usr/bin/python3 (Debian's python3-onnx).
"""
import argparse
import ctypes
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_MODELS = os.path.join(HERE, "..", "..", "examples", "models", "make_models.py")


class StepInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p), ("kernel", ctypes.c_char_p),
                ("bytes", ctypes.c_int64), ("parallel_extent", ctypes.c_int64)]


def plan_steps(runtime, so, kind):
    """[(name, kind, kernel)] of the forward entry's plan for devices of
    `kind`, or None when the module has no such plan."""
    rt = ctypes.CDLL(runtime)
    rt.nncc_last_error.restype = ctypes.c_char_p
    rt.nncc_module_num_steps.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32]
    rt.nncc_module_step_info.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32,
                                         ctypes.POINTER(StepInfo)]
    handle, index = ctypes.c_void_p(), ctypes.c_int32()
    if rt.nncc_module_load(so.encode(), ctypes.byref(handle)) != 0 or \
            rt.nncc_module_find_entry(handle, b"forward", ctypes.byref(index)) != 0:
        raise RuntimeError(rt.nncc_last_error().decode())
    n = rt.nncc_module_num_steps(handle, kind.encode(), index)
    steps = None
    if n >= 0:
        steps = []
        for s in range(n):
            si = StepInfo()
            if rt.nncc_module_step_info(handle, kind.encode(), index, s, ctypes.byref(si)) != 0:
                raise RuntimeError(rt.nncc_last_error().decode())
            steps.append((si.name.decode(), si.kind.decode(), si.kernel.decode()))
    rt.nncc_module_release(handle)
    return steps


def median_ms(nncc_run, so, in_dir):
    out = run([nncc_run, so, "--input-dir", in_dir, "--bench", "30", "--threads", "1"], "nncc-run --bench")
    m = re.search(r"median ([0-9.e+-]+) ms", out)
    return float(m.group(1)) if m else float("nan")


def check_model(name, args, work):
    model_path = os.path.join(work, f"{name}.onnx")
    case = os.path.join(work, name)
    in_dir = os.path.join(case, "inputs")
    os.makedirs(in_dir, exist_ok=True)
    model = onnx.load(model_path)
    rng = np.random.default_rng(7)
    for k, info in enumerate(model.graph.input):
        dims = [d.dim_value for d in info.type.tensor_type.shape.dim]
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(rng.standard_normal(dims).astype(np.float32),
                                            info.name).SerializeToString())
    both, cpu_only = os.path.join(case, "default.so"), os.path.join(case, "cpu.so")
    run([args.nncc, model_path, "-o", both, f"--cpu={args.cpu}"], "nncc (default targets)")
    run([args.nncc, model_path, "-o", cpu_only, "--target=cpu", f"--cpu={args.cpu}"], "nncc --target=cpu")

    default_cpu = plan_steps(args.runtime, both, "cpu")
    default_cuda = plan_steps(args.runtime, both, "cuda")
    alone = plan_steps(args.runtime, cpu_only, "cpu")
    if plan_steps(args.runtime, cpu_only, "cuda") is not None:
        return False, f"{name}: FAIL the --target=cpu module has a CUDA plan"
    if default_cpu != alone:
        return False, (f"{name}: FAIL the default module's CPU plan ({len(default_cpu)} steps) is not the "
                       f"--target=cpu module's ({len(alone)} steps)")
    cuda_note = "no CUDA plan (no CUDA toolkit)"
    if default_cuda is not None:
        if name == "cnn":
            cpu_gemms = sum(kind == "gemm" for _, kind, _ in default_cpu)
            gpu_gemms = sum(kind == "gemm" for _, kind, _ in default_cuda)
            if gpu_gemms <= cpu_gemms:
                return False, (f"{name}: FAIL the CUDA plan has {gpu_gemms} GEMM calls, the CPU plan "
                               f"{cpu_gemms}: its convolutions should be im2col + GEMM")
        cuda_note = f"CUDA plan {len(default_cuda)} steps ({sum(k == 'gemm' for _, k, _ in default_cuda)} GEMM)"

    outputs = []
    for so in (both, cpu_only):
        out_dir = so + ".out"
        os.makedirs(out_dir, exist_ok=True)
        run([args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")
        outputs.append([read_tensor(os.path.join(out_dir, f"output_{k}.pb")) for k in range(len(model.graph.output))])
    for a, b in zip(*outputs):
        if not np.array_equal(a, b):
            return False, f"{name}: FAIL the default and --target=cpu modules' outputs differ on the CPU"
    t_both, t_cpu = median_ms(args.nncc_run, both, in_dir), median_ms(args.nncc_run, cpu_only, in_dir)
    return True, (f"{name}: ok   CPU plan {len(default_cpu)} steps "
                  f"({sum(k == 'gemm' for _, k, _ in default_cpu)} GEMM) = --target=cpu's, {cuda_note}; "
                  f"outputs bit-identical; CPU median {t_both:.3g} ms default vs {t_cpu:.3g} ms --target=cpu "
                  f"({t_both / t_cpu:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--runtime", required=True, help="libnncc_runtime.so")
    parser.add_argument("--cpu", default="x86-64-v3")
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-plan-per-target-")
    run([sys.executable, MAKE_MODELS, work, "--batch", "4"], "make_models.py")
    checks = [(name, lambda name=name: check_model(name, args, work)) for name in ("mlp", "cnn", "transformer")]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
