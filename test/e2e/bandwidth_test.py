#!/usr/bin/env python3
"""`nncc-info --bandwidth` under mpirun (docs/distributed.md, "Figures").

    bandwidth_test.py --nncc-info build/bin/nncc-info [--mpirun mpirun]
    bandwidth_test.py --nncc-info build/bin/nncc-info --host-cuda libhostcuda.so

Runs `mpirun -np N nncc-info --bandwidth --sizes 4K,1M --iters 5` for N = 2
and 3 and checks the table against its definitions, recomputed here from the
printed time: one row per requested size in order, count = bytes / 4,
algbw = bytes / time (GB/s), busbw = algbw * 2(N-1)/N (N = 3 makes the factor
4/3, so a busbw printed as algbw fails), every figure positive, one table
(rank 0 prints alone). Also: without mpirun it says why it measures nothing
and exits 0; a bad size is refused naming it. Exits 77 (skipped by ctest)
when mpirun is missing.

With --host-cuda (the host CUDA fixture, which is also NCCL on the host:
runtime.hostnccl.bandwidth) it runs without mpirun on 2 and 3 fake GPUs, so
the table is NCCL's between local GPUs (device memory, CUDA events), checked
the same way; and with NNCC_NCCL_LIBRARY pointing nowhere it says it skipped,
naming what it tried, and exits 0.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

SIZES = [4096, 1 << 20]


def mpirun(args, n):
    # As root in a container; more ranks than cores; no cross-process memory
    # attach (ptrace is often restricted there): as e2e.distributed.
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism",
            "none", "-np", str(n)]


def check_table(text, n, over="MPI (host memory)"):
    headers = [l for l in text.splitlines() if l.split()[:1] == ["size(B)"]]
    assert len(headers) == 1, f"expected one table (rank 0 prints alone), got {len(headers)}:\n{text}"
    assert f"over {over}, {n} ranks" in text, text
    rows = [l.split() for l in text.splitlines() if re.match(r"^\s*\d+\s", l)]
    assert [int(r[0]) for r in rows] == SIZES, f"rows {rows} are not the sizes {SIZES}"
    factor = 2 * (n - 1) / n
    for size, count, us, algbw, busbw in ((int(a), int(b), float(c), float(d), float(e)) for a, b, c, d, e in rows):
        assert count == size // 4, (size, count)
        assert us > 0 and algbw > 0 and busbw > 0, (size, us, algbw, busbw)
        # The time is printed to 0.1 us, the bandwidths to 5 digits; GB/s = bytes / us / 1e3.
        low, high = size / (us + 0.05) / 1e3, size / (us - 0.05) / 1e3
        assert low * (1 - 1e-4) <= algbw <= high * (1 + 1e-4), \
            f"{size} B: algbw {algbw} GB/s, but {size} B in {us} us is {size / us / 1e3:.5g} GB/s"
        assert abs(busbw - algbw * factor) <= 1e-4 * busbw, \
            f"{size} B: busbw {busbw} is not algbw {algbw} * 2({n}-1)/{n} = {algbw * factor:.5g}"
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc-info", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--host-cuda")
    args = parser.parse_args()
    if args.host_cuda:
        return local_gpus(args)
    if not shutil.which(args.mpirun):
        print(f"SKIP: {args.mpirun} not found (scripts/install-deps.sh installs openmpi-bin)")
        return 77
    for n in (2, 3):
        p = subprocess.run(mpirun(args, n) + [args.nncc_info, "--bandwidth", "--sizes", "4K,1M", "--iters", "5"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"mpirun -np {n} nncc-info --bandwidth: exit {p.returncode}\n{p.stdout}{p.stderr}"
        rows = check_table(p.stdout, n)
        print(f"np={n}: " + "; ".join(f"{r[0]} B {r[2]} us busbw {r[4]} GB/s" for r in rows))
    p = subprocess.run([args.nncc_info, "--bandwidth"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and "not started by mpirun" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([args.nncc_info, "--bandwidth", "--sizes", "4K,6"], capture_output=True, text=True)
    assert p.returncode == 1 and "size '6' of --sizes '4K,6'" in p.stderr, p.stderr
    print("bandwidth: ok")
    return 0


def local_gpus(args):
    base = dict(os.environ, NNCC_CUDA_DRIVER=args.host_cuda, NNCC_CUBLASLT_LIBRARY=args.host_cuda)
    for key in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"):
        base.pop(key, None)
    for n in (2, 3):
        env = dict(base, NNCC_NCCL_LIBRARY=args.host_cuda, NNCC_FAKE_CUDA_DEVICES=str(n))
        p = subprocess.run([args.nncc_info, "--bandwidth", "--sizes", "4K,1M", "--iters", "5"], capture_output=True,
                           text=True, timeout=300, env=env)
        assert p.returncode == 0, f"nncc-info --bandwidth on {n} fake GPUs: exit {p.returncode}\n{p.stdout}{p.stderr}"
        rows = check_table(p.stdout, n, f"NCCL (device memory, {n} local GPUs)")
        print(f"{n} local GPUs: " + "; ".join(f"{r[0]} B {r[2]} us busbw {r[4]} GB/s" for r in rows))
    env = dict(base, NNCC_NCCL_LIBRARY="/nonexistent/libnccl.so.2", NNCC_FAKE_CUDA_DEVICES="2")
    p = subprocess.run([args.nncc_info, "--bandwidth"], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0 and "skipped: NCCL between 2 local GPUs" in p.stdout and \
        "/nonexistent/libnccl.so.2" in p.stdout, p.stdout + p.stderr
    print("bandwidth on local GPUs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
