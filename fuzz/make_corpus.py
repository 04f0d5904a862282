#!/usr/bin/python3
"""Writes a few tiny valid ONNX models into DIR as a libFuzzer seed corpus.

Usage: /usr/bin/python3 fuzz/make_corpus.py DIR
(needs the Debian python3-onnx and python3-numpy modules)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="nncc-fuzz-seed")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return name, m


def models():
    yield model("add", [helper.make_node("Add", ["a", "b"], ["y"])],
                [vi("a", [2, 3]), vi("b", [1, 3])], [vi("y", [2, 3])])

    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    b = numpy_helper.from_array(np.zeros((4,), np.float32), "b")
    yield model("conv", [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3],
                                          pads=[1, 1, 1, 1], strides=[1, 1])],
                [vi("x", [1, 3, 5, 5])], [vi("y", [1, 4, 5, 5])], [w, b])

    shape = numpy_helper.from_array(np.array([3, -1], np.int64), "s")
    yield model("reshape_const",
                [helper.make_node("Constant", [], ["shape"], value=shape),
                 helper.make_node("Reshape", ["x", "shape"], ["y"])],
                [vi("x", [2, 3, 4])], [vi("y", [3, 8])])

    gw = numpy_helper.from_array(np.full((5, 4), 0.5, np.float32), "gw")
    gc = numpy_helper.from_array(np.arange(5, dtype=np.float32), "gc")
    yield model("gemm", [helper.make_node("Gemm", ["x", "gw", "gc"], ["y"], transB=1,
                                          alpha=2.0, beta=1.0)],
                [vi("x", [2, 4])], [vi("y", [2, 5])], [gw, gc])

    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             [("starts", [0, 1]), ("ends", [2, 4]), ("axes", [0, 1]), ("steps", [1, 2])]]
    yield model("slice", [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                                           ["y"])],
                [vi("x", [3, 5])], [vi("y", [2, 2])], inits)

    yield model("reducemean", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1],
                                                keepdims=1)],
                [vi("x", [2, 6, 3])], [vi("y", [2, 1, 3])])

    # Constant shapes, indices and ranges: the importer checks their sizes and
    # values before it allocates (lib/Import/SizeLimits.h).
    consts = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
              [("dims", [2, 3]), ("start", 0), ("limit", 3), ("delta", 1)]]
    yield model("shape_ops",
                [helper.make_node("ConstantOfShape", ["dims"], ["c"],
                                  value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
                 helper.make_node("Expand", ["x", "dims"], ["e"]),
                 helper.make_node("Add", ["c", "e"], ["s"]),
                 helper.make_node("Range", ["start", "limit", "delta"], ["idx"]),
                 helper.make_node("Gather", ["s", "idx"], ["y"], axis=1)],
                [vi("x", [1, 3])], [vi("y", [2, 3])], consts)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in models():
        with open(os.path.join(out, f"seed_{name}.onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
