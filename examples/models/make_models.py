#!/usr/bin/python3
"""Writes the bundled example models with seeded random weights.

Also the ONNX graph `Builder` that bench/models.py uses for its zoo.

    /usr/bin/python3 examples/models/make_models.py OUT_DIR [--batch N]

mlp.onnx          MatMul/Add/Relu x3, Softmax            (input x: [B, 64])
cnn.onnx          Conv/BatchNorm/Relu/MaxPool, residual block, GlobalAveragePool,
                  Flatten, Gemm                          (input x: [B, 3, 32, 32])
transformer.onnx  one encoder layer as PyTorch exports it: MatMul/Add, Reshape/
                  Transpose heads, Softmax attention, Erf-GELU, LayerNormalization
                                                         (input x: [B, 16, 64])
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def weight(self, name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        scale = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        value = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        self.count += 1
        names = [f"{op_type.lower()}_{self.count}" + (f"_{i}" if outputs > 1 else "")
                 for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=f"{op_type}_{self.count}",
                                           **attrs))
        return names[0] if outputs == 1 else names

    def rename_last_output(self, name):
        self.nodes[-1].output[0] = name
        return name

    def model(self, name, inputs, outputs, producer="nncc-examples"):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name=producer)
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model, full_check=True)
        return model


def mlp(batch):
    b = Builder(1)
    h = "x"
    dims = [64, 128, 128, 10]
    for i in range(3):
        h = b.op("MatMul", [h, b.weight(f"w{i}", [dims[i], dims[i + 1]])])
        h = b.op("Add", [h, b.weight(f"b{i}", [dims[i + 1]], 0.1)])
        if i < 2:
            h = b.op("Relu", [h])
    out = b.op("Softmax", [h], axis=-1)
    b.rename_last_output("probs")
    return b.model("mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64])],
                   [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, 10])])


def conv_bn_relu(b, x, cin, cout, name, stride=1, relu=True):
    y = b.op("Conv", [x, b.weight(f"{name}_w", [cout, cin, 3, 3])], kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], strides=[stride, stride])
    y = b.op("BatchNormalization",
             [y, b.weight(f"{name}_gamma", [cout], 0.1), b.weight(f"{name}_beta", [cout], 0.1),
              b.weight(f"{name}_mean", [cout], 0.1),
              b.const(f"{name}_var", (np.abs(b.rng.standard_normal(cout)) + 0.5).astype(np.float32))],
             epsilon=1e-5)
    return b.op("Relu", [y]) if relu else y


def cnn(batch):
    b = Builder(2)
    h = conv_bn_relu(b, "x", 3, 16, "stem")
    h = b.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    r = conv_bn_relu(b, h, 16, 16, "block1a")
    r = conv_bn_relu(b, r, 16, 16, "block1b", relu=False)
    h = b.op("Relu", [b.op("Add", [r, h])])
    h = conv_bn_relu(b, h, 16, 32, "down", stride=2)
    h = b.op("GlobalAveragePool", [h])
    h = b.op("Flatten", [h], axis=1)
    out = b.op("Gemm", [h, b.weight("fc_w", [10, 32]), b.weight("fc_b", [10], 0.1)], transB=1)
    b.rename_last_output("logits")
    return b.model("cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])])


def transformer(batch, seq=16, dim=64, heads=4, layers=1):
    b = Builder(3)
    hd = dim // heads
    h = "x"
    for l in range(layers):
        def proj(name, x):
            y = b.op("MatMul", [x, b.weight(f"l{l}_{name}_w", [dim, dim])])
            return b.op("Add", [y, b.weight(f"l{l}_{name}_b", [dim], 0.02)])

        def split_heads(x):
            x = b.op("Reshape", [x, b.const(f"l{l}_{x}_shape", np.array([batch, seq, heads, hd], np.int64))])
            return b.op("Transpose", [x], perm=[0, 2, 1, 3])

        q, k, v = (split_heads(proj(n, h)) for n in ("q", "k", "v"))
        kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
        scores = b.op("Div", [b.op("MatMul", [q, kt]), b.const(f"l{l}_scale", np.array(np.sqrt(hd), np.float32))])
        attn = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        attn = b.op("Reshape", [b.op("Transpose", [attn], perm=[0, 2, 1, 3]),
                                b.const(f"l{l}_merge", np.array([batch, seq, dim], np.int64))])
        h = b.op("Add", [h, proj("o", attn)])
        h = b.op("LayerNormalization", [h, b.weight(f"l{l}_ln1_g", [dim], 0.1), b.weight(f"l{l}_ln1_b", [dim], 0.1)],
                 axis=-1, epsilon=1e-5)
        f = b.op("Add", [b.op("MatMul", [h, b.weight(f"l{l}_ff1_w", [dim, 4 * dim])]),
                         b.weight(f"l{l}_ff1_b", [4 * dim], 0.02)])
        # Erf-GELU as PyTorch exports it: x * 0.5 * (1 + erf(x / sqrt(2))).
        g = b.op("Erf", [b.op("Div", [f, b.const(f"l{l}_sqrt2", np.array(np.sqrt(2.0), np.float32))])])
        g = b.op("Mul", [b.op("Mul", [f, b.op("Add", [g, b.const(f"l{l}_one", np.array(1.0, np.float32))])]),
                         b.const(f"l{l}_half", np.array(0.5, np.float32))])
        f = b.op("Add", [b.op("MatMul", [g, b.weight(f"l{l}_ff2_w", [4 * dim, dim])]),
                         b.weight(f"l{l}_ff2_b", [dim], 0.02)])
        h = b.op("LayerNormalization", [b.op("Add", [h, f]), b.weight(f"l{l}_ln2_g", [dim], 0.1),
                                        b.weight(f"l{l}_ln2_b", [dim], 0.1)], axis=-1, epsilon=1e-5)
    b.rename_last_output("y")
    return b.model("transformer",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, dim])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, dim])])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, make in (("mlp", mlp), ("cnn", cnn), ("transformer", transformer)):
        path = os.path.join(args.out_dir, f"{name}.onnx")
        onnx.save(make(args.batch), path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
