#ifndef NNCC_NN_INTERFACES
#define NNCC_NN_INTERFACES

include "mlir/IR/OpBase.td"

/// How an op may be grouped with its neighbours by the fusion pass. Every `nn`
/// op declares one; the gradient rule (autodiff) will be a second interface
/// beside this one.
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

#endif // NNCC_NN_INTERFACES
