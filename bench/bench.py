#!/usr/bin/python3
"""Benchmark driver: nncc (default targets, run on the CPU) against onnxruntime on the bench/models.py zoo.

    /usr/bin/python3 bench/bench.py [--out bench/out] [--models a,b] [--batches 1,32]
                                    [--budget SECONDS] [--threads 1] [--update-docs]

bench/run.sh builds what this needs and calls it; see docs/performance.md. For every model and
batch it
  1. compiles the model with `nncc --cpu=native --stats` (default targets) under /usr/bin/time -v (wall time, peak RSS, phases);
  2. starts two long-lived harnesses, bench/out/bin/nncc_bench (C++, the runtime API) and
     `node bench/ort_bench.js` (onnxruntime-node), each with its own session on the same inputs;
  3. warms both up, then alternates blocks of timed runs between them (ABBA order), so that
     both see the same machine state, until each has spent about --budget seconds;
  4. saves both outputs and compares them; reads each process's peak RSS (VmHWM);
and finally prints a table and writes bench/results.json (all raw times included).
"""
import argparse
import datetime
import json
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import models as zoo_models  # noqa: E402
import profile_summary  # noqa: E402

CMD_TIMEOUT_S = 180


# ---------------------------------------------------------------------------------------------
# Harness processes


class HarnessError(RuntimeError):
    pass


class Harness:
    """One bench process speaking the line protocol of nncc_bench.cpp / ort_bench.js."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
        self.ready = self._parse_kv(self._expect("ready"))

    def _readline(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], CMD_TIMEOUT_S)
        if not ready:
            self.kill()
            raise HarnessError(f"{self.name}: no answer within {CMD_TIMEOUT_S} s")
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().strip()
            self.proc.wait()
            raise HarnessError(f"{self.name}: exited with status {self.proc.returncode}"
                               + (f": {err[-2000:]}" if err else ""))
        return line.rstrip("\n")

    def _expect(self, word):
        line = self._readline()
        if line.startswith("error "):
            err = line[len("error "):]
            self.kill()
            raise HarnessError(f"{self.name}: {err}")
        if not line.startswith(word):
            raise HarnessError(f"{self.name}: expected '{word}', got '{line[:200]}'")
        return line[len(word):].strip()

    @staticmethod
    def _parse_kv(text):
        out = {}
        for item in text.split():
            k, _, v = item.partition("=")
            out[k] = float(v)
        return out

    def command(self, cmd, word):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._expect(word)

    def run(self, n):
        return [float(x) for x in self.command(f"run {n}", "times").split()]

    def save(self, d):
        os.makedirs(d, exist_ok=True)
        self.command(f"save {d}", "saved")

    def mem(self):
        return self._parse_kv(self.command("mem", "mem"))

    def quit(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except Exception:
            self.kill()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------------------------------
# Helpers


def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def machine_info():
    cpu = "unknown"
    out = sh(["lscpu"]).stdout
    m = re.search(r"^Model name:\s*(.+)$", out, re.M)
    if m:
        cpu = m.group(1).strip()
    flags = re.search(r"^Flags:\s*(.+)$", out, re.M)
    isa = [f for f in ("avx2", "fma", "avx512f") if flags and f in flags.group(1).split()]
    ort_version = "?"
    try:
        with open(os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")) as f:
            ort_version = json.load(f)["version"]
    except OSError:
        pass
    mem_kb = 0
    with open("/proc/meminfo") as f:
        m = re.search(r"MemTotal:\s+(\d+)", f.read())
        mem_kb = int(m.group(1)) if m else 0
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "isa": isa,
        "memory_gib": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nncc_commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip(),
        "nncc_tree_dirty": bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--",
                                    "lib", "dialects", "passes", "runtime", "tools"]).stdout.strip()),
        "onnxruntime_node": ort_version,
        "node": sh(["node", "--version"]).stdout.strip(),
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


AVX2_GLIBC_TUNABLES = ("glibc.cpu.hwcaps=-AVX512F,-AVX512CD,-AVX512BW,-AVX512DQ,-AVX512VL,"
                       "-AVX512_VBMI,-AVX512_VBMI2,-AVX512_VNNI,-AVX512_FP16")


def save_relu_model(path):
    """A one-op model, Relu on 16 floats: the harness floor and the CPUID probe."""
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def masked_isa(nncc, nncc_run, zoo_dir):
    """The vector ISA that --cpu=native resolves to under the CPUID mask, read
    from a module compiled with it; exits if AVX-512 shows through."""
    probe = os.path.join(zoo_dir, "cpuid_probe")
    save_relu_model(probe + ".onnx")
    r = sh([nncc, probe + ".onnx", "-o", probe + ".so", "--cpu=native"])
    info = sh([nncc_run, "--info", probe + ".so"])
    needs = re.search(r"needs ([^)]*)\)", info.stdout)
    if r.returncode != 0 or not needs:
        sys.exit(f"bench: --as-avx2: the CPUID probe failed:\n{r.stderr}{info.stderr}")
    features = needs.group(1).split(",")
    if any(f.startswith("avx512") for f in features):
        sys.exit("bench: --as-avx2: AVX-512 still shows through the CPUID mask: " + ",".join(features))
    return [f for f in ("avx2", "fma") if f in features]


def sgemm_rate(bin_dir):
    try:
        r = sh([os.path.join(bin_dir, "sgemm"), "1024", "20"])
    except OSError as e:
        return {"error": str(e)}
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout)


def parse_time_v(text):
    out = {}
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["peak_rss_kb"] = int(m.group(1))
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if m:
        secs = 0.0
        for part in m.group(1).split(":"):
            secs = secs * 60 + float(part)
        out["wall_s"] = secs
    return out


def compile_model(nncc, onnx_path, so_path, stats_path):
    t0 = time.monotonic()
    # The default targets, as a user builds: the module carries a CPU plan
    # (direct convolution kernels) and, where the CUDA toolkit is found, a
    # CUDA plan (im2col + cuBLASLt); the CPU session runs the CPU plan.
    # --cpu=native: onnxruntime picks its kernels for this machine's CPU at
    # run time, so nncc's host code is compiled for it too (the default,
    # x86-64-v3, is for modules that travel). Under --as-avx2 native is the
    # CPU that the CPUID mask shows: AVX2.
    r = sh(["/usr/bin/time", "-v", nncc, onnx_path, "-o", so_path, "--cpu=native",
            f"--stats={stats_path}"])
    wall = time.monotonic() - t0
    info = parse_time_v(r.stderr)
    info.setdefault("wall_s", wall)
    if r.returncode != 0:
        # /usr/bin/time appends its report; keep nncc's own message.
        msg = r.stderr.split("\tCommand being timed:")[0].strip()
        info["error"] = msg or f"nncc exited with status {r.returncode}"
        return info
    with open(stats_path) as f:
        info["stats"] = json.load(f)
    return info


def make_inputs(entry, in_dir):
    os.makedirs(in_dir, exist_ok=True)
    rng = np.random.default_rng(1234)
    for k, inp in enumerate(entry["inputs"]):
        dims = inp["dims"]
        if inp["name"] == "attention_mask":
            # 1 = attend, 0 = padding: each sequence keeps a random prefix of at least half.
            batch, seq = dims
            keep = rng.integers(seq // 2, seq + 1, size=batch)
            value = (np.arange(seq)[None, :] < keep[:, None]).astype(np.float32)
        else:
            value = rng.standard_normal(dims).astype(np.float32)
        value.tofile(os.path.join(in_dir, f"input_{k}.bin"))


def train_step_time(nncc, nncc_run, entry, zoo_dir, tag, in_root, threads, env):
    """Training next to inference: the model compiled with --train (mse
    against a random target of the output's shape, SGD, every float
    initializer trainable), train_step and forward of that module timed by
    nncc-run --bench on one thread. onnxruntime-node has no training, so
    this is nncc against itself."""
    from onnx import numpy_helper
    so = os.path.join(zoo_dir, tag + ".train.so")
    stats = os.path.join(zoo_dir, tag + ".train.stats.json")
    r = sh([nncc, entry["path"], "--train", "--loss=mse", "--cpu=native", f"--stats={stats}",
            "-o", so])
    if r.returncode != 0:
        return {"error": r.stderr.strip()}
    with open(stats) as f:
        st = json.load(f)
    rng = np.random.default_rng(99)
    timing = {}
    for name, values in (("forward", [inp for inp in entry["inputs"]]),
                         ("train_step", entry["inputs"] + [dict(o, name="labels") for o in entry["outputs"][:1]]
                          + [{"name": "lr", "dims": []}])):
        d = os.path.join(in_root, tag + "." + name)
        os.makedirs(d, exist_ok=True)
        for k, inp in enumerate(values):
            if inp["name"] == "lr":
                value = np.array(1e-6, np.float32)  # small: the timed steps keep the weights sane
            elif inp["name"] == "attention_mask":
                value = np.ones(inp["dims"], np.float32)
            else:
                value = rng.standard_normal(inp["dims"]).astype(np.float32)
            with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, inp["name"]).SerializeToString())
        r = sh([nncc_run, so, "--entry", name, "--input-dir", d, "--bench", "20", "--threads", str(threads)], env=env)
        m = re.search(r"median ([0-9.e+-]+) ms", r.stdout)
        if r.returncode != 0 or not m:
            return {"error": (r.stderr or r.stdout).strip()}
        timing[name + "_ms"] = float(m.group(1))
    timing["ratio"] = timing["train_step_ms"] / timing["forward_ms"]
    timing["saved_for_backward_mb"] = (st.get("saved_for_backward_bytes") or {}).get("train_step", 0) / 2**20
    timing["arena_mb"] = (st.get("arena_bytes") or {}).get("train_step", 0) / 2**20
    return timing


def train_rows(results):
    rows = ["| model | batch | forward ms | train_step ms | train / forward | kept for backward | train_step arena |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        t = r.get("training") or {}
        if "error" in t or not t:
            rows.append(f"| {r['model']} | {r['batch']} | – | {'fails: ' + t['error'][:60] if t else '–'} | | | |")
            continue
        rows.append(f"| {r['model']} | {r['batch']} | {t['forward_ms']:.3g} | {t['train_step_ms']:.3g} | "
                    f"{t['ratio']:.2f} | {t['saved_for_backward_mb']:.1f} MB | {t['arena_mb']:.1f} MB |")
    return rows


def compare(entry, nncc_dir, ort_dir):
    """max |a-b|, that relative to max|ort|, and elementwise max |a-b|/|b| over |b| >= 1e-3 max|b|.

    Passes when every element satisfies |a-b| <= 1e-3 |b| + 1e-4 max|b|."""
    worst = {"max_abs_err": 0.0, "max_rel_err": 0.0, "max_scaled_err": 0.0, "pass": True}
    for k, out in enumerate(entry["outputs"]):
        a = np.fromfile(os.path.join(nncc_dir, f"output_{k}.bin"), np.float32)
        b = np.fromfile(os.path.join(ort_dir, f"output_{k}.bin"), np.float32)
        if a.size != b.size:
            return {"pass": False, "error": f"output '{out['name']}': {a.size} vs {b.size} elements"}
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            worst["nonfinite"] = int((~np.isfinite(a)).sum() + (~np.isfinite(b)).sum())
            worst["pass"] = False
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        scale = float(np.abs(b).max()) or 1.0
        big = np.abs(b) >= 1e-3 * scale
        worst["max_abs_err"] = max(worst["max_abs_err"], float(diff.max()))
        worst["max_scaled_err"] = max(worst["max_scaled_err"], float(diff.max()) / scale)
        if big.any():
            worst["max_rel_err"] = max(worst["max_rel_err"], float((diff[big] / np.abs(b[big])).max()))
        if not (diff <= 1e-3 * np.abs(b) + 1e-4 * scale).all():
            worst["pass"] = False
    return worst


def nncc_profile(argv, env, trace, median_ms):
    """Runs the nncc harness once more with NNCC_PROFILE set; summarizes all runs but the first."""
    if os.path.exists(trace):
        os.remove(trace)
    h = Harness("nncc (profiled)", argv, dict(env, NNCC_PROFILE=trace))
    try:
        h.run(1 + max(2, min(10, int(1000 / max(median_ms, 1e-3)))))
    finally:
        h.quit()
    if not os.path.exists(trace):
        return {"error": "no trace written (this runtime build has no NNCC_PROFILE support?)"}
    return profile_summary.summarize(trace, skip_runs=1)


def ort_optimized_ops(node, model, in_dir, dest):
    """The op types of the graph onnxruntime runs after its optimizations (optimizedModelFilePath)."""
    import collections
    import onnx
    r = sh([node, os.path.join(HERE, "ort_bench.js"), model, in_dir, "--dump-optimized", dest],
           timeout=CMD_TIMEOUT_S)
    if r.returncode != 0 or not os.path.exists(dest):
        return {"error": (r.stderr or r.stdout).strip()[-500:]}
    m = onnx.load(dest, load_external_data=False)
    os.remove(dest)
    c = collections.Counter(("" if n.domain in ("", "ai.onnx") else n.domain + ":") + n.op_type
                            for n in m.graph.node)
    return dict(c.most_common())


def summarize(times):
    t = sorted(times)
    q = lambda p: float(np.percentile(t, p))
    return {"runs": len(t), "median_ms": statistics.median(t), "min_ms": t[0], "max_ms": t[-1],
            "p10_ms": q(10), "p90_ms": q(90)}


def bench_pair(harnesses, budget_s, warmup_s=0.3):
    """Warm-up, then ABBA-interleaved blocks of runs until each engine spent ~budget_s."""
    est = {}
    for name, h in harnesses.items():
        times, t0 = [], time.monotonic()
        while len(times) < 2 or (time.monotonic() - t0 < warmup_s and len(times) < 200):
            times += h.run(1)
        est[name] = min(times[-3:])
    # Blocks of ~0.05 s (at least one run), so that both engines see the same disturbances from
    # whatever else runs on the machine; at least 6 rounds, ~budget_s in all per engine.
    block = {n: max(1, min(200, int(0.05 / max(t / 1000, 1e-6)))) for n, t in est.items()}
    per_block_s = max(block[n] * est[n] / 1000 for n in est)
    rounds = max(6, min(400, int(budget_s / max(per_block_s, 1e-6))))
    times = {n: [] for n in harnesses}
    blocks = {n: [] for n in harnesses}
    names = list(harnesses)
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            t = harnesses[n].run(block[n])
            times[n] += t
            blocks[n].append(statistics.median(t))
    plan = {"block_runs": block, "rounds": rounds}
    if len(names) == 2:
        # Ratio of each round's block medians, then the median over rounds: robust to drift.
        plan["ratio_paired"] = statistics.median(a / b for a, b in zip(blocks[names[0]], blocks[names[1]]))
    return times, plan


# ---------------------------------------------------------------------------------------------
# Table


def fmt_ms(s):
    if s is None:
        return "—"
    m = s["median_ms"]
    digits = 3 if m < 1 else 2 if m < 10 else 1 if m < 100 else 0
    f = lambda v: f"{v:.{digits}f}"
    return f"{f(m)} [{f(s['p10_ms'])}–{f(s['p90_ms'])}]"


def table_rows(results, ceiling):
    head = ("| model | batch | nncc ms [p10–p90] | ORT ms [p10–p90] | nncc/ORT (paired) | GFLOP/run | "
            "GFLOP/s nncc / ORT (% sgemm) | ΔRSS MB nncc / ORT | max rel err | status |")
    rows = [head, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in results:
        n, o = r.get("nncc"), r.get("ort")
        ratio = f"**{r['ratio']:.2f}**" if r.get("ratio") else "—"
        if r.get("ratio") and "ratio_paired" in r.get("interleave", {}):
            ratio += f" ({r['interleave']['ratio_paired']:.2f})"
        flops = r.get("flops_per_run")
        gf = lambda s: flops / (s["median_ms"] / 1000) / 1e9 if flops and s else None
        if flops:
            gn, go = gf(n), gf(o)
            pct = lambda g: f" ({100 * g / ceiling:.0f}%)" if g is not None and ceiling else ""
            rate = (f"{gn:.1f}{pct(gn)}" if gn is not None else "—") + " / " + \
                   (f"{go:.1f}{pct(go)}" if go is not None else "—")
            fl = f"{flops / 1e9:.3g}"
        else:
            rate, fl = "—", "—"
        mem = lambda e: f"{r[e + '_mem']['delta_mb']:.0f}" if r.get(e + "_mem") else "—"
        cmp_ = r.get("compare") or {}
        err = f"{cmp_['max_rel_err']:.1e}" if "max_rel_err" in cmp_ else "—"
        status = r.get("status", "ok")
        rows.append(f"| {r['model']} | {r['batch']} | {fmt_ms(n)} | {fmt_ms(o)} | {ratio} | {fl} | "
                    f"{rate} | {mem('nncc')} / {mem('ort')} | {err} | {status} |")
    return rows


def compile_rows(results):
    phases = ["import", "simplify", "exec", "plan", "llvm", "link"]
    rows = ["| model | batch | nncc wall s | peak RSS MB | " + " | ".join(phases) + " | kernels | GEMM calls | arena MB | weights MB |",
            "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in phases) + " | ---: | ---: | ---: | ---: |"]
    for r in results:
        c = r.get("compile", {})
        st = c.get("stats", {})
        ph = st.get("phase_seconds", {})
        arena = (st.get("arena_bytes") or {}).get("forward")
        if "error" in c:
            rows.append(f"| {r['model']} | {r['batch']} | fails after {c.get('wall_s', 0):.2f} s | "
                        + " | ".join("—" for _ in range(len(phases) + 5)) + " |")
            continue
        rows.append(
            f"| {r['model']} | {r['batch']} | {c.get('wall_s', 0):.2f} | "
            f"{c.get('peak_rss_kb', 0) / 1024:.0f} | "
            + " | ".join(f"{ph[p]:.2f}" if p in ph else "—" for p in phases)
            + f" | {st.get('kernels', '—')} | {st.get('library_calls', '—')} | "
            + (f"{arena / 2**20:.1f}" if arena is not None else "—") + " | "
            + (f"{st['weight_bytes'] / 2**20:.1f}" if "weight_bytes" in st else "—") + " |")
    return rows


def profile_rows(results):
    rows = ["| model | batch | nncc: share of step time by kind (NNCC_PROFILE) | nncc GEMM steps GFLOP/s | "
            "onnxruntime: ops after its graph optimizations |",
            "| --- | ---: | --- | ---: | --- |"]
    for r in results:
        p = r.get("nncc_profile") or {}
        split = ", ".join(f"{k} {100 * v['share']:.0f}%" for k, v in list(p.get("by_kind", {}).items())[:5]
                          if v["share"] >= 0.01) or p.get("error", "—")
        g = f"{p['gemm_gflops']:.1f}" if p.get("gemm_gflops") else "—"
        ops = r.get("ort_ops") or {}
        ort = ", ".join(f"{k}×{v}" for k, v in ops.items() if k not in ("Reshape", "Flatten")) \
            if "error" not in ops else ops["error"][:100]
        rows.append(f"| {r['model']} | {r['batch']} | {split} | {g} | {ort or '—'} |")
    return rows


def render_short(doc):
    """The README's version: latency and ratio only."""
    m = doc["machine"]
    lines = [f"Single thread, {m['cpu']} ({m['cores']} cores; {', '.join(m['isa'])}), {m['date']}; median ms, "
             f"onnxruntime-node {m['onnxruntime_node']} with all graph optimizations; outputs agree "
             "unless marked. Method, spread, memory, FLOP rates, compile times and the reasons for "
             "each gap: `docs/performance.md`.", "",
             "| model | batch | nncc ms | onnxruntime ms | nncc/ORT |", "| --- | ---: | ---: | ---: | ---: |"]
    for r in doc["results"]:
        n, o = r.get("nncc"), r.get("ort")
        f = lambda s: "—" if not s else (f"{s['median_ms']:.3f}" if s["median_ms"] < 1 else
                                         f"{s['median_ms']:.2f}" if s["median_ms"] < 10 else
                                         f"{s['median_ms']:.1f}" if s["median_ms"] < 100 else
                                         f"{s['median_ms']:.0f}")
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "—"
        st = r.get("status", "ok")
        mark = "" if st in ("ok", "slower than 1.5×") else f" ({st.strip('*')})"
        lines.append(f"| {r['model']} | {r['batch']} | {f(n)} | {f(o)} | {ratio}{mark} |")
    return "\n".join(lines)


def render_markdown(doc):
    m = doc["machine"]
    ceiling = doc["sgemm_gflops"]
    sg = ", ".join(f"{s.get('median_gflops', 0):.1f}" for s in doc["sgemm"])
    lines = [
        f"Measured {m['date']} on {m['cpu']} ({m['cores']} cores, {m['memory_gib']} GiB; "
        f"{', '.join(m['isa'])}), nncc {m['nncc_commit']}{' + local changes' if m['nncc_tree_dirty'] else ''}, "
        f"onnxruntime-node {m['onnxruntime_node']} (node {m['node']}); single thread; "
        f"load average {doc['loadavg_start'][0]:.1f} at start, {doc['loadavg_end'][0]:.1f} at end; "
        f"OpenBLAS sgemm 1024³ single thread (kernels {doc['sgemm'][0].get('kernels') or '?'}; the ceiling "
        f"for the % column): {ceiling:.1f} GFLOP/s, "
        f"the best of 20 calls before and after the models (medians {sg}). "
        f"bench/run.sh took {doc.get('total_seconds', 0):.0f} s.",
        "",
    ]
    if doc["settings"].get("as_avx2"):
        lines[-1:-1] = ["", "**As an AVX2 machine** (`--as-avx2`): every process ran with CPUID's AVX-512 bits "
                            "cleared, so onnxruntime, OpenBLAS, nncc's runtime and `--cpu=native` all chose "
                            "their AVX2 code on these cores."]
    lines += table_rows(doc["results"], ceiling)
    fails = [r for r in doc["results"] if r.get("error")]
    if fails:
        lines.append("")
        for r in fails:
            lines.append(f"- {r['model']} b{r['batch']}: `{r['error'].splitlines()[0][:300]}`")
    return "\n".join(lines)


def replace_block(path, tag, text):
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    with open(path) as f:
        content = f.read()
    if begin not in content or end not in content:
        print(f"note: {path} has no {begin} ... {end} block; not updated")
        return
    pre, rest = content.split(begin, 1)
    _, post = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(pre + begin + "\n" + text + "\n" + end + post)
    print(f"updated {os.path.relpath(path, ROOT)}")


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--bin-dir", default=os.path.join(HERE, "out", "bin"),
                    help="where run.sh built nncc_bench and sgemm")
    ap.add_argument("--models", default=",".join(zoo_models.MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--budget", type=float, default=4.0,
                    help="seconds of timed runs per engine per model (at least 6 blocks)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--results", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--update-docs", action="store_true",
                    help="rewrite the bench tables in docs/performance.md and README.md")
    ap.add_argument("--no-profile", dest="profile", action="store_false",
                    help="skip the per-model NNCC_PROFILE run and onnxruntime's optimized-graph dump")
    ap.add_argument("--started", type=float, default=None, help="epoch seconds run.sh started")
    ap.add_argument("--as-avx2", action="store_true",
                    help="this AVX-512 machine as an AVX2 one, for both engines: every process runs with "
                         "CPUID's AVX-512 bits cleared (bench/cpuid_as_avx2.c, preloaded; needs the CPU's "
                         "cpuid_fault), so onnxruntime, OpenBLAS, nncc's runtime and --cpu=native choose "
                         "their AVX2 code. Writes bench/out/results-as-avx2.json unless --results is given; "
                         "--update-docs writes the AVX2 tables")
    args = ap.parse_args()
    if args.as_avx2 and args.results == os.path.join(HERE, "results.json"):
        args.results = os.path.join(os.path.abspath(args.out), "results-as-avx2.json")
    if args.as_avx2:
        # Before any child starts: every process (the compiler, both engines, the
        # sgemm probe) sees an AVX2 CPU. GLIBC_TUNABLES does the same for glibc's
        # string functions, which choose their variants before the preload runs.
        shim = os.path.join(os.path.abspath(args.bin_dir), "cpuid_as_avx2.so")
        os.environ["LD_PRELOAD"] = ":".join(filter(None, [shim, os.environ.get("LD_PRELOAD")]))
        os.environ["GLIBC_TUNABLES"] = ":".join(filter(None, [AVX2_GLIBC_TUNABLES, os.environ.get("GLIBC_TUNABLES")]))

    t_start = args.started or time.time()
    out = os.path.abspath(args.out)
    bin_dir = os.path.abspath(args.bin_dir)
    nncc = os.path.join(args.build_dir, "bin", "nncc")
    zoo_dir = os.path.join(out, "zoo")
    os.makedirs(zoo_dir, exist_ok=True)
    os.makedirs(os.path.join(out, "prof"), exist_ok=True)
    os.makedirs(os.path.join(out, "ort_opt"), exist_ok=True)

    doc = {"machine": machine_info(), "threads": args.threads, "loadavg_start": loadavg(),
           "settings": {"budget_s_per_engine": args.budget, "threads": args.threads,
                        "ort_session": {"intraOpNumThreads": args.threads,
                                        "interOpNumThreads": args.threads,
                                        "graphOptimizationLevel": "all",
                                        "executionMode": "sequential"},
                        "compare": "pass if |nncc-ort| <= 1e-3*|ort| + 1e-4*max|ort| elementwise"},
           "zoo": {n: zoo_models.SIZES[n] for n in zoo_models.MODELS}}
    print(f"machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, "
          f"{', '.join(doc['machine']['isa'])}; "
          f"load average {doc['loadavg_start']}", flush=True)

    r = sh([sys.executable, os.path.join(HERE, "models.py"), zoo_dir, "--batches", args.batches,
            "--only", args.models])
    if r.returncode != 0:
        sys.exit(f"bench: models.py failed:\n{r.stderr}")
    with open(os.path.join(zoo_dir, "zoo.json")) as f:
        zoo = json.load(f)

    doc["sgemm"] = [sgemm_rate(bin_dir)]
    print(f"sgemm 1024^3, 1 thread: {doc['sgemm'][0]}", flush=True)

    env_nncc = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
    if args.as_avx2:
        doc["settings"]["as_avx2"] = {"LD_PRELOAD": os.environ["LD_PRELOAD"],
                                      "GLIBC_TUNABLES": os.environ["GLIBC_TUNABLES"]}
        doc["machine"]["isa"] = masked_isa(nncc, os.path.join(args.build_dir, "bin", "nncc-run"), zoo_dir)
        print(f"as-avx2: CPUID masked for every process; the CPU as they see it: "
              f"{', '.join(doc['machine']['isa'])}", flush=True)
    node = shutil.which("node") or "node"

    # Harness floor: a one-op model (Relu on 16 floats) through both harnesses.
    calib = {}
    try:
        fp = os.path.join(zoo_dir, "floor.onnx")
        save_relu_model(fp)
        c = compile_model(nncc, fp, os.path.join(zoo_dir, "floor.so"), os.path.join(zoo_dir, "floor.stats.json"))
        make_inputs({"inputs": [{"name": "x", "dims": [1, 16]}]}, os.path.join(out, "in", "floor"))
        if "error" not in c:
            hs = {"nncc": Harness("nncc", [os.path.join(bin_dir, "nncc_bench"), os.path.join(zoo_dir, "floor.so"),
                                           os.path.join(out, "in", "floor"), "--threads", str(args.threads)], env_nncc),
                  "ort": Harness("ort", [node, os.path.join(HERE, "ort_bench.js"), fp,
                                         os.path.join(out, "in", "floor"), "--threads", str(args.threads)])}
            times, _ = bench_pair(hs, 0.5)
            calib = {n: summarize(t) for n, t in times.items()}
            for h in hs.values():
                h.quit()
    except Exception as e:  # the floor is context only
        calib = {"error": str(e)}
    doc["harness_floor"] = calib
    if "nncc" in calib:
        print(f"harness floor (Relu on 16 floats): nncc {calib['nncc']['median_ms'] * 1000:.1f} us, "
              f"ORT {calib['ort']['median_ms'] * 1000:.1f} us", flush=True)

    results = []
    for entry in zoo:
        name, batch = entry["model"], entry["batch"]
        tag = f"{name}_b{batch}"
        res = {"model": name, "batch": batch, "description": entry["description"],
               "nodes": entry["nodes"]}
        results.append(res)
        print(f"\n== {tag}: {entry['description']}", flush=True)
        so = os.path.join(zoo_dir, tag + ".so")
        comp = compile_model(nncc, entry["path"], so, os.path.join(zoo_dir, tag + ".stats.json"))
        res["compile"] = comp
        if "error" in comp:
            res["error"] = "nncc compile: " + comp["error"]
            res["status"] = "**nncc fails to compile**"
            print(f"   nncc compile FAILED: {comp['error']}", flush=True)
        else:
            st = comp["stats"]
            res["flops_per_run"] = (st.get("flops_per_run") or {}).get("forward")
            print(f"   compiled in {comp['wall_s']:.2f} s, peak RSS {comp.get('peak_rss_kb', 0) / 1024:.0f} MB, "
                  f"{st.get('kernels')} kernels, {st.get('library_calls')} GEMM calls, "
                  f"{(res['flops_per_run'] or 0) / 1e9:.3f} GFLOP/run", flush=True)

        in_dir = os.path.join(out, "in", tag)
        make_inputs(entry, in_dir)
        hs = {}
        try:
            if "error" not in res:
                try:
                    hs["nncc"] = Harness("nncc", [os.path.join(bin_dir, "nncc_bench"), so, in_dir,
                                                  "--threads", str(args.threads)], env_nncc)
                except HarnessError as e:
                    res["error"] = f"nncc run: {e}"
                    res["status"] = "**nncc fails to run**"
                    print(f"   nncc FAILED to load: {e}", flush=True)
            hs["ort"] = Harness("ort", [node, os.path.join(HERE, "ort_bench.js"), entry["path"], in_dir,
                                        "--threads", str(args.threads)])
            for n, h in hs.items():
                res[n + "_setup"] = h.ready
            try:
                times, plan = bench_pair(hs, args.budget)
            except HarnessError as e:
                if "nncc" in hs and "nncc" in str(e).split(":")[0]:
                    res["error"] = f"nncc run: {e}"
                    res["status"] = "**nncc fails to run**"
                    hs.pop("nncc").kill()
                    times, plan = bench_pair(hs, args.budget)
                else:
                    raise
            res["interleave"] = plan
            for n, t in times.items():
                res[n] = summarize(t)
                res[n + "_times_ms"] = [round(x, 4) for x in t]
            for n, h in hs.items():
                h.save(os.path.join(out, "outputs", tag, n))
                mem = h.mem()
                base = h.ready["base_hwm_kb"]
                res[n + "_mem"] = {"peak_rss_mb": mem["hwm_kb"] / 1024, "baseline_mb": base / 1024,
                                   "delta_mb": (mem["hwm_kb"] - base) / 1024}
            for h in hs.values():
                h.quit()
            if "nncc" in hs and args.profile:
                try:
                    res["nncc_profile"] = nncc_profile(
                        [os.path.join(bin_dir, "nncc_bench"), so, in_dir, "--threads", str(args.threads)],
                        env_nncc, os.path.join(out, "prof", tag + ".json"), res["nncc"]["median_ms"])
                except HarnessError as e:
                    res["nncc_profile"] = {"error": str(e)}
            if args.profile:
                res["ort_ops"] = ort_optimized_ops(node, entry["path"], in_dir,
                                                   os.path.join(out, "ort_opt", tag + ".onnx"))
            if "nncc" in hs:
                res["compare"] = compare(entry, os.path.join(out, "outputs", tag, "nncc"),
                                         os.path.join(out, "outputs", tag, "ort"))
                res["ratio"] = res["nncc"]["median_ms"] / res["ort"]["median_ms"]
                if not res["compare"].get("pass"):
                    res["status"] = "**outputs differ**"
                else:
                    res["status"] = "ok" if res["ratio"] <= 1.5 else "slower than 1.5×"
        except HarnessError as e:
            res.setdefault("error", str(e))
            res.setdefault("status", "**harness error**")
            print(f"   FAILED: {e}", flush=True)
        finally:
            for h in hs.values():
                h.quit()
        if res.get("nncc") or res.get("ort"):
            n, o = res.get("nncc"), res.get("ort")
            print(f"   nncc {fmt_ms(n)} ms, ORT {fmt_ms(o)} ms"
                  + (f", ratio {res['ratio']:.2f} (paired blocks {res['interleave']['ratio_paired']:.2f})"
                     if res.get("ratio") and "ratio_paired" in res.get("interleave", {}) else "")
                  + (f", max rel err {res['compare'].get('max_rel_err', float('nan')):.1e}"
                     f" ({'agree' if res['compare'].get('pass') else 'DIFFER'})" if res.get("compare") else ""),
                  flush=True)
        if "error" not in res.get("compile", {}):
            res["training"] = train_step_time(nncc, os.path.join(args.build_dir, "bin", "nncc-run"), entry, zoo_dir,
                                              tag, os.path.join(out, "in"), args.threads, env_nncc)
            t = res["training"]
            print("   training: " + (f"train_step {t['train_step_ms']:.3g} ms, forward {t['forward_ms']:.3g} ms "
                                     f"({t['ratio']:.2f}x), {t['saved_for_backward_mb']:.1f} MB kept for backward"
                                     if "error" not in t else "FAILED: " + t["error"][:300]), flush=True)
        p = res.get("nncc_profile") or {}
        if "by_kind" in p:
            print("   nncc time by step kind: " + ", ".join(
                f"{k} {100 * v['share']:.0f}%" for k, v in list(p["by_kind"].items())[:5])
                + (f"; GEMM steps {p['gemm_gflops']:.1f} GFLOP/s" if p.get("gemm_gflops") else ""), flush=True)
        elif "error" in p:
            print(f"   nncc profile: {p['error']}", flush=True)
        if res.get("ort_ops") and "error" not in res["ort_ops"]:
            print("   ORT runs: " + ", ".join(f"{k} x{v}" for k, v in res["ort_ops"].items()), flush=True)

    doc["sgemm"].append(sgemm_rate(bin_dir))
    rates = [s.get("best_gflops", 0) for s in doc["sgemm"]]
    doc["sgemm_gflops"] = max(rates) if rates else 0
    doc["loadavg_end"] = loadavg()
    doc["results"] = results
    doc["total_seconds"] = time.time() - t_start

    md = render_markdown(doc)
    comp_md = "\n".join(compile_rows(results))
    prof_md = "\n".join(profile_rows(results))
    train_md = "\n".join(train_rows(results))
    doc["train_table_markdown"] = train_md
    doc["profile_table_markdown"] = prof_md
    doc["table_markdown"] = md
    doc["compile_table_markdown"] = comp_md
    with open(args.results, "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md + "\n\n" + comp_md + "\n\n" + prof_md + "\n\n" + train_md + "\n")

    print("\n" + md + "\n\nCompile time (nncc, per model; phases from --stats, seconds):\n\n" + comp_md
          + "\n\nWhere the time goes:\n\n" + prof_md
          + "\n\nTraining (nncc train_step vs forward, mse loss, SGD):\n\n" + train_md)
    print(f"\nwrote {os.path.relpath(args.results, ROOT)} and {os.path.relpath(os.path.join(out, 'table.md'), ROOT)}")
    if args.update_docs and args.as_avx2:
        replace_block(os.path.join(ROOT, "docs", "performance.md"), "bench-table-avx2", md)
        replace_block(os.path.join(ROOT, "README.md"), "bench-summary-avx2", render_short(doc))
    elif args.update_docs:
        replace_block(os.path.join(ROOT, "docs", "performance.md"), "bench-table", md)
        replace_block(os.path.join(ROOT, "docs", "performance.md"), "bench-compile", comp_md)
        replace_block(os.path.join(ROOT, "docs", "performance.md"), "bench-profile", prof_md)
        replace_block(os.path.join(ROOT, "README.md"), "bench-summary", render_short(doc))
    failed = [r for r in results if r.get("error")]
    print(f"{len(results)} model/batch pairs, {len(failed)} with nncc or harness failures; "
          f"total {doc['total_seconds']:.0f} s")


if __name__ == "__main__":
    main()
