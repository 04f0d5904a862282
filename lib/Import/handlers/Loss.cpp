/// Handlers of the loss ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss),
/// composed from nn ops so that autodiff, fusion and both targets see only
/// ops they already know.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// NegativeLogLikelihoodLoss of `input` [N, C, d...] (log-probabilities) and
/// `target` [N, d...] with the node's reduction and ignore_index. The class
/// of each element is picked with a one-hot mask (target == class id) rather
/// than a gather, so an ignored target outside [0, C) is never an index: its
/// mask row is empty and it adds neither loss nor weight.
FailureOr<Value> nllLoss(NodeContext &ctx, Value input, Value target, Value weight) {
  auto inType = cast<RankedTensorType>(input.getType());
  auto tType = cast<RankedTensorType>(target.getType());
  if (!inType.hasStaticShape() || !tType.hasStaticShape())
    return ctx.error("needs static input and target shapes");
  int64_t rank = inType.getRank();
  SmallVector<int64_t> tShape(tType.getShape());
  SmallVector<int64_t> expected(inType.getShape());
  if (rank >= 2)
    expected.erase(expected.begin() + 1);
  if (rank < 2 || tShape != expected)
    return ctx.error("expects input [N, C, d...] and target [N, d...]");
  Type elem = inType.getElementType(), tElem = tType.getElementType();
  if (!isa<FloatType>(elem) || !isa<IntegerType>(tElem))
    return ctx.error("expects a float input and an integer target");
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("reduction '" + reduction + "' is not one of none, sum, mean");
  int64_t classes = inType.getShape()[1];
  Type i1 = ctx.builder().getI1Type();

  SmallVector<int64_t> kept(tShape);
  kept.insert(kept.begin() + 1, 1);
  auto keptTarget = RankedTensorType::get(kept, tElem);
  Value t = build<nn::ReshapeOp>(ctx, keptTarget, target);
  SmallVector<int64_t> rowShape(rank, 1);
  rowShape[1] = classes;
  auto idType = RankedTensorType::get(rowShape, tElem);
  SmallVector<APInt> ids;
  for (int64_t c = 0; c < classes; ++c)
    ids.push_back(APInt(tElem.getIntOrFloatBitWidth(), c, /*isSigned=*/true));
  Value classIds = ctx.constant(DenseElementsAttr::get(idType, ids));
  auto maskType = RankedTensorType::get(inType.getShape(), i1);
  Value mask = build<nn::EqualOp>(ctx, maskType, {t, classIds});
  if (ctx.hasAttr("ignore_index")) {
    auto keptMask = RankedTensorType::get(kept, i1);
    Value ignored = ctx.scalar(tElem, (double)ctx.attrInt("ignore_index", 0));
    Value isIgnored = build<nn::EqualOp>(ctx, keptMask, {t, ignored});
    Value valid = build<nn::NotOp>(ctx, keptMask, isIgnored);
    mask = build<nn::AndOp>(ctx, maskType, {mask, valid});
  }

  Value zero = ctx.scalar(elem, 0.0);
  auto lossType = RankedTensorType::get(tShape, elem);
  SmallVector<NamedAttribute> classAxis{i64ArrayAttr(ctx, "axes", {1}),
                                        boolAttr(ctx, "keepdims", false)};
  auto pick = [&](Value v) -> Value {
    Value selected = build<nn::WhereOp>(ctx, inType, {mask, v, zero});
    return build<nn::ReduceSumOp>(ctx, lossType, selected, classAxis);
  };
  Value picked = pick(input);
  // The weight of each element's class (the mean's divisor); without weights
  // 1, or 0 for an ignored element.
  Value w;
  if (weight) {
    auto wType = cast<RankedTensorType>(weight.getType());
    if (wType.getRank() != 1 || wType.getShape()[0] != classes)
      return ctx.error("weight must have C = " + llvm::Twine(classes) + " entries");
    w = pick(build<nn::ReshapeOp>(ctx, RankedTensorType::get(rowShape, elem), weight));
    picked = build<nn::MulOp>(ctx, lossType, {picked, w});
  } else if (reduction == "mean") {
    Value counted = build<nn::CastOp>(ctx, inType, mask);
    w = build<nn::ReduceSumOp>(ctx, lossType, counted, classAxis);
  }
  Value loss = build<nn::NegOp>(ctx, lossType, picked);
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < lossType.getRank(); ++i)
    all.push_back(i);
  auto scalarType = RankedTensorType::get({}, elem);
  SmallVector<NamedAttribute> allAxes{i64ArrayAttr(ctx, "axes", all),
                                      boolAttr(ctx, "keepdims", false)};
  Value total = build<nn::ReduceSumOp>(ctx, scalarType, loss, allAxes);
  if (reduction == "sum")
    return total;
  Value totalWeight = build<nn::ReduceSumOp>(ctx, scalarType, w, allAxes);
  return (Value)build<nn::DivOp>(ctx, scalarType, {total, totalWeight});
}

LogicalResult negativeLogLikelihoodLoss(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto loss = nllLoss(ctx, ctx.input(0), ctx.input(1), ctx.input(2));
  if (failed(loss))
    return failure();
  out.push_back(*loss);
  return success();
}

/// SoftmaxCrossEntropyLoss is NegativeLogLikelihoodLoss of LogSoftmax over
/// the class axis (1); the log-probabilities are its optional second output.
LogicalResult softmaxCrossEntropyLoss(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto scores = ctx.inputType(0);
  if (scores.getRank() < 2 || !isa<FloatType>(scores.getElementType()))
    return ctx.error("expects float scores [N, C, d...]");
  Value logProb = build<nn::LogSoftmaxOp>(ctx, scores, ctx.input(0), {i64Attr(ctx, "axis", 1)});
  auto loss = nllLoss(ctx, logProb, ctx.input(1), ctx.input(2));
  if (failed(loss))
    return failure();
  out.push_back(*loss);
  out.push_back(ctx.outputUsed(1) ? logProb : Value());
  return success();
}

} // namespace

void registerLossHandlers(HandlerRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 13, negativeLogLikelihoodLoss);
  r.add("SoftmaxCrossEntropyLoss", 13, softmaxCrossEntropyLoss);
}

} // namespace nncc::import
