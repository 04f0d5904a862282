#include "dialects/NN/ShapeUtils.h"

#include <algorithm>

namespace nncc::nn {

std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (auto shape : shapes)
    rank = std::max(rank, shape.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (auto shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &out = result[offset + i];
      int64_t dim = shape[i];
      if (dim == 1)
        continue;
      if (out == 1) {
        out = dim;
      } else if (mlir::ShapedType::isDynamic(out)) {
        // A static dim > 1 decides a dynamic one (the other must be 1 or equal).
        if (!mlir::ShapedType::isDynamic(dim))
          out = dim;
      } else if (!mlir::ShapedType::isDynamic(dim) && dim != out) {
        return std::nullopt;
      }
    }
  }
  return result;
}

bool isBroadcastResult(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                       llvm::ArrayRef<int64_t> result) {
  auto expected = broadcastShapes(shapes);
  if (!expected || expected->size() != result.size())
    return false;
  for (auto [want, got] : llvm::zip(*expected, result))
    if (!mlir::ShapedType::isDynamic(want) && !mlir::ShapedType::isDynamic(got) &&
        want != got)
      return false;
  return true;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

int64_t SliceParams::size(size_t i) const {
  int64_t step = steps[i];
  int64_t span = step > 0 ? ends[i] - starts[i] : starts[i] - ends[i];
  int64_t absStep = step > 0 ? step : -step;
  return span <= 0 ? 0 : (span + absStep - 1) / absStep;
}

llvm::Expected<SliceParams> resolveSlice(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<int64_t> starts,
                                         llvm::ArrayRef<int64_t> ends,
                                         llvm::ArrayRef<int64_t> axes,
                                         llvm::ArrayRef<int64_t> steps) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  int64_t rank = shape.size();
  if (starts.size() != ends.size())
    return error("starts and ends differ in length");
  if (!axes.empty() && axes.size() != starts.size())
    return error("axes and starts differ in length");
  if (!steps.empty() && steps.size() != starts.size())
    return error("steps and starts differ in length");
  // Every dim must be known: unsliced axes take [0, dim) and sliced ones are
  // clamped to dim.
  for (int64_t dim : shape)
    if (mlir::ShapedType::isDynamic(dim))
      return error("slice of a tensor with a dynamic dimension");
  SliceParams p;
  p.starts.assign(rank, 0);
  p.ends.assign(shape.begin(), shape.end());
  p.steps.assign(rank, 1);
  llvm::SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes.empty() ? (int64_t)i : axes[i];
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return error("slice axis " + llvm::Twine(axis) + " is out of range");
    axis = *normalized;
    if (seen[axis])
      return error("slice axis " + llvm::Twine(axis) + " is repeated");
    seen[axis] = true;
    int64_t dim = shape[axis];
    int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0)
      return error("slice step is 0");
    auto wrap = [dim](int64_t v) { return v < 0 ? v + dim : v; };
    int64_t start = wrap(starts[i]), end = wrap(ends[i]);
    if (dim == 0) {
      // Nothing to take (and [0, dim - 1] would be an empty clamp range).
      start = end = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    p.starts[axis] = start;
    p.ends[axis] = end;
    p.steps[axis] = step;
  }
  return p;
}

llvm::Expected<llvm::SmallVector<int64_t>>
resolveReduceAxes(llvm::ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallVector<int64_t> result;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i)
      result.push_back(i);
    return result;
  }
  for (int64_t axis : axes) {
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "reduction axis " + llvm::Twine(axis) +
                                         " is out of range for rank " + llvm::Twine(rank));
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "reduction axes repeat an axis");
  return result;
}

} // namespace nncc::nn
