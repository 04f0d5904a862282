/// Kernels of reductions and of the ops built from them: reduce_*, arg_max/
/// arg_min, softmax, log_softmax, layer_norm, instance_norm, cumsum.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"
#include "lib/Conversion/NNToExec/RowKernels.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc::kernels {
namespace {

using Combine = std::function<Value(OpBuilder &, Location, Value x, Value acc)>;


/// Reduces `input` over `axes` into a tensor of `outShape` (reduced dims kept
/// as 1 when `keepdims`), starting from `identity`, with `pre` applied to each
/// element first.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, bool keepdims,
             Value identity, const Combine &combine,
             const std::function<Value(OpBuilder &, Location, Value)> &pre = nullptr) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (!reduced) {
      outShape.push_back(inType.getShape()[i]);
      outExprs.push_back(getAffineDimExpr(i, ctx));
    } else if (keepdims) {
      outShape.push_back(1);
      outExprs.push_back(getAffineConstantExpr(0, ctx));
    }
  }
  Value init = fill(b, loc, emptyTensor(b, loc, outShape, inType.getElementType()), identity);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, outExprs, ctx)};
  return generic(b, loc, input, init, maps, iterators,
                 [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   Value x = pre ? pre(nb, l, s[0]) : s[0];
                   return {combine(nb, l, x, s[1])};
                 })[0];
}



int64_t count(RankedTensorType t, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= t.getShape()[a];
  return n;
}

/// Copies `v` into `init` (same shape) — used to land a computed tensor in
/// the kernel's destination.
Value into(OpBuilder &b, Location loc, Value v, Value init) {
  return broadcastGeneric(b, loc, v, init, [](OpBuilder &, Location, ValueRange s) { return s[0]; });
}

template <typename OpTy>
FailureOr<SmallVector<Value>> buildReduce(OpBuilder &b, OpTy op, ValueRange args, ValueRange inits) {
  Location loc = op.getLoc();
  if (!op.getAxes())
    return op.emitOpError("needs constant axes for code generation"), failure();
  ArrayRef<int64_t> axes = *op.getAxes();
  bool keepdims = op.getKeepdims();
  Value x = args[0];
  Type t = getElementTypeOrSelf(x);
  bool u = isUnsignedElement(op.getInput().getType());
  Value r;
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp>(op))
    r = reduce(b, loc, x, axes, keepdims, scalarConstant(b, loc, t, 0), addScalars);
  else if (isa<nn::ReduceProdOp>(op))
    r = reduce(b, loc, x, axes, keepdims, scalarConstant(b, loc, t, 1), mulScalars);
  else if (isa<nn::ReduceL2Op>(op))
    r = reduce(b, loc, x, axes, keepdims, scalarConstant(b, loc, t, 0), addScalars,
               [](OpBuilder &nb, Location l, Value v) { return mulScalars(nb, l, v, v); });
  else if (isa<nn::ReduceMaxOp>(op))
    r = reduce(b, loc, x, axes, keepdims, lowestValue(b, loc, t, u),
               [u](OpBuilder &nb, Location l, Value v, Value acc) -> Value {
                 if (isa<FloatType>(v.getType()))
                   return arith::MaximumFOp::create(nb, l, v, acc);
                 return u ? (Value)arith::MaxUIOp::create(nb, l, v, acc)
                          : (Value)arith::MaxSIOp::create(nb, l, v, acc);
               });
  else
    r = reduce(b, loc, x, axes, keepdims, highestValue(b, loc, t, u),
               [u](OpBuilder &nb, Location l, Value v, Value acc) -> Value {
                 if (isa<FloatType>(v.getType()))
                   return arith::MinimumFOp::create(nb, l, v, acc);
                 return u ? (Value)arith::MinUIOp::create(nb, l, v, acc)
                          : (Value)arith::MinSIOp::create(nb, l, v, acc);
               });
  auto inType = cast<RankedTensorType>(x.getType());
  int64_t n = count(inType, axes);
  return SmallVector<Value>{broadcastGeneric(b, loc, r, inits[0], [&](OpBuilder &nb, Location l, ValueRange s) -> Value {
    if (isa<nn::ReduceMeanOp>(op)) {
      if (isa<FloatType>(t))
        return arith::DivFOp::create(nb, l, s[0], scalarConstant(nb, l, t, (double)n));
      return arith::DivSIOp::create(nb, l, s[0], scalarConstant(nb, l, t, (double)n));
    }
    if (isa<nn::ReduceL2Op>(op)) {
      if (isa<FloatType>(t))
        return math::SqrtOp::create(nb, l, s[0]);
      Value f = castScalar(nb, l, s[0], t, u, nb.getF64Type(), false);
      return castScalar(nb, l, math::SqrtOp::create(nb, l, f), nb.getF64Type(), false, t, u);
    }
    return s[0];
  })};
}

template <typename OpTy>
FailureOr<SmallVector<Value>> buildArgReduce(OpBuilder &b, OpTy op, ValueRange args,
                                             ValueRange inits) {
  Location loc = op.getLoc();
  Value x = args[0];
  auto inType = cast<RankedTensorType>(x.getType());
  int64_t rank = inType.getRank(), axis = op.getAxis();
  Type t = inType.getElementType();
  bool u = isUnsignedElement(op.getInput().getType());
  bool isMax = isa<nn::ArgMaxOp>(op), last = op.getSelectLastIndex();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(i == axis ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (i == axis && !op.getKeepdims())
      continue;
    outShape.push_back(i == axis ? 1 : inType.getShape()[i]);
    outExprs.push_back(i == axis ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(i, ctx));
  }
  Value best = fill(b, loc, emptyTensor(b, loc, outShape, t),
                    isMax ? lowestValue(b, loc, t, u) : highestValue(b, loc, t, u));
  Value index = fill(b, loc, emptyTensor(b, loc, outShape, b.getI64Type()), scalarConstant(b, loc, b.getI64Type(), -1));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  auto results = generic(
      b, loc, x, {best, index}, {b.getMultiDimIdentityMap(rank), outMap, outMap}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
        Value v = s[0], cur = s[1], curIdx = s[2];
        Value i = arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                             linalg::IndexOp::create(nb, l, axis));
        Value better;
        if (isa<FloatType>(t)) {
          auto strict = isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
          auto loose = isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
          better = arith::CmpFOp::create(nb, l, last ? loose : strict, v, cur);
        } else {
          auto strict = isMax ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                              : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
          auto loose = isMax ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                             : (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle);
          better = arith::CmpIOp::create(nb, l, last ? loose : strict, v, cur);
        }
        // The first element always wins (covers all-NaN and extreme rows).
        Value first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, curIdx,
                                            scalarConstant(nb, l, nb.getI64Type(), 0));
        better = arith::OrIOp::create(nb, l, better, first);
        return {arith::SelectOp::create(nb, l, better, v, cur),
                arith::SelectOp::create(nb, l, better, i, curIdx)};
      });
  return SmallVector<Value>{into(b, loc, results[1], inits[0])};
}

/// softmax / log_softmax along `axis`, numerically stable (max subtracted).
FailureOr<SmallVector<Value>> buildSoftmax(OpBuilder &b, Operation *op, int64_t axis, bool isLog,
                                           ValueRange args, ValueRange inits) {
  Location loc = op->getLoc();
  Value x = args[0];
  Type t = getElementTypeOrSelf(x);
  auto maxOf = [](OpBuilder &nb, Location l, Value v, Value acc) -> Value {
    return arith::MaximumFOp::create(nb, l, v, acc);
  };
  Value mx = reduce(b, loc, x, {axis}, true, lowestValue(b, loc, t, false), maxOf);
  Value shifted = broadcastGeneric(b, loc, {x, mx}, emptyTensor(b, loc, cast<RankedTensorType>(x.getType()).getShape(), t),
                      [](OpBuilder &nb, Location l, ValueRange s) -> Value {
                        return arith::SubFOp::create(nb, l, s[0], s[1]);
                      });
  Value sum = reduce(b, loc, shifted, {axis}, true, scalarConstant(b, loc, t, 0), addScalars,
                     [](OpBuilder &nb, Location l, Value v) -> Value { return math::ExpOp::create(nb, l, v); });
  return SmallVector<Value>{broadcastGeneric(b, loc, {shifted, sum}, inits[0],
                                [isLog](OpBuilder &nb, Location l, ValueRange s) -> Value {
                                  if (isLog)
                                    return arith::SubFOp::create(nb, l, s[0], math::LogOp::create(nb, l, s[1]));
                                  return arith::DivFOp::create(nb, l, math::ExpOp::create(nb, l, s[0]), s[1]);
                                })};
}

/// (x - mean) / sqrt(var + eps) over `axes`, then `affine` (scale and bias).
Value normalize(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes, double eps) {
  auto type = cast<RankedTensorType>(x.getType());
  Type t = type.getElementType();
  double n = (double)count(type, axes);
  Value sum = reduce(b, loc, x, axes, true, scalarConstant(b, loc, t, 0), addScalars);
  Value centered = broadcastGeneric(b, loc, {x, sum}, emptyTensor(b, loc, type.getShape(), t),
                       [n](OpBuilder &nb, Location l, ValueRange s) -> Value {
                         Value mean = arith::DivFOp::create(nb, l, s[1], scalarConstant(nb, l, s[1].getType(), n));
                         return arith::SubFOp::create(nb, l, s[0], mean);
                       });
  Value sq = reduce(b, loc, centered, axes, true, scalarConstant(b, loc, t, 0), addScalars,
                    [](OpBuilder &nb, Location l, Value v) { return mulScalars(nb, l, v, v); });
  return broadcastGeneric(b, loc, {centered, sq}, emptyTensor(b, loc, type.getShape(), t),
             [n, eps](OpBuilder &nb, Location l, ValueRange s) -> Value {
               Type et = s[0].getType();
               Value var = arith::DivFOp::create(nb, l, s[1], scalarConstant(nb, l, et, n));
               Value denom = math::SqrtOp::create(nb, l, arith::AddFOp::create(nb, l, var, scalarConstant(nb, l, et, eps)));
               return arith::DivFOp::create(nb, l, s[0], denom);
             });
}

FailureOr<SmallVector<Value>> buildCumSum(OpBuilder &b, nn::CumSumOp op, ValueRange args,
                                          ValueRange inits) {
  Location loc = op.getLoc();
  if (!op.getAxis())
    return op.emitOpError("needs a constant axis for code generation"), failure();
  Value x = args[0];
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), axis = *op.getAxis();
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  MLIRContext *ctx = b.getContext();
  // Iterate (output index..., j): out[i] += x[..j..] where j <= i (or the
  // exclusive/reverse variants).
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, inExprs, ctx),
                              AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  it.push_back(utils::IteratorType::reduction);
  Type t = type.getElementType();
  Value init = fill(b, loc, inits[0], scalarConstant(b, loc, t, 0));
  return generic(b, loc, x, init, maps, it,
                 [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   Value i = linalg::IndexOp::create(nb, l, axis);
                   Value j = linalg::IndexOp::create(nb, l, rank);
                   arith::CmpIPredicate p = reverse ? (exclusive ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::uge)
                                                    : (exclusive ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule);
                   Value take = arith::CmpIOp::create(nb, l, p, j, i);
                   return {arith::SelectOp::create(nb, l, take, addScalars(nb, l, s[1], s[0]), s[1])};
                 });
}

} // namespace

FailureOr<SmallVector<Value>> buildReduction(OpBuilder &b, Operation *op, ValueRange args,
                                             ValueRange inits, bool &matched) {
  matched = true;
  Location loc = op->getLoc();
  if (isRowKernelRoot(op)) {
    IRMapping arguments;
    arguments.map(op->getOperands(), args);
    return buildRowKernel(b, op, ElementReader({}, arguments), inits[0]);
  }
  if (auto r = dyn_cast<nn::ReduceSumOp>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ReduceMeanOp>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ReduceMaxOp>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ReduceMinOp>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ReduceProdOp>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ReduceL2Op>(op))
    return buildReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ArgMaxOp>(op))
    return buildArgReduce(b, r, args, inits);
  if (auto r = dyn_cast<nn::ArgMinOp>(op))
    return buildArgReduce(b, r, args, inits);
  if (auto s = dyn_cast<nn::SoftmaxOp>(op))
    return buildSoftmax(b, op, s.getAxis(), false, args, inits);
  if (auto s = dyn_cast<nn::LogSoftmaxOp>(op))
    return buildSoftmax(b, op, s.getAxis(), true, args, inits);
  if (auto c = dyn_cast<nn::CumSumOp>(op))
    return buildCumSum(b, c, args, inits);
  if (auto ln = dyn_cast<nn::LayerNormOp>(op)) {
    auto type = cast<RankedTensorType>(args[0].getType());
    SmallVector<int64_t> axes;
    for (int64_t i = ln.getAxis(); i < type.getRank(); ++i)
      axes.push_back(i);
    Value norm = normalize(b, loc, args[0], axes, ln.getEpsilon().convertToDouble());
    SmallVector<Value> ins{norm, args[1]};
    if (args.size() > 2)
      ins.push_back(args[2]);
    return SmallVector<Value>{broadcastGeneric(b, loc, ins, inits[0], [](OpBuilder &nb, Location l, ValueRange s) -> Value {
      Value y = arith::MulFOp::create(nb, l, s[0], s[1]);
      return s.size() > 2 ? (Value)arith::AddFOp::create(nb, l, y, s[2]) : y;
    })};
  }
  if (auto in = dyn_cast<nn::InstanceNormOp>(op)) {
    auto type = cast<RankedTensorType>(args[0].getType());
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < type.getRank(); ++i)
      axes.push_back(i);
    Value norm = normalize(b, loc, args[0], axes, in.getEpsilon().convertToDouble());
    MLIRContext *ctx = b.getContext();
    int64_t rank = type.getRank();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(1, ctx));
    SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
    return generic(b, loc, {norm, args[1], args[2]}, inits, {id, channel, channel, id}, it,
                   [](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                     return {arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, s[0], s[1]), s[2])};
                   });
  }
  matched = false;
  return failure();
}

} // namespace nncc::kernels
