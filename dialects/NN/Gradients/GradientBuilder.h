//===- GradientBuilder.h - nn op builders for the gradient rules ----------===//
#ifndef NNCC_DIALECTS_NN_GRADIENTS_GRADIENTBUILDER_H
#define NNCC_DIALECTS_NN_GRADIENTS_GRADIENTBUILDER_H

#include "dialects/NN/NNOps.h"
#include "dialects/NN/ShapeUtils.h"

#include "mlir/IR/Builders.h"

namespace nncc::nn {

/// Registers the gradient rules (GradientOpInterface external models) of
/// every op family with the nn dialect; called by NNDialect::initialize.
void registerGradientModels(mlir::MLIRContext *context);

namespace grad {

void registerElementwise(mlir::MLIRContext *context);
void registerContraction(mlir::MLIRContext *context);
void registerReduction(mlir::MLIRContext *context);
void registerNormalization(mlir::MLIRContext *context);
void registerDataMovement(mlir::MLIRContext *context);

/// Builds nn ops with their result types worked out (broadcast shapes,
/// reduced shapes), at one location: the rules read as the math they do.
/// Every shape involved is static (the rules check it first).
class GradBuilder {
public:
  GradBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  static mlir::RankedTensorType type(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }
  static llvm::ArrayRef<int64_t> shape(mlir::Value v) { return type(v).getShape(); }

  /// A 0-d constant of `elementType` (broadcasts against anything).
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A 0-d constant of the element type of `like`.
  mlir::Value scalarLike(mlir::Value like, double value) {
    return scalar(type(like).getElementType(), value);
  }
  /// A splat constant of `type` holding zeros.
  mlir::Value zeros(mlir::RankedTensorType type);

  mlir::Value add(mlir::Value a, mlir::Value c) { return binary<AddOp>(a, c); }
  mlir::Value sub(mlir::Value a, mlir::Value c) { return binary<SubOp>(a, c); }
  mlir::Value mul(mlir::Value a, mlir::Value c) { return binary<MulOp>(a, c); }
  mlir::Value div(mlir::Value a, mlir::Value c) { return binary<DivOp>(a, c); }
  mlir::Value pow(mlir::Value a, mlir::Value c) { return binary<PowOp>(a, c); }
  mlir::Value mul(mlir::Value a, double c) { return mul(a, scalarLike(a, c)); }
  mlir::Value greater(mlir::Value a, mlir::Value c) { return compare<GreaterOp>(a, c); }
  mlir::Value greaterEqual(mlir::Value a, mlir::Value c) { return compare<GreaterEqualOp>(a, c); }
  mlir::Value less(mlir::Value a, mlir::Value c) { return compare<LessOp>(a, c); }
  mlir::Value lessEqual(mlir::Value a, mlir::Value c) { return compare<LessEqualOp>(a, c); }
  mlir::Value equal(mlir::Value a, mlir::Value c) { return compare<EqualOp>(a, c); }
  mlir::Value logicalAnd(mlir::Value a, mlir::Value c) { return binary<AndOp>(a, c); }
  /// where(condition, a, c), broadcast.
  mlir::Value where(mlir::Value condition, mlir::Value a, mlir::Value c);

  template <typename OpT> mlir::Value unary(mlir::Value x) {
    return OpT::create(b, loc, x.getType(), x);
  }
  mlir::Value neg(mlir::Value x) { return unary<NegOp>(x); }
  mlir::Value exp(mlir::Value x) { return unary<ExpOp>(x); }
  mlir::Value log(mlir::Value x) { return unary<LogOp>(x); }
  mlir::Value sign(mlir::Value x) { return unary<SignOp>(x); }
  mlir::Value sigmoid(mlir::Value x) { return unary<SigmoidOp>(x); }
  mlir::Value tanh(mlir::Value x) { return unary<TanhOp>(x); }
  mlir::Value erf(mlir::Value x) { return unary<ErfOp>(x); }
  mlir::Value cast(mlir::Value x, mlir::Type elementType);

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value expand(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  /// Swaps the last two axes.
  mlir::Value transposeLast2(mlir::Value x);
  mlir::Value matmul(mlir::Value a, mlir::Value c);
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdims);
  mlir::Value reduceMean(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdims);
  /// Slice with every axis given (start, size, step > 0).
  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> starts, llvm::ArrayRef<int64_t> sizes,
                    llvm::ArrayRef<int64_t> steps);
  /// Reverses axis `axis`.
  mlir::Value reverse(mlir::Value x, int64_t axis);
  /// Constant-zero padding: `pads` holds the begin pads then the end pads.
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> pads);
  mlir::Value concat(mlir::ValueRange xs, int64_t axis);

  /// The cotangent `grad` of a broadcast result summed back to the shape of
  /// the operand it was broadcast from: reduce_sum over the broadcast axes
  /// (leading extra axes, axes where the operand has 1), then a reshape.
  mlir::Value sumToShape(mlir::Value grad, llvm::ArrayRef<int64_t> shape);
  /// `grad` summed to the shape of `operand`, or null when `operand` is not
  /// a float tensor (it gets no gradient).
  mlir::Value sumTo(mlir::Value grad, mlir::Value operand);

  mlir::OpBuilder &b;
  mlir::Location loc;

private:
  template <typename OpT> mlir::Value binary(mlir::Value a, mlir::Value c) {
    return OpT::create(b, loc, broadcastType(a, c, type(a).getElementType()), a, c);
  }
  template <typename OpT> mlir::Value compare(mlir::Value a, mlir::Value c) {
    return OpT::create(b, loc, broadcastType(a, c, b.getI1Type()), a, c);
  }
  mlir::RankedTensorType broadcastType(mlir::Value a, mlir::Value c, mlir::Type elementType);
};

/// True for a ranked tensor of floats with a static shape.
bool isFloatTensor(mlir::Value v);

/// Zero-filled cotangents stand in for null ones where a rule needs a value.
mlir::Value orZeros(GradBuilder &g, mlir::Value grad, mlir::Value like);

/// Attaches `Rule` as the gradient of `OpT`: `Rule(op, builder, resultGrads,
/// operandGrads)` behind the GradientOpInterface.
template <typename OpT, auto Rule>
struct Model : GradientOpInterface::ExternalModel<Model<OpT, Rule>, OpT> {
  mlir::LogicalResult buildGradients(mlir::Operation *op, mlir::OpBuilder &builder,
                                     llvm::ArrayRef<mlir::Value> resultGrads,
                                     llvm::SmallVectorImpl<mlir::Value> &operandGrads) const {
    GradBuilder g(builder, op->getLoc());
    return Rule(mlir::cast<OpT>(op), g, resultGrads, operandGrads);
  }
};

template <typename OpT, auto Rule> void attach(mlir::MLIRContext *context) {
  OpT::template attachInterface<Model<OpT, Rule>>(*context);
}

} // namespace grad
} // namespace nncc::nn

#endif // NNCC_DIALECTS_NN_GRADIENTS_GRADIENTBUILDER_H
