#ifndef NNCC_DIALECTS_NN_SHAPEUTILS_H
#define NNCC_DIALECTS_NN_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace nncc::nn {

/// The numpy/ONNX multidirectional broadcast of `shapes` (dynamic dims stay
/// dynamic), or nullopt when two static dims differ and neither is 1.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// True when `result` can be the broadcast of `shapes` (dynamic dims on either
/// side are compatible with anything).
bool isBroadcastResult(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                       llvm::ArrayRef<int64_t> result);

/// Wraps `axis` (ONNX allows -rank..rank-1) into [0, rank), or nullopt.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// ONNX Slice parameters resolved against a static shape: one start, end and
/// step per axis, clamped as ONNX specifies. For a negative step the end may
/// be -1, meaning "through index 0".
struct SliceParams {
  llvm::SmallVector<int64_t> starts, ends, steps;
  /// The number of elements taken along axis `i`.
  int64_t size(size_t i) const;
};

/// Resolves ONNX Slice inputs (`axes` may be empty: all leading axes;
/// `steps` may be empty: all ones). Returns an error message on bad input.
llvm::Expected<SliceParams> resolveSlice(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<int64_t> starts,
                                         llvm::ArrayRef<int64_t> ends,
                                         llvm::ArrayRef<int64_t> axes,
                                         llvm::ArrayRef<int64_t> steps);

/// Turns ONNX reduction axes into a sorted, non-negative list; an empty list
/// means "all axes" (ONNX's default). Fails on an out-of-range or repeated axis.
llvm::Expected<llvm::SmallVector<int64_t>>
resolveReduceAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

} // namespace nncc::nn

#endif // NNCC_DIALECTS_NN_SHAPEUTILS_H
