#!/usr/bin/python3
"""Memory plans of the example models (issue: memory reuse).

Compiles the MLP, CNN and transformer at batch 1 and 32 with `nncc --stats`,
with fusion and without (`--no-fusion`), and checks: the arena is within 5%
of the live lower bound (the most bytes live at one step of the schedule),
and for the CNN and the transformer at batch 32 without fusion the arena is
at most a quarter of the no-reuse size (the sum of all intermediates). With
fusion most intermediates never reach memory, so the no-reuse sum shrinks
and the CNN's arena is dominated by one im2col buffer: that share is printed,
not checked. Prints every figure.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_MODELS = os.path.join(HERE, "..", "..", "examples", "models", "make_models.py")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    ok = True
    for batch in (1, 32):
        folder = os.path.join(args.work_dir, f"batch{batch}")
        subprocess.run([sys.executable, MAKE_MODELS, folder, "--batch", str(batch)], check=True,
                       stdout=subprocess.DEVNULL)
        for model, fusion in [(m, f) for m in ("mlp", "cnn", "transformer") for f in (True, False)]:
            stats = os.path.join(folder, f"{model}{'' if fusion else '-nofusion'}.json")
            subprocess.run([args.nncc, os.path.join(folder, f"{model}.onnx"), "-o",
                            os.path.join(folder, f"{model}.so"), f"--stats={stats}"] +
                           ([] if fusion else ["--no-fusion"]), check=True)
            with open(stats) as f:
                s = json.load(f)
            arena = s["arena_bytes"]["forward"]
            bound = s["live_lower_bound_bytes"]["forward"]
            no_reuse = s["no_reuse_bytes"]["forward"]
            ratio = arena / bound if bound else 1.0
            share = arena / no_reuse if no_reuse else 0.0
            verdict = "ok"
            if ratio > 1.05:
                verdict, ok = "FAIL (arena > 1.05 x lower bound)", False
            if batch == 32 and model != "mlp" and not fusion and share > 0.25:
                verdict, ok = "FAIL (arena > 1/4 of no-reuse)", False
            print(f"{model}{'' if fusion else ' (--no-fusion)'} batch {batch}: arena {arena} B, lower bound {bound} B "
                  f"(x{ratio:.3f}), no reuse {no_reuse} B (arena is {share:.1%}): {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
