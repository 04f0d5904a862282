#!/usr/bin/python3
"""Checks a trace written by the nncc runtime's profiler (NNCC_PROFILE,
nncc-run --profile) against the module that produced it.

    check_trace.py TRACE --module model.so --runtime libnncc_runtime.so
                   [--entry forward] [--runs N]

- TRACE is valid Chrome trace-event JSON, as Perfetto and chrome://tracing
  read it: a top-level object with a "traceEvents" array (or a top-level
  array); every event has name, ph, ts, pid and tid; complete events
  ("ph": "X") have dur >= 0; metadata events name the process and threads.
- Every step of the entry's plan (read from the module through the runtime's
  C API: nncc_module_num_steps, nncc_module_step_info) appears exactly once
  per run, in plan order, named after its ONNX nodes, with the step's kind as
  "cat" and the args kernel, nodes, bytes, device, chunks, run.
- Each step lies inside its run's event ("cat": "run").
- Each collective step has, per run, one "communication" event (its
  all-reduce, from its start to its completion, on the thread that ran it)
  that starts in its step and ends inside the run, and one "wait" event on
  the run's thread, before the step the run waited for it at
  (args.waited_before_step), not before the reduction's completion.
Prints a one-line summary; exits 1 with the problems found otherwise.
"""
import argparse
import ctypes
import json
import sys
from collections import defaultdict


class EntryInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("num_inputs", ctypes.c_int32),
                ("inputs", ctypes.c_void_p), ("num_outputs", ctypes.c_int32),
                ("outputs", ctypes.c_void_p), ("arena_bytes", ctypes.c_int64),
                ("num_steps", ctypes.c_int32)]


class StepInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p),
                ("kernel", ctypes.c_char_p), ("bytes", ctypes.c_int64),
                ("parallel_extent", ctypes.c_int64)]


def plan_steps(runtime, module_path, entry, kind):
    """The entry's steps as dicts, via the runtime's C API."""
    rt = ctypes.CDLL(runtime)
    rt.nncc_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p()
    if rt.nncc_module_load(module_path.encode(), ctypes.byref(handle)) != 0:
        raise SystemExit(f"cannot load {module_path}: {rt.nncc_last_error().decode()}")
    index = ctypes.c_int32()
    if rt.nncc_module_find_entry(handle, entry.encode(), ctypes.byref(index)) != 0:
        raise SystemExit(rt.nncc_last_error().decode())
    info = EntryInfo()
    if rt.nncc_module_entry_info(handle, index, ctypes.byref(info)) != 0:
        raise SystemExit(rt.nncc_last_error().decode())
    steps = []
    rt.nncc_module_num_steps.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32]
    for s in range(rt.nncc_module_num_steps(handle, kind.encode(), index)):
        si = StepInfo()
        if rt.nncc_module_step_info(handle, kind.encode(), index, s, ctypes.byref(si)) != 0:
            raise SystemExit(rt.nncc_last_error().decode())
        steps.append({"name": si.name.decode(), "kind": si.kind.decode(),
                      "kernel": si.kernel.decode(), "bytes": si.bytes})
    rt.nncc_module_release(handle)
    return steps


def check_format(doc, problems):
    """The trace-event format rules; returns the events."""
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            problems.append('top-level object without a "traceEvents" array')
            return []
    elif isinstance(doc, list):
        events = doc
    else:
        problems.append("top level is neither an object nor an array")
        return []
    for i, e in enumerate(events):
        where = f"event {i} ({e.get('name') if isinstance(e, dict) else e!r})"
        if not isinstance(e, dict):
            problems.append(f"{where}: not an object")
            continue
        for key in ("name", "ph", "pid", "tid"):
            if key not in e:
                problems.append(f"{where}: no '{key}'")
        if not isinstance(e.get("ts"), (int, float)):
            problems.append(f"{where}: no numeric 'ts'")
        if e.get("ph") == "M":
            if not isinstance(e.get("args", {}).get("name"), str):
                problems.append(f"{where}: metadata without args.name")
        if e.get("ph") == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                problems.append(f"{where}: complete event with dur {dur!r}")
    names = {e.get("name") for e in events if isinstance(e, dict) and e.get("ph") == "M"}
    for meta in ("process_name", "thread_name"):
        if meta not in names:
            problems.append(f"no '{meta}' metadata event")
    return [e for e in events if isinstance(e, dict)]


def check_steps(events, steps, entry, runs_expected, problems):
    runs = {e["args"]["run"]: e for e in events
            if e.get("ph") == "X" and e.get("cat") == "run" and e["args"].get("entry") == entry}
    by_run = defaultdict(list)
    comm = defaultdict(dict)  # run -> step -> {"communication": event, "wait": event}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") == "run" or e.get("args", {}).get("entry") != entry:
            continue
        if e.get("cat") in ("communication", "wait"):
            got = comm[e["args"]["run"]].setdefault(e["args"]["step"], {})
            if e["cat"] in got:
                problems.append(f"run {e['args']['run']} step {e['args']['step']}: two {e['cat']} events")
            got[e["cat"]] = e
        else:
            by_run[e["args"]["run"]].append(e)
    if runs_expected is not None and len(runs) != runs_expected:
        problems.append(f"{len(runs)} run events of '{entry}', expected {runs_expected}")
    if not runs:
        problems.append(f"no run of '{entry}' in the trace")
    if set(by_run) - set(runs):
        problems.append(f"step events of runs without a run event: {sorted(set(by_run) - set(runs))}")
    for r, run in sorted(runs.items()):
        got = sorted(by_run[r], key=lambda e: e["ts"])
        if len(got) != len(steps):
            problems.append(f"run {r}: {len(got)} step events, the plan has {len(steps)} steps")
        seen = [e["args"]["step"] for e in got]
        if seen != list(range(len(steps))):
            problems.append(f"run {r}: steps {seen[:20]}... are not each plan step once, in order")
            continue
        for e, s in zip(got, steps):
            a = e["args"]
            label = s["name"] or s["kernel"] or s["kind"]
            if e["name"] != label or a.get("nodes") != s["name"]:
                problems.append(f"run {r} step {a['step']}: named {e['name']!r} "
                                f"(nodes {a.get('nodes')!r}), the plan says {s['name']!r}")
            if e.get("cat") != s["kind"] or a.get("kernel") != s["kernel"] \
                    or a.get("bytes") != s["bytes"]:
                problems.append(f"run {r} step {a['step']}: cat/kernel/bytes "
                                f"{e.get('cat')}/{a.get('kernel')}/{a.get('bytes')}, expected "
                                f"{s['kind']}/{s['kernel']}/{s['bytes']}")
            for key in ("device", "chunks"):
                if key not in a:
                    problems.append(f"run {r} step {a['step']}: no args.{key}")
            if e.get("tid") != run.get("tid") or e.get("pid") != run.get("pid"):
                problems.append(f"run {r} step {a['step']}: not on its run's thread")
            # Microseconds with 3 decimals: allow a nanosecond of rounding.
            if e["ts"] < run["ts"] - 1e-3 or \
                    e["ts"] + e["dur"] > run["ts"] + run["dur"] + 2e-3:
                problems.append(f"run {r} step {a['step']}: outside its run's slice")
        check_collectives(r, run, got, steps, comm.get(r, {}), problems)
        if len(problems) > 20:
            break
    return len(runs)


def check_collectives(r, run, got, steps, comm, problems):
    """The communication and wait events of run `r` against its step events `got` (plan order)."""
    collective = [i for i, s in enumerate(steps) if s["kind"] == "collective"]
    if sorted(comm) != collective:
        problems.append(f"run {r}: communication/wait events for steps {sorted(comm)}, "
                        f"the collective steps are {collective}")
        return
    for i in collective:
        c, w = comm[i].get("communication"), comm[i].get("wait")
        if not c or not w:
            problems.append(f"run {r} step {i}: no {'communication' if not c else 'wait'} event")
            continue
        step, before = got[i], c["args"].get("waited_before_step")
        if not isinstance(before, int) or not i < before <= len(steps) or w["args"].get("waited_before_step") != before:
            problems.append(f"run {r} step {i}: waited before step {before!r}")
            continue
        if w.get("tid") != run.get("tid"):
            problems.append(f"run {r} step {i}: the wait is not on the run's thread")
        # Started inside its step; completed before the wait returned; waited
        # for after the step before the one it was waited before, and inside the run.
        ends = lambda e: e["ts"] + e["dur"]  # noqa: E731
        after = got[before - 1]
        if not step["ts"] - 1e-3 <= c["ts"] <= ends(step) + 1e-3:
            problems.append(f"run {r} step {i}: communication starts outside its step")
        if ends(c) > ends(w) + 2e-3 or w["ts"] < ends(after) - 1e-3 or ends(w) > ends(run) + 2e-3 or \
                (before < len(steps) and ends(w) > got[before]["ts"] + 1e-3):
            problems.append(f"run {r} step {i}: communication/wait out of order with steps {before - 1}..{before} "
                            f"and the run")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--module", required=True)
    ap.add_argument("--runtime", required=True, help="libnncc_runtime.so")
    ap.add_argument("--entry", default="forward")
    ap.add_argument("--runs", type=int, help="expected number of runs")
    args = ap.parse_args()
    problems = []
    with open(args.trace, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            raise SystemExit(f"{args.trace}: not valid JSON: {e}")
    events = check_format(doc, problems)
    # The steps of the plan the traced session ran (its device's kind).
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    steps = plan_steps(args.runtime, args.module, args.entry, other.get("plan", "cpu"))
    runs = check_steps(events, steps, args.entry, args.runs, problems)
    if problems:
        print(f"{args.trace}: {len(problems)} problem(s):")
        for p in problems[:40]:
            print("  " + p)
        return 1
    print(f"{args.trace}: valid trace-event JSON, {len(events)} events; every one of the "
          f"{len(steps)} steps of '{args.entry}' appears once in each of {runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
