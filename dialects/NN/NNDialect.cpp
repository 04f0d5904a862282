#include "dialects/NN/NNDialect.h"
#include "dialects/NN/NNOps.h"
#include "dialects/NN/Gradients/GradientBuilder.h"

using namespace mlir;
using namespace nncc::nn;

#include "dialects/NN/NNDialect.cpp.inc"
#include "dialects/NN/NNInterfaces.cpp.inc"

void NNDialect::initialize() {
  registerOps();
  registerGradientModels(getContext());
}

void NNDialect::registerOps() {
  addOperations<
#define GET_OP_LIST
#include "dialects/NN/NNOps.cpp.inc"
      >();
}

Operation *NNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

llvm::StringRef nncc::nn::stringifyFusionKind(FusionKind kind) {
  switch (kind) {
  case FusionKind::Elementwise:
    return "elementwise";
  case FusionKind::Broadcast:
    return "broadcast";
  case FusionKind::Injective:
    return "injective";
  case FusionKind::Reduction:
    return "reduction";
  case FusionKind::Contraction:
    return "contraction";
  case FusionKind::Opaque:
    return "opaque";
  }
  return "unknown";
}
