#!/usr/bin/python3
"""GridSample and RoiAlign on the CPU plan (--target=cpu) and the GPU plan (--emulate-gpu).

    /usr/bin/python3 test/e2e/sampling_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR] [--seed S]

Every GridSample mode (bilinear, nearest, bicubic) x padding mode (zeros,
border, reflection) x align_corners, with grid points inside, on and well
outside [-1, 1], and RoiAlign in avg and max mode with both coordinate
transformation modes, regions partly outside the image and a batch of two
images, against a float64 loop-by-loop numpy reference written from ONNX's
operator specification (opset 16). The backend node tests cover only 10 of
these combinations; the reference itself is checked against those 10 first
(when libonnx-testdata is installed). Exit status 1 on any mismatch (rtol
1e-4, atol 1e-5).
"""
import argparse
import glob
import itertools
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from e2e_util import PLANS, compile_and_run, run_checks, work_folder

BACKEND_NODE = "/usr/share/libonnx-testdata/data/node"



def reflect(x, lo, hi):
    """Reflects x into [lo, hi] by its nearest border until inside."""
    span = hi - lo
    if span <= 0:
        return lo
    if x < lo:
        d = lo - x
        n, r = int(d // span), d % span
        return lo + r if n % 2 == 0 else hi - r
    if x > hi:
        d = x - hi
        n, r = int(d // span), d % span
        return hi - r if n % 2 == 0 else lo + r
    return x


def cubic_weights(t, a=-0.75):
    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample_ref(x, grid, mode, padding, align):
    n_, c_, h, w = x.shape
    _, ho, wo, _ = grid.shape
    y = np.zeros((n_, c_, ho, wo))
    bounds = [(0.0, w - 1.0), (0.0, h - 1.0)] if align else [(-0.5, w - 0.5), (-0.5, h - 0.5)]

    def denorm(g, size):
        return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2

    def pixel(img, ix, iy):
        if padding == "zeros":
            return img[iy, ix] if 0 <= ix < w and 0 <= iy < h else 0.0
        if padding == "border":
            return img[min(max(iy, 0), h - 1), min(max(ix, 0), w - 1)]
        return img[int(reflect(iy, *bounds[1])), int(reflect(ix, *bounds[0]))]

    for n, i, j in itertools.product(range(n_), range(ho), range(wo)):
        coords = [denorm(float(grid[n, i, j, 0]), w), denorm(float(grid[n, i, j, 1]), h)]
        if mode == "nearest":
            coords = [float(np.rint(v)) for v in coords]
        for k, size in enumerate((w, h)):
            lo, hi = bounds[k]
            if coords[k] < lo or coords[k] > hi:
                if padding == "border":
                    coords[k] = min(max(coords[k], 0.0), size - 1.0)
                elif padding == "reflection":
                    coords[k] = reflect(coords[k], lo, hi)
        cx, cy = coords
        for c in range(c_):
            img = x[n, c].astype(np.float64)
            if mode == "nearest":
                y[n, c, i, j] = pixel(img, int(cx), int(cy))
                continue
            x0, y0 = math.floor(cx), math.floor(cy)
            if mode == "bilinear":
                taps = [(0, 1 - (cx - x0)), (1, cx - x0)], [(0, 1 - (cy - y0)), (1, cy - y0)]
            else:
                taps = (list(zip(range(-1, 3), cubic_weights(cx - x0))),
                        list(zip(range(-1, 3), cubic_weights(cy - y0))))
            y[n, c, i, j] = sum(wy * wx * pixel(img, x0 + dx, y0 + dy)
                                for dy, wy in taps[1] for dx, wx in taps[0])
    return y


def roi_align_ref(x, rois, batch, mode, half_pixel, ph, pw, ratio, scale):
    _, c_, h, w = x.shape
    y = np.zeros((len(rois), c_, ph, pw))
    offset = 0.5 if half_pixel else 0.0
    for r, roi in enumerate(rois.astype(np.float64)):
        sw, sh, ew, eh = roi * scale - offset
        rw, rh = ew - sw, eh - sh
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        img = x[batch[r]].astype(np.float64)
        for i, j in itertools.product(range(ph), range(pw)):
            samples = []
            for iy, ix in itertools.product(range(ratio), range(ratio)):
                yy = sh + i * bh + (iy + 0.5) * bh / ratio
                xx = sw + j * bw + (ix + 0.5) * bw / ratio
                if yy < -1.0 or yy > h or xx < -1.0 or xx > w:
                    samples.append(np.zeros((4, c_)))
                    continue
                yy, xx = max(yy, 0.0), max(xx, 0.0)
                yl, xl = int(yy), int(xx)
                if yl >= h - 1:
                    yl = yh = h - 1
                    yy = float(yl)
                else:
                    yh = yl + 1
                if xl >= w - 1:
                    xl = xh = w - 1
                    xx = float(xl)
                else:
                    xh = xl + 1
                ly, lx = yy - yl, xx - xl
                samples.append(np.stack([(1 - ly) * (1 - lx) * img[:, yl, xl], (1 - ly) * lx * img[:, yl, xh],
                                         ly * (1 - lx) * img[:, yh, xl], ly * lx * img[:, yh, xh]]))
            s = np.stack(samples)  # [samples, 4, C]
            y[r, :, i, j] = s.sum(axis=(0, 1)) / (ratio * ratio) if mode == "avg" else s.max(axis=1).max(axis=0)
    return y


def compare(got, want, what):
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
    err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    return ok, f"{what}: {'ok' if ok else 'FAIL'} max |error| {err:.2e}"


def grid_sample_case(args, work, mode, padding, align, plan):
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.8, 1.8, (2, 4, 7, 2)).astype(np.float32)
    grid[0, 0, :, 0] = [-1, 1, 0, -3.1, 3.3, -5.7, 7.9]  # the corners, the centre, several ranges out
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=int(align))
    graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                             helper.make_tensor_value_info("g", TensorProto.FLOAT, grid.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 3, 4, 7))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    name = f"gridsample_{mode}_{padding}_{int(align)}"
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"{name}-{plan}"), model, [("x", x), ("g", grid)], plan)
    return compare(y, grid_sample_ref(x, grid, mode, padding, align), f"{name} [{plan}]")


def roi_align_case(args, work, mode, half_pixel, plan):
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
    rois = np.array([[0, 0, 9, 7], [2.5, 1.2, 6.3, 5.9], [-3, -2, 4, 3], [7, 5, 14, 12], [3, 3, 3.2, 3.1]],
                    dtype=np.float32)
    batch = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    ctm = "half_pixel" if half_pixel else "output_half_pixel"
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], mode=mode, coordinate_transformation_mode=ctm,
                            output_height=3, output_width=4, sampling_ratio=2, spatial_scale=0.9)
    graph = helper.make_graph([node], "ra", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                             helper.make_tensor_value_info("rois", TensorProto.FLOAT, rois.shape),
                                             helper.make_tensor_value_info("b", TensorProto.INT64, batch.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, (5, 3, 3, 4))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    name = f"roialign_{mode}_{ctm}"
    (y,) = compile_and_run(args.nncc, args.nncc_run, os.path.join(work, f"{name}-{plan}"), model, [("x", x), ("rois", rois), ("b", batch)], plan)
    return compare(y, roi_align_ref(x, rois, batch, mode, half_pixel, 3, 4, 2, 0.9), f"{name} [{plan}]")


def reference_self_test():
    """The numpy references against the backend node tests of both ops."""
    worst = 0.0
    tests = sorted(glob.glob(os.path.join(BACKEND_NODE, "test_gridsample*")) +
                   glob.glob(os.path.join(BACKEND_NODE, "test_roialign*")))
    for test in tests:
        node = onnx.load(os.path.join(test, "model.onnx")).graph.node[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        data = os.path.join(test, "test_data_set_0")
        ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{k}.pb"))) for k in range(len(node.input))]
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb")))
        if node.op_type == "GridSample":
            got = grid_sample_ref(*ins, attrs.get("mode", "bilinear"), attrs.get("padding_mode", "zeros"),
                                  bool(attrs.get("align_corners", 0)))
        else:
            got = roi_align_ref(*ins, attrs.get("mode", "avg"), attrs["coordinate_transformation_mode"] == "half_pixel",
                                attrs["output_height"], attrs["output_width"], attrs["sampling_ratio"],
                                attrs["spatial_scale"])
        if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            return False, f"reference: FAIL {os.path.basename(test)}"
        worst = max(worst, float(np.max(np.abs(got - want))))
    return len(tests) == 10, f"reference: {'ok' if len(tests) == 10 else 'FAIL'} {len(tests)} backend tests, max |error| {worst:.2e}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-sampling-")
    checks = [("reference", reference_self_test)] if os.path.isdir(BACKEND_NODE) else []
    for plan in PLANS:
        for mode, padding, align in itertools.product(("bilinear", "nearest", "bicubic"),
                                                      ("zeros", "border", "reflection"), (False, True)):
            checks.append((f"gridsample {mode} {padding} {align} [{plan}]",
                           lambda m=mode, p=padding, a=align, pl=plan: grid_sample_case(args, work, m, p, a, pl)))
        for mode, half_pixel in itertools.product(("avg", "max"), (False, True)):
            checks.append((f"roialign {mode} {half_pixel} [{plan}]",
                           lambda m=mode, hp=half_pixel, pl=plan: roi_align_case(args, work, m, hp, pl)))
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
