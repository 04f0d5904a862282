/// Kernels of windowed and contraction ops generated as loops: max_pool,
/// average_pool, conv and conv_transpose (direct form), and matmul/gemm for
/// the types no library call covers.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc::kernels {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }


/// Iterators: `parallelDims` parallel, then `reductionDims` reductions.
SmallVector<utils::IteratorType> iterators(int64_t parallelDims, int64_t reductionDims) {
  SmallVector<utils::IteratorType> it(parallelDims, utils::IteratorType::parallel);
  it.append(reductionDims, utils::IteratorType::reduction);
  return it;
}

/// In-window input coordinate of output dim `o` and window dim `k`:
/// o*stride - pad + k*dilation, with validity against [lo, hi).
std::pair<Value, Value> windowCoord(OpBuilder &b, Location l, Value o, Value k, int64_t stride,
                                    int64_t pad, int64_t dilation, int64_t lo, int64_t hi) {
  Value i = arith::AddIOp::create(
      b, l, arith::SubIOp::create(b, l, arith::MulIOp::create(b, l, o, indexConstant(b, l, stride)), indexConstant(b, l, pad)),
      arith::MulIOp::create(b, l, k, indexConstant(b, l, dilation)));
  Value ok = arith::AndIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, indexConstant(b, l, lo)),
                                   arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, indexConstant(b, l, hi)));
  return {i, ok};
}


template <typename PoolOp>
SmallVector<Value> pool(OpBuilder &b, Location loc, PoolOp op, Value x, ValueRange inits) {
  Value init = inits[0];
  bool withIndices = inits.size() > 1;
  bool columnMajor = false;
  if constexpr (std::is_same_v<PoolOp, nn::MaxPoolOp>)
    columnMajor = op.getColumnMajorIndices();
  auto inShape = typeOf(x).getShape();
  auto outType = typeOf(init);
  int64_t rank = outType.getRank(), spatial = rank - 2;
  Type t = outType.getElementType();
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  bool isMax = std::is_same_v<PoolOp, nn::MaxPoolOp>;
  bool includePad = false;
  if constexpr (std::is_same_v<PoolOp, nn::AveragePoolOp>)
    includePad = op.getCountIncludePad();
  bool u = isUnsignedElement(op.getInput().getType());
  // A dummy input carries the window shape into the iteration space.
  Value window = emptyTensor(b, loc, kernel, t);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> winExprs;
  for (int64_t s = 0; s < spatial; ++s)
    winExprs.push_back(getAffineDimExpr(rank + s, ctx));
  AffineMap winMap = AffineMap::get(rank + spatial, 0, winExprs, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank + spatial, ctx).getMajorSubMap(rank);
  Value acc = fill(b, loc, init, isMax ? lowestValue(b, loc, t, u) : scalarConstant(b, loc, t, 0));
  // Average pools count the taps; max pools with indices track the argmax.
  Value second = withIndices ? fill(b, loc, inits[1], scalarConstant(b, loc, b.getI64Type(), -1))
                             : fill(b, loc, emptyTensor(b, loc, outType.getShape(), t), scalarConstant(b, loc, t, 0));
  bool twoOutputs = !isMax || withIndices;
  auto results = generic(
      b, loc, window, twoOutputs ? ValueRange{acc, second} : ValueRange{acc},
      twoOutputs ? SmallVector<AffineMap>{winMap, outMap, outMap} : SmallVector<AffineMap>{winMap, outMap},
      iterators(rank, spatial), [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
        SmallVector<Value> src{linalg::IndexOp::create(nb, l, 0), linalg::IndexOp::create(nb, l, 1)};
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        Value counted = valid;
        for (int64_t d = 0; d < spatial; ++d) {
          Value o = linalg::IndexOp::create(nb, l, 2 + d), k = linalg::IndexOp::create(nb, l, rank + d);
          auto [i, ok] = windowCoord(nb, l, o, k, strides[d], pads[d], dilations[d], 0, inShape[2 + d]);
          valid = arith::AndIOp::create(nb, l, valid, ok);
          if (includePad) {
            auto [ip, okp] = windowCoord(nb, l, o, k, strides[d], pads[d], dilations[d], -pads[d],
                                         inShape[2 + d] + pads[spatial + d]);
            counted = arith::AndIOp::create(nb, l, counted, okp);
          }
          src.push_back(clampIndex(nb, l, i, inShape[2 + d]));
        }
        if (!includePad)
          counted = valid;
        Value v = tensor::ExtractOp::create(nb, l, x, src);
        if (isMax && withIndices) {
          // The first maximum in window order wins, as in ONNX's reference.
          Value better = isa<FloatType>(t)
                             ? (Value)arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, v, s[1])
                             : (Value)arith::CmpIOp::create(nb, l, u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt, v, s[1]);
          Value first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, s[2], scalarConstant(nb, l, nb.getI64Type(), 0));
          Value take = arith::AndIOp::create(nb, l, valid, arith::OrIOp::create(nb, l, better, first));
          // Batch and channel first, then the spatial axes in storage order.
          SmallVector<size_t> order{0, 1};
          for (int64_t d = 0; d < spatial; ++d)
            order.push_back(columnMajor ? 2 + spatial - 1 - d : 2 + d);
          Value flat = src[order[0]];
          for (size_t k = 1; k < order.size(); ++k)
            flat = arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, flat, indexConstant(nb, l, inShape[order[k]])),
                                         src[order[k]]);
          Value flat64 = arith::IndexCastOp::create(nb, l, nb.getI64Type(), flat);
          return {arith::SelectOp::create(nb, l, take, v, s[1]), arith::SelectOp::create(nb, l, take, flat64, s[2])};
        }
        if (isMax) {
          Value m = isa<FloatType>(t) ? (Value)arith::MaximumFOp::create(nb, l, v, s[1])
                                      : (u ? (Value)arith::MaxUIOp::create(nb, l, v, s[1])
                                           : (Value)arith::MaxSIOp::create(nb, l, v, s[1]));
          return {arith::SelectOp::create(nb, l, valid, m, s[1])};
        }
        Value sum = arith::SelectOp::create(nb, l, valid, addScalars(nb, l, s[1], v), s[1]);
        Value n = arith::SelectOp::create(nb, l, counted, addScalars(nb, l, s[2], scalarConstant(nb, l, t, 1)), s[2]);
        return {sum, n};
      });
  if (isMax)
    return results;
  return {broadcastGeneric(b, loc, {results[0], results[1]}, init,
                           [](OpBuilder &nb, Location l, ValueRange s) -> Value {
                             return arith::DivFOp::create(nb, l, s[0], s[1]);
                           })};
}

/// result + bias[channel] (axis 1) into `init`; `result` when there is no bias.
Value addChannelBias(OpBuilder &b, Location loc, Value result, Value bias, Value init) {
  if (!bias)
    return result;
  int64_t rank = typeOf(init).getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(1, b.getContext()));
  return generic(b, loc, {result, bias}, init, {id, channel, id}, iterators(rank, 0),
                 [](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   return {addScalars(nb, l, s[0], s[1])};
                 })[0];
}

/// Direct N-d grouped convolution: out[n,m,o] = sum_{c,k} x[n, g*Cg+c, o*s-p+k*d] * w[m,c,k] + bias[m].
/// The loops run n, m, then the reductions c and k, then the output
/// positions o innermost: a unit-stride walk along input and output rows
/// (depthwise convolutions spend all their time there) that vectorizes.
Value conv(OpBuilder &b, Location loc, nn::ConvOp op, Value x, Value w, Value bias, Value init) {
  auto inShape = typeOf(x).getShape(), wShape = typeOf(w).getShape();
  auto outType = typeOf(init);
  int64_t rank = outType.getRank(), spatial = rank - 2;
  int64_t group = op.getGroup(), cg = wShape[1], mg = outType.getShape()[1] / group;
  Type t = outType.getElementType();
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(), dilations = op.getDilations();
  MLIRContext *ctx = b.getContext();
  // Iteration dims: n, m, c, k..., o...
  int64_t numDims = 3 + 2 * spatial;
  auto kDim = [&](int64_t d) { return 3 + d; };
  auto oDim = [&](int64_t d) { return 3 + spatial + d; };
  SmallVector<AffineExpr> wExprs{getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)};
  SmallVector<AffineExpr> outExprs{getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)};
  for (int64_t d = 0; d < spatial; ++d) {
    wExprs.push_back(getAffineDimExpr(kDim(d), ctx));
    outExprs.push_back(getAffineDimExpr(oDim(d), ctx));
  }
  AffineMap wMap = AffineMap::get(numDims, 0, wExprs, ctx);
  AffineMap outMap = AffineMap::get(numDims, 0, outExprs, ctx);
  SmallVector<utils::IteratorType> it(numDims, utils::IteratorType::parallel);
  for (int64_t d = 2; d < 3 + spatial; ++d)
    it[d] = utils::IteratorType::reduction;
  Value acc = fill(b, loc, init, scalarConstant(b, loc, t, 0));
  Value result = generic(
      b, loc, w, acc, {wMap, outMap}, it,
      [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
        Value m = linalg::IndexOp::create(nb, l, 1), c = linalg::IndexOp::create(nb, l, 2);
        Value g = arith::DivUIOp::create(nb, l, m, indexConstant(nb, l, mg));
        Value cin = arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, g, indexConstant(nb, l, cg)), c);
        SmallVector<Value> src{linalg::IndexOp::create(nb, l, 0), cin};
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (int64_t d = 0; d < spatial; ++d) {
          auto [i, ok] = windowCoord(nb, l, linalg::IndexOp::create(nb, l, oDim(d)),
                                     linalg::IndexOp::create(nb, l, kDim(d)), strides[d], pads[d],
                                     dilations[d], 0, inShape[2 + d]);
          valid = arith::AndIOp::create(nb, l, valid, ok);
          src.push_back(clampIndex(nb, l, i, inShape[2 + d]));
        }
        Value v = tensor::ExtractOp::create(nb, l, x, src);
        Value prod = mulScalars(nb, l, v, s[0]);
        return {arith::SelectOp::create(nb, l, valid, addScalars(nb, l, s[1], prod), s[1])};
      })[0];
  return addChannelBias(b, loc, result, bias, init);
}

/// Direct transposed convolution: out[n,m,o] = sum_{c,k} x[n, g*Cg+c, (o+p-k*d)/s] * w[g*Cg+c, m%Mg, k]
/// over the (c, k) whose source coordinate is integral and in range.
Value convTranspose(OpBuilder &b, Location loc, nn::ConvTransposeOp op, Value x, Value w, Value bias,
                    Value init) {
  auto inShape = typeOf(x).getShape(), wShape = typeOf(w).getShape();
  auto outType = typeOf(init);
  int64_t rank = outType.getRank(), spatial = rank - 2;
  int64_t group = op.getGroup(), cg = inShape[1] / group, mg = wShape[1];
  Type t = outType.getElementType();
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(), dilations = op.getDilations();
  MLIRContext *ctx = b.getContext();
  // A dummy input carries (c, k...) extents.
  SmallVector<int64_t> redShape{cg};
  for (int64_t s = 0; s < spatial; ++s)
    redShape.push_back(wShape[2 + s]);
  Value red = emptyTensor(b, loc, redShape, t);
  int64_t numDims = rank + 1 + spatial;
  SmallVector<AffineExpr> redExprs;
  for (int64_t i = 0; i < 1 + spatial; ++i)
    redExprs.push_back(getAffineDimExpr(rank + i, ctx));
  AffineMap redMap = AffineMap::get(numDims, 0, redExprs, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(numDims, ctx).getMajorSubMap(rank);
  Value acc = fill(b, loc, init, scalarConstant(b, loc, t, 0));
  Value result = generic(
      b, loc, red, acc, {redMap, outMap}, iterators(rank, 1 + spatial),
      [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
        Value m = linalg::IndexOp::create(nb, l, 1), c = linalg::IndexOp::create(nb, l, rank);
        Value g = arith::DivUIOp::create(nb, l, m, indexConstant(nb, l, mg));
        Value mIn = arith::RemUIOp::create(nb, l, m, indexConstant(nb, l, mg));
        Value cin = arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, g, indexConstant(nb, l, cg)), c);
        SmallVector<Value> xSrc{linalg::IndexOp::create(nb, l, 0), cin}, wSrc{cin, mIn};
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (int64_t d = 0; d < spatial; ++d) {
          Value o = linalg::IndexOp::create(nb, l, 2 + d), k = linalg::IndexOp::create(nb, l, rank + 1 + d);
          Value num = arith::SubIOp::create(nb, l, arith::AddIOp::create(nb, l, o, indexConstant(nb, l, pads[d])),
                                            arith::MulIOp::create(nb, l, k, indexConstant(nb, l, dilations[d])));
          Value i = arith::DivSIOp::create(nb, l, num, indexConstant(nb, l, strides[d]));
          Value exact = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                              arith::RemSIOp::create(nb, l, num, indexConstant(nb, l, strides[d])), indexConstant(nb, l, 0));
          Value inRange = arith::AndIOp::create(
              nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, num, indexConstant(nb, l, 0)),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, indexConstant(nb, l, inShape[2 + d])));
          valid = arith::AndIOp::create(nb, l, valid, arith::AndIOp::create(nb, l, exact, inRange));
          xSrc.push_back(clampIndex(nb, l, i, inShape[2 + d]));
          wSrc.push_back(k);
        }
        Value prod = mulScalars(nb, l, tensor::ExtractOp::create(nb, l, x, xSrc), tensor::ExtractOp::create(nb, l, w, wSrc));
        return {arith::SelectOp::create(nb, l, valid, addScalars(nb, l, s[1], prod), s[1])};
      })[0];
  return addChannelBias(b, loc, result, bias, init);
}

/// numpy matmul as loops (batch dims broadcast, 1-d operands promoted).
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init) {
  auto lt = typeOf(lhs), rt = typeOf(rhs), ot = typeOf(init);
  int64_t outRank = ot.getRank();
  bool hasI = lt.getRank() >= 2, hasJ = rt.getRank() >= 2;
  int64_t batch = outRank - hasI - hasJ;
  int64_t numDims = outRank + 1, k = outRank;
  MLIRContext *ctx = b.getContext();
  auto batchExprs = [&](RankedTensorType t, int64_t own) {
    SmallVector<AffineExpr> e;
    int64_t tb = t.getRank() - own;
    for (int64_t i = 0; i < tb; ++i) {
      int64_t od = batch - tb + i;
      e.push_back(t.getShape()[i] == 1 && ot.getShape()[od] != 1 ? getAffineConstantExpr(0, ctx)
                                                                  : getAffineDimExpr(od, ctx));
    }
    return e;
  };
  SmallVector<AffineExpr> le = batchExprs(lt, hasI ? 2 : 1), re = batchExprs(rt, hasJ ? 2 : 1);
  if (hasI)
    le.push_back(getAffineDimExpr(batch, ctx));
  le.push_back(getAffineDimExpr(k, ctx));
  re.push_back(getAffineDimExpr(k, ctx));
  if (hasJ)
    re.push_back(getAffineDimExpr(batch + hasI, ctx));
  // The result's dims are the loops but k; a dot product of two vectors
  // (rank 0) has none: getMajorSubMap(0) would be a null map.
  SmallVector<AffineExpr> oe;
  for (int64_t d = 0; d < outRank; ++d)
    oe.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, le, ctx), AffineMap::get(numDims, 0, re, ctx),
                              AffineMap::get(numDims, 0, oe, ctx)};
  Value acc = fill(b, loc, init, scalarConstant(b, loc, ot.getElementType(), 0));
  return generic(b, loc, {lhs, rhs}, acc, maps, iterators(outRank, 1),
                 [](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   return {addScalars(nb, l, s[2], mulScalars(nb, l, s[0], s[1]))};
                 })[0];
}

Value gemm(OpBuilder &b, Location loc, nn::GemmOp op, Value a, Value bm, Value c, Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx), k = getAffineDimExpr(2, ctx);
  AffineMap aMap = AffineMap::get(3, 0, op.getTransA() ? ArrayRef<AffineExpr>{k, i} : ArrayRef<AffineExpr>{i, k}, ctx);
  AffineMap bMap = AffineMap::get(3, 0, op.getTransB() ? ArrayRef<AffineExpr>{j, k} : ArrayRef<AffineExpr>{k, j}, ctx);
  AffineMap oMap = AffineMap::get(3, 0, {i, j}, ctx);
  Type t = typeOf(init).getElementType();
  Value acc = fill(b, loc, init, scalarConstant(b, loc, t, 0));
  Value prod = generic(b, loc, {a, bm}, acc, {aMap, bMap, oMap}, iterators(2, 1),
                       [](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                         return {addScalars(nb, l, s[2], mulScalars(nb, l, s[0], s[1]))};
                       })[0];
  double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
  SmallVector<Value> ins{prod};
  if (c)
    ins.push_back(c);
  return broadcastGeneric(b, loc, ins, init, [&](OpBuilder &nb, Location l, ValueRange s) -> Value {
    Value y = mulScalars(nb, l, s[0], scalarConstant(nb, l, t, alpha));
    if (s.size() > 1)
      y = addScalars(nb, l, y, mulScalars(nb, l, s[1], scalarConstant(nb, l, t, beta)));
    return y;
  });
}

} // namespace

FailureOr<SmallVector<Value>> buildWindow(OpBuilder &b, Operation *op, ValueRange args,
                                          ValueRange inits, bool &matched) {
  matched = true;
  Location loc = op->getLoc();
  if (auto p = dyn_cast<nn::MaxPoolOp>(op))
    return pool(b, loc, p, args[0], inits);
  if (auto p = dyn_cast<nn::AveragePoolOp>(op))
    return pool(b, loc, p, args[0], inits);
  if (auto c = dyn_cast<nn::ConvOp>(op))
    return SmallVector<Value>{conv(b, loc, c, args[0], args[1], args.size() > 2 ? args[2] : Value(), inits[0])};
  if (auto c = dyn_cast<nn::ConvTransposeOp>(op))
    return SmallVector<Value>{convTranspose(b, loc, c, args[0], args[1], args.size() > 2 ? args[2] : Value(), inits[0])};
  if (isa<nn::MatMulOp>(op))
    return SmallVector<Value>{matmul(b, loc, args[0], args[1], inits[0])};
  if (auto g = dyn_cast<nn::GemmOp>(op))
    return SmallVector<Value>{gemm(b, loc, g, args[0], args[1], args.size() > 2 ? args[2] : Value(), inits[0])};
  matched = false;
  return failure();
}

} // namespace nncc::kernels
