/// Handlers of pooling, normalization and softmax ops.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

template <typename OpTy>
LogicalResult pool(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  bool withIndices = std::is_same_v<OpTy, nn::MaxPoolOp> && ctx.outputUsed(1);
  if (ctx.attrInt("storage_order", 0) != 0 && !withIndices)
    return ctx.error("storage_order=1 applies only to the Indices output");
  auto input = ctx.inputType(0);
  if (input.getRank() < 3)
    return ctx.error("input must have rank >= 3");
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.error("attribute 'kernel_shape' is required");
  SmallVector<int64_t> kernel = ctx.attrInts("kernel_shape"), strides, dilations;
  auto pads = poolPads(ctx, input, kernel, strides, dilations);
  auto type = ctx.resultType(0);
  if (failed(pads) || failed(type))
    return failure();
  SmallVector<NamedAttribute> attrs{
      i64ArrayAttr(ctx, "kernel_shape", kernel), i64ArrayAttr(ctx, "strides", strides),
      i64ArrayAttr(ctx, "pads", *pads), i64ArrayAttr(ctx, "dilations", dilations),
      boolAttr(ctx, "ceil_mode", ctx.attrInt("ceil_mode", 0))};
  if (std::is_same_v<OpTy, nn::AveragePoolOp>)
    attrs.push_back(boolAttr(ctx, "count_include_pad", ctx.attrInt("count_include_pad", 0)));
  if (withIndices)
    attrs.push_back(boolAttr(ctx, "column_major_indices", ctx.attrInt("storage_order", 0) != 0));
  SmallVector<Type> types{*type};
  if (withIndices) {
    auto indicesType = ctx.resultType(1);
    if (failed(indicesType))
      return failure();
    types.push_back(*indicesType);
  }
  auto op = build<OpTy>(ctx, types, ctx.input(0), attrs);
  out.append(op->getResults().begin(), op->getResults().end());
  return success();
}

/// GlobalAveragePool/GlobalMaxPool are reductions over the spatial axes.
template <typename OpTy>
LogicalResult globalPool(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  if (input.getRank() < 3)
    return ctx.error("input must have rank >= 3");
  SmallVector<int64_t> axes, shape(input.getShape());
  for (int64_t i = 2; i < input.getRank(); ++i) {
    axes.push_back(i);
    shape[i] = 1;
  }
  auto type = ctx.resultTypeOr(0, RankedTensorType::get(shape, input.getElementType()));
  out.push_back(build<OpTy>(ctx, type, ctx.input(0),
                            {i64ArrayAttr(ctx, "axes", axes), boolAttr(ctx, "keepdims", true)}));
  return success();
}

/// Training-mode BatchNormalization normalizes with the batch's own
/// statistics (over every axis but 1) and updates the running ones:
/// running = input * momentum + batch * (1 - momentum). Built from nn ops.
LogicalResult batchNormTraining(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem) || type.getRank() < 2 || !type.hasStaticShape())
    return ctx.error("training mode needs a static float input of rank >= 2");
  int64_t rank = type.getRank(), channels = type.getShape()[1];
  double eps = ctx.attrFloat("epsilon", 1e-5), momentum = ctx.attrFloat("momentum", 0.9);
  SmallVector<int64_t> axes{0}, keptShape(rank, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  keptShape[1] = channels;
  auto kept = RankedTensorType::get(keptShape, elem);
  auto perChannel = RankedTensorType::get({channels}, elem);
  SmallVector<NamedAttribute> reduceAttrs{i64ArrayAttr(ctx, "axes", axes), boolAttr(ctx, "keepdims", true)};
  Value x = ctx.input(0);
  Value mean = build<nn::ReduceMeanOp>(ctx, kept, x, reduceAttrs);
  Value centered = build<nn::SubOp>(ctx, type, {x, mean});
  Value squared = build<nn::MulOp>(ctx, type, {centered, centered});
  Value var = build<nn::ReduceMeanOp>(ctx, kept, squared, reduceAttrs);
  Value shifted = build<nn::AddOp>(ctx, kept, {var, ctx.scalar(elem, eps)});
  Value stdDev = build<nn::SqrtOp>(ctx, kept, shifted);
  auto channelView = [&](Value v) { return (Value)build<nn::ReshapeOp>(ctx, kept, v); };
  Value y = build<nn::DivOp>(ctx, type, {centered, stdDev});
  y = build<nn::MulOp>(ctx, type, {y, channelView(ctx.input(1))});
  y = build<nn::AddOp>(ctx, type, {y, channelView(ctx.input(2))});
  out.push_back(y);
  Value keep = ctx.scalar(elem, momentum), take = ctx.scalar(elem, 1.0 - momentum);
  for (auto [input, batch] : {std::pair{ctx.input(3), mean}, std::pair{ctx.input(4), var}}) {
    Value flat = build<nn::ReshapeOp>(ctx, perChannel, batch);
    Value old = build<nn::MulOp>(ctx, perChannel, {input, keep});
    Value fresh = build<nn::MulOp>(ctx, perChannel, {flat, take});
    Value running = build<nn::AddOp>(ctx, perChannel, {old, fresh});
    out.push_back(running);
  }
  return success();
}

LogicalResult batchNorm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 5)))
    return failure();
  if (ctx.attrInt("training_mode", 0) != 0)
    return batchNormTraining(ctx, out);
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.outputUsed(i))
      return ctx.error("the training outputs (running mean/variance) are not supported");
  out.push_back(build<nn::BatchNormOp>(
      ctx, ctx.inputType(0),
      {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
      {f64Attr(ctx, "epsilon", ctx.attrFloat("epsilon", 1e-5))}));
  return success();
}

LogicalResult layerNorm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto axis = axisAttr(ctx, "axis", -1, ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  double epsilon = ctx.attrFloat("epsilon", 1e-5);
  SmallVector<Value> operands = ctx.presentInputs(3);
  out.push_back(build<nn::LayerNormOp>(
      ctx, ctx.inputType(0), operands,
      {i64Attr(ctx, "axis", *axis), f64Attr(ctx, "epsilon", epsilon)}));
  if (!ctx.outputUsed(1) && !ctx.outputUsed(2))
    return success();
  // The statistics outputs (used by training exporters) are computed apart in
  // the stash type; fusion merges them with the normalization.
  auto meanType = ctx.resultType(ctx.outputUsed(1) ? 1 : 2);
  if (failed(meanType))
    return failure();
  Value x = ctx.input(0);
  if (ctx.inputType(0).getElementType() != meanType->getElementType())
    x = build<nn::CastOp>(ctx,
                          RankedTensorType::get(ctx.inputType(0).getShape(),
                                                meanType->getElementType()),
                          x);
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < ctx.inputType(0).getRank(); ++i)
    axes.push_back(i);
  SmallVector<NamedAttribute> reduceAttrs{i64ArrayAttr(ctx, "axes", axes),
                                          boolAttr(ctx, "keepdims", true)};
  Value mean = build<nn::ReduceMeanOp>(ctx, *meanType, x, reduceAttrs);
  Value centered = build<nn::SubOp>(ctx, x.getType(), {x, mean});
  Value squared = build<nn::MulOp>(ctx, x.getType(), {centered, centered});
  Value variance = build<nn::ReduceMeanOp>(ctx, *meanType, squared, reduceAttrs);
  Value eps = ctx.scalar(meanType->getElementType(), epsilon);
  Value shifted = build<nn::AddOp>(ctx, *meanType, {variance, eps});
  Value stdDev = build<nn::SqrtOp>(ctx, *meanType, shifted);
  Value invStdDev = build<nn::ReciprocalOp>(ctx, *meanType, stdDev);
  out.push_back(ctx.outputUsed(1) ? mean : Value());
  out.push_back(ctx.outputUsed(2) ? invStdDev : Value());
  return success();
}

LogicalResult instanceNorm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  out.push_back(build<nn::InstanceNormOp>(
      ctx, ctx.inputType(0), {ctx.input(0), ctx.input(1), ctx.input(2)},
      {f64Attr(ctx, "epsilon", ctx.attrFloat("epsilon", 1e-5))}));
  return success();
}

/// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes`, the
/// epsilon of ONNX's function body.
LogicalResult meanVarianceNorm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem))
    return ctx.error("expects a float input");
  auto axes = nn::resolveReduceAxes(ctx.attrInts("axes", {0, 2, 3}), type.getRank());
  if (!axes)
    return ctx.error(llvm::toString(axes.takeError()));
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t a : *axes)
    keptShape[a] = 1;
  auto kept = RankedTensorType::get(keptShape, elem);
  SmallVector<NamedAttribute> attrs{i64ArrayAttr(ctx, "axes", *axes),
                                    boolAttr(ctx, "keepdims", true)};
  Value x = ctx.input(0);
  Value mean = build<nn::ReduceMeanOp>(ctx, kept, x, attrs);
  Value centered = build<nn::SubOp>(ctx, type, {x, mean});
  Value squared = build<nn::MulOp>(ctx, type, {centered, centered});
  Value variance = build<nn::ReduceMeanOp>(ctx, kept, squared, attrs);
  Value stdDev = build<nn::SqrtOp>(ctx, kept, variance);
  Value shifted = build<nn::AddOp>(ctx, kept, {stdDev, ctx.scalar(elem, 1e-9)});
  out.push_back(build<nn::DivOp>(ctx, type, {centered, shifted}));
  return success();
}

/// LRN: x / (bias + alpha / size * sum of x^2 over `size` neighbouring
/// channels)^beta. The channel window sum is an average pool (pads counted)
/// over a [N, 1, C, rest] view, times size.
LogicalResult lrn(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem) || type.getRank() < 3 || !type.hasStaticShape())
    return ctx.error("expects a static float input of rank >= 3");
  int64_t size = ctx.attrInt("size", 0);
  if (size <= 0)
    return ctx.error("attribute 'size' must be positive");
  double alpha = ctx.attrFloat("alpha", 1e-4), beta = ctx.attrFloat("beta", 0.75),
         bias = ctx.attrFloat("bias", 1.0);
  int64_t rest = 1;
  for (int64_t d : type.getShape().drop_front(2))
    rest *= d;
  auto view = RankedTensorType::get({type.getShape()[0], 1, type.getShape()[1], rest}, elem);
  Value x = ctx.input(0);
  Value squared = build<nn::MulOp>(ctx, type, {x, x});
  Value viewed = build<nn::ReshapeOp>(ctx, view, squared);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value average = build<nn::AveragePoolOp>(
      ctx, view, viewed,
      {i64ArrayAttr(ctx, "kernel_shape", {size, 1}), i64ArrayAttr(ctx, "strides", {1, 1}),
       i64ArrayAttr(ctx, "pads", {before, 0, after, 0}), i64ArrayAttr(ctx, "dilations", {1, 1}),
       boolAttr(ctx, "ceil_mode", false), boolAttr(ctx, "count_include_pad", true)});
  Value window = build<nn::ReshapeOp>(ctx, type, average);
  Value scaled = build<nn::MulOp>(ctx, type, {window, ctx.scalar(elem, alpha)});
  Value base = build<nn::AddOp>(ctx, type, {scaled, ctx.scalar(elem, bias)});
  Value denom = build<nn::PowOp>(ctx, type, {base, ctx.scalar(elem, beta)});
  out.push_back(build<nn::DivOp>(ctx, type, {x, denom}));
  return success();
}

template <typename OpTy>
LogicalResult softmax(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto axis = axisAttr(ctx, "axis", -1, ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  out.push_back(build<OpTy>(ctx, ctx.inputType(0), ctx.input(0), {i64Attr(ctx, "axis", *axis)}));
  return success();
}

} // namespace

void registerNormalizationHandlers(HandlerRegistry &r) {
  r.add("MaxPool", 12, pool<nn::MaxPoolOp>);
  r.add("AveragePool", 11, pool<nn::AveragePoolOp>);
  r.add("GlobalAveragePool", 1, globalPool<nn::ReduceMeanOp>);
  r.add("GlobalMaxPool", 1, globalPool<nn::ReduceMaxOp>);
  r.add("BatchNormalization", 9, batchNorm);
  r.add("LayerNormalization", 17, layerNorm);
  r.add("InstanceNormalization", 6, instanceNorm);
  r.add("MeanVarianceNormalization", 9, meanVarianceNorm);
  r.add("LRN", 1, lrn);
  r.add("Softmax", 13, softmax<nn::SoftmaxOp>);
  r.add("LogSoftmax", 13, softmax<nn::LogSoftmaxOp>);
}

} // namespace nncc::import
