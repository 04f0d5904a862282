#!/usr/bin/python3
"""Training from the command line alone: `nncc --train` and `nncc-run --train --data DIR`.

    /usr/bin/python3 test/e2e/train_cli_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

A synthetic separable classification task (10 classes; each sample is its
class's template plus Gaussian noise: a random vector for the MLP, a color
for the CNN, whose global pooling keeps colors) in .npy files, for the example
MLP (64 features) and CNN (3x32x32 images; its BatchNormalization
statistics frozen): trained with `nncc-run --train --data DIR --epochs E
--shuffle`, the weights written with --state-out, then `forward` with
--set-state on held-out samples must classify >= 95% correctly; so must
the MLP trained with --precision=bf16 (bf16 GEMMs, f32 master weights: every
state stays f32). Also:
--loss-file holds one loss per step with 9 significant digits, the same
seed gives bit-identical losses, training resumed from a checkpoint
(--save-checkpoint, --load-checkpoint) matches an uninterrupted run bit for
bit and another model's checkpoint is refused; fine-tuning the CNN's last
layer and exporting the ONNX model (--export-onnx) keeps every frozen
initializer bit-identical and the numpy reference interpreter agrees with
forward on the export; and bad data (wrong dtype, too few samples,
a label out of range) is an error naming the file.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
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
BATCH = 16


def dataset(shape, n, rng, templates):
    labels = rng.integers(0, 10, size=n).astype(np.int64)
    x = templates[labels] + 0.7 * rng.standard_normal((n,) + shape)
    return x.astype(np.float32), labels


def accuracy(args, so, states, state_dir, x, labels, work):
    sets = [f"--set-state={s}={os.path.join(state_dir, f'state_{k}.pb')}" for k, s in enumerate(states)]
    right = 0
    for b in range(len(x) // BATCH):
        d = os.path.join(work, f"eval{b}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x[b * BATCH:(b + 1) * BATCH], "x").SerializeToString())
        run([args.nncc_run, so, "--entry", "forward", "--input-dir", d, "--output-dir", d] + sets, "nncc-run forward")
        out = read_tensor(os.path.join(d, "output_0.pb"))
        right += int(np.sum(np.argmax(out, axis=1) == labels[b * BATCH:(b + 1) * BATCH]))
    return right / (len(x) // BATCH * BATCH)


def check_task(name, shape, flags, epochs, lr, args, work, case_name=None):
    case = os.path.join(work, case_name or name)
    data = os.path.join(case, "data")
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    if len(shape) == 1:  # features: a random template per class
        templates = rng.standard_normal((10,) + shape)
    else:  # images: a color per class (what a CNN's global pooling keeps), 10 corners of a cube
        colors = np.array([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)] + [[0.5, 0.5, 0], [0.5, 0, 0.5]],
                          np.float64) * 4 - 2
        templates = np.broadcast_to(colors[:, :, None, None], (10,) + shape).copy()
    x, labels = dataset(shape, 640, rng, templates)
    np.save(os.path.join(data, "x.npy"), x)
    np.save(os.path.join(data, "labels.npy"), labels)
    tx, tlabels = dataset(shape, 160, rng, templates)
    so = os.path.join(case, f"{name}.so")
    run([args.nncc, os.path.join(work, f"{name}.onnx"), "--train", "--target=cpu", "-o", so] + flags, "nncc --train")
    state_dir = os.path.join(case, "trained")
    os.makedirs(state_dir, exist_ok=True)
    out = run([args.nncc_run, so, "--train", "--data", data, "--epochs", str(epochs), "--lr", str(lr), "--shuffle",
               "--seed", "1", "--loss-file", os.path.join(case, "loss.txt"), "--state-out", state_dir],
              "nncc-run --train")
    losses = open(os.path.join(case, "loss.txt")).read().split()
    steps = epochs * (640 // BATCH)
    # %.9g: 9 significant digits (fewer only where they end in zeros).
    digits = max(len(v.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) for v in losses)
    if len(losses) != steps or digits != 9 or not all(np.isfinite(float(v)) for v in losses):
        return False, f"{name}: FAIL --loss-file has {len(losses)} lines (want {steps}), {digits} digits: {losses[:3]}"
    states = module_states(args.nncc_run, so)
    acc = accuracy(args, so, [name for name, _ in states], state_dir, tx, tlabels, case)
    last = [line for line in out.splitlines() if line.startswith("step ")][-1]
    # Low-precision training keeps f32 master weights: every state is f32.
    master = all(t.startswith("f32") for _, t in states)
    ok = acc >= 0.95 and master
    return ok, (f"{case_name or name}: {'ok  ' if ok else 'FAIL'} {steps} steps ({last}); held-out accuracy "
                f"{acc:.1%}{'' if master else '; a state is not f32'}")


def check_repeatable(args, work):
    """The same data, seed and shuffle give bit-identical losses."""
    so = os.path.join(work, "mlp", "mlp.so")
    data = os.path.join(work, "mlp", "data")
    files = []
    for k in range(2):
        f = os.path.join(work, f"repeat{k}.txt")
        run([args.nncc_run, so, "--train", "--data", data, "--steps", "30", "--shuffle", "--seed", "7",
             "--loss-file", f], "nncc-run --train")
        files.append(open(f).read())
    ok = files[0] == files[1] and len(files[0].split()) == 30
    return ok, f"repeatable: {'ok  ' if ok else 'FAIL'} two runs with --seed 7 give {'the same' if ok else 'different'} losses"


def check_checkpoint(args, work):
    """12 steps, a checkpoint, 18 more from it: the losses and the weights of
    30 uninterrupted steps, bit for bit (the resumed run continues at the
    checkpoint's optimizer step, in the same shuffled epoch). Another
    model's checkpoint is refused naming a state."""
    so = os.path.join(work, "mlp", "mlp.so")
    data = os.path.join(work, "mlp", "data")
    ck = os.path.join(work, "mlp.ckpt")
    d = {k: os.path.join(work, f"ckpt-{k}") for k in ("a", "b")}
    for v in d.values():
        os.makedirs(v, exist_ok=True)
    common = ["--train", "--data", data, "--shuffle", "--seed", "3", "--lr", "0.05"]
    run([args.nncc_run, so] + common + ["--steps", "30", "--loss-file", os.path.join(d["a"], "loss.txt"),
                                        "--state-out", d["a"]], "nncc-run --train")
    run([args.nncc_run, so] + common + ["--steps", "12", "--loss-file", os.path.join(d["b"], "loss1.txt"),
                                        "--save-checkpoint", ck], "nncc-run --train --save-checkpoint")
    run([args.nncc_run, so] + common + ["--steps", "18", "--loss-file", os.path.join(d["b"], "loss2.txt"),
                                        "--load-checkpoint", ck, "--state-out", d["b"]], "nncc-run --load-checkpoint")
    whole = open(os.path.join(d["a"], "loss.txt")).read()
    resumed = open(os.path.join(d["b"], "loss1.txt")).read() + open(os.path.join(d["b"], "loss2.txt")).read()
    if whole != resumed:
        return False, "checkpoint: FAIL the resumed losses differ from the uninterrupted ones"
    for f in sorted(os.listdir(d["a"])):
        if f.startswith("state_") and open(os.path.join(d["a"], f), "rb").read() != open(os.path.join(d["b"], f), "rb").read():
            return False, f"checkpoint: FAIL {f} differs after resuming"
    p = subprocess.run([args.nncc_run, os.path.join(work, "cnn", "cnn.so"), "--train", "--data", data, "--steps", "1",
                        "--load-checkpoint", ck], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    want = f"{ck}: the checkpoint belongs to another model: it holds state 'w0' (f32[64,128]), which module"
    if p.returncode == 0 or want not in p.stdout:
        return False, f"checkpoint: FAIL another model's checkpoint: {p.stdout}"
    return True, "checkpoint: ok   12 + 18 steps through a checkpoint = 30 steps, bit for bit; another model's refused"


def check_fine_tune_export(args, work):
    """Fine-tune only the CNN's last layer (--trainable='fc_.*'), export the
    ONNX model with the trained weights: the frozen initializers are
    bit-identical to the original's, the trained ones are the session's, the
    export passes onnx.checker, and the numpy reference interpreter running
    it agrees with nncc's forward on the trained weights."""
    case = os.path.join(work, "finetune")
    os.makedirs(case, exist_ok=True)
    original = os.path.join(work, "cnn.onnx")
    so = os.path.join(case, "cnn.so")
    run([args.nncc, original, "--train", "--trainable=fc_.*", "--optimizer=adam", "--target=cpu", "-o", so], "nncc --train")
    states = [name for name, _ in module_states(args.nncc_run, so)]
    if [s for s in states if not s.startswith("fc_") and s != "optimizer.step"]:
        return False, f"fine-tune: FAIL --trainable=fc_.* made these states: {states}"
    exported, state_dir = os.path.join(case, "tuned.onnx"), os.path.join(case, "trained")
    os.makedirs(state_dir, exist_ok=True)
    run([args.nncc_run, so, "--train", "--data", os.path.join(work, "cnn", "data"), "--steps", "20", "--lr", "0.01",
         "--state-out", state_dir, "--export-onnx", exported, "--onnx-model", original], "nncc-run --export-onnx")
    before, after = onnx.load(original), onnx.load(exported)
    onnx.checker.check_model(after, full_check=True)
    old = {i.name: i for i in before.graph.initializer}
    changed = 0
    for init in after.graph.initializer:
        if init.name.startswith("fc_"):
            k = states.index(init.name)
            trained = read_tensor(os.path.join(state_dir, f"state_{k}.pb"))
            if not np.array_equal(numpy_helper.to_array(init), trained):
                return False, f"fine-tune: FAIL exported '{init.name}' is not the trained weight"
            changed += not np.array_equal(numpy_helper.to_array(init), numpy_helper.to_array(old[init.name]))
        elif init.SerializeToString() != old[init.name].SerializeToString():
            return False, f"fine-tune: FAIL frozen initializer '{init.name}' changed in the export"
    if changed != 2:
        return False, f"fine-tune: FAIL {changed} of fc_w, fc_b changed by training"
    x = np.random.default_rng(9).standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    d = os.path.join(case, "eval")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    sets = [f"--set-state={s}={os.path.join(state_dir, f'state_{k}.pb')}" for k, s in enumerate(states)]
    run([args.nncc_run, so, "--entry", "forward", "--input-dir", d, "--output-dir", d] + sets, "nncc-run forward")
    got = read_tensor(os.path.join(d, "output_0.pb"))
    want = reference.run_model(after, {"x": x})[after.graph.output[0].name]
    err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
    ort = onnxruntime_output(exported, x, case)
    ort_err = float(np.max(np.abs(got - ort)) / max(1.0, float(np.max(np.abs(ort))))) if ort is not None else None
    ok = err <= 1e-4 and (ort_err is None or ort_err <= 1e-4)
    frozen = len(after.graph.initializer) - 2
    return ok, (f"fine-tune: {'ok  ' if ok else 'FAIL'} fc_w, fc_b trained, {frozen} frozen initializers "
                f"bit-identical in the export; forward vs the reference on the export {err:.1e}, vs "
                + (f"onnxruntime-node {ort_err:.1e}" if ort is not None else "onnxruntime-node: not installable, skipped"))


ORT_RUN = """
const ort = require('onnxruntime-node');
const fs = require('fs');
(async () => {
  const [model, input, dims, output] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model);
  const buf = fs.readFileSync(input);
  const x = new ort.Tensor('float32', new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4),
                           dims.split(',').map(Number));
  const out = await session.run({[session.inputNames[0]]: x});
  fs.writeFileSync(output, Buffer.from(out[session.outputNames[0]].data.buffer));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def onnxruntime_output(model, x, case):
    """The first output of onnxruntime-node (installed from npm into `case`
    when missing) on input x; None when node or the package is unavailable."""
    prefix = os.path.join(case, "ort")
    if not os.path.isdir(os.path.join(prefix, "node_modules", "onnxruntime-node")):
        os.makedirs(prefix, exist_ok=True)
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        try:
            subprocess.run(["npm", "install", "--silent", "--prefix", prefix, "onnxruntime-node@1.30.0"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
    script = os.path.join(prefix, "run.js")
    with open(script, "w") as f:
        f.write(ORT_RUN)
    x.tofile(os.path.join(case, "x.bin"))
    out = os.path.join(case, "ort.bin")
    run(["node", script, model, os.path.join(case, "x.bin"), ",".join(map(str, x.shape)), out], "onnxruntime-node")
    return np.fromfile(out, np.float32).reshape(x.shape[0], -1)


def check_bad_data(args, work):
    so = os.path.join(work, "mlp", "mlp.so")
    cases = {
        "dtype": (lambda d: np.save(os.path.join(d, "x.npy"), np.zeros((64, 64), np.float64)), "x.npy: holds f64[64,64], input 'x' is f32[16,64]"),
        "few": (lambda d: np.save(os.path.join(d, "x.npy"), np.zeros((8, 64), np.float32)), "x.npy: holds 8 samples; one batch of input 'x' needs 16"),
        "label": (lambda d: np.save(os.path.join(d, "labels.npy"), np.full(64, 12, np.int64)), "labels.npy: step 1: entry 'train_step': input 'labels': a label is outside the classes [0, 10)"),
    }
    for what, (spoil, want) in cases.items():
        d = os.path.join(work, f"bad-{what}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), np.zeros((64, 64), np.float32))
        np.save(os.path.join(d, "labels.npy"), np.zeros(64, np.int64))
        spoil(d)
        p = subprocess.run([args.nncc_run, so, "--train", "--data", d, "--steps", "2"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0 or want not in p.stdout.replace(d + "/", ""):
            return False, f"bad data: FAIL {what}: exit {p.returncode}, want '{want}' in: {p.stdout}"
    return True, "bad data: ok   wrong dtype, too few samples and a label out of range name the file"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-train-cli-")
    run([sys.executable, MAKE_MODELS, work, "--batch", str(BATCH)], "make_models.py")
    checks = [
        ("mlp", lambda: check_task("mlp", (64,), ["--optimizer=sgd"], 3, 0.05, args, work)),
        ("cnn", lambda: check_task("cnn", (3, 32, 32), ["--optimizer=adam", "--freeze=.*_(mean|var)"], 2, 0.003,
                                   args, work)),
        ("mlp bf16", lambda: check_task("mlp", (64,), ["--optimizer=sgd", "--precision=bf16"], 3, 0.05, args, work,
                                        "mlp-bf16")),
        ("repeatable", lambda: check_repeatable(args, work)),
        ("checkpoint", lambda: check_checkpoint(args, work)),
        ("fine-tune", lambda: check_fine_tune_export(args, work)),
        ("bad data", lambda: check_bad_data(args, work)),
    ]
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
