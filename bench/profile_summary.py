#!/usr/bin/python3
"""Where an nncc model's time goes, from a runtime trace (NNCC_PROFILE=trace.json).

    /usr/bin/python3 bench/profile_summary.py trace.json [--skip-runs 1] [--json]

Groups the plan steps of every run after the first --skip-runs by category (gemm, kernel, copy,
...) and by kind of kernel (the outlined kernel's name without its k<N>_ prefix: im2col, bias,
relu, softmax, layer_norm, ...), and prints each group's share of the step time per run. GEMM
steps also get their achieved GFLOP/s. bench/bench.py stores the same summary per model in
results.json ("nncc_profile").
"""
import argparse
import collections
import json
import re


def summarize(path, skip_runs=1):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and "step" in e.get("args", {})]
    runs = sorted({e["args"].get("run", 0) for e in steps})
    keep = set(runs[skip_runs:]) or set(runs)
    steps = [e for e in steps if e["args"].get("run", 0) in keep]
    nruns = max(len(keep), 1)
    by_cat = collections.defaultdict(float)
    by_kind = collections.defaultdict(float)
    count_kind = collections.Counter()
    gemm_flops = 0.0
    gemm_us = 0.0
    for e in steps:
        a = e["args"]
        cat = e.get("cat", "?")
        by_cat[cat] += e["dur"]
        if cat == "kernel":
            kind = re.sub(r"^k\d+_", "", a.get("kernel") or e["name"])
            kind = re.sub(r"_\d+$", "", kind)
        else:
            kind = cat
        by_kind[kind] += e["dur"]
        count_kind[kind] += 1
        if cat == "gemm":
            gemm_flops += float(a.get("flops", 0))
            gemm_us += e["dur"]
    total = sum(by_cat.values())
    per_run_ms = total / nruns / 1000
    out = {
        "runs": nruns,
        "steps_per_run": len(steps) // nruns,
        "step_ms_per_run": per_run_ms,
        "by_category": {k: {"ms": v / nruns / 1000, "share": v / total if total else 0}
                        for k, v in sorted(by_cat.items(), key=lambda kv: -kv[1])},
        "by_kind": {k: {"ms": v / nruns / 1000, "share": v / total if total else 0,
                        "steps_per_run": count_kind[k] // nruns}
                    for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])},
        "gemm_gflops": gemm_flops / (gemm_us * 1e-6) / 1e9 if gemm_us else None,
    }
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip-runs", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    s = summarize(args.trace, args.skip_runs)
    if args.json:
        print(json.dumps(s, indent=1))
        return
    print(f"{s['runs']} runs, {s['steps_per_run']} steps/run, {s['step_ms_per_run']:.3f} ms of steps/run"
          + (f", GEMM steps at {s['gemm_gflops']:.1f} GFLOP/s" if s["gemm_gflops"] else ""))
    for k, v in s["by_kind"].items():
        print(f"  {k:28s} {v['ms']:10.3f} ms {100 * v['share']:5.1f}%  ({v['steps_per_run']} steps)")


if __name__ == "__main__":
    main()
