#!/usr/bin/python3
"""Direct and implicit-GEMM convolution kernels (lib/Conversion/NNToExec/DirectConv.cpp,
ImplicitGemmConv.cpp) against numpy.

    /usr/bin/python3 test/e2e/direct_conv_test.py --nncc build/bin/nncc --nncc-run build/bin/nncc-run
        [--work-dir DIR]

Each case is one Conv node (bias, pads, groups, dilations, strides) compiled
with --target=cpu, where eligible convolutions run as direct kernels, for
AVX2 (--cpu=x86-64-v3, the default: 8 lanes, 16 registers) and AVX-512
(--cpu=x86-64-v4: 16 lanes, 32 registers), whose kernels are blocked
differently. The test checks that the case takes the path it names for each
(a direct kernel: `vector.fma` in --emit=exec and no transpose; an implicit-GEMM
kernel, output channels in the lanes: `vector.fma` and the transpose of its
position-major result; otherwise im2col + GEMM or the generic loop kernel), runs it on seeded random inputs (the AVX-512 module only
where this machine has AVX-512) and compares with a float64 numpy convolution:
max |out - ref| <= 1e-4 * max(1, max |ref|). The same case compiled for
cpu + cuda:sm_90 must not use the direct kernel (GPUs keep im2col + cuBLASLt),
and its GPU plan (--emulate-gpu: the GPU thread mapping run on the CPU, with
bias, residual and Relu on the GEMM call) must match the reference too.
The cases with an epilogue (a residual Add of a second input of the output's
shape, as either operand, then Relu or Clip(0, 6)) check that it is folded
into the direct kernel: one launch besides the padded copy's. Convolutions
that are not direct but run as the transposed GEMM with the weights as the
runtime's packed B (TRANSPOSED_GEMM) are checked for that form too, and run
on the runtime's AVX2 SGEMM as well. The CHAINS are two convolutions in a
row (direct or implicit-GEMM kernels, every pairing): the first kernel must
write the second's padded copy (no copy kernel between them) with its zero
frame, run with the arena filled with NaNs (NNCC_POISON_ARENA=1) so that a
frame element left unwritten shows; both CPUs, two threads, against numpy.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import read_tensor, run, run_checks, work_folder  # noqa: E402

IMPLICIT = "implicit"
# (name, direct?, n, cin, cout, h, w, kernel, pads [t, l, b, r], group, dilations, strides[, epilogue])
# direct?: True (a direct kernel), IMPLICIT (an implicit-GEMM kernel) or False for both CPUs, or
# {cpu: that} where they differ.
# epilogue: "+"-joined steps after the Conv: residual (Add(conv, r)), residual_lhs (Add(r, conv)), relu,
# clip6, clip_minus_inf; nobias (first) drops the Conv's bias.
CASES = [
    ("3x3_pad1", True, 2, 8, 16, 28, 28, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1]),
    # AVX2's direct tiles of one vector x 8 channels load a weight per FMA (directConvIsLoadBound):
    # the implicit GEMM there, its 49 taps looped by kernel row.
    ("7x7_wide_chunks", {"x86-64-v3": IMPLICIT, "x86-64-v4": True}, 1, 3, 32, 20, 57, 7, [3, 3, 3, 3], 1,
     [1, 1], [1, 1]),
    ("depthwise_14", True, 3, 16, 16, 14, 14, 3, [1, 1, 1, 1], 16, [1, 1], [1, 1]),
    ("grouped_uneven_pads", True, 2, 12, 24, 15, 13, 3, [0, 2, 1, 0], 3, [1, 1], [1, 1]),
    ("dilated", True, 1, 6, 5, 9, 40, 3, [2, 2, 2, 2], 1, [2, 2], [1, 1]),
    ("pointwise_is_gemm", False, 2, 32, 64, 56, 56, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1]),
    ("5x5_groups", True, 1, 4, 8, 17, 17, 5, [2, 1, 2, 1], 2, [1, 1], [1, 1]),
    ("depthwise_56", True, 2, 32, 32, 56, 56, 3, [1, 1, 1, 1], 32, [1, 1], [1, 1]),
    ("grouped_narrow_chunks", True, 1, 8, 8, 13, 30, 3, [0, 3, 2, 4], 8, [1, 1], [1, 1]),
    ("depthwise_7x7", True, 2, 24, 24, 7, 7, 3, [1, 1, 1, 1], 24, [1, 1], [1, 1]),
    # 7 columns fill 7 of AVX2's 8 lanes but 7 of AVX-512's 16: there, 16 output channels fill them; on
    # AVX2 the direct tile (one vector x 8 channels) is load-bound: implicit too.
    ("dense_7x7", IMPLICIT, 2, 16, 16, 7, 7, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1]),
    # Implicit GEMM: ResNet's 4x4 stage entered with stride 2, Relu folded (4 rows x 4 positions x 1
    # vector on AVX-512; 6 positions x 2 vectors on AVX2, spanning rows, the last tile overlapping its
    # neighbour); a residual Add stays a kernel after the transpose; dilation, uneven pads and no bias.
    ("implicit_gemm_4x4_stride2_relu", IMPLICIT, 2, 32, 64, 8, 8, 3, [1, 1, 1, 1], 1, [1, 1], [2, 2], "relu"),
    # Tiles of several output rows (implicitGemmCycles): 3 rows x 4 positions of a 6x4 plane on
    # AVX-512 (two row groups; 6 positions x 2 vectors on AVX2, each tile 1.5 rows); entered with
    # stride 2.
    ("implicit_gemm_row_groups_stride2", IMPLICIT, 1, 8, 16, 12, 8, 3, [1, 1, 1, 1], 1, [1, 1], [2, 2], "relu"),
    # A 5x3 plane (15 positions) on AVX2: tiles of 6 positions x 2 vectors start at 0, 6 and 9, the
    # last computing 3 of its neighbour's positions again; a whole-plane tile on AVX-512.
    ("implicit_gemm_overlapping_last_tile", IMPLICIT, 2, 8, 16, 5, 3, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1],
     "relu"),
    # ResNet's 256-channel 4x4 stage over a batch: 2.4 MB of weights, so the tiles walk the channel
    # blocks outside the images (blocksOuterIsCheaper); all 16 positions a tile on AVX-512.
    ("implicit_gemm_blocks_outside_images", IMPLICIT, 3, 256, 256, 4, 4, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1],
     "relu"),
    # 7 columns in 8 lanes on AVX2 idle 288 * 1/7 = 41 FMA lanes per output element, more than the
    # transpose's 4 * 8: the implicit GEMM there too (implicitBeatsDirect).
    ("implicit_gemm_7x7_residual_relu", IMPLICIT, 2, 32, 32, 7, 7, 3,
     [1, 1, 1, 1], 1, [1, 1], [1, 1], "residual+relu"),
    # Rows a direct kernel fills to 7/8: ResNet's 14x14 stage (576 * 1/7 = 82 idle lanes per element,
    # over 4L on both CPUs) takes the implicit GEMM, its 28x28 one (288 * 1/7 = 41) only on AVX2.
    ("implicit_beats_direct_14x14_residual_relu", IMPLICIT, 1, 64, 64, 14, 14, 3, [1, 1, 1, 1], 1, [1, 1],
     [1, 1], "residual+relu"),
    ("direct_beats_implicit_28x28_relu", {"x86-64-v3": IMPLICIT, "x86-64-v4": True}, 1, 32, 32, 28, 28, 3,
     [1, 1, 1, 1], 1, [1, 1], [1, 1], "relu"),
    # 8 columns on AVX-512 at 64 channels: tiles of 4 positions x 4 vectors, two per row (AVX2: its
    # direct tile is load-bound).
    ("implicit_gemm_two_chunks_per_row", IMPLICIT, 1, 16, 64, 8, 8, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1]),
    # 25 taps: the kernel rows loop (past 16 taps), with dilation 2.
    ("implicit_gemm_looped_rows_dilated", IMPLICIT, 1, 8, 16, 8, 8, 5, [4, 4, 4, 4], 1, [2, 2], [1, 1]),
    ("implicit_gemm_dilated_uneven_pads_clip6", IMPLICIT, 1, 8, 16, 6, 4, 3, [2, 1, 0, 2], 1, [2, 1], [1, 1],
     "nobias+clip6"),
    ("7x7_wide", True, 1, 2, 8, 7, 70, 7, [3, 3, 3, 3], 1, [1, 1], [1, 1]),
    # ResNet's stem: direct on AVX-512 (its phase-split copy); on AVX2 the implicit GEMM, which reads
    # the padded input by broadcasts at any stride, its kernel rows looped.
    ("stem_7x7_stride2", {"x86-64-v3": IMPLICIT, "x86-64-v4": True}, 2, 3, 32, 112, 112, 7, [3, 3, 3, 3], 1,
     [1, 1], [2, 2]),
    ("3x3_stride2", True, 2, 16, 32, 28, 28, 3, [1, 1, 1, 1], 1, [1, 1], [2, 2]),
    # The stride-2 phase split (PhaseSplitCopy.cpp) with an even left pad and an odd width (a part
    # chunk at the row's end), and with no left pad.
    ("stride2_even_left_pad_odd_width", True, 1, 4, 8, 21, 45, 5, [2, 2, 2, 2], 1, [1, 1], [2, 2]),
    ("stride2_no_left_pad", {"x86-64-v3": IMPLICIT, "x86-64-v4": True}, 2, 8, 16, 15, 37, 3, [1, 0, 1, 1], 1,
     [1, 1], [2, 2]),
    ("stride3x2_dilated_groups", True, 1, 8, 16, 30, 61, 3, [0, 1, 2, 1], 2, [2, 1], [3, 2]),
    ("column_stride_only", True, 1, 4, 8, 40, 40, 3, [1, 1, 1, 1], 1, [1, 1], [1, 2]),
    ("depthwise_stride2", True, 2, 16, 16, 56, 56, 3, [1, 1, 1, 1], 16, [1, 1], [2, 2]),
    ("depthwise_stride2_odd_pads", True, 1, 8, 8, 29, 61, 3, [0, 2, 1, 1], 8, [1, 1], [2, 2]),
    ("depthwise_stride3_falls_back", False, 1, 8, 8, 40, 80, 3, [1, 1, 1, 1], 8, [1, 1], [3, 3]),
    ("relu_folded", True, 2, 16, 32, 28, 28, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1], "relu"),
    ("clip6_folded_depthwise", True, 2, 24, 24, 20, 20, 3, [1, 1, 1, 1], 24, [1, 1], [1, 1], "clip6"),
    # Clip(min > max) is max everywhere, as in ONNX's min(max(x, lo), hi).
    ("clip_to_minus_inf_folded", True, 1, 8, 16, 8, 28, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1], "clip_minus_inf"),
    # ResNet's second convolution of a block: Add of the block input, then Relu; 28 columns end in a
    # masked vector, the residual's read too.
    ("residual_relu_folded", True, 2, 16, 16, 28, 28, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1], "residual+relu"),
    ("residual_lhs_folded_stride2", True, 1, 8, 16, 30, 40, 3, [1, 1, 1, 1], 1, [1, 1], [2, 2], "residual_lhs"),
    ("residual_clip6_folded_depthwise", True, 2, 24, 24, 14, 14, 3, [1, 1, 1, 1], 24, [1, 1], [1, 1],
     "residual+clip6"),
    # Without a bias the GPU plan's GEMM takes residual and Relu on plain im2col columns.
    ("no_bias_residual_relu", True, 2, 8, 16, 20, 20, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1], "nobias+residual+relu"),
    # One output position per image from a window narrower than the padded input: its im2col loops
    # must not be collapsed as if they covered whole rows.
    ("unit_output_strided_window", False, 2, 4, 6, 3, 2, 3, [0, 2, 0, 0], 1, [1, 1], [3, 3]),
    # Small images as the transposed GEMM (weights as the runtime's packed B; see TRANSPOSED_GEMM) where
    # the output channels are no whole vectors.
    ("small_image_packed_weights", False, 1, 32, 44, 4, 4, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1]),
    ("pointwise_packed_weights", False, 1, 64, 44, 4, 4, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1]),
    # One GEMM per image of a batch keeps the weights as A.
    ("pointwise_batch_weights_as_a", False, 3, 64, 44, 4, 4, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1]),
    ("small_batch_packed_weights_residual_relu", {"x86-64-v3": IMPLICIT, "x86-64-v4": False}, 2, 32, 24, 7, 7, 3,
     [1, 1, 1, 1], 1, [1, 1], [1, 1], "residual+relu"),
    # Weights as A over a batch of small images, which the runtime runs as its transposed product (see
    # RUNTIME_TRANSPOSED); on AVX-512 the 7-wide plane is an implicit GEMM, and a 1x1 convolution's
    # residual keeps the GEMM, whose transposed product adds it as it writes C.
    ("pointwise_batch_runtime_transposed", {"x86-64-v3": False, "x86-64-v4": IMPLICIT}, 4, 128, 64, 7, 7, 1,
     [0, 0, 0, 0], 1, [1, 1], [1, 1], "relu"),
    ("pointwise_batch_16_positions_residual", False, 3, 96, 320, 4, 4, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1],
     "residual"),
    # 1x1 on a 4x4 plane without a residual: implicit GEMM, read as the input lies (no padded copy).
    ("implicit_gemm_pointwise_16_positions_clip6", IMPLICIT, 3, 96, 320, 4, 4, 1, [0, 0, 0, 0], 1, [1, 1],
     [1, 1], "clip6"),
    # Epilogues on the GEMM step (see GEMM_EPILOGUE): MobileNet's expand and project convolutions.
    ("pointwise_residual_clip6_on_gemm", False, 2, 32, 48, 28, 28, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1],
     "residual+clip6"),
    ("pointwise_residual_lhs_relu_on_gemm", False, 1, 24, 16, 40, 40, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1],
     "residual_lhs+relu"),
    ("pointwise_clip_minus_inf_on_gemm", False, 2, 8, 20, 30, 30, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1],
     "clip_minus_inf"),
    # Rows of 5 fill too few lanes for a direct kernel; 30 positions >= K = 18 keep the weights as A.
    ("im2col_no_bias_clip6_on_gemm", False, 1, 2, 20, 6, 5, 3, [1, 1, 1, 1], 1, [1, 1], [1, 1], "nobias+clip6"),
    # The transposed product cannot take the residual as its C: the bias rides on it, the Add and
    # Relu stay a kernel after the transpose.
    ("pointwise_packed_weights_residual_relu", False, 1, 64, 40, 4, 4, 1, [0, 0, 0, 0], 1, [1, 1], [1, 1],
     "residual+relu"),
]
# The cases whose GEMM is the transposed product [n*P, M] = col^T W^T (nncc-lower-contractions
# packed-weights: constant weights; one GEMM over a batch's columns, or one image with P < K), per
# CPU level; the others' GEMMs (if any) keep the weights as A. Their x86-64-v3 modules also run with the runtime's AVX2
# SGEMM (NNCC_CPU_HIDE_FEATURES=avx512f); a CPU without AVX2 and FMA refuses such a module, and a
# module for a CPU without them keeps the weights as A.
TRANSPOSED_GEMM = {
    "unit_output_strided_window": {"x86-64-v3", "x86-64-v4"},
    "small_image_packed_weights": {"x86-64-v3", "x86-64-v4"},
    "pointwise_packed_weights": {"x86-64-v3", "x86-64-v4"},
    "small_batch_packed_weights_residual_relu": {"x86-64-v4"},
    "pointwise_packed_weights_residual_relu": {"x86-64-v3", "x86-64-v4"},
}
# The cases whose convolution's epilogue (bias, one per output channel: a row of [M, P] = W col;
# residual as the accumulator; Relu or Clip) rides on the GEMM step in the CPU plan: no kernel but
# an im2col's is left. Besides the CPU levels they run on the runtime's AVX2 kernel and on the BLAS
# (an x86-64-v2 module with AVX2 hidden: the runtime's epilogue pass after the BLAS).
GEMM_EPILOGUE = {"pointwise_residual_clip6_on_gemm", "pointwise_residual_lhs_relu_on_gemm",
                 "pointwise_clip_minus_inf_on_gemm", "im2col_no_bias_clip6_on_gemm"}
# The cases whose GEMM keeps the weights as A and which the runtime's own SGEMM runs as the stacked
# transposed product C_i^T = X_i^T W^T (runtime/cpu/Sgemm.h, sgemmTransposed: 49 positions on both
# kernels at K = 128, 16 positions on AVX-512's 32-column panels); their x86-64-v3 modules also run
# on the AVX2 kernel.
RUNTIME_TRANSPOSED = {"pointwise_batch_runtime_transposed", "pointwise_batch_16_positions_residual"}


# Two convolutions in a row whose kernels read padded copies (direct or implicit-GEMM kernels), the
# first's result (after its Relu, if any) read by the second alone: the first kernel (a direct
# kernel's tiles, or an implicit-GEMM kernel's transpose) writes the second's padded copy itself,
# zeros on its frame, and no copy kernel runs between them.
# (name, n, c0, c1, c2, h, w, pads of the first [t, l, b, r], its strides, pads of the second,
# dilations of the second, relu between?)
CHAINS = [
    # 28 columns: AVX-512 tiles of one whole and one masked vector (the masked lanes border the frame);
    # AVX2: several column tiles per row.
    ("chain_28x28_relu", 2, 16, 16, 16, 28, 28, [1, 1, 1, 1], [1, 1], [1, 1, 1, 1], [1, 1], True),
    # A frame of uneven widths (no top, wider left) after an unpadded first convolution.
    ("chain_uneven_frame", 1, 8, 16, 8, 15, 32, [0, 0, 0, 0], [1, 1], [0, 2, 1, 0], [1, 1], False),
    # A dilated second convolution reads a frame of 2.
    ("chain_dilated_second", 1, 12, 8, 16, 20, 32, [1, 1, 1, 1], [1, 1], [2, 2, 2, 2], [2, 2], True),
    # ResNet's 14x14 stage: implicit GEMM to implicit GEMM, the transpose writing the frame. The first
    # reads its input as it lies (no padding), so no copy of the same frame precedes the written one
    # in the arena (where a frame left unwritten would read that copy's zeros).
    ("chain_implicit_14x14", 1, 64, 64, 64, 16, 16, [0, 0, 0, 0], [1, 1], [1, 1, 1, 1], [1, 1], True),
    # Entering it with stride 2: a direct kernel (AVX-512) writes an implicit-GEMM kernel's copy.
    ("chain_stride2_into_14x14", 1, 32, 64, 64, 28, 28, [1, 1, 1, 1], [2, 2], [1, 1, 1, 1], [1, 1], True),
    # 28x28: on AVX2 16 -> 32 channels is direct and 32 -> 16 implicit (implicitBeatsDirect), so these
    # write direct -> implicit and implicit -> direct there; both direct on AVX-512.
    ("chain_direct_into_implicit", 1, 16, 32, 16, 28, 28, [1, 1, 1, 1], [1, 1], [1, 1, 1, 1], [1, 1], True),
    ("chain_implicit_into_direct", 1, 32, 16, 32, 28, 28, [1, 1, 1, 1], [1, 1], [1, 1, 1, 1], [1, 1], False),
]

CPUS = ("x86-64-v3", "x86-64-v4")


def kernel_kind(exec_ir):
    """True (a direct kernel), IMPLICIT (an implicit-GEMM kernel and its transpose) or False."""
    if "vector.fma" not in exec_ir:
        return False
    return IMPLICIT if "_transpose(" in exec_ir else True
AVX512_LEVEL = {"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"}


def runnable_cpus():
    """The CPU levels whose modules this machine runs (x86-64-v4 needs AVX-512)."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":")[1].split() for line in f if line.startswith("flags")), [])
    return CPUS if AVX512_LEVEL <= set(flags) else CPUS[:1]


def reference_conv(x, w, b, pads, group, dilations, strides):
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (xp.shape[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((x.shape[0], m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for c in range(cg):
            for y in range(kh):
                for z in range(kw):
                    rows = slice(y * dilations[0], y * dilations[0] + (oh - 1) * strides[0] + 1, strides[0])
                    cols = slice(z * dilations[1], z * dilations[1] + (ow - 1) * strides[1] + 1, strides[1])
                    out[:, o] += w[o, c, y, z] * xp[:, g * cg + c, rows, cols]
    return out + b[None, :, None, None]


def save_case(work, name, nodes, inputs, out_shape, weights):
    """The model (inputs [(name, value)], one f32 output "y") and its inputs under work/name: (folder,
    model path)."""
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    for i, (input_name, value) in enumerate(inputs):
        with open(os.path.join(d, "in", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, input_name).SerializeToString())
    return d, path


def check(case, args, work, rng):
    name, direct, n, cin, cout, h, wd, k, pads, group, dilations, strides = case[:12]
    epilogue = case[12] if len(case) > 12 else None
    x = rng.standard_normal((n, cin, h, wd)).astype(np.float32)
    w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    want = reference_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), pads, group,
                          dilations, strides)
    steps = epilogue.split("+") if epilogue else []
    with_bias = "nobias" not in steps
    if not with_bias:
        steps.remove("nobias")
        want = want - b[None, :, None, None]
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if with_bias else ["x", "w"], ["y0"], name="conv",
                              kernel_shape=[k, k], pads=pads, group=group, dilations=dilations, strides=strides)]
    weights = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if with_bias else [])
    inputs = [("x", x)]
    for i, step in enumerate(steps):
        src, dst = f"y{i}", f"y{i + 1}"
        if step in ("residual", "residual_lhs"):
            r = rng.standard_normal(want.shape).astype(np.float32)
            inputs.append(("r", r))
            operands = [src, "r"] if step == "residual" else ["r", src]
            nodes.append(helper.make_node("Add", operands, [dst], name="add"))
            want = want + r
        elif step == "relu":
            nodes.append(helper.make_node("Relu", [src], [dst], name="relu"))
            want = np.maximum(want, 0)
        else:
            hi = {"clip6": 6, "clip_minus_inf": -np.inf}[step]
            weights += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                        numpy_helper.from_array(np.array(hi, np.float32), "hi")]
            nodes.append(helper.make_node("Clip", [src, "lo", "hi"], [dst], name="clip"))
            want = np.minimum(np.maximum(want, 0), hi)
    nodes[-1].output[0] = "y"
    d, path = save_case(work, name, nodes, inputs, want.shape, weights)

    for cpu in CPUS:
        expected = direct[cpu] if isinstance(direct, dict) else direct
        exec_ir = run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "--emit=exec", "-o", "-"],
                      "nncc --emit=exec")
        if kernel_kind(exec_ir) != expected:
            what = {True: "a direct kernel", IMPLICIT: "an implicit-GEMM kernel", False: "no direct kernel"}
            return False, f"{name}: FAIL expected {what[expected]} for {cpu}"
        transposed = cpu in TRANSPOSED_GEMM.get(name, ())
        if ("trans_a = true, trans_b = true" in exec_ir) != transposed:
            return False, f"{name}: FAIL expected {'the' if transposed else 'no'} transposed GEMM for {cpu}"
        launches = [line for line in exec_ir.splitlines()
                    if "exec.launch" in line and "_pad(" not in line and "_transpose(" not in line]
        folds = epilogue and expected and not (expected == IMPLICIT and "residual" in epilogue)
        if folds and len(launches) != 1:
            return False, f"{name}: FAIL the {epilogue} was not folded into the convolution's kernel for {cpu}"
        if name in GEMM_EPILOGUE and ([line for line in launches if "_im2col(" not in line] or
                                      ("bias_per_row = true" in exec_ir) != with_bias):
            return False, f"{name}: FAIL the bias and {epilogue} do not ride on the GEMM step for {cpu}"
    gpu_ir = run([args.nncc, path, "--target=cpu,cuda:sm_90", "--emit=exec", "-o", "-"], "nncc --emit=exec")
    if "vector.fma" in gpu_ir:
        return False, f"{name}: FAIL a module with a CUDA target got a direct kernel"
    finite = want[np.isfinite(want)]
    bound = 1e-4 * max(1.0, float(np.max(np.abs(finite))) if finite.size else 1.0)
    errors = {}
    plans = [(cpu, ["--target=cpu", f"--cpu={cpu}"], None) for cpu in CPUS if cpu in runnable_cpus()]
    if "x86-64-v3" in TRANSPOSED_GEMM.get(name, ()) or name in RUNTIME_TRANSPOSED or name in GEMM_EPILOGUE:
        v3 = ["--target=cpu", "--cpu=x86-64-v3"]
        plans.append(("v3-avx2-sgemm", v3, "avx512f"))
    if name in GEMM_EPILOGUE:
        plans.append(("v2-blas", ["--target=cpu", "--cpu=x86-64-v2"], "avx512f,avx2,fma"))
    for plan, flags, hide in plans + [("gpu-plan", ["--emulate-gpu"], None)]:
        so, out = os.path.join(d, f"{plan}.so"), os.path.join(d, f"out-{plan}")
        os.makedirs(out, exist_ok=True)
        run([args.nncc, path, *flags, "-o", so], "nncc")
        # A NaN-filled arena: a copy or kernel that leaves an element unwritten shows in the output.
        env_cmd = ["env", "NNCC_POISON_ARENA=1"] + ([f"NNCC_CPU_HIDE_FEATURES={hide}"] if hide else [])
        run(env_cmd + [args.nncc_run, so, "--input-dir", os.path.join(d, "in"), "--output-dir", out], "nncc-run")
        got = read_tensor(os.path.join(out, "output_0.pb")).astype(np.float64)
        if got.shape != want.shape:
            return False, f"{name}: FAIL {plan} shape {list(got.shape)}, reference {list(want.shape)}"
        with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
            errors[plan] = float(np.max(np.abs(np.where(got == want, 0.0, got - want))))
    ok = all(error <= bound for error in errors.values())  # NaN fails (max() may skip it)
    figures = ", ".join(f"{plan} {error:.2e}" for plan, error in errors.items())
    return ok, f"{name}: {'ok  ' if ok else 'FAIL'} max abs err {figures} (bound {bound:.2e})"


def run_poisoned(args, name, d, path, want, forms):
    """Runs the model at `path` (inputs in d/in) for each CPU level this machine runs, on two threads
    (the tasks that zero a frame split between them) with the arena filled with NaNs
    (NNCC_POISON_ARENA=1: a frame element left unwritten shows), against `want`; `forms` names the
    kernels each level took."""
    bound = 1e-4 * max(1.0, float(np.max(np.abs(want))))
    errors = {}
    for cpu in [c for c in CPUS if c in runnable_cpus()]:
        so, out = os.path.join(d, f"{cpu}.so"), os.path.join(d, f"out-{cpu}")
        os.makedirs(out, exist_ok=True)
        run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "-o", so], "nncc")
        run(["env", "NNCC_POISON_ARENA=1", args.nncc_run, so, "--input-dir", os.path.join(d, "in"), "--output-dir",
             out, "--threads", "2"], "nncc-run")
        got = read_tensor(os.path.join(out, "output_0.pb")).astype(np.float64)
        if got.shape != want.shape:
            return False, f"{name}: FAIL {cpu} shape {list(got.shape)}, reference {list(want.shape)}"
        errors[cpu] = float(np.max(np.abs(got - want)))
    ok = all(error <= bound for error in errors.values())  # NaN fails
    figures = ", ".join(f"{cpu} {error:.2e}" for cpu, error in errors.items())
    return ok, f"{name}: {'ok  ' if ok else 'FAIL'} max abs err {figures} (bound {bound:.2e}); {', '.join(forms)}"


def check_chain(case, args, work, rng):
    name, n, c0, c1, c2, h, wd, pads1, strides1, pads2, dilations2, relu = case
    x = rng.standard_normal((n, c0, h, wd)).astype(np.float32)
    w1 = rng.standard_normal((c1, c0, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((c2, c1, 3, 3)).astype(np.float32)
    b1, b2 = rng.standard_normal(c1).astype(np.float32), rng.standard_normal(c2).astype(np.float32)
    f64 = lambda a: a.astype(np.float64)  # noqa: E731
    mid = reference_conv(f64(x), f64(w1), f64(b1), pads1, 1, [1, 1], strides1)
    if relu:
        mid = np.maximum(mid, 0)
    want = reference_conv(mid, f64(w2), f64(b2), pads2, 1, dilations2, [1, 1])
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], name="conv1", kernel_shape=[3, 3], pads=pads1,
                              strides=strides1)]
    if relu:
        nodes.append(helper.make_node("Relu", ["a"], ["a_relu"], name="relu"))
    nodes.append(helper.make_node("Conv", [nodes[-1].output[0], "w2", "b2"], ["y"], name="conv2",
                                  kernel_shape=[3, 3], pads=pads2, dilations=dilations2))
    weights = [numpy_helper.from_array(v, k) for k, v in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))]
    d, path = save_case(work, name, nodes, [("x", x)], want.shape, weights)
    forms = []
    for cpu in CPUS:
        exec_ir = run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "--emit=exec", "-o", "-"],
                      "nncc --emit=exec")
        launches = [line.strip() for line in exec_ir.splitlines() if "exec.launch" in line]
        kinds = [line.split("@")[1].split("(")[0].split("_", 1)[1] for line in launches]
        # The second convolution's kernel reads what the launch before it wrote (the first's kernel or
        # its transpose), and the only copy kernel (if any) is the first's own.
        second = max(i for i, kind in enumerate(kinds) if kind == "conv")
        reads_written = second > 0 and kinds[second - 1] in ("conv", "transpose") and \
            launches[second].split("(")[1].split(",")[0] == launches[second - 1].split(" =")[0]
        if kinds.count("pad") > 1 or "pad" in kinds[kinds.index("conv"):] or not reads_written:
            return False, (f"{name}: FAIL for {cpu} expected the first convolution's kernel to write the second's "
                           f"padded copy: {kinds}")
        forms.append(f"{cpu} {'+'.join(kinds)}")
    return run_poisoned(args, name, d, path, want, forms)


def reference_max_pool_3x3_stride2_pad1(x):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    oh, ow = (x.shape[2] - 1) // 2 + 1, (x.shape[3] - 1) // 2 + 1
    return np.max([xp[:, :, y:y + 2 * oh - 1:2, z:z + 2 * ow - 1:2] for y in range(3) for z in range(3)], axis=0)


def check_residual_blocks(args, work, rng, name="residual_blocks", n=2, c=16, h=56,
                          kernels=("conv",)):
    """ResNet's first stage: a 3x3/2 max pool, then two blocks of conv-Relu-conv-Add-Relu whose
    input is also the block's residual. Each block input's producer (the pool's kernel, the first
    block's second convolution) writes the next convolution's padded copy, and the kernel folding
    the Add reads its residual inside that frame: no copy kernel at all. `kernels`: the kernels
    each convolution becomes (("conv",): direct; ("conv", "transpose"): implicit GEMM, whose
    transpose folds the Add and the Relu)."""
    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
    ws = [rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.2 for _ in range(4)]
    bs = [rng.standard_normal(c).astype(np.float32) for _ in range(4)]
    conv = lambda v, i: reference_conv(v, ws[i].astype(np.float64), bs[i].astype(np.float64),  # noqa: E731
                                       [1, 1, 1, 1], 1, [1, 1], [1, 1])
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    want = reference_max_pool_3x3_stride2_pad1(x.astype(np.float64))
    nodes = [helper.make_node("MaxPool", ["x"], ["b0"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1])]
    for block in range(2):
        i, src = 2 * block, f"b{block}"
        nodes += [helper.make_node("Conv", [src, f"w{i}", f"c{i}"], [f"a{block}"], name=f"conv{i}",
                                   kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"a{block}"], [f"r{block}"], name=f"relu{i}"),
                  helper.make_node("Conv", [f"r{block}", f"w{i + 1}", f"c{i + 1}"], [f"s{block}"],
                                   name=f"conv{i + 1}", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Add", [f"s{block}", src], [f"t{block}"], name=f"add{block}"),
                  helper.make_node("Relu", [f"t{block}"], [f"b{block + 1}"], name=f"relu{i + 1}")]
        want = relu(conv(relu(conv(want, i)), i + 1) + want)
    nodes[-1].output[0] = "y"
    weights = [numpy_helper.from_array(v, f"w{i}") for i, v in enumerate(ws)]
    weights += [numpy_helper.from_array(v, f"c{i}") for i, v in enumerate(bs)]
    d, path = save_case(work, name, nodes, [("x", x)], want.shape, weights)
    forms = []
    for cpu in CPUS:
        exec_ir = run([args.nncc, path, "--target=cpu", f"--cpu={cpu}", "--emit=exec", "-o", "-"],
                      "nncc --emit=exec")
        kinds = [line.split("@")[1].split("(")[0].split("_", 1)[1] for line in exec_ir.splitlines()
                 if "exec.launch" in line]
        if kinds != ["max_pool"] + list(kernels) * 4:
            return False, f"{name}: FAIL for {cpu} expected a max pool and four convolutions' kernels alone: {kinds}"
        forms.append(f"{cpu} {'+'.join(kinds)}")
    return run_poisoned(args, name, d, path, want, forms)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nncc", required=True)
    parser.add_argument("--nncc-run", required=True)
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    work, tmp = work_folder(args.work_dir, "nncc-direct-conv-")
    rng = np.random.default_rng(0)
    checks = [(case[0], lambda case=case: check(case, args, work, rng)) for case in CASES]
    checks += [(case[0], lambda case=case: check_chain(case, args, work, rng)) for case in CHAINS]
    checks.append(("residual_blocks", lambda: check_residual_blocks(args, work, rng)))
    # ResNet's 14x14 stage shape: implicit-GEMM kernels on both CPUs.
    checks.append(("residual_blocks_implicit",
                   lambda: check_residual_blocks(args, work, rng, "residual_blocks_implicit", 2, 64, 28,
                                                 ("conv", "transpose"))))
    return run_checks(checks, tmp)


if __name__ == "__main__":
    sys.exit(main())
