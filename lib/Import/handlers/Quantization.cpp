/// Handlers of the quantization ops (QuantizeLinear, DequantizeLinear,
/// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
/// QLinearConv), composed from nn ops as ONNX's reference implementation
/// computes them:
/// - integer products accumulate in i32 (nn.matmul and nn.conv on i32
///   tensors), exact for any size; f32 would be exact only while partial
///   sums stay below 2^24, about 258 products of two 8-bit values;
/// - a requantized value is saturate(round_half_even(v) + zero_point), with
///   v computed in f32 for QuantizeLinear (x / scale, both f32) and in f64
///   for the QLinear ops, whose reference multiplies the i32 accumulator by
///   the f32 scale ratio (numpy promotes that product to f64).
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

RankedTensorType withElement(Value v, Type element) {
  return cast<RankedTensorType>(v.getType()).clone(element);
}

Value castTo(NodeContext &ctx, Value v, Type element) {
  if (cast<RankedTensorType>(v.getType()).getElementType() == element)
    return v;
  return build<nn::CastOp>(ctx, withElement(v, element), v);
}

/// The value range of a quantized integer type (8 or 16 bits, or i32).
FailureOr<std::pair<double, double>> quantRange(NodeContext &ctx, Type element) {
  auto intType = dyn_cast<IntegerType>(element);
  if (!intType || intType.getWidth() == 1 || intType.getWidth() > 32)
    return ctx.error("quantized type must be an 8-, 16- or 32-bit integer");
  unsigned w = intType.getWidth();
  if (intType.isUnsigned())
    return std::make_pair(0.0, std::ldexp(1.0, w) - 1);
  return std::make_pair(-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1);
}

/// A scale or zero point shaped to broadcast against `x`, quantized along
/// `axis` (as the attribute gives it): a scalar or one-element tensor becomes
/// 0-d (per tensor), a vector becomes [1, ..., n, ..., 1] with n at the axis
/// (per axis). An absent optional input (null) stays null.
FailureOr<Value> alongAxis(NodeContext &ctx, Value v, RankedTensorType x, int64_t axis, StringRef what) {
  if (!v)
    return Value();
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.hasStaticShape())
    return ctx.error(what + " needs a static shape");
  if (type.getNumElements() == 1)
    return type.getRank() == 0 ? v
                               : (Value)build<nn::ReshapeOp>(ctx, type.clone(ArrayRef<int64_t>{}), v);
  int64_t rank = x.getRank();
  auto normalized = nn::normalizeAxis(axis, rank);
  if (type.getRank() != 1 || !normalized || x.isDynamicDim(*normalized) ||
      type.getShape()[0] != x.getShape()[*normalized])
    return ctx.error(what + " must be a scalar or a vector with one entry per element of axis " +
                     llvm::Twine(axis));
  SmallVector<int64_t> shape(rank, 1);
  shape[*normalized] = type.getShape()[0];
  return (Value)build<nn::ReshapeOp>(ctx, type.clone(shape), v);
}

/// saturate(round_half_even(v) + zeroPoint) as `outType`; `v` is float and
/// `zeroPoint` (may be null) broadcasts against it.
FailureOr<Value> requantize(NodeContext &ctx, Value v, Value zeroPoint, RankedTensorType outType) {
  auto range = quantRange(ctx, outType.getElementType());
  if (failed(range))
    return failure();
  auto vType = cast<RankedTensorType>(v.getType());
  Type ft = vType.getElementType();
  Value r = build<nn::RoundOp>(ctx, vType, v);
  if (zeroPoint)
    r = build<nn::AddOp>(ctx, vType, {r, castTo(ctx, zeroPoint, ft)});
  r = build<nn::ClipOp>(ctx, vType, {r, ctx.scalar(ft, range->first), ctx.scalar(ft, range->second)});
  return (Value)build<nn::CastOp>(ctx, outType, r);
}

/// `x` widened to i32 minus its zero point (null: none), the form integer
/// products take.
Value minusZeroPoint(NodeContext &ctx, Value x, Value zeroPoint) {
  Type i32 = ctx.builder().getI32Type();
  Value xi = castTo(ctx, x, i32);
  if (!zeroPoint)
    return xi;
  return build<nn::SubOp>(ctx, withElement(x, i32), {xi, castTo(ctx, zeroPoint, i32)});
}

/// y = saturate(round(x / scale) + zero_point); per axis with a vector scale.
LogicalResult quantizeLinear(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  if (ctx.attrInt("block_size", 0) != 0)
    return ctx.error("blocked quantization (block_size) is not supported");
  auto xType = ctx.inputType(0);
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  int64_t axis = ctx.attrInt("axis", 1);
  auto scale = alongAxis(ctx, ctx.input(1), xType, axis, "y_scale");
  if (failed(scale))
    return failure();
  auto zeroPoint = alongAxis(ctx, ctx.input(2), xType, axis, "y_zero_point");
  if (failed(zeroPoint))
    return failure();
  // x / scale in the scale's float type (f32 before opset 19); an i32 x
  // divides in f64, as numpy promotes it.
  Type ft = cast<RankedTensorType>(scale->getType()).getElementType();
  if (!isa<FloatType>(ft))
    return ctx.error("y_scale must be a float tensor");
  if (isa<IntegerType>(xType.getElementType()))
    ft = ctx.builder().getF64Type();
  Value q = build<nn::DivOp>(ctx, xType.clone(ft), {castTo(ctx, ctx.input(0), ft), castTo(ctx, *scale, ft)});
  auto y = requantize(ctx, q, *zeroPoint, *type);
  if (failed(y))
    return failure();
  out.push_back(*y);
  return success();
}

/// y = (x - zero_point) * scale, the difference taken in i32 (exact).
LogicalResult dequantizeLinear(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  if (ctx.attrInt("block_size", 0) != 0)
    return ctx.error("blocked quantization (block_size) is not supported");
  auto xType = ctx.inputType(0);
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  if (!isa<IntegerType>(xType.getElementType()))
    return ctx.error("x must be an integer tensor");
  int64_t axis = ctx.attrInt("axis", 1);
  auto scale = alongAxis(ctx, ctx.input(1), xType, axis, "x_scale");
  if (failed(scale))
    return failure();
  auto zeroPoint = alongAxis(ctx, ctx.input(2), xType, axis, "x_zero_point");
  if (failed(zeroPoint))
    return failure();
  Type ft = type->getElementType();
  Value d = castTo(ctx, minusZeroPoint(ctx, ctx.input(0), *zeroPoint), ft);
  out.push_back(build<nn::MulOp>(ctx, *type, {d, castTo(ctx, *scale, ft)}));
  return success();
}

/// ONNX's function body: the range [min(x, 0), max(x, 0)] mapped onto
/// [0, 255], zero point rounded, then QuantizeLinear.
LogicalResult dynamicQuantizeLinear(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto xType = ctx.inputType(0);
  Type ft = xType.getElementType();
  if (!ft.isF32())
    return ctx.error("x must be a float32 tensor");
  auto yType = ctx.resultType(0);
  if (failed(yType))
    return failure();
  auto scalarType = RankedTensorType::get({}, ft);
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < xType.getRank(); ++i)
    all.push_back(i);
  SmallVector<NamedAttribute> allAxes{i64ArrayAttr(ctx, "axes", all), boolAttr(ctx, "keepdims", false)};
  Value zero = ctx.scalar(ft, 0.0), qmax = ctx.scalar(ft, 255.0);
  Value lo = build<nn::MinOp>(ctx, scalarType, {build<nn::ReduceMinOp>(ctx, scalarType, ctx.input(0), allAxes), zero});
  Value hi = build<nn::MaxOp>(ctx, scalarType, {build<nn::ReduceMaxOp>(ctx, scalarType, ctx.input(0), allAxes), zero});
  Value scale = build<nn::DivOp>(ctx, scalarType, {build<nn::SubOp>(ctx, scalarType, {hi, lo}), qmax});
  Value zpf = build<nn::SubOp>(ctx, scalarType, {zero, build<nn::DivOp>(ctx, scalarType, {lo, scale})});
  zpf = build<nn::ClipOp>(ctx, scalarType, {zpf, zero, qmax});
  zpf = build<nn::RoundOp>(ctx, scalarType, zpf);
  Value zp = build<nn::CastOp>(ctx, scalarType.clone(yType->getElementType()), zpf);
  Value q = build<nn::DivOp>(ctx, xType, {ctx.input(0), scale});
  auto y = requantize(ctx, q, zpf, *yType);
  if (failed(y))
    return failure();
  out.append({*y, scale, zp});
  return success();
}

/// The zero point of a MatMul operand: per tensor (scalar), per row of A
/// ([M] → [M, 1]) or per column of B ([N], broadcasts as it is); N-d zero
/// points ([.., M, 1], [.., 1, N]) broadcast as they are.
FailureOr<Value> matmulZeroPoint(NodeContext &ctx, Value zp, bool isA, StringRef what) {
  if (!zp)
    return Value();
  auto type = cast<RankedTensorType>(zp.getType());
  if (!type.hasStaticShape())
    return ctx.error(what + " needs a static shape");
  if (type.getNumElements() == 1)
    return type.getRank() == 0 ? zp
                               : (Value)build<nn::ReshapeOp>(ctx, type.clone(ArrayRef<int64_t>{}), zp);
  if (type.getRank() == 1 && isA)
    return (Value)build<nn::ReshapeOp>(ctx, type.clone({type.getShape()[0], 1}), zp);
  return zp;
}

/// (A - a_zero_point) x (B - b_zero_point) in i32, with `inputs` the node
/// inputs of A, a_zero_point, B, b_zero_point; `resultShape` from inference.
FailureOr<Value> integerMatMul(NodeContext &ctx, std::array<size_t, 4> inputs, ArrayRef<int64_t> resultShape) {
  auto aZp = matmulZeroPoint(ctx, ctx.input(inputs[1]), true, "a_zero_point");
  auto bZp = matmulZeroPoint(ctx, ctx.input(inputs[3]), false, "b_zero_point");
  if (failed(aZp) || failed(bZp))
    return failure();
  Value a = minusZeroPoint(ctx, ctx.input(inputs[0]), *aZp);
  Value b = minusZeroPoint(ctx, ctx.input(inputs[2]), *bZp);
  auto type = RankedTensorType::get(resultShape, ctx.builder().getI32Type());
  return (Value)build<nn::MatMulOp>(ctx, type, {a, b});
}

LogicalResult matMulInteger(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto y = integerMatMul(ctx, {0, 2, 1, 3}, type->getShape());
  if (failed(y))
    return failure();
  out.push_back(*y);
  return success();
}

/// conv(x - x_zero_point, w - w_zero_point) + bias in i32; w's zero point
/// is per tensor or per output channel. Padding adds zeros after the zero
/// point is subtracted, i.e. pads x with its zero point.
FailureOr<Value> integerConv(NodeContext &ctx, Value x, Value xZp, Value w, Value wZp, Value bias,
                             ArrayRef<int64_t> resultShape) {
  auto xType = cast<RankedTensorType>(x.getType()), wType = cast<RankedTensorType>(w.getType());
  if (xType.getRank() < 3 || wType.getRank() != xType.getRank())
    return ctx.error("input and weight must have the same rank >= 3");
  auto window = readWindow(ctx, xType, ctx.attrInts("kernel_shape", SmallVector<int64_t>(wType.getShape().drop_front(2))));
  if (failed(window))
    return failure();
  auto xPoint = alongAxis(ctx, xZp, xType, 1, "x_zero_point");
  if (failed(xPoint))
    return failure();
  auto wPoint = alongAxis(ctx, wZp, wType, 0, "w_zero_point");
  if (failed(wPoint))
    return failure();
  Type i32 = ctx.builder().getI32Type();
  SmallVector<Value> operands{minusZeroPoint(ctx, x, *xPoint), minusZeroPoint(ctx, w, *wPoint)};
  if (bias)
    operands.push_back(castTo(ctx, bias, i32));
  return (Value)build<nn::ConvOp>(
      ctx, RankedTensorType::get(resultShape, i32), operands,
      {i64ArrayAttr(ctx, "strides", window->strides), i64ArrayAttr(ctx, "pads", window->pads),
       i64ArrayAttr(ctx, "dilations", window->dilations), i64Attr(ctx, "group", ctx.attrInt("group", 1))});
}

LogicalResult convInteger(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto y = integerConv(ctx, ctx.input(0), ctx.input(2), ctx.input(1), ctx.input(3), Value(), type->getShape());
  if (failed(y))
    return failure();
  out.push_back(*y);
  return success();
}

/// The QLinear ops' output: saturate(round(acc * (s1 * s2 / y_scale)) +
/// y_zero_point), the scale ratio in f32 and the product in f64 as ONNX's
/// reference computes it. `s1` and `s2` already broadcast against `acc`.
FailureOr<Value> requantizeAccumulator(NodeContext &ctx, Value acc, Value s1, Value s2, RankedTensorType outType) {
  auto scalarType = RankedTensorType::get({}, ctx.builder().getF32Type());
  auto yScale = alongAxis(ctx, ctx.input(6), scalarType, 0, "y_scale");
  if (failed(yScale))
    return failure();
  auto yZp = alongAxis(ctx, ctx.input(7), scalarType, 0, "y_zero_point");
  if (failed(yZp))
    return failure();
  Type f32 = ctx.builder().getF32Type(), f64 = ctx.builder().getF64Type();
  s1 = castTo(ctx, s1, f32);
  s2 = castTo(ctx, s2, f32);
  Value ratio = build<nn::MulOp>(ctx, broadcastType(s1.getType(), s2.getType(), f32), {s1, s2});
  ratio = build<nn::DivOp>(ctx, cast<RankedTensorType>(ratio.getType()), {ratio, castTo(ctx, *yScale, f32)});
  auto accType = cast<RankedTensorType>(acc.getType());
  Value v = build<nn::MulOp>(ctx, accType.clone(f64), {castTo(ctx, acc, f64), castTo(ctx, ratio, f64)});
  return requantize(ctx, v, *yZp, outType);
}

LogicalResult qLinearMatMul(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 8)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto acc = integerMatMul(ctx, {0, 2, 3, 5}, type->getShape());
  // Scales are per tensor, per row of A or per column of B, like the zero points.
  auto aScale = matmulZeroPoint(ctx, ctx.input(1), true, "a_scale");
  auto bScale = matmulZeroPoint(ctx, ctx.input(4), false, "b_scale");
  if (failed(acc) || failed(aScale) || failed(bScale))
    return failure();
  auto y = requantizeAccumulator(ctx, *acc, *aScale, *bScale, *type);
  if (failed(y))
    return failure();
  out.push_back(*y);
  return success();
}

LogicalResult qLinearConv(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 8)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto acc = integerConv(ctx, ctx.input(0), ctx.input(2), ctx.input(3), ctx.input(5), ctx.input(8),
                         type->getShape());
  if (failed(acc))
    return failure();
  auto xScale = alongAxis(ctx, ctx.input(1), *type, 1, "x_scale");
  auto wScale = alongAxis(ctx, ctx.input(4), *type, 1, "w_scale");
  if (failed(xScale) || failed(wScale))
    return failure();
  auto y = requantizeAccumulator(ctx, *acc, *xScale, *wScale, *type);
  if (failed(y))
    return failure();
  out.push_back(*y);
  return success();
}

} // namespace

void registerQuantizationHandlers(HandlerRegistry &r) {
  r.add("QuantizeLinear", 10, quantizeLinear);
  r.add("DequantizeLinear", 10, dequantizeLinear);
  r.add("DynamicQuantizeLinear", 11, dynamicQuantizeLinear);
  r.add("MatMulInteger", 10, matMulInteger);
  r.add("ConvInteger", 10, convInteger);
  r.add("QLinearMatMul", 10, qLinearMatMul);
  r.add("QLinearConv", 10, qLinearConv);
}

} // namespace nncc::import
