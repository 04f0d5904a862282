/// ONNX tensors and types to MLIR types and dense attributes.
#include "lib/Import/TensorConversion.h"
#include "lib/Support/Error.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;

namespace nncc::import {
namespace {

/// Reads the bytes of a tensor stored outside the model file.
llvm::Expected<std::string> readExternalData(const onnx::TensorProto &tensor,
                                             llvm::StringRef baseDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" && !llvm::to_integer(entry.value(), offset))
      return fail("initializer '" + tensor.name() + "' has a bad external-data offset");
    else if (entry.key() == "length" && !llvm::to_integer(entry.value(), length))
      return fail("initializer '" + tensor.name() + "' has a bad external-data length");
  }
  if (location.empty())
    return fail("initializer '" + tensor.name() + "' has external data without a location");
  if (baseDir.empty())
    return fail("initializer '" + tensor.name() +
                "' has external data, which needs the model loaded from a file");
  // Like onnx's checker: the data must live under the model's folder.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](llvm::StringRef part) { return part == ".."; }))
    return fail("initializer '" + tensor.name() + "': external data path '" + location +
                "' leaves the model's folder");
  llvm::SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  auto cannotRead = [&](std::error_code ec) {
    return fail("initializer '" + tensor.name() + "': cannot read external data file '" + path +
                "': " + ec.message());
  };
  // A symbolic link inside the folder may point anywhere: the check is on the
  // file's real path, which is then the one read.
  llvm::SmallString<256> realDir, realPath;
  if (std::error_code ec = llvm::sys::fs::real_path(baseDir, realDir))
    return cannotRead(ec);
  if (std::error_code ec = llvm::sys::fs::real_path(path, realPath))
    return cannotRead(ec);
  llvm::StringRef real = realPath;
  if (!real.starts_with(realDir) ||
      !(realDir.ends_with("/") || real.drop_front(realDir.size()).starts_with("/")))
    return fail("initializer '" + tensor.name() + "': external data file '" + path +
                "' resolves to '" + real + "', outside the model's folder '" + realDir + "'");
  auto file = llvm::MemoryBuffer::getFile(realPath, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return cannotRead(file.getError());
  int64_t size = (*file)->getBufferSize();
  if (offset < 0 || offset > size || (length >= 0 && offset + length > size))
    return fail("initializer '" + tensor.name() + "': external data range exceeds file '" +
                path + "'");
  return (*file)->getBuffer().substr(offset, length < 0 ? size - offset : length).str();
}

/// Packs typed-field values into little-endian raw bytes of `byteWidth` each.
template <typename Range>
std::string packValues(const Range &values, unsigned byteWidth) {
  std::string raw(values.size() * byteWidth, '\0');
  size_t i = 0;
  for (auto v : values) {
    auto bits = static_cast<uint64_t>(v);
    std::memcpy(&raw[i++ * byteWidth], &bits, byteWidth);
  }
  return raw;
}

template <typename Range>
std::string packFloating(const Range &values) {
  std::string raw(values.size() * sizeof(values[0]), '\0');
  if (!raw.empty())
    std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

} // namespace

llvm::Expected<Type> convertElementType(int32_t onnxType, MLIRContext *ctx) {
  Builder b(ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  default:
    break;
  }
  const char *name = onnx::TensorProto::DataType_IsValid(onnxType)
                         ? onnx::TensorProto::DataType_Name(
                               static_cast<onnx::TensorProto::DataType>(onnxType))
                               .c_str()
                         : "an unknown data type";
  return fail(llvm::formatv("element type {0} ({1}) is not supported", name, onnxType));
}

llvm::Expected<RankedTensorType> convertTensorType(const onnx::TypeProto &type,
                                                   MLIRContext *ctx) {
  if (!type.has_tensor_type())
    return fail("is not a tensor (sequences, maps and optionals are not supported)");
  const auto &tensorType = type.tensor_type();
  auto elementType = convertElementType(tensorType.elem_type(), ctx);
  if (!elementType)
    return elementType.takeError();
  if (!tensorType.has_shape())
    return fail("has no known rank");
  SmallVector<int64_t> dims;
  for (const auto &dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0)
      dims.push_back(dim.dim_value());
    else
      dims.push_back(ShapedType::kDynamic);
  }
  return RankedTensorType::get(dims, *elementType);
}

llvm::Expected<DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                                llvm::StringRef baseDir, MLIRContext *ctx) {
  auto elementType = convertElementType(tensor.data_type(), ctx);
  if (!elementType)
    return fail("tensor '" + tensor.name() + "': " + llvm::toString(elementType.takeError()));
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > (INT64_MAX / d)))
      return fail("tensor '" + tensor.name() + "' has invalid dims");
    dims.push_back(d);
    count *= d;
  }
  auto type = RankedTensorType::get(dims, *elementType);
  unsigned bitWidth = elementType->getIntOrFloatBitWidth();
  unsigned byteWidth = bitWidth == 1 ? 1 : bitWidth / 8;

  std::string raw;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto data = readExternalData(tensor, baseDir);
    if (!data)
      return data.takeError();
    raw = std::move(*data);
  } else if (tensor.has_raw_data()) {
    raw = tensor.raw_data();
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      raw = packFloating(tensor.float_data());
      break;
    case onnx::TensorProto::DOUBLE:
      raw = packFloating(tensor.double_data());
      break;
    case onnx::TensorProto::INT64:
      raw = packValues(tensor.int64_data(), 8);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      raw = packValues(tensor.uint64_data(), byteWidth);
      break;
    default: // INT32 and narrower types, FLOAT16/BFLOAT16 bits and BOOL live in int32_data.
      raw = packValues(tensor.int32_data(), byteWidth);
      break;
    }
  }
  if ((int64_t)raw.size() != count * (int64_t)byteWidth)
    return fail(llvm::formatv("tensor '{0}' holds {1} bytes, but its dims and type need {2}",
                              tensor.name(), raw.size(), count * byteWidth));
  if (bitWidth == 1) {
    SmallVector<bool> values;
    for (char c : raw)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(raw.data(), raw.size()));
}

} // namespace nncc::import
