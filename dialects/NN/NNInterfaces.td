#ifndef NNCC_NN_INTERFACES
#define NNCC_NN_INTERFACES

include "mlir/IR/OpBase.td"

/// How an op may be grouped with its neighbours by the fusion pass. Every `nn`
/// op declares one; the gradient rule (autodiff) is the second interface
/// below.
def NN_FusionKindOpInterface : OpInterface<"FusionKindOpInterface"> {
  let cppNamespace = "::nncc::nn";
  let description = [{
    Classifies an op for fusion: elementwise (same shape in and out),
    broadcast (elementwise with implicit broadcasting of operands),
    injective (each output element reads one input element: transpose,
    slice, concat, gather...), reduction, contraction (GEMM, convolution:
    becomes a library call with an epilogue) or opaque (never fused).
  }];
  let methods = [
    InterfaceMethod<"Returns the fusion kind of this op.",
                    "::nncc::nn::FusionKind", "getFusionKind">,
  ];
}

/// The reverse-mode gradient rule of an op (nncc-differentiate). Attached as
/// external models by op family (dialects/NN/Gradients/), so NNOps.td stays
/// about the forward ops; an op without one has no rule.
def NN_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::nncc::nn";
  let description = [{
    Builds, at the builder's insertion point, the vector-Jacobian product of
    the op: given the cotangent of each result (a null Value for a result
    that no output depends on, i.e. zero), appends one Value per operand
    holding the cotangent of that operand, or a null Value where the operand
    gets none (integer tensors, indices, shapes; also for piecewise-constant
    ops whose gradient is zero). The rules build ordinary `nn` ops, so the
    backward graph takes the same fusion, precision and memory passes as the
    forward one. A rule that cannot handle an attribute combination emits an
    error on the op and fails.
  }];
  let methods = [
    InterfaceMethod<"Appends the cotangent of each operand (null: none).",
                    "::mlir::LogicalResult", "buildGradients",
                    (ins "::mlir::OpBuilder &":$builder,
                         "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
                         "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // NNCC_NN_INTERFACES
