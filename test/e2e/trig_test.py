#!/usr/bin/python3
"""Accuracy of Sin, Cos, Tan, Asin, Acos and Atan (float32 and float64) on the
CPU plan and on the GPU plan with its thread mapping emulated on the CPU.

    /usr/bin/python3 test/e2e/trig_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR]

One model applies the six ops to seeded random inputs: sin, cos and tan over
|x| up to 1e4 plus values near multiples of pi/2 and huge ones (1e30, the
largest float), where only an exact range reduction stays accurate; asin and
acos over [-1, 1] with the ends; atan over |x| up to 1e30. Each output is
compared with numpy in long double (x87 extended precision, libm's sinl...,
so that float64 results have a reference finer than themselves) of the same
inputs, in units in the last place of the output type:
|got - want| <= MAX_ULPS * ulp(want). Prints the largest error per op, plan
and type.
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import read_tensor, run, work_folder  # noqa: E402

# libm (host and emulated GPU plan) measured <= 0.7 ulp; libdevice promises <= 2 on a GPU.
MAX_ULPS = 1.0
OPS = {"Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos,
       "Atan": np.arctan}


def inputs(rng, dtype):
    periodic = np.concatenate([
        rng.uniform(-10, 10, 200), rng.uniform(-1e4, 1e4, 200),
        np.arange(-40, 41) * (np.pi / 2) + rng.uniform(-1e-3, 1e-3, 81),
        [0.0, -0.0, 1e-30, 1e30, -1e30, np.finfo(dtype).max, 1e6, 3.0e7]]).astype(dtype)
    unit = np.concatenate([rng.uniform(-1, 1, 300), [-1.0, 1.0, 0.0, 0.5, -0.5, 1e-20]]).astype(dtype)
    wide = np.concatenate([rng.uniform(-10, 10, 200), 10.0 ** rng.uniform(-30, 30, 200),
                           -(10.0 ** rng.uniform(-30, 30, 100))]).astype(dtype)
    return {"Sin": periodic, "Cos": periodic, "Tan": periodic, "Asin": unit, "Acos": unit,
            "Atan": wide}


def ulp(values, dtype):
    return np.spacing(np.abs(values).astype(dtype)).astype(np.longdouble)


def check_type(args, work, rng, dtype, onnx_type):
    """Compiles and runs the model of `dtype` on both plans; returns the failures."""
    data = inputs(rng, dtype)
    names = list(OPS)
    nodes = [helper.make_node(op, [f"x_{op}"], [f"y_{op}"], name=op) for op in names]
    graph = helper.make_graph(
        nodes, "trig",
        [helper.make_tensor_value_info(f"x_{op}", onnx_type, data[op].shape) for op in names],
        [helper.make_tensor_value_info(f"y_{op}", onnx_type, data[op].shape) for op in names])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    tag = np.dtype(dtype).name
    model_path = os.path.join(work, f"trig_{tag}.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    in_dir = os.path.join(work, f"in_{tag}")
    os.makedirs(in_dir, exist_ok=True)
    for k, op in enumerate(names):
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(data[op], f"x_{op}").SerializeToString())
    failures = 0
    for plan, flags in [("cpu", ["--target=cpu"]), ("gpu-emulated", ["--emulate-gpu"])]:
        so = os.path.join(work, f"trig_{tag}_{plan}.so")
        out_dir = os.path.join(work, f"out_{tag}_{plan}")
        os.makedirs(out_dir, exist_ok=True)
        run([args.nncc, model_path, "-o", so] + flags, "nncc")
        run([args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")
        for k, op in enumerate(names):
            got = read_tensor(os.path.join(out_dir, f"output_{k}.pb")).astype(np.longdouble)
            with np.errstate(all="ignore"):
                want = OPS[op](data[op].astype(np.longdouble))
            err = (np.abs(got - want) / ulp(want, dtype)).astype(np.float64)
            worst = float(np.max(err))
            ok = worst <= MAX_ULPS
            failures += not ok
            where = int(np.argmax(err))
            print(f"{'ok  ' if ok else 'FAIL'} {op:<5} {tag:<8} {plan:<13} max {worst:.2f} ulp"
                  f" (x = {data[op][where]!r}: got {float(got[where])!r}, want {want[where]})")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    work, _handle = work_folder(args.work_dir, "trig")
    failures = sum(check_type(args, work, rng, dtype, onnx_type)
                   for dtype, onnx_type in [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)])
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
