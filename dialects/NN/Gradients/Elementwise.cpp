//===- Elementwise.cpp - gradients of elementwise and broadcast ops -------===//
//
// Each rule is the derivative of the op's ONNX definition, written with nn
// ops; cotangents of broadcast operands are summed back to their shapes.
// At kinks (Relu at 0, Abs at 0, Max of equal operands) the rules pick one
// side, as frameworks do.
//
//===----------------------------------------------------------------------===//
#include "dialects/NN/Gradients/GradientBuilder.h"

#include <cmath>

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

namespace {

using Grads = SmallVectorImpl<Value>;

/// dx = f(x, y, dy) for a one-operand op of a float input.
template <typename OpT, Value (*F)(GradBuilder &, Value, Value, Value)>
LogicalResult unaryRule(OpT op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op->getOperand(0);
  dxs.push_back(isFloatTensor(x) ? F(g, x, op->getResult(0), dys[0]) : Value());
  return success();
}

/// Piecewise-constant ops (Floor, Ceil, Round, Sign): zero almost everywhere.
template <typename OpT> LogicalResult zeroRule(OpT op, GradBuilder &, ArrayRef<Value>, Grads &dxs) {
  dxs.append(op->getNumOperands(), Value());
  return success();
}

Value negGrad(GradBuilder &g, Value, Value, Value dy) { return g.neg(dy); }
Value absGrad(GradBuilder &g, Value x, Value, Value dy) { return g.mul(dy, g.sign(x)); }
Value expGrad(GradBuilder &g, Value, Value y, Value dy) { return g.mul(dy, y); }
Value logGrad(GradBuilder &g, Value x, Value, Value dy) { return g.div(dy, x); }
Value sqrtGrad(GradBuilder &g, Value, Value y, Value dy) { return g.div(g.mul(dy, 0.5), y); }
Value reciprocalGrad(GradBuilder &g, Value, Value y, Value dy) { return g.neg(g.mul(dy, g.mul(y, y))); }
Value tanhGrad(GradBuilder &g, Value, Value y, Value dy) {
  return g.mul(dy, g.sub(g.scalarLike(y, 1), g.mul(y, y)));
}
Value sigmoidGrad(GradBuilder &g, Value, Value y, Value dy) {
  return g.mul(dy, g.mul(y, g.sub(g.scalarLike(y, 1), y)));
}
Value reluGrad(GradBuilder &g, Value x, Value, Value dy) {
  return g.where(g.greater(x, g.scalarLike(x, 0)), dy, g.scalarLike(dy, 0));
}
Value softplusGrad(GradBuilder &g, Value x, Value, Value dy) { return g.mul(dy, g.sigmoid(x)); }
/// d/dx erf(x) = 2/sqrt(pi) exp(-x^2).
Value erfGrad(GradBuilder &g, Value x, Value, Value dy) {
  return g.mul(dy, g.mul(g.exp(g.neg(g.mul(x, x))), 2.0 / std::sqrt(M_PI)));
}
Value sinGrad(GradBuilder &g, Value x, Value, Value dy) { return g.mul(dy, g.unary<CosOp>(x)); }
Value cosGrad(GradBuilder &g, Value x, Value, Value dy) { return g.neg(g.mul(dy, g.unary<SinOp>(x))); }
/// d/dx tan(x) = 1 + tan(x)^2.
Value tanGrad(GradBuilder &g, Value, Value y, Value dy) {
  return g.mul(dy, g.add(g.scalarLike(y, 1), g.mul(y, y)));
}
/// d/dx asin(x) = 1 / sqrt(1 - x^2) = -d/dx acos(x).
Value asinGrad(GradBuilder &g, Value x, Value, Value dy) {
  return g.div(dy, g.unary<SqrtOp>(g.sub(g.scalarLike(x, 1), g.mul(x, x))));
}
Value acosGrad(GradBuilder &g, Value x, Value y, Value dy) { return g.neg(asinGrad(g, x, y, dy)); }
Value atanGrad(GradBuilder &g, Value x, Value, Value dy) {
  return g.div(dy, g.add(g.scalarLike(x, 1), g.mul(x, x)));
}
/// HardSwish: x * clamp(x/6 + 1/2, 0, 1); 0 below -3, 1 above 3, (2x+3)/6 between.
Value hardSwishGrad(GradBuilder &g, Value x, Value, Value dy) {
  Value inner = g.mul(dy, g.add(g.mul(x, 1.0 / 3.0), g.scalarLike(x, 0.5)));
  Value upper = g.where(g.greater(x, g.scalarLike(x, 3)), dy, inner);
  return g.where(g.less(x, g.scalarLike(x, -3)), g.scalarLike(dy, 0), upper);
}

LogicalResult leakyReluRule(LeakyReluOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), dy = dys[0];
  double alpha = op.getAlpha().convertToDouble();
  dxs.push_back(g.where(g.greater(x, g.scalarLike(x, 0)), dy, g.mul(dy, alpha)));
  return success();
}

/// Elu: y = alpha (e^x - 1) below 0, so y' = y + alpha there.
LogicalResult eluRule(EluOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), y = op.getOutput(), dy = dys[0];
  double alpha = op.getAlpha().convertToDouble();
  Value below = g.mul(dy, g.add(y, g.scalarLike(y, alpha)));
  dxs.push_back(g.where(g.greater(x, g.scalarLike(x, 0)), dy, below));
  return success();
}

/// Selu: y = gamma alpha (e^x - 1) below 0, so y' = y + gamma alpha there.
LogicalResult seluRule(SeluOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), y = op.getOutput(), dy = dys[0];
  double alpha = op.getAlpha().convertToDouble(), gamma = op.getGamma().convertToDouble();
  Value below = g.mul(dy, g.add(y, g.scalarLike(y, alpha * gamma)));
  dxs.push_back(g.where(g.greater(x, g.scalarLike(x, 0)), g.mul(dy, gamma), below));
  return success();
}

/// HardSigmoid: clamp(alpha x + beta, 0, 1); slope alpha inside (0, 1).
LogicalResult hardSigmoidRule(HardSigmoidOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), dy = dys[0];
  double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
  Value t = g.add(g.mul(x, alpha), g.scalarLike(x, beta));
  Value inside = g.logicalAnd(g.greater(t, g.scalarLike(t, 0)), g.less(t, g.scalarLike(t, 1)));
  dxs.push_back(g.where(inside, g.mul(dy, alpha), g.scalarLike(dy, 0)));
  return success();
}

/// Gelu "none": 0.5 (1 + erf(x/sqrt2)) + x exp(-x^2/2) / sqrt(2 pi).
/// Gelu "tanh": with u = c (x + k x^3), t = tanh(u):
/// 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2).
LogicalResult geluRule(GeluOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), dy = dys[0];
  auto one = [&] { return g.scalarLike(x, 1); };
  Value d;
  if (op.getApproximate() == "tanh") {
    double c = std::sqrt(2.0 / M_PI), k = 0.044715;
    Value x2 = g.mul(x, x);
    Value u = g.mul(g.mul(x, g.add(one(), g.mul(x2, k))), c);
    Value t = g.tanh(u);
    Value left = g.mul(g.add(one(), t), 0.5);
    Value du = g.mul(g.add(one(), g.mul(x2, 3 * k)), c);
    Value right = g.mul(g.mul(g.mul(x, g.sub(one(), g.mul(t, t))), du), 0.5);
    d = g.add(left, right);
  } else {
    Value cdf = g.mul(g.add(one(), g.erf(g.mul(x, 1.0 / std::sqrt(2.0)))), 0.5);
    Value pdf = g.mul(g.exp(g.mul(g.mul(x, x), -0.5)), 1.0 / std::sqrt(2 * M_PI));
    d = g.add(cdf, g.mul(x, pdf));
  }
  dxs.push_back(g.mul(dy, d));
  return success();
}

LogicalResult addRule(AddOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  dxs.push_back(g.sumTo(dys[0], op.getLhs()));
  dxs.push_back(g.sumTo(dys[0], op.getRhs()));
  return success();
}

LogicalResult subRule(SubOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  dxs.push_back(g.sumTo(dys[0], op.getLhs()));
  dxs.push_back(isFloatTensor(op.getRhs()) ? g.sumTo(g.neg(dys[0]), op.getRhs()) : Value());
  return success();
}

LogicalResult mulRule(MulOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getLhs(), c = op.getRhs(), dy = dys[0];
  if (!isFloatTensor(a)) {
    dxs.append(2, Value());
    return success();
  }
  dxs.push_back(g.sumTo(g.mul(dy, c), a));
  dxs.push_back(g.sumTo(g.mul(dy, a), c));
  return success();
}

/// y = a / c: da = dy / c, dc = -dy y / c.
LogicalResult divRule(DivOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getLhs(), c = op.getRhs(), dy = dys[0];
  if (!isFloatTensor(a)) {
    dxs.append(2, Value());
    return success();
  }
  dxs.push_back(g.sumTo(g.div(dy, c), a));
  dxs.push_back(g.sumTo(g.neg(g.div(g.mul(dy, op.getOutput()), c)), c));
  return success();
}

/// y = a^c: da = dy c a^(c-1), dc = dy y log(a) (defined for a > 0).
LogicalResult powRule(PowOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getLhs(), c = op.getRhs(), dy = dys[0];
  if (!isFloatTensor(a)) {
    dxs.append(2, Value());
    return success();
  }
  Value cf = g.cast(c, g.type(a).getElementType());
  Value da = g.mul(dy, g.mul(cf, g.pow(a, g.sub(cf, g.scalarLike(cf, 1)))));
  dxs.push_back(g.sumTo(da, a));
  dxs.push_back(isFloatTensor(c) ? g.sumTo(g.mul(dy, g.mul(op.getOutput(), g.log(a))), c) : Value());
  return success();
}

/// Min and Max route the cotangent to the operand chosen (lhs on ties).
template <typename OpT, bool IsMax>
LogicalResult minMaxRule(OpT op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getLhs(), c = op.getRhs(), dy = dys[0];
  if (!isFloatTensor(a)) {
    dxs.append(2, Value());
    return success();
  }
  Value pickA = IsMax ? g.greaterEqual(a, c) : g.lessEqual(a, c);
  Value zero = g.scalarLike(dy, 0);
  dxs.push_back(g.sumTo(g.where(pickA, dy, zero), a));
  dxs.push_back(g.sumTo(g.where(pickA, zero, dy), c));
  return success();
}

/// PRelu: dx = dy where x > 0 else dy slope; dslope = dy x where x <= 0.
LogicalResult preluRule(PReluOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getLhs(), slope = op.getRhs(), dy = dys[0];
  Value positive = g.greater(x, g.scalarLike(x, 0));
  Value zero = g.scalarLike(dy, 0);
  dxs.push_back(g.sumTo(g.where(positive, dy, g.mul(dy, slope)), x));
  dxs.push_back(g.sumTo(g.where(positive, zero, g.mul(dy, x)), slope));
  return success();
}

LogicalResult whereRule(WhereOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value dy = dys[0], zero = g.scalarLike(dy, 0);
  dxs.push_back(Value());
  if (!isFloatTensor(op.getLhs())) {
    dxs.append(2, Value());
    return success();
  }
  dxs.push_back(g.sumTo(g.where(op.getCondition(), dy, zero), op.getLhs()));
  dxs.push_back(g.sumTo(g.where(op.getCondition(), zero, dy), op.getRhs()));
  return success();
}

/// Clip is min(max(x, lo), hi): with m = max(x, lo), dx = dy [x >= lo][m <= hi],
/// dlo = dy [x < lo][m <= hi], dhi = dy [m > hi].
LogicalResult clipRule(ClipOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), lo = op.getMin(), hi = op.getMax(), dy = dys[0];
  if (!isFloatTensor(x)) {
    dxs.append(3, Value());
    return success();
  }
  Value zero = g.scalarLike(dy, 0);
  Value m = MaxOp::create(g.b, g.loc, x.getType(), x, lo);
  Value belowHi = g.lessEqual(m, hi);
  Value inside = g.where(belowHi, dy, zero);
  Value aboveLo = g.greaterEqual(x, lo);
  dxs.push_back(g.where(aboveLo, inside, zero));
  dxs.push_back(g.sumTo(g.where(aboveLo, zero, inside), lo));
  dxs.push_back(g.sumTo(g.where(belowHi, zero, dy), hi));
  return success();
}

/// Float-to-float casts pass the cotangent back in the input's type.
LogicalResult castRule(CastOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  bool floats = isFloatTensor(op.getInput()) && isFloatTensor(op.getOutput());
  dxs.push_back(floats ? g.cast(dys[0], g.type(op.getInput()).getElementType()) : Value());
  return success();
}

} // namespace

void grad::registerElementwise(MLIRContext *context) {
  attach<NegOp, unaryRule<NegOp, negGrad>>(context);
  attach<AbsOp, unaryRule<AbsOp, absGrad>>(context);
  attach<ExpOp, unaryRule<ExpOp, expGrad>>(context);
  attach<LogOp, unaryRule<LogOp, logGrad>>(context);
  attach<SqrtOp, unaryRule<SqrtOp, sqrtGrad>>(context);
  attach<ReciprocalOp, unaryRule<ReciprocalOp, reciprocalGrad>>(context);
  attach<TanhOp, unaryRule<TanhOp, tanhGrad>>(context);
  attach<SigmoidOp, unaryRule<SigmoidOp, sigmoidGrad>>(context);
  attach<ReluOp, unaryRule<ReluOp, reluGrad>>(context);
  attach<SoftplusOp, unaryRule<SoftplusOp, softplusGrad>>(context);
  attach<ErfOp, unaryRule<ErfOp, erfGrad>>(context);
  attach<HardSwishOp, unaryRule<HardSwishOp, hardSwishGrad>>(context);
  attach<SinOp, unaryRule<SinOp, sinGrad>>(context);
  attach<CosOp, unaryRule<CosOp, cosGrad>>(context);
  attach<TanOp, unaryRule<TanOp, tanGrad>>(context);
  attach<AsinOp, unaryRule<AsinOp, asinGrad>>(context);
  attach<AcosOp, unaryRule<AcosOp, acosGrad>>(context);
  attach<AtanOp, unaryRule<AtanOp, atanGrad>>(context);
  attach<FloorOp, zeroRule<FloorOp>>(context);
  attach<CeilOp, zeroRule<CeilOp>>(context);
  attach<RoundOp, zeroRule<RoundOp>>(context);
  attach<SignOp, zeroRule<SignOp>>(context);
  attach<LeakyReluOp, leakyReluRule>(context);
  attach<EluOp, eluRule>(context);
  attach<SeluOp, seluRule>(context);
  attach<HardSigmoidOp, hardSigmoidRule>(context);
  attach<GeluOp, geluRule>(context);
  attach<AddOp, addRule>(context);
  attach<SubOp, subRule>(context);
  attach<MulOp, mulRule>(context);
  attach<DivOp, divRule>(context);
  attach<PowOp, powRule>(context);
  attach<MinOp, minMaxRule<MinOp, false>>(context);
  attach<MaxOp, minMaxRule<MaxOp, true>>(context);
  attach<PReluOp, preluRule>(context);
  attach<WhereOp, whereRule>(context);
  attach<ClipOp, clipRule>(context);
  attach<CastOp, castRule>(context);
}
