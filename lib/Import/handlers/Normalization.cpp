/// Handlers of pooling, normalization and softmax ops.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

template <typename OpTy>
LogicalResult pool(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (ctx.outputUsed(1))
    return ctx.error("the Indices output is not supported");
  if (ctx.attrInt("storage_order", 0) != 0)
    return ctx.error("storage_order=1 is not supported");
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
  out.push_back(build<OpTy>(ctx, *type, ctx.input(0), attrs));
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

LogicalResult batchNorm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 5)))
    return failure();
  if (ctx.attrInt("training_mode", 0) != 0)
    return ctx.error("training_mode=1 is not supported for inference");
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
  SmallVector<Value> operands{ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
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
  r.add("Softmax", 13, softmax<nn::SoftmaxOp>);
  r.add("LogSoftmax", 13, softmax<nn::LogSoftmaxOp>);
}

} // namespace nncc::import
