#!/usr/bin/python3
"""The eval_step entry (`nncc --loss`) against numpy.

    /usr/bin/python3 test/e2e/loss_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

- cross-entropy on the example MLP (its output is a Softmax, which eval_step
  replaces by one log-softmax of its logits) and CNN (logits): against
  -mean(log p[n, label n]) with p from the numpy reference interpreter
  (reference.py, float64), on the CPU plan and the GPU plan (--emulate-gpu);
- mse on the example transformer: mean((y - labels)^2) against the reference;
- output: a model whose output is its own loss (ReduceMean of a square);
- a label outside [0, C) fails the run naming the labels input; an unknown
  --loss-output and a model with several outputs are compile errors.
Tolerance: |got - want| <= 1e-5 (1 + |want|). Uses Debian's python3-onnx.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import reference  # noqa: E402
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
PLANS = {"cpu": ["--target=cpu"], "gpu-plan": ["--emulate-gpu"]}


def write(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def eval_step(args, model_path, flags, inputs, labels, case):
    """Compiles with `flags`, runs eval_step on inputs (+ labels); the loss."""
    os.makedirs(case, exist_ok=True)
    so = os.path.join(case, "m.so")
    run([args.nncc, model_path, "-o", so] + flags, "nncc")
    arrays = list(inputs.values()) + ([labels] if labels is not None else [])
    for k, a in enumerate(arrays):
        write(os.path.join(case, f"input_{k}.pb"), a, f"in{k}")
    run([args.nncc_run, so, "--entry", "eval_step", "--input-dir", case, "--output-dir", case], "nncc-run")
    return float(read_tensor(os.path.join(case, "output_0.pb"))), so


def random_inputs(model, rng):
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in reference.graph_inputs(model)}


def close(got, want):
    return abs(got - want) <= 1e-5 * (1 + abs(want))


def check_cross_entropy(name, plan, args, work):
    path = os.path.join(work, f"{name}.onnx")
    model = onnx.load(path)
    rng = np.random.default_rng(args.seed)
    inputs = random_inputs(model, rng)
    out = reference.run_model(model, inputs)[model.graph.output[0].name]
    labels = rng.integers(0, out.shape[1], size=out.shape[0]).astype(np.int64)
    if model.graph.node[-1].op_type == "Softmax":  # the MLP: probabilities
        logp = np.log(out)
    else:  # the CNN: logits
        shifted = out - out.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    want = -np.mean(logp[np.arange(len(labels)), labels])
    got, _ = eval_step(args, path, ["--loss=cross-entropy"] + PLANS[plan], inputs, labels,
                       os.path.join(work, f"ce-{name}-{plan}"))
    return close(got, want), f"cross-entropy {name} {plan}: {'ok  ' if close(got, want) else 'FAIL'} loss {got:.7g}, numpy {want:.7g}"


def check_mse(plan, args, work):
    path = os.path.join(work, "transformer.onnx")
    model = onnx.load(path)
    rng = np.random.default_rng(args.seed + 1)
    inputs = random_inputs(model, rng)
    y = reference.run_model(model, inputs)[model.graph.output[0].name]
    labels = rng.standard_normal(y.shape).astype(np.float32)
    want = np.mean((y - labels) ** 2)
    got, _ = eval_step(args, path, ["--loss=mse"] + PLANS[plan], inputs, labels, os.path.join(work, f"mse-{plan}"))
    return close(got, want), f"mse transformer {plan}: {'ok  ' if close(got, want) else 'FAIL'} loss {got:.7g}, numpy {want:.7g}"


def check_output_loss(args, work):
    w = numpy_helper.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Mul", ["y", "y"], ["sq"]),
         helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0)],
        "own_loss", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], [w])
    path = os.path.join(work, "own_loss.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    x = np.random.default_rng(args.seed).standard_normal((2, 4)).astype(np.float32)
    want = np.mean((x.astype(np.float64) @ numpy_helper.to_array(w).astype(np.float64)) ** 2)
    got, _ = eval_step(args, path, ["--loss=output", "--target=cpu"], {"x": x}, None, os.path.join(work, "own"))
    return close(got, want), f"output loss: {'ok  ' if close(got, want) else 'FAIL'} loss {got:.7g}, numpy {want:.7g}"


def check_errors(args, work):
    path = os.path.join(work, "mlp.onnx")
    model = onnx.load(path)
    inputs = random_inputs(model, np.random.default_rng(0))
    n = inputs["x"].shape[0]
    labels = np.full(n, 10, np.int64)  # the MLP has 10 classes
    case = os.path.join(work, "bad-label")
    try:
        eval_step(args, path, ["--loss=cross-entropy", "--target=cpu"], inputs, labels, case)
        return False, "errors: FAIL a label of 10 (10 classes) did not fail the run"
    except RuntimeError as e:
        if "input 'labels': a label is outside the classes [0, 10)" not in str(e):
            return False, f"errors: FAIL a label out of range: {e}"
    p = subprocess.run([args.nncc, path, "--loss=cross-entropy", "--loss-output=nope", "-o", os.path.join(work, "x.so")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode == 0 or "the model has no output 'nope'" not in p.stdout:
        return False, f"errors: FAIL --loss-output=nope: {p.stdout}"
    return True, "errors: ok   a label out of range fails the run; an unknown output fails the compile"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-loss-")
    run([sys.executable, MAKE_MODELS, work, "--batch", "4"], "make_models.py")
    checks = [(f"ce {m} {p}", lambda m=m, p=p: check_cross_entropy(m, p, args, work))
              for m in ("mlp", "cnn") for p in PLANS]
    checks += [(f"mse {p}", lambda p=p: check_mse(p, args, work)) for p in PLANS]
    checks += [("output", lambda: check_output_loss(args, work)), ("errors", lambda: check_errors(args, work))]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
