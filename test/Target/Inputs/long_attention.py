#!/usr/bin/python3
"""Writes an attention model with `seq` keys per row into OUT: model.onnx, input/input_K.pb and
expected/output_0.pb (numpy, float64). Of more than 4200 keys the first 4200 are masked (additive
mask, -10000 or -inf with --neg-inf): a whole chunk of 4096 keys of the online softmax is masked.

    /usr/bin/python3 long_attention.py OUT --seq 5000 [--neg-inf] [--depth-v 16]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--seq", type=int, required=True)
parser.add_argument("--neg-inf", action="store_true")
parser.add_argument("--depth-v", type=int, default=16, help="the last dim of v (and of the output)")
args = parser.parse_args()
seq, heads, depth = args.seq, 2, 16
info = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2], name="k_t"),
         helper.make_node("MatMul", ["q", "kt"], ["s0"], name="scores"),
         helper.make_node("Mul", ["s0", "scale"], ["s1"], name="scaled"),
         helper.make_node("Add", ["s1", "mask"], ["s2"], name="masked"),
         helper.make_node("Softmax", ["s2"], ["p"], axis=-1, name="softmax"),
         helper.make_node("MatMul", ["p", "v"], ["y"], name="context")]
shape, v_shape = [1, heads, seq, depth], [1, heads, seq, args.depth_v]
graph = helper.make_graph(nodes, "long_attention",
                          [info("q", shape), info("k", shape), info("v", v_shape), info("mask", [1, 1, 1, seq])],
                          [info("y", v_shape)], [numpy_helper.from_array(np.array(0.25, np.float32), "scale")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
os.makedirs(os.path.join(args.out, "input"), exist_ok=True)
os.makedirs(os.path.join(args.out, "expected"), exist_ok=True)
onnx.save(model, os.path.join(args.out, "model.onnx"))
rng = np.random.default_rng(1)
q, k, v = (rng.standard_normal(s).astype(np.float32) * 2 for s in (shape, shape, v_shape))
mask = np.zeros([1, 1, 1, seq], np.float32)
if seq > 4200:
    mask[..., :4200] = -np.inf if args.neg_inf else -10000
for i, (name, value) in enumerate([("q", q), ("k", k), ("v", v), ("mask", mask)]):
    with open(os.path.join(args.out, "input", f"input_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)) * 0.25 + mask
p = np.exp(s - s.max(-1, keepdims=True))
y = (p / p.sum(-1, keepdims=True)) @ v
with open(os.path.join(args.out, "expected", "output_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())
