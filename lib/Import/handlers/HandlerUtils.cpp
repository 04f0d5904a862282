#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {

RankedTensorType broadcastType(Type a, Type b, Type elementType) {
  auto ta = cast<RankedTensorType>(a), tb = cast<RankedTensorType>(b);
  auto shape = nn::broadcastShapes({ta.getShape(), tb.getShape()});
  if (!shape)
    return {};
  return RankedTensorType::get(*shape, elementType);
}

LogicalResult requireInputs(NodeContext &ctx, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!ctx.input(i))
      return ctx.error("input " + llvm::Twine(i) + " is required");
  return success();
}

FailureOr<int64_t> axisAttr(NodeContext &ctx, llvm::StringRef name, int64_t dflt, int64_t rank) {
  int64_t axis = ctx.attrInt(name, dflt);
  auto normalized = nn::normalizeAxis(axis, rank);
  if (!normalized) {
    (void)ctx.error("attribute '" + name + "' = " + llvm::Twine(axis) +
                    " is out of range for rank " + llvm::Twine(rank));
    return failure();
  }
  return *normalized;
}

} // namespace nncc::import
