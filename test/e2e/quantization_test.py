#!/usr/bin/python3
"""Quantized models on the CPU plan (--target=cpu) and the GPU plan (--emulate-gpu).

    /usr/bin/python3 test/e2e/quantization_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

- QDQ models as quantization tools export them (QuantizeLinear ->
  DequantizeLinear around a Conv and a MatMul, int8 weights dequantized per
  output channel, the result quantized and dequantized again) against a
  float64 numpy reference of the same graph. Quantized values must match
  exactly, except by one step where the reference's value before rounding
  lies within 1e-3 of a tie (f32 accumulation may round it either way).
- MatMulInteger and ConvInteger with reductions of 1024 and 576 products of
  8-bit values, against numpy's int64 arithmetic, bit for bit: the sums
  pass 2^24, where an f32 accumulation would no longer be exact (the same
  products summed in f32 differ from the exact sums here).
- QLinearMatMul and QLinearConv (per-channel weight scales and zero points,
  an int32 bias) against the ONNX reference formula in numpy.
Exit status 1 on any mismatch.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from e2e_util import PLANS, compile_and_run, run_checks, work_folder



def make_model(name, nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model



def quantize(x, scale, zero_point, lo, hi):
    """ONNX QuantizeLinear in float64: saturate(round_half_even(x / scale) + zp)."""
    return np.clip(np.rint(x / scale) + zero_point, lo, hi), x / scale


def compare_quantized(got, want_q, unrounded, scale, zero_point):
    """got: the dequantized model output; want_q: the reference's quantized
    values; unrounded: the reference's value / scale before rounding. Exact,
    or one step off where the reference sits within 1e-3 of a tie."""
    got_q = np.rint(got.astype(np.float64) / scale) + zero_point
    diff = np.abs(got_q - want_q)
    near_tie = np.abs(np.abs(unrounded - np.floor(unrounded)) - 0.5) < 1e-3
    bad = ~(diff <= 1) | ((diff == 1) & ~near_tie)  # ~(<=), not >, so that a NaN is bad
    return not bad.any(), f"{int((diff == 0).sum())}/{diff.size} exact, {int((diff == 1).sum())} one step off at ties"


def conv2d(x, w, pads, group=1):
    """NCHW convolution, stride 1, in the inputs' dtype (float64 or int64)."""
    n, c, h, width = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads, pads), (pads, pads)))
    oh, ow = h + 2 * pads - kh + 1, width + 2 * pads - kw + 1
    y = np.zeros((n, m, oh, ow), dtype=np.result_type(x, w))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i:i + oh, j:j + ow]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, i, j])
    return y


def qdq_conv(args, work, rng, plan):
    """x -Q/DQ-> Conv(DQ(int8 w, per-channel scales), bias) -Q/DQ-> y."""
    x = rng.standard_normal((2, 8, 9, 9)).astype(np.float32)
    wq = rng.integers(-127, 128, (16, 8, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 2.0, 16) / 127).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    xs, xz, ys, yz = np.float32(4.0 / 255), np.uint8(128), np.float32(0.05), np.uint8(120)
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(16, np.int8), "wz"), numpy_helper.from_array(bias, "b"),
             numpy_helper.from_array(np.array(xs), "xs"), numpy_helper.from_array(np.array(xz), "xz"),
             numpy_helper.from_array(np.array(ys), "ys"), numpy_helper.from_array(np.array(yz), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    model = make_model("qdq_conv", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 16, 9, 9))], inits)
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"qdq_conv-{plan}"), model, [("x", x)], plan)
    # The activations' quantization is exact elementwise f32 arithmetic: the
    # reference takes it in f32 like the model, the convolution in float64.
    xq = np.clip(np.rint(x / xs) + xz, 0, 255)
    xd = ((xq - xz) * xs).astype(np.float64)
    wd = (wq.astype(np.float64) * ws.astype(np.float64)[:, None, None, None]).astype(np.float32).astype(np.float64)
    c = conv2d(xd, wd, 1) + bias[None, :, None, None]
    want, unrounded = quantize(c, np.float64(ys), yz, 0, 255)
    return compare_quantized(y, want, unrounded, np.float64(ys), yz)


def qdq_matmul(args, work, rng, plan):
    """x -Q/DQ-> MatMul(DQ(int8 w, per-column scales)) -Q/DQ-> y (int8 activations)."""
    x = rng.standard_normal((5, 64)).astype(np.float32)
    wq = rng.integers(-127, 128, (64, 24)).astype(np.int8)
    ws = (rng.uniform(0.5, 2.0, 24) / 127).astype(np.float32)
    xs, xz, ys, yz = np.float32(3.0 / 127), np.int8(0), np.float32(0.1), np.int8(-3)
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.array(xs), "xs"), numpy_helper.from_array(np.array(xz), "xz"),
             numpy_helper.from_array(np.array(ys), "ys"), numpy_helper.from_array(np.array(yz), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws"], ["wd"], axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["c"]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    model = make_model("qdq_matmul", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, (5, 24))], inits)
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"qdq_matmul-{plan}"), model, [("x", x)], plan)
    xq = np.clip(np.rint(x / xs) + xz, -128, 127)
    xd = ((xq - xz) * xs).astype(np.float64)
    wd = (wq.astype(np.float64) * ws.astype(np.float64)[None, :]).astype(np.float32).astype(np.float64)
    want, unrounded = quantize(xd @ wd, np.float64(ys), yz, -128, 127)
    return compare_quantized(y, want, unrounded, np.float64(ys), yz)


def matmul_integer(args, work, rng, plan):
    """MatMulInteger, K = 1024 products of uint8 values in [200, 255]: sums
    near 5e7 > 2^24, where f32 holds only every fourth integer."""
    a = rng.integers(200, 256, (3, 1024)).astype(np.uint8)
    b = rng.integers(200, 256, (1024, 4)).astype(np.uint8)
    model = make_model("matmul_integer", [helper.make_node("MatMulInteger", ["a", "b"], ["y"])],
                       [helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape),
                        helper.make_tensor_value_info("b", TensorProto.UINT8, b.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.INT32, (3, 4))], [], opset=10)
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"matmul_integer-{plan}"), model, [("a", a), ("b", b)], plan)
    want = a.astype(np.int64) @ b.astype(np.int64)
    ok = y.dtype == np.int32 and np.array_equal(y.astype(np.int64), want)
    return ok, f"max {want.max()} (2^24 = {2 ** 24}), {int((y == want).sum())}/{want.size} exact"


def conv_integer(args, work, rng, plan):
    """ConvInteger, 64 channels x 3x3 (576 products per output, sums near
    2.8e7 > 2^24), per-channel weight zero points, padded: the padding
    reads the input's zero point."""
    x = rng.integers(200, 256, (1, 64, 6, 6)).astype(np.uint8)
    w = rng.integers(200, 256, (8, 64, 3, 3)).astype(np.uint8)
    xz = np.uint8(3)
    wz = rng.integers(0, 10, 8).astype(np.uint8)
    model = make_model("conv_integer", [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])],
                       [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape),
                        helper.make_tensor_value_info("w", TensorProto.UINT8, w.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.INT32, (1, 8, 6, 6))],
                       [numpy_helper.from_array(np.array(xz), "xz"), numpy_helper.from_array(wz, "wz")], opset=10)
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"conv_integer-{plan}"), model, [("x", x), ("w", w)], plan)
    want = conv2d(x.astype(np.int64) - int(xz), w.astype(np.int64) - wz.astype(np.int64)[:, None, None, None], 1)
    ok = y.dtype == np.int32 and np.array_equal(y.astype(np.int64), want)
    return ok, f"max |y| {np.abs(want).max()} (2^24 = {2 ** 24}), {int((y == want).sum())}/{want.size} exact"


def qlinear(args, work, rng, plan):
    """QLinearMatMul (per-tensor) and QLinearConv (per-channel weights, int8
    weights, int32 bias, a group of 2) against ONNX's reference formula."""
    a = rng.integers(0, 256, (2, 3, 40)).astype(np.uint8)
    b = rng.integers(0, 256, (40, 7)).astype(np.uint8)
    x = rng.integers(0, 256, (1, 4, 5, 5)).astype(np.uint8)
    w = rng.integers(-128, 128, (6, 2, 3, 3)).astype(np.int8)
    bias = rng.integers(-2000, 2000, 6).astype(np.int32)
    f = np.float32
    sa, za, sb, zb, sy, zy = f(0.02), np.uint8(120), f(0.01), np.uint8(130), f(0.7), np.uint8(100)
    sx, zx, sw, zw, so, zo = f(0.03), np.uint8(128), rng.uniform(0.005, 0.02, 6).astype(f), np.zeros(6, np.int8), f(0.4), np.int8(5)
    inits = [numpy_helper.from_array(np.array(v), n) for v, n in
             [(sa, "sa"), (za, "za"), (sb, "sb"), (zb, "zb"), (sy, "sy"), (zy, "zy"),
              (sx, "sx"), (zx, "zx"), (sw, "sw"), (zw, "zw"), (so, "so"), (zo, "zo"), (bias, "bias")]]
    nodes = [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"]),
             helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "so", "zo", "bias"], ["z"],
                              pads=[1, 1, 1, 1], group=2)]
    model = make_model("qlinear", nodes,
                       [helper.make_tensor_value_info(n, TensorProto.UINT8, v.shape) for n, v in [("a", a), ("b", b), ("x", x)]] +
                       [helper.make_tensor_value_info("w", TensorProto.INT8, w.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.UINT8, (2, 3, 7)),
                        helper.make_tensor_value_info("z", TensorProto.INT8, (1, 6, 5, 5))], inits, opset=10)
    y, z = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"qlinear-{plan}"), model, [("a", a), ("b", b), ("x", x), ("w", w)], plan)
    acc = (a.astype(np.int64) - int(za)) @ (b.astype(np.int64) - int(zb))
    want_y = np.clip(np.rint(acc * np.float64(f(sa * sb) / sy)) + int(zy), 0, 255)
    acc = conv2d(x.astype(np.int64) - int(zx), w.astype(np.int64), 1, group=2) + bias[None, :, None, None]
    ratio = ((sx * sw) / so).astype(f).astype(np.float64)
    want_z = np.clip(np.rint(acc * ratio[None, :, None, None]) + int(zo), -128, 127)
    ok = np.array_equal(y, want_y) and np.array_equal(z, want_z)
    return ok, (f"QLinearMatMul {int((y == want_y).sum())}/{y.size} exact, "
                f"QLinearConv {int((z == want_z).sum())}/{z.size} exact")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-quant-")
    checks = []
    for test in (qdq_conv, qdq_matmul, matmul_integer, conv_integer, qlinear):
        for plan in PLANS:
            def check(test=test, plan=plan):
                ok, line = test(args, work, np.random.default_rng(args.seed), plan)
                return ok, f"{test.__name__} [{plan}]: {'ok' if ok else 'FAIL'} {line}"
            checks.append((f"{test.__name__} [{plan}]", check))
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
