#ifndef NNCC_LIB_IMPORT_SIZELIMITS_H
#define NNCC_LIB_IMPORT_SIZELIMITS_H

/// The largest tensors the importer accepts. A model is a small file that can
/// describe huge tensors (a ConstantOfShape of 2^40 elements, an input of
/// 2^32 x 2^32 x 4); without a limit the compiler runs out of memory, or an
/// element count overflows int64 and the module's byte sizes are garbage.
/// Sizes are checked before libonnx or the compiler allocate for them.

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nncc::import {

/// Bytes of any one tensor a type describes (graph inputs, node results):
/// 1 TiB, more than any one GPU or most hosts hold, and small enough that the
/// byte sizes of 2^23 such tensors add up without overflowing int64.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;

/// Bytes of a constant the compiler materializes from a short description
/// (ConstantOfShape, Expand of a constant splat): 4 GiB. It is folded into
/// the module's weights, so the compiler holds it in memory and writes it out.
constexpr int64_t kMaxMaterializedBytes = int64_t(1) << 32;

/// Dimensions of any one tensor: the runtime's limit (runtime/ModuleVerifier.cpp).
constexpr int64_t kMaxRank = 64;

/// The number of elements of `dims`, skipping dynamic (negative) dims; none
/// when the product overflows int64.
std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> dims);

/// What is wrong with the size of a tensor of `dims` (dynamic dims skipped)
/// and `elementBytes` bytes per element, if anything: its rank exceeds
/// kMaxRank, its element count overflows int64, or its bytes exceed `maxBytes`. The text follows "has"
/// ("graph input 'x' has shape ...").
std::optional<std::string> tensorSizeProblem(llvm::ArrayRef<int64_t> dims, int64_t elementBytes,
                                             int64_t maxBytes = kMaxTensorBytes);

/// The same for a ranked tensor type of the nn dialect (i1 counts one byte).
std::optional<std::string> tensorSizeProblem(mlir::RankedTensorType type,
                                             int64_t maxBytes = kMaxTensorBytes);

/// Bytes per element of an ONNX TensorProto data type (bool is one byte, as
/// the runtime stores it); 0 for types without a fixed size (strings).
int64_t onnxElementBytes(int32_t dataType);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_SIZELIMITS_H
