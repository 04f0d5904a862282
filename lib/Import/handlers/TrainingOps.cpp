/// Handlers of the optimizer ops of ONNX's ai.onnx.preview.training domain
/// (Adagrad, Adam, Momentum), composed of nn elementwise ops. Each follows the
/// pseudo code of its ONNX definition step by step; the update count T is a
/// run-time int64 scalar, so its tests (T > 0) are selects.
#include "lib/Import/handlers/HandlerUtils.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Broadcasting arithmetic in one float element type.
class Arith {
public:
  Arith(NodeContext &ctx, Type elementType) : ctx_(ctx), elem_(elementType) {}

  Value add(Value a, Value b) { return binary<nn::AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<nn::SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<nn::MulOp>(a, b); }
  Value div(Value a, Value b) { return binary<nn::DivOp>(a, b); }
  Value pow(Value a, Value b) { return binary<nn::PowOp>(a, b); }
  Value sqrt(Value x) { return build<nn::SqrtOp>(ctx_, x.getType(), x); }
  Value constant(double v) { return ctx_.scalar(elem_, v); }
  /// `x` converted to this element type (R and T in X's type).
  Value convert(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == elem_)
      return x;
    return build<nn::CastOp>(ctx_, type.clone(elem_), x);
  }
  Value where(Value condition, Value a, Value b) {
    auto type = broadcastType(condition.getType(), broadcastType(a.getType(), b.getType(), elem_),
                              elem_);
    return build<nn::WhereOp>(ctx_, type, {condition, a, b});
  }

private:
  template <typename OpTy> Value binary(Value a, Value b) {
    return build<OpTy>(ctx_, broadcastType(a.getType(), b.getType(), elem_), {a, b});
  }
  NodeContext &ctx_;
  Type elem_;
};

/// The inputs R, T, then `groups` lists of n tensors each (X..., G..., and the
/// optimizer states); checks their types and returns n.
FailureOr<size_t> optimizerInputs(NodeContext &ctx, size_t groups, size_t outputGroups) {
  size_t variadic = ctx.numInputs() < 2 ? 0 : ctx.numInputs() - 2;
  if (variadic == 0 || variadic % groups != 0)
    return ctx.error(llvm::formatv("expects R, T and {0} lists of equally many tensors, got {1} "
                                   "inputs",
                                   groups, ctx.numInputs()));
  size_t n = variadic / groups;
  if (ctx.numOutputs() != outputGroups * n)
    return ctx.error(llvm::formatv("expects {0} outputs for {1} optimized tensors, got {2}",
                                   outputGroups * n, n, ctx.numOutputs()));
  if (failed(requireInputs(ctx, ctx.numInputs())))
    return failure();
  if (!isa<FloatType>(ctx.inputType(0).getElementType()) || ctx.inputType(0).getRank() != 0)
    return ctx.error("R must be a float scalar");
  if (!ctx.inputType(1).getElementType().isInteger(64) || ctx.inputType(1).getRank() != 0)
    return ctx.error("T must be an int64 scalar");
  // Each X's gradient and states have its type, and so have its outputs.
  for (size_t i = 0; i < n; ++i) {
    auto type = ctx.inputType(2 + i);
    if (!isa<FloatType>(type.getElementType()))
      return ctx.error(llvm::formatv("input {0} must be a float tensor", 2 + i));
    for (size_t k = 1; k < groups; ++k)
      if (ctx.inputType(2 + k * n + i) != type)
        return ctx.error(llvm::formatv("input {0} must have the type of input {1}", 2 + k * n + i,
                                       2 + i));
  }
  return n;
}

/// T > 0, a 0-d i1 tensor.
Value updatedBefore(NodeContext &ctx) {
  Value t = ctx.input(1);
  auto type = RankedTensorType::get({}, ctx.builder().getI1Type());
  return build<nn::GreaterOp>(ctx, type, {t, ctx.scalar(ctx.inputType(1).getElementType(), 0)});
}

LogicalResult adagrad(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto count = optimizerInputs(ctx, 3, 2);
  if (failed(count))
    return failure();
  size_t n = *count;
  double epsilon = ctx.attrFloat("epsilon", 1e-6);
  double decay = ctx.attrFloat("decay_factor", 0.0);
  double norm = ctx.attrFloat("norm_coefficient", 0.0);
  out.resize(2 * n);
  for (size_t i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), h = ctx.input(2 + 2 * n + i);
    Arith a(ctx, ctx.inputType(2 + i).getElementType());
    // r = R / (1 + T * decay_factor)
    Value r = a.div(a.convert(ctx.input(0)),
                    a.add(a.constant(1), a.mul(a.convert(ctx.input(1)), a.constant(decay))));
    Value gReg = a.add(a.mul(a.constant(norm), x), g);
    Value hNew = a.add(h, a.mul(gReg, gReg));
    Value hAdaptive = a.add(a.sqrt(hNew), a.constant(epsilon));
    Value xNew = a.sub(x, a.div(a.mul(r, gReg), hAdaptive));
    out[i] = xNew;
    out[n + i] = hNew;
  }
  return success();
}

LogicalResult adam(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto count = optimizerInputs(ctx, 4, 3);
  if (failed(count))
    return failure();
  size_t n = *count;
  double alpha = ctx.attrFloat("alpha", 0.9), beta = ctx.attrFloat("beta", 0.999);
  double epsilon = ctx.attrFloat("epsilon", 1e-6);
  double norm = ctx.attrFloat("norm_coefficient", 0.0);
  double normPost = ctx.attrFloat("norm_coefficient_post", 0.0);
  Value positive = updatedBefore(ctx);
  out.resize(3 * n);
  for (size_t i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i);
    Value v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
    Arith a(ctx, ctx.inputType(2 + i).getElementType());
    Value gReg = a.add(a.mul(a.constant(norm), x), g);
    Value vNew = a.add(a.mul(a.constant(alpha), v), a.mul(a.constant(1 - alpha), gReg));
    Value hNew = a.add(a.mul(a.constant(beta), h), a.mul(a.constant(1 - beta), a.mul(gReg, gReg)));
    Value hSqrt = a.add(a.sqrt(hNew), a.constant(epsilon));
    // R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
    Value r = a.convert(ctx.input(0)), t = a.convert(ctx.input(1));
    Value adjusted = a.div(a.mul(r, a.sqrt(a.sub(a.constant(1), a.pow(a.constant(beta), t)))),
                           a.sub(a.constant(1), a.pow(a.constant(alpha), t)));
    Value rAdjusted = a.where(positive, adjusted, r);
    Value xNew = a.sub(x, a.div(a.mul(rAdjusted, vNew), hSqrt));
    Value xFinal = a.mul(a.constant(1 - normPost), xNew);
    out[i] = xFinal;
    out[n + i] = vNew;
    out[2 * n + i] = hNew;
  }
  return success();
}

LogicalResult momentum(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto count = optimizerInputs(ctx, 3, 2);
  if (failed(count))
    return failure();
  for (StringRef name : {"alpha", "beta", "norm_coefficient", "mode"})
    if (!ctx.hasAttr(name))
      return ctx.error("attribute '" + name + "' is required");
  std::string mode = ctx.attrString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return ctx.error("mode must be 'standard' or 'nesterov', not '" + mode + "'");
  size_t n = *count;
  double alpha = ctx.attrFloat("alpha", 0), beta = ctx.attrFloat("beta", 0);
  double norm = ctx.attrFloat("norm_coefficient", 0);
  Value positive = updatedBefore(ctx);
  out.resize(2 * n);
  for (size_t i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), v = ctx.input(2 + 2 * n + i);
    Arith a(ctx, ctx.inputType(2 + i).getElementType());
    Value gReg = a.add(a.mul(a.constant(norm), x), g);
    // In the first iteration (T == 0) beta is 1.
    Value betaAdjusted = a.where(positive, a.constant(beta), a.constant(1));
    Value vNew = a.add(a.mul(a.constant(alpha), v), a.mul(betaAdjusted, gReg));
    Value step = mode == "standard" ? vNew : a.add(gReg, a.mul(a.constant(alpha), vNew));
    Value xNew = a.sub(x, a.mul(a.convert(ctx.input(0)), step));
    out[i] = xNew;
    out[n + i] = vNew;
  }
  return success();
}

} // namespace

void registerTrainingHandlers(HandlerRegistry &r) {
  r.add(qualifiedOpType(kPreviewTrainingDomain, "Adagrad"), 1, adagrad);
  r.add(qualifiedOpType(kPreviewTrainingDomain, "Adam"), 1, adam);
  r.add(qualifiedOpType(kPreviewTrainingDomain, "Momentum"), 1, momentum);
}

} // namespace nncc::import
