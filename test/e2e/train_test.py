#!/usr/bin/python3
"""train_step (`nncc --train`) against an independent numpy training.

    /usr/bin/python3 test/e2e/train_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S] [--steps N]

The example MLP (cross-entropy on its logits: the Softmax output is folded
into a log-softmax) is trained for N steps (default 20) with each optimizer
(SGD, momentum, Adam, AdamW with weight decay, Adam with gradient clipping),
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
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402
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


def mlp_loss_and_grads(p, x, labels):
    """Cross-entropy of the example MLP's logits and its gradients (float64)."""
    hs, zs = [x], []
    for i in range(3):
        z = hs[-1] @ p[f"w{i}"] + p[f"b{i}"]
        zs.append(z)
        hs.append(np.maximum(z, 0) if i < 2 else z)
    logits = zs[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = len(labels)
    loss = -np.mean(logp[np.arange(n), labels])
    dz = np.exp(logp)
    dz[np.arange(n), labels] -= 1
    dz /= n
    grads = {}
    for i in reversed(range(3)):
        grads[f"w{i}"] = hs[i].T @ dz
        grads[f"b{i}"] = dz.sum(axis=0)
        if i > 0:
            dz = (dz @ p[f"w{i}"].T) * (zs[i - 1] > 0)
    return loss, grads


def check(setting, plan, args, work):
    flags = SETTINGS[setting]
    kind = flags[0].split("=")[1]
    path = os.path.join(work, "mlp.onnx")
    model = onnx.load(path)
    params = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer}
    case = os.path.join(work, f"{setting}-{plan}")
    os.makedirs(case, exist_ok=True)
    so = os.path.join(case, "mlp.so")
    run([args.nncc, path, "--train", "--loss=cross-entropy", "-o", so] + flags + PLANS[plan], "nncc")
    info = run([args.nncc_run, so, "--info"], "nncc-run --info")
    state_line = next(line for line in info.splitlines() if line.startswith("state: "))
    states = [part.split(" ")[0] for part in state_line[len("state: "):].split("], ")]
    batch = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][0]

    rng = np.random.default_rng(args.seed)
    bufs = {s: np.zeros_like(params[s.rsplit(".", 1)[0]]) for s in states
            if s != "optimizer.step" and s not in params}
    got_curve, want_curve, prev = [], [], None
    # Two batches in turn: the loss on them must go down.
    data = [(rng.standard_normal((batch, 64)).astype(np.float32), rng.integers(0, 10, size=batch).astype(np.int64))
            for _ in range(2)]
    for t in range(1, args.steps + 1):
        step_dir = os.path.join(case, f"step{t}")
        os.makedirs(step_dir, exist_ok=True)
        x, labels = data[t % 2]
        lr = np.float32(0.05 if kind in ("sgd", "momentum") else 0.002) / np.float32(1 + 0.1 * t)
        for k, (a, name) in enumerate(((x, "x"), (labels, "labels"), (np.array(lr, np.float32), "lr"))):
            with open(os.path.join(step_dir, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())
        cmd = [args.nncc_run, so, "--entry", "train_step", "--input-dir", step_dir, "--output-dir", step_dir,
               "--state-out", step_dir]
        if prev:
            cmd += [f"--set-state={s}={os.path.join(prev, f'state_{k}.pb')}" for k, s in enumerate(states)]
        run(cmd, "nncc-run --entry train_step")
        prev = step_dir
        got_curve.append(float(read_tensor(os.path.join(step_dir, "output_0.pb"))))
        loss, grads = mlp_loss_and_grads(params, x.astype(np.float64), labels)
        want_curve.append(loss)
        params, bufs = reference_step(kind, flags, params, bufs, t, grads, float(lr))
    got_curve, want_curve = np.array(got_curve), np.array(want_curve)
    curve_err = float(np.max(np.abs(got_curve - want_curve) / np.abs(want_curve)))
    weight_err = 0.0
    for k, s in enumerate(states):
        if s in params:
            got = read_tensor(os.path.join(prev, f"state_{k}.pb")).astype(np.float64)
            weight_err = max(weight_err, float(np.max(np.abs(got - params[s]) / (1 + np.abs(params[s])))))
    ok = curve_err <= 1e-4 and weight_err <= 1e-4 and got_curve[-2:].sum() < got_curve[:2].sum()
    return ok, (f"{setting} {plan}: {'ok  ' if ok else 'FAIL'} loss {got_curve[0]:.4f} -> {got_curve[-1]:.4f} "
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
    checks = [(f"{s} {p}", lambda s=s, p=p: check(s, p, args, work)) for s in SETTINGS for p in PLANS]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
