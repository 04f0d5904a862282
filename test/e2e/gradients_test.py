#!/usr/bin/python3
"""Gradients (nncc --gradients, the nncc-differentiate pass) against central
finite differences in float64.

    /usr/bin/python3 test/e2e/gradients_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--filter REGEX]

Each case is a small ONNX model of one op (or a few) with seeded random inputs,
some of them initializers. It is compiled with --gradients=.* (every float
input and initializer gets a gradient) for --target=cpu, and the cases marked
`gpu` also for the GPU plan (--emulate-gpu, default targets: the compile must
not warn, so the backward kernels' PTX is in the module where ptxas is). nncc-run runs the
entry forward_grad on the inputs and a random cotangent of each output; each
gradient is compared with central differences (step 1e-6) of the scalar
sum(cotangent * output) computed by the independent numpy interpreter
reference.py in float64: |got - want| <= 1e-4 + 1e-3 |want| per element. Inputs
are kept away from kinks (Relu, Abs, Max, Clip bounds) by more than the step.
The example models (examples/models/make_models.py: MLP, CNN, transformer at
batch 2) are checked the same way, by directional differences: for each
gradient g of an input or initializer and a random direction v,
|<g, v> - (L(t + hv) - L(t - hv)) / 2h| <= 1e-4 + 1e-3 |g| (h = 1e-4), and by
central differences at 12 random elements. Constants that simplification
builds from several initializers (BatchNorm folded into a Conv, fused Q/K/V
weights) are named after nodes: those models are compiled again with
--gradients naming the initializers, and the folded ones stay constants.
The backward also goes through autocast: forward_grad of the MLP and the
transformer compiled with --precision=bf16, fp16 and mixed is compared with
the fp32 plan's (relative error of each gradient, ||low - fp32|| / ||fp32||:
bf16 and mixed <= 1e-1, fp16 <= 5e-3). bf16's bound is wider than
e2e.precision's for outputs: the recomputed forward in bf16 can flip Relu
masks, and softmax's backward cancels (the MLP's input gradient is ~6% off).
Prints one line per case and, per op family, how many passed.
"""
import argparse
import os
import re
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import read_tensor, run, work_folder  # noqa: E402
from reference import run_model  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")

STEP = 1e-6
RTOL, ATOL = 1e-3, 1e-4


def away(rng, shape, low=0.2, high=2.0):
    """Random values of either sign with |x| in [low, high]: no kink at 0."""
    return (rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


def positive(rng, shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def inside_unit(rng, shape):
    """|x| <= 0.9: Asin's and Acos's derivatives stay finite."""
    return rng.uniform(-0.9, 0.9, shape).astype(np.float32)


def normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


class Case:
    """One model: `nodes` read graph inputs `inputs` and initializers `inits`
    ({name: array}) and write `outputs` (names)."""

    def __init__(self, family, label, nodes, inputs, inits=None, outputs=("y",), gpu=False, absorbed=(),
                 step=STEP):
        self.family, self.label, self.nodes = family, label, nodes
        self.inputs, self.inits, self.outputs, self.gpu = inputs, inits or {}, list(outputs), gpu
        # Initializers that recomposition or the import turns into attributes
        # (GELU's and attention's constants, Resize's scales): they get no gradient.
        self.absorbed = set(absorbed)
        self.step = step


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), name=f"{op.lower()}_{outputs[0]}", **attrs)


def cases(rng):
    out = []
    unary = {
        "Neg": normal, "Abs": away, "Exp": normal, "Log": positive, "Sqrt": positive,
        "Reciprocal": away, "Tanh": normal, "Sigmoid": normal, "Relu": away, "Softplus": normal,
        "Erf": normal, "Sin": normal, "Cos": normal, "Tan": inside_unit, "Asin": inside_unit,
        "Acos": inside_unit, "Atan": normal,
    }
    for op, gen in unary.items():
        for shape in [(7,), (2, 3, 4)]:
            out.append(Case("elementwise", f"{op} {shape}", [node(op, ["x"])], {"x": gen(rng, shape)}))
    out.append(Case("elementwise", "HardSwish (-5, 5) away from +-3",
                    [node("HardSwish", ["x"])],
                    {"x": np.array([-4.5, -3.5, -2.5, -1, -0.3, 0.4, 1.7, 2.6, 3.4, 4.9], np.float32)}))
    for op, attrs, gen in [("LeakyRelu", {"alpha": 0.1}, away), ("Elu", {"alpha": 0.7}, away),
                           ("Selu", {}, away), ("Selu", {"alpha": 1.5, "gamma": 0.8}, away),
                           ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, None)]:
        x = away(rng, (3, 5)) if gen else np.array([-4, -2, -1, -0.5, 0.1, 0.6, 1.2, 1.5, 3], np.float32)
        out.append(Case("elementwise", f"{op} {attrs}", [node(op, ["x"], **attrs)], {"x": x}))
    for approx in ["none", "tanh"]:
        # Exporters' GELU graphs, recomposed into nn.gelu by nncc-recompose.
        if approx == "none":
            nodes = [node("Div", ["x", "sqrt2"], ["t0"]), node("Erf", ["t0"], ["t1"]),
                     node("Add", ["t1", "one"], ["t2"]), node("Mul", ["x", "t2"], ["t3"]),
                     node("Mul", ["t3", "half"], ["y"])]
            inits = {"sqrt2": np.array(np.sqrt(2), np.float32)}
        else:
            nodes = [node("Pow", ["x", "three"], ["t0"]), node("Mul", ["t0", "k"], ["t1"]),
                     node("Add", ["x", "t1"], ["t2"]), node("Mul", ["t2", "c"], ["t3"]),
                     node("Tanh", ["t3"], ["t4"]), node("Add", ["t4", "one"], ["t5"]),
                     node("Mul", ["x", "t5"], ["t6"]), node("Mul", ["t6", "half"], ["y"])]
            inits = {"three": np.array(3, np.float32), "k": np.array(0.044715, np.float32),
                     "c": np.array(np.sqrt(2 / np.pi), np.float32)}
        inits.update({"one": np.array(1, np.float32), "half": np.array(0.5, np.float32)})
        for n_ in nodes:
            n_.name = f"gelu_{n_.output[0]}"
        out.append(Case("elementwise", f"Gelu({approx}) graph", nodes, {"x": normal(rng, (4, 6))}, inits,
                        gpu=approx == "tanh", absorbed=inits))
    for op in ["Add", "Sub", "Mul", "Div", "Min", "Max", "Pow"]:
        for sa, sb in [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((2, 1, 4), (3, 1))]:
            a = positive(rng, sa) if op == "Pow" else normal(rng, sa)
            b = positive(rng, sb, 0.5, 1.5) if op in ("Pow", "Div") else normal(rng, sb)
            if op in ("Min", "Max"):
                b = np.broadcast_to(b, np.broadcast_shapes(sa, sb)) if sa == sb else b
                a = a + np.sign(a - np.broadcast_to(b, np.broadcast_shapes(sa, sb))[
                    tuple(slice(0, d) for d in sa)]) * 0.3 if sa == sb else a
            out.append(Case("broadcast", f"{op} {sa} {sb}", [node(op, ["a", "b"])], {"a": a, "b": b},
                            gpu=(op == "Mul" and sb == (4,))))
    out.append(Case("broadcast", "Mul (2,3) by initializer (3,)", [node("Mul", ["x", "w"])],
                    {"x": normal(rng, (2, 3))}, {"w": normal(rng, (3,))}))
    x = normal(rng, (3, 4))
    x[np.abs(x - 0.5) < 0.1] += 0.25
    x[np.abs(x + 0.4) < 0.1] -= 0.25
    out.append(Case("broadcast", "Clip(-0.4, 0.5)", [node("Clip", ["x", "lo", "hi"])], {"x": x},
                    {"lo": np.array(-0.4, np.float32), "hi": np.array(0.5, np.float32)}))
    out.append(Case("broadcast", "PRelu slope (1,3,1)", [node("PRelu", ["x", "s"])],
                    {"x": away(rng, (2, 3, 4)), "s": normal(rng, (1, 3, 1))}))
    out.append(Case("broadcast", "Where cond (3,1) x (3,4) y (4,)", [node("Where", ["c", "a", "b"])],
                    {"a": normal(rng, (3, 4)), "b": normal(rng, (4,))},
                    {"c": rng.random((3, 1)) > 0.5}))
    # The reference rounds to float32 at the last Cast: a wider step keeps
    # that rounding out of the differences.
    out.append(Case("broadcast", "Cast f32 -> f64 -> f32 of Exp", [
        node("Exp", ["x"], ["t"]), node("Cast", ["t"], ["h"], to=TensorProto.DOUBLE),
        node("Cast", ["h"], ["y"], to=TensorProto.FLOAT)], {"x": normal(rng, (5,))}, step=1e-3))

    x = rng.uniform(-3, 3, (3, 4)).astype(np.float32)
    x[np.abs(x - np.round(x)) < 0.05] += 0.1
    out.append(Case("elementwise", "Floor(x) * x + Ceil(x) (floor, ceil: zero gradient)", [
        node("Floor", ["x"], ["f"]), node("Mul", ["f", "x"], ["t"]), node("Ceil", ["x"], ["c"]),
        node("Add", ["t", "c"], ["y"])], {"x": x}))
    out.append(Case("broadcast", "Pow by an initializer exponent 3", [node("Pow", ["x", "e"])],
                    {"x": positive(rng, (2, 5))}, {"e": np.array(3.0, np.float32)}, absorbed={"e"}))

    # Contractions.
    for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (4, 3)),
                   ((3, 4), (4,))]:
        out.append(Case("contraction", f"MatMul {sa} {sb}", [node("MatMul", ["a", "b"])],
                        {"a": normal(rng, sa), "b": normal(rng, sb)}, gpu=sa == (2, 3, 4)))
    out.append(Case("contraction", "Gemm without C, transB=1", [node("Gemm", ["a", "b"], transB=1)],
                    {"a": normal(rng, (3, 4)), "b": normal(rng, (5, 4))}))
    for ta, tb, alpha, beta, sc in [(0, 0, 1.0, 1.0, (5,)), (1, 0, 0.5, 2.0, (3, 5)), (0, 1, 1.5, 0.5, (3, 1)),
                                    (1, 1, 2.0, 1.0, (1, 5))]:
        a = normal(rng, (4, 3) if ta else (3, 4))
        b = normal(rng, (5, 4) if tb else (4, 5))
        out.append(Case("contraction", f"Gemm transA={ta} transB={tb} alpha={alpha} beta={beta} C{sc}",
                        [node("Gemm", ["a", "b", "c"], transA=ta, transB=tb, alpha=alpha, beta=beta)],
                        {"a": a}, {"b": b, "c": normal(rng, sc)}, gpu=ta == 1 and tb == 1))
    for n, c, m, hw, k, pads, strides, dil, group in [
            (2, 3, 4, (6, 6), (3, 3), [1, 1, 1, 1], [1, 1], [1, 1], 1),
            (1, 4, 6, (7, 8), (3, 2), [0, 1, 2, 0], [2, 1], [1, 1], 2),
            (2, 2, 3, (9, 7), (2, 3), [1, 0, 0, 1], [2, 3], [2, 1], 1),
            (1, 4, 4, (5, 5), (3, 3), [1, 1, 1, 1], [1, 1], [1, 1], 4),
            (2, 3, 2, (10,), (3,), [2, 1], [3], [2], 1)]:
        x = normal(rng, (n, c) + hw)
        w = normal(rng, (m, c // group) + k)
        out.append(Case("contraction", f"Conv x{x.shape} w{w.shape} pads={pads} strides={strides} "
                        f"dilations={dil} group={group}",
                        [node("Conv", ["x", "w", "bias"], kernel_shape=list(k), pads=pads, strides=strides,
                              dilations=dil, group=group)],
                        {"x": x}, {"w": w, "bias": normal(rng, (m,))}, gpu=group == 2))

    for equation, shapes in [("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                             ("ij->j", [(3, 4)]), ("i,j->ij", [(3,), (4,)]), ("ij,ik->k", [(2, 3), (2, 4)]),
                             ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
                             ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)])]:
        names = ["a", "b", "c"][:len(shapes)]
        out.append(Case("contraction", f"Einsum {equation} {shapes}", [node("Einsum", names, equation=equation)],
                        {n: normal(rng, sh) for n, sh in zip(names, shapes)}, gpu=equation.startswith("bhqd")))
    out.append(Case("contraction", "Conv without bias, 3-d", [node("Conv", ["x", "w"], kernel_shape=[2, 2, 2])],
                    {"x": normal(rng, (1, 2, 3, 4, 3))}, {"w": normal(rng, (3, 2, 2, 2, 2))}))
    for c, m, hw, k, pads, strides, dil, out_pad, group in [
            (3, 2, (4, 5), (3, 3), [1, 1, 1, 1], [1, 1], [1, 1], [0, 0], 1),
            (4, 6, (3, 4), (3, 2), [0, 1, 1, 0], [2, 3], [1, 1], [1, 2], 2),
            (2, 3, (5,), (3,), [1, 2], [2], [2], [1], 1)]:
        x = normal(rng, (2, c) + hw)
        w = normal(rng, (c, m // group) + k)
        out.append(Case("contraction", f"ConvTranspose x{x.shape} w{w.shape} pads={pads} strides={strides} "
                        f"dilations={dil} output_padding={out_pad} group={group}",
                        [node("ConvTranspose", ["x", "w", "bias"], kernel_shape=list(k), pads=pads,
                              strides=strides, dilations=dil, output_padding=out_pad, group=group)],
                        {"x": x}, {"w": w, "bias": normal(rng, (m,))}, gpu=group == 2))

    # Reductions, softmax, pooling.
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"]:
        for axes, keep in [([1], 1), ([0, 2], 0), ([-1], 0)]:
            x = normal(rng, (3, 4, 5))
            if op == "ReduceSum":
                nodes = [node(op, ["x", "axes"], keepdims=keep)]
                inits = {"axes": np.array(axes, np.int64)}
            else:
                nodes = [node(op, ["x"], axes=axes, keepdims=keep)]
                inits = {}
            out.append(Case("reduction", f"{op} axes={axes} keepdims={keep}", nodes, {"x": x}, inits))
    out.append(Case("reduction", "ReduceL2 axes=[1] keepdims=0", [node("ReduceL2", ["x"], axes=[1], keepdims=0)],
                    {"x": normal(rng, (3, 4, 2))}))
    for exclusive, reverse in [(0, 0), (1, 0), (0, 1), (1, 1)]:
        out.append(Case("reduction", f"CumSum axis=1 exclusive={exclusive} reverse={reverse}",
                        [node("CumSum", ["x", "axis"], exclusive=exclusive, reverse=reverse)],
                        {"x": normal(rng, (2, 5))}, {"axis": np.array(1, np.int64)}))
    out.append(Case("reduction", "ReduceProd axes=[0,2] keepdims=1",
                    [node("ReduceProd", ["x"], axes=[0, 2], keepdims=1)], {"x": away(rng, (2, 3, 3), 0.5, 1.5)}))
    for op in ["Softmax", "LogSoftmax"]:
        for axis in [-1, 1]:
            out.append(Case("reduction", f"{op} axis={axis}", [node(op, ["x"], axis=axis)],
                            {"x": normal(rng, (2, 3, 5))}, gpu=axis == -1))
    for kernel, strides, pads, include in [((2, 2), (2, 2), [0, 0, 0, 0], 0), ((3, 3), (1, 1), [1, 1, 1, 1], 0),
                                           ((3, 3), (2, 2), [1, 0, 1, 1], 1), ((3,), (2,), [1, 1], 0)]:
        shape = (2, 3, 7, 6) if len(kernel) == 2 else (2, 3, 9)
        out.append(Case("pooling", f"AveragePool kernel={kernel} strides={strides} pads={pads} "
                        f"count_include_pad={include}",
                        [node("AveragePool", ["x"], kernel_shape=list(kernel), strides=list(strides), pads=pads,
                              count_include_pad=include)], {"x": normal(rng, shape)}, gpu=include == 1))
    for kernel, strides, pads, dil in [((2, 2), (2, 2), [0, 0, 0, 0], (1, 1)), ((3, 3), (1, 1), [1, 1, 1, 1], (1, 1)),
                                       ((3, 2), (2, 1), [1, 0, 0, 1], (1, 2))]:
        out.append(Case("pooling", f"MaxPool kernel={kernel} strides={strides} pads={pads} dilations={dil}",
                        [node("MaxPool", ["x"], kernel_shape=list(kernel), strides=list(strides), pads=pads,
                              dilations=list(dil))], {"x": normal(rng, (2, 2, 7, 6))}, gpu=dil == (1, 1)))
    out.append(Case("pooling", "MaxPool kernel=(3, 3) strides=(2, 2) ceil_mode=1",
                    [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
                    {"x": normal(rng, (1, 2, 6, 8))}))

    # Normalization.
    for shape, axis in [((3, 8), -1), ((2, 3, 4), 1)]:
        out.append(Case("normalization", f"LayerNormalization {shape} axis={axis}",
                        [node("LayerNormalization", ["x", "scale", "b"], axis=axis, epsilon=1e-5)],
                        {"x": normal(rng, shape)},
                        {"scale": normal(rng, shape[axis:]), "b": normal(rng, shape[axis:])}, gpu=axis == -1))
    out.append(Case("normalization", "BatchNormalization (inference) (2,3,4,4)",
                    [node("BatchNormalization", ["x", "s", "b", "mean", "var"], epsilon=1e-3)],
                    {"x": normal(rng, (2, 3, 4, 4))},
                    {"s": normal(rng, (3,)), "b": normal(rng, (3,)), "mean": normal(rng, (3,)),
                     "var": positive(rng, (3,))}))
    out.append(Case("normalization", "InstanceNormalization (2,3,5)",
                    [node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-5)],
                    {"x": normal(rng, (2, 3, 5))}, {"s": normal(rng, (3,)), "b": normal(rng, (3,))}))

    # Attention, as exporters write it (recomposed into nn.attention).
    for with_mask in [False, True]:
        nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), node("MatMul", ["q", "kt"], ["s0"]),
                 node("Div", ["s0", "scale"], ["s1"])]
        last = "s1"
        if with_mask:
            nodes.append(node("Add", ["s1", "mask"], ["s2"]))
            last = "s2"
        nodes += [node("Softmax", [last], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]
        for n_ in nodes:
            n_.name = f"attn_{n_.output[0]}"
        inputs = {"q": normal(rng, (2, 3, 4)), "k": normal(rng, (2, 5, 4)), "v": normal(rng, (2, 5, 3))}
        if with_mask:
            inputs["mask"] = normal(rng, (3, 5))
        out.append(Case("attention", f"attention mask={with_mask}", nodes, inputs,
                        {"scale": np.array(2.0, np.float32)}, gpu=with_mask, absorbed={"scale"}))

    # Data movement.
    x = normal(rng, (2, 3, 4))
    out.append(Case("data movement", "Reshape (2,3,4)->(6,4)", [node("Reshape", ["x", "shape"])], {"x": x},
                    {"shape": np.array([6, 4], np.int64)}))
    out.append(Case("data movement", "Transpose perm=[2,0,1]", [node("Transpose", ["x"], perm=[2, 0, 1])], {"x": x}))
    out.append(Case("data movement", "Squeeze then Unsqueeze", [
        node("Squeeze", ["x", "ax0"], ["t"]), node("Unsqueeze", ["t", "ax1"], ["y"])],
        {"x": normal(rng, (2, 1, 4))}, {"ax0": np.array([1], np.int64), "ax1": np.array([0, 3], np.int64)}))
    out.append(Case("data movement", "Expand (3,1)->(2,3,4)", [node("Expand", ["x", "shape"])],
                    {"x": normal(rng, (3, 1))}, {"shape": np.array([2, 3, 4], np.int64)}))
    out.append(Case("data movement", "Tile repeats=[2,1,3]", [node("Tile", ["x", "r"])],
                    {"x": normal(rng, (2, 3, 2))}, {"r": np.array([2, 1, 3], np.int64)}))
    out.append(Case("data movement", "Concat axis=1 (a used twice)", [node("Concat", ["a", "b", "a"], axis=1)],
                    {"a": normal(rng, (2, 3)), "b": normal(rng, (2, 2))}, gpu=True))
    for starts, ends, axes, steps in [([1, 0], [3, 4], [0, 2], [1, 2]), ([-1], [-5], [1], [-1]),
                                      ([0, 3], [2, 0], [0, 2], [1, -2])]:
        out.append(Case("data movement", f"Slice starts={starts} ends={ends} axes={axes} steps={steps}",
                        [node("Slice", ["x", "st", "en", "ax", "sp"])], {"x": normal(rng, (3, 4, 5))},
                        {"st": np.array(starts, np.int64), "en": np.array(ends, np.int64),
                         "ax": np.array(axes, np.int64), "sp": np.array(steps, np.int64)}))
    out.append(Case("data movement", "Split axis=1 [1,3] (both outputs)",
                    [node("Split", ["x", "sp"], ["y0", "y1"], axis=1)], {"x": normal(rng, (2, 4))},
                    {"sp": np.array([1, 3], np.int64)}, outputs=["y0", "y1"]))
    out.append(Case("data movement", "Split axis=0, second output unused",
                    [node("Split", ["x"], ["y0", "y1"], axis=0)], {"x": normal(rng, (4, 3))},
                    outputs=["y0"]))
    out.append(Case("data movement", "Pad constant [1,0,2, 0,2,1] value 0.5",
                    [node("Pad", ["x", "pads", "v"], mode="constant")], {"x": normal(rng, (2, 3, 2))},
                    {"pads": np.array([1, 0, 2, 0, 2, 1], np.int64), "v": np.array(0.5, np.float32)}))
    for axis, idx in [(0, np.array([[0, 2], [2, -1]], np.int64)), (1, np.array([3, 0, 3], np.int64))]:
        out.append(Case("data movement", f"Gather axis={axis} indices{idx.shape} (repeats, negative)",
                        [node("Gather", ["x", "i"], axis=axis)], {"x": normal(rng, (4, 5))}, {"i": idx},
                        gpu=axis == 0))
    for axis, shape, idx_shape in [(0, (4, 3), (5, 3)), (1, (2, 5), (2, 3))]:
        idx = rng.integers(-shape[axis], shape[axis], idx_shape).astype(np.int64)
        out.append(Case("data movement", f"GatherElements axis={axis} x{shape} indices{idx_shape}",
                        [node("GatherElements", ["x", "i"], axis=axis)], {"x": normal(rng, shape)}, {"i": idx},
                        gpu=axis == 1))
    for largest in [1, 0]:
        out.append(Case("data movement", f"TopK k=3 axis=1 largest={largest} (values)",
                        [node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
                        {"x": normal(rng, (2, 6))}, {"k": np.array([3], np.int64)}, outputs=["v"]))
    # Resize is linear in x whatever its mode: the rule multiplies by each axis's interpolation matrix.
    for mode, coord, scales, extra in [
            ("nearest", "asymmetric", [1, 1, 2, 2], {"nearest_mode": "floor"}),
            ("linear", "half_pixel", [1, 1, 0.6, 1.5], {}),
            ("cubic", "align_corners", [1, 1, 1.5, 1], {"exclude_outside": 1}),
            ("linear", "pytorch_half_pixel", [1, 1, 2, 3], {})]:
        out.append(Case("data movement", f"Resize {mode} {coord} scales={scales[2:]}",
                        [node("Resize", ["x", "", "s"], mode=mode, coordinate_transformation_mode=coord, **extra)],
                        {"x": normal(rng, (1, 2, 4, 5))}, {"s": np.array(scales, np.float32)},
                        gpu=mode == "linear" and coord == "half_pixel", absorbed=("s",)))
    # A value with several users and an input that reaches no output.
    out.append(Case("graph", "x used three times, z unused", [
        node("Mul", ["x", "x"], ["t"]), node("Tanh", ["x"], ["u"]), node("Add", ["t", "u"], ["y"])],
        {"x": normal(rng, (3, 4)), "z": normal(rng, (2,))}))
    return out


def build(case, path):
    inits = [numpy_helper.from_array(v, k) for k, v in case.inits.items()]
    onnx_type = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
                 np.dtype(np.bool_): TensorProto.BOOL}
    inputs = [helper.make_tensor_value_info(k, onnx_type[v.dtype], v.shape) for k, v in case.inputs.items()]
    graph = helper.make_graph(case.nodes, "g", inputs, [helper.make_tensor_value_info(o, 0, None)
                                                       for o in case.outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    outs = run_model(model, case.inputs)
    del model.graph.output[:]
    model.graph.output.extend(helper.make_tensor_value_info(o, TensorProto.FLOAT, outs[o].shape)
                              for o in case.outputs)
    onnx.save(model, path)
    return model, outs


def signature(nncc_run, so):
    """(argument names, result names) of forward_grad from nncc-run --info."""
    info = run([nncc_run, so, "--info"], "nncc-run --info")
    m = re.search(r"entry forward_grad: \((.*)\) -> \((.*)\),", info)
    if not m:
        raise RuntimeError(f"no forward_grad entry in {so}:\n{info}")
    names = lambda s: [part.strip().split(" ")[0] for part in s.split(", ") if part.strip()]  # noqa: E731
    return names(m.group(1)), names(m.group(2))


def finite_difference(model, values, cotangents, name, step):
    """d/d values[name] of sum(cotangent * output), central differences in float64."""
    base = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in values.items()}
    x = base[name]
    grad = np.zeros_like(x)
    model_inputs = {i.name for i in model.graph.input}

    def loss(v):
        feed = dict(base)
        feed[name] = v
        graph_inputs = {k: feed[k] for k in model_inputs}
        m = model
        # Initializers are replaced by the perturbed value through a copy of the model.
        if name not in model_inputs:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            for init in m.graph.initializer:
                if init.name == name:
                    init.CopyFrom(numpy_helper.from_array(v, name))
        outs = run_model(m, graph_inputs)
        return sum(float(np.sum(cotangents[o] * outs[o])) for o in cotangents)

    flat = x.reshape(-1)
    for i in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[i] += step
        minus[i] -= step
        grad.reshape(-1)[i] = (loss(plus.reshape(x.shape)) - loss(minus.reshape(x.shape))) / (2 * step)
    return grad


def fresh_folder(d):
    """`d` emptied of what an earlier run left (a kept --work-dir)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "in"))
    return d


def check(case, index, args, work, rng):
    d = fresh_folder(os.path.join(work, f"case{index:03d}"))
    with open(os.path.join(d, "case.txt"), "w") as f:
        f.write(f"{case.family}: {case.label}\n")
    model, outs = build(case, os.path.join(d, "model.onnx"))
    values = dict(case.inputs)
    values.update(case.inits)
    cotangents = {o: rng.standard_normal(outs[o].shape) for o in case.outputs}
    plans = [("cpu", ["--target=cpu"])] + ([("gpu-plan", ["--emulate-gpu"])] if case.gpu else [])
    lines, ok = [], True
    for plan, flags in plans:
        so = os.path.join(d, f"{plan}.so")
        log = run([args.nncc, os.path.join(d, "model.onnx"), "--gradients=.*", *flags, "-o", so], "nncc")
        if "warning" in log:
            return False, [f"{case.family}: {case.label} [{plan}]: FAIL nncc warned: {log.strip()}"]
        arg_names, result_names = signature(args.nncc_run, so)
        for k, name in enumerate(arg_names):
            value = cotangents[name[2:]].astype(np.float32) if name.startswith("d_") and name[2:] in cotangents \
                else values[name]
            with open(os.path.join(d, "in", f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
        out_dir = os.path.join(d, f"out-{plan}")
        os.makedirs(out_dir, exist_ok=True)
        run([args.nncc_run, so, "--entry", "forward_grad", "--input-dir", os.path.join(d, "in"),
             "--output-dir", out_dir], "nncc-run")
        want_names = [k for k, v in values.items() if v.dtype == np.float32 and k not in case.absorbed]
        if sorted(r[2:] for r in result_names) != sorted(want_names):
            return False, [f"{case.label} [{plan}]: FAIL gradients of {result_names}, expected d_ of {want_names}"]
        worst = (0.0, None)
        for k, rname in enumerate(result_names):
            got = read_tensor(os.path.join(out_dir, f"output_{k}.pb")).astype(np.float64)
            want = finite_difference(model, values, cotangents, rname[2:], case.step)
            excess = np.abs(got - want) - (ATOL + RTOL * np.abs(want))
            err = float(np.max(np.abs(got - want))) if got.size else 0.0
            # Written so that a NaN fails: NaN > 0 is false.
            if got.shape != want.shape or (got.size and not np.max(excess) <= 0):
                ok = False
                lines.append(f"{case.family}: {case.label} [{plan}]: FAIL {rname} of shape {got.shape} "
                             f"(expected {want.shape}): max |got - fd| = {err:.3g} "
                             f"(max |fd| {np.max(np.abs(want)):.3g})")
            worst = max(worst, (err, rname), key=lambda t: t[0])
        if ok:
            lines.append(f"{case.family}: {case.label} [{plan}]: ok ({len(result_names)} gradients, "
                         f"max |got - fd| {worst[0]:.2g})")
    return ok, lines


def model_loss(model, feed, cotangents):
    graph_inputs = {i.name for i in model.graph.input}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for init in m.graph.initializer:
        if init.name in feed:
            init.CopyFrom(numpy_helper.from_array(feed[init.name], init.name))
    outs = run_model(m, {k: v for k, v in feed.items() if k in graph_inputs})
    return sum(float(np.sum(cotangents[o] * outs[o])) for o in cotangents)


def check_model(name, args, work, rng):
    """forward_grad of an example model against directional and elementwise
    central differences of the float64 reference."""
    d = fresh_folder(os.path.join(work, f"model-{name}"))
    os.makedirs(os.path.join(d, "out"))
    model = onnx.load(os.path.join(work, "models", f"{name}.onnx"))
    inits = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer
             if i.data_type == TensorProto.FLOAT}
    inputs = {}
    for i in model.graph.input:
        if i.name not in inits:
            shape = [dim.dim_value for dim in i.type.tensor_type.shape.dim]
            inputs[i.name] = rng.standard_normal(shape).astype(np.float32)
    base = {k: v.astype(np.float64) for k, v in inputs.items()}
    outs = run_model(model, base)
    cotangents = {o: rng.standard_normal(v.shape) for o, v in outs.items()}
    so = os.path.join(d, "model.so")
    run([args.nncc, os.path.join(work, "models", f"{name}.onnx"), "--gradients=.*", "--target=cpu", "-o", so],
        "nncc")
    arg_names, result_names = signature(args.nncc_run, so)
    # Constants simplification made from several initializers (BatchNorm
    # folded into a Conv, fused Q/K/V weights) are named after nodes, and the
    # test has no value to feed them: such models are compiled again with
    # --gradients naming the initializers, so those stay constants.
    lines, ok = [], True
    if any(n not in inputs and n not in inits and not n.startswith("d_") for n in arg_names):
        so = os.path.join(d, "model-named.so")
        pattern = "|".join(re.escape(k) for k in inits)
        run([args.nncc, os.path.join(work, "models", f"{name}.onnx"), f"--gradients={pattern}", "--target=cpu",
             "-o", so], "nncc")
        arg_names, result_names = signature(args.nncc_run, so)
    for k, n in enumerate(arg_names):
        value = cotangents[n[2:]] if n.startswith("d_") else inputs.get(n, inits.get(n))
        with open(os.path.join(d, "in", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value.astype(np.float32), n).SerializeToString())
    run([args.nncc_run, so, "--entry", "forward_grad", "--input-dir", os.path.join(d, "in"),
         "--output-dir", os.path.join(d, "out")], "nncc-run")
    feed = dict(base)
    feed.update(inits)
    h = 1e-4
    for k, rname in enumerate(result_names):
        t = rname[2:]
        got = read_tensor(os.path.join(d, "out", f"output_{k}.pb")).astype(np.float64)
        v = rng.standard_normal(got.shape)
        plus, minus = dict(feed), dict(feed)
        plus[t], minus[t] = feed[t] + h * v, feed[t] - h * v
        fd = (model_loss(model, plus, cotangents) - model_loss(model, minus, cotangents)) / (2 * h)
        directional = float(np.sum(got * v))
        bound = 1e-4 + 1e-3 * float(np.linalg.norm(got))
        worst = 0.0
        for i in rng.choice(got.size, size=min(12, got.size), replace=False):
            e = np.zeros(got.size)
            e[i] = 1e-6
            plus[t], minus[t] = feed[t] + e.reshape(got.shape), feed[t] - e.reshape(got.shape)
            want = (model_loss(model, plus, cotangents) - model_loss(model, minus, cotangents)) / 2e-6
            # np.max keeps a NaN (max() would drop it), and the test below fails it.
            worst = float(np.max([worst, abs(got.reshape(-1)[i] - want) - (ATOL + RTOL * abs(want))]))
        if not abs(directional - fd) <= bound or not worst <= 0:
            ok = False
            lines.append(f"models: {name} {rname}: FAIL <g, v> = {directional:.6g}, differences {fd:.6g} "
                         f"(bound {bound:.3g}); elementwise excess {worst:.3g}")
    if ok:
        lines.append(f"models: {name}: ok ({len(result_names)} gradients: {', '.join(result_names)})")
    return ok, lines


PRECISION_BOUNDS = {"bf16": 1e-1, "mixed": 1e-1, "fp16": 5e-3}


def check_precision(name, args, work, rng):
    """forward_grad in each low precision against the fp32 plan's."""
    d = fresh_folder(os.path.join(work, f"precision-{name}"))
    model = os.path.join(work, "models", f"{name}.onnx")
    grads, lines, ok = {}, [], True
    for precision in ["fp32", *PRECISION_BOUNDS]:
        so = os.path.join(d, f"{precision}.so")
        run([args.nncc, model, "--gradients", f"--precision={precision}", "--target=cpu", "-o", so], "nncc")
        arg_names, result_names = signature(args.nncc_run, so)
        if precision == "fp32":
            info = run([args.nncc_run, so, "--info"], "nncc-run --info")
            shapes = re.search(r"entry forward_grad: \((.*)\) ->", info).group(1).split(", ")
            for k, arg in enumerate(shapes):
                shape = [int(s) for s in re.search(r"\[(.*)\]", arg).group(1).split(",")]
                with open(os.path.join(d, "in", f"input_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32)).SerializeToString())
        out = os.path.join(d, f"out-{precision}")
        os.makedirs(out)
        run([args.nncc_run, so, "--entry", "forward_grad", "--input-dir", os.path.join(d, "in"), "--output-dir", out],
            "nncc-run")
        grads[precision] = [read_tensor(os.path.join(out, f"output_{k}.pb")).astype(np.float64)
                            for k in range(len(result_names))]
    errors = []
    for precision, bound in PRECISION_BOUNDS.items():
        worst = float(np.max([np.linalg.norm(low - ref) / max(np.linalg.norm(ref), 1e-30)
                              for low, ref in zip(grads[precision], grads["fp32"])]))
        errors.append(f"{precision} {worst:.2g}")
        ok &= bool(worst <= bound)
    lines.append(f"precision: {name} forward_grad relative error vs fp32: {', '.join(errors)}: "
                 f"{'ok' if ok else 'FAIL'}")
    return ok, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--filter", default="", help="run the cases whose label matches this regex")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-gradients-")
    rng = np.random.default_rng(2026)
    families, failures = {}, 0
    for index, case in enumerate(cases(rng)):
        if args.filter and not re.search(args.filter, case.label):
            continue
        try:
            ok, lines = check(case, index, args, work, np.random.default_rng(index))
        except Exception as e:  # noqa: BLE001 - report and go on with the next case
            ok, lines = False, [f"{case.family}: {case.label}: FAIL {e}"]
        for line in lines:
            print(line, flush=True)
        passed, total = families.get(case.family, (0, 0))
        families[case.family] = (passed + ok, total + 1)
        failures += not ok
    if not args.filter or re.search(args.filter, "models"):
        os.makedirs(os.path.join(work, "models"), exist_ok=True)
        run([sys.executable, MAKE_MODELS, os.path.join(work, "models"), "--batch", "2"], "make_models.py")
        for index, name in enumerate(["mlp", "cnn", "transformer"]):
            try:
                ok, lines = check_model(name, args, work, np.random.default_rng(1000 + index))
            except Exception as e:  # noqa: BLE001 - report and go on with the next model
                ok, lines = False, [f"models: {name}: FAIL {e}"]
            for line in lines:
                print(line, flush=True)
            passed, total = families.get("models", (0, 0))
            families["models"] = (passed + ok, total + 1)
            failures += not ok
        for index, name in enumerate(["mlp", "transformer"]):
            try:
                ok, lines = check_precision(name, args, work, np.random.default_rng(2000 + index))
            except Exception as e:  # noqa: BLE001 - report and go on with the next model
                ok, lines = False, [f"precision: {name}: FAIL {e}"]
            for line in lines:
                print(line, flush=True)
            passed, total = families.get("precision", (0, 0))
            families["precision"] = (passed + ok, total + 1)
            failures += not ok
    for family, (passed, total) in families.items():
        print(f"{family}: {passed}/{total} passed")
    if tmp:
        tmp.cleanup()
    if not families:
        print("FAIL no case ran")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
