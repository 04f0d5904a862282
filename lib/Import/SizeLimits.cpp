#include "lib/Import/SizeLimits.h"

#include "onnx/onnx_pb.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace nncc::import {
namespace {

/// "1 TiB", "4 GiB": the limits in the unit they are chosen in.
std::string formatBytes(int64_t bytes) {
  for (auto [shift, unit] : {std::pair{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}})
    if (bytes >= (int64_t(1) << shift) && bytes % (int64_t(1) << shift) == 0)
      return llvm::formatv("{0} {1}", bytes >> shift, unit).str();
  return llvm::formatv("{0} bytes", bytes).str();
}

std::string formatDims(llvm::ArrayRef<int64_t> dims) {
  std::string text;
  for (auto [i, d] : llvm::enumerate(dims))
    text += (i ? "x" : "") + (d < 0 ? std::string("?") : std::to_string(d));
  return text.empty() ? "a scalar" : text;
}

} // namespace

std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims)
    if (d >= 0 && llvm::MulOverflow(count, d, count))
      return std::nullopt;
  return count;
}

std::optional<std::string> tensorSizeProblem(llvm::ArrayRef<int64_t> dims, int64_t elementBytes,
                                             int64_t maxBytes) {
  if ((int64_t)dims.size() > kMaxRank)
    return llvm::formatv("rank {0}, above nncc's limit of {1}", dims.size(), kMaxRank).str();
  std::optional<int64_t> count = elementCount(dims);
  if (!count)
    return "shape " + formatDims(dims) + ", whose element count overflows int64";
  int64_t bytes;
  if (llvm::MulOverflow(*count, std::max<int64_t>(elementBytes, 1), bytes) || bytes > maxBytes)
    return llvm::formatv("shape {0}: {1} elements of {2} bytes exceed nncc's limit of {3} per "
                         "tensor",
                         formatDims(dims), *count, elementBytes, formatBytes(maxBytes))
        .str();
  return std::nullopt;
}

std::optional<std::string> tensorSizeProblem(mlir::RankedTensorType type, int64_t maxBytes) {
  int64_t bits = type.getElementType().isIntOrFloat() ? type.getElementTypeBitWidth() : 8;
  return tensorSizeProblem(type.getShape(), (bits + 7) / 8, maxBytes);
}

int64_t onnxElementBytes(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return 1;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::FLOAT:
    return 4;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::COMPLEX64:
    return 8;
  case onnx::TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

} // namespace nncc::import
