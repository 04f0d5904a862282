/// Losses (cross-entropy, mean squared error, the model's own) as nn ops.
#include "passes/Loss.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace nncc {
namespace {

RankedTensorType f32Scalar(OpBuilder &b) { return RankedTensorType::get({}, b.getF32Type()); }

SmallVector<int64_t> allAxes(Value v) {
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
    axes.push_back(d);
  return axes;
}

Value reduce(OpBuilder &b, Location loc, bool mean, Value x, ArrayRef<int64_t> axes, Type type) {
  if (mean)
    return nn::ReduceMeanOp::create(b, loc, type, x, Value(), b.getDenseI64ArrayAttr(axes),
                                    b.getBoolAttr(false), b.getBoolAttr(false));
  return nn::ReduceSumOp::create(b, loc, type, x, Value(), b.getDenseI64ArrayAttr(axes),
                                 b.getBoolAttr(false), b.getBoolAttr(false));
}

/// mean over n of -log_softmax(logits)[n, labels[n]], and an i32 flag set
/// when a label lies outside [0, C).
std::pair<Value, Value> crossEntropy(OpBuilder &b, Location loc, Value output, Value labels) {
  Value logp;
  Operation *def = output.getDefiningOp();
  auto outType = cast<RankedTensorType>(output.getType());
  if (auto softmax = dyn_cast_or_null<nn::SoftmaxOp>(def); softmax && softmax.getAxis() == 1)
    logp = nn::LogSoftmaxOp::create(b, loc, outType, softmax.getInput(), softmax.getAxisAttr());
  else if (auto logSoftmax = dyn_cast_or_null<nn::LogSoftmaxOp>(def); logSoftmax && logSoftmax.getAxis() == 1)
    logp = output;
  else
    logp = nn::LogSoftmaxOp::create(b, loc, outType, output, b.getI64IntegerAttr(1));
  int64_t n = outType.getShape()[0], c = outType.getShape()[1];
  auto labelType = cast<RankedTensorType>(labels.getType());
  // one_hot[n, c] = (labels[n] == c), the class ids a constant row.
  auto column = RankedTensorType::get({n, 1}, labelType.getElementType());
  Value labelColumn = nn::ReshapeOp::create(b, loc, column, labels, Value());
  auto idsType = RankedTensorType::get({1, c}, labelType.getElementType());
  SmallVector<APInt> ids;
  for (int64_t i = 0; i < c; ++i)
    ids.push_back(APInt(labelType.getElementType().getIntOrFloatBitWidth(), i));
  Value classIds = nn::ConstantOp::create(b, loc, idsType, DenseElementsAttr::get(idsType, ids));
  Value hit = nn::EqualOp::create(b, loc, RankedTensorType::get({n, c}, b.getI1Type()), labelColumn, classIds);
  Value oneHot = nn::CastOp::create(b, loc, outType, hit);
  Value picked = reduce(b, loc, /*mean=*/false, nn::MulOp::create(b, loc, outType, oneHot, logp), {1},
                        RankedTensorType::get({n}, b.getF32Type()));
  Value loss = nn::NegOp::create(b, loc, f32Scalar(b), reduce(b, loc, true, picked, {0}, f32Scalar(b)));
  // A label outside [0, C) matches no class: the sum would silently be 0.
  auto i32 = b.getI32Type();
  Value valid = reduce(b, loc, false, nn::CastOp::create(b, loc, RankedTensorType::get({n, c}, i32), hit), {1},
                       RankedTensorType::get({n}, i32));
  auto i32Scalar = RankedTensorType::get({}, i32);
  Value one = nn::ConstantOp::create(b, loc, i32Scalar, DenseElementsAttr::get(i32Scalar, b.getI32IntegerAttr(1)));
  Value missed = nn::SubOp::create(b, loc, RankedTensorType::get({n}, i32), one, valid);
  Value flag = nn::ReduceMaxOp::create(b, loc, i32Scalar, missed, Value(), b.getDenseI64ArrayAttr({0}),
                                       b.getBoolAttr(false), b.getBoolAttr(false));
  return {loss, flag};
}

} // namespace

FailureOr<func::FuncOp> buildLossFunction(ModuleOp module, func::FuncOp forward, StringRef name,
                                          const LossOptions &options) {
  auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  // The output the loss reads.
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < forward.getNumResults(); ++i) {
    auto resultName = forward.getResultAttrOfType<StringAttr>(i, "nn.name");
    if (!forward.getResultAttr(i, "nncc.check") &&
        (options.output.empty() || (resultName && resultName.getValue() == options.output)))
      candidates.push_back(i);
  }
  if (candidates.empty())
    return forward.emitError("--loss-output: the model has no output '") << options.output << "'";
  if (candidates.size() > 1)
    return forward.emitError("the model has several outputs: name the one the loss reads (--loss-output)");
  unsigned index = candidates.front();
  auto outType = dyn_cast<RankedTensorType>(forward.getResultTypes()[index]);
  if (!outType || !outType.hasStaticShape() || !outType.getElementType().isF32())
    return forward.emitError("the loss reads a statically shaped f32 output");
  Type labelType;
  if (options.kind == "cross-entropy") {
    if (outType.getRank() != 2)
      return forward.emitError("cross-entropy reads logits [N, C]; the output is ") << outType;
    labelType = RankedTensorType::get({outType.getShape()[0]}, IntegerType::get(module.getContext(), 64));
  } else if (options.kind == "mse") {
    labelType = outType;
  } else if (options.kind == "output") {
    if (outType.getNumElements() != 1)
      return forward.emitError("--loss=output needs an output of one element; it is ") << outType;
  } else {
    return forward.emitError("unknown loss '") << options.kind << "' (expected cross-entropy, mse or output)";
  }

  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> inputs(forward.getArgumentTypes());
  SmallVector<Attribute> argAttrs;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    argAttrs.push_back(forward.getArgAttrDict(i) ? forward.getArgAttrDict(i) : b.getDictionaryAttr({}));
  if (labelType) {
    inputs.push_back(labelType);
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("nn.name", b.getStringAttr(options.labelName))));
  }
  SmallVector<Type> results{f32Scalar(b)};
  auto func = func::FuncOp::create(b, forward.getLoc(), name, b.getFunctionType(inputs, results));
  func.setAllArgAttrs(argAttrs);
  func.setResultAttr(0, "nn.name", b.getStringAttr("loss"));
  SymbolTable(module).insert(func);
  Block *body = func.addEntryBlock();
  OpBuilder fb = OpBuilder::atBlockBegin(body);
  IRMapping map;
  map.map(forward.getArguments(), body->getArguments().take_front(forward.getNumArguments()));
  for (Operation &op : forward.getBody().front().without_terminator())
    fb.clone(op, map);
  Value output = map.lookup(ret.getOperand(index));
  Location loc = NameLoc::get(fb.getStringAttr(options.kind + " loss"));
  Value loss, flag;
  if (options.kind == "cross-entropy") {
    std::tie(loss, flag) = crossEntropy(fb, loc, output, body->getArguments().back());
  } else if (options.kind == "mse") {
    Value diff = nn::SubOp::create(fb, loc, outType, output, body->getArguments().back());
    loss = reduce(fb, loc, true, nn::MulOp::create(fb, loc, outType, diff, diff), allAxes(diff), f32Scalar(fb));
  } else {
    loss = nn::ReshapeOp::create(fb, loc, f32Scalar(fb), output, Value());
  }
  SmallVector<Value> returned{loss};
  if (flag) {
    int64_t c = outType.getShape()[1];
    std::string message = "input '" + options.labelName + "': a label is outside the classes [0, " +
                          std::to_string(c) + ")";
    (void)func.insertResult(1, flag.getType(),
                            fb.getDictionaryAttr(fb.getNamedAttr("nncc.check", fb.getStringAttr(message))));
    returned.push_back(flag);
  }
  func::ReturnOp::create(fb, loc, returned);
  return func;
}

} // namespace nncc
