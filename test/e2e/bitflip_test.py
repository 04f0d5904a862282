#!/usr/bin/python3
"""Corrupt modules: flips one random bit of a compiled model.so at a time
(the example MLP, weights in a side file) and runs each copy with nncc-run in
a child process. Each run must be refused (at load, or with a run error), or
give outputs identical to the intact module's; a crash (signal), a hang
(timeout) or a silently different output fails the test. Prints the count of
each outcome.

--region all (the default) flips any bit of the file before its integrity
trailer: machine code, the dynamic loader's tables, the plan. The runtime
checks the whole file against the trailer before dlopen.
--region plan flips bits of the plan's tables only (every sized data object:
the nncc_module struct, entries, steps, args, dims...) and then recomputes the
trailer, as if the file had been rewritten with a valid one: what the plan
checksum, the bounds-checked walk and the verifier guard on their own.

    bitflip_test.py --nncc NNCC --nncc-run NNCC_RUN [--flips N] [--seed S]
                    [--region plan|all] [--work-dir D]
"""
import argparse
import filecmp
import os
import random
import shutil
import struct
import subprocess
import sys

from e2e_util import run, work_folder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKE_MODELS = os.path.join(REPO, "examples", "models", "make_models.py")


def outcome(args, so, in_dir, out_dir, ref_dir):
    """'refused', 'identical', 'crash', 'hang' or 'differ'."""
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    cmd = [args.nncc_run, so, "--input-dir", in_dir, "--output-dir", out_dir, "--threads", "1"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    if p.returncode < 0:
        return "crash", f"signal {-p.returncode}"
    if p.returncode != 0:
        return "refused", p.stdout.decode(errors="replace").strip().splitlines()[-1:]
    same = all(filecmp.cmp(os.path.join(ref_dir, f), os.path.join(out_dir, f), shallow=False)
               for f in os.listdir(ref_dir))
    return ("identical" if same else "differ"), ""


TRAILER_MAGIC = b"NNCCSUM1"
MASK = (1 << 64) - 1


def file_checksum(data):
    """include/nncc/plan_hash.h's fileChecksum."""
    h = 14695981039346656037
    words = len(data) // 8
    for (w,) in struct.iter_unpack("<Q", data[:words * 8]):
        h = ((h ^ w) * 1099511628211) & MASK
        h ^= h >> 29
    for b in data[words * 8:]:
        h = ((h ^ b) * 1099511628211) & MASK
    return h ^ (h >> 32) ^ len(data)


def plan_bytes(data):
    """File offsets of the plan: every sized data object of the symbol table
    (the nncc_module struct and the tables generated from the plan; kernel
    code and its unnamed constant pools are not plan). ELF64 little-endian."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    # name, type, flags, addr, offset, size, link
    sections = [struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize) for i in range(shnum)]
    offsets = set()
    for _, kind, _, _, off, size, _ in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        for at in range(off, off + size, 24):
            _, info, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, at)
            if info & 0xF != 1 or sym_size == 0 or not 0 < shndx < shnum:  # STT_OBJECT
                continue
            _, _, _, addr, sec_off, _, _ = sections[shndx]
            begin = value - addr + sec_off
            offsets.update(range(begin, begin + sym_size))
    return sorted(offsets)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nncc", required=True)
    ap.add_argument("--nncc-run", required=True)
    ap.add_argument("--flips", type=int, default=300)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--region", choices=("plan", "all"), default="all")
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-bitflip-")

    run([sys.executable, MAKE_MODELS, work], "make_models.py")
    so = os.path.join(work, "mlp.so")
    run([args.nncc, os.path.join(work, "mlp.onnx"), "--target=cpu", "--weights-file", "-o", so],
        "nncc")
    in_dir = os.path.join(work, "in")
    os.makedirs(in_dir, exist_ok=True)
    import numpy as np
    from onnx import numpy_helper
    x = np.random.default_rng(1).standard_normal((1, 64)).astype(np.float32)
    with open(os.path.join(in_dir, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    ref_dir = os.path.join(work, "ref")
    kind, why = outcome(args, so, in_dir, ref_dir, ref_dir)
    if kind != "refused" and not os.listdir(ref_dir):
        raise RuntimeError("the intact module wrote no outputs")
    if kind != "identical":
        print(f"the intact module: {kind} {why}")
        return 1

    sealed = open(so, "rb").read()
    if sealed[-16:-8] != TRAILER_MAGIC or struct.unpack("<Q", sealed[-8:])[0] != file_checksum(sealed[:-16]):
        raise RuntimeError("the module does not end with a valid integrity trailer")
    data = sealed[:-16]
    rng = random.Random(args.seed)
    flipped = os.path.join(work, "flipped.so")
    shutil.copy(so + ".weights", flipped + ".weights")
    out_dir = os.path.join(work, "out")
    counts = {k: 0 for k in ("refused", "identical", "crash", "hang", "differ")}
    bad = []
    where = plan_bytes(data) if args.region == "plan" else range(len(data))
    for i in range(args.flips):
        bit = rng.choice(where) * 8 + rng.randrange(8)
        b = bytearray(data)
        b[bit // 8] ^= 1 << (bit % 8)
        trailer = (TRAILER_MAGIC + struct.pack("<Q", file_checksum(bytes(b))) if args.region == "plan"
                   else sealed[-16:])
        with open(flipped, "wb") as f:
            f.write(bytes(b) + trailer)
        kind, why = outcome(args, flipped, in_dir, out_dir, ref_dir)
        counts[kind] += 1
        if kind in ("crash", "hang", "differ"):
            bad.append(f"byte {bit // 8:#x} bit {bit % 8}: {kind} {why}")
            shutil.copy(flipped, os.path.join(work, f"bad_{bit // 8:x}_{bit % 8}.so"))
    print(f"{args.flips} single-bit flips in {len(where)} bytes ({args.region}) of "
          f"{os.path.basename(so)} ({len(data)} bytes): " +
          ", ".join(f"{v} {k}" for k, v in counts.items()))
    for line in bad:
        print("  " + line)
    if tmp:
        tmp.cleanup()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
