#!/usr/bin/python3
"""Module state (`nncc --mutable-weights`) end to end.

    /usr/bin/python3 test/e2e/state_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

For the example MLP, CNN and transformer (examples/models/make_models.py),
compiled with --mutable-weights for the CPU plan (--target=cpu) and the GPU
plan (--emulate-gpu):
  - `nncc-run --info` lists every float initializer as state, and
    `--mutable-weights=REGEX` only those it matches;
  - the state a new session holds (`--state-out`) is each initializer, bit
    for bit, and the outputs, like those of the module compiled without
    --mutable-weights, match the reference (rel L2 <= 1e-4);
  - after `--set-state` of new random weights for every state, the outputs
    match the numpy reference interpreter (reference.py, float64) run on the
    model with those weights (rel L2 <= 1e-4), and `--state-out` returns
    them;
  - a state name that does not exist and a state file of the wrong shape are
    errors naming the file and the state.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import copy
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import reference  # noqa: E402
from e2e_util import module_states, read_tensor, run, run_checks, work_folder  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
PLANS = {"cpu": ["--target=cpu"], "gpu-plan": ["--emulate-gpu"]}


def write(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def float_initializers(model):
    return [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]


def rel_l2(got, want):
    diff = got.astype(np.float64) - want
    norm = np.linalg.norm(want)
    return np.linalg.norm(diff) / norm if norm > 0 else np.linalg.norm(diff)


def check(name, plan, args, work):
    model = onnx.load(os.path.join(work, f"{name}.onnx"))
    case = os.path.join(work, f"{name}-{plan}")
    dirs = {d: os.path.join(case, d) for d in ("in", "out0", "out1", "out2", "state0", "state1", "new")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    inputs = {}
    for k, info in enumerate(reference.graph_inputs(model)):
        dims = [d.dim_value for d in info.type.tensor_type.shape.dim]
        inputs[info.name] = rng.standard_normal(dims).astype(np.float32)
        write(os.path.join(dirs["in"], f"input_{k}.pb"), inputs[info.name], info.name)

    plain, mutable = os.path.join(case, "plain.so"), os.path.join(case, "mutable.so")
    run([args.nncc, os.path.join(work, f"{name}.onnx"), "-o", plain] + PLANS[plan], "nncc")
    run([args.nncc, os.path.join(work, f"{name}.onnx"), "--mutable-weights", "-o", mutable] + PLANS[plan],
        "nncc")
    weights = float_initializers(model)
    listed = [name for name, _ in module_states(args.nncc_run, mutable)]
    if listed != [w.name for w in weights]:
        return False, f"{name} {plan}: FAIL --info lists state {listed}, want {[w.name for w in weights]}"

    # A new session: the initial weights, and the outputs of the plain module.
    run([args.nncc_run, plain, "--input-dir", dirs["in"], "--output-dir", dirs["out0"]], "nncc-run")
    run([args.nncc_run, mutable, "--input-dir", dirs["in"], "--output-dir", dirs["out1"],
         "--state-out", dirs["state0"]], "nncc-run")
    for k, w in enumerate(weights):
        got = read_tensor(os.path.join(dirs["state0"], f"state_{k}.pb"))
        if not np.array_equal(got, numpy_helper.to_array(w)):
            return False, f"{name} {plan}: FAIL initial state '{w.name}' differs from the initializer"
    # Mutable weights are not folded (BatchNorm stays apart from its
    # convolution), so the rounding differs: both against the reference.
    ref0 = reference.run_model(model, inputs)
    first = 0.0
    for k, out in enumerate(model.graph.output):
        for d in (dirs["out0"], dirs["out1"]):
            err = rel_l2(read_tensor(os.path.join(d, f"output_{k}.pb")), ref0[out.name])
            first = float(np.max([first, err]))  # np.max keeps a NaN, max() may drop it
            if not err <= 1e-4:  # so that a NaN fails
                return False, f"{name} {plan}: FAIL output '{out.name}' of {d}: rel_l2 {err:.2e}"

    # New weights for every state, against the reference on the changed model.
    changed = copy.deepcopy(model)
    sets = []
    for w, init in zip(weights, [i for i in changed.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]):
        value = numpy_helper.to_array(w)
        new = (value + 0.1 * rng.standard_normal(value.shape)).astype(np.float32)
        path = os.path.join(dirs["new"], f"{len(sets)}.pb")
        write(path, new, w.name)
        sets += ["--set-state", f"{w.name}={path}"]
        init.CopyFrom(numpy_helper.from_array(new, w.name))
    run([args.nncc_run, mutable, "--input-dir", dirs["in"], "--output-dir", dirs["out2"],
         "--state-out", dirs["state1"]] + sets, "nncc-run --set-state")
    ref = reference.run_model(changed, inputs)
    worst = 0.0
    for k, out in enumerate(changed.graph.output):
        got = read_tensor(os.path.join(dirs["out2"], f"output_{k}.pb"))
        err = rel_l2(got, ref[out.name])
        worst = float(np.max([worst, err]))
        if not np.all(np.isfinite(got)) or not err <= 1e-4:
            return False, f"{name} {plan}: FAIL output '{out.name}' after --set-state: rel_l2 {err:.2e}"
    for k, (w, init) in enumerate(zip(weights, float_initializers(changed))):
        if not np.array_equal(read_tensor(os.path.join(dirs["state1"], f"state_{k}.pb")),
                              numpy_helper.to_array(init)):
            return False, f"{name} {plan}: FAIL --state-out '{w.name}' is not the weight set"
    return True, (f"{name} {plan}: ok   {len(weights)} states; rel_l2 against the reference "
                  f"{first:.2e} at first, {worst:.2e} after --set-state")


def check_errors(args, work):
    model = onnx.load(os.path.join(work, "mlp.onnx"))
    weights = float_initializers(model)
    first = weights[0]
    so = os.path.join(work, "mlp-subset.so")
    # Only the names the regular expression matches become state.
    pattern = first.name
    run([args.nncc, os.path.join(work, "mlp.onnx"), f"--mutable-weights={pattern}", "--target=cpu", "-o", so], "nncc")
    states = module_states(args.nncc_run, so)
    if states != [(first.name, f"f32[{','.join(map(str, first.dims))}]")]:
        return False, f"errors: FAIL --mutable-weights={pattern} gives state {states}"
    in_dir = os.path.join(work, "mlp-cpu", "in")
    bad = os.path.join(work, "bad.pb")
    write(bad, np.zeros((3,), np.float32), "x")
    for state, want in ((first.name, f"{bad}: state '{first.name}' is f32"),
                        ("no_such_state", f"{bad}: unknown state 'no_such_state' (the module has '{first.name}')")):
        p = subprocess.run([args.nncc_run, so, "--input-dir", in_dir, "--set-state", f"{state}={bad}"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0 or want not in p.stdout:
            return False, f"errors: FAIL --set-state {state}: exit {p.returncode}, want '{want}' in: {p.stdout}"
    return True, "errors: ok   --mutable-weights=REGEX selects; unknown state and wrong shape refused"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-state-")
    run([sys.executable, MAKE_MODELS, work, "--batch", "2"], "make_models.py")
    checks = [(f"{m} {p}", lambda m=m, p=p: check(m, p, args, work))
              for m in ("mlp", "cnn", "transformer") for p in PLANS]
    checks.append(("errors", lambda: check_errors(args, work)))
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
