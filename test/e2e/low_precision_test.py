#!/usr/bin/python3
"""ONNX models with FLOAT16 and BFLOAT16 tensors on the CPU target.

    /usr/bin/python3 test/e2e/low_precision_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

Builds small models whose inputs, initializers and outputs are f16 or bf16
(Cast, MatMul/Add/Relu/Softmax, Conv/GlobalAveragePool/Gemm and ConvTranspose in f16,
LayerNormalization with an Erf-GELU), compiles and runs them with nncc/nncc-run, and compares with
a numpy emulation of the documented numerics (docs/precision.md): each op
computes exactly (float64) on the low-precision values and rounds its result
to nearest even. Casts must match bit for bit; op results may differ by one
unit in the last place where f32 accumulation order moves a value across a
rounding boundary. Exit status 1 on any mismatch.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from e2e_util import read_tensor_proto, run, run_checks, work_folder

F16, BF16 = TensorProto.FLOAT16, TensorProto.BFLOAT16


def bf16_round(x):
    """float -> bf16 bits (uint16), round to nearest even (NaN stays NaN)."""
    x = np.atleast_1d(np.asarray(x, dtype=np.float32))
    bits = x.view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> sixteen) & np.uint64(1))) >> sixteen
    return np.where(np.isnan(x), (bits >> sixteen) | np.uint64(0x40), rounded).astype(np.uint16)


def bf16_value(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_to(x, dtype):
    """x rounded to the low type, as float64 values."""
    if dtype == F16:
        return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)
    # f64 -> f32 -> bf16 double-rounds only on exact f32 ties, which f64 results of
    # these small models do not produce.
    return bf16_value(bf16_round(np.asarray(x, dtype=np.float64).astype(np.float32))).astype(np.float64)


def tensor(name, values, dtype):
    """A TensorProto holding `values` rounded to `dtype` (raw little-endian bits)."""
    values = np.asarray(values)
    if dtype == F16:
        bits = values.astype(np.float16).view(np.uint16)
    elif dtype == BF16:
        bits = bf16_round(values.astype(np.float32))
    else:
        return numpy_helper.from_array(values.astype(np.float32), name)
    t = TensorProto(name=name, data_type=dtype, dims=list(values.shape))
    t.raw_data = bits.astype("<u2").reshape(-1).tobytes()
    return t


def bits_of(t):
    """The raw 16-bit patterns of a low-precision TensorProto."""
    if t.raw_data:
        return np.frombuffer(t.raw_data, dtype="<u2").reshape(tuple(t.dims))
    return np.asarray(t.int32_data, dtype=np.uint16).reshape(tuple(t.dims))


def make_model(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def compile_and_run(args, work, name, model, feeds):
    case = os.path.join(work, name)
    in_dir, out_dir = os.path.join(case, "inputs"), os.path.join(case, "outputs")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(case, "model.onnx")
    onnx.save(model, path)
    for k, t in enumerate(feeds):
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    so = os.path.join(case, "model.so")
    run([args.nncc, path, "-o", so, "--target=cpu", f"--cpu={args.cpu}"], "nncc")
    run([args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")
    return [read_tensor_proto(os.path.join(out_dir, f"output_{k}.pb")) for k in range(len(model.graph.output))]


def ulp_diff(got_bits, want, dtype):
    """Largest distance in units in the last place between outputs and the emulation."""
    want_bits = (want.astype(np.float16).view(np.uint16) if dtype == F16
                 else bf16_round(want.astype(np.float32)))

    def ordered(b):  # sign-magnitude bits -> a monotonic integer line
        b = b.astype(np.int64)
        return np.where(b & 0x8000, -(b & 0x7FFF), b)
    return int(np.max(np.abs(ordered(got_bits) - ordered(want_bits))))


def test_casts(args, work, rng):
    """Cast f32 -> f16/bf16 rounds to nearest even (ties included), back is exact."""
    ties = np.array([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, 65520.0, -65519.0,
                     2**-25, 1e-8, 0.0, -0.0, np.inf, -np.inf], dtype=np.float32)
    x = np.concatenate([ties, rng.standard_normal(52).astype(np.float32) * 100])
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=F16),
             helper.make_node("Cast", ["x"], ["b"], to=BF16),
             helper.make_node("Cast", ["h"], ["hf"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT)]
    vi = lambda n, t: helper.make_tensor_value_info(n, t, [x.size])  # noqa: E731
    model = make_model("casts", nodes, [vi("x", TensorProto.FLOAT)],
                       [vi("h", F16), vi("b", BF16), vi("hf", TensorProto.FLOAT),
                        vi("bf", TensorProto.FLOAT)], [])
    h, b, hf, bf = compile_and_run(args, work, "casts", model, [tensor("x", x, TensorProto.FLOAT)])
    with np.errstate(over="ignore"):
        want_h, want_b = x.astype(np.float16).view(np.uint16), bf16_round(x)
    bad = int(np.sum(bits_of(h) != want_h)) + int(np.sum(bits_of(b) != want_b))
    back = numpy_helper.to_array(hf), numpy_helper.to_array(bf)
    with np.errstate(over="ignore"):  # 65520 rounds to infinity in f16
        bad += int(np.sum(back[0] != x.astype(np.float16).astype(np.float32)))
    bad += int(np.sum(back[1] != bf16_value(want_b)))
    return bad == 0, f"casts f32 <-> f16/bf16 ({x.size} values, ties): {bad} bit mismatches"


def test_mlp(args, work, rng, dtype):
    """MatMul/Add/Relu/MatMul/Softmax with low-precision inputs and weights."""
    x = round_to(rng.standard_normal((4, 32)), dtype)
    w1 = round_to(rng.standard_normal((32, 64)) / 6, dtype)
    b1 = round_to(rng.standard_normal(64) / 10, dtype)
    w2 = round_to(rng.standard_normal((64, 16)) / 8, dtype)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
             helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r1"]),
             helper.make_node("MatMul", ["r1", "w2"], ["m2"]),
             helper.make_node("Softmax", ["m2"], ["y"], axis=1)]
    model = make_model("mlp", nodes, [helper.make_tensor_value_info("x", dtype, [4, 32])],
                       [helper.make_tensor_value_info("y", dtype, [4, 16])],
                       [tensor("w1", w1, dtype), tensor("b1", b1, dtype), tensor("w2", w2, dtype)])
    m1 = round_to(x @ w1, dtype)
    r1 = np.maximum(round_to(m1 + b1, dtype), 0)
    m2 = round_to(r1 @ w2, dtype)
    e = np.exp(m2 - m2.max(axis=1, keepdims=True))
    want = round_to(e / e.sum(axis=1, keepdims=True), dtype)
    (y,) = compile_and_run(args, work, f"mlp_{dtype}", model, [tensor("x", x, dtype)])
    ulps = ulp_diff(bits_of(y), want, dtype)
    return ulps <= 1, f"mlp {'f16' if dtype == F16 else 'bf16'}: max {ulps} ulp from the emulation"


def test_cnn(args, work, rng, dtype):
    """Conv(+bias)/Relu/GlobalAveragePool/Flatten/Gemm in f16 (ONNX's Conv has
    no bfloat16)."""
    x = round_to(rng.standard_normal((2, 3, 8, 8)), dtype)
    w = round_to(rng.standard_normal((4, 3, 3, 3)) / 5, dtype)
    b = round_to(rng.standard_normal(4) / 10, dtype)
    g = round_to(rng.standard_normal((4, 5)), dtype)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "g"], ["y"])]
    model = make_model("cnn", nodes, [helper.make_tensor_value_info("x", dtype, [2, 3, 8, 8])],
                       [helper.make_tensor_value_info("y", dtype, [2, 5])],
                       [tensor("w", w, dtype), tensor("b", b, dtype), tensor("g", g, dtype)])
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((2, 4, 8, 8))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
    # The GEMM rounds the convolution, the bias add rounds again (the GEMM
    # epilogue's bias is per column; a convolution's is per row).
    c = round_to(round_to(conv, dtype) + b[None, :, None, None], dtype)
    p = round_to(np.maximum(c, 0).mean(axis=(2, 3)), dtype)
    want = round_to(p @ g, dtype)
    (y,) = compile_and_run(args, work, f"cnn_{dtype}", model, [tensor("x", x, dtype)])
    ulps = ulp_diff(bits_of(y), want, dtype)
    return ulps <= 1, f"cnn {'f16' if dtype == F16 else 'bf16'}: max {ulps} ulp from the emulation"


def test_conv_transpose(args, work, rng, dtype):
    """ConvTranspose(+bias) 3x3 stride 2 in f16: one GEMM accumulating in f32,
    then col2im sums the taps and the bias in f32 and rounds once."""
    x = round_to(rng.standard_normal((2, 4, 5, 5)), dtype)
    w = round_to(rng.standard_normal((4, 3, 3, 3)) / 4, dtype)
    b = round_to(rng.standard_normal(3) / 10, dtype)
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1],
                              output_padding=[1, 1])]
    model = make_model("conv_transpose", nodes, [helper.make_tensor_value_info("x", dtype, [2, 4, 5, 5])],
                       [helper.make_tensor_value_info("y", dtype, [2, 3, 10, 10])],
                       [tensor("w", w, dtype), tensor("b", b, dtype)])
    full = np.zeros((2, 3, 12, 12))  # before cropping pads (1 each side) and adding output_padding
    for i in range(3):
        for j in range(3):
            full[:, :, i:i + 9:2, j:j + 9:2] += np.einsum("nchw,cm->nmhw", x, w[:, :, i, j])
    want = round_to(full[:, :, 1:11, 1:11] + b[None, :, None, None], dtype)
    (y,) = compile_and_run(args, work, f"conv_transpose_{dtype}", model, [tensor("x", x, dtype)])
    ulps = ulp_diff(bits_of(y), want, dtype)
    return ulps <= 1, f"conv transpose {'f16' if dtype == F16 else 'bf16'}: max {ulps} ulp from the emulation"


def test_layer_norm_gelu(args, work, rng, dtype):
    """LayerNormalization then an Erf-GELU chain: every op rounds its result."""
    x = round_to(rng.standard_normal((4, 16)) * 2 + 1, dtype)
    s = round_to(rng.standard_normal(16), dtype)
    bias = round_to(rng.standard_normal(16) / 4, dtype)
    consts = {"rs2": round_to(1 / math.sqrt(2), dtype), "one": 1.0, "half": 0.5}
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "bias"], ["n"], axis=-1, epsilon=1e-5),
             helper.make_node("Mul", ["n", "rs2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]),
             helper.make_node("Mul", ["n", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    inits = [tensor("s", s, dtype), tensor("bias", bias, dtype)] + [
        tensor(k, np.array(v), dtype) for k, v in consts.items()]
    model = make_model("ln_gelu", nodes, [helper.make_tensor_value_info("x", dtype, [4, 16])],
                       [helper.make_tensor_value_info("y", dtype, [4, 16])], inits)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    n = round_to((x - mean) / np.sqrt(var + 1e-5) * s + bias, dtype)
    d = round_to(n * consts["rs2"], dtype)
    e = round_to(np.vectorize(math.erf)(d), dtype)
    a = round_to(e + 1, dtype)
    m = round_to(n * a, dtype)
    want = round_to(m * 0.5, dtype)
    (y,) = compile_and_run(args, work, f"ln_gelu_{dtype}", model, [tensor("x", x, dtype)])
    ulps = ulp_diff(bits_of(y), want, dtype)
    return ulps <= 1, f"layer norm + gelu {'f16' if dtype == F16 else 'bf16'}: max {ulps} ulp from the emulation"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", default="x86-64-v3",
                        help="nncc --cpu: a level below the machine's shows modules that only "
                             "load where they were built")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-low-precision-")
    rng = np.random.default_rng(args.seed)
    tests = [("casts", lambda: test_casts(args, work, rng))]
    for fn, dtype in [(test_mlp, F16), (test_cnn, F16), (test_conv_transpose, F16), (test_layer_norm_gelu, F16),
                      (test_mlp, BF16), (test_layer_norm_gelu, BF16)]:
        tests.append((f"{fn.__name__} {'f16' if dtype == F16 else 'bf16'}",
                      lambda fn=fn, dtype=dtype: fn(args, work, rng, dtype)))

    def verdict(test):
        ok, line = test()
        return ok, f"{'ok  ' if ok else 'FAIL'} {line}"
    return run_checks([(label, lambda t=t: verdict(t)) for label, t in tests], tmp)


if __name__ == "__main__":
    sys.exit(main())
