#!/usr/bin/python3
"""Imports every model of the ONNX backend test data with `nncc --emit=nn`.

Prints the counts per suite and fails when a test listed in the checked-in
pass list no longer imports. `--update` rewrites the list (it may only grow:
review the diff).
"""
import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def import_one(nncc, model):
    proc = subprocess.run([nncc, model, "--emit=nn", "-o", os.devnull],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stderr.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--pass-list", required=True)
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--show-failures", action="store_true")
    parser.add_argument("-j", type=int, default=os.cpu_count())
    args = parser.parse_args()

    models = []
    for suite in SUITES:
        for path in sorted(glob.glob(os.path.join(args.data, suite, "*", "model.onnx"))):
            models.append((suite, os.path.basename(os.path.dirname(path)), path))
    if not models:
        print(f"no backend test models under {args.data}", file=sys.stderr)
        return 1

    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda m: import_one(args.nncc, m[2]), models))

    passed = set()
    counts = {s: [0, 0] for s in SUITES}
    for (suite, name, _), (rc, err) in zip(models, results):
        counts[suite][1] += 1
        if rc == 0:
            counts[suite][0] += 1
            passed.add(f"{suite}/{name}")
        elif args.show_failures:
            print(f"FAIL {suite}/{name}: {err.splitlines()[0] if err else rc}")
    for suite in SUITES:
        print(f"{suite}: {counts[suite][0]} of {counts[suite][1]} import and verify")
    print(f"total: {len(passed)} of {len(models)}")

    expected = set()
    if os.path.exists(args.pass_list):
        with open(args.pass_list) as f:
            expected = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    if args.update:
        with open(args.pass_list, "w") as f:
            f.write("# Backend-suite models that import and verify; this list may only grow.\n")
            for name in sorted(passed | expected):
                f.write(name + "\n")
        print(f"wrote {len(passed | expected)} entries to {args.pass_list}")
    regressions = sorted(expected - passed)
    for name in regressions:
        print(f"REGRESSION: {name} is in the pass list but no longer imports")
    newly = sorted(passed - expected)
    if newly and not args.update:
        print(f"{len(newly)} tests pass that are not in the list yet (run with --update)")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
