#include "lib/Conversion/NNToExec/Im2col.h"

#include "lib/Conversion/NNToExec/LinalgUtils.h"

using namespace mlir;

namespace nncc {

Value im2col(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init, bool batchInner) {
  auto in = cast<RankedTensorType>(x.getType());
  int64_t spatial = in.getRank() - 2;
  ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(), dilations = conv.getDilations();
  auto idx = [&](OpBuilder &nb, Location l, int64_t v) { return (Value)arith::ConstantIndexOp::create(nb, l, v); };
  auto colType = cast<RankedTensorType>(init.getType());
  int64_t rank = colType.getRank(); // 2 + 2 * spatial
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, colType, ValueRange{}, init, ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, it,
      [&](OpBuilder &nb, Location l, ValueRange) {
        int64_t nDim = batchInner ? 1 + spatial : 0, cDim = batchInner ? 0 : 1, kDim = batchInner ? 1 : 2;
        SmallVector<Value> src{linalg::IndexOp::create(nb, l, nDim), linalg::IndexOp::create(nb, l, cDim)};
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (int64_t d = 0; d < spatial; ++d) {
          Value k = linalg::IndexOp::create(nb, l, kDim + d);
          Value o = linalg::IndexOp::create(nb, l, 2 + spatial + d);
          Value i = arith::AddIOp::create(
              nb, l, arith::SubIOp::create(nb, l, arith::MulIOp::create(nb, l, o, idx(nb, l, strides[d])), idx(nb, l, pads[d])),
              arith::MulIOp::create(nb, l, k, idx(nb, l, dilations[d])));
          int64_t len = in.getShape()[2 + d];
          valid = arith::AndIOp::create(
              nb, l, valid,
              arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, idx(nb, l, 0)),
                                    arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, idx(nb, l, len))));
          src.push_back(arith::MinSIOp::create(nb, l, arith::MaxSIOp::create(nb, l, i, idx(nb, l, 0)), idx(nb, l, len - 1)));
        }
        Value v = tensor::ExtractOp::create(nb, l, x, src);
        Value zero = arith::ConstantOp::create(nb, l, nb.getFloatAttr(in.getElementType(), 0));
        linalg::YieldOp::create(nb, l, ValueRange{arith::SelectOp::create(nb, l, valid, v, zero)});
      });
  return op.getResult(0);
}

Value im2colFromPadded(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init, bool batchInner) {
  auto in = cast<RankedTensorType>(x.getType());
  int64_t spatial = in.getRank() - 2;
  ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(), dilations = conv.getDilations();
  auto colShape = cast<RankedTensorType>(init.getType()).getShape();
  SmallVector<int64_t> outSpatial{0, 0}, kernel;
  for (int64_t d = 0; d < spatial; ++d) {
    outSpatial.push_back(colShape[colShape.size() - spatial + d]);
    kernel.push_back(colShape[(batchInner ? 1 : 2) + d]);
  }
  SmallVector<int64_t> covering = coveringPads(pads, in.getShape(), outSpatial, kernel, strides, dilations);
  if (llvm::any_of(covering, [](int64_t p) { return p != 0; }))
    x = padSpatial(b, loc, x, covering, arith::ConstantOp::create(b, loc, b.getFloatAttr(in.getElementType(), 0)));
  MLIRContext *ctx = b.getContext();
  auto colType = cast<RankedTensorType>(init.getType());
  int64_t rank = colType.getRank(); // 2 + 2 * spatial
  int64_t nDim = batchInner ? 1 + spatial : 0, cDim = batchInner ? 0 : 1, kDim = batchInner ? 1 : 2;
  SmallVector<AffineExpr> src{getAffineDimExpr(nDim, ctx), getAffineDimExpr(cDim, ctx)};
  for (int64_t d = 0; d < spatial; ++d)
    src.push_back(getAffineDimExpr(2 + spatial + d, ctx) * strides[d] + getAffineDimExpr(kDim + d, ctx) * dilations[d]);
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  return generic(b, loc, x, init, {AffineMap::get(rank, 0, src, ctx), b.getMultiDimIdentityMap(rank)}, it,
                 [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> { return {s[0]}; })[0];
}

Value im2colWithOnesRow(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init) {
  auto colType = cast<RankedTensorType>(init.getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  int64_t rank = colType.getRank(), ckk = colType.getShape()[1] - 1;
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)), unit(rank, b.getIndexAttr(1)), sizes;
  for (int64_t d : colType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  sizes[1] = b.getIndexAttr(ckk);
  Value rows = tensor::ExtractSliceOp::create(b, loc, init, zeros, sizes, unit);
  // [n, C*K..., o...] -> [n, C, K..., o...]
  SmallVector<int64_t> expanded{colType.getShape()[0], w.getShape()[1]};
  llvm::append_range(expanded, w.getShape().drop_front(2));
  llvm::append_range(expanded, colType.getShape().drop_front(2));
  SmallVector<ReassociationIndices> groups{{0}, {}};
  for (int64_t d = 1; d < (int64_t)w.getRank(); ++d)
    groups[1].push_back(d);
  for (int64_t d = w.getRank(); d < (int64_t)expanded.size(); ++d)
    groups.push_back({d});
  Type elem = colType.getElementType();
  Value unfolded = tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(expanded, elem), rows, groups);
  Value col = im2col(b, loc, conv, x, unfolded, false);
  col = tensor::CollapseShapeOp::create(b, loc, cast<RankedTensorType>(rows.getType()), col, groups);
  Value result = tensor::InsertSliceOp::create(b, loc, col, init, zeros, sizes, unit);
  SmallVector<OpFoldResult> onesAt(zeros), onesSizes(sizes);
  onesAt[1] = b.getIndexAttr(ckk);
  onesSizes[1] = b.getIndexAttr(1);
  Value ones = tensor::ExtractSliceOp::create(b, loc, result, onesAt, onesSizes, unit);
  ones = fill(b, loc, ones, arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 1)));
  return tensor::InsertSliceOp::create(b, loc, ones, result, onesAt, onesSizes, unit);
}

namespace {

/// True when every output element of `op` receives exactly one tap: in each
/// spatial dim the stride equals the kernel extent, with no padding, no
/// dilation and an output of exactly input x stride (the 2x2 stride-2
/// upsampling of segmentation and detection heads).
bool tapsTileTheOutput(nn::ConvTransposeOp op, ArrayRef<int64_t> colShape, ArrayRef<int64_t> outShape) {
  int64_t spatial = static_cast<int64_t>(outShape.size()) - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(), dilations = op.getDilations();
  for (int64_t d = 0; d < spatial; ++d)
    if (strides[d] != colShape[2 + d] || pads[d] != 0 || pads[spatial + d] != 0 || dilations[d] != 1 ||
        outShape[2 + d] != colShape[2 + spatial + d] * strides[d])
      return false;
  return true;
}

/// col2im when tapsTileTheOutput: one copy of col into the output seen as
/// [n, m, i0, k0, i1, k1, ...] (+ bias[m]), no tap loop, no division or
/// select per element; its innermost loops store contiguously and read k
/// interleaved streams, which LLVM vectorizes as an interleave group.
Value col2imTiled(OpBuilder &b, Location loc, Value col, Value bias, Value init) {
  auto outType = cast<RankedTensorType>(init.getType());
  auto colType = cast<RankedTensorType>(col.getType());
  ArrayRef<int64_t> colShape = colType.getShape(); // [n, m, k..., i...]
  int64_t spatial = outType.getRank() - 2, rank = 2 + 2 * spatial;
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> tiled{colShape[0], colShape[1]};
  SmallVector<ReassociationIndices> groups{{0}, {1}};
  SmallVector<AffineExpr> colExprs(rank);
  colExprs[0] = getAffineDimExpr(0, ctx);
  colExprs[1] = getAffineDimExpr(1, ctx);
  for (int64_t d = 0; d < spatial; ++d) {
    tiled.append({colShape[2 + spatial + d], colShape[2 + d]});
    groups.push_back({2 + 2 * d, 3 + 2 * d});
    colExprs[2 + spatial + d] = getAffineDimExpr(2 + 2 * d, ctx); // i_d
    colExprs[2 + d] = getAffineDimExpr(3 + 2 * d, ctx);           // k_d
  }
  Type outElem = outType.getElementType(), elem = colType.getElementType();
  // Through a whole-tensor slice of init, like im2colWithOnesRow: the
  // reshapes then bufferize in place into the kernel's output buffer.
  SmallVector<OpFoldResult> zeros(outType.getRank(), b.getIndexAttr(0)), ones(outType.getRank(), b.getIndexAttr(1)),
      sizes;
  for (int64_t d : outType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  Value whole = tensor::ExtractSliceOp::create(b, loc, init, zeros, sizes, ones);
  Value out = tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(tiled, outElem), whole, groups);
  SmallVector<Value> inputs{col};
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, colExprs, ctx)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(1, ctx)));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Value result = generic(b, loc, inputs, out, maps, parallel,
                         [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                           // The bias in f32 like the taps, then one rounding.
                           Value v = s[0];
                           if (bias)
                             v = addScalars(nb, l, v, castScalar(nb, l, s[1], outElem, false, elem, false));
                           return {castScalar(nb, l, v, elem, false, outElem, false)};
                         })[0];
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, outType, result, groups);
  return tensor::InsertSliceOp::create(b, loc, collapsed, init, zeros, sizes, ones);
}

} // namespace

Value col2im(OpBuilder &b, Location loc, nn::ConvTransposeOp op, Value col, Value bias, Value init) {
  auto outType = cast<RankedTensorType>(init.getType());
  auto colShape = cast<RankedTensorType>(col.getType()).getShape(); // [n, m, k..., i...]
  if (tapsTileTheOutput(op, colShape, outType.getShape()))
    return col2imTiled(b, loc, col, bias, init);
  int64_t rank = outType.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(), dilations = op.getDilations();
  MLIRContext *ctx = b.getContext();
  // Taps are summed in col's type (f32), then rounded once to the result's.
  Type elem = cast<RankedTensorType>(col.getType()).getElementType();
  Type outElem = outType.getElementType();
  Value sums = elem == outElem ? init : emptyTensor(b, loc, outType.getShape(), elem);
  // Iteration dims: n, m, k..., o...; a placeholder operand carries the tap extents.
  int64_t numDims = 2 + 2 * spatial;
  AffineExpr n = getAffineDimExpr(0, ctx), m = getAffineDimExpr(1, ctx);
  SmallVector<AffineExpr> tapExprs, outExprs{n, m};
  for (int64_t d = 0; d < spatial; ++d) {
    tapExprs.push_back(getAffineDimExpr(2 + d, ctx));
    outExprs.push_back(getAffineDimExpr(2 + spatial + d, ctx));
  }
  Value taps = emptyTensor(b, loc, colShape.slice(2, spatial), elem);
  AffineMap tapMap = AffineMap::get(numDims, 0, tapExprs, ctx), outMap = AffineMap::get(numDims, 0, outExprs, ctx);
  Value acc = fill(b, loc, sums, scalarConstant(b, loc, elem, 0));
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  if (bias) // The taps accumulate onto the bias.
    acc = generic(b, loc, bias, sums, {AffineMap::get(rank, 0, getAffineDimExpr(1, ctx)), b.getMultiDimIdentityMap(rank)},
                  parallel, [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                    return {castScalar(nb, l, s[0], outElem, false, elem, false)};
                  })[0];
  SmallVector<utils::IteratorType> it(numDims, utils::IteratorType::parallel);
  for (int64_t d = 0; d < spatial; ++d)
    it[2 + d] = utils::IteratorType::reduction;
  Value result = generic(
      b, loc, taps, acc, {tapMap, outMap}, it,
      [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
        SmallVector<Value> src{linalg::IndexOp::create(nb, l, 0), linalg::IndexOp::create(nb, l, 1)};
        SmallVector<Value> inputPos;
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (int64_t d = 0; d < spatial; ++d) {
          Value k = linalg::IndexOp::create(nb, l, 2 + d), o = linalg::IndexOp::create(nb, l, 2 + spatial + d);
          src.push_back(k);
          Value num = arith::SubIOp::create(nb, l, arith::AddIOp::create(nb, l, o, indexConstant(nb, l, pads[d])),
                                            arith::MulIOp::create(nb, l, k, indexConstant(nb, l, dilations[d])));
          Value i = arith::DivSIOp::create(nb, l, num, indexConstant(nb, l, strides[d]));
          Value exact = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                              arith::RemSIOp::create(nb, l, num, indexConstant(nb, l, strides[d])),
                                              indexConstant(nb, l, 0));
          int64_t len = colShape[2 + spatial + d];
          Value inRange = arith::AndIOp::create(
              nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, num, indexConstant(nb, l, 0)),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, indexConstant(nb, l, len)));
          valid = arith::AndIOp::create(nb, l, valid, arith::AndIOp::create(nb, l, exact, inRange));
          inputPos.push_back(clampIndex(nb, l, i, len));
        }
        src.append(inputPos);
        Value v = tensor::ExtractOp::create(nb, l, col, src);
        return {arith::SelectOp::create(nb, l, valid, addScalars(nb, l, s[1], v), s[1])};
      })[0];
  if (elem == outElem)
    return result;
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return generic(b, loc, result, init, {id, id}, parallel,
                 [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   return {castScalar(nb, l, s[0], elem, false, outElem, false)};
                 })[0];
}

} // namespace nncc
