//===- TensorProto.h - ONNX TensorProto files without protobuf ------------===//
//
// nncc-run reads and writes the ONNX backend-test layout (input_K.pb,
// output_K.pb) on machines that have neither protobuf nor ONNX, so this is a
// small hand-written reader/writer of the protobuf wire format, limited to the
// TensorProto fields tensors use. Every read is bounds-checked: a malformed
// file is an error naming the file, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_TOOLS_TENSORPROTO_H
#define NNCC_RUNTIME_TOOLS_TENSORPROTO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nncc::tools {

/// A tensor in host memory: elements little-endian and densely packed, as in
/// TensorProto.raw_data. dtype is ONNX's TensorProto.DataType (= nncc_dtype).
struct HostTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;

  int64_t numel() const;
  /// "f32[2,3]".
  std::string typeString() const;
};

/// Parses a serialized TensorProto. On failure returns false and sets *error.
/// Supports dims, data_type, name, raw_data and the typed fields float_data,
/// int32_data, int64_data, double_data, uint64_data (packed or not); segments,
/// external data and string tensors are reported as unsupported.
bool parseTensorProto(const uint8_t *bytes, size_t size, HostTensor *out, std::string *error);

/// Reads and parses a file; errors start with the file name.
bool readTensorProtoFile(const std::string &path, HostTensor *out, std::string *error);

/// Serializes as dims (packed), data_type, name and raw_data.
std::vector<uint8_t> serializeTensorProto(const HostTensor &tensor);

bool writeTensorProtoFile(const std::string &path, const HostTensor &tensor, std::string *error);

} // namespace nncc::tools

#endif // NNCC_RUNTIME_TOOLS_TENSORPROTO_H
