/// Kernels of the elementwise and broadcasting nn ops: one parallel
/// linalg.generic each, the scalar computation chosen by op.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace nncc::kernels {
namespace {


/// Scalar bodies of unary float ops.
FailureOr<Value> unaryFloat(OpBuilder &b, Location loc, Operation *op, Value x) {
  Type t = x.getType();
  if (isa<nn::SqrtOp>(op))
    return (Value)math::SqrtOp::create(b, loc, x);
  if (isa<nn::ExpOp>(op))
    return (Value)math::ExpOp::create(b, loc, x);
  if (isa<nn::LogOp>(op))
    return (Value)math::LogOp::create(b, loc, x);
  if (isa<nn::ReciprocalOp>(op))
    return (Value)arith::DivFOp::create(b, loc, scalarConstant(b, loc, t, 1), x);
  if (isa<nn::ErfOp>(op))
    return (Value)math::ErfOp::create(b, loc, x);
  if (isa<nn::TanhOp>(op))
    return (Value)math::TanhOp::create(b, loc, x);
  if (isa<nn::SinOp>(op))
    return (Value)math::SinOp::create(b, loc, x);
  if (isa<nn::CosOp>(op))
    return (Value)math::CosOp::create(b, loc, x);
  if (isa<nn::TanOp>(op))
    return (Value)math::TanOp::create(b, loc, x);
  if (isa<nn::AsinOp>(op))
    return (Value)math::AsinOp::create(b, loc, x);
  if (isa<nn::AcosOp>(op))
    return (Value)math::AcosOp::create(b, loc, x);
  if (isa<nn::AtanOp>(op))
    return (Value)math::AtanOp::create(b, loc, x);
  if (auto gelu = dyn_cast<nn::GeluOp>(op)) {
    // The exported graphs' order: x / √2 (or the tanh polynomial), + 1, * x, * 0.5.
    Value inner;
    if (gelu.getApproximate() == "tanh") {
      Value cube = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
      Value poly = arith::AddFOp::create(
          b, loc, x, arith::MulFOp::create(b, loc, cube, scalarConstant(b, loc, t, 0.044715)));
      inner = math::TanhOp::create(
          b, loc, arith::MulFOp::create(b, loc, poly, scalarConstant(b, loc, t, std::sqrt(2 / M_PI))));
    } else {
      inner = math::ErfOp::create(b, loc, arith::DivFOp::create(b, loc, x, scalarConstant(b, loc, t, std::sqrt(2.0))));
    }
    Value scaled = arith::MulFOp::create(b, loc, x, arith::AddFOp::create(b, loc, inner, scalarConstant(b, loc, t, 1)));
    return (Value)arith::MulFOp::create(b, loc, scaled, scalarConstant(b, loc, t, 0.5));
  }
  if (isa<nn::SigmoidOp>(op)) {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return (Value)arith::DivFOp::create(b, loc, scalarConstant(b, loc, t, 1),
                                        arith::AddFOp::create(b, loc, scalarConstant(b, loc, t, 1), e));
  }
  if (isa<nn::FloorOp>(op))
    return (Value)math::FloorOp::create(b, loc, x);
  if (isa<nn::CeilOp>(op))
    return (Value)math::CeilOp::create(b, loc, x);
  if (isa<nn::RoundOp>(op))
    return (Value)math::RoundEvenOp::create(b, loc, x);
  if (isa<nn::SoftplusOp>(op)) {
    // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), stable for large |x|.
    Value zero = scalarConstant(b, loc, t, 0);
    Value pos = arith::MaximumFOp::create(b, loc, x, zero);
    Value negAbs = arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x));
    return (Value)arith::AddFOp::create(
        b, loc, pos, math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, negAbs)));
  }
  if (isa<nn::HardSwishOp>(op)) {
    Value y = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, x, scalarConstant(b, loc, t, 1.0 / 6)),
                                    scalarConstant(b, loc, t, 0.5));
    y = arith::MinimumFOp::create(b, loc, arith::MaximumFOp::create(b, loc, y, scalarConstant(b, loc, t, 0)),
                                  scalarConstant(b, loc, t, 1));
    return (Value)arith::MulFOp::create(b, loc, x, y);
  }
  if (auto lr = dyn_cast<nn::LeakyReluOp>(op)) {
    Value neg = arith::MulFOp::create(b, loc, x, scalarConstant(b, loc, t, lr.getAlpha().convertToDouble()));
    Value isNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, scalarConstant(b, loc, t, 0));
    return (Value)arith::SelectOp::create(b, loc, isNeg, neg, x);
  }
  if (isa<nn::EluOp, nn::SeluOp>(op)) {
    double alpha = isa<nn::EluOp>(op) ? cast<nn::EluOp>(op).getAlpha().convertToDouble()
                                      : cast<nn::SeluOp>(op).getAlpha().convertToDouble();
    Value em1 = arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x), scalarConstant(b, loc, t, 1));
    Value neg = arith::MulFOp::create(b, loc, em1, scalarConstant(b, loc, t, alpha));
    Value isPos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, scalarConstant(b, loc, t, 0));
    Value y = arith::SelectOp::create(b, loc, isPos, x, neg);
    if (auto selu = dyn_cast<nn::SeluOp>(op))
      y = arith::MulFOp::create(b, loc, y, scalarConstant(b, loc, t, selu.getGamma().convertToDouble()));
    return y;
  }
  if (auto hs = dyn_cast<nn::HardSigmoidOp>(op)) {
    Value y = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, scalarConstant(b, loc, t, hs.getAlpha().convertToDouble())),
        scalarConstant(b, loc, t, hs.getBeta().convertToDouble()));
    return (Value)arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, y, scalarConstant(b, loc, t, 0)), scalarConstant(b, loc, t, 1));
  }
  return failure();
}

/// Scalar bodies of unary ops defined on ints and floats.
FailureOr<Value> unaryAny(OpBuilder &b, Location loc, Operation *op, Value x, bool isUnsigned) {
  Type t = x.getType();
  bool isFloat = isa<FloatType>(t);
  if (isa<nn::NegOp>(op))
    return isFloat ? (Value)arith::NegFOp::create(b, loc, x)
                   : (Value)arith::SubIOp::create(b, loc, scalarConstant(b, loc, t, 0), x);
  if (isa<nn::AbsOp>(op)) {
    if (isFloat)
      return (Value)math::AbsFOp::create(b, loc, x);
    return isUnsigned ? x : (Value)math::AbsIOp::create(b, loc, x);
  }
  if (isa<nn::ReluOp>(op))
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, x, scalarConstant(b, loc, t, 0))
                   : (Value)arith::MaxSIOp::create(b, loc, x, scalarConstant(b, loc, t, 0));
  if (isa<nn::SignOp>(op)) {
    Value zero = scalarConstant(b, loc, t, 0), one = scalarConstant(b, loc, t, 1), minusOne = scalarConstant(b, loc, t, -1);
    Value gt = isFloat ? (Value)arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero)
                       : (Value)arith::CmpIOp::create(b, loc,
                                                      isUnsigned ? arith::CmpIPredicate::ugt
                                                                 : arith::CmpIPredicate::sgt,
                                                      x, zero);
    Value lt = isFloat ? (Value)arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero)
                       : (Value)arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
    if (isUnsigned)
      lt = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    Value neg = arith::SelectOp::create(b, loc, lt, minusOne, zero);
    return (Value)arith::SelectOp::create(b, loc, gt, one, neg);
  }
  if (isa<nn::NotOp>(op))
    return (Value)arith::XOrIOp::create(b, loc, x, scalarConstant(b, loc, t, 1));
  if (isa<nn::IsNaNOp>(op))
    return (Value)arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  if (isFloat)
    return unaryFloat(b, loc, op, x);
  return failure();
}

/// Scalar bodies of binary ops; `lhsType`/`rhsType` are the nn operand types.
FailureOr<Value> binary(OpBuilder &b, Location loc, Operation *op, Value l, Value r,
                        bool isUnsigned) {
  Type t = l.getType();
  bool isFloat = isa<FloatType>(t);
  using P = arith::CmpIPredicate;
  using F = arith::CmpFPredicate;
  auto cmp = [&](F fp, P sp, P up) -> Value {
    if (isFloat)
      return arith::CmpFOp::create(b, loc, fp, l, r);
    return arith::CmpIOp::create(b, loc, isUnsigned ? up : sp, l, r);
  };
  if (isa<nn::AddOp>(op))
    return isFloat ? (Value)arith::AddFOp::create(b, loc, l, r) : (Value)arith::AddIOp::create(b, loc, l, r);
  if (isa<nn::SubOp>(op))
    return isFloat ? (Value)arith::SubFOp::create(b, loc, l, r) : (Value)arith::SubIOp::create(b, loc, l, r);
  if (isa<nn::MulOp>(op))
    return isFloat ? (Value)arith::MulFOp::create(b, loc, l, r) : (Value)arith::MulIOp::create(b, loc, l, r);
  if (isa<nn::DivOp>(op)) {
    if (isFloat)
      return (Value)arith::DivFOp::create(b, loc, l, r);
    return isUnsigned ? (Value)arith::DivUIOp::create(b, loc, l, r)
                      : (Value)arith::DivSIOp::create(b, loc, l, r);
  }
  if (isa<nn::MaxOp>(op)) {
    if (isFloat)
      return (Value)arith::MaximumFOp::create(b, loc, l, r);
    return isUnsigned ? (Value)arith::MaxUIOp::create(b, loc, l, r)
                      : (Value)arith::MaxSIOp::create(b, loc, l, r);
  }
  if (isa<nn::MinOp>(op)) {
    if (isFloat)
      return (Value)arith::MinimumFOp::create(b, loc, l, r);
    return isUnsigned ? (Value)arith::MinUIOp::create(b, loc, l, r)
                      : (Value)arith::MinSIOp::create(b, loc, l, r);
  }
  if (isa<nn::PReluOp>(op)) {
    Value zero = scalarConstant(b, loc, t, 0);
    Value isNeg = isFloat ? (Value)arith::CmpFOp::create(b, loc, F::OLT, l, zero)
                          : (Value)arith::CmpIOp::create(b, loc, P::slt, l, zero);
    Value scaled = isFloat ? (Value)arith::MulFOp::create(b, loc, l, r)
                           : (Value)arith::MulIOp::create(b, loc, l, r);
    return (Value)arith::SelectOp::create(b, loc, isNeg, scaled, l);
  }
  if (isa<nn::AndOp>(op))
    return (Value)arith::AndIOp::create(b, loc, l, r);
  if (isa<nn::OrOp>(op))
    return (Value)arith::OrIOp::create(b, loc, l, r);
  if (isa<nn::EqualOp>(op))
    return cmp(F::OEQ, P::eq, P::eq);
  if (isa<nn::GreaterOp>(op))
    return cmp(F::OGT, P::sgt, P::ugt);
  if (isa<nn::LessOp>(op))
    return cmp(F::OLT, P::slt, P::ult);
  if (isa<nn::GreaterEqualOp>(op))
    return cmp(F::OGE, P::sge, P::uge);
  if (isa<nn::LessEqualOp>(op))
    return cmp(F::OLE, P::sle, P::ule);
  return failure();
}

/// Pow: float bases use powf (an integer exponent converted); integer bases
/// compute in f64 and convert back, as ONNX's reference does.
Value pow(OpBuilder &b, Location loc, Value base, Value exp, bool baseUnsigned, bool expUnsigned) {
  Type bt = base.getType(), et = exp.getType();
  if (isa<FloatType>(bt)) {
    Value e = castScalar(b, loc, exp, et, expUnsigned, bt, false);
    return math::PowFOp::create(b, loc, base, e);
  }
  Type f64 = b.getF64Type();
  Value fb = castScalar(b, loc, base, bt, baseUnsigned, f64, false);
  Value fe = castScalar(b, loc, exp, et, expUnsigned, f64, false);
  return castScalar(b, loc, math::PowFOp::create(b, loc, fb, fe), f64, false, bt, baseUnsigned);
}

} // namespace

} // namespace nncc::kernels

namespace nncc {

using kernels::binary;
using kernels::pow;
using kernels::unaryAny;

bool isFusibleElementwise(Operation *op) {
  // BatchNorm's per-channel operands and Expand's shape are not numpy
  // broadcasts of the result; the others map element i to element i.
  if (!op->getDialect() || !isa<nn::NNDialect>(op->getDialect()) || op->getNumResults() != 1 ||
      isa<nn::BatchNormOp, nn::ExpandOp, nn::ConstantOfShapeOp, nn::ConstantOp>(op))
    return false;
  auto kind = dyn_cast<nn::FusionKindOpInterface>(op);
  return kind && (kind.getFusionKind() == nn::FusionKind::Elementwise ||
                  kind.getFusionKind() == nn::FusionKind::Broadcast);
}

FailureOr<Value> buildElementwiseScalar(OpBuilder &b, Location loc, Operation *op, ValueRange s) {
  auto unsignedOperand = [&](unsigned i) { return isUnsignedElement(op->getOperand(i).getType()); };
  if (auto c = dyn_cast<nn::CastOp>(op))
    return castScalar(b, loc, s[0], s[0].getType(), unsignedOperand(0),
                      getElementTypeOrSelf(toSignless(c.getType())), isUnsignedElement(c.getType()));
  if (isa<nn::PowOp>(op))
    return pow(b, loc, s[0], s[1], unsignedOperand(0), unsignedOperand(1));
  if (isa<nn::WhereOp>(op))
    return (Value)arith::SelectOp::create(b, loc, s[0], s[1], s[2]);
  if (isa<nn::ClipOp>(op)) {
    if (isa<FloatType>(s[0].getType()))
      return (Value)arith::MinimumFOp::create(b, loc, arith::MaximumFOp::create(b, loc, s[0], s[1]), s[2]);
    if (unsignedOperand(0))
      return (Value)arith::MinUIOp::create(b, loc, arith::MaxUIOp::create(b, loc, s[0], s[1]), s[2]);
    return (Value)arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, s[0], s[1]), s[2]);
  }
  if (op->getNumOperands() == 1 && s.size() == 1)
    return unaryAny(b, loc, op, s[0], unsignedOperand(0));
  if (op->getNumOperands() == 2 && s.size() == 2)
    return binary(b, loc, op, s[0], s[1], unsignedOperand(0));
  return failure();
}

} // namespace nncc

namespace nncc::kernels {

FailureOr<SmallVector<Value>> buildElementwise(OpBuilder &b, Operation *op, ValueRange args,
                                               ValueRange inits, bool &matched) {
  Location loc = op->getLoc();
  matched = true;
  if (auto bn = dyn_cast<nn::BatchNormOp>(op)) {
    // y = (x - mean) / sqrt(var + eps) * scale + bias, parameters along axis 1.
    auto outType = cast<RankedTensorType>(inits[0].getType());
    MLIRContext *ctx = b.getContext();
    AffineMap id = b.getMultiDimIdentityMap(outType.getRank());
    AffineMap channel = AffineMap::get(outType.getRank(), 0, getAffineDimExpr(1, ctx));
    SmallVector<AffineMap> maps{id, channel, channel, channel, channel, id};
    SmallVector<utils::IteratorType> it(outType.getRank(), utils::IteratorType::parallel);
    double eps = bn.getEpsilon().convertToDouble();
    return generic(b, loc, args, inits, maps, it,
                   [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                     Type t = s[0].getType();
                     Value denom = math::SqrtOp::create(
                         nb, l, arith::AddFOp::create(nb, l, s[4], scalarConstant(nb, l, t, eps)));
                     Value norm = arith::DivFOp::create(
                         nb, l, arith::SubFOp::create(nb, l, s[0], s[3]), denom);
                     return {arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, norm, s[1]),
                                                   s[2])};
                   });
  }
  if (isa<nn::ExpandOp>(op))
    return SmallVector<Value>{broadcastGeneric(b, loc, args.take_front(1), inits[0],
                                               [](OpBuilder &, Location, ValueRange s) { return s[0]; })};
  if (!isFusibleElementwise(op)) {
    matched = false;
    return failure();
  }
  // Probe the scalar lowering inside the generic; drop the generic if none.
  bool ok = true;
  Value result = broadcastGeneric(b, loc, args, inits[0],
                                  [&](OpBuilder &nb, Location l, ValueRange s) -> Value {
                                    auto v = buildElementwiseScalar(nb, l, op, s);
                                    if (failed(v)) {
                                      ok = false;
                                      return s[0];
                                    }
                                    return *v;
                                  });
  if (ok)
    return SmallVector<Value>{result};
  result.getDefiningOp()->erase();
  matched = false;
  return failure();
}

} // namespace nncc::kernels
