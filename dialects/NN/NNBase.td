#ifndef NNCC_NN_BASE
#define NNCC_NN_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dialects/NN/NNInterfaces.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::nncc::nn";
  let summary = "Value-semantic neural-network graph ops (nncc's ONNX-level dialect)";
  let description = [{
    One op per ONNX operator family, on ranked tensors, with normalized
    attributes: explicit pads, strides and dilations, axes as attributes.
    ONNX inputs that carry shapes or axes (Reshape's shape, Slice's starts...)
    are attributes when they are constants; when they are run-time values the
    op keeps them as operands, and canonicalization moves them into
    attributes (or drops them, where the result type already says it all)
    once they become constants.
  }];
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerOps();
  }];
}

def NN_Tensor : RankedTensorOf<[AnyType]>;
def NN_FloatTensor : RankedTensorOf<[AnyFloat]>;
def NN_BoolTensor : RankedTensorOf<[I1]>;
def NN_IntTensor : RankedTensorOf<[I32, I64]>;
def NN_I64Tensor : RankedTensorOf<[I64]>;
/// Convolutions: float, or i32 for the integer convolutions of quantized models.
def NN_ConvTensor : RankedTensorOf<[AnyFloat, I32]>;

/// Base of every nn op: pure, with a fusion kind. `extraDecls` is added to the
/// generated class so subclasses need not repeat the fusion-kind method.
class NN_Op<string mnemonic, string kind, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic,
         !listconcat([Pure, NN_FusionKindOpInterface], traits)> {
  string fusionKind = kind;
  code extraDecls = "";
  let extraClassDeclaration = "::nncc::nn::FusionKind getFusionKind() { "
      "return ::nncc::nn::FusionKind::" # kind # "; }\n" # extraDecls;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

#endif // NNCC_NN_BASE
