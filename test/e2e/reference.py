#!/usr/bin/python3
"""A small numpy reference interpreter for ONNX graphs (float64 arithmetic).

Written from the ONNX operator specification, independently of nncc, to check
the numbers nncc's compiled modules produce. It covers the ops of the example
models (examples/models/make_models.py) and those the gradient test
(gradients_test.py) differentiates:

    MatMul Add Sub Mul Div Relu Erf Softmax LayerNormalization Conv
    BatchNormalization (inference) MaxPool GlobalAveragePool Flatten Gemm
    Reshape Transpose Constant
    Pow Min Max Neg Abs Exp Log Sqrt Reciprocal Tanh Sigmoid LeakyRelu Elu
    Selu Softplus HardSigmoid HardSwish Clip PRelu Where Cast Greater
    ReduceSum ReduceMean ReduceMax ReduceMin LogSoftmax Squeeze Unsqueeze
    Expand Concat Slice Split Pad (constant) Gather AveragePool
    InstanceNormalization ConvTranspose CumSum Tile ReduceL2 Floor Ceil GatherElements
    TopK ReduceProd Einsum Resize (through ONNX's own reference interpolation)

Floating-point tensors (inputs, initializers, constants) are widened to
float64 and every op computes in float64, so the result is a reference to
compare float32 outputs against, not a bit-exact float32 emulation.

    from reference import run_model
    outputs = run_model(onnx.load("mlp.onnx"), {"x": x})   # {name: float64 array}

    /usr/bin/python3 reference.py --self-test /usr/share/libonnx-testdata/data/node ...
        checks this interpreter against the ONNX backend tests (in each folder
        given) whose ops it covers.

Uses Debian's python3-onnx 1.12 and numpy (run with /usr/bin/python3).
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


class UnsupportedError(Exception):
    pass


def _widen(a):
    a = np.asarray(a)
    return a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _decode(v):
    return v.decode() if isinstance(v, bytes) else v


# --- elementwise -------------------------------------------------------------

def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


# --- normalization -----------------------------------------------------------

def _softmax(x, axis, opset):
    if opset < 13:
        # Opsets 1-12: the input is coerced to 2-D at `axis`, softmax over the
        # flattened trailing block.
        axis = axis if axis >= 0 else axis + x.ndim
        shape = x.shape
        x2 = x.reshape(int(np.prod(shape[:axis], dtype=np.int64)), -1)
        return _softmax(x2, 1, 13).reshape(shape)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _layer_norm(x, scale, bias, axis, epsilon):
    axis = axis if axis >= 0 else axis + x.ndim
    axes = tuple(range(axis, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(var + epsilon)
    y = (x - mean) * inv_std
    y = y * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv_std


def _batch_norm(x, scale, bias, mean, var, epsilon):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
            * scale.reshape(shape) + bias.reshape(shape))


# --- windows (Conv, MaxPool) ---------------------------------------------------

def _pads(attrs, in_spatial, kernel, strides, dilations):
    """Begin/end padding per spatial axis from pads or auto_pad."""
    n = len(in_spatial)
    auto_pad = _decode(attrs.get("auto_pad", "NOTSET"))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(n):
            out = -(-in_spatial[i] // strides[i])
            total = max((out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - in_spatial[i], 0)
            small, big = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else big)
            end.append(big if auto_pad == "SAME_UPPER" else small)
        return begin, end
    if auto_pad == "VALID":
        return [0] * n, [0] * n
    if auto_pad != "NOTSET":
        raise UnsupportedError(f"auto_pad={auto_pad}")
    pads = list(attrs.get("pads", [0] * (2 * n)))
    return pads[:n], pads[n:]


def _windows(x, kernel, strides, dilations, begin, end, fill, ceil_mode=False):
    """x: [N, C, *spatial] -> [N, C, *out_spatial, *kernel] (a strided view)."""
    n = len(kernel)
    spatial = x.shape[2:]
    out, extra = [], []
    for i in range(n):
        span = dilations[i] * (kernel[i] - 1) + 1
        room = spatial[i] + begin[i] + end[i] - span
        o = (-(-room // strides[i]) if ceil_mode else room // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= spatial[i] + begin[i]:
            o -= 1  # the last window would start in the end padding only
        out.append(o)
        extra.append(max((o - 1) * strides[i] + span - (spatial[i] + begin[i] + end[i]), 0))
    width = [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(n)]
    xp = np.pad(x, width, mode="constant", constant_values=fill)
    spans = tuple(dilations[i] * (kernel[i] - 1) + 1 for i in range(n))
    view = np.lib.stride_tricks.sliding_window_view(xp, spans, axis=tuple(range(2, 2 + n)))
    index = (slice(None), slice(None))
    index += tuple(slice(0, out[i] * strides[i], strides[i]) for i in range(n))
    index += tuple(slice(None, None, dilations[i]) for i in range(n))
    view = view[index]
    assert view.shape[2:2 + n] == tuple(out), (view.shape, out)
    return view


def _conv(x, w, b, attrs):
    n = x.ndim - 2
    kernel = list(attrs.get("kernel_shape", w.shape[2:]))
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    group = attrs.get("group", 1)
    begin, end = _pads(attrs, x.shape[2:], kernel, strides, dilations)
    cols = _windows(x, kernel, strides, dilations, begin, end, 0.0)  # [N, C, *out, *k]
    batch, cin = x.shape[:2]
    cout = w.shape[0]
    if cin % group or cout % group or w.shape[1] != cin // group:
        raise UnsupportedError(f"Conv: C={cin}, M={cout}, W={w.shape}, group={group}")
    out_spatial = cols.shape[2:2 + n]
    cg, mg = cin // group, cout // group
    ys = []
    for g in range(group):
        c = cols[:, g * cg:(g + 1) * cg]                                # [N, cg, *out, *k]
        c = np.moveaxis(c, 1, 1 + n)                                     # [N, *out, cg, *k]
        c = c.reshape(batch, int(np.prod(out_spatial, dtype=np.int64)), -1)  # im2col
        wg = w[g * mg:(g + 1) * mg].reshape(mg, -1)                      # [mg, cg*k]
        ys.append(np.matmul(c, wg.T))                                    # [N, P, mg]
    y = np.concatenate(ys, axis=2)
    y = np.moveaxis(y, 2, 1).reshape((batch, cout) + tuple(out_spatial))
    if b is not None:
        y = y + b.reshape((1, cout) + (1,) * n)
    return y


def _max_pool(x, attrs):
    n = x.ndim - 2
    kernel = list(attrs["kernel_shape"])
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    if attrs.get("storage_order", 0) != 0:
        raise UnsupportedError("MaxPool storage_order=1")
    begin, end = _pads(attrs, x.shape[2:], kernel, strides, dilations)
    if np.issubdtype(x.dtype, np.floating):
        fill = -np.inf
    else:
        fill = np.iinfo(x.dtype).min
    view = _windows(x, kernel, strides, dilations, begin, end, fill,
                    ceil_mode=bool(attrs.get("ceil_mode", 0)))
    return view.max(axis=tuple(range(2 + n, 2 + 2 * n)))


# --- shapes --------------------------------------------------------------------

def _reshape(x, shape, allowzero):
    shape = [int(s) for s in shape]
    if not allowzero:
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _gemm(a, b, c, attrs):
    if attrs.get("transA", 0):
        a = a.T
    if attrs.get("transB", 0):
        b = b.T
    y = attrs.get("alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + attrs.get("beta", 1.0) * c
    return y


def _constant(attrs):
    if "value" in attrs:
        return _widen(numpy_helper.to_array(attrs["value"]))
    if "value_float" in attrs:
        return np.array(attrs["value_float"], np.float64)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], np.float64)
    if "value_int" in attrs:
        return np.array(attrs["value_int"], np.int64)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], np.int64)
    raise UnsupportedError(f"Constant with attributes {sorted(attrs)}")


def _average_pool(x, attrs):
    n = x.ndim - 2
    kernel = list(attrs["kernel_shape"])
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    if attrs.get("ceil_mode", 0):
        raise UnsupportedError("AveragePool ceil_mode=1")
    begin, end = _pads(attrs, x.shape[2:], kernel, strides, dilations)
    axes = tuple(range(2 + n, 2 + 2 * n))
    total = _windows(x, kernel, strides, dilations, begin, end, 0.0).sum(axis=axes)
    if attrs.get("count_include_pad", 0):
        ones = np.pad(np.ones((1, 1) + x.shape[2:]), [(0, 0), (0, 0)] + list(zip(begin, end)),
                      constant_values=1.0)
        count = _windows(ones, kernel, strides, dilations, [0] * n, [0] * n, 0.0).sum(axis=axes)
    else:
        count = _windows(np.ones((1, 1) + x.shape[2:]), kernel, strides, dilations, begin, end,
                         0.0).sum(axis=axes)
    return total / count


def _conv_transpose(x, w, b, attrs):
    n = x.ndim - 2
    if "output_shape" in attrs or _decode(attrs.get("auto_pad", "NOTSET")) != "NOTSET":
        raise UnsupportedError("ConvTranspose with output_shape or auto_pad")
    kernel = list(w.shape[2:])
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    pads = list(attrs.get("pads", [0] * (2 * n)))
    out_pad = list(attrs.get("output_padding", [0] * n))
    group = attrs.get("group", 1)
    batch, cin = x.shape[:2]
    cin_g, cout_g = cin // group, w.shape[1]
    full = [(x.shape[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 + out_pad[i]
            for i in range(n)]
    buf = np.zeros((batch, cout_g * group) + tuple(full))
    for g in range(group):
        xg = x[:, g * cin_g:(g + 1) * cin_g]
        for k in np.ndindex(*kernel):
            wk = w[(slice(g * cin_g, (g + 1) * cin_g), slice(None)) + k]          # [cin_g, cout_g]
            contrib = np.moveaxis(np.tensordot(xg, wk, axes=([1], [0])), -1, 1)  # [N, cout_g, *in]
            index = (slice(None), slice(g * cout_g, (g + 1) * cout_g))
            index += tuple(slice(k[i] * dilations[i], k[i] * dilations[i] + (x.shape[2 + i] - 1) * strides[i] + 1,
                                 strides[i]) for i in range(n))
            buf[index] += contrib
    crop = (slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[n + i]) for i in range(n))
    y = buf[crop]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * n)
    return y


def _cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis=axis)
    if exclusive:
        y = np.concatenate([np.zeros_like(np.take(y, [0], axis=axis)), np.delete(y, -1, axis=axis)], axis=axis)
    return np.flip(y, axis) if reverse else y


def _axes_of(node, args, attrs, opset, first_input_axes_opset):
    """Reduction/Squeeze axes: an input from `first_input_axes_opset` on, else the attribute."""
    if opset >= first_input_axes_opset:
        return [int(a) for a in args[1]] if len(args) > 1 and args[1] is not None else None
    return attrs.get("axes")


def _reduce(fn, x, axes, keepdims, noop):
    if axes is None or len(axes) == 0:
        if noop:
            return x
        axes = list(range(x.ndim))
    return fn(x, axis=tuple(a % x.ndim for a in axes), keepdims=bool(keepdims))


def _slice(x, starts, ends, axes, steps):
    axes = list(range(len(starts))) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for a, st, en, sp in zip(axes, starts, ends, steps):
        index[a] = slice(int(st), int(en), int(sp))
    return x[tuple(index)]


def _pad(x, pads, value, mode):
    if mode != "constant":
        raise UnsupportedError(f"Pad mode={mode}")
    n = x.ndim
    pads = [int(p) for p in pads]
    begin, end = pads[:n], pads[n:]
    # Negative pads crop.
    index = tuple(slice(max(-b, 0), x.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(zip(begin, end)))
    x = x[index]
    return np.pad(x, [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)], constant_values=value)


_UNARY = {
    "Neg": np.negative, "Abs": np.abs, "Exp": np.exp, "Log": np.log, "Sqrt": np.sqrt,
    "Reciprocal": lambda x: 1.0 / x, "Tanh": np.tanh, "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "Softplus": lambda x: np.log1p(np.exp(x)), "Floor": np.floor, "Ceil": np.ceil,
    "HardSwish": lambda x: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan,
}

_TYPES = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}


def _resize(x, args, attrs):
    """Resize (opset 11+: X, roi, scales[, sizes]) through ONNX's own reference
    interpolation (onnx.backend.test.case.node.resize), in float64."""
    from onnx.backend.test.case.node import resize as onnx_resize
    mode = _decode(attrs.get("mode", "nearest"))
    scales = args[2] if len(args) > 2 and args[2] is not None and np.size(args[2]) else None
    sizes = args[3] if len(args) > 3 and args[3] is not None else None
    coeffs = {
        "nearest": lambda ratio: onnx_resize.nearest_coeffs(
            ratio, mode=_decode(attrs.get("nearest_mode", "round_prefer_floor"))),
        "linear": onnx_resize.linear_coeffs,
        "cubic": lambda ratio: onnx_resize.cubic_coeffs(ratio, A=attrs.get("cubic_coeff_a", -0.75)),
    }[mode]
    return onnx_resize.interpolate_nd(
        x, coeffs, output_size=None if sizes is None else [int(v) for v in sizes],
        scale_factors=None if scales is None else [float(v) for v in scales],
        roi=args[1] if len(args) > 1 and args[1] is not None and np.size(args[1]) else None,
        coordinate_transformation_mode=_decode(attrs.get("coordinate_transformation_mode", "half_pixel")),
        exclude_outside=attrs.get("exclude_outside", 0),
        extrapolation_value=attrs.get("extrapolation_value", 0.0))


def _run_more(node, args, opset, a):
    """The ops added for gradients_test.py."""
    op = node.op_type
    x = args[0] if args else None
    if op in _UNARY:
        return [_UNARY[op](x)]
    if op == "Pow":
        return [np.power(args[0], args[1])]
    if op in ("Min", "Max"):
        fn = np.minimum if op == "Min" else np.maximum
        out = args[0]
        for v in args[1:]:
            out = fn(out, v)
        return [out]
    if op == "LeakyRelu":
        return [np.where(x > 0, x, a.get("alpha", 0.01) * x)]
    if op == "Elu":
        return [np.where(x > 0, x, a.get("alpha", 1.0) * (np.exp(x) - 1.0))]
    if op == "Selu":
        alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
        return [gamma * np.where(x > 0, x, alpha * (np.exp(x) - 1.0))]
    if op == "HardSigmoid":
        return [np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0.0, 1.0)]
    if op == "Clip":
        if opset < 11:
            raise UnsupportedError("Clip before opset 11")
        lo = args[1] if len(args) > 1 and args[1] is not None else None
        hi = args[2] if len(args) > 2 and args[2] is not None else None
        if lo is not None:
            x = np.maximum(x, lo)
        if hi is not None:
            x = np.minimum(x, hi)
        return [x]
    if op == "PRelu":
        try:
            return [np.where(x > 0, x, x * args[1])]
        except ValueError:  # the slope of opsets < 7 broadcasts from axis 1
            raise UnsupportedError(f"PRelu slope {args[1].shape} for input {x.shape}") from None
    if op == "Where":
        return [np.where(args[0], args[1], args[2])]
    if op == "Greater":
        return [np.greater(args[0], args[1])]
    if op == "Cast":
        to = a["to"]
        if to not in _TYPES or x.dtype not in [np.dtype(t) for t in _TYPES.values()]:
            raise UnsupportedError(f"Cast to {to}")
        return [_widen(x.astype(_TYPES[to]))]
    if op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"):
        fn = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min}[op]
        axes = _axes_of(node, args, a, opset, 13 if op == "ReduceSum" else 18)
        return [_reduce(fn, x, axes, a.get("keepdims", 1), a.get("noop_with_empty_axes", 0))]
    if op == "LogSoftmax":
        if opset < 13:
            raise UnsupportedError("LogSoftmax before opset 13")
        axis = a.get("axis", -1)
        m = np.max(x, axis=axis, keepdims=True)
        return [x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))]
    if op == "Squeeze":
        axes = _axes_of(node, args, a, opset, 13)
        if axes is None:
            return [np.squeeze(x)]
        return [np.squeeze(x, axis=tuple(int(i) % x.ndim for i in axes))]
    if op == "Unsqueeze":
        axes = _axes_of(node, args, a, opset, 13)
        rank = x.ndim + len(axes)
        out = x
        for i in sorted(int(i) % rank for i in axes):
            out = np.expand_dims(out, i)
        return [out]
    if op == "Expand":
        shape = [int(s) for s in args[1]]
        return [x * np.ones(shape, dtype=x.dtype)]
    if op == "Concat":
        return [np.concatenate(args, axis=a["axis"])]
    if op == "Slice":
        if opset < 10:
            raise UnsupportedError("Slice before opset 10")
        get = lambda i: args[i] if len(args) > i and args[i] is not None else None  # noqa: E731
        return [_slice(x, args[1], args[2], get(3), get(4))]
    if op == "Split":
        axis = a.get("axis", 0)
        if opset >= 13:
            split = args[1] if len(args) > 1 and args[1] is not None else None
        else:
            split = a.get("split")
        if split is None:
            return np.array_split(x, len(node.output), axis=axis)
        return np.split(x, np.cumsum([int(s) for s in split])[:-1], axis=axis)
    if op == "Pad":
        if opset < 11:
            raise UnsupportedError("Pad before opset 11")
        if len(args) > 3:
            raise UnsupportedError("Pad with axes")
        value = args[2] if len(args) > 2 and args[2] is not None else 0
        return [_pad(x, args[1], value, _decode(a.get("mode", "constant")))]
    if op == "Gather":
        idx = np.asarray(args[1]).astype(np.int64)
        return [np.take(x, idx, axis=a.get("axis", 0))]
    if op == "AveragePool":
        return [_average_pool(x, a)]
    if op == "ConvTranspose":
        return [_conv_transpose(x, args[1], args[2] if len(args) > 2 else None, a)]
    if op == "CumSum":
        return [_cumsum(x, int(np.asarray(args[1]).reshape(-1)[0]), a.get("exclusive", 0), a.get("reverse", 0))]
    if op == "Tile":
        return [np.tile(x, [int(r) for r in args[1]])]
    if op == "Einsum":
        return [np.einsum(_decode(a["equation"]), *args)]
    if op == "GatherElements":
        axis = a.get("axis", 0)
        idx = np.asarray(args[1]).astype(np.int64)
        return [np.take_along_axis(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)]
    if op == "TopK":
        axis, k = a.get("axis", -1), int(np.asarray(args[1]).reshape(-1)[0])
        if not a.get("sorted", 1):
            raise UnsupportedError("TopK sorted=0")
        # Ties keep the lower index first (a stable sort of the keys).
        order = np.argsort(-x if a.get("largest", 1) else x, axis=axis, kind="stable")
        order = np.take(order, np.arange(k), axis=axis)
        return [np.take_along_axis(x, order, axis=axis), order.astype(np.int64)]
    if op == "ReduceProd":
        axes = _axes_of(node, args, a, opset, 18)
        return [_reduce(np.prod, x, axes, a.get("keepdims", 1), a.get("noop_with_empty_axes", 0))]
    if op == "ReduceL2":
        axes = _axes_of(node, args, a, opset, 18)
        return [np.sqrt(_reduce(np.sum, x * x, axes, a.get("keepdims", 1), a.get("noop_with_empty_axes", 0)))]
    if op == "Resize":
        return [_resize(x, args, a)]
    if op == "InstanceNormalization":
        axes = tuple(range(2, x.ndim))
        mean = np.mean(x, axis=axes, keepdims=True)
        var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return [(x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * args[1].reshape(shape)
                + args[2].reshape(shape)]
    raise UnsupportedError(f"op {op}")


# --- the interpreter -------------------------------------------------------------

def _run_node(node, args, opset):
    op, a = node.op_type, _attrs(node)
    x = args[0] if args else None
    if op == "MatMul":
        return [np.matmul(args[0], args[1])]
    if op == "Add":
        return [args[0] + args[1]]
    if op == "Sub":
        return [args[0] - args[1]]
    if op == "Mul":
        return [args[0] * args[1]]
    if op == "Div":
        if np.issubdtype(args[0].dtype, np.integer):
            return [np.trunc(args[0] / args[1]).astype(args[0].dtype)]
        return [args[0] / args[1]]
    if op == "Relu":
        return [np.maximum(x, 0).astype(x.dtype)]
    if op == "Erf":
        return [_erf(x)]
    if op == "Softmax":
        return [_softmax(x, a.get("axis", -1 if opset >= 13 else 1), opset)]
    if op == "LayerNormalization":
        bias = args[2] if len(args) > 2 else None
        y, mean, inv_std = _layer_norm(x, args[1], bias, a.get("axis", -1), a.get("epsilon", 1e-5))
        return [y, mean, inv_std][:len(node.output)]
    if op == "Conv":
        return [_conv(x, args[1], args[2] if len(args) > 2 else None, a)]
    if op == "BatchNormalization":
        if a.get("training_mode", 0) or len(node.output) > 1:
            raise UnsupportedError("BatchNormalization in training mode")
        return [_batch_norm(x, *args[1:5], a.get("epsilon", 1e-5))]
    if op == "MaxPool":
        if len(node.output) > 1:
            raise UnsupportedError("MaxPool with an Indices output")
        return [_max_pool(x, a)]
    if op == "GlobalAveragePool":
        return [np.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)]
    if op == "Flatten":
        axis = a.get("axis", 1)
        axis = axis if axis >= 0 else axis + x.ndim
        return [x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)]
    if op == "Gemm":
        return [_gemm(args[0], args[1], args[2] if len(args) > 2 else None, a)]
    if op == "Reshape":
        return [_reshape(x, args[1], a.get("allowzero", 0))]
    if op == "Transpose":
        return [np.transpose(x, a.get("perm"))]
    if op == "Constant":
        return [_constant(a)]
    return _run_more(node, args, opset, a)


def run_model(model, inputs):
    """Runs `model` (an onnx.ModelProto) on `inputs` ({name: array}); returns
    {output name: array} in the graph's output order, floats as float64."""
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    env = {init.name: _widen(numpy_helper.to_array(init)) for init in graph.initializer}
    for inp in graph.input:
        if inp.name in inputs:
            env[inp.name] = _widen(inputs[inp.name])
        elif inp.name not in env:
            raise ValueError(f"missing input '{inp.name}'")
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            raise UnsupportedError(f"op {node.domain}.{node.op_type}")
        args = [env[name] if name else None for name in node.input]
        if node.op_type == "Split" and len(args) > 1 and args[1] is None:
            args = args[:1]
        while args and args[-1] is None:
            args.pop()
        try:
            results = _run_node(node, args, opset)
        except UnsupportedError as e:
            raise UnsupportedError(f"node '{node.name}' ({node.op_type}): {e}") from None
        for name, value in zip(node.output, results):
            if name:
                env[name] = np.asarray(value)
    return {out.name: env[out.name] for out in graph.output}


def graph_inputs(model):
    """The graph inputs that are not initializers (input_K.pb order)."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


# --- self-test against the ONNX backend node tests ----------------------------------

SELF_TEST_OPS = {"MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Erf", "Softmax",
                 "LayerNormalization", "Conv", "BatchNormalization", "MaxPool",
                 "GlobalAveragePool", "Flatten", "Gemm", "Reshape", "Transpose", "Constant",
                 "Pow", "Min", "Max", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh",
                 "Sigmoid", "LeakyRelu", "Elu", "Selu", "Softplus", "HardSigmoid", "HardSwish",
                 "Clip", "PRelu", "Where", "Cast", "Greater", "ReduceSum", "ReduceMean",
                 "ReduceMax", "ReduceMin", "LogSoftmax", "Squeeze", "Unsqueeze", "Expand",
                 "Concat", "Slice", "Split", "Pad", "Gather", "AveragePool",
                 "InstanceNormalization", "ConvTranspose", "CumSum", "Tile", "ReduceL2", "Floor",
                 "Ceil", "GatherElements", "TopK", "ReduceProd", "Einsum"}


def _load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def self_test(data_dir, verbose):
    """Runs every backend test in data_dir whose ops are all supported; returns
    the number of failures."""
    passed, failed, skipped = 0, [], 0
    for name in sorted(os.listdir(data_dir)):
        case = os.path.join(data_dir, name)
        model_path = os.path.join(case, "model.onnx")
        if not os.path.exists(model_path):
            continue
        model = onnx.load(model_path)
        if any(n.op_type not in SELF_TEST_OPS or n.domain not in ("", "ai.onnx")
               for n in model.graph.node):
            continue
        inputs_info = graph_inputs(model)
        for ds in sorted(d for d in os.listdir(case) if d.startswith("test_data_set")):
            ds = os.path.join(case, ds)
            inputs = {info.name: _load_tensor(os.path.join(ds, f"input_{k}.pb"))
                      for k, info in enumerate(inputs_info)}
            try:
                got = run_model(model, inputs)
            except UnsupportedError as e:
                skipped += 1
                if verbose:
                    print(f"skip {name}: {e}")
                continue
            ok = True
            for k, out in enumerate(model.graph.output):
                want = _load_tensor(os.path.join(ds, f"output_{k}.pb"))
                g = got[out.name]
                if g.shape != want.shape or not np.allclose(g, want, rtol=1e-4, atol=1e-5):
                    ok = False
                    failed.append(f"{name}/{os.path.basename(ds)} output {k}: shape {g.shape} "
                                  f"vs {want.shape}")
            if ok:
                passed += 1
                if verbose:
                    print(f"ok   {name}")
    for f in failed:
        print(f"FAIL {f}")
    print(f"reference self-test {data_dir}: {passed} passed, {len(failed)} failed, {skipped} skipped "
          f"(unsupported attributes)")
    if passed == 0:
        print(f"FAIL no test in {data_dir} ran")
        return 1
    return len(failed)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--self-test", metavar="DATA_DIR", nargs="+",
                        help="check against ONNX backend tests (e.g. "
                             "/usr/share/libonnx-testdata/data/node)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if not args.self_test:
        parser.error("nothing to do (use --self-test DATA_DIR, or import run_model)")
    failures = sum(self_test(d, args.verbose) for d in args.self_test)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
