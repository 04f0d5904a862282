#include "lib/Conversion/NNToExec/ConvEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;

namespace nncc {
namespace {

/// The value of a 0-d (or one-element) f32 nn.constant, if `v` is one.
std::optional<double> constantScalar(Value v) {
  auto constant = v.getDefiningOp<nn::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto values = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!values || values.getNumElements() != 1 || !values.getElementType().isF32())
    return std::nullopt;
  return (*values.getValues<APFloat>().begin()).convertToDouble();
}

} // namespace

Value applyClamp(OpBuilder &b, Location loc, Value v, std::pair<double, double> clamp) {
  auto bound = [&](double x) -> Value {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.getInsertionBlock());
    Attribute value = b.getF32FloatAttr(static_cast<float>(x));
    if (auto vector = dyn_cast<VectorType>(v.getType()))
      value = DenseElementsAttr::get(vector, cast<FloatAttr>(value));
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  };
  v = arith::MaximumFOp::create(b, loc, v, bound(clamp.first));
  if (clamp.second != std::numeric_limits<double>::infinity())
    v = arith::MinimumFOp::create(b, loc, v, bound(clamp.second));
  return v;
}

bool ConvEpilogue::clampIsRelu() const {
  return clamp && clamp->first == 0 && clamp->second == std::numeric_limits<double>::infinity();
}

void ConvEpilogue::moveConvToItsEnd(nn::ConvOp conv) const {
  if (ops.empty())
    return;
  conv->moveBefore(ops.back());
  SmallVector<Location> locs{conv.getLoc()};
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  conv->setLoc(FusedLoc::get(conv.getContext(), locs));
}

void ConvEpilogue::replaceConvAndOps(nn::ConvOp conv, Value result) const {
  Operation *last = ops.empty() ? conv.getOperation() : ops.back();
  last->getResult(0).replaceAllUsesWith(result);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  conv.erase();
}

ConvEpilogue matchConvEpilogue(nn::ConvOp conv) {
  ConvEpilogue epilogue;
  auto onlyUser = [](Value v) { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; };
  Value last = conv.getResult();
  if (auto add = dyn_cast_or_null<nn::AddOp>(onlyUser(last))) {
    Value other = add.getLhs() == last ? add.getRhs() : add.getLhs();
    if (other != last && other.getType() == last.getType() && add.getType() == last.getType()) {
      epilogue.residual = other;
      epilogue.ops.push_back(add);
      last = add.getResult();
    }
  }
  Operation *user = onlyUser(last);
  if (isa_and_nonnull<nn::ReluOp>(user)) {
    epilogue.clamp = std::pair(0.0, std::numeric_limits<double>::infinity());
    epilogue.ops.push_back(user);
  } else if (auto clip = dyn_cast_or_null<nn::ClipOp>(user);
             clip && clip.getInput() == last && constantScalar(clip.getMin()) && constantScalar(clip.getMax())) {
    epilogue.clamp = std::pair(*constantScalar(clip.getMin()), *constantScalar(clip.getMax()));
    epilogue.ops.push_back(user);
  }
  return epilogue;
}

} // namespace nncc
