#!/usr/bin/python3
"""LSTM, GRU and RNN against a float64 numpy implementation of the ONNX spec.

    /usr/bin/python3 test/e2e/recurrent_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

What the backend node tests leave out: bidirectional LSTM and GRU with a
run-time sequence_lens (each sequence reversed within its own length, steps
past it output zeros and keep the state), layout=1, clip, peepholes, initial
states, linear_before_reset=1, and activations with alpha/beta. Each model is
compiled for the CPU plan (--target=cpu) and the GPU plan (--emulate-gpu: the
default targets, PTX assembled when ptxas is found, the GPU thread mapping run
on the CPU) and every output compared: |got - want| <= 1e-5 + 1e-4 |want|.
Uses Debian's python3-onnx.
"""
import argparse
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import PLANS, compile_for_plan, read_tensor, run, run_checks, work_folder  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5



def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# ONNX's activation functions with their (alpha, beta) defaults; an
# activation_alpha/beta entry is consumed, in order, by each function that
# takes one.
ACTIVATIONS = {
    "Sigmoid": (None, None, lambda x, a, b: sigmoid(x)),
    "Tanh": (None, None, lambda x, a, b: np.tanh(x)),
    "Relu": (None, None, lambda x, a, b: np.maximum(x, 0)),
    "Affine": (1.0, 0.0, lambda x, a, b: a * x + b),
    "LeakyRelu": (0.01, None, lambda x, a, b: np.where(x >= 0, x, a * x)),
    "ThresholdedRelu": (1.0, None, lambda x, a, b: np.where(x > a, x, 0)),
    "ScaledTanh": (1.0, 1.0, lambda x, a, b: a * np.tanh(b * x)),
    "HardSigmoid": (0.2, 0.5, lambda x, a, b: np.clip(a * x + b, 0, 1)),
    "Elu": (1.0, None, lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1))),
    "Softsign": (None, None, lambda x, a, b: x / (1 + np.abs(x))),
    "Softplus": (None, None, lambda x, a, b: np.log1p(np.exp(x))),
}


def activation_functions(names, alphas, betas):
    alphas, betas, funcs = list(alphas), list(betas), []
    for name in names:
        a, b, f = ACTIVATIONS[name]
        if a is not None and alphas:
            a = alphas.pop(0)
        if b is not None and betas:
            b = betas.pop(0)
        funcs.append(lambda x, f=f, a=a, b=b: f(x, a, b))
    return funcs


def reference(cell, attrs, X, W, R, B=None, lens=None, h0=None, c0=None, P=None):
    """Y, Y_h (and Y_c for LSTM) of the ONNX op in float64."""
    layout = attrs.get("layout", 0)
    X = X.astype(np.float64)
    if layout == 1:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    dirs, gh, hidden = R.shape
    per_dir = {"lstm": 3, "gru": 2, "rnn": 1}[cell]
    default = {"lstm": ["Sigmoid", "Tanh", "Tanh"], "gru": ["Sigmoid", "Tanh"], "rnn": ["Tanh"]}[cell]
    names = attrs.get("activations", default * dirs)
    funcs = activation_functions(names, attrs.get("activation_alpha", []), attrs.get("activation_beta", []))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    lens = np.full(batch, seq) if lens is None else lens
    Y = np.zeros((seq, dirs, batch, hidden))
    Yh = np.zeros((dirs, batch, hidden))
    Yc = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        f = funcs[d * per_dir:(d + 1) * per_dir]
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        b = np.zeros(2 * gh) if B is None else B[d].astype(np.float64)
        wb, rb = b[:gh], b[gh:]
        p = np.zeros(3 * hidden) if P is None else P[d].astype(np.float64)
        reverse = attrs.get("direction", "forward") == "reverse" or d == 1
        for n in range(batch):
            h = np.zeros(hidden) if h0 is None else h0[d, n].astype(np.float64)
            c = np.zeros(hidden) if c0 is None else c0[d, n].astype(np.float64)
            steps = range(lens[n] - 1, -1, -1) if reverse else range(lens[n])
            for t in steps:
                x = X[t, n]
                if cell == "rnn":
                    h = f[0](cl(x @ w.T + h @ r.T + wb + rb))
                elif cell == "gru":
                    xw = x @ w.T + wb
                    z = f[0](cl(xw[:hidden] + h @ r[:hidden].T + rb[:hidden]))
                    rr = f[0](cl(xw[hidden:2 * hidden] + h @ r[hidden:2 * hidden].T + rb[hidden:2 * hidden]))
                    rh, rbh = r[2 * hidden:], rb[2 * hidden:]
                    if attrs.get("linear_before_reset", 0):
                        hh = f[1](cl(xw[2 * hidden:] + rr * (h @ rh.T + rbh)))
                    else:
                        hh = f[1](cl(xw[2 * hidden:] + (rr * h) @ rh.T + rbh))
                    h = (1 - z) * hh + z * h
                else:
                    g = x @ w.T + h @ r.T + wb + rb
                    gi, go, gf, gc = (g[k * hidden:(k + 1) * hidden] for k in range(4))
                    i = f[0](cl(gi + p[:hidden] * c))
                    ft = f[0](cl(gf + p[2 * hidden:] * c))
                    c = ft * c + i * f[1](cl(gc))
                    o = f[0](cl(go + p[hidden:2 * hidden] * c))
                    h = o * f[2](c)
                Y[t, d, n] = h
            Yh[d, n], Yc[d, n] = h, c
    if layout == 1:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return [Y, Yh] + ([Yc] if cell == "lstm" else [])


ONNX_INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def make_case(name, cell, attrs, seq, batch, inp, hidden, rng, use):
    """The model (weights as initializers; X, sequence_lens, initial states as
    inputs) and its inputs. `use` names the optional inputs present."""
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[cell]
    layout = attrs.get("layout", 0)
    arr = lambda *shape: (rng.standard_normal(shape) * 0.6).astype(np.float32)  # noqa: E731
    vals = {"X": arr(*((batch, seq, inp) if layout else (seq, batch, inp))),
            "W": arr(dirs, gates * hidden, inp), "R": arr(dirs, gates * hidden, hidden),
            "B": arr(dirs, 2 * gates * hidden),
            # Sequence 0 full, the others shorter (their tails are padding).
            "sequence_lens": np.array([(seq - k) if k % 2 == 0 else 1 + k % seq
                                       for k in range(batch)], dtype=np.int32),
            "initial_h": arr(*((batch, dirs, hidden) if layout else (dirs, batch, hidden))),
            "initial_c": arr(*((batch, dirs, hidden) if layout else (dirs, batch, hidden))),
            "P": arr(dirs, 3 * hidden)}
    present = ["X", "W", "R"] + [n for n in ONNX_INPUTS[3:] if n in use]
    node_inputs = [n if n in present else "" for n in ONNX_INPUTS]
    while node_inputs[-1] == "":
        node_inputs.pop()
    runtime = [n for n in present if n in ("X", "sequence_lens", "initial_h", "initial_c")]
    outputs = ["Y", "Y_h"] + (["Y_c"] if cell == "lstm" else [])
    want = reference(cell, attrs, *(vals[n] if n in present else None for n in ONNX_INPUTS[:5]),
                     **{k: vals[v] for k, v in (("h0", "initial_h"), ("c0", "initial_c"), ("P", "P"))
                        if v in present})
    node = helper.make_node({"lstm": "LSTM", "gru": "GRU", "rnn": "RNN"}[cell], node_inputs, outputs,
                            hidden_size=hidden, **attrs)
    elem = lambda n: TensorProto.INT32 if n == "sequence_lens" else TensorProto.FLOAT  # noqa: E731
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, elem(n), vals[n].shape) for n in runtime],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, w.shape) for o, w in zip(outputs, want)],
        [numpy_helper.from_array(vals[n], n) for n in present if n not in runtime])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return model, [vals[n] for n in runtime], dict(zip(outputs, want))


CASES = [
    # name, cell, attributes, seq, batch, input size, hidden, optional inputs
    ("lstm-bidi-lens-peep-clip", "lstm",
     dict(direction="bidirectional", clip=1.5), 5, 3, 4, 3,
     {"B", "sequence_lens", "initial_h", "initial_c", "P"}),
    ("lstm-layout1-activations", "lstm",
     dict(direction="reverse", layout=1, activations=["HardSigmoid", "ScaledTanh", "Affine"],
          activation_alpha=[0.3, 0.8, 0.7], activation_beta=[0.45, 1.2, 0.1]), 4, 2, 3, 5,
     {"B", "initial_h"}),
    ("gru-bidi-lens-lbr-layout1-clip", "gru",
     dict(direction="bidirectional", linear_before_reset=1, layout=1, clip=2.0), 6, 4, 3, 4,
     {"B", "sequence_lens", "initial_h"}),
    ("gru-bidi-lens", "gru", dict(direction="bidirectional"), 4, 3, 2, 3,
     {"B", "sequence_lens"}),
    ("rnn-reverse-leakyrelu-layout1", "rnn",
     dict(direction="reverse", layout=1, activations=["LeakyRelu"], activation_alpha=[0.2]),
     5, 2, 3, 4, {"B", "sequence_lens", "initial_h"}),
    ("rnn-bidi-softsign-elu", "rnn",
     dict(direction="bidirectional", activations=["Softsign", "Elu"], activation_alpha=[0.5]),
     3, 2, 2, 3, {"B"}),
]


def check(case, plan, args, work):
    name, cell, attrs, seq, batch, inp, hidden, use = case
    rng = np.random.default_rng(args.seed + sum(map(ord, name)))
    model, inputs, want = make_case(name, cell, attrs, seq, batch, inp, hidden, rng, use)
    folder = os.path.join(work, f"{name}-{plan}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    so = os.path.join(folder, "model.so")
    compile_for_plan(args.nncc, path, so, plan)
    for k, a in enumerate(inputs):
        with open(os.path.join(folder, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, f"in{k}").SerializeToString())
    run([args.nncc_run, so, "--input-dir", folder, "--output-dir", folder], "nncc-run")
    worst, ok = 0.0, True
    for k, (out, w) in enumerate(want.items()):
        got = read_tensor(os.path.join(folder, f"output_{k}.pb")).astype(np.float64)
        if got.shape != w.shape:
            return False, f"{name} {plan}: FAIL {out} has shape {got.shape}, numpy {w.shape}"
        err = np.abs(got - w)
        worst = float(np.max([worst, err.max()]))  # np.max keeps a NaN, max() may drop it
        ok &= bool(np.all(err <= ATOL + RTOL * np.abs(w)))
    return ok, f"{name} {plan}: {'ok  ' if ok else 'FAIL'} max abs err {worst:.2e} over {', '.join(want)}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-recurrent-")
    checks = [(f"{c[0]} {plan}", lambda c=c, plan=plan: check(c, plan, args, work))
              for c in CASES for plan in PLANS]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
