#!/usr/bin/python3
"""ConvTranspose as GEMM + col2im: ungrouped, grouped and depthwise, on the CPU
plan and on the GPU plan with its thread mapping emulated on the CPU.

    /usr/bin/python3 test/e2e/conv_transpose_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR]

Each case is one ConvTranspose node with seeded random inputs, compared with
the float64 reference interpreter (reference.py, ONNX's definition), and
asserts the path it takes: one GEMM library call (`exec.gemm` in
--emit=exec) for ungrouped ones at any batch and for grouped ones of one
image (the GEMM batched over the groups), the generated loop kernel for
grouped ones of several images (one GEMM step's single batch stride cannot
express images x groups).
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402
from e2e_util import PLANS, compile_and_run, run, run_checks, work_folder  # noqa: E402

# (name, gemm?, n, cin, cout, h, w, kernel, strides, pads [t, l, b, r], group, bias)
CASES = [
    ("ungrouped_2x2_s2_batch2", True, 2, 8, 6, 5, 7, [2, 2], [2, 2], [0, 0, 0, 0], 1, True),
    ("grouped2_3x3_s2_p1", True, 1, 8, 6, 6, 5, [3, 3], [2, 2], [1, 1, 1, 1], 2, True),
    ("depthwise_4x4_s2_p1", True, 1, 12, 12, 9, 8, [4, 4], [2, 2], [1, 1, 1, 1], 12, False),
    ("depthwise_multiplier2_2x2_s2", True, 1, 4, 8, 5, 5, [2, 2], [2, 2], [0, 0, 0, 0], 4, True),
    ("grouped4_batch2_loops", False, 2, 8, 8, 4, 6, [3, 3], [2, 2], [1, 1, 0, 0], 4, True),
]


def make_model(case):
    name, _, n, cin, cout, h, w, kernel, strides, pads, group, bias = case
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, cin, h, w]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [cin, cout // group] + kernel)]
    names = ["x", "w"]
    if bias:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [cout]))
        names.append("b")
    node = helper.make_node("ConvTranspose", names, ["y"], kernel_shape=kernel, strides=strides, pads=pads,
                            group=group, name=name)
    oh = (h - 1) * strides[0] - pads[0] - pads[2] + kernel[0]
    ow = (w - 1) * strides[1] - pads[1] - pads[3] + kernel[1]
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, cout, oh, ow])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def check(case, plan, args, work, rng):
    name, gemm = case[0], case[1]
    model = make_model(case)
    feeds = [(i.name, rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32))
             for i in model.graph.input]
    folder = os.path.join(work, f"{name}-{plan}")
    (got,) = compile_and_run(args.nncc, args.nncc_run, folder, model, feeds, plan)
    want = reference.run_model(model, dict(feeds))["y"]
    err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
    if got.shape != want.shape or not err <= 1e-5:
        return False, f"{name} {plan}: FAIL shape {got.shape} vs {want.shape}, max error {err:.2e}"
    exec_ir = run([args.nncc, os.path.join(folder, "model.onnx"), "--emit=exec", "-o", "-"] + PLANS[plan],
                  "nncc --emit=exec")
    if ("exec.gemm" in exec_ir) != gemm:
        return False, f"{name} {plan}: FAIL expected {'a GEMM call' if gemm else 'the loop kernel'}"
    return True, f"{name} {plan}: ok   {'GEMM + col2im' if gemm else 'loop kernel'}, max error {err:.1e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-conv-transpose-")
    rng = np.random.default_rng(5)
    checks = [(f"{case[0]} {plan}", lambda case=case, plan=plan: check(case, plan, args, work, rng))
              for case in CASES for plan in PLANS]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
