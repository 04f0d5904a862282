#!/usr/bin/python3
"""End-to-end numerics of the example models on the CPU target.

    /usr/bin/python3 test/e2e/models_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--models mlp,cnn,transformer] [--batches 1,4] [--work-dir DIR] [--seed S]
        [--rtol-l2 1e-4] [--atol 1e-4] [--nncc-flags "--target=cpu"]

For each model and batch size: generates the model with
examples/models/make_models.py, makes seeded random inputs
(numpy.random.default_rng), writes them as input_K.pb, computes the output
with the numpy reference interpreter (reference.py, float64), compiles the
model with nncc, runs it with nncc-run --output-dir, and checks every output:

    rel_l2  = ||out - ref|| / ||ref||          <= --rtol-l2   (default 1e-4)
    max_abs = max |out - ref|                  <= --atol * max(1, max |ref|)

One line per model and batch with both errors; exit status 1 when any fails.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import reference  # noqa: E402
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")

GENERATED = set()  # model folders written by this run

ONNX_TO_NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
                 onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def make_input(info, rng):
    t = info.type.tensor_type
    dims = [d.dim_value for d in t.shape.dim]
    if any(d <= 0 for d in dims):
        raise RuntimeError(f"input '{info.name}' has a dynamic shape {dims}")
    dtype = ONNX_TO_NUMPY.get(t.elem_type)
    if dtype is None:
        raise RuntimeError(f"input '{info.name}': unsupported element type {t.elem_type}")
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(dims).astype(dtype)
    return rng.integers(0, 4, size=dims).astype(dtype)


def check_model(name, batch, args, work):
    """Returns (ok, line)."""
    mdir = os.path.join(work, f"b{batch}")
    model_path = os.path.join(mdir, f"{name}.onnx")
    if mdir not in GENERATED:  # once per run: never a stale model from an earlier one
        run([sys.executable, MAKE_MODELS, mdir, "--batch", str(batch)], "make_models.py")
        GENERATED.add(mdir)
    model = onnx.load(model_path)

    case = os.path.join(mdir, name)
    in_dir, out_dir = os.path.join(case, "inputs"), os.path.join(case, "outputs")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))

    rng = np.random.default_rng(args.seed + 1000 * batch)
    inputs = {}
    for k, info in enumerate(reference.graph_inputs(model)):
        inputs[info.name] = make_input(info, rng)
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(inputs[info.name], info.name).SerializeToString())

    ref = reference.run_model(model, inputs)

    so = os.path.join(case, f"{name}.so")
    run([args.nncc, model_path, "-o", so] + args.nncc_flags.split(), "nncc")
    run([args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")

    ok, parts = True, []
    for k, out in enumerate(model.graph.output):
        want = ref[out.name]
        path = os.path.join(out_dir, f"output_{k}.pb")
        if not os.path.exists(path):
            return False, f"{name} batch {batch}: FAIL nncc-run wrote no {os.path.basename(path)}"
        got = read_tensor(path)
        if got.shape != want.shape:
            return False, (f"{name} batch {batch}: FAIL output '{out.name}' shape {list(got.shape)}, "
                           f"reference {list(want.shape)}")
        diff = got.astype(np.float64) - want
        norm = np.linalg.norm(want)
        rel_l2 = np.linalg.norm(diff) / norm if norm > 0 else np.linalg.norm(diff)
        max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
        ref_max = float(np.max(np.abs(want))) if want.size else 0.0
        scale = max(1.0, ref_max)
        good = bool(np.all(np.isfinite(got))) and rel_l2 <= args.rtol_l2 and max_abs <= args.atol * scale
        ok = ok and good
        parts.append(f"{out.name} {'x'.join(map(str, got.shape))}: rel_l2 {rel_l2:.2e} "
                     f"max_abs {max_abs:.2e} (max |ref| {ref_max:.3g})"
                     f"{'' if good else ' FAIL'}")
    return ok, f"{name} batch {batch}: {'ok  ' if ok else 'FAIL'} " + "; ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--models", default="mlp,cnn,transformer")
    parser.add_argument("--batches", default="1,4")
    parser.add_argument("--work-dir", help="keep models, inputs and outputs here (default: a "
                                           "temporary folder, removed afterwards)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--nncc-flags", default="",
                        help="extra nncc options, e.g. --target=cpu (direct convolutions)")
    parser.add_argument("--rtol-l2", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-4,
                        help="max abs error bound, times max(1, max |ref|)")
    args = parser.parse_args()

    work, tmp = work_folder(args.work_dir, "nncc-e2e-")
    return run_checks([(f"{name} batch {batch}", lambda name=name, batch=batch: check_model(name, batch, args, work))
                       for batch in (int(b) for b in args.batches.split(","))
                       for name in args.models.split(",")], tmp)


if __name__ == "__main__":
    sys.exit(main())
