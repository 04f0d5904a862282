/// Handlers of reductions, arg-reductions, CumSum and TopK.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Axes come from the `axes` attribute (older opsets) or input 1 (newer).
template <typename OpTy>
LogicalResult reduce(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  bool noopWhenEmpty = ctx.attrInt("noop_with_empty_axes", 0) != 0;
  std::optional<SmallVector<int64_t>> axes;
  if (ctx.hasAttr("axes"))
    axes = ctx.attrInts("axes");
  else if (!ctx.input(1))
    axes = SmallVector<int64_t>();
  else
    axes = ctx.constInts(1);

  if (!axes) { // Axes known only at run time.
    auto type = ctx.resultType(0);
    if (failed(type))
      return failure();
    out.push_back(build<OpTy>(ctx, *type, {ctx.input(0), ctx.input(1)},
                              {boolAttr(ctx, "keepdims", keepdims),
                               boolAttr(ctx, "noop_with_empty_axes", noopWhenEmpty)}));
    return success();
  }
  if (axes->empty() && noopWhenEmpty) {
    out.push_back(ctx.input(0));
    return success();
  }
  auto resolved = nn::resolveReduceAxes(*axes, input.getRank());
  if (!resolved)
    return ctx.error(llvm::toString(resolved.takeError()));
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < input.getRank(); ++i) {
    bool reduced = llvm::is_contained(*resolved, i);
    if (!reduced)
      shape.push_back(input.getShape()[i]);
    else if (keepdims)
      shape.push_back(1);
  }
  auto type = ctx.resultTypeOr(0, RankedTensorType::get(shape, input.getElementType()));
  out.push_back(build<OpTy>(ctx, type, ctx.input(0),
                            {i64ArrayAttr(ctx, "axes", *resolved),
                             boolAttr(ctx, "keepdims", keepdims)}));
  return success();
}

/// The reductions ONNX defines as a map, a sum and a finish: ReduceL1,
/// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp (its sum of exp taken
/// with the max subtracted, so large inputs do not overflow).
enum class Composed { L1, SumSquare, LogSum, LogSumExp };

template <Composed kind>
LogicalResult composedReduce(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  std::optional<SmallVector<int64_t>> axes;
  if (ctx.hasAttr("axes"))
    axes = ctx.attrInts("axes");
  else if (!ctx.input(1))
    axes = SmallVector<int64_t>();
  else if (!(axes = ctx.constInts(1)))
    return ctx.error("axes must be a constant");
  if (axes->empty() && ctx.attrInt("noop_with_empty_axes", 0) != 0)
    return ctx.error("noop_with_empty_axes with empty axes is not supported");
  auto resolved = nn::resolveReduceAxes(*axes, input.getRank());
  if (!resolved)
    return ctx.error(llvm::toString(resolved.takeError()));
  SmallVector<int64_t> keptShape(input.getShape()), shape;
  for (int64_t i = 0; i < input.getRank(); ++i) {
    bool reduced = llvm::is_contained(*resolved, i);
    if (reduced)
      keptShape[i] = 1;
    if (!reduced || keepdims)
      shape.push_back(keptShape[i]);
  }
  Type elem = input.getElementType();
  if ((kind == Composed::LogSum || kind == Composed::LogSumExp) && !isa<FloatType>(elem))
    return ctx.error("expects a float input");
  auto kept = RankedTensorType::get(keptShape, elem);
  auto type = ctx.resultTypeOr(0, RankedTensorType::get(shape, elem));
  auto attrs = [&](bool keep) {
    return SmallVector<NamedAttribute>{i64ArrayAttr(ctx, "axes", *resolved),
                                       boolAttr(ctx, "keepdims", keep)};
  };
  Value x = ctx.input(0);
  switch (kind) {
  case Composed::L1:
    x = build<nn::AbsOp>(ctx, input, x);
    break;
  case Composed::SumSquare:
    x = build<nn::MulOp>(ctx, input, {x, x});
    break;
  case Composed::LogSum:
    break;
  case Composed::LogSumExp: {
    Value max = build<nn::ReduceMaxOp>(ctx, kept, x, attrs(true));
    Value shifted = build<nn::SubOp>(ctx, input, {x, max});
    Value exp = build<nn::ExpOp>(ctx, input, shifted);
    Value sum = build<nn::ReduceSumOp>(ctx, type, exp, attrs(keepdims));
    Value log = build<nn::LogOp>(ctx, type, sum);
    Value maxOut = keepdims ? max : build<nn::ReduceMaxOp>(ctx, type, x, attrs(false));
    out.push_back(build<nn::AddOp>(ctx, type, {log, maxOut}));
    return success();
  }
  }
  Value sum = build<nn::ReduceSumOp>(ctx, type, x, attrs(keepdims));
  if (kind == Composed::LogSum)
    sum = build<nn::LogOp>(ctx, type, sum);
  out.push_back(sum);
  return success();
}

template <typename OpTy>
LogicalResult argReduce(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto axis = axisAttr(ctx, "axis", 0, ctx.inputType(0).getRank());
  auto type = ctx.resultType(0);
  if (failed(axis) || failed(type))
    return failure();
  out.push_back(build<OpTy>(ctx, *type, ctx.input(0),
                            {i64Attr(ctx, "axis", *axis),
                             boolAttr(ctx, "keepdims", ctx.attrInt("keepdims", 1)),
                             boolAttr(ctx, "select_last_index",
                                      ctx.attrInt("select_last_index", 0))}));
  return success();
}

LogicalResult cumsum(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  SmallVector<NamedAttribute> attrs{boolAttr(ctx, "exclusive", ctx.attrInt("exclusive", 0)),
                                    boolAttr(ctx, "reverse", ctx.attrInt("reverse", 0))};
  SmallVector<Value> operands{ctx.input(0)};
  if (auto axis = ctx.constInts(1)) {
    if (axis->size() != 1)
      return ctx.error("axis must hold one value");
    auto normalized = nn::normalizeAxis((*axis)[0], ctx.inputType(0).getRank());
    if (!normalized)
      return ctx.error("axis " + llvm::Twine((*axis)[0]) + " is out of range");
    attrs.push_back(i64Attr(ctx, "axis", *normalized));
  } else {
    operands.push_back(ctx.input(1));
  }
  out.push_back(build<nn::CumSumOp>(ctx, ctx.inputType(0), operands, attrs));
  return success();
}

LogicalResult topK(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto axis = axisAttr(ctx, "axis", -1, ctx.inputType(0).getRank());
  auto values = ctx.resultType(0);
  auto indices = ctx.resultType(1);
  if (failed(axis) || failed(values) || failed(indices))
    return failure();
  SmallVector<Value> operands{ctx.input(0)};
  if (!values->hasStaticShape())
    operands.push_back(ctx.input(1));
  auto op = build<nn::TopKOp>(ctx, {*values, *indices}, operands,
                              {i64Attr(ctx, "axis", *axis),
                               boolAttr(ctx, "largest", ctx.attrInt("largest", 1)),
                               boolAttr(ctx, "sorted", ctx.attrInt("sorted", 1))});
  out.push_back(op.getValues());
  out.push_back(op.getIndices());
  return success();
}

} // namespace

void registerReductionHandlers(HandlerRegistry &r) {
  // ReduceSum takes axes as an input from opset 13, the others from 18; one
  // handler reads either form.
  r.add("ReduceMean", 13, reduce<nn::ReduceMeanOp>);
  r.add("ReduceSum", 13, reduce<nn::ReduceSumOp>);
  r.add("ReduceMax", 13, reduce<nn::ReduceMaxOp>);
  r.add("ReduceMin", 13, reduce<nn::ReduceMinOp>);
  r.add("ReduceProd", 13, reduce<nn::ReduceProdOp>);
  r.add("ReduceL2", 13, reduce<nn::ReduceL2Op>);
  r.add("ReduceL1", 1, composedReduce<Composed::L1>);
  r.add("ReduceSumSquare", 1, composedReduce<Composed::SumSquare>);
  r.add("ReduceLogSum", 1, composedReduce<Composed::LogSum>);
  r.add("ReduceLogSumExp", 1, composedReduce<Composed::LogSumExp>);
  r.add("ArgMax", 13, argReduce<nn::ArgMaxOp>);
  r.add("ArgMin", 13, argReduce<nn::ArgMinOp>);
  r.add("CumSum", 11, cumsum);
  r.add("TopK", 11, topK);
}

} // namespace nncc::import
