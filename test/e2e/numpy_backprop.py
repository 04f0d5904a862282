"""Reverse-mode differentiation of ONNX graphs in float64 numpy, written from
the ONNX operator definitions, independently of nncc: the reference the
training tests compare nncc's train_step with. It covers the ops of the
example models (examples/models/make_models.py): MatMul Add Sub Mul Div Relu
Erf Softmax LayerNormalization Conv (ungrouped, no dilation)
BatchNormalization (inference) MaxPool (no padding) GlobalAveragePool Flatten
Gemm Reshape Transpose.

    env = forward(model, inputs)                 # every value, float64
    grads = backward(model, env, {"y": dy})      # d<sum(dy * y)>/d<value> for every value
"""
import numpy as np
from onnx import numpy_helper

import reference


def forward(model, inputs):
    graph = model.graph
    env = {i.name: reference._widen(numpy_helper.to_array(i)) for i in graph.initializer}
    env.update({k: reference._widen(v) for k, v in inputs.items()})
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    for node in graph.node:
        args = [env[n] for n in node.input if n]
        for name, value in zip(node.output, reference._run_node(node, args, opset)):
            env[name] = np.asarray(value)
    return env


def unbroadcast(g, shape):
    """Sums g over the axes broadcasting added to reach it from `shape`."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def im2col(x, kh, kw, stride, pads):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - kh) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - kw) // stride[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]]
    return cols, oh, ow


def col2im(cols, shape, kh, kw, stride, pads, oh, ow):
    n, c, h, w = shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]))
    for i in range(kh):
        for j in range(kw):
            xp[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]] += cols[:, :, i, j]
    return xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w]


def node_backward(node, args, outs, dy, a):
    """The cotangents of node's inputs (None: no gradient)."""
    op = node.op_type
    if op in ("Add", "Sub", "Mul", "Div"):
        x, y = args
        if op == "Add":
            gx, gy = dy, dy
        elif op == "Sub":
            gx, gy = dy, -dy
        elif op == "Mul":
            gx, gy = dy * y, dy * x
        else:
            gx, gy = dy / y, -dy * x / (y * y)
        return [unbroadcast(gx, x.shape), unbroadcast(gy, y.shape)]
    if op == "MatMul":
        x, y = args
        return [unbroadcast(dy @ np.swapaxes(y, -1, -2), x.shape), unbroadcast(np.swapaxes(x, -1, -2) @ dy, y.shape)]
    if op == "Relu":
        return [dy * (args[0] > 0)]
    if op == "Erf":
        return [dy * 2 / np.sqrt(np.pi) * np.exp(-args[0] ** 2)]
    if op == "Softmax":
        axis, y = a.get("axis", -1), outs[0]
        return [y * (dy - np.sum(dy * y, axis=axis, keepdims=True))]
    if op == "LayerNormalization":
        x, g = args[0], args[1]
        eps = a.get("epsilon", 1e-5)
        mu = x.mean(axis=-1, keepdims=True)
        inv = 1 / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
        xhat = (x - mu) * inv
        red = tuple(range(x.ndim - 1))
        dxhat = dy * g
        dx = inv * (dxhat - dxhat.mean(axis=-1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
        return [dx, (dy * xhat).sum(axis=red), dy.sum(axis=red)][:len(args)]
    if op == "Conv":
        x, w = args[0], args[1]
        kh, kw = w.shape[2:]
        stride, pads = a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0])
        cols, oh, ow = im2col(x, kh, kw, stride, pads)
        n, c = x.shape[:2]
        m = w.shape[0]
        d = dy.reshape(n, m, oh * ow)
        dw = np.einsum("nmp,nkp->mk", d, cols.reshape(n, c * kh * kw, oh * ow)).reshape(w.shape)
        dcols = np.einsum("mk,nmp->nkp", w.reshape(m, -1), d).reshape(n, c, kh, kw, oh, ow)
        grads = [col2im(dcols, x.shape, kh, kw, stride, pads, oh, ow), dw]
        if len(args) > 2:
            grads.append(dy.sum(axis=(0, 2, 3)))
        return grads
    if op == "BatchNormalization":
        x, gamma, beta, mean, var = args
        eps = a.get("epsilon", 1e-5)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        std = np.sqrt(var + eps).reshape(shape)
        xhat = (x - mean.reshape(shape)) / std
        red = (0,) + tuple(range(2, x.ndim))
        g = gamma.reshape(shape)
        return [dy * g / std, (dy * xhat).sum(axis=red), dy.sum(axis=red), (-dy * g / std).sum(axis=red),
                (dy * g * xhat * -0.5 / std ** 2).sum(axis=red)]
    if op == "MaxPool":
        x = args[0]
        k, s = a["kernel_shape"], a.get("strides", a["kernel_shape"])
        n, c, h, w = x.shape
        oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
        dx = np.zeros_like(x)
        for i in range(oh):
            for j in range(ow):
                win = x[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
                mask = win == win.max(axis=(2, 3), keepdims=True)
                dx[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]] += mask * dy[:, :, i:i + 1, j:j + 1]
        return [dx]
    if op == "GlobalAveragePool":
        x = args[0]
        return [np.broadcast_to(dy, x.shape) / (x.shape[2] * x.shape[3])]
    if op in ("Flatten", "Reshape"):
        return [dy.reshape(args[0].shape)] + [None] * (len(args) - 1)
    if op == "Transpose":
        return [np.transpose(dy, np.argsort(a["perm"]))]
    if op == "Gemm":
        x, w = args[0], args[1]
        ta, tb = a.get("transA", 0), a.get("transB", 0)
        alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
        xx, ww = (x.T if ta else x), (w.T if tb else w)
        dxx, dww = alpha * dy @ ww.T, alpha * xx.T @ dy
        grads = [dxx.T if ta else dxx, dww.T if tb else dww]
        if len(args) > 2:
            grads.append(unbroadcast(beta * dy, args[2].shape))
        return grads
    raise NotImplementedError(op)


def backward(model, env, seeds):
    grads = dict(seeds)
    for node in reversed(model.graph.node):
        dy = grads.get(node.output[0])
        if dy is None:
            continue
        from onnx import helper
        a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
        args = [env[n] for n in node.input if n]
        outs = [env[n] for n in node.output]
        for name, g in zip(node.input, node_backward(node, args, outs, dy, a)):
            if g is not None and name:
                grads[name] = grads[name] + g if name in grads else g
    return grads
