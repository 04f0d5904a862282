#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc {

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape) {
  SmallVector<AffineExpr> exprs;
  size_t offset = outShape.size() - inShape.size();
  for (size_t i = 0; i < inShape.size(); ++i) {
    if (inShape[i] == 1 && outShape[offset + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(outShape.size(), 0, exprs, ctx);
}

SmallVector<Value>
generic(OpBuilder &b, Location loc, ValueRange inputs, ValueRange inits, ArrayRef<AffineMap> maps,
        ArrayRef<utils::IteratorType> iterators,
        const std::function<SmallVector<Value>(OpBuilder &, Location, ValueRange)> &body) {
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  auto op = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange scalars) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, scalars));
      });
  return SmallVector<Value>(op.getResults());
}

Value broadcastGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                       const ScalarBody &body) {
  auto outType = cast<RankedTensorType>(init.getType());
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(b.getContext(), cast<RankedTensorType>(in.getType()).getShape(),
                                outType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(outType.getRank()));
  SmallVector<utils::IteratorType> iterators(outType.getRank(), utils::IteratorType::parallel);
  return generic(b, loc, inputs, init, maps, iterators,
                 [&](OpBuilder &nb, Location nloc, ValueRange scalars) -> SmallVector<Value> {
                   return {body(nb, nloc, scalars.drop_back())};
                 })[0];
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, (int64_t)value));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? (Value)arith::AddFOp::create(b, loc, x, y)
                                     : (Value)arith::AddIOp::create(b, loc, x, y);
}

Value mulScalars(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? (Value)arith::MulFOp::create(b, loc, x, y)
                                     : (Value)arith::MulIOp::create(b, loc, x, y);
}

Value clampIndex(OpBuilder &b, Location loc, Value i, int64_t size) {
  Value lo = arith::MaxSIOp::create(b, loc, i, indexConstant(b, loc, 0));
  return arith::MinSIOp::create(b, loc, lo, indexConstant(b, loc, std::max<int64_t>(size - 1, 0)));
}

Value fill(OpBuilder &b, Location loc, Value init, Value value) {
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

Value fillBox(OpBuilder &b, Location loc, Value t, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes, Value value) {
  if (llvm::is_contained(sizes, 0))
    return t;
  SmallVector<OpFoldResult> at, extent, unit(offsets.size(), b.getIndexAttr(1));
  for (auto [o, n] : llvm::zip_equal(offsets, sizes)) {
    at.push_back(b.getIndexAttr(o));
    extent.push_back(b.getIndexAttr(n));
  }
  Value box = tensor::ExtractSliceOp::create(b, loc, t, at, extent, unit);
  return tensor::InsertSliceOp::create(b, loc, fill(b, loc, box, value), t, at, extent, unit);
}

SmallVector<Value> gridCoordinates(OpBuilder &b, Location loc, Value index, ArrayRef<int64_t> grid) {
  SmallVector<Value> coord(grid.size());
  for (int64_t d = static_cast<int64_t>(grid.size()) - 1; d >= 0; --d) {
    Value extent = indexConstant(b, loc, grid[d]);
    coord[d] = arith::RemUIOp::create(b, loc, index, extent);
    index = arith::DivUIOp::create(b, loc, index, extent);
  }
  return coord;
}

Value zeroBorder(OpBuilder &b, Location loc, Value init, ArrayRef<int64_t> interior, ArrayRef<int64_t> pads) {
  int64_t n = interior[0], c = interior[1], h = interior[2], w = interior[3];
  int64_t top = pads[0], left = pads[1], bottom = pads[2], right = pads[3], width = left + w + right;
  Type elem = cast<RankedTensorType>(init.getType()).getElementType();
  Value zero = scalarConstant(b, loc, elem, 0);
  Value framed = fillBox(b, loc, init, {0, 0, 0, 0}, {n, c, top, width}, zero);
  framed = fillBox(b, loc, framed, {0, 0, top + h, 0}, {n, c, bottom, width}, zero);
  framed = fillBox(b, loc, framed, {0, 0, top, 0}, {n, c, h, left}, zero);
  return fillBox(b, loc, framed, {0, 0, top, left + w}, {n, c, h, right}, zero);
}

namespace {

/// Offsets, sizes and strides of the interior of a framed tensor.
struct Interior {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  Interior(OpBuilder &b, ArrayRef<int64_t> interior, ArrayRef<int64_t> pads)
      : offsets{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(pads[0]), b.getIndexAttr(pads[1])},
        strides(4, b.getIndexAttr(1)) {
    for (int64_t d : interior)
      sizes.push_back(b.getIndexAttr(d));
  }
};

} // namespace

Value extractInterior(OpBuilder &b, Location loc, Value framed, ArrayRef<int64_t> interior, ArrayRef<int64_t> pads) {
  Interior at(b, interior, pads);
  return tensor::ExtractSliceOp::create(b, loc, framed, at.offsets, at.sizes, at.strides);
}

Value insertInterior(OpBuilder &b, Location loc, Value x, Value framed, ArrayRef<int64_t> pads) {
  Interior at(b, cast<RankedTensorType>(x.getType()).getShape(), pads);
  return tensor::InsertSliceOp::create(b, loc, x, framed, at.offsets, at.sizes, at.strides);
}

Value copyWithZeroBorder(OpBuilder &b, Location loc, Value x, Value init, ArrayRef<int64_t> pads) {
  Value copy = zeroBorder(b, loc, init, cast<RankedTensorType>(x.getType()).getShape(), pads);
  return insertInterior(b, loc, x, copy, pads);
}

Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads, Value value) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t spatial = type.getRank() - 2;
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)), high(2, b.getIndexAttr(0));
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < spatial; ++d) {
    low.push_back(b.getIndexAttr(pads[d]));
    high.push_back(b.getIndexAttr(pads[spatial + d]));
    shape[2 + d] += pads[d] + pads[spatial + d];
  }
  return tensor::PadOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), x, low, high, value);
}

SmallVector<int64_t> coveringPads(ArrayRef<int64_t> pads, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape,
                                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  int64_t spatial = inShape.size() - 2;
  SmallVector<int64_t> result(pads);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t reach = (outShape[2 + d] - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1;
    result[spatial + d] = std::max(result[spatial + d], reach - inShape[2 + d] - pads[d]);
  }
  return result;
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value lowestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true)));
  unsigned w = type.getIntOrFloatBitWidth();
  APInt v = isUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

Value highestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/false)));
  unsigned w = type.getIntOrFloatBitWidth();
  APInt v = isUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

Value castScalar(OpBuilder &b, Location loc, Value v, Type from, bool fromUnsigned, Type to,
                 bool toUnsigned) {
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) { // Anything to bool: non-zero.
    if (fromF)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 scalarConstant(b, loc, from, 0));
  }
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (fromF.getWidth() > toF.getWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    // f16 <-> bf16: through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (fromF) // float -> int truncates toward zero.
    return toUnsigned ? (Value)arith::FPToUIOp::create(b, loc, to, v)
                      : (Value)arith::FPToSIOp::create(b, loc, to, v);
  if (toF) {
    if (fromUnsigned || from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return (fromUnsigned || fw == 1) ? (Value)arith::ExtUIOp::create(b, loc, to, v)
                                     : (Value)arith::ExtSIOp::create(b, loc, to, v);
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, to, v);
  return v;
}

bool isUnsignedElement(Type t) { return getElementTypeOrSelf(t).isUnsignedInteger(); }

} // namespace nncc
