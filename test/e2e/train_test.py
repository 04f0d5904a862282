#!/usr/bin/python3
"""train_step (`nncc --train`) against an independent numpy training.

    /usr/bin/python3 test/e2e/train_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S] [--steps N]

The example MLP (cross-entropy on its logits: the Softmax output is folded
into a log-softmax), CNN (cross-entropy, BatchNorm statistics frozen) and
transformer (mse against a random target, its scalar constants frozen) are
trained for N steps (default 20): the MLP with each optimizer (SGD,
momentum, Adam, AdamW with weight decay, Adam with gradient clipping) on
both plans, the CNN and the transformer with SGD, momentum and Adam on the
CPU plan and AdamW on the GPU plan,
one nncc-run per step: the module state of step k-1 (`--state-out`) goes
into step k (`--set-state`), on two random batches in turn, with a learning
rate that changes per step; the loss of the last two steps must be below
that of the first two. numpy does the same training in float64 with a hand-written
backward pass (affine layers, ReLU, softmax cross-entropy) and torch.optim's
update (optimizer_test.py's reference_step). The loss curve must agree within
1e-4 relative, and the weights after the last step within 1e-4 (1 + |w|).
On the CPU plan and the emulated GPU plan (--emulate-gpu).
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import copy
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import module_states, read_tensor, run, run_checks, work_folder  # noqa: E402
import numpy_backprop  # noqa: E402
from optimizer_test import reference_step  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
SETTINGS = {
    "sgd": ["--optimizer=sgd"],
    "momentum": ["--optimizer=momentum", "--momentum=0.9"],
    "adam": ["--optimizer=adam"],
    "adamw": ["--optimizer=adamw", "--weight-decay=0.05"],
    "adam-clip": ["--optimizer=adam", "--grad-clip=1.0"],
}
PLANS = {"cpu": ["--target=cpu"], "gpu-plan": ["--emulate-gpu"]}


MODELS = {
    # name: (loss, frozen initializers, learning rate of SGD-like / Adam-like optimizers)
    "mlp": ("cross-entropy", None, (0.05, 0.002)),
    "cnn": ("cross-entropy", ".*_(mean|var)", (0.02, 0.002)),
    "transformer": ("mse", ".*_(scale|sqrt2|one|half)", (0.02, 0.001)),
}


def loss_and_grads(model, loss, params, inputs, labels):
    """The loss and its gradients with respect to `params`, by numpy_backprop."""
    m = copy.deepcopy(model)
    for init in m.graph.initializer:
        if init.name in params:
            init.CopyFrom(numpy_helper.from_array(params[init.name], init.name))
    env = numpy_backprop.forward(m, inputs)
    out = m.graph.output[0].name
    if loss == "cross-entropy":
        last = m.graph.node[-1]
        logits = env[last.input[0]] if last.op_type == "Softmax" else env[out]
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        n = len(labels)
        value = -np.mean(logp[np.arange(n), labels])
        d = np.exp(logp)
        d[np.arange(n), labels] -= 1
        seed = {(last.input[0] if last.op_type == "Softmax" else out): d / n}
    else:
        diff = env[out] - labels
        value = np.mean(diff * diff)
        seed = {out: 2 * diff / diff.size}
    grads = numpy_backprop.backward(m, env, seed)
    return value, {k: grads.get(k, np.zeros_like(v)) for k, v in params.items()}


def check(name, setting, plan, args, work):
    flags = SETTINGS[setting]
    kind = flags[0].split("=")[1]
    loss_kind, frozen, lrs = MODELS[name]
    path = os.path.join(work, f"{name}.onnx")
    model = onnx.load(path)
    params = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer
              if i.data_type == onnx.TensorProto.FLOAT and not (frozen and re.fullmatch(frozen, i.name))}
    case = os.path.join(work, f"{name}-{setting}-{plan}")
    os.makedirs(case, exist_ok=True)
    so = os.path.join(case, f"{name}.so")
    run([args.nncc, path, "--train", f"--loss={loss_kind}", "-o", so] + flags + PLANS[plan]
        + ([f"--freeze={frozen}"] if frozen else []), "nncc")
    states = [name for name, _ in module_states(args.nncc_run, so)]
    in_shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]

    rng = np.random.default_rng(args.seed)
    bufs = {s: np.zeros_like(params[s.rsplit(".", 1)[0]]) for s in states
            if s != "optimizer.step" and s not in params}
    got_curve, want_curve, prev = [], [], None
    # Two batches in turn: the loss on them must go down.
    def labels_for():
        if loss_kind == "cross-entropy":
            return rng.integers(0, out_shape[1], size=out_shape[0]).astype(np.int64)
        return rng.standard_normal(out_shape).astype(np.float32)
    data = [(rng.standard_normal(in_shape).astype(np.float32), labels_for()) for _ in range(2)]
    for t in range(1, args.steps + 1):
        step_dir = os.path.join(case, f"step{t}")
        os.makedirs(step_dir, exist_ok=True)
        x, labels = data[t % 2]
        lr = np.float32(lrs[0] if kind in ("sgd", "momentum") else lrs[1]) / np.float32(1 + 0.1 * t)
        for k, (a, input_name) in enumerate(((x, "x"), (labels, "labels"), (np.array(lr, np.float32), "lr"))):
            with open(os.path.join(step_dir, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, input_name).SerializeToString())
        cmd = [args.nncc_run, so, "--entry", "train_step", "--input-dir", step_dir, "--output-dir", step_dir,
               "--state-out", step_dir]
        if prev:
            cmd += [f"--set-state={s}={os.path.join(prev, f'state_{k}.pb')}" for k, s in enumerate(states)]
        run(cmd, "nncc-run --entry train_step")
        prev = step_dir
        got_curve.append(float(read_tensor(os.path.join(step_dir, "output_0.pb"))))
        loss, grads = loss_and_grads(model, loss_kind, params, {model.graph.input[0].name: x},
                                     labels if loss_kind == "cross-entropy" else labels.astype(np.float64))
        want_curve.append(loss)
        params, bufs = reference_step(kind, flags, params, bufs, t, grads, float(lr))
    got_curve, want_curve = np.array(got_curve), np.array(want_curve)
    curve_err = float(np.max(np.abs(got_curve - want_curve) / np.abs(want_curve)))
    weight_err = 0.0
    for k, s in enumerate(states):
        if s in params:
            got = read_tensor(os.path.join(prev, f"state_{k}.pb")).astype(np.float64)
            # np.max keeps a NaN (max() may drop it), and the <= below fails it.
            weight_err = float(np.max([weight_err, np.max(np.abs(got - params[s]) / (1 + np.abs(params[s])))]))
    ok = curve_err <= 1e-4 and weight_err <= 1e-4 and got_curve[-2:].sum() < got_curve[:2].sum()
    return ok, (f"{name} {setting} {plan}: {'ok  ' if ok else 'FAIL'} loss {got_curve[0]:.4f} -> {got_curve[-1]:.4f} "
                f"over {args.steps} steps; curve rel err {curve_err:.1e}, weights {weight_err:.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-train-")
    run([sys.executable, MAKE_MODELS, work, "--batch", "16"], "make_models.py")
    # Every optimizer on both plans for the MLP; SGD, momentum and Adam on the
    # CPU plan and AdamW on the GPU plan for the CNN and the transformer.
    runs = [("mlp", s, p) for s in SETTINGS for p in PLANS]
    runs += [(m, s, p) for m in ("cnn", "transformer")
             for s, p in (("sgd", "cpu"), ("momentum", "cpu"), ("adam", "cpu"), ("adamw", "gpu-plan"))]
    checks = [(f"{m} {s} {p}", lambda m=m, s=s, p=p: check(m, s, p, args, work)) for m, s, p in runs]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
