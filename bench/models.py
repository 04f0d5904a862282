#!/usr/bin/python3
"""The benchmark model zoo, generated with seeded random weights (no downloads).

    /usr/bin/python3 bench/models.py OUT_DIR [--batches 1,32] [--only NAME,...]

writes OUT_DIR/<name>_b<batch>.onnx for every model and batch, plus OUT_DIR/zoo.json (what each
model is, its inputs and sizes). Opset 17, IR version 8, every model passes onnx.checker
(full_check, i.e. with ONNX shape inference). Graphs are written the way torch.onnx.export writes
them in eval mode: BatchNormalization folded into Conv weights and bias, attention as
MatMul/Add/Reshape/Transpose/Softmax, GELU spelled out with Erf (or Tanh for the GPT block),
LayerNormalization as one op (opset 17).

Sizes are chosen so bench/run.sh finishes in under 10 minutes on a 2-core machine; the reduced
ones (image size, width, layers, sequence length) are listed in SIZES and docs/performance.md.
Uses Debian's python3-onnx (run with /usr/bin/python3).
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

# One graph builder for the examples and the zoo (seeded weights, op naming).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "models"))
from make_models import Builder as ExampleBuilder  # noqa: E402


class Builder(ExampleBuilder):
    def model(self, name, inputs, outputs):
        return super().model(name, inputs, outputs, producer="nncc-bench")




# One place for every size; docs/performance.md quotes these.
SIZES = {
    "mlp": dict(dims=[784, 1024, 1024, 1024, 10]),
    # ResNet-18 topology (7x7/2 stem, 3x3 max pool, 4 stages x 2 basic blocks, 1x1/2
    # projection shortcuts, global average pool, FC 1000) at half width and 112x112.
    "resnet18": dict(image=112, width=32, classes=1000),
    # MobileNetV2 topology (inverted residuals: 1x1 expand, 3x3 depthwise = Conv group=C,
    # 1x1 project, ReLU6 as Clip, residual Add), width 1.0, 112x112.
    "mobilenet": dict(image=112, width_mult=1.0, classes=1000),
    # BERT-base layer shape (hidden 768, 12 heads, FFN 3072, post-LN, Erf-GELU, additive
    # attention mask input); 2 layers, sequence 64.
    "bert": dict(hidden=768, heads=12, ffn=3072, layers=2, seq=64),
    # Small encoder: hidden 256, 4 heads, FFN 1024, 2 layers, sequence 64.
    "transformer": dict(hidden=256, heads=4, ffn=1024, layers=2, seq=64),
    # GPT-2-style pre-LN decoder block: fused QKV projection + Split, causal mask with Where and
    # -inf, tanh-GELU ("gelu_new"), final LayerNormalization; hidden 512, 8 heads, sequence 64.
    "gpt": dict(hidden=512, heads=8, ffn=2048, layers=1, seq=64),
    # A DBNet-style text detector as PaddleOCR/mmocr export it: MobileNetV3-small-style backbone
    # (hard-swish, squeeze-excite with HardSigmoid, 5x5 depthwise), an FPN neck (1x1 laterals,
    # top-down nearest Resize x2 + Add, 3x3 smoothing, Resize to 1/4 and Concat), and a head of
    # Conv, two ConvTranspose 2x2/2 and Sigmoid giving a full-size probability map; 320x320.
    "fpn_detector": dict(image=320, fpn=64),
}


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# ---------------------------------------------------------------------------------------------
# MLP


def mlp(batch, dims):
    b = Builder(11)
    h = "x"
    for i in range(len(dims) - 1):
        h = b.op("MatMul", [h, b.weight(f"fc{i}_w", [dims[i], dims[i + 1]])])
        h = b.op("Add", [h, b.weight(f"fc{i}_b", [dims[i + 1]], 0.1)])
        if i < len(dims) - 2:
            h = b.op("Relu", [h])
    b.op("Softmax", [h], axis=-1)
    b.rename_last_output("probs")
    return b.model("mlp", [f32("x", [batch, dims[0]])], [f32("probs", [batch, dims[-1]])])


# ---------------------------------------------------------------------------------------------
# CNNs (BatchNorm folded into the convolution, as torch.onnx.export does in eval mode)


def conv(b, x, cin, cout, name, k=3, stride=1, group=1, act="relu"):
    pad = k // 2
    y = b.op("Conv", [x, b.weight(f"{name}_w", [cout, cin // group, k, k]),
                      b.weight(f"{name}_b", [cout], 0.05)],
             kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride], group=group,
             dilations=[1, 1])
    if act == "relu":
        return b.op("Relu", [y])
    if act == "hardswish":
        return b.op("HardSwish", [y])
    if act == "relu6":
        return b.op("Clip", [y, b.const(f"{name}_min", np.array(0.0, np.float32)),
                             b.const(f"{name}_max", np.array(6.0, np.float32))])
    return y


def classifier(b, h, channels, classes):
    h = b.op("GlobalAveragePool", [h])
    h = b.op("Flatten", [h], axis=1)
    b.op("Gemm", [h, b.weight("fc_w", [classes, channels]), b.weight("fc_b", [classes], 0.05)],
         transB=1)
    return b.rename_last_output("logits")


def resnet18(batch, image, width, classes):
    b = Builder(12)
    h = conv(b, "x", 3, width, "stem", k=7, stride=2)
    h = b.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for stage, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"layer{stage + 1}_{block}"
            r = conv(b, h, cin, cout, f"{name}_conv1", stride=stride)
            r = conv(b, r, cout, cout, f"{name}_conv2", act=None)
            if stride != 1 or cin != cout:
                h = conv(b, h, cin, cout, f"{name}_down", k=1, stride=stride, act=None)
            h = b.op("Relu", [b.op("Add", [r, h])])
            cin = cout
    classifier(b, h, cin, classes)
    return b.model("resnet18", [f32("x", [batch, 3, image, image])], [f32("logits", [batch, classes])])


def mobilenet(batch, image, width_mult, classes):
    b = Builder(13)

    def ch(c):
        return max(8, int(c * width_mult + 4) // 8 * 8)

    cin = ch(32)
    h = conv(b, "x", 3, cin, "stem", stride=2, act="relu6")
    # (expansion t, channels c, repeats n, first stride s), MobileNetV2 table 2.
    for i, (t, c, n, s) in enumerate([(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                      (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]):
        cout = ch(c)
        for j in range(n):
            stride = s if j == 0 else 1
            name = f"block{i}_{j}"
            hidden = cin * t
            r = h
            if t != 1:
                r = conv(b, r, cin, hidden, f"{name}_expand", k=1, act="relu6")
            r = conv(b, r, hidden, hidden, f"{name}_dw", stride=stride, group=hidden, act="relu6")
            r = conv(b, r, hidden, cout, f"{name}_project", k=1, act=None)
            h = b.op("Add", [h, r]) if stride == 1 and cin == cout else r
            cin = cout
    last = ch(1280)
    h = conv(b, h, cin, last, "head", k=1, act="relu6")
    classifier(b, h, last, classes)
    return b.model("mobilenet", [f32("x", [batch, 3, image, image])], [f32("logits", [batch, classes])])


def squeeze_excite(b, x, channels, name):
    s = b.op("GlobalAveragePool", [x])
    s = conv(b, s, channels, max(8, channels // 4), f"{name}_reduce", k=1)
    s = conv(b, s, max(8, channels // 4), channels, f"{name}_expand", k=1, act=None)
    return b.op("Mul", [x, b.op("HardSigmoid", [s], alpha=1.0 / 6, beta=0.5)])


def upsample(b, x, factor, name):
    scales = b.const(f"{name}_scales", np.array([1, 1, factor, factor], np.float32))
    return b.op("Resize", [x, "", scales], mode="nearest")


def fpn_detector(batch, image, fpn):
    b = Builder(14)
    h = conv(b, "x", 3, 16, "stem", stride=2, act="hardswish")
    # (kernel, expansion channels, out channels, squeeze-excite, activation, stride): MobileNetV3-small.
    blocks = [(3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
              (5, 96, 40, True, "hardswish", 2), (5, 240, 40, True, "hardswish", 1),
              (5, 120, 48, True, "hardswish", 1), (5, 288, 96, True, "hardswish", 2),
              (5, 576, 96, True, "hardswish", 1)]
    cin, features = 16, {}
    for i, (k, hidden, cout, se, act, stride) in enumerate(blocks):
        name = f"block{i}"
        r = conv(b, h, cin, hidden, f"{name}_expand", k=1, act=act) if hidden != cin else h
        r = conv(b, r, hidden, hidden, f"{name}_dw", k=k, stride=stride, group=hidden, act=act)
        if se:
            r = squeeze_excite(b, r, hidden, f"{name}_se")
        r = conv(b, r, hidden, cout, f"{name}_project", k=1, act=None)
        h = b.op("Add", [h, r]) if stride == 1 and cin == cout else r
        cin = cout
        features[image // (2 * 2 ** sum(1 for blk in blocks[:i + 1] if blk[5] == 2))] = (h, cout)
    # The neck: features at 1/4, 1/8, 1/16, 1/32 of the image.
    sizes = sorted(features, reverse=True)[:4]
    laterals = [conv(b, features[s][0], features[s][1], fpn, f"lateral{i}", k=1, act=None)
                for i, s in enumerate(sizes)]
    top = laterals[-1]
    merged = [top]
    for i in range(len(laterals) - 2, -1, -1):
        top = b.op("Add", [laterals[i], upsample(b, top, 2, f"topdown{i}")])
        merged.insert(0, top)
    outs = []
    for i, m in enumerate(merged):
        o = conv(b, m, fpn, fpn // 4, f"smooth{i}", act=None)
        outs.append(upsample(b, o, 2 ** i, f"to_quarter{i}") if i else o)
    h = b.op("Concat", outs, axis=1)
    # The head: probability map at full size.
    h = conv(b, h, fpn, fpn // 4, "head_conv")
    h = b.op("ConvTranspose", [h, b.weight("head_up1_w", [fpn // 4, fpn // 4, 2, 2]),
                               b.weight("head_up1_b", [fpn // 4], 0.05)], kernel_shape=[2, 2], strides=[2, 2])
    h = b.op("Relu", [h])
    h = b.op("ConvTranspose", [h, b.weight("head_up2_w", [fpn // 4, 1, 2, 2]), b.weight("head_up2_b", [1], 0.05)],
             kernel_shape=[2, 2], strides=[2, 2])
    b.op("Sigmoid", [h])
    b.rename_last_output("prob")
    return b.model("fpn_detector", [f32("x", [batch, 3, image, image])], [f32("prob", [batch, 1, image, image])])


# ---------------------------------------------------------------------------------------------
# Transformers (attention as PyTorch exports it)


def linear(b, x, din, dout, name):
    y = b.op("MatMul", [x, b.weight(f"{name}_w", [din, dout])])
    return b.op("Add", [y, b.weight(f"{name}_b", [dout], 0.02)])


def layer_norm(b, x, dim, name):
    return b.op("LayerNormalization", [x, b.weight(f"{name}_g", [dim], 0.1),
                                       b.weight(f"{name}_b", [dim], 0.1)], axis=-1, epsilon=1e-5)


def erf_gelu(b, x, name):
    # x * 0.5 * (1 + erf(x / sqrt(2))), as torch.nn.functional.gelu exports.
    g = b.op("Erf", [b.op("Div", [x, b.const(f"{name}_sqrt2", np.array(np.sqrt(2.0), np.float32))])])
    g = b.op("Mul", [x, b.op("Add", [g, b.const(f"{name}_one", np.array(1.0, np.float32))])])
    return b.op("Mul", [g, b.const(f"{name}_half", np.array(0.5, np.float32))])


def tanh_gelu(b, x, name):
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), GPT-2's gelu_new.
    c = lambda n, v: b.const(f"{name}_{n}", np.array(v, np.float32))
    cube = b.op("Pow", [x, c("three", 3.0)])
    inner = b.op("Add", [x, b.op("Mul", [cube, c("coef", 0.044715)])])
    t = b.op("Tanh", [b.op("Mul", [inner, c("scale", np.sqrt(2.0 / np.pi))])])
    half_x = b.op("Mul", [c("half", 0.5), x])
    return b.op("Mul", [half_x, b.op("Add", [c("one", 1.0), t])])


def split_heads(b, x, batch, seq, heads, hd, name):
    x = b.op("Reshape", [x, b.const(f"{name}_shape", np.array([batch, seq, heads, hd], np.int64))])
    return b.op("Transpose", [x], perm=[0, 2, 1, 3])


def attention(b, q, k, v, batch, seq, dim, heads, name, mask=None, causal=None):
    hd = dim // heads
    q, k, v = (split_heads(b, t, batch, seq, heads, hd, f"{name}_{n}") for t, n in
               ((q, "q"), (k, "k"), (v, "v")))
    kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
    scores = b.op("Div", [b.op("MatMul", [q, kt]),
                          b.const(f"{name}_scale", np.array(np.sqrt(hd), np.float32))])
    if mask is not None:
        scores = b.op("Add", [scores, mask])
    if causal is not None:
        scores = b.op("Where", [causal, scores, b.const(f"{name}_neginf", np.array(-np.inf, np.float32))])
    probs = b.op("Softmax", [scores], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    return b.op("Reshape", [ctx, b.const(f"{name}_merge", np.array([batch, seq, dim], np.int64))])


def encoder(batch, hidden, heads, ffn, layers, seq, name, seed, with_mask):
    """Post-LN encoder layers (BERT / torch.nn.TransformerEncoderLayer norm_first=False)."""
    b = Builder(seed)
    inputs = [f32("x", [batch, seq, hidden])]
    mask = None
    if with_mask:
        # BERT's extended attention mask: (1 - mask[:, None, None, :]) * -10000.
        inputs.append(f32("attention_mask", [batch, seq]))
        m = b.op("Unsqueeze", ["attention_mask", b.const("mask_axes", np.array([1, 2], np.int64))])
        m = b.op("Sub", [b.const("mask_one", np.array(1.0, np.float32)), m])
        mask = b.op("Mul", [m, b.const("mask_scale", np.array(-10000.0, np.float32))])
    h = "x"
    for l in range(layers):
        p = f"l{l}"
        q, k, v = (linear(b, h, hidden, hidden, f"{p}_{n}") for n in ("q", "k", "v"))
        ctx = attention(b, q, k, v, batch, seq, hidden, heads, f"{p}_attn", mask=mask)
        h = layer_norm(b, b.op("Add", [h, linear(b, ctx, hidden, hidden, f"{p}_o")]), hidden, f"{p}_ln1")
        f = erf_gelu(b, linear(b, h, hidden, ffn, f"{p}_ff1"), f"{p}_gelu")
        h = layer_norm(b, b.op("Add", [h, linear(b, f, ffn, hidden, f"{p}_ff2")]), hidden, f"{p}_ln2")
    b.rename_last_output("y")
    return b.model(name, inputs, [f32("y", [batch, seq, hidden])])


def bert(batch, hidden, heads, ffn, layers, seq):
    return encoder(batch, hidden, heads, ffn, layers, seq, "bert", 14, with_mask=True)


def transformer(batch, hidden, heads, ffn, layers, seq):
    return encoder(batch, hidden, heads, ffn, layers, seq, "transformer", 15, with_mask=False)


def gpt(batch, hidden, heads, ffn, layers, seq, vocab=0):
    """GPT-2-style pre-LN decoder block(s) with a causal mask (Where with -inf). With `vocab`, the input is
    int64 token ids [batch, seq] looked up in a token embedding `wte` [vocab, hidden] (Gather) plus a
    learned position embedding `wpe` [seq, hidden]."""
    b = Builder(16)
    causal = b.const("causal_mask", np.tril(np.ones((seq, seq), dtype=bool))[None, None])
    h = "x"
    if vocab:
        h = b.op("Add", [b.op("Gather", [b.weight("wte", [vocab, hidden], 0.5), "ids"], axis=0),
                         b.weight("wpe", [seq, hidden], 0.1)])
    for l in range(layers):
        p = f"h{l}"
        a = layer_norm(b, h, hidden, f"{p}_ln1")
        qkv = linear(b, a, hidden, 3 * hidden, f"{p}_c_attn")
        q, k, v = b.op("Split", [qkv, b.const(f"{p}_split", np.array([hidden] * 3, np.int64))],
                       outputs=3, axis=2)
        ctx = attention(b, q, k, v, batch, seq, hidden, heads, f"{p}_attn", causal=causal)
        h = b.op("Add", [h, linear(b, ctx, hidden, hidden, f"{p}_c_proj")])
        m = layer_norm(b, h, hidden, f"{p}_ln2")
        m = linear(b, tanh_gelu(b, linear(b, m, hidden, ffn, f"{p}_c_fc"), f"{p}_gelu"), ffn, hidden,
                   f"{p}_mlp_proj")
        h = b.op("Add", [h, m])
    layer_norm(b, h, hidden, "ln_f")
    b.rename_last_output("y")
    x = helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq]) if vocab else f32("x", [batch, seq, hidden])
    return b.model("gpt", [x], [f32("y", [batch, seq, hidden])])


MODELS = {
    "mlp": mlp,
    "resnet18": resnet18,
    "mobilenet": mobilenet,
    "bert": bert,
    "transformer": transformer,
    "gpt": gpt,
    "fpn_detector": fpn_detector,
}


def describe(name):
    s = SIZES[name]
    if name == "mlp":
        return "MLP " + "-".join(map(str, s["dims"])) + ", ReLU, Softmax"
    if name == "resnet18":
        return f"ResNet-18 topology, {s['image']}x{s['image']}, base width {s['width']}"
    if name == "fpn_detector":
        return (f"DBNet-style text detector: MobileNetV3-small-style backbone, FPN neck (Resize, Concat), "
                f"ConvTranspose head, {s['image']}x{s['image']}")
    if name == "mobilenet":
        return f"MobileNetV2 topology (depthwise Conv group=C), {s['image']}x{s['image']}, width x{s['width_mult']}"
    kind = {"bert": "BERT-base-shaped encoder, post-LN, Erf-GELU, attention mask",
            "transformer": "small encoder, post-LN, Erf-GELU",
            "gpt": "GPT-2-style pre-LN decoder, causal Where(-inf) mask, tanh-GELU"}[name]
    return (f"{kind}: hidden {s['hidden']}, {s['heads']} heads, FFN {s['ffn']}, "
            f"{s['layers']} layer(s), seq {s['seq']}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--only", default="", help="comma-separated model names")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    names = [n for n in MODELS if not args.only or n in args.only.split(",")]
    zoo = []
    for name in names:
        for batch in (int(x) for x in args.batches.split(",")):
            model = MODELS[name](batch, **SIZES[name])
            path = os.path.join(args.out_dir, f"{name}_b{batch}.onnx")
            onnx.save(model, path)
            inputs = [{"name": i.name, "dims": [d.dim_value for d in i.type.tensor_type.shape.dim]}
                      for i in model.graph.input]
            outputs = [{"name": o.name, "dims": [d.dim_value for d in o.type.tensor_type.shape.dim]}
                       for o in model.graph.output]
            zoo.append({"model": name, "batch": batch, "path": path, "description": describe(name),
                        "sizes": SIZES[name], "inputs": inputs, "outputs": outputs,
                        "nodes": len(model.graph.node),
                        "weight_bytes": sum(int(np.prod(t.dims)) * 4 for t in model.graph.initializer
                                            if t.data_type == TensorProto.FLOAT)})
            print(f"wrote {path} ({len(model.graph.node)} nodes)")
    with open(os.path.join(args.out_dir, "zoo.json"), "w") as f:
        json.dump(zoo, f, indent=1)


if __name__ == "__main__":
    main()
