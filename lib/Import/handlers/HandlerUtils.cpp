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

Value linearIndex(NodeContext &ctx, Value indices, ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t q = type.getRank();
  Type i64 = ctx.builder().getI64Type(), i1 = ctx.builder().getI1Type();
  if (type.getElementType() != i64)
    indices = build<nn::CastOp>(ctx, RankedTensorType::get(type.getShape(), i64), indices);
  ArrayRef<int64_t> tupleShape = type.getShape().drop_back();
  auto tupleType = RankedTensorType::get(tupleShape, i64);
  auto maskType = RankedTensorType::get(tupleShape, i1);
  Value linear;
  for (auto [j, dim] : llvm::enumerate(dims)) {
    Value col = build<nn::GatherOp>(ctx, tupleType, {indices, ctx.constantI64({(int64_t)j}, {})},
                                    {i64Attr(ctx, "axis", q - 1)});
    Value negative = build<nn::LessOp>(ctx, maskType, {col, ctx.scalar(i64, 0)});
    Value wrapped = build<nn::AddOp>(ctx, tupleType, {col, ctx.scalar(i64, (double)dim)});
    col = build<nn::WhereOp>(ctx, tupleType, {negative, wrapped, col});
    if (!linear) {
      linear = col;
      continue;
    }
    Value scaled = build<nn::MulOp>(ctx, tupleType, {linear, ctx.scalar(i64, (double)dim)});
    linear = build<nn::AddOp>(ctx, tupleType, {scaled, col});
  }
  if (!linear) // Empty tuples take whole slices.
    linear = ctx.constant(DenseElementsAttr::get(tupleType, APInt(64, 0)));
  return linear;
}

} // namespace nncc::import
