#!/usr/bin/python3
"""Direct max pool kernels (lib/Conversion/NNToExec/DirectConv.cpp, isDirectMaxPool) against numpy.

    /usr/bin/python3 test/e2e/direct_max_pool_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR]

Each case is one MaxPool node compiled with --target=cpu for AVX2 (--cpu=x86-64-v3: 8 lanes) and
AVX-512 (--cpu=x86-64-v4: 16 lanes), whose kernels are tiled differently. The test checks that the
case takes the path it names (the direct kernel: vector code, `vector.transfer_read`, in
--emit=exec; otherwise the generic loop kernel), runs it on seeded random inputs (the AVX-512
module only where this machine has AVX-512) and compares with a numpy max over the -inf-padded
windows: the results must be equal (a max rounds nothing).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from direct_conv_test import runnable_cpus  # noqa: E402
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402

# (name, direct?, n, c, h, w, kernel, pads [t, l, b, r], strides, dilations, ceil_mode)
CASES = [
    ("resnet_stem_3x3_s2", True, 2, 8, 56, 56, 3, [1, 1, 1, 1], [2, 2], [1, 1], 0),
    ("2x2_s2", True, 1, 4, 28, 28, 2, [0, 0, 0, 0], [2, 2], [1, 1], 0),
    ("3x3_s1_odd_width", True, 1, 3, 13, 17, 3, [1, 1, 1, 1], [1, 1], [1, 1], 0),
    ("ceil_mode_7x7", True, 1, 4, 15, 15, 3, [0, 0, 0, 0], [2, 2], [1, 1], 1),
    ("dilated_uneven_pads", True, 2, 5, 20, 23, 3, [2, 1, 0, 2], [1, 1], [2, 2], 0),
    ("column_stride_3_falls_back", False, 1, 4, 30, 30, 3, [0, 0, 0, 0], [3, 3], [1, 1], 0),
]
CPUS = ("x86-64-v3", "x86-64-v4")


def reference(x, k, pads, strides, dilations, oh, ow):
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], max(pads[2], 0) + k * dilations[0]),
                    (pads[1], max(pads[3], 0) + k * dilations[1])), constant_values=-np.inf)
    out = np.full(x.shape[:2] + (oh, ow), -np.inf, np.float32)
    for y in range(k):
        for z in range(k):
            rows = xp[:, :, y * dilations[0]::strides[0]][:, :, :oh]
            out = np.maximum(out, rows[:, :, :, z * dilations[1]::strides[1]][:, :, :, :ow])
    return out


def check(case, args, work, rng):
    name, direct, n, c, h, w, k, pads, strides, dilations, ceil = case
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], pads=pads, strides=strides,
                            dilations=dilations, ceil_mode=ceil)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]))
    model.ir_version = 7
    oh, ow = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim][2:]
    want = reference(x, k, pads, strides, dilations, oh, ow)
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    with open(os.path.join(d, "in", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for cpu in CPUS:
        exec_ir = run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "--emit=exec", "-o", "-"], "nncc --emit=exec")
        if ("vector.transfer_read" in exec_ir) != direct:
            return False, f"{name}: FAIL expected {'the' if direct else 'no'} direct kernel for {cpu}"
    for cpu in runnable_cpus():
        so, out = os.path.join(d, f"{cpu}.so"), os.path.join(d, f"out-{cpu}")
        os.makedirs(out, exist_ok=True)
        run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "-o", so], "nncc")
        run([args.nncc_run, so, "--input-dir", os.path.join(d, "in"), "--output-dir", out], "nncc-run")
        got = read_tensor(os.path.join(out, "output_0.pb"))
        if got.shape != want.shape or not np.array_equal(got, want):
            return False, f"{name}: FAIL {cpu} differs from numpy (shape {list(got.shape)}, want {list(want.shape)})"
    return True, f"{name}: ok   {'direct' if direct else 'loop kernel'}, {oh}x{ow}, equal to numpy"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-direct-max-pool-")
    rng = np.random.default_rng(0)
    return run_checks([(case[0], lambda case=case: check(case, args, work, rng)) for case in CASES], tmp)


if __name__ == "__main__":
    sys.exit(main())
