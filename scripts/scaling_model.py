#!/usr/bin/env python3
"""Predicted step time of data-parallel training on N ranks (docs/distributed.md, "Scaling model").

    scripts/scaling_model.py --step-ms T1 --grad-bytes G --busbw B [--buckets K | --bucket-bytes S]
        [--latency-us L] [--backward-fraction F] [--ranks 1,2,4,8]
        [--network-busbw B2 --gpus-per-machine 8 --machines 2] [--shard-ms N=T,...] [--weak]

For N ranks, a global batch split N ways:

    step(N)     = compute(N) + exposed(N)
    compute(N)  = T1 / N                   (or the measured step time of one rank's shard, --shard-ms;
                                            with --weak each rank keeps T1's batch: compute(N) = T1)
    comm(N)     = 2(N-1)/N * G / busbw + K * L      (K buckets of G/K bytes, each L of latency)
    exposed(N)  = comm(N) - the part of it hidden behind the backward

Overlap: the backward is F * compute(N); bucket k of K is ready when k/K of the backward is done
(the gradients come out at a steady rate, last layer first) and the buckets are reduced one at a
time in that order, so bucket k starts at max(ready_k, end of bucket k-1). What runs past the end
of the backward is exposed; the last bucket, ready at the end, always is.
Speedup is samples per second against one device: T1 / step(N), or N * T1 / step(N) with --weak.

Inputs: T1 from `nncc-run --train` (steps/s) or `--profile` of the one-device module at the
global batch; G from `nncc --stats` (weight_bytes of the training module: one f32 gradient per
weight); busbw from `nncc-info --bandwidth` at the bucket size (nccl-tests' busbw on GPUs);
L from its smallest size's time. Prints step time, speedup T1/step(N) and efficiency per N.
"""
import argparse
import sys


def exposed_comm(compute_ms, backward_fraction, buckets, bucket_ms):
    """Milliseconds of communication past the end of the backward (serial buckets, ready evenly)."""
    backward = backward_fraction * compute_ms
    end = 0.0
    for k in range(1, buckets + 1):
        ready = backward * k / buckets
        end = max(ready, end) + bucket_ms
    return max(0.0, end - backward)


def predict(step_ms, grad_bytes, busbw_gbs, ranks, buckets=1, latency_us=0.0, backward_fraction=2 / 3,
            compute_ms=None, weak=False):
    """(step ms, comm ms, exposed ms) for `ranks` data-parallel ranks."""
    compute = compute_ms if compute_ms is not None else step_ms if weak else step_ms / ranks
    if ranks == 1:
        return compute, 0.0, 0.0
    # busbw (GB/s) = algbw * 2(n-1)/n, so one all-reduce of b bytes takes 2(n-1)/n * b / busbw.
    bucket_ms = 2 * (ranks - 1) / ranks * grad_bytes / buckets / (busbw_gbs * 1e9) * 1e3 + latency_us * 1e-3
    exposed = exposed_comm(compute, backward_fraction, buckets, bucket_ms)
    return compute + exposed, bucket_ms * buckets, exposed


def parse_shard_ms(text):
    out = {}
    for item in filter(None, (text or "").split(",")):
        n, ms = item.split("=")
        out[int(n)] = float(ms)
    return out


def table(title, rows, step_ms, weak):
    print(title)
    print(f"{'ranks':>6} {'compute ms':>11} {'all-reduce ms':>14} {'exposed ms':>11} {'step ms':>9} "
          f"{'speedup':>8} {'efficiency':>10}")
    for n, compute, comm, exposed, step in rows:
        speedup = step_ms / step * (n if weak else 1)
        print(f"{n:>6} {compute:>11.3f} {comm:>14.3f} {exposed:>11.3f} {step:>9.3f} {speedup:>8.2f} "
              f"{speedup / n:>10.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--step-ms", type=float, required=True, help="one device's step time at the global batch")
    ap.add_argument("--grad-bytes", type=float, required=True, help="gradient bytes all-reduced per step")
    ap.add_argument("--busbw", type=float, required=True, help="all-reduce bus bandwidth within a machine, GB/s")
    ap.add_argument("--buckets", type=int, help="all-reduces per step (default: grad bytes / bucket bytes)")
    ap.add_argument("--bucket-bytes", type=float, default=25 * 2**20, help="nncc --bucket-bytes (default 25 MiB)")
    ap.add_argument("--latency-us", type=float, default=0.0, help="fixed cost of one all-reduce")
    ap.add_argument("--backward-fraction", type=float, default=2 / 3, help="backward share of compute")
    ap.add_argument("--ranks", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--weak", action="store_true", help="each rank keeps the one device's batch")
    ap.add_argument("--shard-ms", help="measured compute per rank instead of T1/N: N=ms,...")
    ap.add_argument("--network-busbw", type=float, help="busbw across machines, GB/s (e.g. 8 x 400 Gb/s NICs)")
    ap.add_argument("--network-latency-us", type=float, help="latency per all-reduce across machines")
    ap.add_argument("--gpus-per-machine", type=int, default=8)
    ap.add_argument("--machines", type=int, default=2)
    args = ap.parse_args()
    buckets = args.buckets or max(1, -(-int(args.grad_bytes) // int(args.bucket_bytes)))
    shard = parse_shard_ms(args.shard_ms)
    print(f"model: step = {'T1' if args.weak else 'T1/N'} + exposed(2(N-1)/N * G/busbw + K*L); T1 {args.step_ms} ms, G {args.grad_bytes:.0f} "
          f"bytes, K {buckets} bucket(s), L {args.latency_us} us, backward {args.backward_fraction:.2f} of compute")
    rows = []
    for n in (int(x) for x in args.ranks.split(",")):
        step, comm, exposed = predict(args.step_ms, args.grad_bytes, args.busbw, n, buckets, args.latency_us,
                                      args.backward_fraction, shard.get(n), args.weak)
        rows.append((n, step - exposed, comm, exposed, step))
    table(f"one machine, busbw {args.busbw} GB/s:", rows, args.step_ms, args.weak)
    if args.network_busbw:
        n = args.gpus_per_machine * args.machines
        latency = args.latency_us if args.network_latency_us is None else args.network_latency_us
        # The slowest link bounds a ring across machines: its busbw is the network's.
        step, comm, exposed = predict(args.step_ms, args.grad_bytes, args.network_busbw, n, buckets, latency,
                                      args.backward_fraction, shard.get(n), args.weak)
        table(f"{args.machines} machines x {args.gpus_per_machine}, network busbw {args.network_busbw} GB/s:",
              [(n, step - exposed, comm, exposed, step)], args.step_ms, args.weak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
