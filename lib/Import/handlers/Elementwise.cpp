/// Handlers of elementwise and broadcasting ONNX ops.
#include "lib/Import/handlers/HandlerUtils.h"

#include <limits>

using namespace mlir;

namespace nncc::import {
namespace {

template <typename OpTy>
LogicalResult unary(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.resultTypeOr(0, ctx.inputType(0));
  out.push_back(build<OpTy>(ctx, type, ctx.input(0)));
  return success();
}

/// Unary ops whose ONNX attributes are floats with defaults.
template <typename OpTy>
LogicalResult unaryWithFloats(NodeContext &ctx, SmallVectorImpl<Value> &out,
                              ArrayRef<std::pair<StringRef, double>> attrs) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  SmallVector<NamedAttribute> named;
  for (auto [name, dflt] : attrs)
    named.push_back(f64Attr(ctx, name, ctx.attrFloat(name, dflt)));
  out.push_back(build<OpTy>(ctx, ctx.inputType(0), ctx.input(0), named));
  return success();
}

LogicalResult isNaN(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto in = ctx.inputType(0);
  out.push_back(build<nn::IsNaNOp>(
      ctx, RankedTensorType::get(in.getShape(), ctx.builder().getI1Type()), ctx.input(0)));
  return success();
}

/// Folds a variadic ONNX op (Sum, Max, Min, Mean, or a binary op) into a chain
/// of binary nn ops; the last result takes the inferred output type.
template <typename OpTy>
FailureOr<Value> chain(NodeContext &ctx, Type elementType) {
  if (ctx.numInputs() == 0 || !ctx.input(0))
    return ctx.error("needs at least one input");
  Value acc = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    if (!ctx.input(i))
      return ctx.error("input " + llvm::Twine(i) + " is required");
    auto type = broadcastType(acc.getType(), ctx.input(i).getType(), elementType);
    if (!type)
      return ctx.error("inputs are not broadcast-compatible");
    if (i + 1 == ctx.numInputs())
      type = ctx.resultTypeOr(0, type);
    acc = build<OpTy>(ctx, type, {acc, ctx.input(i)});
  }
  return acc; // One input: the op is an identity.
}

template <typename OpTy>
LogicalResult binary(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (ctx.numInputs() != 2)
    return ctx.error("expects 2 inputs");
  auto v = chain<OpTy>(ctx, ctx.inputType(0).getElementType());
  if (failed(v))
    return failure();
  out.push_back(*v);
  return success();
}

template <typename OpTy>
LogicalResult variadic(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto v = chain<OpTy>(ctx, ctx.inputType(0) ? ctx.inputType(0).getElementType() : Type());
  if (failed(v))
    return failure();
  out.push_back(*v);
  return success();
}

template <typename OpTy>
LogicalResult compare(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (ctx.numInputs() != 2 || failed(requireInputs(ctx, 2)))
    return ctx.error("expects 2 inputs");
  auto type = broadcastType(ctx.input(0).getType(), ctx.input(1).getType(),
                            ctx.builder().getI1Type());
  if (!type)
    return ctx.error("inputs are not broadcast-compatible");
  out.push_back(build<OpTy>(ctx, ctx.resultTypeOr(0, type), {ctx.input(0), ctx.input(1)}));
  return success();
}

/// PRelu: a 1-d slope of the channel count that does not broadcast (as old
/// PyTorch exporters wrote it) applies per channel (axis 1).
LogicalResult prelu(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0), slope = ctx.inputType(1);
  Value slopeValue = ctx.input(1);
  if (!broadcastType(input, slope, input.getElementType()) && slope.getRank() == 1 &&
      input.getRank() >= 2 && slope.getShape()[0] == input.getShape()[1]) {
    SmallVector<int64_t> shape(input.getRank() - 1, 1);
    shape[0] = slope.getShape()[0];
    slopeValue = build<nn::ReshapeOp>(ctx, RankedTensorType::get(shape, slope.getElementType()),
                                      slopeValue);
  }
  auto type = broadcastType(input, slopeValue.getType(), input.getElementType());
  if (!type)
    return ctx.error("slope does not broadcast to the input");
  out.push_back(build<nn::PReluOp>(ctx, ctx.resultTypeOr(0, type), {ctx.input(0), slopeValue}));
  return success();
}

LogicalResult mean(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto sum = chain<nn::AddOp>(ctx, ctx.inputType(0) ? ctx.inputType(0).getElementType() : Type());
  if (failed(sum))
    return failure();
  auto type = cast<RankedTensorType>(sum->getType());
  Value count = ctx.scalar(type.getElementType(), (double)ctx.numInputs());
  out.push_back(build<nn::DivOp>(ctx, type, {*sum, count}));
  return success();
}

LogicalResult where(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  out.push_back(build<nn::WhereOp>(ctx, *type, {ctx.input(0), ctx.input(1), ctx.input(2)}));
  return success();
}

/// Clip's absent bounds become the element type's extremes.
LogicalResult clip(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  Value bounds[2];
  for (int i = 0; i < 2; ++i) {
    Value given = ctx.input(1 + i);
    if (given) {
      auto t = cast<RankedTensorType>(given.getType());
      if (t.getRank() > 1 || (t.getRank() == 1 && t.getShape()[0] != 1))
        return ctx.error("min and max must be scalars");
      if (t.getRank() == 1)
        given = build<nn::ReshapeOp>(ctx, RankedTensorType::get({}, elem), given);
      bounds[i] = given;
      continue;
    }
    if (auto f = dyn_cast<FloatType>(elem)) {
      APFloat inf = APFloat::getInf(f.getFloatSemantics(), /*Negative=*/i == 0);
      bounds[i] = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({}, elem), inf));
    } else {
      auto intType = cast<IntegerType>(elem);
      unsigned w = intType.getWidth();
      APInt v = intType.isUnsigned() ? (i == 0 ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                                     : (i == 0 ? APInt::getSignedMinValue(w)
                                               : APInt::getSignedMaxValue(w));
      bounds[i] = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({}, elem), v));
    }
  }
  out.push_back(build<nn::ClipOp>(ctx, type, {ctx.input(0), bounds[0], bounds[1]}));
  return success();
}

LogicalResult cast(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  out.push_back(build<nn::CastOp>(ctx, *type, ctx.input(0)));
  return success();
}

LogicalResult castLike(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = RankedTensorType::get(ctx.inputType(0).getShape(),
                                    ctx.inputType(1).getElementType());
  out.push_back(build<nn::CastOp>(ctx, type, ctx.input(0)));
  return success();
}

LogicalResult identity(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  out.push_back(ctx.input(0));
  return success();
}

/// Inference-time Dropout, and training-mode Dropout with a constant ratio of
/// 0, is the identity; its mask is all true.
LogicalResult dropout(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto ratio = ctx.constFloats(1);
  bool dropsNothing = ratio && ratio->size() == 1 && (*ratio)[0] == 0.0;
  if (auto training = ctx.constInts(2);
      training && !training->empty() && (*training)[0] && !dropsNothing)
    return ctx.error("training_mode=true with a nonzero or run-time ratio needs random masks, "
                     "which are not supported");
  if (ctx.input(2) && !ctx.constInts(2))
    return ctx.error("training_mode must be a constant");
  out.push_back(ctx.input(0));
  if (ctx.outputUsed(1)) {
    auto type = RankedTensorType::get(ctx.inputType(0).getShape(), ctx.builder().getI1Type());
    if (!type.hasStaticShape())
      return ctx.error("the mask output needs a static input shape");
    out.push_back(ctx.constant(DenseElementsAttr::get(type, true)));
  }
  return success();
}

/// The broadcast i1 type of inputs 0 and 1, or an error naming them.
FailureOr<RankedTensorType> broadcastMask(NodeContext &ctx) {
  auto type = broadcastType(ctx.input(0).getType(), ctx.input(1).getType(),
                            ctx.builder().getI1Type());
  if (!type)
    return ctx.error("inputs are not broadcast-compatible");
  return type;
}

/// Xor is Not(Equal) of booleans.
LogicalResult xorOp(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = broadcastMask(ctx);
  if (failed(type))
    return failure();
  Value same = build<nn::EqualOp>(ctx, *type, {ctx.input(0), ctx.input(1)});
  out.push_back(build<nn::NotOp>(ctx, *type, same));
  return success();
}

LogicalResult isInf(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto in = ctx.inputType(0);
  auto floatType = dyn_cast<FloatType>(in.getElementType());
  if (!floatType)
    return ctx.error("expects a float input");
  bool positive = ctx.attrInt("detect_positive", 1) != 0;
  bool negative = ctx.attrInt("detect_negative", 1) != 0;
  if (!positive && !negative)
    return ctx.error("detect_positive and detect_negative are both 0");
  auto type = RankedTensorType::get(in.getShape(), ctx.builder().getI1Type());
  auto equalsInf = [&](bool neg) -> Value {
    APFloat inf = APFloat::getInf(floatType.getFloatSemantics(), neg);
    Value c = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({}, floatType), inf));
    return build<nn::EqualOp>(ctx, type, {ctx.input(0), c});
  };
  Value result = positive ? equalsInf(false) : equalsInf(true);
  if (positive && negative)
    result = build<nn::OrOp>(ctx, type, {result, equalsInf(true)});
  out.push_back(result);
  return success();
}

/// ThresholdedRelu: x where x > alpha, else 0.
LogicalResult thresholdedRelu(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  auto mask = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
  Value above = build<nn::GreaterOp>(
      ctx, mask, {ctx.input(0), ctx.scalar(elem, ctx.attrFloat("alpha", 1.0))});
  out.push_back(build<nn::WhereOp>(ctx, type, {above, ctx.input(0), ctx.scalar(elem, 0.0)}));
  return success();
}

/// Softsign: x / (1 + |x|).
LogicalResult softsign(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Value abs = build<nn::AbsOp>(ctx, type, ctx.input(0));
  Value denom = build<nn::AddOp>(ctx, type, {abs, ctx.scalar(type.getElementType(), 1.0)});
  out.push_back(build<nn::DivOp>(ctx, type, {ctx.input(0), denom}));
  return success();
}

/// Celu(x) = alpha * Elu(x / alpha) with Elu's alpha 1.
LogicalResult celu(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  double alpha = ctx.attrFloat("alpha", 1.0);
  if (alpha == 0)
    return ctx.error("alpha must not be 0");
  Value a = ctx.scalar(type.getElementType(), alpha);
  Value scaled = build<nn::DivOp>(ctx, type, {ctx.input(0), a});
  Value elu = build<nn::EluOp>(ctx, type, scaled, {f64Attr(ctx, "alpha", 1.0)});
  out.push_back(build<nn::MulOp>(ctx, type, {elu, a}));
  return success();
}

/// Shrink: x + bias below -lambd, x - bias above lambd, else 0.
LogicalResult shrink(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  double lambd = ctx.attrFloat("lambd", 0.5), bias = ctx.attrFloat("bias", 0.0);
  auto mask = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
  Value x = ctx.input(0), b = ctx.scalar(elem, bias);
  Value below = build<nn::LessOp>(ctx, mask, {x, ctx.scalar(elem, -lambd)});
  Value above = build<nn::GreaterOp>(ctx, mask, {x, ctx.scalar(elem, lambd)});
  Value up = build<nn::AddOp>(ctx, type, {x, b});
  Value down = build<nn::SubOp>(ctx, type, {x, b});
  Value inner = build<nn::WhereOp>(ctx, type, {above, down, ctx.scalar(elem, 0.0)});
  out.push_back(build<nn::WhereOp>(ctx, type, {below, up, inner}));
  return success();
}

/// Mod: the remainder a - b * trunc(a / b) (integer division truncates);
/// with fmod=0 (integers only) it takes the divisor's sign, as Python's %.
LogicalResult mod(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  Type elem = ctx.inputType(0).getElementType();
  bool isFloat = isa<FloatType>(elem);
  bool fmod = ctx.attrInt("fmod", 0) != 0;
  if (isFloat && !fmod)
    return ctx.error("fmod=0 is defined for integers only");
  auto type = broadcastType(ctx.input(0).getType(), ctx.input(1).getType(), elem);
  if (!type)
    return ctx.error("inputs are not broadcast-compatible");
  Value a = ctx.input(0), b = ctx.input(1);
  Value quotient = build<nn::DivOp>(ctx, type, {a, b});
  if (isFloat) {
    Value abs = build<nn::AbsOp>(ctx, type, quotient);
    Value magnitude = build<nn::FloorOp>(ctx, type, abs);
    Value sign = build<nn::SignOp>(ctx, type, quotient);
    quotient = build<nn::MulOp>(ctx, type, {sign, magnitude});
  }
  Value product = build<nn::MulOp>(ctx, type, {b, quotient});
  Value rem = build<nn::SubOp>(ctx, type, {a, product});
  if (!fmod && !elem.isUnsignedInteger()) {
    auto mask = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
    Value zero = ctx.scalar(elem, 0);
    Value remNegative = build<nn::LessOp>(ctx, mask, {rem, zero});
    auto divisorMask = RankedTensorType::get(ctx.inputType(1).getShape(), mask.getElementType());
    Value divisorNegative = build<nn::LessOp>(ctx, divisorMask, {b, zero});
    Value signsAgree = build<nn::EqualOp>(ctx, mask, {remNegative, divisorNegative});
    Value isZero = build<nn::EqualOp>(ctx, mask, {rem, zero});
    Value keep = build<nn::OrOp>(ctx, mask, {signsAgree, isZero});
    Value shifted = build<nn::AddOp>(ctx, type, {rem, b});
    rem = build<nn::WhereOp>(ctx, type, {keep, rem, shifted});
  }
  out.push_back(rem);
  return success();
}

/// BitShift of unsigned integers: x * 2^y (LEFT) or x / 2^y (RIGHT), with
/// shifts by the bit width or more giving 0 (and never dividing by 0).
LogicalResult bitShift(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  Type elem = ctx.inputType(0).getElementType();
  if (!elem.isUnsignedInteger())
    return ctx.error("expects unsigned integer inputs");
  std::string direction = ctx.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.error("direction '" + direction + "' is not LEFT or RIGHT");
  auto type = broadcastType(ctx.input(0).getType(), ctx.input(1).getType(), elem);
  if (!type)
    return ctx.error("inputs are not broadcast-compatible");
  auto yType = ctx.inputType(1);
  auto yMask = RankedTensorType::get(yType.getShape(), ctx.builder().getI1Type());
  Value y = ctx.input(1), zero = ctx.scalar(elem, 0), one = ctx.scalar(elem, 1);
  Value outOfRange = build<nn::GreaterEqualOp>(
      ctx, yMask, {y, ctx.scalar(elem, (double)elem.getIntOrFloatBitWidth())});
  Value power = build<nn::PowOp>(ctx, yType, {ctx.scalar(elem, 2), y});
  Value factor = build<nn::WhereOp>(ctx, yType, {outOfRange, direction == "LEFT" ? zero : one, power});
  Value shifted = direction == "LEFT" ? (Value)build<nn::MulOp>(ctx, type, {ctx.input(0), factor})
                                      : (Value)build<nn::DivOp>(ctx, type, {ctx.input(0), factor});
  if (direction == "RIGHT")
    shifted = build<nn::WhereOp>(ctx, type, {outOfRange, zero, shifted});
  out.push_back(shifted);
  return success();
}

/// The hyperbolic functions and their inverses, from exp, log and sqrt.
enum class Hyperbolic { Sinh, Cosh, Asinh, Acosh, Atanh };

template <Hyperbolic kind>
LogicalResult hyperbolic(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem))
    return ctx.error("expects a float input");
  Value x = ctx.input(0), one = ctx.scalar(elem, 1.0), half = ctx.scalar(elem, 0.5);
  Value result;
  switch (kind) {
  case Hyperbolic::Sinh:
  case Hyperbolic::Cosh: { // (e^x -+ e^-x) / 2
    Value ex = build<nn::ExpOp>(ctx, type, x);
    Value negX = build<nn::NegOp>(ctx, type, x);
    Value enx = build<nn::ExpOp>(ctx, type, negX);
    Value combined = kind == Hyperbolic::Sinh ? (Value)build<nn::SubOp>(ctx, type, {ex, enx})
                                              : (Value)build<nn::AddOp>(ctx, type, {ex, enx});
    result = build<nn::MulOp>(ctx, type, {combined, half});
    break;
  }
  case Hyperbolic::Asinh: { // sign(x) log(|x| + sqrt(x^2 + 1)): no cancellation for x < 0
    Value abs = build<nn::AbsOp>(ctx, type, x);
    Value square = build<nn::MulOp>(ctx, type, {x, x});
    Value shifted = build<nn::AddOp>(ctx, type, {square, one});
    Value root = build<nn::SqrtOp>(ctx, type, shifted);
    Value sum = build<nn::AddOp>(ctx, type, {abs, root});
    Value log = build<nn::LogOp>(ctx, type, sum);
    Value sign = build<nn::SignOp>(ctx, type, x);
    result = build<nn::MulOp>(ctx, type, {sign, log});
    break;
  }
  case Hyperbolic::Acosh: { // log(x + sqrt(x^2 - 1))
    Value square = build<nn::MulOp>(ctx, type, {x, x});
    Value shifted = build<nn::SubOp>(ctx, type, {square, one});
    Value root = build<nn::SqrtOp>(ctx, type, shifted);
    Value sum = build<nn::AddOp>(ctx, type, {x, root});
    result = build<nn::LogOp>(ctx, type, sum);
    break;
  }
  case Hyperbolic::Atanh: { // log((1 + x) / (1 - x)) / 2
    Value above = build<nn::AddOp>(ctx, type, {one, x});
    Value below = build<nn::SubOp>(ctx, type, {one, x});
    Value ratio = build<nn::DivOp>(ctx, type, {above, below});
    Value log = build<nn::LogOp>(ctx, type, ratio);
    result = build<nn::MulOp>(ctx, type, {log, half});
    break;
  }
  }
  out.push_back(result);
  return success();
}

} // namespace

void registerElementwiseHandlers(HandlerRegistry &r) {
  r.add("Sqrt", 6, unary<nn::SqrtOp>);
  r.add("Exp", 6, unary<nn::ExpOp>);
  r.add("Log", 6, unary<nn::LogOp>);
  r.add("Neg", 6, unary<nn::NegOp>);
  r.add("Abs", 6, unary<nn::AbsOp>);
  r.add("Reciprocal", 6, unary<nn::ReciprocalOp>);
  r.add("Erf", 9, unary<nn::ErfOp>);
  r.add("Tanh", 6, unary<nn::TanhOp>);
  r.add("Sin", 7, unary<nn::SinOp>);
  r.add("Cos", 7, unary<nn::CosOp>);
  r.add("Tan", 7, unary<nn::TanOp>);
  r.add("Asin", 7, unary<nn::AsinOp>);
  r.add("Acos", 7, unary<nn::AcosOp>);
  r.add("Atan", 7, unary<nn::AtanOp>);
  r.add("Sigmoid", 6, unary<nn::SigmoidOp>);
  r.add("Relu", 6, unary<nn::ReluOp>);
  r.add("Floor", 6, unary<nn::FloorOp>);
  r.add("Ceil", 6, unary<nn::CeilOp>);
  r.add("Round", 11, unary<nn::RoundOp>);
  r.add("Sign", 9, unary<nn::SignOp>);
  r.add("Softplus", 1, unary<nn::SoftplusOp>);
  r.add("HardSwish", 14, unary<nn::HardSwishOp>);
  r.add("Not", 1, unary<nn::NotOp>);
  r.add("IsNaN", 9, isNaN);
  r.add("LeakyRelu", 6, [](NodeContext &c, SmallVectorImpl<Value> &o) {
    return unaryWithFloats<nn::LeakyReluOp>(c, o, {{"alpha", 0.01}});
  });
  r.add("Elu", 6, [](NodeContext &c, SmallVectorImpl<Value> &o) {
    return unaryWithFloats<nn::EluOp>(c, o, {{"alpha", 1.0}});
  });
  r.add("Selu", 6, [](NodeContext &c, SmallVectorImpl<Value> &o) {
    return unaryWithFloats<nn::SeluOp>(
        c, o, {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}});
  });
  r.add("HardSigmoid", 6, [](NodeContext &c, SmallVectorImpl<Value> &o) {
    return unaryWithFloats<nn::HardSigmoidOp>(c, o, {{"alpha", 0.2}, {"beta", 0.5}});
  });
  r.add("Clip", 11, clip);
  r.add("Cast", 13, cast);
  r.add("CastLike", 15, castLike);
  r.add("Identity", 1, identity);
  r.add("Dropout", 12, dropout);

  r.add("Add", 7, binary<nn::AddOp>);
  r.add("Sub", 7, binary<nn::SubOp>);
  r.add("Mul", 7, binary<nn::MulOp>);
  r.add("Div", 7, binary<nn::DivOp>);
  r.add("Pow", 7, binary<nn::PowOp>);
  r.add("PRelu", 7, prelu);
  r.add("Max", 8, variadic<nn::MaxOp>);
  r.add("Min", 8, variadic<nn::MinOp>);
  r.add("Sum", 8, variadic<nn::AddOp>);
  r.add("Mean", 8, mean);
  r.add("And", 7, binary<nn::AndOp>);
  r.add("Or", 7, binary<nn::OrOp>);
  r.add("Equal", 11, compare<nn::EqualOp>);
  r.add("Greater", 9, compare<nn::GreaterOp>);
  r.add("Less", 9, compare<nn::LessOp>);
  r.add("GreaterOrEqual", 12, compare<nn::GreaterEqualOp>);
  r.add("LessOrEqual", 12, compare<nn::LessEqualOp>);
  r.add("Where", 9, where);
  r.add("Xor", 7, xorOp);
  r.add("IsInf", 10, isInf);
  r.add("ThresholdedRelu", 10, thresholdedRelu);
  r.add("Softsign", 1, softsign);
  r.add("Celu", 12, celu);
  r.add("Shrink", 9, shrink);
  r.add("Mod", 10, mod);
  r.add("BitShift", 11, bitShift);
  r.add("Sinh", 9, hyperbolic<Hyperbolic::Sinh>);
  r.add("Cosh", 9, hyperbolic<Hyperbolic::Cosh>);
  r.add("Asinh", 9, hyperbolic<Hyperbolic::Asinh>);
  r.add("Acosh", 9, hyperbolic<Hyperbolic::Acosh>);
  r.add("Atanh", 9, hyperbolic<Hyperbolic::Atanh>);
}

} // namespace nncc::import
