#!/usr/bin/python3
"""Accuracy of the low-precision plans of the example models on the CPU target.

    /usr/bin/python3 test/e2e/precision_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--models mlp,cnn,transformer] [--batch 8] [--work-dir DIR] [--seed S]

For each model (examples/models/make_models.py): seeded random inputs
(numpy.random.default_rng), the fp32 plan's output as the reference, then the
bf16, fp16 and mixed plans (nncc --precision=...) on the same inputs:

    rel = ||out - ref|| / ||ref||      bf16 and mixed <= 2e-2, fp16 <= 5e-3

One line per model and precision with the error, the share of FLOPs in the
low type and the casts inserted (from nncc --stats); exit status 1 when a
bound is exceeded. The CPU target rounds where the GPU plan does (round to
nearest even at each cast and op result, f32 accumulation), so these are the
numbers a GPU run gives up to summation order. Run with /usr/bin/python3
(Debian's python3-onnx).
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from e2e_util import read_tensor, run, work_folder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")
BOUNDS = {"bf16": 2e-2, "fp16": 5e-3, "mixed": 2e-2}


def compile_and_run(args, model_path, in_dir, case, precision):
    """Outputs (in graph order, as float64) and the compile stats of one plan."""
    so = os.path.join(case, f"{precision}.so")
    stats_path = os.path.join(case, f"{precision}.json")
    out_dir = os.path.join(case, f"out_{precision}")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))
    run([args.nncc, model_path, "-o", so, "--target=cpu", f"--cpu={args.cpu}",
         f"--precision={precision}", f"--stats={stats_path}"],
        "nncc")
    run([args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir], "nncc-run")
    n = len(onnx.load(model_path, load_external_data=False).graph.output)
    outs = [read_tensor(os.path.join(out_dir, f"output_{k}.pb")).astype(np.float64)
            for k in range(n)]
    with open(stats_path) as f:
        return outs, json.load(f)


def check_model(name, args, work):
    """Returns a list of (ok, line)."""
    model_path = os.path.join(work, f"{name}.onnx")
    model = onnx.load(model_path)
    case = os.path.join(work, name)
    in_dir = os.path.join(case, "inputs")
    os.makedirs(in_dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    initializers = {i.name for i in model.graph.initializer}
    k = 0
    for info in model.graph.input:
        if info.name in initializers:
            continue
        dims = [d.dim_value for d in info.type.tensor_type.shape.dim]
        x = rng.standard_normal(dims).astype(np.float32)
        with open(os.path.join(in_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, info.name).SerializeToString())
        k += 1

    ref, _ = compile_and_run(args, model_path, in_dir, case, "fp32")
    results = []
    for precision, bound in BOUNDS.items():
        outs, stats = compile_and_run(args, model_path, in_dir, case, precision)
        # np.max keeps a NaN (max() may drop it), and the isfinite below fails it.
        rel = float(np.max([np.linalg.norm(o - r) / np.linalg.norm(r) for o, r in zip(outs, ref)]))
        ok = bool(np.isfinite(rel)) and rel <= bound
        shares = stats.get("flop_share_by_precision", {})
        share = ", ".join(f"{k} {v:.1%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
        results.append((ok, f"{name:12s} {precision:6s} rel {rel:.2e} (bound {bound:.0e}) "
                            f"{'ok  ' if ok else 'FAIL'} FLOPs: {share}; "
                            f"casts inserted {stats.get('casts_inserted', 0)}"))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--models", default="mlp,cnn,transformer")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--work-dir", help="keep models, inputs and outputs here (default: a "
                                           "temporary folder, removed afterwards)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", default="x86-64-v3",
                        help="nncc --cpu: a level below the machine's shows modules that only "
                             "load where they were built")
    args = parser.parse_args()

    work, tmp = work_folder(args.work_dir, "nncc-precision-")
    run([sys.executable, MAKE_MODELS, work, "--batch", str(args.batch)], "make_models.py")
    failures = total = 0
    for name in args.models.split(","):
        try:
            results = check_model(name, args, work)
        except Exception as e:  # noqa: BLE001 - report and go on with the next model
            results = [(False, f"{name}: FAIL {e}")]
        for ok, line in results:
            print(line, flush=True)
            failures += not ok
            total += 1
    if tmp:
        tmp.cleanup()
    print(f"{total - failures}/{total} within bounds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
