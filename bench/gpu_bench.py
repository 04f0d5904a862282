#!/usr/bin/env python3
"""nncc on a GPU against PyTorch eager and torch.compile, same graphs, weights and inputs.

Two halves, because the GPU machine has no MLIR (models are compiled here):

    /usr/bin/python3 bench/gpu_bench.py pack --nncc build/bin/nncc BUNDLE/bench
        (build machine) writes the zoo's MLP, ResNet-style CNN and transformer encoder
        (bench/models.py, batch 1 and 64) compiled for cuda:sm_90, weights in side files
        (identical across batches, so only batch 1's travel), plus the encoder at batch 64
        with --precision=bf16.
    python3 bench/gpu_bench.py run --bundle BUNDLE/bench --nncc-run BUNDLE/bin/nncc-run --out OUT
        (GPU machine: torch, onnx, numpy) rebuilds the same ONNX graphs from bench/models.py
        (seeded weights), runs each with nncc-run --device cuda:0 --bench and with a small
        ONNX interpreter written in torch ops (eager and torch.compile), checks that the
        outputs agree, and writes OUT/gpu_bench.md and OUT/gpu_bench.json: median latencies
        and the ratios nncc / eager and nncc / torch.compile. Both files are rewritten after
        every row, so a run cut short keeps the rows it finished.

torch runs in full f32 (TF32 off for cuBLAS and cuDNN; cuDNN's convolutions default to TF32,
whose 10-bit mantissa would dominate the accuracy comparison), as nncc's f32 plans do.

nncc-run's latency includes copying the inputs to the device and the outputs back (the
runtime API also takes device pointers; nncc-run does not use them); torch's inputs stay on
the device. Both sides are timed after warm-up, one run at a time, synchronized.
"""
import argparse
import datetime
import filecmp
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["mlp", "resnet18", "transformer"]
BATCHES = [1, 64]
# (model, batch, precision) rows; bf16 is issue #7's check (>= 2x its fp32 plan).
ROWS = [(m, b, "fp32") for m in MODELS for b in BATCHES] + [("transformer", 64, "bf16")]


def so_name(model, batch, precision):
    return f"{model}_b{batch}{'' if precision == 'fp32' else '_' + precision}.so"


def pack(args):
    sys.path.insert(0, HERE)
    import models  # noqa: E402  (bench/models.py: numpy + onnx only)
    import onnx

    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for model, batch, precision in ROWS:
            graph = models.MODELS[model](batch, **models.SIZES[model])
            path = os.path.join(tmp, f"{model}_b{batch}.onnx")
            onnx.save(graph, path)
            so = os.path.join(args.out, so_name(model, batch, precision))
            cmd = [args.nncc, path, "-o", so, "--target=cuda:sm_90", "--weights-file",
                   f"--precision={precision}", f"--stats={so}.stats.json"]
            subprocess.run(cmd, check=True)
            first = os.path.join(args.out, so_name(model, BATCHES[0], precision) + ".weights")
            if batch != BATCHES[0] and os.path.exists(first) and \
                    filecmp.cmp(first, so + ".weights", shallow=False):
                # The same seeded weights: the run half links batch 1's file in.
                os.remove(so + ".weights")
            print(f"packed {so}")


# --- the GPU half -------------------------------------------------------------------------

def torch_interpreter(graph, device):
    """Returns a function running `graph` (an onnx.GraphProto) with torch ops on `device`."""
    import torch
    from onnx import numpy_helper

    F = torch.nn.functional
    weights = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).to(device)
               for t in graph.initializer}

    def attr(node, name, default=None):
        for a in node.attribute:
            if a.name == name:
                import onnx
                return onnx.helper.get_attribute_value(a)
        return default

    def conv(node, x, w, b=None):
        pads = attr(node, "pads", [0] * (2 * (x.dim() - 2)))
        half = len(pads) // 2
        if pads[:half] != pads[half:]:
            x = F.pad(x, [p for i in reversed(range(half)) for p in (pads[i], pads[i + half])])
            pads = [0] * len(pads)
        return F.conv2d(x, w, b, stride=attr(node, "strides", [1, 1]), padding=pads[:half],
                        dilation=attr(node, "dilations", [1, 1]), groups=attr(node, "group", 1))

    def max_pool(node, x):
        pads = attr(node, "pads", [0, 0, 0, 0])
        return F.max_pool2d(x, attr(node, "kernel_shape"), stride=attr(node, "strides"),
                            padding=pads[:2])

    def gemm(node, a, b, c=None):
        a = a.t() if attr(node, "transA", 0) else a
        b = b.t() if attr(node, "transB", 0) else b
        y = attr(node, "alpha", 1.0) * (a @ b)
        return y if c is None else y + attr(node, "beta", 1.0) * c

    def layer_norm(node, x, scale, bias=None):
        axis = attr(node, "axis", -1) % x.dim()
        return F.layer_norm(x, x.shape[axis:], scale, bias, eps=attr(node, "epsilon", 1e-5))

    def batch_norm(node, x, scale, bias, mean, var):
        return F.batch_norm(x, mean, var, scale, bias, False, 0.0, attr(node, "epsilon", 1e-5))

    def split(node, x, sizes=None):
        axis = attr(node, "axis", 0)
        if sizes is None:
            return torch.chunk(x, len(node.output), axis)
        return torch.split(x, sizes.tolist(), axis)

    ops = {
        "Add": lambda n, a, b: a + b, "Sub": lambda n, a, b: a - b,
        "Mul": lambda n, a, b: a * b, "Div": lambda n, a, b: a / b,
        "Pow": lambda n, a, b: torch.pow(a, b), "Sqrt": lambda n, x: torch.sqrt(x),
        "Relu": lambda n, x: torch.relu(x), "Erf": lambda n, x: torch.erf(x),
        "Tanh": lambda n, x: torch.tanh(x), "Sigmoid": lambda n, x: torch.sigmoid(x),
        "Clip": lambda n, x, lo=None, hi=None: torch.clamp(x, lo, hi),
        "MatMul": lambda n, a, b: a @ b, "Gemm": gemm, "Conv": conv,
        "BatchNormalization": batch_norm, "LayerNormalization": layer_norm,
        "MaxPool": max_pool,
        "GlobalAveragePool": lambda n, x: x.mean(dim=(2, 3), keepdim=True),
        "Flatten": lambda n, x: x.flatten(attr(n, "axis", 1)),
        "Reshape": lambda n, x, s: x.reshape([int(d) for d in s.tolist()]),
        "Transpose": lambda n, x: x.permute(attr(n, "perm")),
        "Softmax": lambda n, x: torch.softmax(x, attr(n, "axis", -1)),
        "ReduceMean": lambda n, x: x.mean(dim=attr(n, "axes"), keepdim=bool(attr(n, "keepdims", 1))),
        "Where": lambda n, c, a, b: torch.where(c, a, b),
        "Split": split,
    }

    def run(*inputs):
        env = dict(weights)
        for value, info in zip(inputs, graph.input):
            env[info.name] = value
        for node in graph.node:
            if node.op_type == "Constant":
                env[node.output[0]] = torch.from_numpy(
                    numpy_helper.to_array(attr(node, "value")).copy()).to(device)
                continue
            if node.op_type not in ops:
                raise NotImplementedError(f"torch interpreter: no {node.op_type} (node {node.name})")
            out = ops[node.op_type](node, *[env[i] if i else None for i in node.input])
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for name, value in zip(node.output, outs):
                env[name] = value
        return tuple(env[o.name] for o in graph.output)

    return run


def time_torch(fn, inputs, runs):
    import torch
    with torch.no_grad():
        for _ in range(5):
            fn(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn(*inputs)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def write_results(out, rows, runs):
    """OUT/gpu_bench.md and OUT/gpu_bench.json for the rows so far."""
    import torch
    gpu = torch.cuda.get_device_name(0)
    fmt = lambda v, p=".3f": "-" if v is None else format(v, p)  # noqa: E731
    lines = [f"GPU benchmark, {datetime.date.today()}, {gpu}, torch {torch.__version__} (TF32 off); "
             f"median of {runs} runs (ms); nncc includes host<->device copies of inputs/outputs.", "",
             "| model | batch | precision | nncc | torch eager | torch.compile | nncc/eager | "
             "nncc/compile | rel. L2 vs torch |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {r['precision']} | {fmt(r.get('nncc_ms'))} | "
                     f"{fmt(r.get('eager_ms'))} | {fmt(r.get('compile_ms'))} | "
                     f"{fmt(r.get('nncc_over_eager'), '.2f')} | {fmt(r.get('nncc_over_compile'), '.2f')} | "
                     f"{fmt(r.get('rel_l2_vs_torch'), '.1e')} |")
    for r in rows:
        if "speedup_vs_fp32_plan" in r:
            lines.append(f"\n{r['model']} batch {r['batch']}: {r['precision']} plan "
                         f"{r['speedup_vs_fp32_plan']:.2f}x faster than the fp32 plan.")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "gpu_bench.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "gpu_bench.json"), "w") as f:
        json.dump({"gpu": gpu, "date": str(datetime.date.today()), "rows": rows}, f, indent=1)
    return text


def run(args):
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    sys.path.insert(0, HERE)
    import models  # noqa: E402

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    for model in MODELS:  # batch 1's weights serve every batch
        for batch in BATCHES[1:]:
            target = os.path.join(args.bundle, so_name(model, batch, "fp32") + ".weights")
            if not os.path.exists(target):
                os.symlink(so_name(model, BATCHES[0], "fp32") + ".weights", target)
    rows, fp32_ms = [], {}
    for model, batch, precision in ROWS:
        graph = models.MODELS[model](batch, **models.SIZES[model]).graph
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
                  .astype(np.float32) for i in graph.input]
        work = tempfile.mkdtemp(prefix="nncc-gpu-bench-")
        for k, (value, info) in enumerate(zip(inputs, graph.input)):
            with open(os.path.join(work, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, info.name).SerializeToString())
        out_dir = os.path.join(work, "out")
        os.makedirs(out_dir)
        so = os.path.join(args.bundle, so_name(model, batch, precision))
        proc = subprocess.run([args.nncc_run, so, "--device", "cuda:0", "--input-dir", work,
                               "--output-dir", out_dir, "--bench", str(args.runs)],
                              capture_output=True, text=True)
        row = {"model": model, "batch": batch, "precision": precision}
        match = re.search(r"median ([0-9.eE+-]+) ms", proc.stdout)
        if proc.returncode != 0 or not match:
            row["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
            rows.append(row)
            write_results(args.out, rows, args.runs)
            print(f"{model} b{batch} {precision}: nncc failed: {row['error']}", flush=True)
            continue
        row["nncc_ms"] = float(match.group(1))
        if precision == "fp32":
            fp32_ms[(model, batch)] = row["nncc_ms"]
        elif (model, batch) in fp32_ms:
            row["speedup_vs_fp32_plan"] = fp32_ms[(model, batch)] / row["nncc_ms"]
        got = [numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, f"output_{k}.pb")))
               for k in range(len(graph.output))]
        fn = torch_interpreter(graph, "cuda")
        tin = [torch.from_numpy(x).cuda() for x in inputs]
        with torch.no_grad():
            ref = [t.float().cpu().numpy() for t in fn(*tin)]
        row["rel_l2_vs_torch"] = max(float(np.linalg.norm(g.astype(np.float32) - r) /
                                           max(np.linalg.norm(r), 1e-30)) for g, r in zip(got, ref))
        row["eager_ms"] = time_torch(fn, tin, args.runs)
        row["nncc_over_eager"] = row["nncc_ms"] / row["eager_ms"]
        if not args.no_compile:
            try:
                compiled = torch.compile(fn)
                row["compile_ms"] = time_torch(compiled, tin, args.runs)
                row["nncc_over_compile"] = row["nncc_ms"] / row["compile_ms"]
            except Exception as e:  # noqa: BLE001 (reported in the table)
                row["compile_error"] = str(e).splitlines()[0][:120]
        rows.append(row)
        write_results(args.out, rows, args.runs)
        print(json.dumps(row), flush=True)

    print(write_results(args.out, rows, args.runs))
    # Outputs must agree (bf16 to its precision).
    bad = [r for r in rows if "error" in r or
           r.get("rel_l2_vs_torch", 0) > (2e-2 if r["precision"] == "bf16" else 1e-3)]
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="half", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--nncc", required=True)
    p.add_argument("out")
    r = sub.add_parser("run")
    r.add_argument("--bundle", required=True)
    r.add_argument("--nncc-run", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--runs", type=int, default=50)
    r.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = parser.parse_args()
    return pack(args) if args.half == "pack" else run(args)


if __name__ == "__main__":
    sys.exit(main())
