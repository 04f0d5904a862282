//===- NNUtils.h - helpers over nn IR shared by passes and lowerings ------===//
#ifndef NNCC_DIALECTS_NN_NNUTILS_H
#define NNCC_DIALECTS_NN_NNUTILS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace nncc::nn {

/// The values of `v` when an nn.constant of f32 defines it, or nullopt.
std::optional<llvm::SmallVector<float>> constantFloats(mlir::Value v);

/// The ONNX node names a location carries (NameLoc, possibly fused), comma
/// separated: what a launch, a GEMM call or a check reports in profiles and
/// errors.
std::string nodeNames(mlir::Location loc);

} // namespace nncc::nn

#endif // NNCC_DIALECTS_NN_NNUTILS_H
