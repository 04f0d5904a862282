#!/usr/bin/python3
"""The optimizer_step entry (`nncc --optimizer`) against torch.optim's formulas in numpy.

    /usr/bin/python3 test/e2e/optimizer_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S] [--steps N]

For each optimizer setting (SGD, SGD with weight decay, momentum, Adam, Adam
with L2 weight decay, AdamW, Adam with gradient clipping), the example MLP
is compiled with --mutable-weights --optimizer=... for the CPU plan and the
GPU plan (--emulate-gpu), and N steps run, one nncc-run each: the state of
step k-1 (`--state-out`) is set into step k (`--set-state`), with random
gradients and a learning rate that changes per step (a run-time input).
After every step, every weight and optimizer buffer and the step count are
compared with an independent float64 numpy implementation of torch.optim's
update (SGD: p -= lr (g + wd p); momentum: b = mu b + g, p -= lr b; Adam:
m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, p -= lr/(1-b1^t) m / (sqrt(v)/
sqrt(1-b2^t) + eps); AdamW: p *= 1 - lr wd first; clip_grad_norm_:
g *= min(1, c / (||g|| + 1e-6))): |got - want| <= 1e-5 (1 + |want|).
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
from e2e_util import module_states, read_tensor, run, run_checks, work_folder  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")

SETTINGS = {
    "sgd": ["--optimizer=sgd"],
    "sgd-wd": ["--optimizer=sgd", "--weight-decay=0.01"],
    "momentum": ["--optimizer=momentum", "--momentum=0.8", "--weight-decay=0.001"],
    "adam": ["--optimizer=adam", "--beta1=0.8", "--beta2=0.95", "--eps=1e-6"],
    "adam-wd": ["--optimizer=adam", "--weight-decay=0.05"],
    "adamw": ["--optimizer=adamw", "--weight-decay=0.1"],
    "adam-clip": ["--optimizer=adam", "--grad-clip=0.5"],
}
PLANS = {"cpu": ["--target=cpu"], "gpu-plan": ["--emulate-gpu"]}


def flag(flags, name, default):
    for f in flags:
        if f.startswith(f"--{name}="):
            return f.split("=", 1)[1]
    return default


def reference_step(kind, flags, params, bufs, t, grads, lr):
    """One torch.optim step in float64; returns (params, bufs)."""
    wd = float(flag(flags, "weight-decay", 0))
    mu = float(flag(flags, "momentum", 0.9))
    b1, b2 = float(flag(flags, "beta1", 0.9)), float(flag(flags, "beta2", 0.999))
    eps = float(flag(flags, "eps", 1e-8))
    clip = float(flag(flags, "grad-clip", 0))
    if clip > 0:
        norm = np.sqrt(sum(np.sum(g * g) for g in grads.values()))
        grads = {k: g * min(1.0, clip / (norm + 1e-6)) for k, g in grads.items()}
    new_p, new_b = {}, dict(bufs)
    for name, p in params.items():
        g = grads[name]
        if kind == "adamw":
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        if kind == "sgd":
            p = p - lr * g
        elif kind == "momentum":
            b = mu * bufs[name + ".momentum_buffer"] + g
            new_b[name + ".momentum_buffer"] = b
            p = p - lr * b
        else:
            m = b1 * bufs[name + ".exp_avg"] + (1 - b1) * g
            v = b2 * bufs[name + ".exp_avg_sq"] + (1 - b2) * g * g
            new_b[name + ".exp_avg"], new_b[name + ".exp_avg_sq"] = m, v
            denom = np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps
            p = p - lr / (1 - b1 ** t) * m / denom
        new_p[name] = p
    return new_p, new_b


def check(setting, plan, args, work):
    flags = SETTINGS[setting]
    kind = flag(flags, "optimizer", "sgd")
    model = onnx.load(os.path.join(work, "mlp.onnx"))
    weights = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer}
    case = os.path.join(work, f"{setting}-{plan}")
    os.makedirs(case, exist_ok=True)
    so = os.path.join(case, "mlp.so")
    run([args.nncc, os.path.join(work, "mlp.onnx"), "--mutable-weights", "-o", so] + flags + PLANS[plan], "nncc")
    states = [name for name, _ in module_states(args.nncc_run, so)]

    rng = np.random.default_rng(args.seed)
    params = dict(weights)
    bufs = {s: np.zeros_like(weights[s.rsplit(".", 1)[0]]) for s in states
            if s != "optimizer.step" and s not in weights}
    worst = 0.0
    prev = None
    for t in range(1, args.steps + 1):
        step_dir = os.path.join(case, f"step{t}")
        os.makedirs(step_dir, exist_ok=True)
        lr = 0.05 / t
        grads = {name: rng.standard_normal(w.shape) for name, w in weights.items()}
        with open(os.path.join(step_dir, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(lr, np.float32), "lr").SerializeToString())
        for k, name in enumerate(weights):
            with open(os.path.join(step_dir, f"input_{k + 1}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(grads[name].astype(np.float32), "g").SerializeToString())
        cmd = [args.nncc_run, so, "--entry", "optimizer_step", "--input-dir", step_dir,
               "--output-dir", step_dir, "--state-out", step_dir]
        if prev:
            for k, s in enumerate(states):
                cmd += ["--set-state", f"{s}={os.path.join(prev, f'state_{k}.pb')}"]
        run(cmd, "nncc-run --entry optimizer_step")
        # The reference takes the f32 gradients and learning rate the module got.
        grads32 = {k: g.astype(np.float32).astype(np.float64) for k, g in grads.items()}
        params, bufs = reference_step(kind, flags, params, bufs, t, grads32, float(np.float32(lr)))
        want = dict(params, **bufs)
        want["optimizer.step"] = np.array(float(t))
        got_step = read_tensor(os.path.join(step_dir, "output_0.pb"))
        if float(got_step) != t:
            return False, f"{setting} {plan}: FAIL step {t} returned step count {float(got_step)}"
        for k, s in enumerate(states):
            got = read_tensor(os.path.join(step_dir, f"state_{k}.pb")).astype(np.float64)
            err = np.max(np.abs(got - want[s]) / (1 + np.abs(want[s])))
            worst = float(np.max([worst, err]))  # np.max keeps a NaN, max() may drop it
            if not err <= 1e-5:
                return False, f"{setting} {plan}: FAIL step {t} state '{s}': max rel err {err:.2e}"
        # Continue from what the module computed (the reference keeps its own values).
        prev = step_dir
    return True, f"{setting} {plan}: ok   {args.steps} steps, {len(states)} states, max rel err {worst:.2e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-optimizer-")
    run([sys.executable, MAKE_MODELS, work, "--batch", "2"], "make_models.py")
    checks = [(f"{s} {p}", lambda s=s, p=p: check(s, p, args, work)) for s in SETTINGS for p in PLANS]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
