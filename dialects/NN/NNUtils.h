//===- NNUtils.h - helpers over nn IR shared by passes and lowerings ------===//
#ifndef NNCC_DIALECTS_NN_NNUTILS_H
#define NNCC_DIALECTS_NN_NNUTILS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace nncc::nn {

/// The values of `v` when an nn.constant of f32 defines it, or nullopt.
std::optional<llvm::SmallVector<float>> constantFloats(mlir::Value v);

} // namespace nncc::nn

#endif // NNCC_DIALECTS_NN_NNUTILS_H
