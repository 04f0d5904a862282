/// Handlers of the op versions before the ones the other files implement, so
/// models of opsets 1-12 import without ONNX's version converter when every
/// node has one. Most turn what an attribute held into the input a later
/// version takes (NodeContext::setInput) and run that version's handler; the
/// ops whose meaning changed (Softmax's 2-D coercion before 13, Upsample and
/// Resize-10's asymmetric coordinates) are built here.
#include "lib/Import/handlers/HandlerUtils.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Runs the handler of this node's op registered for `version`.
LogicalResult delegate(NodeContext &ctx, SmallVectorImpl<Value> &out, int version) {
  NodeHandler handler = HandlerRegistry::instance().lookup(ctx.node().op_type(), version);
  return handler(ctx, out);
}

/// Softmax, LogSoftmax and Hardmax before opset 13: the input is coerced to
/// 2-D [prod(dims[:axis]), prod(dims[axis:])] (axis defaults to 1), the op
/// runs along the second axis and the result takes the input's shape back.
enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

Value hardmax2D(NodeContext &ctx, Value x, RankedTensorType type) {
  auto &b = ctx.builder();
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  Value argmax = build<nn::ArgMaxOp>(
      ctx, RankedTensorType::get({rows, 1}, b.getI64Type()), x,
      {i64Attr(ctx, "axis", 1), boolAttr(ctx, "keepdims", true),
       boolAttr(ctx, "select_last_index", false)});
  SmallVector<int64_t> ids;
  for (int64_t i = 0; i < cols; ++i)
    ids.push_back(i);
  Value hot = build<nn::EqualOp>(ctx, RankedTensorType::get({rows, cols}, b.getI1Type()),
                                 {argmax, ctx.constantI64(ids, {1, cols})});
  return build<nn::CastOp>(ctx, type, hot);
}

template <SoftmaxKind kind>
LogicalResult coercedSoftmax(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  int64_t rank = input.getRank();
  auto axis = axisAttr(ctx, "axis", 1, std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  // Along the last axis the coercion changes nothing: opset 13's handler.
  if (*axis == rank - 1)
    return delegate(ctx, out, 13);
  if (!input.hasStaticShape())
    return ctx.error("before opset 13 it flattens the input to 2-D at axis " + llvm::Twine(*axis) +
                     ", which needs a static input shape (give it with --shape)");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outer : inner) *= input.getShape()[i];
  auto flat = RankedTensorType::get({outer, inner}, input.getElementType());
  Value x = build<nn::ReshapeOp>(ctx, flat, ctx.input(0));
  Value y;
  if constexpr (kind == SoftmaxKind::Hardmax)
    y = hardmax2D(ctx, x, flat);
  else if constexpr (kind == SoftmaxKind::Softmax)
    y = build<nn::SoftmaxOp>(ctx, flat, x, {i64Attr(ctx, "axis", 1)});
  else
    y = build<nn::LogSoftmaxOp>(ctx, flat, x, {i64Attr(ctx, "axis", 1)});
  out.push_back(build<nn::ReshapeOp>(ctx, input, y));
  return success();
}

/// Squeeze/Unsqueeze before 13 (axes attribute), Split before 13 (split
/// attribute), TopK before 10 (k attribute): the attribute becomes input 1.
LogicalResult intsAttrAsInput(NodeContext &ctx, SmallVectorImpl<Value> &out, StringRef name,
                              int version) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (ctx.hasAttr(name)) {
    SmallVector<int64_t> values = ctx.attrInts(name);
    ctx.setInput(1, ctx.constantI64(values, {(int64_t)values.size()}));
  }
  return delegate(ctx, out, version);
}

LogicalResult squeezeV1(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  return intsAttrAsInput(ctx, out, "axes", 13);
}
LogicalResult splitV2(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  return intsAttrAsInput(ctx, out, "split", 13);
}
LogicalResult topKV1(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (!ctx.hasAttr("k"))
    return ctx.error("attribute 'k' is required");
  // libonnx's inference checks k against the axis only when k is an input.
  auto input = ctx.inputType(0);
  auto axis = axisAttr(ctx, "axis", -1, input.getRank());
  if (failed(axis))
    return failure();
  int64_t k = ctx.attrInt("k", 0), size = input.getShape()[*axis];
  if (k < 0 || (!ShapedType::isDynamic(size) && k > size))
    return ctx.error("k = " + llvm::Twine(k) + " is not within the " + llvm::Twine(size) +
                     " elements along axis " + llvm::Twine(*axis));
  ctx.setInput(1, ctx.constantI64({k}, {1}));
  return delegate(ctx, out, 10);
}

/// Slice before 10: starts, ends and axes are attributes.
LogicalResult sliceV1(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (!ctx.hasAttr("starts") || !ctx.hasAttr("ends"))
    return ctx.error("attributes 'starts' and 'ends' are required");
  const char *names[] = {"starts", "ends", "axes"};
  for (int i = 0; i < 3; ++i)
    if (ctx.hasAttr(names[i])) {
      SmallVector<int64_t> values = ctx.attrInts(names[i]);
      ctx.setInput(1 + i, ctx.constantI64(values, {(int64_t)values.size()}));
    }
  return delegate(ctx, out, 10);
}

/// Pad before 11: pads and the constant value are attributes.
LogicalResult padV2(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (!ctx.hasAttr("pads"))
    return ctx.error("attribute 'pads' is required");
  SmallVector<int64_t> pads = ctx.attrInts("pads");
  ctx.setInput(1, ctx.constantI64(pads, {(int64_t)pads.size()}));
  ctx.setInput(2, ctx.scalar(ctx.inputType(0).getElementType(), ctx.attrFloat("value", 0.0)));
  return delegate(ctx, out, 11);
}

/// Clip before 11: min and max are float attributes (default: unbounded).
LogicalResult clipV6(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  Type elem = ctx.inputType(0).getElementType();
  if (ctx.hasAttr("min"))
    ctx.setInput(1, ctx.scalar(elem, ctx.attrFloat("min", 0.0)));
  if (ctx.hasAttr("max"))
    ctx.setInput(2, ctx.scalar(elem, ctx.attrFloat("max", 0.0)));
  return delegate(ctx, out, 11);
}

/// Elementwise binary ops before 7 (Add, Sub, Mul, Div, Pow, And, Or, Xor,
/// Equal, Greater, Less): with `broadcast` and `axis`, B's dims align with
/// A's from `axis` on. Otherwise numpy broadcasting applies, which covers
/// equal shapes (no `broadcast`) and B aligned with A's trailing dims, and
/// accepts what the version converter accepts.
LogicalResult legacyBroadcast(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto a = ctx.inputType(0), b = ctx.inputType(1);
  if (ctx.attrInt("broadcast", 0) && ctx.hasAttr("axis")) {
    int64_t axis = ctx.attrInt("axis", 0), rank = a.getRank();
    if (axis < 0)
      axis += rank;
    int64_t trailing = rank - axis - b.getRank();
    if (axis < 0 || trailing < 0)
      return ctx.error("axis " + llvm::Twine(ctx.attrInt("axis", 0)) +
                       " does not place B inside A");
    if (!b.hasStaticShape())
      return ctx.error("broadcasting at an axis needs a static shape of B");
    SmallVector<int64_t> shape(b.getShape());
    shape.append(trailing, 1);
    ctx.setInput(1, build<nn::ReshapeOp>(ctx, RankedTensorType::get(shape, b.getElementType()),
                                         ctx.input(1)));
  }
  return delegate(ctx, out, 7);
}

/// BatchNormalization 6-8: `spatial` (default 1) must be 1; at 6 an explicit
/// is_test=0 (training) is refused, as the version converter refuses it.
LogicalResult batchNormV6(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (ctx.attrInt("spatial", 1) != 1)
    return ctx.error("spatial=0 (per-activation statistics) is not supported");
  if (ctx.hasAttr("is_test") && ctx.attrInt("is_test", 0) == 0)
    return ctx.error("is_test=0 (training mode) is not supported");
  return delegate(ctx, out, 9);
}

/// Dropout 7-11 (ratio an attribute, no training mode) is the identity at
/// inference; its mask (T until 10, bool from 10) keeps every element.
LogicalResult dropoutV7(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  out.push_back(ctx.input(0));
  if (ctx.outputUsed(1)) {
    auto type = ctx.resultType(1);
    if (failed(type))
      return failure();
    if (!type->hasStaticShape())
      return ctx.error("the mask output needs a static input shape");
    Type elem = type->getElementType();
    out.push_back(ctx.constant(
        isa<FloatType>(elem)
            ? DenseElementsAttr::get(*type, APFloat(cast<FloatType>(elem).getFloatSemantics(), 1))
            : DenseElementsAttr::get(*type, APInt(elem.getIntOrFloatBitWidth(), 1))));
  }
  return success();
}

/// Upsample 7-9 and Resize 10: nearest or linear interpolation with the
/// asymmetric coordinate transform (x_in = x_out / scale); scales an
/// attribute (Upsample 7) or an input.
LogicalResult upsample(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  SmallVector<double> scales;
  Value scalesTensor; // run-time scales
  if (ctx.hasAttr("scales"))
    scales = ctx.attrFloats("scales");
  else if (!ctx.input(1))
    return ctx.error("scales are required");
  else if (auto values = ctx.constFloats(1))
    scales = *values;
  else
    scalesTensor = ctx.input(1);
  if (!scalesTensor && (int64_t)scales.size() != rank)
    return ctx.error("scales needs one entry per axis");
  std::string mode = ctx.attrString("mode", "nearest");
  if (mode == "bilinear")
    mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return ctx.error("mode '" + mode + "' is not supported");
  // Nearest takes floor(x_in) upsampling and ceil(x_in) downsampling (as
  // onnxruntime and ONNX's opset-10 test data do); scale 1 is exact either way.
  bool down = llvm::any_of(scales, [](double s) { return s < 1; });
  if (mode == "nearest" && down && llvm::any_of(scales, [](double s) { return s > 1; }))
    return ctx.error("nearest with some axes upsampled and others downsampled is not supported");
  SmallVector<double> roi(rank, 0.0);
  roi.append(rank, 1.0);
  auto &b = ctx.builder();
  out.push_back(nn::ResizeOp::create(
      b, ctx.loc(), *type, ctx.input(0), scalesTensor,
      scalesTensor ? DenseF64ArrayAttr() : b.getDenseF64ArrayAttr(scales),
      b.getDenseF64ArrayAttr(roi), b.getStringAttr(mode), b.getStringAttr("asymmetric"),
      b.getStringAttr(down ? "ceil" : "floor"), b.getF64FloatAttr(-0.75), b.getBoolAttr(false),
      b.getF64FloatAttr(0.0)));
  return success();
}

/// Gemm before 11 (C required; before 7 a `broadcast` attribute that only
/// allows what unidirectional broadcasting does). Shape inference skips Gemm
/// nodes before 7 whose inputs are not matrices, so the ranks are checked here.
LogicalResult gemmV1(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (ctx.inputType(i).getRank() != 2)
      return ctx.error("input '" + ctx.node().input(i) + "' has rank " +
                       llvm::Twine(ctx.inputType(i).getRank()) + ", but Gemm takes matrices");
  return delegate(ctx, out, 11);
}

/// Registers the handler of (`op`, `current`) for `since` as well: the older
/// version differs only in types or in attributes the handler reads with the
/// same defaults.
void alias(HandlerRegistry &r, StringRef op, int since, int current) {
  NodeHandler handler = r.lookup(op, current);
  if (!handler)
    llvm::report_fatal_error("no handler of " + op + " at opset " + llvm::Twine(current));
  r.add(op, since, handler);
}

} // namespace

void registerOldOpsetHandlers(HandlerRegistry &r) {
  r.add("Softmax", 1, coercedSoftmax<SoftmaxKind::Softmax>);
  r.add("LogSoftmax", 1, coercedSoftmax<SoftmaxKind::LogSoftmax>);
  r.add("Hardmax", 1, coercedSoftmax<SoftmaxKind::Hardmax>);
  r.add("Squeeze", 1, squeezeV1);
  r.add("Unsqueeze", 1, squeezeV1);
  r.add("Split", 2, splitV2);
  r.add("TopK", 1, topKV1);
  r.add("Slice", 1, sliceV1);
  r.add("Pad", 2, padV2);
  r.add("Clip", 1, clipV6);
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal",
                         "Greater", "Less"})
    r.add(op, 1, legacyBroadcast);
  r.add("BatchNormalization", 6, batchNormV6);
  r.add("Dropout", 7, dropoutV7);
  r.add("Upsample", 7, upsample);
  r.add("Upsample", 10, nullptr); // deprecated for Resize
  r.add("Resize", 10, upsample);

  // Versions 1-5 differ from 6 only by the ignored consumed_inputs.
  for (const char *op : {"Abs", "Ceil", "Exp", "Floor", "Log", "Neg", "Reciprocal", "Relu",
                         "Sigmoid", "Sqrt", "Tanh", "Elu", "HardSigmoid", "LeakyRelu", "Selu",
                         "InstanceNormalization"})
    alias(r, op, 1, 6);
  // Before 8 the inputs have equal shapes (a case of 8's broadcasting).
  for (const char *op : {"Max", "Min", "Sum", "Mean"})
    alias(r, op, 1, 8);
  // Axes as an attribute (read by the same handler), negative axes from 11.
  for (const char *op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL2", "ArgMax", "ArgMin"})
    alias(r, op, 1, 13);
  // Attributes added later with the old behaviour as default (ceil_mode,
  // dilations, count_include_pad, storage_order, mode=DCR), or only types.
  alias(r, "Conv", 1, 11);
  alias(r, "ConvTranspose", 1, 11);
  alias(r, "AveragePool", 1, 11);
  alias(r, "MaxPool", 1, 12);
  r.add("Gemm", 1, gemmV1);
  alias(r, "MatMul", 1, 9);
  alias(r, "DepthToSpace", 1, 11);
  // PRelu before 7: a slope of size 1 or one per channel (the handler's
  // channel rule, as old PyTorch exporters wrote it).
  alias(r, "PRelu", 1, 7);
  alias(r, "Cast", 6, 13);
  alias(r, "Equal", 7, 11);
  alias(r, "Greater", 7, 9);
  alias(r, "Less", 7, 9);
  alias(r, "TopK", 10, 11);
  alias(r, "GatherND", 11, 12);
  alias(r, "OneHot", 9, 11);
  alias(r, "Compress", 9, 11);
  alias(r, "MaxUnpool", 9, 11);
  alias(r, "NegativeLogLikelihoodLoss", 12, 13);
  alias(r, "SoftmaxCrossEntropyLoss", 12, 13);
}

} // namespace nncc::import
