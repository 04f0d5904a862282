#!/usr/bin/python3
"""If, Loop and Scan built the way exporters build them, against numpy.

    /usr/bin/python3 test/e2e/control_flow_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

- sample-rate If: a voice-activity-style model branches on a scalar input `sr`
  (Equal(sr, 16000)), declared rank 0 as torch exports it; each branch reads
  outer-scope weights. Compiled two ways:
  * inline: `--bind-input sr=...` folds the condition; only the taken branch
    is imported (the nn IR has no nn.where and none of the other branch's
    ops), for sr = 16000 and 8000;
  * predicated: `--shape sr:` (a scalar); both branches run and nn.where picks,
    run with sr = 16000 and 8000 on the same module;
- Loop with a constant trip count (loop-carried state, the iteration number,
  a scan output) and Scan (reverse input direction, scan axis 1), unrolled.
Every module is compiled for the CPU plan (--target=cpu) and the GPU plan
(--emulate-gpu: default targets, PTX assembled when ptxas is found, the GPU
thread mapping run on the CPU); |got - want| <= 1e-5 + 1e-4 |want| against
float64 numpy. Uses Debian's python3-onnx.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from e2e_util import PLANS, compile_for_plan, read_tensor, run, run_checks, work_folder  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5



def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def float_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def sample_rate_model(rng):
    """y = tanh(x W16 + b) at 16 kHz, else sigmoid(mean of sample pairs W8)."""
    w16 = (rng.standard_normal((64, 8)) * 0.2).astype(np.float32)
    b16 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    w8 = (rng.standard_normal((32, 8)) * 0.3).astype(np.float32)
    then_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w16"], ["t0"]),
         helper.make_node("Add", ["t0", "b16"], ["t1"]),
         helper.make_node("Tanh", ["t1"], ["y16"])],
        "at_16k", [], [float_info("y16", [1, 8])])
    else_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["pairs"],
                          value=numpy_helper.from_array(np.array([1, 32, 2], np.int64))),
         helper.make_node("Reshape", ["x", "pairs"], ["e0"]),
         helper.make_node("ReduceMean", ["e0"], ["e1"], axes=[2], keepdims=0),
         helper.make_node("MatMul", ["e1", "w8"], ["e2"]),
         helper.make_node("Sigmoid", ["e2"], ["y8"])],
        "at_8k", [], [float_info("y8", [1, 8])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["k16"],
                          value=numpy_helper.from_array(np.array(16000, np.int64))),
         helper.make_node("Equal", ["sr", "k16"], ["is16k"]),
         helper.make_node("If", ["is16k"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        "vad", [float_info("x", [1, 64]), helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [float_info("y", [1, 8])],
        [numpy_helper.from_array(w16, "w16"), numpy_helper.from_array(b16, "b16"),
         numpy_helper.from_array(w8, "w8")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    def want(x, sr):
        x = x.astype(np.float64)
        if sr == 16000:
            return np.tanh(x @ w16 + b16)
        pooled = x.reshape(1, 32, 2).mean(axis=2)
        return 1 / (1 + np.exp(-(pooled @ w8)))
    return model, want


def loop_scan_model():
    """Loop: acc <- 0.5 acc + i x for i in 0..3, scan output sum(acc) per
    step. Scan: running sum over the columns of s from the last one."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
         helper.make_node("Mul", ["acc", "half"], ["a0"]),
         helper.make_node("Mul", ["x", "fi"], ["a1"]),
         helper.make_node("Add", ["a0", "a1"], ["acc_out"]),
         helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []), float_info("acc", [2, 3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), float_info("acc_out", [2, 3]),
         float_info("total", [])])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["run", "col"], ["run_out"]),
         helper.make_node("Identity", ["run_out"], ["col_out"])],
        "scan_body", [float_info("run", [2]), float_info("col", [2])],
        [float_info("run_out", [2]), float_info("col_out", [2])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["m"], value=numpy_helper.from_array(np.array(4, np.int64))),
         helper.make_node("Constant", [], ["t"], value=numpy_helper.from_array(np.array(True))),
         helper.make_node("Loop", ["m", "t", "x"], ["acc", "totals"], body=body),
         helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.zeros(2, np.float32))),
         helper.make_node("Scan", ["zero", "s"], ["run", "cols"], body=scan_body, num_scan_inputs=1,
                          scan_input_axes=[1], scan_input_directions=[1])],
        "loops", [float_info("x", [2, 3]), float_info("s", [2, 5])],
        [float_info("acc", [2, 3]), float_info("totals", [4]), float_info("run", [2]),
         float_info("cols", [5, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    def want(x, s):
        x, s = x.astype(np.float64), s.astype(np.float64)
        acc, totals = x, []
        for i in range(4):
            acc = 0.5 * acc + i * x
            totals.append(acc.sum())
        run_sum, cols = np.zeros(2), []
        for j in reversed(range(5)):
            run_sum = run_sum + s[:, j]
            cols.append(run_sum)
        return [acc, np.array(totals), run_sum, np.array(cols)]
    return model, want


def compare(folder, wants):
    worst, ok = 0.0, True
    for k, w in enumerate(wants):
        got = read_tensor(os.path.join(folder, f"output_{k}.pb")).astype(np.float64)
        if got.shape != w.shape:
            return False, f"output {k} has shape {got.shape}, numpy {w.shape}"
        err = np.abs(got - w)
        worst = float(np.max([worst, err.max()]))  # np.max keeps a NaN, max() may drop it
        ok &= bool(np.all(err <= ATOL + RTOL * np.abs(w)))
    return ok, f"max abs err {worst:.2e}"


def run_module(args, so, folder, inputs):
    os.makedirs(folder, exist_ok=True)
    for k, (name, a) in enumerate(inputs):
        write_tensor(os.path.join(folder, f"input_{k}.pb"), a, name)
    run([args.nncc_run, so, "--input-dir", folder, "--output-dir", folder], "nncc-run")


def check_inline(args, work, plan, sr):
    rng = np.random.default_rng(args.seed)
    model, want = sample_rate_model(rng)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    folder = os.path.join(work, f"if-inline-{sr}-{plan}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "vad.onnx")
    save(model, path)
    bound = os.path.join(folder, "sr.pb")
    write_tensor(bound, np.array(sr, np.int64), "sr")
    nn = run([args.nncc, path, "--bind-input", f"sr={bound}", "--emit=nn"], "nncc --emit=nn")
    other = "nn.reduce_mean" if sr == 16000 else "nn.tanh"
    if "nn.where" in nn or other in nn:
        return False, f"if inline sr={sr} {plan}: FAIL not inlined (nn.where or {other} left)"
    so = os.path.join(folder, "vad.so")
    compile_for_plan(args.nncc, path, so, plan, ["--bind-input", f"sr={bound}"])
    run_module(args, so, os.path.join(folder, "run"), [("x", x)])
    ok, line = compare(os.path.join(folder, "run"), [want(x, sr)])
    return ok, f"if inline sr={sr} {plan}: {'ok  ' if ok else 'FAIL'} {line}"


def check_predicated(args, work, plan):
    rng = np.random.default_rng(args.seed)
    model, want = sample_rate_model(rng)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    folder = os.path.join(work, f"if-predicated-{plan}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "vad.onnx")
    save(model, path)
    nn = run([args.nncc, path, "--shape", "sr:", "--emit=nn"], "nncc --emit=nn")
    if "nn.where" not in nn:
        return False, f"if predicated {plan}: FAIL no nn.where in the nn IR"
    so = os.path.join(folder, "vad.so")
    compile_for_plan(args.nncc, path, so, plan, ["--shape", "sr:"])
    lines, all_ok = [], True
    for sr in (16000, 8000):
        sub = os.path.join(folder, f"sr{sr}")
        run_module(args, so, sub, [("x", x), ("sr", np.array(sr, np.int64))])
        ok, line = compare(sub, [want(x, sr)])
        all_ok &= ok
        lines.append(f"sr={sr} {line}")
    return all_ok, f"if predicated {plan}: {'ok  ' if all_ok else 'FAIL'} {'; '.join(lines)}"


def check_loops(args, work, plan):
    rng = np.random.default_rng(args.seed + 1)
    model, want = loop_scan_model()
    x = rng.standard_normal((2, 3)).astype(np.float32)
    s = rng.standard_normal((2, 5)).astype(np.float32)
    folder = os.path.join(work, f"loop-scan-{plan}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "loops.onnx")
    save(model, path)
    so = os.path.join(folder, "loops.so")
    compile_for_plan(args.nncc, path, so, plan)
    run_module(args, so, os.path.join(folder, "run"), [("x", x), ("s", s)])
    ok, line = compare(os.path.join(folder, "run"), want(x, s))
    return ok, f"loop+scan {plan}: {'ok  ' if ok else 'FAIL'} {line}"


def check_dynamic_trip_count(args, work):
    """A trip count from a run-time input is refused, naming the Loop."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Neg", ["v"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c", TensorProto.BOOL, []), float_info("v", [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), float_info("v_out", [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="steps")], "dyn",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []), float_info("x", [2])],
        [float_info("y", [2])])
    path = os.path.join(work, "dyn.onnx")
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    p = subprocess.run([args.nncc, path, "--target=cpu", "-o", os.path.join(work, "dyn.so")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ok = p.returncode == 1 and "node 'steps' (Loop)" in p.stdout and "data-dependent" in p.stdout
    return ok, f"loop run-time trip count: {'ok  ' if ok else 'FAIL'} exit {p.returncode}: {p.stdout.strip()}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-control-flow-")
    checks = []
    for plan in PLANS:
        for sr in (16000, 8000):
            checks.append((f"if inline {sr} {plan}", lambda p=plan, s=sr: check_inline(args, work, p, s)))
        checks.append((f"if predicated {plan}", lambda p=plan: check_predicated(args, work, p)))
        checks.append((f"loop+scan {plan}", lambda p=plan: check_loops(args, work, p)))
    checks.append(("loop run-time trip count", lambda: check_dynamic_trip_count(args, work)))
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
