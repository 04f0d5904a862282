//===- NNUtils.cpp --------------------------------------------------------===//
#include "dialects/NN/NNUtils.h"

#include "dialects/NN/NNOps.h"

using namespace mlir;

std::optional<SmallVector<float>> nncc::nn::constantFloats(Value v) {
  auto constant = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
  if (!values || !values.getElementType().isF32())
    return std::nullopt;
  return SmallVector<float>(values.getValues<float>());
}

std::string nncc::nn::nodeNames(Location loc) {
  std::string names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      if (!names.empty())
        names += ",";
      names += name.getName().str();
    }
    return WalkResult::advance();
  });
  return names;
}
